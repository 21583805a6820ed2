import GrokBasics
import Foundation
import GrokCommandLine
import GrokFirmware
import GrokFleet

// MARK: Shared options

/// The options the fleet commands (`provision`, `rollout`, `verify`) share: the profile,
/// the devices, the run's station and operator, where the ledger and the report go, and
/// the fleet's TUF repository (`--repository`, `--trusted-root`, `--state`; a `file://`
/// repository or a directory works offline).
struct FleetOptions: Sendable {
    static let profile = OptionDeclaration.option("profile", value: .valueFile, help: .optionProfile, required: true, type: .profile)
    static let optionalDevice = OptionDeclaration.option(
        "device", value: .valueDevice, help: .optionFleetDevicesOptional, repeatable: true, type: .device)
    /// `provision`'s and `verify`'s: Grokkers, or `--watch` (checked in ``init(_:devicesRequired:)``).
    static let device = OptionDeclaration.option(
        "device", value: .valueDevice, help: .optionDevice, repeatable: true, type: .device)
    static let dryRun = OptionDeclaration.flag("dry-run", help: .optionDryRun)
    /// A watching station: runs until stopped, working each Grokker plugged into the bench.
    static let watch = OptionDeclaration.flag("watch", help: .optionWatch)
    static let station = OptionDeclaration.option("station", value: .valueName, help: .optionStation)
    static let operatorName = OptionDeclaration.option("operator", value: .valueName, help: .optionOperator)
    static let ledger = OptionDeclaration.option("ledger", value: .valueFile, help: .optionLedger, type: .file)
    static let report = OptionDeclaration.option("report", value: .valueFile, help: .optionReport, type: .outputFile)
    static let quietReaders = OptionDeclaration.flag("quiet-readers", help: .optionQuietReaders)

    /// The firmware options a fleet command takes (the channel comes from the profile).
    static let firmwareDeclarations = [FirmwareOptions.repository, FirmwareOptions.trustedRoot, FirmwareOptions.state,
                                       FirmwareOptions.allowInsecureHTTP, FirmwareOptions.caBundle]

    static func declarations(devicesRequired: Bool) -> [OptionDeclaration] {
        [profile, devicesRequired ? device : optionalDevice, watch, dryRun, station, operatorName, ledger, report, quietReaders]
            + firmwareDeclarations
    }

    /// What cannot go together: the devices and `--watch` (a station watches every port).
    static let exclusive = [[device, watch]]

    let profileFile: String
    /// Empty: every emulated Grokker with state on the bench (`rollout` only).
    let devices: [DeviceSpec]
    let dryRun: Bool
    /// `--watch`: a station working each Grokker as it is plugged in, until stopped.
    let watch: Bool
    let station: String?
    let operatorName: String?
    let ledgerFile: String?
    let reportFile: String?
    /// `--quiet-readers`: no cues on the units' speakers.
    let quietReaders: Bool
    let firmware: FirmwareOptions

    /// - Parameter devicesRequired: `provision`'s: `--device` or `--watch` must be given.
    init(_ values: ParsedValues, devicesRequired: Bool = false) throws(CLIError) {
        guard let profile = values.value(Self.profile) else { throw .missingOption(option: Self.profile.spelling) }
        // A file, or a shipped or installed profile's name (`bench-us`): never the current
        // directory's idea of where profiles are.
        profileFile = try InstallPaths(environment: values.environment).profile(profile, option: Self.profile.spelling)
        let specs = values.values(Self.device)
        devices = specs.isEmpty ? [] : try DeviceSpec.parseOption(specs)
        dryRun = values.flag(Self.dryRun)
        watch = values.flag(Self.watch)
        if watch, !devices.isEmpty { throw .conflictingOptions(Self.watch.spelling, Self.device.spelling) }
        if watch, dryRun { throw .conflictingOptions(Self.watch.spelling, Self.dryRun.spelling) }
        if devicesRequired, devices.isEmpty, !watch { throw .missingOption(option: Self.device.spelling) }
        station = try Self.nonEmpty(values, Self.station)
        operatorName = try Self.nonEmpty(values, Self.operatorName)
        ledgerFile = try Self.nonEmpty(values, Self.ledger)
        reportFile = try Self.nonEmpty(values, Self.report)
        // A watching station writes no report (the ledger has every step).
        if watch, reportFile != nil { throw .conflictingOptions(Self.watch.spelling, Self.report.spelling) }
        quietReaders = values.flag(Self.quietReaders)
        firmware = try FirmwareOptions(values)
    }

