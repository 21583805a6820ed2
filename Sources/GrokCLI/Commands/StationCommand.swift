import Foundation
import GrokCommandLine
import GrokFirmware
import GrokFleet

/// `grokctl station`: this station's settings (``StationSettings``): the fleet's repository,
/// its trusted root, the ledger, the station's name and a profile directory, so that commands
/// need not repeat them. `grokctl paths` shows each setting and where it came from.
struct StationCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "station", abstract: .commandStationAbstract, discussion: .commandStationDiscussion,
                             subcommands: [StationInitCommand.self, StationStatusCommand.self])
    }

    init(_ values: ParsedValues) {}
}

/// `grokctl station init [--repository URL|DIR|demo] [--trusted-root FILE] [--ledger FILE|URL]
/// [--name NAME] [--profile-directory DIR] [--system] [--force]`: writes the user's (or, with
/// `--system`, the system's) station.json, atomically, refusing to replace one without `--force`.
struct StationInitCommand: Command {
    static let repository = OptionDeclaration.option("repository", value: .valueURL, help: .optionStationRepository)
    static let trustedRoot = OptionDeclaration.option("trusted-root", value: .valueFile, help: .optionStationTrustedRoot, type: .file)
    static let ledger = OptionDeclaration.option("ledger", value: .valueFile, help: .optionStationLedger, type: .file)
    static let name = OptionDeclaration.option("name", value: .valueName, help: .optionStationName)
    static let profileDirectory = OptionDeclaration.option(
        "profile-directory", value: .valueDirectory, help: .optionStationProfileDirectory, type: .directory)
    static let system = OptionDeclaration.flag("system", help: .optionStationSystem)
    static let force = OptionDeclaration.flag("force", help: .optionStationForce)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "init", abstract: .commandStationInitAbstract, discussion: .commandStationInitDiscussion,
                             options: [repository, trustedRoot, ledger, name, profileDirectory, system, force])
    }

    /// The settings to write, paths made absolute (they were typed relative to the current
    /// directory; the file is read from anywhere).
    let values: [StationSettings.Key: String]
    let system: Bool
    let force: Bool

    init(_ values: ParsedValues) throws(CLIError) {
        var settings: [StationSettings.Key: String] = [:]
        if let repository = values.value(Self.repository) {
            let lower = repository.lowercased()
            let isURL = ["https://", "http://", "file://"].contains { lower.hasPrefix($0) }
            settings[.repository] = isURL || repository == FirmwareOptions.demoRepositoryName ? repository : Self.absolute(repository)
        }
        if let file = values.value(Self.trustedRoot) { settings[.trustedRoot] = Self.absolute(file) }
        if let ledger = values.value(Self.ledger) {
            settings[.ledger] = ledger.lowercased().hasPrefix("postgres") && ledger.contains("://") ? ledger : Self.absolute(ledger)
        }
        if let name = values.value(Self.name) { settings[.station] = name }
        if let directory = values.value(Self.profileDirectory) { settings[.profileDirectory] = Self.absolute(directory) }
        guard !settings.isEmpty else {
            throw .missingOneOf([Self.repository, Self.trustedRoot, Self.ledger, Self.name, Self.profileDirectory].map(\.spelling))
        }
        self.values = settings
        system = values.flag(Self.system)
        force = values.flag(Self.force)
    }

    static func absolute(_ path: String) -> String {
        path.isEmpty ? path : URL(fileURLWithPath: path).standardizedFileURL.path
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let environment = context.environment
        guard let file = system ? StationSettings.systemFile(environment: environment) : StationSettings.userFile(environment: environment) else {
            throw CLIError.coded(code: "usage_no_config_home", arguments: [])
        }
        try StationSettings.write(values, to: file, force: force)
        let console = context.console
        if console.isJSON {
            console.json(StationWritten(file: file, settings: Dictionary(uniqueKeysWithValues: values.map { key, value in
                (key.rawValue, key == .ledger ? StationPaths.shownLedger(value) : value)
            })))
        } else {
            console.say(.stationWritten, file)
        }
        return .success
    }

    /// `--json`'s answer: the file written and its settings (a ledger's password masked).
    struct StationWritten: Encodable {
        let file: String
        let settings: [String: String]
    }
}

