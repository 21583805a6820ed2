/// A command as the parser sees it: what it accepts (``configuration``) and how it turns
/// parsed values into typed, validated fields (``init(_:)``). What it does is the
/// application's (grokctl's `Command` adds `run`).
///
/// This is swift-argument-parser's contract without its property wrappers: options are
/// declared as static ``OptionDeclaration``s, so `init` can read them back by identity and
/// help is generated from the same declarations.
public protocol ParsableCommand {
    /// Name, help text, options, arguments and subcommands.
    static var configuration: CommandConfiguration { get }
    /// Reads and validates the parsed command line.
    ///
    /// - Throws: a usage ``CLIError`` (exit 64) when a value is unusable.
    init(_ values: ParsedValues) throws(CLIError)
}

/// What a command accepts and how its help reads.
public struct CommandConfiguration {
    /// The word typed on the command line (`devices`, `decode`).
    public var name: String
    /// One line for OVERVIEW and for the parent's SUBCOMMANDS list.
    public var abstract: MessageKey
    /// Paragraphs shown after the overview, when there is more to say.
    public var discussion: MessageKey?
    /// This command's own options (global options are added by the parser).
    public var options: [OptionDeclaration]
    /// Positional arguments, in order.
    public var arguments: [ArgumentDeclaration]
    /// Nested commands, in the order help lists them.
    public var subcommands: [any ParsableCommand.Type]
    /// Sets of options of which at most one may be given (`--interactive` | `--unattended`);
    /// the parser refuses two of one set, and help and man pages show them as `a | b`.
    public var exclusive: [[OptionDeclaration]]
    /// The exit statuses this command may end with besides 0, 1 and 64, each with its
    /// meaning (listed in its man page).
    public var exitStatuses: [ExitStatus]

    /// - Parameters:
    ///   - name: The word typed on the command line.
    ///   - abstract: One line of help.
    ///   - discussion: More help, when needed.
    ///   - options: The command's own options.
    ///   - arguments: Positional arguments, in order.
    ///   - subcommands: Nested commands.
    ///   - exclusive: Sets of options of which at most one may be given.
    ///   - exitStatuses: Its own exit statuses besides 0, 1 and 64.
    public init(
        name: String, abstract: MessageKey, discussion: MessageKey? = nil,
        options: [OptionDeclaration] = [], arguments: [ArgumentDeclaration] = [],
        subcommands: [any ParsableCommand.Type] = [], exclusive: [[OptionDeclaration]] = [],
        exitStatuses: [ExitStatus] = []
    ) {
        self.exclusive = exclusive
        self.exitStatuses = exitStatuses
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.arguments = arguments
        self.subcommands = subcommands
    }
}

/// A named option: a flag (`--json`) or an option with a value (`--lang de`, `--lang=de`).
public struct OptionDeclaration: Sendable, Hashable {
    /// A flag, or an option whose value is shown in help as `<name>`.
    public enum Kind: Sendable, Hashable {
        case flag
        case value(name: MessageKey)
    }

    /// The long name without dashes (`device`); it identifies the option.
    public let long: String
    /// A one-letter alias (`-q`), if any.
    public let short: Character?
    /// Flag or value.
    public let kind: Kind
    /// The help text.
    public let help: MessageKey
    /// Whether the option may be given more than once (values accumulate).
    public let isRepeatable: Bool
    /// Whether the command refuses to run without it.
    public let isRequired: Bool
    /// The value used when the option is absent, shown in help as "(default: ...)".
    public let defaultValue: String?
    /// What the value must be (checked by the parser, used by completions and man pages).
    public let valueType: ValueType

    /// The only values accepted, when the set is fixed; others are a usage error.
    public var choices: [String]? {
        if case .choice(let choices) = valueType { return choices }
        return nil
    }

    /// A flag: present or not.
    public static func flag(_ long: String, short: Character? = nil, help: MessageKey) -> Self {
        Self(
            long: long, short: short, kind: .flag, help: help, isRepeatable: true, isRequired: false,
            defaultValue: nil, valueType: .text)
    }

    /// An option that takes a value.
    ///
    /// - Parameters:
    ///   - long: The long name without dashes.
    ///   - short: A one-letter alias.
    ///   - value: The value name shown in help (`<dir>`).
    ///   - help: The help text.
    ///   - repeatable: Whether values accumulate over repeats.
    ///   - required: Whether the option must be given.
    ///   - defaultValue: The value when absent, as typed on a command line; it must satisfy
    ///     `type` (a test checks every declaration's).
    ///   - type: What the value must be; `choices` is a shorthand for `.choice(choices)`.
    ///   - choices: The only accepted values, if fixed.
    public static func option(
        _ long: String, short: Character? = nil, value: MessageKey, help: MessageKey,
        repeatable: Bool = false, required: Bool = false, defaultValue: String? = nil,
        type: ValueType = .text, choices: [String]? = nil
    ) -> Self {
        Self(
            long: long, short: short, kind: .value(name: value), help: help, isRepeatable: repeatable,
            isRequired: required, defaultValue: defaultValue, valueType: choices.map { .choice($0) } ?? type)
    }

