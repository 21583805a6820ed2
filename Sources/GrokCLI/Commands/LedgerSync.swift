import Foundation
import GrokFleet
import GrokLedger

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
        let location = StateDirectory.ledger(option: ledgerFile, environment: environment)
        guard LedgerLocation.isShared(location) else { throw LedgerError.syncNeedsShared(path: location) }
        let directory = StateDirectory.spoolDirectory(environment: environment)
        let spools: [String]
        if let station {
            spools = [StateDirectory.spool(station: station, environment: environment)].filter { FileManager.default.fileExists(atPath: $0) }
        } else {
            spools = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                .filter { $0.hasSuffix(".sqlite") }.sorted().map { StateDirectory.join(directory, $0) }
        }
        let notices = SpoolNotices(console: context.console)
        guard !spools.isEmpty else {
            notices.noSpool(station.map { StateDirectory.spool(station: $0, environment: environment) } ?? directory)
            return .success
        }
        // Recorded as the machine's name; each spooled record keeps its own run's station.
        let shared = try PostgresLedger.open(location, station: ProcessInfo.processInfo.hostName)
        defer { shared.close() }
        for path in spools {
            let spool = try Spool.open(path: path)
            notices.synced(try spool.sync(to: shared), spool: path, database: shared.target, explicit: true)
        }
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
        if let spool = opened.spool, let database = opened.unreachable {
            console.warn(.fleetSpoolSpooling, database, spool.path)
        }
        if let synced = opened.synced {
            let database = (opened.ledger as? SpoolFailover)?.shared.target ?? opened.location
            self.synced(synced, spool: nil, database: database, explicit: false)
        }
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
            console.json(SyncObject(spool: path, database: nil, sent: [], open: [], alreadySent: 0))
        } else {
            console.say(.ledgerSyncNoSpool, path)
        }
    }

    /// What a sync sent; at a run's start only when it sent something.
    func synced(_ report: Spool.SyncReport, spool: String?, database: String, explicit: Bool) {
        guard explicit || !report.sent.isEmpty || !report.open.isEmpty else { return }
        if console.isJSON {
            console.json(SyncObject(spool: spool, database: database,
                                    sent: report.sent.map { .init(runID: $0.key, sentAs: $0.sharedKey, wasThere: $0.wasThere, steps: $0.steps) },
                                    open: report.open, alreadySent: report.alreadySent))
            return
        }
        if report.sent.isEmpty, report.open.isEmpty {
            console.say(.ledgerSyncNothing, spool ?? "", database)
            return
        }
        console.say(.fleetSpoolSent, String(report.sent.count), database)
        for run in report.sent where run.sharedKey != run.key {
            console.say(.fleetSpoolRekeyed, run.key, run.sharedKey)
        }
        for key in report.open { console.say(.fleetSpoolStillOpen, key) }
    }

    /// `--json`: `{"event":"spool_synced", ...}`.
    struct SyncObject: Encodable {
        struct Run: Encodable {
            let runID: String
            let sentAs: String
            let wasThere: Bool
            let steps: Int
            enum CodingKeys: String, CodingKey {
                case steps
                case runID = "run_id", sentAs = "sent_as", wasThere = "was_there"
            }
        }
        let event = "spool_synced"
        let spool: String?
        let database: String?
        let sent: [Run]
        let open: [String]
        let alreadySent: Int
        enum CodingKeys: String, CodingKey {
            case event, spool, database, sent, open
            case alreadySent = "already_sent"
        }
    }
}
