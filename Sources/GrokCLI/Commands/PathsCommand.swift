import Foundation
import GrokCommandLine
import GrokFirmware
import GrokFleet

/// `grokctl paths`: every place grokctl reads or writes by default and where each came
/// from (an option, the environment, the package checkout, the install prefix, the system).
/// None depends on the current directory.
struct PathsCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "paths", abstract: .commandPathsAbstract, discussion: .commandPathsDiscussion)
    }

    /// Whether `--bench` was given (the bench then comes from the option).
    let benchGiven: Bool

    init(_ values: ParsedValues) {
        benchGiven = !values.values(GlobalOptions.bench).isEmpty
    }

    /// One line of the listing; also its `--json` form.
    struct Line: Encodable {
        let name: String
        let path: String?
        let source: String
        let exists: Bool
    }

    /// The listing, in the order shown: shipped data, configuration (the station settings
    /// files and each setting with where it came from), state.
    static func lines(_ paths: InstallPaths, settings: StationSettings, bench: String, benchFromOption: Bool) -> [Line] {
        let benchEntry = benchFromOption ? InstallPaths.Entry(path: bench, source: .option) : paths.bench
        let environment = paths.environment
        let unset = InstallPaths.Entry(path: nil, source: .unset)
        // The shipped demo channel is trusted through its own root.json (FirmwareOptions).
        let shippedRoot = settings.setting(.repository)?.value == FirmwareOptions.demoRepositoryName
            ? paths.demoChannel.path.map { InstallPaths.Entry(path: $0 + "/root.json", source: paths.demoChannel.source) } : nil
        let entries: [(String, InstallPaths.Entry)] = [
            ("executable", InstallPaths.Entry(path: paths.executable, source: .derived)),
            ("data", paths.data), ("profiles", paths.profiles), ("scenes", paths.scenes),
            ("demo_channel", paths.demoChannel), ("docs", paths.docs),
            ("system_config", paths.systemConfig), ("user_config", paths.userConfig),
            ("system_station_settings", InstallPaths.Entry(path: StationSettings.systemFile(environment: environment), source: .system)),
            ("user_station_settings", StationSettings.userFile(environment: environment).map {
                InstallPaths.Entry(path: $0, source: paths.userConfig.source) } ?? InstallPaths.Entry(path: nil, source: .missing)),
            ("repository", paths.setting(.repository, in: settings) ?? unset),
            ("trusted_root", paths.setting(.trustedRoot, in: settings) ?? shippedRoot ?? paths.trustedRoot),
            ("station", paths.setting(.station, in: settings)
                ?? InstallPaths.Entry(path: ProcessInfo.processInfo.hostName, source: .builtIn)),
            ("profile_directory", paths.setting(.profileDirectory, in: settings) ?? unset),
            ("state", paths.state), ("bench", benchEntry), ("ledger", paths.ledger(settings)), ("locks", paths.locks),
            ("reports", paths.reports),
            ("spool", InstallPaths.Entry(path: StateDirectory.spoolDirectory(environment: environment), source: .derived)),
            ("tuf_state", paths.tufState),
        ]
        return entries.map { name, entry in
            // A shared ledger's address is shown without its password; a value that is no
            // file (a URL, a name) needs no file to exist.
            Line(name: name, path: name == "ledger" ? entry.path.map(StationPaths.shownLedger) : entry.path,
                 source: entry.source.rawValue, exists: entry.path.map { !$0.hasPrefix("/") || paths.exists($0) } ?? false)
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let paths = InstallPaths(environment: context.environment)
        let lines = Self.lines(paths, settings: try StationSettings(environment: context.environment), bench: context.globals.bench, benchFromOption: benchGiven)
        let console = context.console
        if console.isJSON {
            console.json(["paths": lines])
            return .success
        }
        let localizer = context.localizer
        let rows = lines.map { line in
            let source = localizer.text(Self.sourceKey(line.source))
            let path = line.path ?? (line.source == InstallPaths.Source.unset.rawValue ? "–" : localizer.text(.pathsNotFound))
            return [line.name, path, line.exists || line.path == nil ? source : localizer.text(.pathsNotYet, source)]
        }
        console.table(Table(headers: [localizer.text(.pathsHeadingName), localizer.text(.pathsHeadingPath),
                                      localizer.text(.pathsHeadingSource)], rows: rows))
        return .success
    }

    static func sourceKey(_ code: String) -> MessageKey {
        switch InstallPaths.Source(rawValue: code) ?? .missing {
        case .option: .pathsSourceOption
        case .environment: .pathsSourceEnvironment
        case .xdg: .pathsSourceXdg
        case .home: .pathsSourceHome
        case .checkout: .pathsSourceCheckout
        case .prefix: .pathsSourcePrefix
        case .system: .pathsSourceSystem
        case .derived: .pathsSourceDerived
        case .missing: .pathsSourceMissing
        case .userSettings: .pathsSourceUserSettings
        case .systemSettings: .pathsSourceSystemSettings
        case .builtIn: .pathsSourceBuiltIn
        case .unset: .pathsSourceUnset
        }
    }
}
