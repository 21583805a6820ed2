import Foundation

/// The CLDR plural categories English, Spanish, French and German use for the counts we show.
///
/// (CLDR also gives es and fr a `many` form for exact millions, "1 000 000 de Grokkers";
/// no count grokctl shows comes near, so `other` serves.)
public enum PluralCategory: String, Sendable, Hashable, CaseIterable {
    case one, other

    /// The category of the number written in `number` (English form: `3`, `1.5`) in the
    /// language `languageCode`, by the CLDR rules:
    /// - en, es, de: `one` for exactly 1 (not 1.0 or 1.5: those have visible decimals);
    /// - fr: `one` when the integer part is 0 or 1 (0, 1, 1.5), so "0 Grokker", "1,5 seconde".
    /// A text that is not a number is `other`.
    public init(_ number: String, languageCode: String) {
        let trimmed = number.hasPrefix("-") ? String(number.dropFirst()) : number
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let integer = Int(parts[0]),
            parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy(\.isNumber))
        else {
            self = .other
            return
        }
        let hasDecimals = parts.count == 2
        switch languageCode {
        case "fr": self = integer <= 1 ? .one : .other
        default: self = integer == 1 && !hasDecimals ? .one : .other
        }
    }

    /// The category of `count` in the language `languageCode`.
    public init(_ count: Int, languageCode: String) {
        self.init(String(count), languageCode: languageCode)
    }
}

/// Numbers as a language writes them: a decimal comma in es, fr and de.
public enum NumberText {
    /// The decimal separator of the language `languageCode`.
    public static func decimalSeparator(_ languageCode: String) -> String {
        languageCode == "en" ? "." : ","
    }

    /// `value` with exactly `digits` decimals in the language's form (`12.5`, `12,5`); no
    /// grouping (the figures shown are small, and a grouping dot would read as a decimal one).
    public static func decimal(_ value: Double, digits: Int, languageCode: String) -> String {
        let text = String(format: "%.\(max(0, digits))f", value)
        return languageCode == "en" ? text : text.replacingOccurrences(of: ".", with: decimalSeparator(languageCode))
    }

    /// `value` without a needless fraction and at most three decimals, in English form
    /// (`25`, `12.5`, `3.013`): the form error arguments carry.
    public static func plain(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String((value * 1000).rounded() / 1000)
    }

    /// An argument as the language writes it: a plain decimal number (`12.5`, `-0.25`) gets
    /// the language's decimal separator; anything else (versions such as `1.8.0`, names,
    /// paths) is left as it is.
    public static func localized(_ argument: String, languageCode: String) -> String {
        guard languageCode != "en" else { return argument }
        // Leading spaces pad a number to its column (`%5.1f`); they stay.
        let number = argument.drop { $0 == " " }
        var digitsBefore = 0, dots = 0, digitsAfter = 0
        for (index, character) in number.enumerated() {
            switch character {
            case "-" where index == 0: continue
            case "0"..."9": if dots == 0 { digitsBefore += 1 } else { digitsAfter += 1 }
            case ".": dots += 1
            default: return argument
            }
        }
        guard dots == 1, digitsBefore > 0, digitsAfter > 0 else { return argument }
        return argument.replacingOccurrences(of: ".", with: decimalSeparator(languageCode))
    }
}
