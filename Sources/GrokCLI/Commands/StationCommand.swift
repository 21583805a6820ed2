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
                             subcommands: [StationInitCommand.self])
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
