import Foundation

/// One language's messages: key → text, or key → plural forms, and the rules that fill them.
///
/// ## The catalog format (`Localization/<language>.json`)
/// A flat JSON object. A value is either a text, or a plural object whose `"count"` is the
/// number of the placeholder that picks the form (0 when left out) and whose other members
/// are the forms by CLDR plural category (``PluralCategory``), `"other"` always among them:
///
///     "fleet.answered": {"count": 1, "one": "{0} of {1} Grokker answered.", "other": "{0} of {1} Grokkers answered."}
///
/// ## Placeholders
/// - `{n}`: argument `n`. A plain decimal number (`12.5`) is written with the language's
///   decimal separator (`12,5` in es, fr, de); anything else (versions such as `1.8.0`,
///   names, paths) as it is.
/// - `{n:key}`: the entry `key` filled with arguments `n`, `n+1`, ... (argument `n` is its
///   `{0}`, and picks its plural form by default); nothing at all when argument `n` is
///   empty. For a part of a sentence that is optional or has its own count.
/// - `{n/prefix}`: argument `n` is a comma-separated list of codes; each is shown as the
///   entry `prefix.<code>` (the code itself when there is none), joined by ", ".
/// - `{n@prefix}`: argument `n` is a code and the arguments after it are its own: the entry
///   `prefix.<code>` filled with them, so a nested error reads in the same language.
///   Without such an entry the code and its arguments are shown as they are.
public struct MessageCatalog: Sendable {
    /// One catalog value.
    public enum Entry: Sendable, Hashable {
        /// A text with placeholders.
        case text(String)
        /// Forms by plural category, chosen by the number in placeholder `count`.
        case plural(count: Int, forms: [PluralCategory: String])

        /// Every text of the entry (one, or one per form).
        public var texts: [String] {
            switch self {
            case .text(let text): [text]
            case .plural(_, let forms): forms.keys.sorted { $0.rawValue < $1.rawValue }.compactMap { forms[$0] }
            }
        }
    }

    /// The catalog file could not be used.
    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The ISO 639-1 code of the language (`en`, `es`, `fr`, `de`).
    public let languageCode: String
    /// The entries by key.
    public let entries: [String: Entry]
    /// English entries, used for a key this catalog lacks.
    let fallback: [String: Entry]