    /// `-h`, `--help`: accepted by every command.
    public static let help = flag("help", short: "h", help: .optionHelp)
    /// `--version`: accepted by the root command.
    public static let version = flag("version", help: .optionVersion)

    /// Whether the option takes a value.
    public var takesValue: Bool {
        if case .value = kind { return true }
        return false
    }

    /// `--long`, as messages show it.
    public var spelling: String { "--" + long }
}

/// A positional argument.
public struct ArgumentDeclaration: Sendable, Hashable {
    /// The value name shown in help (`<file>`); it identifies the argument.
    public let name: MessageKey
    /// The help text.
    public let help: MessageKey
    /// Whether the command refuses to run without it.
    public let isRequired: Bool
    /// Whether it takes all remaining positional values (only the last argument may).
    public let isRepeating: Bool
    /// What each value must be, checked by the parser as an option's is (the error names
    /// the argument by its value name), and used by help, man pages and completions
    /// (`.inputFile`: files complete, help says `-` reads standard input).
    public let valueType: ValueType

    /// - Parameters:
    ///   - name: The value name shown in help.
    ///   - help: The help text.
    ///   - required: Whether it must be given.
    ///   - repeating: Whether it takes all remaining values.
    ///   - type: What each value must be.
    public init(name: MessageKey, help: MessageKey, required: Bool = true, repeating: Bool = false, type: ValueType = .text) {
        self.name = name
        self.help = help
        self.isRequired = required
        self.isRepeating = repeating
        self.valueType = type
    }

    /// `<file>`, as English messages name it (localized ones use the catalog's value name).
    public var spelling: String { "<" + Localizer.english.text(name) + ">" }
}

/// The values found on the command line, read back through their declarations.
public struct ParsedValues: Sendable {
    var options: [String: [String]] = [:]
    var arguments: [ArgumentDeclaration: [String]] = [:]
    /// The process environment, for values whose meaning depends on it (a profile named
    /// by its name is looked up in the data directories).
    public var environment: [String: String] = [:]

    /// Creates an empty set (tests build values this way).
    public init() {}

    /// Whether the flag was given.
    public func flag(_ declaration: OptionDeclaration) -> Bool {
        options[declaration.long] != nil
    }

    /// The option's value, or its default.
    public func value(_ declaration: OptionDeclaration) -> String? {
        options[declaration.long]?.last ?? declaration.defaultValue
    }

    /// Every value of a repeatable option, in command-line order.
    public func values(_ declaration: OptionDeclaration) -> [String] {
        options[declaration.long] ?? []
    }

    /// The positional argument's value.
    public func argument(_ declaration: ArgumentDeclaration) -> String? {
        arguments[declaration]?.first
    }

    /// Every value of a repeating positional argument.
    public func arguments(_ declaration: ArgumentDeclaration) -> [String] {
        arguments[declaration] ?? []
    }

    /// The file a ``ValueType/inputFile`` argument names (`-`: standard input).
    public func input(_ declaration: ArgumentDeclaration) -> InputFile? {
        argument(declaration).map(InputFile.init)
    }

    /// The files a repeating ``ValueType/inputFile`` argument names, in command-line order
    /// (the parser lets `-` appear at most once).
    public func inputs(_ declaration: ArgumentDeclaration) -> [InputFile] {
        arguments(declaration).map(InputFile.init)
    }

    /// The option's value (or its default) checked against its ``ValueType`` and converted.
    ///
    /// - Throws: ``CLIError/badValue(value:option:rule:)`` saying what is allowed.
    public func typed(_ declaration: OptionDeclaration) throws(CLIError) -> TypedValue? {
        guard let text = value(declaration) else { return nil }
        return try declaration.valueType.parse(text, option: declaration.spelling)
    }

    /// A whole-number option (``ValueType/integer(_:step:)``), its default when absent.
    public func integer(_ declaration: OptionDeclaration) throws(CLIError) -> Int? {
        guard case .integer(let number)? = try typed(declaration) else { return nil }
        return number
    }

    /// A number option (``ValueType/decimal(above:upTo:)``), its default when absent.
    public func decimal(_ declaration: OptionDeclaration) throws(CLIError) -> Double? {
        switch try typed(declaration) {
        case .decimal(let number)?: number
        case .integer(let number)?: Double(number)
        default: nil
        }
    }

    /// A hexadecimal option (``ValueType/hex(bits:)``), its default when absent.
    public func hex(_ declaration: OptionDeclaration) throws(CLIError) -> UInt64? {
        guard case .hex(let number)? = try typed(declaration) else { return nil }
        return number
    }

    mutating func record(_ declaration: OptionDeclaration, _ value: String) {
        options[declaration.long, default: []].append(value)
    }
}
