import Foundation
import GrokCommandLine
import GrokFleet

// MARK: grokctl ledger sync

/// `grokctl ledger sync [--ledger URI] [--station NAME]`: sends what stations of this machine
/// recorded into their spools while the shared ledger could not be reached
/// (docs/ledger.md, "Offline stations and the spool"), each spooled run once.
struct LedgerSyncCommand: Command {
    static let station = OptionDeclaration.option("station", value: .valueName, help: .optionSyncStation)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "sync", abstract: .commandLedgerSyncAbstract, discussion: .commandLedgerSyncDiscussion,
                             options: [FleetOptions.ledger, station])
    }

    let ledgerFile: String?
    let station: String?

    init(_ values: ParsedValues) throws(CLIError) {
        ledgerFile = values.value(FleetOptions.ledger)
        if let ledgerFile, ledgerFile.trimmingCharacters(in: .whitespaces).isEmpty {
            throw .invalidValue(value: ledgerFile, option: FleetOptions.ledger.spelling)
        }
        station = values.value(Self.station)
        if let station, station.trimmingCharacters(in: .whitespaces).isEmpty {
            throw .invalidValue(value: station, option: Self.station.spelling)
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let environment = context.environment
        let directory = StateDirectory.spoolDirectory(environment: environment)
        let job = try LedgerSyncJob(location: StateDirectory.ledger(option: ledgerFile, environment: environment),
                                    spoolDirectory: directory, station: station)
        let notices = SpoolNotices(console: context.console)
        guard !job.spools.isEmpty else {
            notices.noSpool(station.map { StateDirectory.spool(station: $0, environment: environment) } ?? directory)
            return .success
        }
        // Recorded as the machine's name; each spooled record keeps its own run's station.
        try job.run(machine: ProcessInfo.processInfo.hostName) { notices.synced($0, explicit: true) }
        return .success
    }
}

// MARK: What people are told about the spool

/// The lines about the spool, on the fleet commands and `ledger sync`, localized (with
/// `--json`, events with stable codes).
struct SpoolNotices {
    let console: Console

    /// Said once, when a run opens its ledger: that it spools (and that there is then no
    /// fleet-wide device lock), what was sent from the spool before it started, or why that failed.
    func announce(_ opened: StationLedger) {
        if let spool = opened.spoolPath, let database = opened.unreachable {
            console.warn(.fleetSpoolSpooling, database, spool)
        }
        if let synced = opened.spoolSynced { self.synced(synced, explicit: false) }
        if let failure = opened.syncFailure {
            console.warn(.fleetSpoolSyncFailed, console.localizer.message(for: failure))
        }
    }

    /// Said once, by the run's own thread, when the shared ledger was lost mid-run and the
    /// rest of the run went to the spool (`SpoolFailover`).
    func switched(database: String, spool: String) {
        console.warn(.fleetSpoolSpooling, database, spool)
    }

    func noSpool(_ path: String) {
        if console.isJSON {
            console.json(SpoolSync(noSpoolAt: path))
        } else {
            console.say(.ledgerSyncNoSpool, path)
        }
    }

    /// What a sync sent; at a run's start only when it sent something.
    func synced(_ sync: SpoolSync, explicit: Bool) {
        guard explicit || !sync.isEmpty else { return }
        if console.isJSON {
            console.json(sync)
            return
        }
        if sync.isEmpty {
            console.say(.ledgerSyncNothing, sync.spool ?? "", sync.database ?? "")
            return
        }
        console.say(.fleetSpoolSent, String(sync.sent.count), sync.database ?? "")
        for run in sync.sent where run.sentAs != run.runID {
            console.say(.fleetSpoolRekeyed, run.runID, run.sentAs)
        }
        for key in sync.open { console.say(.fleetSpoolStillOpen, key) }
    }
}
