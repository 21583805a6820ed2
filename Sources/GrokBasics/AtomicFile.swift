#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Crash-safe file replacement, the one way every layer writes a whole file: the bytes go to
/// a fresh temporary file beside the target (`<name>.tmp-<pid>-<random>`, opened with
/// `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC` and the final mode), are written whole and fsynced,
/// and the temporary is renamed over the target (or linked, for an exclusive create); then
/// the directory is fsynced. A crash at any instant leaves the old content or the new, never
/// a mix; on any failure the temporary is removed and the target is untouched. Every system
/// call goes through ``SystemCall``; failures are ``SystemCallError``s for the caller's layer
/// to map into its own coded error.
public enum AtomicFile {
    /// How a write treats the target and its directory.
    public struct Options: Sendable, Hashable {
        /// The new file's permissions (before the umask).
        public var mode: mode_t
        /// Create the file only if nothing is at the path: the temporary is hard-linked into
        /// place, and `link` fails with `EEXIST` when another writer got there first, so of
        /// racing creators exactly one wins. ``AtomicFile/write(_:to:options:)`` then returns
        /// `false` and leaves the existing file as it is.
        public var exclusive: Bool
        /// Make the target's missing parent directories (mode 0755) first.
        public var createsDirectories: Bool
        /// When the target exists and is not a regular file (a device, a FIFO, `/dev/stdout`),
        /// write into it in place instead: renaming over it would replace the device.
        public var writesSpecialFilesInPlace: Bool

        public init(mode: mode_t = 0o644, exclusive: Bool = false, createsDirectories: Bool = false,
                    writesSpecialFilesInPlace: Bool = false) {
            self.mode = mode
            self.exclusive = exclusive
            self.createsDirectories = createsDirectories
            self.writesSpecialFilesInPlace = writesSpecialFilesInPlace
        }
    }

    /// What a temporary file adds to the target's name: `state.json.tmp-<pid>-<random>`.
    public static let temporarySuffix = ".tmp-"

    /// Replaces (or, ``Options/exclusive``, creates) `path` with `bytes`.
    /// - Returns: `false` only for an exclusive write that found a file already there.
    /// - Throws: ``SystemCallError`` naming the call that failed (`mkdir`, `open`, `write`,
    ///   `fsync`, `close`, `rename`, `link`) and the path it acted on.
    @discardableResult
    public static func write(_ bytes: [UInt8], to path: String, options: Options = Options()) throws(SystemCallError) -> Bool {
        if options.writesSpecialFilesInPlace {
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
                try writeInPlace(bytes, to: path)
                return true
            }
        }
        if options.createsDirectories { try makeDirectories(parent(of: path)) }
        let file = try StagedFile(replacing: path, options: options)
        try file.write(bytes)
        return try file.commit()
    }

    /// Removes the temporary files left beside `path` by writers that are gone: names
    /// `<path><suffix><pid>[-<anything>]` whose process no longer exists and whose file
    /// nobody holds a `flock` on (a writer holds one from creating its file to renaming it,
    /// so a live writer in another PID namespace is safe too). Best effort; returns the
    /// names removed. ``write(_:to:options:)`` calls it before each write.
    @discardableResult
    public static func removeStaleTemporaries(of path: String, suffix: String = temporarySuffix) -> [String] {
        let slash = path.lastIndex(of: "/")
        let directory = parent(of: path)
        let prefix = (slash.map { String(path[path.index(after: $0)...]) } ?? path) + suffix
        guard let dir = opendir(directory) else { return [] }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
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
            let file = directory + "/" + name
            let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            if fd >= 0 {
                let free = flock(fd, LOCK_EX | LOCK_NB) == 0
                close(fd)
                guard free else { continue }
            }
            if unlink(file) == 0 { removed.append(name) }
        }
        return removed.sorted()
    }

    /// The directory part of `path` (`.` when it has none, `/` for a file at the root).
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let head = String(path[..<slash])
        return head.isEmpty ? "/" : head
    }

    /// `mkdir -p`: creates `path` and its missing parents (mode 0755). A part that exists
    /// but is not a directory fails with `ENOTDIR`.
    public static func makeDirectories(_ path: String) throws(SystemCallError) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) == 0 { continue }
            let code = errno
            guard code == EEXIST else { throw SystemCallError(call: "mkdir", errno: code, path: current) }
            var info = stat()
            guard stat(current, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw SystemCallError(call: "mkdir", errno: ENOTDIR, path: current)
            }
        }
    }

    /// Writes into an existing device or FIFO, every call checked.
    private static func writeInPlace(_ bytes: [UInt8], to path: String) throws(SystemCallError) {
        let fd = try SystemCall.value("open", path: path) { open(path, O_WRONLY | O_TRUNC | O_CLOEXEC) }
        do throws(SystemCallError) {
            try SystemCall.writeAll(fd, bytes, path: path)
        } catch {
            close(fd)
            throw error
        }
        try SystemCall.value("close", path: path, retryInterrupted: { false }) { close(fd) }
    }
}

