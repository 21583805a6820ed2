// CALSA re-exports the C library headers; in whole-module builds the compiler attributes
// some Glibc struct members (stat, timespec, tm) to it, so MemberImportVisibility needs it.
internal import CALSA
import Glibc
import GrokBasics

/// Wraps any ``AudioPort`` and records everything that passes through it into a stereo
/// 16-bit WAV file: left = what the host played, right = what it captured, frame-aligned
/// as the transfers saw them.
///
/// The file is `DIRECTORY/<port name, unsafe characters replaced by _>-<UTC yyyyMMdd-HHmmss>.wav`
/// (the directory and its parents are created when missing)
/// (`-2`, `-3`, ... appended if taken). It is written as `<file>.partial` and appears under
/// its final name when the port is closed (``close()``).
///
/// Recording never breaks the link: if writing fails (disk full), recording stops, the
/// transfers go on, and ``recordingError`` says what happened.
///
/// Not thread-safe: one owner at a time.
public final class RecordingPort: AudioPort {
    /// The wrapped port.
    public let inner: any AudioPort
    /// Where the recording is (complete once the port is closed).
    public let recordingPath: String
    /// Why recording stopped early, if it did.
    public private(set) var recordingError: AudioError?

    private var writer: WAVWriter?
    private var interleaved: [Float] = []

    /// The wrapped port's name.
    public var name: String { inner.name }
    /// The wrapped port's rate (also the recording's).
    public var sampleRate: Int { inner.sampleRate }
    /// The wrapped port's jack state.
    public var jackPlugged: Bool? { inner.jackPlugged }
    public var levelShortfall: LevelShortfall? { inner.levelShortfall }

    /// Starts recording `port` into a new file in `directory`.
    ///
    /// - Parameters:
    ///   - port: the port to wrap; the recording port owns it from now on.
    ///   - directory: an existing directory.
    ///   - time: seconds since 1970 (UTC) used for the file name; the current time by default.
    /// - Throws: ``AudioError/file(path:detail:)`` when the file cannot be created.
    public init(wrapping port: any AudioPort, directory: String, time: Int? = nil) throws(AudioError) {
        self.inner = port
        try Self.makeDirectories(directory)
        let seconds = time ?? Int(Glibc.time(nil))
        let stem = Self.safeName(port.name) + "-" + Self.timestamp(seconds)
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        var candidate = base + stem + ".wav"
        var suffix = 2
        while Self.exists(candidate) || Self.exists(candidate + ".partial") {
            candidate = base + stem + "-\(suffix).wav"
            suffix += 1
        }
        self.recordingPath = candidate
        self.writer = try WAVWriter(path: candidate, sampleRate: port.sampleRate, channels: 2)
    }

    deinit {
        close()
    }

    /// Transfers through the wrapped port, then records the frames played and captured.
    public func transfer(
        output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>
    ) throws(AudioError) {
        try inner.transfer(output: output, input: input)
        guard let writer else { return }
        let frames = output.count
        if interleaved.count < frames * 2 { interleaved = Array(repeating: 0, count: frames * 2) }
        let result = interleaved.withUnsafeMutableBufferPointer { buffer in
            for frame in 0..<frames {
                buffer[frame * 2] = output[frame]
                buffer[frame * 2 + 1] = input[frame]
            }
            let frames = UnsafeBufferPointer(rebasing: buffer[0..<(frames * 2)])
            return Result { () throws(AudioError) in try writer.append(interleaved: frames) }
        }
        if case .failure(let error) = result {
            recordingError = error
            self.writer = nil  // drops the partial file
        }
    }

    /// Closes the wrapped port and finishes the recording (see ``recordingError``).
    public func close() {
        inner.close()
        guard let writer else { return }
        self.writer = nil
        do {
            try writer.finish()
        } catch {
            recordingError = error
        }
    }

    /// `name` with everything but letters, digits, `.`, `_` and `-` replaced by `_`.
    static func safeName(_ name: String) -> String {
        let safe = String(
            name.unicodeScalars.map { scalar -> Character in
                let allowed = scalar.isASCII
                    && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                        || ("0"..."9").contains(scalar) || scalar == "." || scalar == "_" || scalar == "-")
                return allowed ? Character(scalar) : "_"
            })
        return safe.isEmpty || safe.hasPrefix(".") ? "_" + safe : safe
    }

    /// `yyyyMMdd-HHmmss` in UTC.
    static func timestamp(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))-"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))"
    }

    private static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }
}

@available(*, unavailable) extension RecordingPort: Sendable {}

extension RecordingPort {
    /// `mkdir -p`: creates `path` and any missing parents.
    static func makeDirectories(_ path: String) throws(AudioError) {
        var built = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            built += (built.isEmpty || built.hasSuffix("/") ? "" : "/") + part
            if mkdir(built, 0o755) != 0, errno != EEXIST {
                throw AudioError.file(path: built, detail: ErrorDetail("directory_uncreatable", [systemErrorName(errno)]))
            }
        }
    }
}
