import Foundation

/// What an option's value must be, declared once on the option (as swift-argument-parser's
/// `@Option var duration: Double = 5` declares type and default together).
///
/// The parser checks every value against its type, so a bad value is a usage error that
/// says why and what is allowed; commands read the checked, converted value back with
/// ``ParsedValues/integer(_:)``, ``ParsedValues/decimal(_:)`` or ``ParsedValues/hex(_:)``,
/// which fall back to the declared default (never a second copy of it in the command).
/// Completions and man pages are generated from the same type (files complete as files,
/// choices as words).
public enum ValueType: Sendable, Hashable {
    /// Any non-empty text.
    case text
    /// A file that is read once from start to end; `-` reads standard input
    /// (`audio decode -`, `firmware verify -`). Read it with ``InputFile``.
    case inputFile
    /// A file that is written; `-` writes standard output.
    case outputFile
    /// A file path that must name a file (read more than once, in place, or written beside
    /// itself): `-` is refused, as it would be neither standard input nor output here
    /// (a file called `-` is `./-`).
    case file
    /// A directory path; `-` is refused (a directory called `-` is `./-`).
    case directory
    /// A whole number in `range` that is a multiple of `step` (`--offset` counts whole words).
    case integer(ClosedRange<Int>, step: Int = 1)
    /// A whole percentage, 0 to 100 (`--min-battery 20`).
    case percent
    /// A number greater than `above` and at most `upTo` (`--duration 0.5`).
    case decimal(above: Double, upTo: Double)
    /// A hexadecimal number of at most `bits` bits, `0x` optional (`--password 0x1234ABCD`).
    case hex(bits: Int)
    /// One word of a fixed set.
    case choice([String])
    /// A language grokctl speaks, by its code or a locale name (`de`, `DE`, `de_DE.UTF-8`).
    case language
    /// A device spec (`sim:0-3`, `alsa:hw:1,0`); checked by ``DeviceSpec``.
    case device
    /// A value the application checks (an EPC, which the SDK parses); a bad one's error says
    /// the check's rule.
    case checked(ValueCheck)
    /// Bytes in hex, two digits each (`--data 0A0B`).
    case hexBytes
    /// A fleet profile: a file, or the name of a shipped or installed one (`bench-us`).
    case profile
    /// A region by its name, code or number (`fcc`); checked by the application.
    case region

    /// Checks `text` and converts it.
    ///
    /// - Parameters:
    ///   - text: The value as typed.
    ///   - option: The option's spelling, for the error.
    /// - Throws: ``CLIError/badValue(value:option:rule:)`` (or
    ///   ``CLIError/invalidChoice(value:option:choices:)``) saying what is allowed.
    public func parse(_ text: String, option: String) throws(CLIError) -> TypedValue {
        try parse(text, for: .option(option))
    }

    /// Checks a positional argument's value and converts it.
    ///
    /// - Parameters:
    ///   - text: The value as typed.
    ///   - argument: The argument's value name (`<file>`), for the error.
    /// - Throws: ``CLIError/badArgument(value:name:rule:)`` saying what is allowed.
    public func parse(_ text: String, argument: MessageKey) throws(CLIError) -> TypedValue {
        try parse(text, for: .argument(argument))
    }

    /// What a value is given for, as its error names it.
    enum Subject {
        /// An option, by its spelling (`--epc`).
        case option(String)
        /// A positional argument, by its value name (`<file>`, in the reader's language).
        case argument(MessageKey)
    }

    func parse(_ text: String, for subject: Subject) throws(CLIError) -> TypedValue {
        func bad(_ rule: ValueRule) -> CLIError {
            switch subject {
            case .option(let option): .badValue(value: text, option: option, rule: rule)
            case .argument(let name): .badArgument(value: text, name: name, rule: rule)
            }
        }
        switch self {
        case .text, .device, .profile, .region:
            guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw bad(.nonEmpty) }
            return .text(text)
        case .inputFile, .outputFile:
            guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw bad(.nonEmpty) }
            return .text(text)
        case .file, .directory:
            guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw bad(.nonEmpty) }
            guard text != InputFile.dash else { throw bad(.named) }
            return .text(text)
        case .integer(let range, let step):
            let rule: ValueRule = step == 1 ? .integer(range) : .integerStep(range, step: step)
            guard let number = Int(text), range.contains(number), number % step == 0 else { throw bad(rule) }
            return .integer(number)
        case .percent:
            guard let number = Int(text), (0...100).contains(number) else {
                switch subject {
                case .option(let option): throw .invalidPercent(value: text, option: option)
                case .argument: throw bad(.integer(0...100))
                }
            }
            return .integer(number)
        case .decimal(let above, let upTo):
            guard let number = Double(text), number.isFinite, number > above, number <= upTo else {
                throw bad(.decimal(above: above, upTo: upTo))
            }
            return .decimal(number)
        case .hex(let bits):
            let digits = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
            guard !digits.isEmpty, digits.count <= (bits + 3) / 4, let number = UInt64(digits, radix: 16),
                bits >= 64 || number < (UInt64(1) << UInt64(bits))
            else { throw bad(.hex(digits: (bits + 3) / 4)) }
            return .hex(number)
        case .choice(let choices):
            guard choices.contains(text) else {
                switch subject {
                case .option(let option): throw .invalidChoice(value: text, option: option, choices: choices)
                case .argument: throw bad(.choice(choices))
                }
            }
            return .text(text)
        case .language:
            guard let language = Language(localeName: text) else {
                throw bad(.language(Language.allCases.map(\.rawValue)))
            }
            return .text(language.rawValue)
        case .checked(let check):
            guard check.accepts(text) else { throw bad(check.rule) }
            return .text(text)
        case .hexBytes:
            let digits = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
            guard !digits.isEmpty, digits.count % 2 == 0, digits.allSatisfy(\.isHexDigit) else { throw bad(.hexBytes) }
            return .text(text)
        }
    }

    /// What `-` means for this value, said in help and man pages (`nil`: nothing special).
    var dashNote: MessageKey? {
        switch self {
        case .inputFile: .helpDashStandardInput
        case .outputFile: .helpDashStandardOutput
        default: nil
        }
    }

    /// Whether the value names a file or directory (completions offer paths).
    var completesAsPath: Bool {
        switch self {
        case .inputFile, .outputFile, .file, .profile: true
        default: false
        }
    }

    /// The words a completion can offer for this value, if the set is fixed.
    var completionWords: [String] {
        switch self {
        case .choice(let choices): choices
        case .language: Language.allCases.map(\.rawValue)
        default: []
        }
    }

    /// The values the application lists when a shell completes this value (which depend on
    /// the station: its bench, sound cards and profiles), if any.
    var completionSource: CompletionSource? {
        switch self {
        case .device: .device
        case .profile: .profile
        case .region: .region
        default: nil
        }
    }
}

