import Foundation
import GrokBasics
#if canImport(Glibc)
import Glibc
#endif

/// The files a ledger keeps beside its database, and how a new one comes into being.
///
/// - `<ledger>-runs`: an empty file whose byte N is write-locked (an open-file-description
///   lock, `F_OFD_SETLK`) by the process that has run N open. The kernel drops the lock when
///   that process dies, however it dies, so a run whose byte is not locked has no process
///   behind it any more.
/// - `<ledger>.new-<pid>-<random>`: a new ledger being built; moved into place whole.
enum LedgerFiles {
    /// Creates the ledger at `path` if no file is there: the schema is built in a private
    /// temporary file beside it, put in WAL mode, closed, and then linked into place with
    /// `link(2)`, which fails if another process got there first (then that ledger is used).
    /// So a ledger at `path` is never half-made, and a 0-byte file there is never ours.
    static func createIfMissing(_ path: String, busyTimeoutMilliseconds: Int) throws(LedgerError) {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        let temporary = path + ".new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // Held while the file is built: tells a cleaner the builder is alive.
        let guardFD = Glibc.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard guardFD >= 0 else {
            throw systemError(path, "cannot create the new ledger file '\(temporary)'")
        }
        defer { close(guardFD) }
        _ = flock(guardFD, LOCK_EX | LOCK_NB)
        defer { removeFamily(temporary) }
        do throws(LedgerError) {
            let connection = try SQLiteConnection(path: temporary, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                                  create: true)
            try connection.setCheckpointOnClose(true)
            try connection.execute("PRAGMA synchronous = FULL")
            try Schema.migrate(connection)
            // Migrations may rebuild tables: leave no free pages in a new file.
            try connection.executeScript("VACUUM")
            let mode = try connection.queryText("PRAGMA journal_mode = WAL")
            guard mode?.lowercased() == "wal" else {
                throw LedgerError.cannotOpen(path: path, detail: "wal_unavailable")
            }
        } catch {
            throw error.moved(from: temporary, to: path)
        }
        // The connection is closed: the file is whole. Make it durable, then publish it.
        guard fsync(guardFD) == 0 else { throw systemError(path, "fsync of the new ledger failed") }
        if link(temporary, path) != 0 {
            let code = errno
            guard code == EEXIST else {
                errno = code
                throw systemError(path, "cannot put the new ledger in place")
            }
            // Another process created it at the same moment: use theirs.
        }
        syncDirectory(of: path)
    }

    /// Removes leftovers of ledger creation in the ledger's directory (`<name>.new-<pid>-*`
    /// and their `-journal`, `-wal`, `-shm`) whose builder is gone: its process no longer
    /// exists and nobody holds the file's lock. Best effort; returns the names removed.
    @discardableResult
    static func removeStaleTemporaries(of path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let prefix = url.lastPathComponent + ".new-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            let parts = rest.split(separator: "-")
            guard parts.count >= 2, let pid = Int32(parts[0]), parts[1].allSatisfy(\.isNumber) else { continue }
            let main = directory + "/" + prefix + parts[0] + "-" + parts[1]
            guard !processExists(pid), !isLocked(main) else { continue }
            if unlink(directory + "/" + name) == 0 { removed.append(name) }
        }
        return removed.sorted()
    }

    /// Whether process `pid` exists (a process of another user counts: EPERM).
    static func processExists(_ pid: Int32) -> Bool {
        pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH)
    }

    /// Whether someone holds a `flock` on the file (false when it is gone).
    private static func isLocked(_ path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    private static func removeFamily(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    }

    static func syncDirectory(of path: String) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }

    static func systemError(_ path: String, _ what: String, code: Int32 = errno) -> LedgerError {
        let detail = "\(what): \(SystemCodes.errnoName(code))"
        switch code {
        case ENOSPC, EDQUOT: return .diskFull(path: path)
        case EACCES, EPERM, EROFS: return .readOnly(path: path, detail: ErrorDetail("system_call", [what, SystemCodes.errnoName(code)]))
        default: return .cannotOpen(path: path, detail: detail)
        }
    }
}

extension LedgerError {
    /// The same error about `path` instead of `temporary` (a failure while building a new ledger).
    func moved(from temporary: String, to path: String) -> LedgerError {
        func fix(_ text: String) -> String { text.replacingOccurrences(of: temporary, with: path) }
        func fix(_ detail: ErrorDetail) -> ErrorDetail { ErrorDetail(detail.code, detail.arguments.map(fix)) }
        switch self {
        case .cannotOpen(_, let d): return .cannotOpen(path: path, detail: fix(d))
        case .diskFull: return .diskFull(path: path)
        case .readOnly(_, let d): return .readOnly(path: path, detail: fix(d))
        case .locked(_, let w): return .locked(path: path, waitedMilliseconds: w)
        case .sqlite(_, let c, let d): return .sqlite(path: path, sqliteCode: c, detail: fix(d))
        default: return self
        }
    }
}

/// `<ledger>-runs`: one byte-range lock per open run (see ``LedgerFiles``). Open-file-
/// description locks belong to this open file, not to the process, so two ``Ledger``s in one
/// process see each other's locks too, and closing any other descriptor of the file does not
/// drop them (as it would POSIX `F_SETLK` locks).
final class RunLockFile: Sendable {
    let path: String
    private let fd: Int32

    // <bits/fcntl-linux.h>; the same values on every Linux architecture.
    private static let getLock: Int32 = 36    // F_OFD_GETLK
    private static let setLock: Int32 = 37    // F_OFD_SETLK

    init(ledgerPath: String) throws(LedgerError) {
        path = ledgerPath + "-runs"
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LedgerFiles.systemError(ledgerPath, "cannot open the run lock file '\(path)'") }
        self.fd = fd
    }

    deinit { close(fd) }

    private func request(_ type: Int32, _ run: Int64, _ command: Int32) -> (Int32, flock) {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(run)
        lock.l_len = 1
        lock.l_pid = 0
        let rc = withUnsafeMutablePointer(to: &lock) { fcntl(fd, command, UnsafeMutableRawPointer($0)) }
        return (rc, lock)
    }

    /// Marks run `run` as alive in this process until ``unlock(_:)`` or the process ends.
    func lock(_ run: Int64) throws(LedgerError) {
        do throws(SystemCallError) {
            try SystemCall.value("fcntl") { request(F_WRLCK, run, Self.setLock).0 }
        } catch {
            throw LedgerFiles.systemError(path, "cannot lock run \(run) in '\(path)'", code: error.errno)
        }
    }

    func unlock(_ run: Int64) {
        _ = request(F_UNLCK, run, Self.setLock)
    }

    /// Whether another open file (another process, or another ``Ledger`` here) holds run `run`'s lock.
    func isHeldElsewhere(_ run: Int64) -> Bool {
        let (rc, lock) = request(F_WRLCK, run, Self.getLock)
        // If the question itself fails, assume the run is alive: never close a live run.
        return rc != 0 || lock.l_type != Int16(F_UNLCK)
    }
}
