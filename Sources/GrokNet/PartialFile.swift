import GrokBasics
import Glibc

/// The `.partial` file a download writes: opened without truncation, appended to, truncated
/// when a server restarts from zero, fsynced before close. Every system call goes through
/// GrokBasics' ``SystemCall`` (``call(_:_:)``), and its failure becomes ``NetError/file(path:detail:)``.
///
/// Used on one transfer thread only.
final class PartialFile {
    let path: String
    private let fd: Int32

    /// Opens (creating it if needed) and positions at the end.
    init(path: String) throws(NetError) {
        self.path = path
        do throws(SystemCallError) {
            fd = try SystemCall.value("open") { open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644) }
        } catch {
            throw Self.netError(error, path)
        }
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
        do throws(SystemCallError) {
            try SystemCall.writeAll(fd, bytes)
        } catch {
            throw Self.netError(error, path)
        }
    }

    /// Flushes the file's data to the disk.
    func sync() throws(NetError) {
        try call("fsync") { Int(fsync(fd)) }
    }

    /// `body` through the one system-call funnel.
    @discardableResult
    private func call(_ what: String, _ body: () -> Int) throws(NetError) -> Int {
        do throws(SystemCallError) {
            return try SystemCall.value(what, body)
        } catch {
            throw Self.netError(error, path)
        }
    }

    private static func netError(_ error: SystemCallError, _ path: String) -> NetError {
        .file(path: path, detail: ErrorDetail("system_call_failed", [error.call, error.errnoName]))
    }
}

@available(*, unavailable) extension PartialFile: Sendable {}
