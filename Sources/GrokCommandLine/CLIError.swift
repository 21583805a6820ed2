import GrokBasics

/// How grokctl ends: `0` success, `1` failure, `64` usage error (sysexits' `EX_USAGE`).
public struct ExitCode: RawRepresentable, Hashable, Sendable {
    /// The process exit status.
    public let rawValue: Int32
    /// An exit code with this status.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Everything asked for was done.
    public static let success = ExitCode(rawValue: 0)
    /// Something failed; the message on stderr says what.
    public static let failure = ExitCode(rawValue: 1)
    /// The command line was wrong; nothing was done.
    public static let usageError = ExitCode(rawValue: 64)
}

/// An exit status a command declares besides the ones every command has (0, 1, 64), with
/// what it means (`firmware check`'s 100: an update is available); its man page lists it.
public struct ExitStatus: Sendable, Hashable {
    /// The status.
    public let code: ExitCode
    /// What it means, as the man page's EXIT STATUS section says it.
    public let meaning: MessageKey

    public init(_ code: Int32, meaning: MessageKey) {
        self.code = ExitCode(rawValue: code)
        self.meaning = meaning
    }

    /// What every command may end with: 0, 1 and 64.
    public static let success = ExitStatus(0, meaning: .manExitSuccess)
    public static let failure = ExitStatus(1, meaning: .manExitFailure)
    public static let usageError = ExitStatus(64, meaning: .manExitUsage)
}