    private static func nonEmpty(_ values: ParsedValues, _ option: OptionDeclaration) throws(CLIError) -> String? {
        guard let value = values.value(option) else { return nil }
        guard !value.trimmingCharacters(in: .whitespaces).isEmpty else { throw .invalidValue(value: value, option: option.spelling) }
        return value
    }
}

// MARK: grokctl provision

/// `grokctl provision --profile FILE --device SPEC...`: bring each Grokker to the profile
/// (factory data, region, firmware, smoke tests), recorded in the ledger. A technician at a
/// terminal is asked (update now / postpone / cancel, the region, retries); otherwise the
/// profile's policy decides.
struct ProvisionCommand: Command {
    static let interactive = OptionDeclaration.flag("interactive", help: .optionInteractive)
    static let unattended = OptionDeclaration.flag("unattended", help: .optionUnattended)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "provision", abstract: .commandProvisionAbstract, discussion: .commandProvisionDiscussion,
            options: FleetOptions.declarations(devicesRequired: true) + [interactive, unattended],
            exclusive: [[interactive, unattended]] + FleetOptions.exclusive, exitStatuses: FleetExit.statuses)
    }

    /// `nil`: interactive when stdin and stdout are a terminal.
    let interactiveChoice: Bool?
    let fleet: FleetOptions

    init(_ values: ParsedValues) throws(CLIError) {
        fleet = try FleetOptions(values, devicesRequired: true)
        // Not both: the declaration's exclusive set, checked by the parser.
        let wantsInteractive = values.flag(Self.interactive), wantsUnattended = values.flag(Self.unattended)
        interactiveChoice = wantsInteractive ? true : (wantsUnattended ? false : nil)
        // A station asks no one.
        if fleet.watch, wantsInteractive { throw .conflictingOptions(FleetOptions.watch.spelling, Self.interactive.spelling) }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try FleetRun(mode: .provision, options: fleet, interactive: interactiveChoice, context: context).run()
    }
}

// MARK: grokctl rollout

/// `grokctl rollout --profile FILE [--device SPEC...]`: unattended; the profile's policy
/// decides (windows, battery, staged rollout, halt rule); the exit code tells the outcome.
struct RolloutCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "rollout", abstract: .commandRolloutAbstract, discussion: .commandRolloutDiscussion,
            options: FleetOptions.declarations(devicesRequired: false), exclusive: [[FleetOptions.optionalDevice, FleetOptions.watch]],
            exitStatuses: FleetExit.statuses)
    }

    let fleet: FleetOptions

    init(_ values: ParsedValues) throws(CLIError) {
        fleet = try FleetOptions(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try FleetRun(mode: .rollout, options: fleet, interactive: false, context: context).run()
    }
}

// MARK: grokctl verify

/// `grokctl verify --profile FILE --device SPEC...`: identity, factory data, firmware,
/// region and a smoke test are checked; nothing that changes a Grokker is sent.
struct VerifyCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "verify", abstract: .commandVerifyAbstract, discussion: .commandVerifyDiscussion,
            options: FleetOptions.declarations(devicesRequired: true), exclusive: FleetOptions.exclusive,
            exitStatuses: FleetExit.statuses)
    }

    let fleet: FleetOptions

    init(_ values: ParsedValues) throws(CLIError) {
        fleet = try FleetOptions(values, devicesRequired: true)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try FleetRun(mode: .verify, options: fleet, interactive: false, context: context).run()
    }
}

// MARK: grokctl ledger

