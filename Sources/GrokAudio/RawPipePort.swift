// CALSA re-exports the C library headers; in whole-module builds the compiler attributes
// some Glibc struct members (stat, timespec, tm) to it, so MemberImportVisibility needs it.
internal import CALSA
import Glibc
import GrokBasics

/// An ``AudioPort`` over two paths carrying raw signed 16-bit little-endian mono samples:
/// ``transfer(output:input:)`` writes the output to one (a FIFO or a file), then reads
/// exactly as many frames from the other, blocking until they arrive.
///
/// This is how an emulated Grokker running as its own process (`grokctl emulate`) talks to
/// a host whose ``ALSAPort`` uses ALSA's file plugin (see
/// `Tests/GrokAudioTests/Fixtures/asoundrc`). With FIFOs, the order of opening matters:
/// the input path is opened first, then the output path, each blocking until the other
/// side opens its end. Point the input at the host's playback FIFO and the output at the
/// host's capture FIFO; the host (``ALSAPort``) opens them in the same order.
///
/// When the other side hangs up, transfers throw ``AudioError/closed(port:)``: end of file
/// on the input, or a broken pipe on the output (SIGPIPE is blocked during the write, so
/// the process is not killed).
///
/// Not thread-safe: one owner at a time.
public final class RawPipePort: AudioPort {
    /// `pipe:` followed by the input path.
    public let name: String
    /// Frames per second, as agreed with the other side (nothing in the stream says it).
    public let sampleRate: Int
    /// The path samples are read from.
    public let inputPath: String
    /// The path samples are written to.
    public let outputPath: String
    /// A pipe port cannot see a jack.
    public var jackPlugged: Bool? { nil }

    private var inputFD: Int32
    private var outputFD: Int32
    private var bytes: [UInt8] = []

    /// Opens `inputPath` for reading (it must exist), then `outputPath` for writing
    /// (created if it does not exist, truncated if it is a regular file); with
    /// `opensOutputFirst` the other way round. Two processes on one pair of FIFOs must open
    /// them in matching orders: the device side (`grokctl emulate`) opens its input first,
    /// so a host on the other ends (`--device pcm:IN,OUT`) opens its output first.
    ///
    /// - Throws: ``AudioError/file(path:detail:)`` when either path cannot be opened;
    ///   ``AudioError/unsupportedFormat(device:detail:)`` for a rate other than 44100 or 48000.
    public init(inputPath: String, outputPath: String, sampleRate: Int = 44100, opensOutputFirst: Bool = false) throws(AudioError) {
        guard sampleRate == 44100 || sampleRate == 48000 else {
            throw AudioError.unsupportedFormat(
                device: "pipe:\(inputPath)", detail: ErrorDetail("port_rate", [String(sampleRate)]))
        }
        func openInput() throws(AudioError) -> Int32 {
            try POSIXCall.retrying(path: inputPath, "open") { open(inputPath, O_RDONLY | O_CLOEXEC) }
        }
        func openOutput() throws(AudioError) -> Int32 {
            try POSIXCall.retrying(path: outputPath, "open") {
                open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            }
        }
        let input: Int32
        let output: Int32
        if opensOutputFirst {
            output = try openOutput()
            do { input = try openInput() } catch { Glibc.close(output); throw error }
        } else {
            input = try openInput()
            do { output = try openOutput() } catch { Glibc.close(input); throw error }
        }
        self.inputFD = input
        self.outputFD = output
        self.inputPath = inputPath
        self.outputPath = outputPath
        self.sampleRate = sampleRate
        self.name = "pipe:\(inputPath)"
    }

    deinit {
        close()
    }

    /// Writes `output`, then reads exactly `input.count` frames.
    public func transfer(
        output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>
    ) throws(AudioError) {
        guard inputFD >= 0, outputFD >= 0 else { throw AudioError.closed(port: name) }
        precondition(output.count == input.count, "transfer needs as many input as output frames")
        let byteCount = output.count * 2
        if bytes.count < byteCount { bytes = Array(repeating: 0, count: byteCount) }

        let result: Result<Void, AudioError> = bytes.withUnsafeMutableBytes { buffer in
            for (index, sample) in output.enumerated() {
                let value = UInt16(bitPattern: PCM16.sample(sample))
                buffer[index * 2] = UInt8(truncatingIfNeeded: value)
                buffer[index * 2 + 1] = UInt8(truncatingIfNeeded: value >> 8)
            }
            let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<byteCount])
            let written = BrokenPipe.withSignalBlocked {
                POSIXCall.writeAll(outputFD, path: outputPath, "write", UnsafeRawBufferPointer(bytes))
            }
            if let written { return .failure(written) }
            switch POSIXCall.readAll(inputFD, path: inputPath, "read", bytes) {
            case .failure(let error): return .failure(error)
            case .success(let count) where count < byteCount: return .failure(AudioError.closed(port: name))
            case .success: break
            }
            for index in 0..<input.count {
                let value = UInt16(buffer[index * 2]) | UInt16(buffer[index * 2 + 1]) << 8
                input[index] = PCM16.float(Int16(bitPattern: value))
            }
            return .success(())
        }
        try result.get()
    }

    /// Closes both paths (the output first, so the reader on the other side sees end of file).
    public func close() {
        if outputFD >= 0 { Glibc.close(outputFD); outputFD = -1 }
        if inputFD >= 0 { Glibc.close(inputFD); inputFD = -1 }
    }
}

