internal import CALSA
import Glibc

/// The one checking funnel every libasound call goes through: a negative return code
/// becomes an ``AudioError`` that names the device, the call and ALSA's own explanation.
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
    ///   - device: the device (or file) the call was about.
    @discardableResult
    static func check(
        _ operation: String, device: String, _ call: () -> Int32
    ) throws(AudioError) -> Int32 {
        prepare()
        CALSA_clearLastError()
        let result = call()
        if result >= 0 { return result }
        throw error(code: Int(result), operation: operation, device: device, message: lastMessage())
    }

    /// The frame-count variant for `snd_pcm_readi` / `snd_pcm_writei` style calls. Does not
    /// throw: transfers first try to recover, so callers map with ``error(code:operation:device:message:)``.
    static func frames(_ call: () -> Int) -> Int {
        prepare()
        CALSA_clearLastError()
        return call()
    }

    /// Forgets the message libasound last reported on this thread.
    static func clearMessage() {
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
    /// anything else → ``AudioError/io(device:operation:detail:)``.
    static func error(code: Int, operation: String, device: String, message: String) -> AudioError {
        let errno = Int32(clamping: -code)
        let text = String(cString: snd_strerror(Int32(clamping: code)))
        let detail = message.isEmpty ? text : "\(text): \(message)"
        switch errno {
        case ENOENT, ENODEV, ENXIO:
            return .deviceNotFound(device: device, detail: "\(operation): \(detail)")
        case EBUSY:
            return .deviceBusy(device: device)
        default:
            if operation.hasPrefix("snd_pcm_hw_params") {
                return .unsupportedFormat(device: device, detail: "\(operation): \(detail)")
            }
            return .io(device: device, operation: operation, detail: detail)
        }
    }
}