/// `grokctl ledger`: what the provisioning ledger holds.
struct LedgerCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "ledger", abstract: .commandLedgerAbstract, discussion: .commandLedgerDiscussion,
            subcommands: [LedgerShowCommand.self, LedgerExportCommand.self, LedgerCheckCommand.self,
                          LedgerRecoverCommand.self, LedgerSyncCommand.self])
    }

    init(_ values: ParsedValues) {}
}

/// `grokctl ledger show [RUN] [--serial N] [--ledger FILE]`: the runs and devices, one run
/// (by the id its summary printed), or one device's history.
struct LedgerShowCommand: Command {
    static let run = ArgumentDeclaration(name: .valueRun, help: .argumentLedgerRun, required: false)
    static let serial = OptionDeclaration.option("serial", value: .valueSerial, help: .optionSerial)
    static let limit = OptionDeclaration.option("limit", value: .valueCount, help: .optionLedgerLimit, defaultValue: "20",
                                                type: .integer(1...1_000_000))

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "show", abstract: .commandLedgerShowAbstract, options: [serial, limit, FleetOptions.ledger],
                             arguments: [run])
    }

    let runKey: String?
    let serialNumber: String?
    let limit: Int
    let ledgerFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        runKey = values.argument(Self.run)
        if let serial = values.value(Self.serial) {
            guard !serial.isEmpty, serial.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLetter || $0 == "-") }) else {
                throw .invalidValue(value: serial, option: Self.serial.spelling)
            }
            serialNumber = serial
        } else {
            serialNumber = nil
        }
        guard let limit = try values.integer(Self.limit) else { throw .missingOption(option: Self.limit.spelling) }
        self.limit = limit
        ledgerFile = values.value(FleetOptions.ledger)
        if let ledgerFile, ledgerFile.isEmpty { throw .invalidValue(value: ledgerFile, option: FleetOptions.ledger.spelling) }
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runLedgerShow(self, context) }
}

/// `grokctl ledger export --csv|--json [--table T] [--output FILE]`.
struct LedgerExportCommand: Command {
    static let csv = OptionDeclaration.flag("csv", help: .optionExportCSV)
    static let table = OptionDeclaration.option(
        "table", value: .valueTable, help: .optionExportTable, choices: LedgerExportTable.all.map(\.name))
    static let output = OptionDeclaration.option("output", short: "o", value: .valueFile, help: .optionExportOutput,
                                                 type: .outputFile)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "export", abstract: .commandLedgerExportAbstract, discussion: .commandLedgerExportDiscussion,
                             options: [csv, table, output, FleetOptions.ledger], exclusive: [[csv, GlobalOptions.json]])
    }

    let format: LedgerExportFormat
    let table: LedgerExportTable?
    let outputFile: String?
    let ledgerFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        // `--json` is the global option: here it asks for the JSON export (and errors in JSON).
        let csv = values.flag(Self.csv)
        let json = values.flag(GlobalOptions.json)
        guard csv || json else { throw .missingOneOf([Self.csv.spelling, GlobalOptions.json.spelling]) }
        format = csv ? .csv : .json
        table = values.value(Self.table).flatMap(LedgerExportTable.init(name:))
        // `-` is standard output, as when `--output` is not given.
        outputFile = values.value(Self.output).flatMap { $0 == "-" ? nil : $0 }
        if let outputFile, outputFile.isEmpty { throw .invalidValue(value: outputFile, option: Self.output.spelling) }
        ledgerFile = values.value(FleetOptions.ledger)
        if let ledgerFile, ledgerFile.isEmpty { throw .invalidValue(value: ledgerFile, option: FleetOptions.ledger.spelling) }
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runLedgerExport(self, context) }
}

/// `grokctl ledger check [--ledger FILE]`: the full, read-only check of the ledger file.
struct LedgerCheckCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "check", abstract: .commandLedgerCheckAbstract, discussion: .commandLedgerCheckDiscussion,
                             options: [FleetOptions.ledger])
    }

    let ledgerFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        ledgerFile = values.value(FleetOptions.ledger)
        if let ledgerFile, ledgerFile.isEmpty { throw .invalidValue(value: ledgerFile, option: FleetOptions.ledger.spelling) }
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runLedgerCheck(self, context) }
}

