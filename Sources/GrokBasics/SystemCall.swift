#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A system call that failed: which call, on which path, and the errno it left. Each layer
/// maps it into its own coded error (the errno as ``systemErrorName(_:)``, never `strerror`'s
/// English), so the caller's codes and details stay the layer's own.
public struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call's name as the layers' details spell it: `open`, `write`, `fsync`, `rename`.
    public let call: String
    /// The errno the call left.
    public let errno: Int32
    /// The file or directory the call acted on, when there is one (a temporary file beside
    /// the target, the target's directory, ...).
    public let path: String?

    public init(call: String, errno: Int32, path: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
    }

    /// The errno's symbolic name (`ENOSPC`): the same in every language.
    public var errnoName: String { systemErrorName(errno) }

    /// The call and errno, for logs and test failures (not for a person).
    public var description: String { "\(call)\(path.map { " '\($0)'" } ?? ""): \(errnoName)" }
}

/// The one checking funnel for system calls (swift-system's `valueOrErrno` shape): runs the
/// call, reads errno right after it, calls it again after `EINTR`, and returns its value or
/// throws a ``SystemCallError`` naming the call.
public enum SystemCall {
    /// The value of `body`, a call that returns a negative number on failure and sets errno.
    /// - Parameters:
    ///   - call: The call's name, carried by the error.
    ///   - path: The path the call acts on, carried by the error.
    ///   - retryInterrupted: Asked after each `EINTR`: `true` calls again (the default),
    ///     `false` throws the `EINTR` (a `close`, which must not be repeated on Linux, or a
    ///     caller whose own deadline interrupted the call).
    ///   - body: The call.
    @discardableResult
    public static func value<T: BinaryInteger>(_ call: String, path: String? = nil, retryInterrupted: () -> Bool = { true },
                                               _ body: () -> T) throws(SystemCallError) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR && retryInterrupted() { continue }
            throw SystemCallError(call: call, errno: code, path: path)
        }
    }

    /// Writes all of `bytes` to `fd` (with `pwrite` at `offset` when given), looping over
    /// short writes; a write that takes nothing is `ENOSPC`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int? = nil, call: String = "write",
                                path: String? = nil, retryInterrupted: () -> Bool = { true }) throws(SystemCallError) {
        let written = try transfer(bytes.count, call, path, retryInterrupted) { done in
            if let offset { return pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done)) }
            return write(fd, bytes.baseAddress! + done, bytes.count - done)
        }
        guard written == bytes.count else { throw SystemCallError(call: call, errno: ENOSPC, path: path) }
    }

    /// Writes all of `bytes` to `fd`, at the file position.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], call: String = "write", path: String? = nil) throws(SystemCallError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemCallError) in try writeAll(fd, buffer, call: call, path: path) }
        }
        try result.get()
    }

    /// Reads into `bytes` until it is full or the file ends (with `pread` at `offset` when
    /// given); returns how many bytes were read.
    public static func readAll(_ fd: Int32, _ bytes: UnsafeMutableRawBufferPointer, at offset: Int? = nil, call: String = "read",
                               path: String? = nil, retryInterrupted: () -> Bool = { true }) throws(SystemCallError) -> Int {
        try transfer(bytes.count, call, path, retryInterrupted) { done in
            if let offset { return pread(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done)) }
            return read(fd, bytes.baseAddress! + done, bytes.count - done)
        }
    }

    /// Calls `body` with the count moved so far until `count` bytes are moved or a call
    /// moves none; returns the count moved.
    private static func transfer(_ count: Int, _ call: String, _ path: String?, _ retryInterrupted: () -> Bool,
                                 _ body: (Int) -> Int) throws(SystemCallError) -> Int {
        var done = 0
        while done < count {
            let moved = try value(call, path: path, retryInterrupted: retryInterrupted) { body(done) }
            if moved == 0 { break }
            done += moved
        }
        return done
    }
}