@available(*, unavailable) extension RawPipePort: Sendable {}

// MARK: - System calls

/// The audio layer's view of GrokBasics' ``SystemCall`` funnel: a failure becomes
/// ``AudioError/file(path:detail:)`` naming the path, the operation (`open`, `fstat`,
/// `read`, `write`, `fsync`, `close`, `rename`: the code `<operation>_failed`) and the
/// errno's name; a wall-clock watchdog that interrupted the call ends it with its own error
/// (``WallClockBound``), and `EPIPE` is the other side hanging up.
enum POSIXCall {
    @discardableResult
    static func retrying<T: BinaryInteger>(path: String, _ operation: String, _ call: () -> T) throws(AudioError) -> T {
        do throws(SystemCallError) {
            return try SystemCall.value(operation, path: path, retryInterrupted: notInterruptedByWatchdog, call)
        } catch {
            throw audioError(error, path: path)
        }
    }

    /// Writes all of `bytes` (at `offset` with pwrite, else at the file position).
    static func writeAll(_ fd: Int32, path: String, _ operation: String, _ bytes: UnsafeRawBufferPointer, at offset: Int? = nil) -> AudioError? {
        do throws(SystemCallError) {
            try SystemCall.writeAll(fd, bytes, at: offset, call: operation, path: path, retryInterrupted: notInterruptedByWatchdog)
            return nil
        } catch {
            return audioError(error, path: path)
        }
    }

    /// Reads until `bytes` is full or end of file; returns how many bytes were read.
    static func readAll(_ fd: Int32, path: String, _ operation: String, _ bytes: UnsafeMutableRawBufferPointer, at offset: Int? = nil) -> Result<Int, AudioError> {
        do throws(SystemCallError) {
            return .success(try SystemCall.readAll(fd, bytes, at: offset, call: operation, path: path, retryInterrupted: notInterruptedByWatchdog))
        } catch {
            return .failure(audioError(error, path: path))
        }
    }

    /// An `EINTR` is retried unless the wall-clock watchdog caused it.
    private static func notInterruptedByWatchdog() -> Bool { WallClockWatchdog.firedOnThisThread() == nil }

    /// The watchdog's error if it fired, `closed` for a pipe whose reader went away, else
    /// `<operation>_failed` with the errno's name, about `path`.
    static func audioError(_ error: SystemCallError, path: String) -> AudioError {
        if let fired = WallClockWatchdog.firedOnThisThread() { return fired }
        if error.errno == EPIPE { return AudioError.closed(port: path) }
        return AudioError.file(path: path, detail: ErrorDetail("\(error.call)_failed", [error.errnoName]))
    }
}

// MARK: - SIGPIPE

/// Writing to a pipe whose reader has gone raises SIGPIPE, which kills the process by
/// default. Instead of ignoring the signal process-wide (a library should not), writes are
/// made with SIGPIPE blocked on the calling thread and a signal they raised is consumed, so
/// the write just fails with `EPIPE` (the approach libpq takes).
enum BrokenPipe {
    static func withSignalBlocked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        var sigpipe = sigset_t()
        sigemptyset(&sigpipe)
        sigaddset(&sigpipe, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &sigpipe, &previous)
        var pending = sigset_t()
        sigpending(&pending)
        let alreadyPending = sigismember(&pending, SIGPIPE) == 1
        defer {
            if !alreadyPending {
                sigpending(&pending)
                if sigismember(&pending, SIGPIPE) == 1 {
                    var noWait = timespec(tv_sec: 0, tv_nsec: 0)
                    _ = sigtimedwait(&sigpipe, nil, &noWait)
                }
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        return try body()
    }
}
