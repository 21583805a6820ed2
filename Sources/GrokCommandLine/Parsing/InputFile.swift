#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import GrokBasics

/// A file a command reads once, from start to end: a path, or standard input (`-`), as an
/// ``ValueType/inputFile`` argument names it (`audio decode -`, `firmware verify -`).
///
/// Read it whole with ``readAll(limit:localizer:)``: at its size (a regular file's, or what
/// a pipe delivers), never past the caller's limit, so a too-large input is a clear error
/// rather than a memory blow-up. Messages name standard input as such, in the reader's
/// language (``name(_:)``), never as `-`.
public enum InputFile: Sendable, Hashable {
    /// A file by its path, as given.
    case path(String)
    /// Standard input (`-` on the command line).
    case standardInput

    /// What stands for standard input on a command line.
    public static let dash = "-"

    /// The file `text` names (`-`: standard input).
    public init(_ text: String) {
        self = text == Self.dash ? .standardInput : .path(text)
    }

    /// As typed on the command line, and as `--json` reports it: the path, or `-`.
    public var argument: String {
        switch self {
        case .path(let path): path
        case .standardInput: Self.dash
        }
    }

    /// As a person reads it: the path, or "standard input" in `localizer`'s language.
    public func name(_ localizer: Localizer) -> String {
        switch self {
        case .path(let path): path
        case .standardInput: localizer.text(.inputStandardInput)
        }
    }

    /// Whether this is standard input.
    public var isStandardInput: Bool { self == .standardInput }

    /// Every byte of the file, at most `limit`.
    ///
    /// - Parameters:
    ///   - limit: The most bytes the caller takes; more is ``InputFileError/tooLarge(name:limit:)``.
    ///   - localizer: For the name errors give the file (standard input in the reader's language).
    /// - Throws: ``InputFileError`` naming the file and what is wrong.
    public func readAll(limit: Int, localizer: Localizer) throws(InputFileError) -> [UInt8] {
        let name = self.name(localizer)
        switch self {
        case .standardInput:
            return try Self.read(STDIN_FILENO, name: name, limit: limit)
        case .path(let path):
            let fd = try Self.check(name) { open(path, O_RDONLY | O_CLOEXEC) }
            defer { close(fd) }
            return try Self.read(fd, name: name, limit: limit)
        }
    }

    /// Reads `fd` to its end, at most `limit + 1` bytes: a regular file into a buffer of its
    /// `fstat` size (plus one byte, so a file that grew is noticed), a pipe in 64 KiB pieces
    /// appended as they come.
    static func read(_ fd: Int32, name: String, limit: Int) throws(InputFileError) -> [UInt8] {
        var info = stat()
        try check(name) { fstat(fd, &info) }
        let kind = info.st_mode & S_IFMT
        if kind == S_IFDIR { throw .unreadable(name: name, problem: .isDirectory) }
        var bytes: [UInt8] = []
        if kind == S_IFREG {
            // What is left of the file (standard input may be a file, partly read already).
            let left = Int(info.st_size) - Int(lseek(fd, 0, SEEK_CUR))
            guard bytes.count + left <= limit else { throw .tooLarge(name: name, limit: limit) }
            bytes.reserveCapacity(bytes.count + left + 1)
        }
        var piece = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            // Never more than one byte past the limit: that byte is what says "too large".
            let wanted = min(piece.count, limit + 1 - bytes.count)
            let n = try check(name) { piece.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, wanted) } }
            if n == 0 { break }
            piece.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[0..<n])) }
            guard bytes.count <= limit else { throw .tooLarge(name: name, limit: limit) }
        }
        return bytes
    }

    /// `body`'s value through GrokBasics' one funnel (`EINTR` retried there); any other
    /// failure is ``InputFileError/unreadable(name:problem:)`` with errno's meaning as a
    /// catalog code.
    @discardableResult
    static func check<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(InputFileError) -> T {
        do {
            return try SystemCall.value("read", path: name, body)
        } catch {
            throw .unreadable(name: name, problem: InputFileError.Problem(errno: error.errno))
        }
    }
}

/// A file named on the command line (or standard input) could not be read whole.
///
/// Reaches the user through the catalog as `error.input_unreadable` (the problem through
/// `input.problem.<code>`) and `error.input_too_large`.
public enum InputFileError: CodedError, Sendable, Equatable {
    /// Why a file could not be read, as a catalog code.
    public enum Problem: String, Sendable, Equatable {
        case noSuchFile = "no_such_file"
        case permissionDenied = "permission_denied"
        case isDirectory = "is_directory"
        case readError = "read_error"

        init(errno code: Int32) {
            switch code {
            case ENOENT, ENOTDIR: self = .noSuchFile
            case EACCES, EPERM: self = .permissionDenied
            case EISDIR: self = .isDirectory
            default: self = .readError
            }
        }
    }

    /// The file (its path, or standard input by its name) cannot be opened or read.
    case unreadable(name: String, problem: Problem)
    /// The file holds more than the `limit` bytes the command reads.
    case tooLarge(name: String, limit: Int)

    public var code: String {
        switch self {
        case .unreadable: "input_unreadable"
        case .tooLarge: "input_too_large"
        }
    }

    public var arguments: [String] {
        switch self {
        case .unreadable(let name, let problem): [name, problem.rawValue]
        case .tooLarge(let name, let limit): [name, String(limit)]
        }
    }

    public var description: String { Localizer.english.message(for: self) }
}
