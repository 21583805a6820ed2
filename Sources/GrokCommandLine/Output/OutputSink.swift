import Foundation
import GrokBasics
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a ``Console`` writes: a file descriptor, or a buffer in tests.
public protocol OutputSink: AnyObject {
    /// Writes `text` as UTF-8, completely.
    func write(_ text: String)
    /// The first write that failed (a full disk, a closed pipe), or nil: a command whose
    /// output was lost must not end as if it had been delivered.
    var writeFailure: OutputError? { get }
}

public extension OutputSink {
    /// A sink that cannot fail (a buffer) never has a failure.
    var writeFailure: OutputError? { nil }
}

/// Writes straight to a file descriptor with `write(2)`, retrying on `EINTR` and short
/// writes; stdout and stderr are unbuffered so messages on the two interleave in order.
/// A write that fails is dropped (nobody may be left to read it) and remembered: the first
/// failure is ``writeFailure``, which the command line turns into an error and exit 1.
public final class FileDescriptorSink: OutputSink, Sendable {
    /// The descriptor written to.
    public let fileDescriptor: Int32
    /// What the descriptor is, for the error (`standard output`, or a file's path).
    public let name: String
    private let failure = Mutex<OutputError?>(nil)

    /// A sink for an open descriptor, which it does not own (nor close).
    public init(fileDescriptor: Int32, name: String? = nil) {
        self.fileDescriptor = fileDescriptor
        self.name = name ?? (fileDescriptor == 1 ? "standard output" : fileDescriptor == 2 ? "standard error" : "descriptor \(fileDescriptor)")
    }

    /// Standard output.
    public static let standardOutput = FileDescriptorSink(fileDescriptor: 1)
    /// Standard error.
    public static let standardError = FileDescriptorSink(fileDescriptor: 2)

    public var writeFailure: OutputError? { failure.withLock { $0 } }

    public func write(_ text: String) {
        do {
            try SystemCall.writeAll(fileDescriptor, Array(text.utf8), path: name)
        } catch {
            // EPIPE, a full disk, a closed descriptor: dropped, and remembered.
            failure.withLock { if $0 == nil { $0 = OutputError(path: name, errno: error.errno) } }
        }
    }

    /// Checks that what was written really reached the file: `fsync(2)` where the
    /// descriptor is a regular file (NFS and some full disks report only there; pipes and
    /// terminals have nothing to flush). The final flush of the command line.
    public func flush() {
        var info = stat()
        guard fstat(fileDescriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        if fsync(fileDescriptor) != 0, errno != EINVAL, errno != EROFS {
            let code = errno
            failure.withLock { if $0 == nil { $0 = OutputError(path: name, errno: code) } }
        }
    }
}

/// Output that could not be written: standard output, a report, an export. `path` names it
/// (`standard output` or the file), `errno` says why, as the system said it.
public struct OutputError: CodedError, Sendable, Equatable {
    /// The stream or file.
    public let path: String
    /// The system's error number.
    public let errno: Int32
    /// `output_write_failed`: a command's output was lost (a fleet run's report that could
    /// not be written is GrokFleet's `fleet_report_not_written`).
    public var code: String { "output_write_failed" }

    public init(path: String, errno: Int32) {
        self.path = path
        self.errno = errno
    }

    /// The path, then the reason as the system names it (`ENOSPC`, `EACCES`, ...: the same
    /// in every language, so no English system text reaches a translated message).
    public var arguments: [String] { [path, reasonCode] }

    /// The errno's symbolic name; `errno <n>` for one not listed.
    public var reasonCode: String { Self.reasonCode(errno) }

    static func reasonCode(_ number: Int32) -> String { systemErrorName(number) }

    public var description: String { Localizer.english.message(for: self) }
}

/// Keeps everything written, for tests.
public final class BufferSink: OutputSink {
    /// Everything written so far.
    public private(set) var text = ""

    /// An empty buffer.
    public init() {}

    public func write(_ text: String) {
        self.text += text
    }
}

@available(*, unavailable)
extension BufferSink: Sendable {}

/// The end of every command: the final flush of standard output, then any write that
/// failed becomes an error naming the stream and exit 1 (unless the command already failed).
public enum OutputCheck {
    public static func finish(_ code: Int32, standardOutput: any OutputSink, console: Console) -> Int32 {
        (standardOutput as? FileDescriptorSink)?.flush()
        guard let failure = standardOutput.writeFailure else { return code }
        let reported = console.report(failure).rawValue
        return code == 0 ? reported : code
    }
}