/// `grokctl ledger recover [--ledger FILE] [--output FILE]`: salvages a damaged ledger into a new file.
struct LedgerRecoverCommand: Command {
    static let output = OptionDeclaration.option("output", short: "o", value: .valueFile, help: .optionRecoverOutput)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "recover", abstract: .commandLedgerRecoverAbstract, discussion: .commandLedgerRecoverDiscussion,
                             options: [output, FleetOptions.ledger])
    }

    let outputFile: String?
    let ledgerFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        outputFile = values.value(Self.output)
        if let outputFile, outputFile.isEmpty { throw .invalidValue(value: outputFile, option: Self.output.spelling) }
        ledgerFile = values.value(FleetOptions.ledger)
        if let ledgerFile, ledgerFile.isEmpty { throw .invalidValue(value: ledgerFile, option: FleetOptions.ledger.spelling) }
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runLedgerRecover(self, context) }
}

// MARK: Where things are kept

/// grokctl's state directory and what lives in it: the ledger, the device locks, the run
/// reports (and the default bench).
enum StateDirectory {
    /// `$XDG_STATE_HOME/grokctl` (an absolute `XDG_STATE_HOME` only), else
    /// `~/.local/state/grokctl`: the directory the default bench is in.
    static func path(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return joinPath(state, "grokctl") }
        let home: String
        if let value = environment["HOME"], !value.isEmpty {
            home = value
        } else {
            home = FileManager.default.homeDirectoryForCurrentUser.path
        }
        return joinPath(home, ".local/state/grokctl")
    }

    /// `--ledger`, else `$GROKCTL_LEDGER`, else the profile's `station.ledger` (`profile`),
    /// else the station settings' `ledger`, else `<state dir>/ledger.sqlite`.
    /// - Throws: ``FleetError`` for a station settings file that is not valid.
    static func ledger(option: String?, environment: [String: String], profile: String? = nil) throws -> String {
        try ledgerOverride(option: option, environment: environment) ?? profile ?? defaultLedger(environment: environment)
    }

    /// `--ledger`, else `$GROKCTL_LEDGER`: what overrides a profile's `station.ledger`.
    static func ledgerOverride(option: String?, environment: [String: String]) -> String? {
        StationSettings.override(.ledger, option: option, environment: environment)
    }

    /// The ledger when neither the command line, the environment nor a profile names one: the
    /// station settings' `ledger` (``StationSettings``), else ``builtInLedger(environment:)``.
    static func defaultLedger(environment: [String: String]) throws -> String {
        try StationSettings(environment: environment).fromFiles[.ledger]?.value ?? builtInLedger(environment: environment)
    }

    /// `<state dir>/ledger.sqlite`: the ledger when nothing names one.
    static func builtInLedger(environment: [String: String]) -> String { joinPath(path(environment: environment), "ledger.sqlite") }

    /// `<state dir>/spool`: the stations' spools, where a run records while the shared
    /// ledger cannot be reached (docs/ledger.md, "Offline stations and the spool").
    static func spoolDirectory(environment: [String: String]) -> String { joinPath(path(environment: environment), "spool") }

    /// The spool of `station`: `<state dir>/spool/<station>.sqlite`.
    static func spool(station: String, environment: [String: String]) -> String {
        StationPaths.spool(station: station, in: spoolDirectory(environment: environment))
    }

    static func locks(environment: [String: String]) -> String { joinPath(path(environment: environment), "locks") }
    static func reports(environment: [String: String]) -> String { joinPath(path(environment: environment), "reports") }
    /// `<state dir>/levels`: the restore records of the sound cards' levels (docs/bench.md).
    static func levels(environment: [String: String]) -> String { joinPath(path(environment: environment), "levels") }

}
