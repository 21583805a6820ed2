import GrokBasics

/// Everything that can go wrong with an audio port. Each case names the port or file and
/// carries what a person needs to act; `code` is stable for `--json` output and for the
/// localized catalog (`error.audio.<code>`).
public enum AudioError: Error, Sendable, CodedError, Equatable {
    /// ALSA has no device by that name; `detail` (a code under `audio.detail`) names the
    /// call that said so and its error.
    case deviceNotFound(device: String, detail: ErrorDetail)
    /// The device exists but another program holds it.
    case deviceBusy(device: String)
    /// The device refused the format, rate or buffer sizes asked for (`detail`, a code under
    /// `audio.detail`, says which).
    case unsupportedFormat(device: String, detail: ErrorDetail)
    /// An ALSA call (`operation`, the C function's name) failed in a way the port could not
    /// recover from; `detail` is a code under `audio.detail`.
    case io(device: String, operation: String, detail: ErrorDetail)
    /// The port was closed.
    case closed(port: String)
    /// A WAV file could not be read or written: `detail` is a code under `audio.detail`
    /// in the catalog, never an English sentence.
    case badWAV(path: String, detail: ErrorDetail)
    /// A file could not be opened, read or written; `detail` is a code under `audio.detail`
    /// (the failed call and its errno name, never `strerror`'s English).
    case file(path: String, detail: ErrorDetail)
    /// One call on the port blocked for `seconds` of wall-clock time (its
    /// ``WallClockBound/stallSeconds``) with nothing moving: the reader or the program on
    /// the other end is frozen, or the sound card stalled.
    case stalled(port: String, seconds: String)
    /// `what` (a fleet step, the whole device run) ran past its wall-clock limit of `seconds`.
    case timedOut(port: String, what: String, seconds: String)
    /// A request to stop (a signal) ended the I/O.
    case cancelled(port: String)

    /// A stable identifier for machines and for the message catalog.
    public var code: String {
        switch self {
        case .deviceNotFound: "audio_device_not_found"
        case .deviceBusy: "audio_device_busy"
        case .unsupportedFormat: "audio_unsupported_format"
        case .io: "audio_io"
        case .closed: "audio_closed"
        case .badWAV: "audio_bad_wav"
        case .file: "audio_file"
        case .stalled: "audio_stalled"
        case .timedOut: "audio_timed_out"
        case .cancelled: "audio_cancelled"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .deviceNotFound(let d, let detail): [d] + detail.flattened
        case .deviceBusy(let d): [d]
        case .unsupportedFormat(let d, let detail): [d] + detail.flattened
        case .io(let d, let op, let detail): [d, op] + detail.flattened
        case .closed(let p): [p]
        case .badWAV(let p, let detail): [p] + detail.flattened
        case .file(let p, let detail): [p] + detail.flattened
        case .stalled(let p, let seconds): [p, seconds]
        case .timedOut(let p, let what, let seconds): [p, what, seconds]
        case .cancelled(let p): [p]
        }
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }
}
