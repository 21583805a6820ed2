#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import GrokBasics

/// File operations for the station and the publisher. Every system call goes through
/// ``check(_:_:_:)``, which retries `EINTR` and turns errno into ``FirmwareError/io(path:operation:detail:)``.
/// Replacing a file is always: temp file in the same directory, write, fsync, rename,
/// fsync of the directory, so a crash leaves the old or the new content, never a mix.
enum Files {
    /// Calls `body` until it does not fail with `EINTR`; throws on any other failure.
    @discardableResult
    static func check<T: BinaryInteger>(_ path: String, _ operation: String, _ body: () -> T) throws(FirmwareError) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw .io(path: path, operation: operation, detail: .system(code))
        }
    }

    /// The file's bytes, `nil` if it does not exist. A file over `limit` bytes is refused
    /// with `tooLarge(size)` (the size found) before it is read.
    static func load(_ path: String, limit: Int, tooLarge: (Int) -> FirmwareError) throws(FirmwareError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw .io(path: path, operation: "open", detail: .system(code))
        }
        defer { close(fd) }
        var info = stat()
        try check(path, "fstat") { fstat(fd, &info) }
        guard Int(info.st_size) <= limit else { throw tooLarge(Int(info.st_size)) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var filled = 0
        while filled < bytes.count {
            let n = try check(path, "read") {
                bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            }
            if n == 0 { break }
            filled += n
        }
        // The file grew while being read: refuse rather than read without end.
        guard filled <= limit else { throw tooLarge(filled) }
        return Array(bytes[0..<filled])
    }

    /// Replaces `path` with `bytes` atomically and durably.
    static func replace(_ path: String, with bytes: [UInt8]) throws(FirmwareError) {
        let temp = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = try check(temp, "open") { open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        var closed = false
        do throws(FirmwareError) {
            var written = 0
            while written < bytes.count {
                let n = try check(temp, "write") {
                    bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
                }
                written += n
            }
            try check(temp, "fsync") { fsync(fd) }
            closed = true
            try check(temp, "close") { close(fd) }
            try check(path, "rename") { rename(temp, path) }
        } catch {
            if !closed { close(fd) }
            unlink(temp)
            throw error
        }
        try syncDirectory(of: path)
    }

    /// Moves a verified file into place: fsync, rename, fsync of the directory. Across
    /// file systems (EXDEV) the bytes are written by ``replace(_:with:)`` and the source removed.
    static func moveVerified(_ source: String, to destination: String, bytes: [UInt8]) throws(FirmwareError) {
        let fd = try check(source, "open") { open(source, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        try check(source, "fsync") { fsync(fd) }
        if rename(source, destination) == 0 {
            try syncDirectory(of: destination)
            return
        }
        let code = errno
        guard code == EXDEV else { throw .io(path: destination, operation: "rename", detail: .system(code)) }
        try replace(destination, with: bytes)
        unlink(source)
    }

    /// fsyncs the directory holding `path`, making a rename durable.
    static func syncDirectory(of path: String) throws(FirmwareError) {
        let directory = parent(of: path)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        try check(directory, "fsync") { fsync(fd) }
    }

    /// The directory part of `path` (`.` when none).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let head = String(path[..<slash])
        return head.isEmpty ? "/" : head
    }

    /// Creates `path` and its missing parents.
    static func makeDirectories(_ path: String) throws(FirmwareError) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0 {
                let code = errno
                guard code == EEXIST else { throw .io(path: current, operation: "mkdir", detail: .system(code)) }
            }
        }
    }

    /// The names in `directory` (not `.` and `..`), sorted; empty if it does not exist.
    static func list(_ directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Whether `path` exists.
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Removes `path`; a missing file is not an error.
    static func remove(_ path: String) throws(FirmwareError) {
        if unlink(path) != 0 {
            let code = errno
            guard code == ENOENT else { throw .io(path: path, operation: "unlink", detail: .system(code)) }
        }
    }
}

/// Writing the publisher's output files (`grokctl firmware pack`, `grokctl region catalogue
/// make`; their inputs are read as the command line's `InputFile`s).
public enum FirmwareFiles {
    /// Writes `bytes` to `path` by temp file, fsync and rename.
    public static func write(_ bytes: [UInt8], to path: String) throws(FirmwareError) {
        try Files.replace(path, with: bytes)
    }
}
