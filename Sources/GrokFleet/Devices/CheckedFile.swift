import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes a whole file so that readers see the old content or the new one, with every
/// system call checked: a temporary file beside it, `write`, `fsync`, `close`, `rename`.
/// Creates the directory. A failure leaves no temporary file and throws ``Failure``
/// naming `path`.
public enum CheckedFile {
    /// A file that was not written: its path and the system's error number.
    public struct Failure: Error, Sendable, Equatable {
        public let path: String
        public let errno: Int32
    }

    public static func write(_ bytes: [UInt8], to path: String) throws(Failure) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            // A device, a FIFO, /dev/stdout: written in place (renaming over it would replace it).
            try writeInPlace(bytes, to: path)
            return
        }
        if let code = makeDirectories(directory) { throw Failure(path: path, errno: code) }
        let temporary = directory + "/." + url.lastPathComponent + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(path: path, errno: errno) }
        func fail(_ code: Int32) -> Failure {
            unlink(temporary)
            return Failure(path: path, errno: code)
        }
        if let code = writeAll(bytes, to: fd) {
            close(fd)
            throw fail(code)
        }
        if fsync(fd) != 0 {
            let code = errno
            close(fd)
            throw fail(code)
        }
        guard close(fd) == 0 else { throw fail(errno) }
        guard rename(temporary, path) == 0 else { throw fail(errno) }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Writes all of `bytes` to `fd` (again after EINTR); the errno of a failure (ENOSPC
    /// for a write that took nothing), nil when all went.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32? {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if wrote < 0, errno == EINTR { continue }
            guard wrote > 0 else { return wrote < 0 ? errno : ENOSPC }
            done += wrote
        }
        return nil
    }

    private static func writeInPlace(_ bytes: [UInt8], to path: String) throws(Failure) {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path: path, errno: errno) }
        if let code = writeAll(bytes, to: fd) {
            close(fd)
            throw Failure(path: path, errno: code)
        }
        guard close(fd) == 0 else { throw Failure(path: path, errno: errno) }
    }

    /// `mkdir -p`: nil when `path` is (now) a directory, else the errno of the failing step.
    private static func makeDirectories(_ path: String) -> Int32? {
        var info = stat()
        if stat(path, &info) == 0 { return (info.st_mode & S_IFMT) == S_IFDIR ? nil : ENOTDIR }
        if mkdir(path, 0o755) == 0 { return nil }
        guard errno == ENOENT else { return errno == EEXIST ? makeDirectories(path) : errno }
        let parent = (path as NSString).deletingLastPathComponent
        guard !parent.isEmpty, parent != path else { return ENOENT }
        if let code = makeDirectories(parent) { return code }
        return mkdir(path, 0o755) == 0 || errno == EEXIST ? nil : errno
    }
}
