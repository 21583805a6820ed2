import Foundation
import GrokBasics

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
    ///
    /// The form of a plural entry is picked by its count argument (CLDR rules), and plain
    /// decimal numbers among `arguments` get the language's decimal separator.
    public func text(_ key: MessageKey, arguments: [String]) -> String {
        catalog.text(key.rawValue, arguments)
    }

    /// This language's catalog (English where it lacks a key).
    public var catalog: MessageCatalog { Catalogs.catalog(language) }

    /// `value` with exactly `digits` decimals as this language writes it (`12.5`, `12,5`).
    public func decimal(_ value: Double, digits: Int) -> String {
        NumberText.decimal(value, digits: digits, languageCode: language.rawValue)
    }

    /// The message of `error` without the subject it starts with (`sim:2: `, `sim:2 : `),
    /// for a line or a table row that names the subject already.
    public func message(for error: any Error, about subject: String) -> String {
        Self.dropping(subject: subject, from: message(for: error))
    }

    /// `message` without `subject` and the colon after it at its start (any spaces around
    /// the colon, as French writes it); `message` itself when it does not start so.
    public static func dropping(subject: String, from message: String) -> String {
        guard !subject.isEmpty, message.hasPrefix(subject) else { return message }
        let rest = message.dropFirst(subject.count).drop { $0 == " " || $0 == "\u{00A0}" || $0 == "\u{202F}" }
        guard rest.hasPrefix(":") else { return message }
        return String(rest.dropFirst().drop { $0 == " " || $0 == "\u{00A0}" || $0 == "\u{202F}" })
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
            guard catalog.has("error." + error.code) else { return error.description }
            return catalog.message(code: error.code, arguments: error.arguments)
        }
        return String(describing: error)
    }

    /// A library error's argument as this language writes it: a plain decimal number
    /// (`12.5`, `-0.25`) gets the language's decimal separator; anything else (versions
    /// such as `1.8.0`, names, paths) is left as it is.
    public func localizedNumber(_ argument: String) -> String {
        NumberText.localized(argument, languageCode: language.rawValue)
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
    /// catalog tests fail). English is the one built into GrokBasics (the same en.json).
    static let all: [Language: MessageCatalog] = {
        var catalogs: [Language: MessageCatalog] = [.en: .english]
        for language in Language.allCases where language != .en {
            if let data = try? data(language) {
                catalogs[language] = try? MessageCatalog(languageCode: language.rawValue, json: data, fallback: .english)
            }
        }
        return catalogs
    }()

    /// The catalog of `language`; English when that one could not be read.
    static func catalog(_ language: Language) -> MessageCatalog { all[language] ?? .english }

    /// The bytes of `Localization/<language>.json`.
    static func data(_ language: Language) throws -> Data {
        guard let url = Bundle.module.url(
            forResource: language.rawValue, withExtension: "json", subdirectory: "Localization")
        else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try Data(contentsOf: url)
    }

    /// Reads `Localization/<language>.json` from the bundle: key → entry.
    static func load(_ language: Language) throws -> [String: MessageCatalog.Entry] {
        try MessageCatalog(languageCode: language.rawValue, json: data(language)).entries
    }

    /// `template` with each `{n}` replaced by `arguments[n]` (English rules); an index with
    /// no argument is left as written, so a mistake shows rather than vanishes.
    static func format(_ template: String, _ arguments: [String]) -> String {
        MessageCatalog.english.fill(template, arguments)
    }

    /// The placeholder numbers used in `template` (`{0}` → 0).
    static func placeholders(in template: String) -> Set<Int> {
        MessageCatalog.placeholders(in: template)
    }

    /// The placeholder numbers used in any form of `entry`.
    static func placeholders(in entry: MessageCatalog.Entry) -> Set<Int> {
        entry.texts.reduce(into: Set<Int>()) { $0.formUnion(MessageCatalog.placeholders(in: $1)) }
    }
}