/// A file being written beside its target: the bytes go to a temporary file (opened
/// `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC` with the final mode, `flock`ed while it is written),
/// and ``commit()`` fsyncs it and moves it over the target (links it, for an exclusive
/// create), then fsyncs the directory. Until then the target is untouched; ``discard()``, a
/// failed commit, or dropping the file unfinished removes the temporary. What
/// ``AtomicFile/write(_:to:options:)`` does in one call, for a writer that streams (a WAV
/// recording).
///
/// Not thread-safe: one owner at a time.
public final class StagedFile {
    /// Where the file goes on ``commit()``.
    public let path: String
    /// The temporary file being written.
    public let temporaryPath: String
    private let options: AtomicFile.Options
    private var fd: Int32

    /// Creates the temporary file.
    /// - Parameters:
    ///   - path: The target.
    ///   - temporaryPath: The temporary's name; by default `<path>.tmp-<pid>-<random>`, after
    ///     removing those of writers that are gone (``AtomicFile/removeStaleTemporaries(of:suffix:)``).
    ///     A name given here must not exist.
    ///   - options: The mode, and whether the create is exclusive (the other options are
    ///     ``AtomicFile/write(_:to:options:)``'s).
    public init(replacing path: String, temporaryPath: String? = nil, options: AtomicFile.Options = AtomicFile.Options()) throws(SystemCallError) {
        if temporaryPath == nil { AtomicFile.removeStaleTemporaries(of: path) }
        let temporary = temporaryPath ?? path + AtomicFile.temporarySuffix + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        fd = try SystemCall.value("open", path: temporary) {
            open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, options.mode)
        }
        // Held until the temporary is moved: tells a cleaner in another process that this writer is alive.
        _ = flock(fd, LOCK_EX | LOCK_NB)
        self.path = path
        self.temporaryPath = temporary
        self.options = options
    }

    deinit { discard() }

    /// Whether the file is still being written (neither committed nor discarded).
    public var isOpen: Bool { fd >= 0 }

    /// Writes all of `bytes` to the temporary (at `offset` when given, else at its end).
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int? = nil, call: String = "write") throws(SystemCallError) {
        guard fd >= 0 else { throw SystemCallError(call: call, errno: EBADF, path: temporaryPath) }
        try SystemCall.writeAll(fd, bytes, at: offset, call: call, path: temporaryPath)
    }

    /// Writes all of `bytes` to the temporary, at its end.
    public func write(_ bytes: [UInt8]) throws(SystemCallError) {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(SystemCallError) in try write(buffer) } }
        try result.get()
    }

    /// fsyncs and closes the temporary, moves it over ``path`` (or, for an exclusive create,
    /// links it there unless a file is already there) and fsyncs the directory. On failure
    /// the temporary is removed and ``path`` is as it was.
    /// - Returns: `false` only for an exclusive create that found a file already there.
    @discardableResult
    public func commit() throws(SystemCallError) -> Bool {
        guard fd >= 0 else { throw SystemCallError(call: "close", errno: EBADF, path: temporaryPath) }
        let temporary = temporaryPath
        let created: Bool
        do throws(SystemCallError) {
            try SystemCall.value("fsync", path: temporary) { fsync(fd) }
            let file = fd
            fd = -1
            try SystemCall.value("close", path: temporary, retryInterrupted: { false }) { close(file) }
            if options.exclusive {
                created = try linkUnlessPresent(temporary, at: path)
                unlink(temporary)
            } else {
                try SystemCall.value("rename", path: path) { rename(temporary, path) }
                created = true
            }
        } catch {
            discard()
            unlink(temporary)
            throw error
        }
        // Make the move durable. Best effort: the target already holds the new bytes, so a
        // file system that refuses to fsync a directory is not a failure of the write.
        let directoryFD = open(AtomicFile.parent(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
        return created
    }

    /// Closes and removes the temporary, leaving ``path`` as it was (nothing once committed).
    public func discard() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        unlink(temporaryPath)
    }

    /// Links `temporary` at `path`; `false` when a file is already there.
    private func linkUnlessPresent(_ temporary: String, at path: String) throws(SystemCallError) -> Bool {
        do throws(SystemCallError) {
            try SystemCall.value("link", path: path) { link(temporary, path) }
            return true
        } catch {
            if error.errno == EEXIST { return false }
            throw error
        }
    }
}

@available(*, unavailable) extension StagedFile: Sendable {}
