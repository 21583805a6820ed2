internal import CALSA
import GrokBasics
import Glibc

/// The one checking funnel every libasound call goes through: a negative return code
/// becomes an ``AudioError`` that names the device, the call and the error as a code
/// (the errno's name, `ENOENT`), never `snd_strerror`'s English.
enum ALSACall {
    /// Installs the message-capturing error handler once per process (libasound would
    /// otherwise print "ALSA lib ..." lines to stderr).
    private static let errorHandlerInstalled: Bool = CALSA_captureErrors() == 0

    /// Makes sure ALSA's messages are captured; call before the first ALSA call.
    static func prepare() {
        _ = errorHandlerInstalled
    }

    /// Runs one ALSA call and returns its non-negative result, or throws the mapped error.
    ///
    /// - Parameters:
    ///   - operation: the C function's name, shown in the error.
    ///   - stream: `"playback"` or `"capture"` when the call is about one direction.
    ///   - device: the device (or file) the call was about.
    @discardableResult
    static func check(
        _ operation: String, stream: String? = nil, device: String, _ call: () -> Int32
    ) throws(AudioError) -> Int32 {
        prepare()
        CALSA_clearLastError()
        let result = call()
        if result >= 0 { return result }
        throw error(code: Int(result), operation: operation, stream: stream, device: device)
    }

    /// The frame-count variant for `snd_pcm_readi` / `snd_pcm_writei` style calls. Does not
    /// throw: transfers first try to recover, so callers map with ``error(code:operation:device:message:)``.
    static func frames(_ call: () -> Int) -> Int {
        prepare()
        CALSA_clearLastError()
        return call()
    }

    /// Forgets the message libasound last reported on this thread, and makes sure its next
    /// one is captured (a configuration file may be the process's first ALSA call).
    static func clearMessage() {
        prepare()
        CALSA_clearLastError()
    }

    /// The message libasound reported on this thread since the last checked call.
    static func lastMessage() -> String {
        String(cString: CALSA_lastError())
    }

    /// Maps an ALSA return code (a negative errno) to an ``AudioError``:
    /// `-ENOENT`/`-ENODEV`/`-ENXIO` → ``AudioError/deviceNotFound(device:detail:)``,
    /// `-EBUSY` → ``AudioError/deviceBusy(device:)``, any refusal by a
    /// `snd_pcm_hw_params*` call → ``AudioError/unsupportedFormat(device:detail:)``,
    /// anything else → ``AudioError/io(device:operation:detail:)``. The detail is
    /// ``failure(_:stream:code:)`` (for `io`, whose message names the call, just the error:
    /// `error_code`, `playback_error`, `capture_error`). libasound's own log line, which it
    /// writes in English, is left out: the code says the same in the reader's language.
    static func error(code: Int, operation: String, stream: String? = nil, device: String) -> AudioError {
        let errno = Int32(clamping: -code)
        let detail = failure(operation, stream: stream, code: code)
        switch errno {
        case ENOENT, ENODEV, ENXIO:
            return .deviceNotFound(device: device, detail: detail)
        case EBUSY:
            return .deviceBusy(device: device)
        default:
            if operation.hasPrefix("snd_pcm_hw_params") {
                return .unsupportedFormat(device: device, detail: detail)
            }
            // The message names the call already: the detail is the error, and the stream.
            let failed = ErrorDetail(stream.map { "\($0)_error" } ?? "error_code", [errorName(code)])
            return .io(device: device, operation: operation, detail: failed)
        }
    }

    /// The detail of a failed call: `call_failed` (or `playback_call_failed` /
    /// `capture_call_failed`) with the C function's name and ``errorName(_:)``.
    static func failure(_ operation: String, stream: String? = nil, code: Int) -> ErrorDetail {
        ErrorDetail(stream.map { "\($0)_call_failed" } ?? "call_failed", [operation, errorName(code)])
    }

    /// How a detail names an ALSA return code: a negative errno by its symbolic name
    /// (``systemErrorName(_:)``, `ENOENT`); one of libasound's own codes (500000 and up, no
    /// errno) by `snd_strerror`'s text, there being no better name for it.
    static func errorName(_ code: Int) -> String {
        let number = Int32(clamping: -code)
        if number >= 500_000 { return String(cString: snd_strerror(Int32(clamping: code))) }
        return systemErrorName(number)
    }
}
