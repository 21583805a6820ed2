import Glibc
import GrokBasics

/// Percent-encodes `name` as Python's `urllib.parse.quote(name, safe="")` does: letters,
/// digits and `_.-~` stay, every other byte of the UTF-8 becomes `%XX`. Used for role names
/// and target names in URLs and local file names, so `../x` cannot leave a directory.
public func percentEncode(_ name: String) -> String {
    var out = ""
    for byte in name.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let digits = Array("0123456789ABCDEF".unicodeScalars)
            out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
        }
    }
    return out
}

/// Files in one directory, read with a size bound and written atomically (GrokBasics'
/// ``AtomicFile``: a temporary file in the same directory, fsync, rename, fsync of the
/// directory). Symbolic links are never followed: a link where a file should be is an error.
public struct FileStore: Sendable {
    public let directory: String
    /// The mode new files get: 0600 for what a station or publisher keeps to itself (its
    /// trusted metadata, staged roles), 0644 for what a web server must serve (``published(directory:)``).
    public let fileMode: mode_t

    public init(directory: String, fileMode: mode_t = 0o600) {
        self.directory = directory
        self.fileMode = fileMode
    }

    /// A store of files published for any reader (a web server running as its own user):
    /// files 0644, directories 0755.
    public static func published(directory: String) -> FileStore { FileStore(directory: directory, fileMode: 0o644) }

    /// The path of `name` (already safe: see ``percentEncode(_:)``).
    public func path(_ name: String) -> String { directory + "/" + name }

    /// The bytes of `name`, or `nil` when there is no such file; at most `limit` bytes.
    public func read(_ name: String, limit: Int) throws(TUFError) -> [UInt8]? {
        let p = path(name)
        let fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .storage(path: p, detail: errno == ELOOP ? ErrorDetail("symbolic_link") : .system(errno))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw .storage(path: p, detail: ErrorDetail("not_regular_file"))
        }
        guard st.st_size <= limit else { throw .storage(path: p, detail: ErrorDetail("larger_than", [String(limit)])) }
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        let read = out.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemCallError) in try SystemCall.readAll(fd, buffer, path: p) }
        }
        let done: Int
        switch read {
        case .success(let count): done = count
        case .failure(let error): throw .storage(path: p, detail: .system(error.errno))
        }
        guard done == out.count else { throw .storage(path: p, detail: ErrorDetail("short_read")) }
        return out
    }

    /// Replaces `name` with `bytes` atomically (GrokBasics' ``AtomicFile``), with
    /// ``fileMode`` (the umask still applies).
    public func write(_ name: String, _ bytes: [UInt8]) throws(TUFError) {
        try makeDirectory()
        do throws(SystemCallError) {
            try AtomicFile.write(bytes, to: path(name), options: AtomicFile.Options(mode: fileMode))
        } catch {
            throw .storage(path: path(name), detail: .system(error.errno))
        }
    }

    /// Removes `name` if it exists.
    public func remove(_ name: String) throws(TUFError) {
        if unlink(path(name)) != 0, errno != ENOENT {
            throw .storage(path: path(name), detail: .system(errno))
        }
    }

    func makeDirectory() throws(TUFError) {
        var st = stat()
        if lstat(directory, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw .storage(path: directory, detail: ErrorDetail("not_directory")) }
            return
        }
        // Create the missing parents too.
        var prefix = directory.hasPrefix("/") ? "" : "."
        for part in directory.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o755) != 0, errno != EEXIST { throw .storage(path: prefix, detail: .system(errno)) }
        }
    }
}

/// Where the client gets metadata and target bytes.
public enum FetchOutcome: Sendable, Equatable {
    case bytes([UInt8])
    /// 404 (or 403): the file does not exist.
    case notFound
}

/// Fetches a URL with an upper bound on its size. Injected into ``Updater`` so tests can
/// serve a directory and the product can use libcurl.
public protocol TUFFetching: Sendable {
    /// The bytes at `url`, or ``FetchOutcome/notFound``; throws ``TUFError/tooLarge(url:limit:)``
    /// for more than `maxLength` bytes, ``TUFError/fetch(url:cause:detail:)`` otherwise.
    func fetch(_ url: String, maxLength: Int) async throws(TUFError) -> FetchOutcome
}

/// Serves `file://` URLs from the local file system (a repository on a USB stick, or one a
/// test made). A missing file is ``FetchOutcome/notFound``; symbolic links are not followed.
public struct LocalFileFetcher: TUFFetching {
    public init() {}

    public func fetch(_ url: String, maxLength: Int) async throws(TUFError) -> FetchOutcome {
        guard url.hasPrefix("file://") else { throw .fetch(url: url, detail: ErrorDetail("not_file_url")) }
        let path = String(url.dropFirst("file://".count))
        guard let slash = path.lastIndex(of: "/") else { throw .fetch(url: url, detail: ErrorDetail("not_absolute_path")) }
        let store = FileStore(directory: String(path[..<slash]))
        let name = String(path[path.index(after: slash)...]).removingPercentEncoding
        guard !name.contains("/"), name != "..", name != "." else { return .notFound }
        do {
            guard let bytes = try store.read(name, limit: maxLength) else {
                return .notFound
            }
            return .bytes(bytes)
        } catch {
            if case .storage(_, let detail) = error, detail.code == "larger_than" { throw .tooLarge(url: url, limit: maxLength) }
            throw .fetch(url: url, detail: .nesting("local_file", [], error))
        }
    }
}

extension String {
    /// `%XX` sequences decoded (invalid ones kept as they are).
    var removingPercentEncoding: String {
        let b = Array(utf8)
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            if b[i] == UInt8(ascii: "%"), i + 2 < b.count,
               let h = hexValue(b[i + 1]), let l = hexValue(b[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(b[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 0x30...0x39: c - 0x30
    case 0x61...0x66: c - 0x61 + 10
    case 0x41...0x46: c - 0x41 + 10
    default: nil
    }
}
