import GrokBasics
import Glibc

/// The `.partial` file a download writes: opened without truncation, appended to, truncated
/// when a server restarts from zero, fsynced before close. Every system call goes through
/// ``call(_:_:)``, which retries EINTR and turns errno into ``NetError/file(path:detail:)``.
///
/// Used on one transfer thread only.
final class PartialFile {
    let path: String
    private let fd: Int32

    /// Opens (creating it if needed) and positions at the end.
    init(path: String) throws(NetError) {
        self.path = path
        let opened = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard opened >= 0 else { throw Self.error(path, "open") }
        fd = opened
        do {
            try call("lseek") { Int(lseek(fd, 0, SEEK_END)) }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        close(fd)
    }

    /// The bytes the file holds.
    func length() throws(NetError) -> Int64 {
        var info = stat()
        try call("fstat") { Int(fstat(fd, &info)) }
        return Int64(info.st_size)
    }

    /// Empties the file and writes from its start again.
    func restart() throws(NetError) {
        try call("ftruncate") { Int(ftruncate(fd, 0)) }
        try call("lseek") { Int(lseek(fd, 0, SEEK_SET)) }
    }

    /// Appends all of `bytes`, looping over short writes.
    func append(_ bytes: UnsafeRawBufferPointer) throws(NetError) {
        var done = 0
        while done < bytes.count {
            let wrote = try call("write") { write(fd, bytes.baseAddress! + done, bytes.count - done) }
            done += wrote
        }
    }

    /// Flushes the file's data to the disk.
    func sync() throws(NetError) {
        try call("fsync") { Int(fsync(fd)) }
    }

    /// The checking funnel: retries EINTR, maps -1 to a ``NetError`` naming the call and errno.
    @discardableResult
    private func call(_ what: String, _ body: () -> Int) throws(NetError) -> Int {
        while true {
            let result = body()
            if result >= 0 { return result }
            if errno == EINTR { continue }
            throw Self.error(path, what)
        }
    }

    private static func error(_ path: String, _ what: String) -> NetError {
        let code = errno
        return .file(path: path, detail: ErrorDetail("system_call_failed", [what, systemErrorName(code)]))
    }
}

@available(*, unavailable) extension PartialFile: Sendable {}
