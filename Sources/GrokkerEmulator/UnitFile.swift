#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GrokBasics

/// A unit's files: whole-file reads, bounded, and crash-safe replacement through GrokBasics'
/// ``AtomicFile``. Every system call goes through ``SystemCall``; a failure becomes ``Failure``.
enum UnitFile {
    enum Failure: Error, Equatable {
        /// A system call failed.
        case system(operation: String, errno: Int32)
        /// The file is larger than the caller's limit.
        case tooLarge(size: Int)
        /// The path is a FIFO, a socket or a device, not a file a unit keeps.
        case notRegularFile

        init(_ error: SystemCallError) {
            self = .system(operation: error.call, errno: error.errno)
        }

        var detail: String {
            switch self {
            case .system(let operation, let code):
                "\(operation) failed: \(String(cString: strerror(code)))"
            case .tooLarge(let size):
                "file of \(size) bytes is too large"
            case .notRegularFile:
                "not a regular file"
            }
        }

        /// The failure as a code under `emulator.detail` (`<call>_failed` with the errno's
        /// name, or the size), for messages a person reads in their language.
        var errorDetail: ErrorDetail {
            switch self {
            case .system(let operation, let code): ErrorDetail("\(operation)_failed", [systemErrorName(code)])
            case .tooLarge(let size): ErrorDetail("file_too_large", [String(size)])
            case .notRegularFile: ErrorDetail("not_a_regular_file")
            }
        }
    }

    /// `body` through the one system-call funnel, its failure as a ``Failure``.
    @discardableResult
    static func check<T: BinaryInteger>(_ operation: String, _ body: () -> T) throws(Failure) -> T {
        do throws(SystemCallError) {
            return try SystemCall.value(operation, body)
        } catch {
            throw Failure(error)
        }
    }

    /// The file's bytes, or `nil` if it does not exist. Refuses files over `limit` bytes.
    /// Stale temporary files of `path` (``AtomicFile/removeStaleTemporaries(of:suffix:)``) are removed
    /// first: reading a state file is how a unit's directory is opened.
    static func readAll(_ path: String, limit: Int) throws(Failure) -> [UInt8]? {
        AtomicFile.removeStaleTemporaries(of: path)
        // Non-blocking: opening a FIFO for reading would otherwise wait for a writer forever.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw .system(operation: "open", errno: code)
        }
        defer { close(fd) }
        var info = stat()
        try check("fstat") { fstat(fd, &info) }
        // A FIFO, socket or device is refused before a read could block on it; a directory
        // fails its read (EISDIR), as before.
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFDIR else { throw .notRegularFile }
        let size = Int(info.st_size)
        guard size <= limit else { throw .tooLarge(size: size) }
        // Sized by the file, not by the limit: one byte more than `fstat` says, so a file that
        // grew since is noticed (the buffer then grows, never past `limit + 1`).
        var bytes = [UInt8](repeating: 0, count: max(size, 0) + 1)
        var filled = 0
        while filled <= limit {
            if filled == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, limit + 1 - bytes.count)))
            }
            let n = try check("read") {
                bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            }
            if n == 0 { break }
            filled += n
        }
        guard filled <= limit else { throw .tooLarge(size: filled) }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Creates `path` holding `bytes` only if it does not exist, atomically across processes
    /// (of racing creators exactly one wins and the others read what it wrote).
    /// - Returns: whether this call created the file.
    static func createExclusively(_ path: String, with bytes: [UInt8]) throws(Failure) -> Bool {
        do throws(SystemCallError) {
            return try AtomicFile.write(bytes, to: path, options: AtomicFile.Options(exclusive: true))
        } catch {
            throw Failure(error)
        }
    }

    /// Replaces `path` with `bytes` so that a crash at any instant leaves the old or the
    /// new content, never a mix.
    static func replace(_ path: String, with bytes: [UInt8]) throws(Failure) {
        do throws(SystemCallError) {
            try AtomicFile.write(bytes, to: path)
        } catch {
            throw Failure(error)
        }
    }
}
