#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file reads and crash-safe replacement (temp file in the same directory, fsync,
/// rename, fsync of the directory). Every system call goes through ``check(_:_:)``, which
/// retries `EINTR` and turns errno into ``Failure``.
enum AtomicFile {
    enum Failure: Error, Equatable {
        /// A system call failed.
        case system(operation: String, errno: Int32)
        /// The file is larger than the caller's limit.
        case tooLarge(size: Int)

        var detail: String {
            switch self {
            case .system(let operation, let code):
                "\(operation) failed: \(String(cString: strerror(code)))"
            case .tooLarge(let size):
                "file of \(size) bytes is too large"
            }
        }
    }

    /// Calls `body` until it does not fail with `EINTR`; throws on any other failure.
    @discardableResult
    static func check<T: BinaryInteger>(_ operation: String, _ body: () -> T) throws(Failure) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw .system(operation: operation, errno: code)
        }
    }

    /// The file's bytes, or `nil` if it does not exist. Refuses files over `limit` bytes.
    static func readAll(_ path: String, limit: Int) throws(Failure) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw .system(operation: "open", errno: code)
        }
        defer { close(fd) }
        var info = stat()
        try check("fstat") { fstat(fd, &info) }
        let size = Int(info.st_size)
        guard size <= limit else { throw .tooLarge(size: size) }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var filled = 0
        while filled <= limit {
            let n = try check("read") {
                bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            }
            if n == 0 { break }
            filled += n
        }
        guard filled <= limit else { throw .tooLarge(size: filled) }
        return Array(bytes[0..<filled])
    }

    /// Replaces `path` with `bytes` so that a crash at any instant leaves the old or the
    /// new content, never a mix.
    static func replace(_ path: String, with bytes: [UInt8]) throws(Failure) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let temp = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = try check("open temp file") { open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        var closed = false
        do throws(Failure) {
            var written = 0
            while written < bytes.count {
                let n = try check("write") {
                    bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
                }
                written += n
            }
            try check("fsync") { fsync(fd) }
            closed = true
            try check("close") { close(fd) }
            try check("rename") { rename(temp, path) }
        } catch {
            if !closed { close(fd) }
            unlink(temp)
            throw error
        }
        // Make the rename itself durable.
        let dirFD = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            defer { close(dirFD) }
            try check("fsync directory") { fsync(dirFD) }
        }
    }
}
