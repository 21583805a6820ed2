import Foundation
import GrokCommandLine
import GrokFleet

/// What a running command gets: where to print, the global options, the environment.
///
/// Not thread-safe (it holds the ``Console``): use it from the thread running the command.
public final class CommandContext {
    /// Where output and errors go, in the user's language.
    public let console: Console
    /// `--lang`, `--json`, `--bench` and the rest.
    public let globals: GlobalOptions
    /// The process environment.
    public let environment: [String: String]
    /// The mixers whose levels this grokctl put back when it started, left raised by one that
    /// ended (`grokctl devices --restore-levels` names them).
    public internal(set) var restoredLevels: [String] = []
    /// The commands named on the command line, root first.
    let path: [any ParsableCommand.Type]
    let helpFormatter: HelpFormatter

    init(
        console: Console, globals: GlobalOptions, environment: [String: String],
        path: [any ParsableCommand.Type], helpFormatter: HelpFormatter
    ) {
        self.console = console
        self.globals = globals
        self.environment = environment
        self.path = path
        self.helpFormatter = helpFormatter
    }

    /// The language of messages.
    public var localizer: Localizer { console.localizer }

    /// A fleet profile's `locale` (`en`, `es`, `fr`, `de`) becomes the language of the rest of
    /// the command only where the user chose none: `--lang` > the environment (`LANGUAGE`,
    /// `LC_ALL`, `LC_MESSAGES`, `LANG`, when it names a language grokctl speaks) > the
    /// profile's `locale` > English. The person at the station reads the output; a profile
    /// written in Berlin must not turn an English technician's run German.
    public func adoptProfileLocale(_ locale: String?) {
        guard !globals.languageChosen, let locale, let language = Language(rawValue: locale) else { return }
        console.speak(language)
    }

    /// Who is running the command when `--operator` does not say: `$USER`, else `$LOGNAME`,
    /// else the login name of the process's user (a root shell or a service often has
    /// neither variable), else empty.
    public var defaultOperator: String {
        for name in ["USER", "LOGNAME"] { if let value = environment[name], !value.isEmpty { return value } }
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ""
    }

    /// The bench of emulated Grokkers (`--bench`).
    public var bench: Bench { Bench(directory: globals.bench) }

    /// What opening a device's port needs from the command line: the bench, the ALSA
    /// configuration, the audio recording, the state directory's locks (the fleet runs' too),
    /// its restore records of the cards' levels (unless `--keep-levels`) and its remembered
    /// link settings.
    var ports: DevicePortContext {
        DevicePortContext(bench: bench, alsaConfig: globals.alsaConfig, recordAudio: globals.recordAudio,
                          lockDirectory: StateDirectory.locks(environment: environment), lockWait: globals.lockWait,
                          levelsDirectory: StateDirectory.levels(environment: environment), keepLevels: globals.keepLevels,
                          linkSettings: LinkSettingFile(stateDirectory: StateDirectory.path(environment: environment)))
    }

    /// Prints the running command's help on stdout.
    public func printHelp() {
        console.write(helpFormatter.help(path))
    }
}

@available(*, unavailable)
extension CommandContext: Sendable {}
