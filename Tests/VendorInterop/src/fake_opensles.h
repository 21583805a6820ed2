/* The harness's controls for the stand-in libOpenSLES.so (fake_opensles.c). */
#ifndef VENDOR_INTEROP_FAKE_OPENSLES_H
#define VENDOR_INTEROP_FAKE_OPENSLES_H
#include <stddef.h>
#include <stdint.h>

struct fakesl_stats {
    uint64_t samples_out, samples_in, underruns, underruns_running;
    uint64_t first_underrun_at; /* input sample of the first running underrun, plus one; 0: none */
    int input_eof;
    uint64_t rx_cpu_ns, tx_cpu_ns; /* thread CPU time spent in the library's recorder / player callbacks */
};

/* in/out: file descriptors of raw s16le mono streams (-1: silence / discard);
 * realtime: pace the sample clock to the wall clock (0: as fast as possible). */
void fakesl_configure(int in_fd, int out_fd, int realtime);
/* Called on the clock thread with each block of samples sent (tx) and received (rx). */
void fakesl_set_tap(void (*fn)(const int16_t *tx, const int16_t *rx, int n, void *ctx), void *ctx);
/* Silence before and after the input stream (offline replays: the library's modem needs
 * a moment in its handshake state before the reader's request tone, and samples after
 * the last byte to finish it). */
void fakesl_set_padding(long lead_samples, long tail_samples);
/* Paced runs go this many times faster than real time (default 1). */
void fakesl_set_speed(double x);
uint64_t fakesl_samples_played(void);
uint32_t fakesl_sample_rate(void);
void fakesl_stats(struct fakesl_stats *s);
int fakesl_input_exhausted(void);
/* Manual input (demod --bare): the clock thread no longer services the recorder; the
 * harness hands each block to the library's recorder callback itself, on its own thread,
 * with fakesl_feed (the player still runs on the clock thread, at most lead_samples ahead
 * of what was fed, so the library's transmitter keeps time with its receiver). */
void fakesl_set_manual_input(long lead_samples);
/* Waits (up to timeout_ms) until the library records; 0 when it does, -1 on timeout. */
int fakesl_wait_recording(int timeout_ms);
/* Delivers n samples to the recorder on the calling thread (its callback runs here). */
void fakesl_feed(const int16_t *in, int n);
#endif
