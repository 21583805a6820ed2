import Foundation
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokFleet
import GrokLedger
import GrokkerEmulator
import GrokLink
import GrokNet
import GrokProtocol
import GrokTUF
import UGrokIt

/// An error with a stable machine code and the values its localized message fills in.
///
/// Every library error type conforms (see the extensions below), so the presentation
/// edge can turn any of them into words: the catalog key is `error.<code>`, and a code
/// without a key shows the English ``description``.
public protocol CodedError: Error, CustomStringConvertible {
    /// A stable identifier for `--json` output and for the catalog key `error.<code>`.
    var code: String { get }
    /// The values the localized message fills in (`{0}`, `{1}`, ...), in order.
    var arguments: [String] { get }
}

extension AudioError: CodedError {}
extension ProtocolError: CodedError {}
extension EmulatorError: CodedError {}
extension ReaderError: CodedError {}
extension FirmwareError: CodedError {}
extension NetError: CodedError {}
extension CryptoError: CodedError {}
extension FleetError: CodedError {}
extension LedgerError: CodedError {}
extension TUFError: CodedError {}

/// Turns ``MessageKey``s and errors into text in one ``Language``.
///
/// Catalogs are read once from the module bundle. A key missing from a catalog falls
/// back to English, then to the key itself, so a broken install still prints something.
public struct Localizer: Sendable {
    /// The language this localizer writes.
    public let language: Language

    /// A localizer for `language`.
    public init(language: Language) {
        self.language = language
    }

    /// English: for `--json` messages and for error descriptions.
    public static let english = Localizer(language: .en)

    /// The text for `key` with `{0}`, `{1}`, ... replaced by `arguments`.
    public func text(_ key: MessageKey, _ arguments: String...) -> String {
        text(key, arguments: arguments)
    }

    /// The text for `key` with `{0}`, `{1}`, ... replaced by `arguments`.
    public func text(_ key: MessageKey, arguments: [String]) -> String {
        let template = Catalogs.all[language]?[key.rawValue]
            ?? Catalogs.all[.en]?[key.rawValue]
            ?? key.rawValue
        return Catalogs.format(template, arguments)
    }

    /// What went wrong, in this language, without the `Error:` prefix.
    ///
    /// - Parameter error: Any error; ``CLIError`` and ``CodedError``s are localized, a code
    ///   without a catalog key shows its English description, anything else its
    ///   `String(describing:)`.
    public func message(for error: any Error) -> String {
        if let error = error as? CLIError {
            var message = text(error.messageKey, arguments: error.localizedArguments(self))
            if let suggestion = error.suggestion {
                message += " " + text(.errorDidYouMean, suggestion)
            }
            return message
        }
        if let error = error as? any CodedError {
            guard let key = MessageKey(errorCode: error.code) else { return error.description }
            return text(key, arguments: error.arguments.map(localizedNumber))
        }
        return String(describing: error)
    }

    /// A library error's argument as this language writes it: a plain decimal number
    /// (`12.5`, `-0.25`) gets the language's decimal separator; anything else (versions
    /// such as `1.8.0`, names, paths) is left as it is.
    func localizedNumber(_ argument: String) -> String {
        guard language != .en else { return argument }
        var digitsBefore = 0, dots = 0, digitsAfter = 0
        for (index, character) in argument.enumerated() {
            switch character {
            case "-" where index == 0: continue
            case "0"..."9": if dots == 0 { digitsBefore += 1 } else { digitsAfter += 1 }
            case ".": dots += 1
            default: return argument
            }
        }
        guard dots == 1, digitsBefore > 0, digitsAfter > 0 else { return argument }
        return argument.replacingOccurrences(of: ".", with: ",")
    }

    /// The stable code of `error`: its own for ``CodedError``s, `internal_error` otherwise.
    public static func code(for error: any Error) -> String {
        if let error = error as? CLIError { return error.code }
        if let error = error as? any CodedError { return error.code }
        return "internal_error"
    }
}

/// The four catalogs, read from `Bundle.module` once.
enum Catalogs {
    /// Every catalog that could be read; a missing or corrupt one is left out (and the
    /// catalog tests fail).
    static let all: [Language: [String: String]] = {
        var catalogs: [Language: [String: String]] = [:]
        for language in Language.allCases {
            catalogs[language] = try? load(language)
        }
        return catalogs
    }()

    /// Reads `Localization/<language>.json`, a flat object of key → text.
    static func load(_ language: Language) throws -> [String: String] {
        guard let url = Bundle.module.url(
            forResource: language.rawValue, withExtension: "json", subdirectory: "Localization")
        else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try JSONDecoder().decode([String: String].self, from: Data(contentsOf: url))
    }

    /// `template` with each `{n}` replaced by `arguments[n]`; an index with no argument is
    /// left as written, so a mistake shows rather than vanishes.
    static func format(_ template: String, _ arguments: [String]) -> String {
        guard template.contains("{") else { return template }
        var result = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let afterOpen = rest.index(after: open)
            let digits = rest[afterOpen...].prefix { $0.isASCII && $0.isNumber }
            let close = digits.endIndex
            if !digits.isEmpty, close < rest.endIndex, rest[close] == "}",
                let index = Int(digits), index < arguments.count
            {
                result += arguments[index]
                rest = rest[rest.index(after: close)...]
            } else {
                result += "{"
                rest = rest[afterOpen...]
            }
        }
        return result + rest
    }

    /// The placeholder numbers used in `template` (`{0}` → 0).
    static func placeholders(in template: String) -> Set<Int> {
        var found = Set<Int>()
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            let afterOpen = rest.index(after: open)
            let digits = rest[afterOpen...].prefix { $0.isASCII && $0.isNumber }
            if !digits.isEmpty, digits.endIndex < rest.endIndex, rest[digits.endIndex] == "}",
                let index = Int(digits)
            {
                found.insert(index)
            }
            rest = rest[afterOpen...]
        }
        return found
    }
}
