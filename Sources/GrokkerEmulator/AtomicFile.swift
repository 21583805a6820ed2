#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GrokBasics

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

        /// The failure as a code under `emulator.detail` (`<call>_failed` with the errno's
        /// name, or the size), for messages a person reads in their language.
        var errorDetail: ErrorDetail {
            switch self {
            case .system(let operation, let code): ErrorDetail("\(operation)_failed", [systemErrorName(code)])
            case .tooLarge(let size): ErrorDetail("file_too_large", [String(size)])
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
    /// Stale temporary files of `path` (``removeStaleTemporaries(of:suffix:)``) are removed
    /// first: reading a state file is how a unit's directory is opened.
    static func readAll(_ path: String, limit: Int) throws(Failure) -> [UInt8]? {
        removeStaleTemporaries(of: path)
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

    /// What a temporary file of ``replace(_:with:)`` adds to the name: `state.json.tmp-<pid>-<random>`.
    static let temporarySuffix = ".tmp-"

    /// Removes the temporary files left beside `path` by writers that are gone: names
    /// `<path><suffix><pid>[-<anything>]` whose process no longer exists and whose file
    /// nobody holds a `flock` on (a writer holds one from creating its file to renaming it,
    /// so a live writer in another PID namespace is safe too). Best effort; returns the
    /// names removed.
    @discardableResult
    static func removeStaleTemporaries(of path: String, suffix: String = temporarySuffix) -> [String] {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let prefix = (slash.map { String(path[path.index(after: $0)...]) } ?? path) + suffix
        guard let dir = opendir(directory.isEmpty ? "/" : directory) else { return [] }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name.hasPrefix(prefix) { names.append(name) }
        }
        closedir(dir)
        var removed: [String] = []
        for name in names {
            let digits = name.dropFirst(prefix.count).prefix { $0.isNumber }
            guard let pid = Int32(digits), pid > 0 else { continue }
            // EPERM: the process exists (another user's): keep its file.
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            let file = (directory.isEmpty ? "" : directory) + "/" + name
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            if fd >= 0 {
                let free = flock(fd, LOCK_EX | LOCK_NB) == 0
                close(fd)
                guard free else { continue }
            }
            if unlink(file) == 0 { removed.append(name) }
        }
        return removed.sorted()
    }

    /// Creates `path` holding `bytes` only if it does not exist, atomically across processes:
    /// the bytes go to a temporary file (fsynced) that is then hard-linked to `path`; `link`
    /// fails with `EEXIST` when another writer got there first, so of racing creators exactly
    /// one wins and the others read what it wrote. The temporary name is removed either way.
    /// - Returns: whether this call created the file.
    static func createExclusively(_ path: String, with bytes: [UInt8]) throws(Failure) -> Bool {
        let created: Bool = try publish(bytes, at: path) { (temp) throws(Failure) -> Bool in
            defer { unlink(temp) }
            if link(temp, path) == 0 { return true }
            if errno == EEXIST { return false }
            throw .system(operation: "link", errno: errno)
        }
        return created
    }

    /// Replaces `path` with `bytes` so that a crash at any instant leaves the old or the
    /// new content, never a mix.
    static func replace(_ path: String, with bytes: [UInt8]) throws(Failure) {
        _ = try publish(bytes, at: path) { (temp) throws(Failure) in try check("rename") { rename(temp, path) } }
    }

    /// Writes `bytes` to a fresh temporary file beside `path` (fsynced and closed), lets
    /// `move` put it in place, then makes that durable by syncing the directory. The
    /// temporary is removed if anything before `move` fails; `move` owns it after that.
    private static func publish<T>(_ bytes: [UInt8], at path: String,
                                   move: (String) throws(Failure) -> T) throws(Failure) -> T {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        removeStaleTemporaries(of: path)
        let temp = path + temporarySuffix + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = try check("open") { open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        // Held until the temporary is moved: tells a cleaner in another process that this writer is alive.
        _ = flock(fd, LOCK_EX | LOCK_NB)
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
        } catch {
            if !closed { close(fd) }
            unlink(temp)
            throw error
        }
        let result: T
        do throws(Failure) {
            result = try move(temp)
        } catch {
            unlink(temp)
            throw error
        }
        // Make the move itself durable.
        let dirFD = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            defer { close(dirFD) }
            try check("fsync") { fsync(dirFD) }
        }
        return result
    }
}
