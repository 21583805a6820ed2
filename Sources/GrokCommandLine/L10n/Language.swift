/// A language grokctl speaks. The raw value is the ISO 639-1 code, which is also the
/// name of the catalog file (`Localization/<code>.json`) and the value of `--lang`.
public enum Language: String, CaseIterable, Sendable, Hashable {
    case en, es, fr, de

    /// The language of a POSIX locale or `LANGUAGE` entry such as `de_DE.UTF-8`,
    /// `fr_CA`, `es` or `en_GB@euro`; `nil` when that language has no catalog.
    public init?(localeName: String) {
        let language = localeName.prefix { $0 != "_" && $0 != "." && $0 != "@" && $0 != "-" }
        self.init(rawValue: language.lowercased())
    }

    /// Picks the language of messages the way gettext does, after `--lang`.
    ///
    /// - Parameters:
    ///   - option: The value of `--lang`, when given (already validated).
    ///   - environment: The process environment.
    /// - Returns: `option` when given; else the first supported entry of `LANGUAGE` (a
    ///   colon-separated list), unless the locale is `C`/`POSIX`, where gettext ignores
    ///   `LANGUAGE`; else the language of the locale, which is the first non-empty of
    ///   `LC_ALL`, `LC_MESSAGES` and `LANG`. Anything unset, `C`, `POSIX` or without a
    ///   catalog gives English. Like gettext, a `LANGUAGE` list none of whose entries is
    ///   supported gives English rather than the locale's language.
    public static func resolve(option: Language?, environment: [String: String]) -> Language {
        option ?? chosen(environment: environment) ?? .en
    }

    /// The language the environment chooses, as ``resolve(option:environment:)`` reads it;
    /// `nil` when it chooses none grokctl speaks (unset, `C`, `POSIX`, a language without a
    /// catalog, a `LANGUAGE` list without a supported entry). A fleet profile's `locale`
    /// applies only then (and without `--lang`).
    public static func chosen(environment: [String: String]) -> Language? {
        let locale = messagesLocale(environment)
        if isCLocale(locale) { return nil }
        if let list = nonEmpty(environment["LANGUAGE"]) {
            for entry in list.split(separator: ":") {
                if let language = Language(localeName: String(entry)) { return language }
            }
            return nil
        }
        return Language(localeName: locale)
    }

    /// The locale of the LC_MESSAGES category: `LC_ALL`, else `LC_MESSAGES`, else `LANG`,
    /// else `C` (POSIX: a variable set to the empty string counts as unset).
    static func messagesLocale(_ environment: [String: String]) -> String {
        nonEmpty(environment["LC_ALL"]) ?? nonEmpty(environment["LC_MESSAGES"])
            ?? nonEmpty(environment["LANG"]) ?? "C"
    }

    /// `C`, `POSIX` and their encodings (`C.UTF-8`): the locale whose messages POSIX fixes.
    static func isCLocale(_ locale: String) -> Bool {
        locale == "C" || locale == "POSIX" || locale.hasPrefix("C.") || locale.hasPrefix("POSIX.")
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
