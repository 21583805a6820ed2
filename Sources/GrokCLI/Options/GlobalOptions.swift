import GrokBasics
import Foundation
import GrokCommandLine
import GrokFleet

/// The options every grokctl command accepts, before or after the subcommand.
public struct GlobalOptions: Sendable, Equatable {
    /// The language of messages (`--lang`, else the environment).
    public var language: Language
    /// `--lang` itself, when given.
    public var languageOption: Language?
    /// Whether the user chose the language: `--lang`, or an environment that names one
    /// grokctl speaks (``Language/chosen(environment:)``). A fleet profile's `locale`
    /// applies only when not (``CommandContext/adoptProfileLocale(_:)``).
    public var languageChosen: Bool
    /// Machine output (`--json`).
    public var json: Bool
    /// Informational prose silenced (`--quiet`).
    public var quiet: Bool
    /// Where emulated Grokkers keep their state (`--bench`).
    public var bench: String
    /// Where every audio exchange is recorded as WAV files (`--record-audio`), if anywhere.
    public var recordAudio: String?
    /// Whether emulated Grokkers are paced to the wall clock (`--realtime`).
    public var realtime: Bool
    /// An ALSA configuration file to use instead of the system one (`--alsa-config`).
    public var alsaConfig: String?
    /// How long a command waits for a Grokker another grokctl is working on (`--lock-wait`).
    public var lockWait: Double
    /// Leave the sound cards' mixer levels as they are (`--keep-levels`).
    public var keepLevels: Bool

    /// `--lang <language>`.
    public static let lang = OptionDeclaration.option(
        "lang", value: .valueLanguage, help: .optionLang, type: .language)
    /// `--json`.
    public static let json = OptionDeclaration.flag("json", help: .optionJSON)
    /// `-q`, `--quiet`.
    public static let quiet = OptionDeclaration.flag("quiet", short: "q", help: .optionQuiet)
    /// `--bench <dir>`.
    public static let bench = OptionDeclaration.option("bench", value: .valueDirectory, help: .optionBench, type: .directory)
    /// `--record-audio <dir>`.
    public static let recordAudio = OptionDeclaration.option(
        "record-audio", value: .valueDirectory, help: .optionRecordAudio, type: .directory)
    /// `--realtime`.
    public static let realtime = OptionDeclaration.flag("realtime", help: .optionRealtime)
    /// `--alsa-config <file>`.
    public static let alsaConfig = OptionDeclaration.option(
        "alsa-config", value: .valueFile, help: .optionALSAConfig, type: .file)
    /// `--lock-wait <seconds>`.
    public static let lockWait = OptionDeclaration.option(
        "lock-wait", value: .valueSeconds, help: .optionLockWait, defaultValue: "3", type: .decimal(above: 0, upTo: 3600))
    /// `--keep-levels`.
    public static let keepLevels = OptionDeclaration.flag("keep-levels", help: .optionKeepLevels)

    /// All of them, in the order help lists them.
    public static let declarations = [lang, json, quiet, bench, recordAudio, realtime, alsaConfig, keepLevels, lockWait]

    /// Reads the global options.
    ///
    /// - Parameters:
    ///   - values: The parsed command line.
    ///   - environment: For the language and the default bench directory.
    public init(_ values: ParsedValues, environment: [String: String]) {
        languageOption = values.value(Self.lang).flatMap(Language.init(localeName:))
        language = Language.resolve(option: languageOption, environment: environment)
        languageChosen = languageOption != nil || Language.chosen(environment: environment) != nil
        json = values.flag(Self.json)
        quiet = values.flag(Self.quiet)
        bench = values.value(Self.bench) ?? Self.defaultBench(environment: environment)
        recordAudio = values.value(Self.recordAudio)
        realtime = values.flag(Self.realtime)
        alsaConfig = values.value(Self.alsaConfig)
        // Checked by the parser (above 0, at most 3600 s); the default when it was not given.
        lockWait = (try? values.decimal(Self.lockWait)).flatMap { $0 } ?? DevicePortContext.defaultLockWait
        keepLevels = values.flag(Self.keepLevels)
    }

    /// The bench directory when `--bench` is not given: `$GROKCTL_BENCH`, else
    /// `$XDG_STATE_HOME/grokctl/bench` (an absolute `XDG_STATE_HOME` only, as the XDG
    /// spec says), else `~/.local/state/grokctl/bench`.
    public static func defaultBench(environment: [String: String]) -> String {
        if let bench = environment["GROKCTL_BENCH"], !bench.isEmpty { return bench }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return joinPath(state, "grokctl/bench")
        }
        let home: String
        if let value = environment["HOME"], !value.isEmpty {
            home = value
        } else {
            home = FileManager.default.homeDirectoryForCurrentUser.path
        }
        return joinPath(home, ".local/state/grokctl/bench")
    }

    /// The language and `--json` read straight from the arguments, before parsing, so
    /// that even a parse error is in the right language and form. An invalid `--lang`
    /// is ignored here (the parser reports it).
    static func prescan(_ arguments: [String]) -> (language: Language?, json: Bool) {
        var language: Language?
        var json = false
        var index = 0
        while index < arguments.count, arguments[index] != "--" {
            let argument = arguments[index]
            index += 1
            if argument == "--json" {
                json = true
            } else if argument.hasPrefix("--lang=") {
                language = Language(localeName: String(argument.dropFirst("--lang=".count))) ?? language
            } else if argument == "--lang", index < arguments.count {
                language = Language(localeName: arguments[index]) ?? language
                index += 1
            }
        }
        return (language, json)
    }
}