/// Everything that can go wrong in the command line itself: the arguments (usage errors,
/// exit 64) and the few failures the CLI layer owns (exit 1). Library errors keep their own
/// types and reach the user through ``CodedError``.
///
/// The message text lives in the catalogs under `error.<code>`; ``description`` is the
/// English one, which `--json` also reports.
public enum CLIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An option this command does not have (`--bogus`), with the closest known one.
    case unknownOption(String, suggestion: String?)
    /// A subcommand name that does not exist, with the closest known one.
    case unknownSubcommand(String, suggestion: String?)
    /// An option that takes a value was given none (`--lang` at the end, `--bench=`).
    case missingValue(option: String)
    /// A required option was not given (`info` without `--device`).
    case missingOption(option: String)
    /// A required positional argument was not given; `name` is its value name.
    case missingArgument(name: MessageKey)
    /// More positional arguments than the command takes.
    case unexpectedArgument(String)
    /// An option that takes one value was given twice.
    case duplicateOption(String)
    /// A flag was given a value (`--json=yes`).
    case flagWithValue(String)
    /// A value an option cannot use (an empty path, ...).
    case invalidValue(value: String, option: String)
    /// A value its option's ``ValueType`` does not allow, with the rule it breaks
    /// (`--epc ZZZZ`: an EPC is 8 to 54 hex digits).
    case badValue(value: String, option: String, rule: ValueRule)
    /// A value a positional argument's ``ValueType`` does not allow, named by the
    /// argument's value name (`'fsh' is not valid for '<shell>': use one of ...`).
    case badArgument(value: String, name: MessageKey, rule: ValueRule)
    /// A value outside an option's fixed set (`--lang it`).
    case invalidChoice(value: String, option: String, choices: [String])
    /// A value a library checked and refused with a ``CodedError`` of its own, such as devices
    /// named wrong (`--device`: a spec that is not one, a number out of range, a device named
    /// twice); its code and arguments are the library's (a `usage_` code with an `error.<code>`
    /// catalog entry).
    case coded(code: String, arguments: [String])
    /// A configuration file a library read and refused (the station settings, `station.json`,
    /// while a `--profile` name is looked up): a failure (exit 1), as every command that reads
    /// the settings reports it, not a usage error, since the command line was right. Its code
    /// and arguments are the library's (`error.<code>` in the catalogs).
    case configuration(code: String, arguments: [String])
    /// A region that is not one of the vendor's 22 (`grokctl region set`).
    case invalidRegion(String)
    /// Two options that exclude each other were both given (`--name` and `--package`).
    case conflictingOptions(String, String)
    /// None of several alternatives was given (`firmware verify` without a file or `--name`).
    case missingOneOf([String])
    /// `--channel` is not a channel name.
    case invalidChannel(String)
    /// `--server` is not an https://, http:// or file:// URL.
    case invalidServerURL(String)
    /// A percentage option outside 0...100 or not a number.
    case invalidPercent(value: String, option: String)
    /// `--version` is not MAJOR.MINOR.BUILD.
    case invalidFirmwareVersion(String)

    /// A stable identifier for `--json` output; the catalog key is `error.<code>`.
    public var code: String {
        switch self {
        case .unknownOption: "usage_unknown_option"
        case .unknownSubcommand: "usage_unknown_subcommand"
        case .missingValue: "usage_missing_value"
        case .missingOption: "usage_missing_option"
        case .missingArgument: "usage_missing_argument"
        case .unexpectedArgument: "usage_unexpected_argument"
        case .duplicateOption: "usage_duplicate_option"
        case .flagWithValue: "usage_flag_with_value"
        case .invalidValue: "usage_invalid_value"
        case .badValue: "usage_bad_value"
        case .badArgument: "usage_bad_argument"
        case .invalidChoice: "usage_invalid_choice"
        case .coded(let code, _), .configuration(let code, _): code
        case .invalidRegion: "usage_invalid_region"
        case .conflictingOptions: "usage_conflicting_options"
        case .missingOneOf: "usage_missing_one_of"
        case .invalidChannel: "usage_invalid_channel"
        case .invalidServerURL: "usage_invalid_server_url"
        case .invalidPercent: "usage_invalid_percent"
        case .invalidFirmwareVersion: "usage_invalid_firmware_version"
        }
    }

    /// Whether the command line was at fault (exit 64) rather than the work (exit 1): every
    /// case but ``configuration(code:arguments:)`` is the command line's (the work's errors
    /// are the libraries').
    public var isUsageError: Bool {
        if case .configuration = self { return false }
        return true
    }

    /// The exit code this error ends grokctl with.
    public var exitCode: ExitCode { isUsageError ? .usageError : .failure }

    /// The closest known name, offered as "Did you mean ...?".
    public var suggestion: String? {
        switch self {
        case .unknownOption(_, let suggestion), .unknownSubcommand(_, let suggestion): suggestion
        default: nil
        }
    }

    /// The values the message fills in, in English.
    public var arguments: [String] { localizedArguments(.english) }

    public var description: String { Localizer.english.message(for: self) }

    var messageKey: MessageKey {
        guard let key = MessageKey(errorCode: code) else {
            preconditionFailure("CLIError code \(code) has no MessageKey")
        }
        return key
    }

    /// The values the message fills in, with value names in `localizer`'s language.
    func localizedArguments(_ localizer: Localizer) -> [String] {
        switch self {
        case .unknownOption(let option, _), .missingValue(let option), .missingOption(let option),
            .duplicateOption(let option), .flagWithValue(let option):
            [option]
        case .unknownSubcommand(let name, _): [name]
        case .missingArgument(let name): ["<\(localizer.text(name))>"]
        case .unexpectedArgument(let value): [value]
        case .invalidValue(let value, let option): [value, option]
        case .badValue(let value, let option, let rule):
            [value, option, localizer.text(rule.messageKey, arguments: rule.arguments)]
        case .badArgument(let value, let name, let rule):
            [value, "<\(localizer.text(name))>", localizer.text(rule.messageKey, arguments: rule.arguments)]
        case .invalidChoice(let value, let option, let choices):
            [value, option, choices.joined(separator: ", ")]
        case .coded(_, let arguments), .configuration(_, let arguments): arguments
        case .invalidRegion(let spec): [spec]
        case .conflictingOptions(let first, let second): [first, second]
        case .missingOneOf(let names): [names.joined(separator: ", ")]
        case .invalidChannel(let name), .invalidServerURL(let name), .invalidFirmwareVersion(let name): [name]
        case .invalidPercent(let value, let option): [value, option]
        }
    }
}