/// `grokctl station status`: what this station's watch session (`provision --watch`) is doing,
/// from the status file it keeps (`<state dir>/watch/status.json`): each port, what it holds
/// and does, its progress and ETA, and the tally. The session counts as running only while a
/// process with the file's pid and that process's start time is there (a reused pid is another
/// process) and the file is fresh; a file gone stale says the station is not answering; a
/// session whose process is gone without closing its status is said to have stopped so.
///
/// Whose station: the user's own (its state directory), else the system's, the one
/// `grokctl-watch@PROFILE` runs as the user grokctl (``WatchStatus/systemPath``); `--system`
/// reads the system's only.
struct StationStatusCommand: Command {
    static let system = OptionDeclaration.flag("system", help: .optionStationStatusSystem)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "status", abstract: .commandStationStatusAbstract, discussion: .commandStationStatusDiscussion,
                             options: [system])
    }

    let system: Bool

    init(_ values: ParsedValues) {
        system = values.flag(Self.system)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let console = context.console
        let localizer = context.localizer
        let own = WatchStatus.path(stateDirectory: StateDirectory.path(environment: context.environment))
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        let path = system || (!exists(own) && exists(WatchStatus.systemPath)) ? WatchStatus.systemPath : own
        let status = try WatchStatus.read(path: path)
        let now = Date()
        let state = status?.state(at: now)
        if console.isJSON {
            console.json(StationStatusObject(state: state, status: status, file: path))
            return .success
        }
        guard let status, let state else {
            console.print(localizer.text(path == WatchStatus.systemPath ? .stationStatusNoneSystem : .stationStatusNone))
            return .success
        }
        if path == WatchStatus.systemPath { console.print(localizer.text(.stationStatusSystem, path)) }
        // The file's times (ISO 8601, UTC) as the user's language writes a date, in local time.
        func when(_ stamp: String) -> String {
            WatchStatus.date(stamp).map { LocaleFormat.dateTime($0, localizer.language) } ?? stamp
        }
        switch state {
        case .running:
            console.print(localizer.text(.stationStatusRunning, String(status.pid), status.profile, status.runID, when(status.started)))
            for line in FleetWatch.screen(status, localizer: localizer) { console.print(line) }
        case .notAnswering:
            let age = WatchStatus.date(status.updated).map { LocaleFormat.decimal(max(0, now.timeIntervalSince($0)), digits: 0, localizer.language) }
            console.print(localizer.text(.stationStatusNotAnswering, String(status.pid), status.profile, status.runID, when(status.updated),
                                         age ?? "?"))
            for line in FleetWatch.screen(status, localizer: localizer) { console.print(line) }
        case .stoppedUnclosed:
            console.print(localizer.text(.stationStatusStoppedUnclosed, status.runID, String(status.pid), when(status.updated)))
            console.print(FleetWatch.tally(status.tally, localizer: localizer))
        case .stopped:
            console.print(localizer.text(.stationStatusStopped, status.runID, when(status.updated)))
            console.print(FleetWatch.tally(status.tally, localizer: localizer))
        }
        return .success
    }
}

/// `station status --json`: whether a session's process is there (`running`: also while it is
/// not answering), the station's state (`running`, `not_answering`, `stopped`,
/// `stopped_unclosed`; null when no session ever ran), and what its status file says (null when none).
struct StationStatusObject: Encodable {
    let state: WatchStatus.StationState?
    let status: WatchStatus?
    /// The status file read (the user's, or the system station's).
    let file: String

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state?.processIsThere ?? false, forKey: .running)
        try container.encode(state, forKey: .state)
        try container.encode(status, forKey: .status)
        try container.encode(file, forKey: .file)
    }

    enum CodingKeys: String, CodingKey { case running, state, status, file }
}
