/// An error with a stable machine code and the values its message fills in.
///
/// Every library's error type conforms, so the presentation edge can turn any of them into
/// words in the user's language: the catalog key is `error.<code>`. The English text is the
/// catalog's too (``englishMessage``): no error keeps a second copy of it in Swift.
///
/// A nested error or a detail a person reads is not kept as an English sentence: it is a
/// code plus arguments (a catalog placeholder such as `{2@error}` renders the nested error
/// in the same language; see ``MessageCatalog``).
public protocol CodedError: Error, CustomStringConvertible {
    /// A stable identifier for `--json` output and for the catalog key `error.<code>`.
    var code: String { get }
    /// The values the message fills in (`{0}`, `{1}`, ...), in order, as English writes
    /// them (numbers with a decimal point); the language's form is chosen when shown.
    var arguments: [String] { get }
}

extension CodedError {
    /// The English message of this error, from the built-in English catalog.
    public var englishMessage: String { MessageCatalog.english.message(code: code, arguments: arguments) }
}

/// An error kept inside another as data (its code and arguments), not as an English
/// sentence, so the outer message can show it in the reader's language (`{n@error}`).
public struct ErrorCause: Sendable, Hashable, CustomStringConvertible {
    /// The nested error's stable code.
    public let code: String
    /// The nested error's arguments, in English form.
    public let arguments: [String]

    /// The cause `error`: its code and arguments.
    public init(_ error: any CodedError) {
        self.init(code: error.code, arguments: error.arguments)
    }

    /// A cause by its code (a catalog key `error.<code>`) and arguments.
    public init(code: String, arguments: [String] = []) {
        self.code = code
        self.arguments = arguments
    }

    /// The English message, from the catalog.
    public var description: String { MessageCatalog.english.message(code: code, arguments: arguments) }
}

/// What is wrong, said as data: a stable code and its values in English form, never an
/// English sentence. The message that carries it names the catalog prefix its words are
/// under (`{2@tuf.detail}` shows `tuf.detail.<code>` filled with the values, in the
/// reader's language; see ``MessageCatalog``). A library error's `arguments` end with
/// `[detail.code] + detail.arguments`, so the nested placeholder is the message's last.
public struct ErrorDetail: Sendable, Hashable, CustomStringConvertible {
    /// The stable code (`odd_hex_digits`, `missing_field`).
    public let code: String
    /// The code's values, in English form.
    public let arguments: [String]

    public init(_ code: String, _ arguments: [String] = []) {
        self.code = code
        self.arguments = arguments
    }

    /// The code and its values as one argument list (what `{n@prefix}` reads).
    public var flattened: [String] { [code] + arguments }

    /// The code and its values, for logs and test failures (not for a person).
    public var description: String { arguments.isEmpty ? code : "\(code)(\(arguments.joined(separator: ", ")))" }
}

extension ErrorDetail {
    /// A detail that nests the coded error `error` (shown through `<prefix>.<code>` as
    /// `{n@error}` after the code's own `values`), so it reads in the same language as the
    /// message around it.
    public static func nesting(_ code: String, _ values: [String] = [], _ error: any CodedError) -> ErrorDetail {
        ErrorDetail(code, values + [error.code] + error.arguments)
    }

    /// The name of a system error number (`ENOENT`) under the code `system`: the same in
    /// every language, unlike `strerror`'s English text (each module's prefix has its
    /// `<prefix>.system` entry).
    public static func system(_ number: Int32) -> ErrorDetail { ErrorDetail("system", [systemErrorName(number)]) }
}
