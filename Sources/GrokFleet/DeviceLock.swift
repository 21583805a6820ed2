import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on one Grokker, by serial number: `flock` on `<directory>/<serial>.lock`,
/// so two runs (two processes, or two runs in one process) cannot touch the same Grokker at
/// once. The kernel drops the lock when the holder exits, however it exits, so a killed run
/// never leaves a Grokker locked. Unlocked on ``unlock()`` or deinit.
public final class DeviceLock: Sendable {
    /// The lock file.
    public let path: String
    private let descriptor: Mutex<Int32>

    /// Takes the lock without waiting.
    /// - Returns: the lock, or `nil` when another holder has it.
    /// - Throws: ``FleetError/lockFailed(path:detail:)`` when the directory or file cannot be used.
    public static func acquire(directory: String, serial: String) throws(FleetError) -> DeviceLock? {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .lockFailed(path: directory, detail: "\(error)")
        }
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + serial + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .lockFailed(path: path, detail: String(cString: strerror(errno))) }
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { break }
            let error = errno
            if error == EINTR { continue }
            close(fd)
            if error == EWOULDBLOCK { return nil }
            throw .lockFailed(path: path, detail: String(cString: strerror(error)))
        }
        // Who holds it, for people looking at the directory.
        let note = Array("pid \(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = note.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return DeviceLock(path: path, descriptor: fd)
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    /// Releases the lock (the file stays, empty of meaning).
    public func unlock() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    deinit { unlock() }
}