/// A check an application supplies for values the toolkit does not know, with the rule a
/// refused value's error says. Checks are equal when their names are.
public struct ValueCheck: Sendable, Hashable {
    /// Names the check (`epc`); two checks with one name are the same check.
    public let name: String
    /// What a value must be, as its error says it.
    public let rule: ValueRule
    /// Whether `text` is a good value.
    let accepts: @Sendable (String) -> Bool

    /// A check called `name` that accepts what `accepts` accepts and otherwise says `rule`.
    public init(name: String, rule: ValueRule, accepts: @escaping @Sendable (String) -> Bool) {
        self.name = name
        self.rule = rule
        self.accepts = accepts
    }

    public static func == (left: ValueCheck, right: ValueCheck) -> Bool { left.name == right.name }

    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// A checked option value, converted.
public enum TypedValue: Sendable, Equatable {
    /// Text (a path, a name, a choice, a language code).
    case text(String)
    /// A whole number.
    case integer(Int)
    /// A number.
    case decimal(Double)
    /// A hexadecimal number.
    case hex(UInt64)
}

/// What a value must be, as a bad value's error says it ("give a whole number from 1 to
/// 3600"). Each rule is a catalog entry `value.rule.<name>`.
public enum ValueRule: Sendable, Hashable {
    /// Not empty or blank.
    case nonEmpty
    /// A whole number in a range.
    case integer(ClosedRange<Int>)
    /// A whole number in a range, a multiple of `step`.
    case integerStep(ClosedRange<Int>, step: Int)
    /// A number above `above`, at most `upTo`.
    case decimal(above: Double, upTo: Double)
    /// A hexadecimal number of at most `digits` digits.
    case hex(digits: Int)
    /// One of the languages.
    case language([String])
    /// An EPC of `minDigits` to `maxDigits` hex digits, whole bytes.
    case epc(minDigits: Int, maxDigits: Int)
    /// Whole bytes in hex.
    case hexBytes
    /// A profile file, or the name of one in `directories` (the names found there).
    case profile(directories: [String], names: [String])
    /// Shipped data that is not installed where it should be.
    case shippedData(String)
    /// A file or directory by its name: `-` (standard input or output) cannot be used here.
    case named
    /// Standard input (`-`) given more than once: it can be read only once.
    case standardInputOnce
    /// One word of a fixed set (a positional argument's choices).
    case choice([String])

    /// The catalog entry that says the rule.
    var messageKey: MessageKey {
        switch self {
        case .nonEmpty: .valueRuleNonEmpty
        case .integer: .valueRuleInteger
        case .integerStep: .valueRuleIntegerStep
        case .decimal: .valueRuleDecimal
        case .hex: .valueRuleHex
        case .language: .valueRuleLanguage
        case .epc: .valueRuleEpc
        case .hexBytes: .valueRuleHexBytes
        case .profile: .valueRuleProfile
        case .shippedData: .valueRuleShippedData
        case .named: .valueRuleNamed
        case .standardInputOnce: .valueRuleStandardInputOnce
        case .choice: .valueRuleChoice
        }
    }

    /// The values the rule's text fills in.
    var arguments: [String] {
        switch self {
        case .nonEmpty, .hexBytes, .named, .standardInputOnce: []
        case .choice(let choices): [choices.joined(separator: ", ")]
        case .integer(let range): [String(range.lowerBound), String(range.upperBound)]
        case .integerStep(let range, let step): [String(range.lowerBound), String(range.upperBound), String(step)]
        case .decimal(let above, let upTo): [Self.number(above), Self.number(upTo)]
        case .hex(let digits): [String(digits)]
        case .language(let codes): [codes.joined(separator: ", ")]
        case .epc(let minDigits, let maxDigits): [String(minDigits), String(maxDigits)]
        case .shippedData(let path): [path]
        case .profile(let directories, let names): [directories.joined(separator: ", "), names.isEmpty ? "-" : names.joined(separator: ", ")]
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// What the application lists for a shell completing a value that depends on the station,
/// not on the declarations: the completion scripts run `<program> __complete <source>`,
/// which prints one candidate a line (``command``).
public enum CompletionSource: String, CaseIterable, Sendable {
    /// The devices a `--device` can name here (emulated units on the bench, sound cards).
    case device
    /// The names of the profiles installed, configured and shipped.
    case profile
    /// The region codes.
    case region

    /// The hidden first argument that asks for the candidates (never in help or man pages).
    public static let command = "__complete"
}
