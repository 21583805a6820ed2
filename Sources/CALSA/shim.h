#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

// Why these helpers exist: ALSA reports the reason for a failure (which PCM name was
// unknown, which line of a configuration file is wrong) only through its error handler,
// a C-variadic function pointer (`snd_lib_error_handler_t`) that Swift can neither
// implement nor import. These typed helpers install a handler that keeps the last message
// of the calling thread, so GrokAudio can put it into its errors instead of letting
// libasound print to stderr.

/// The last message libasound reported on this thread (empty when none). The storage is a
/// function-local static because Swift does not emit variables defined in a header; each
/// object file that uses these helpers gets its own copy, so GrokAudio calls them from one
/// Swift file only (ALSACall.swift).
static inline char *CALSA_lastErrorBuffer(void) {
    static __thread char buffer[512];
    return buffer;
}

/// Keeps the message instead of printing it (installed by `CALSA_captureErrors`).
static void CALSA_errorHandler(const char *file, int line, const char *function, int err,
                               const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err;
    va_list args;
    va_start(args, fmt);
    vsnprintf(CALSA_lastErrorBuffer(), 512, fmt, args);
    va_end(args);
}

/// Routes libasound's error messages into the per-thread buffer; returns ALSA's result.
static inline int CALSA_captureErrors(void) {
    return snd_lib_error_set_handler(CALSA_errorHandler);
}

/// Forgets the last message on this thread (call before an ALSA call whose failure you
/// want to explain).
static inline void CALSA_clearLastError(void) {
    CALSA_lastErrorBuffer()[0] = '\0';
}

/// The last message libasound reported on this thread since `CALSA_clearLastError`.
static inline const char *CALSA_lastError(void) {
    return CALSA_lastErrorBuffer();
}