    /// A catalog from its JSON text.
    /// - Parameters:
    ///   - languageCode: The language the texts are in; it picks the plural rules and the
    ///     decimal separator.
    ///   - json: The catalog file's contents.
    ///   - fallback: Entries for keys this catalog lacks (English).
    public init(languageCode: String, json: Data, fallback: MessageCatalog? = nil) throws(FormatError) {
        self.languageCode = languageCode
        self.fallback = fallback?.entries ?? [:]
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: json) } catch {
            throw FormatError(description: "the \(languageCode) catalog is not JSON")
        }
        guard let values = object as? [String: Any] else {
            throw FormatError(description: "the \(languageCode) catalog is not a JSON object")
        }
        var entries: [String: Entry] = [:]
        for (key, value) in values {
            if let text = value as? String {
                entries[key] = .text(text)
                continue
            }
            guard let object = value as? [String: Any] else {
                throw FormatError(description: "\(languageCode): \(key) is neither a text nor a plural object")
            }
            var forms: [PluralCategory: String] = [:]
            var count = 0
            for (name, form) in object {
                if name == "count", let number = form as? Int {
                    count = number
                } else if let category = PluralCategory(rawValue: name), let text = form as? String {
                    forms[category] = text
                } else {
                    throw FormatError(description: "\(languageCode): \(key).\(name) is not a plural form (one, other) or count")
                }
            }
            guard forms[.other] != nil else { throw FormatError(description: "\(languageCode): \(key) has no \"other\" form") }
            entries[key] = .plural(count: count, forms: forms)
        }
        self.entries = entries
    }

    /// The English catalog, built in from `Sources/GrokCommandLine/Localization/en.json`.
    public static let english: MessageCatalog = {
        do { return try MessageCatalog(languageCode: "en", json: Data(englishJSON.utf8)) } catch {
            preconditionFailure("the built-in English catalog is broken: \(error)")
        }
    }()

    /// Whether this catalog (or its fallback) has `key`.
    public func has(_ key: String) -> Bool { entries[key] != nil || fallback[key] != nil }

    /// The text for `key` filled with `arguments`; the key itself when no catalog has it.
    public func text(_ key: String, _ arguments: [String]) -> String {
        guard let entry = entries[key] ?? fallback[key] else { return key }
        return fill(template(entry, arguments), arguments)
    }

    /// The message of the error `code` (`error.<code>`) filled with `arguments`; without an
    /// entry, the code and its arguments as they are.
    public func message(code: String, arguments: [String]) -> String {
        let key = "error." + code
        guard has(key) else { return arguments.isEmpty ? code : "\(code) (\(arguments.joined(separator: ", ")))" }
        return text(key, arguments)
    }

    /// The form of `entry` that the count argument picks.
    func template(_ entry: Entry, _ arguments: [String]) -> String {
        switch entry {
        case .text(let text): return text
        case .plural(let count, let forms):
            let category = count < arguments.count ? PluralCategory(arguments[count], languageCode: languageCode) : .other
            return forms[category] ?? forms[.other] ?? ""
        }
    }

    /// `template` with each placeholder replaced; one with no argument is left as written,
    /// so a mistake shows rather than vanishes.
    public func fill(_ template: String, _ arguments: [String]) -> String {
        guard template.contains("{") else { return template }
        var result = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let afterOpen = rest.index(after: open)
            if let placeholder = Placeholder(rest[afterOpen...]), placeholder.index < arguments.count {
                result += render(placeholder, arguments)
                rest = rest[placeholder.end...]
            } else {
                result += "{"
                rest = rest[afterOpen...]
            }
        }
        return result + rest
    }

    func render(_ placeholder: Placeholder, _ arguments: [String]) -> String {
        let argument = arguments[placeholder.index]
        switch placeholder.kind {
        case .value: return NumberText.localized(argument, languageCode: languageCode)
        case .optional(let key):
            return argument.isEmpty ? "" : text(key, Array(arguments[placeholder.index...]))
        case .list(let prefix):
            return argument.split(separator: ",").map { code in
                let key = prefix + "." + code.trimmingCharacters(in: .whitespaces)
                return has(key) ? text(key, []) : String(code)
            }.joined(separator: ", ")
        case .nested(let prefix):
            let own = Array(arguments[(placeholder.index + 1)...])
            let key = prefix + "." + argument
            if has(key) { return text(key, own) }
            return own.isEmpty ? argument : "\(argument): \(own.map { NumberText.localized($0, languageCode: languageCode) }.joined(separator: ", "))"
        }
    }

    /// The placeholder numbers used in `template` (`{0}`, `{1:key}` → 0, 1); a nested
    /// placeholder `{n@prefix}` stands for every argument from `n` on.
    public static func placeholders(in template: String) -> Set<Int> {
        var found = Set<Int>()
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            let afterOpen = rest.index(after: open)
            if let placeholder = Placeholder(rest[afterOpen...]) { found.insert(placeholder.index) }
            rest = rest[afterOpen...]
        }
        return found
    }

    /// The keys `template` refers to through `{n:key}` (the others name prefixes).
    public static func referencedKeys(in template: String) -> [String] {
        var found: [String] = []
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            let afterOpen = rest.index(after: open)
            if let placeholder = Placeholder(rest[afterOpen...]), case .optional(let key) = placeholder.kind { found.append(key) }
            rest = rest[afterOpen...]
        }
        return found
    }
}

/// A placeholder after its `{`: `0}`, `1:key}`, `2/prefix}`, `3@prefix}`.
struct Placeholder {
    enum Kind: Equatable { case value, optional(String), list(String), nested(String) }
    let index: Int
    let kind: Kind
    /// Just after the closing `}`.
    let end: Substring.Index

    init?(_ text: Substring) {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let index = Int(digits), digits.endIndex < text.endIndex else { return nil }
        self.index = index
        let marker = text[digits.endIndex]
        if marker == "}" {
            kind = .value
            end = text.index(after: digits.endIndex)
            return
        }
        guard ":/@".contains(marker) else { return nil }
        let nameStart = text.index(after: digits.endIndex)
        let name = text[nameStart...].prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_") }
        guard !name.isEmpty, name.endIndex < text.endIndex, text[name.endIndex] == "}" else { return nil }
        switch marker {
        case ":": kind = .optional(String(name))
        case "/": kind = .list(String(name))
        default: kind = .nested(String(name))
        }
        end = text.index(after: name.endIndex)
    }
}
