import GrokBasics
import Foundation
import GrokFirmware
import GrokLedger

/// `grokctl ledger sync`: sends what stations of this machine recorded into their spools
/// while the shared ledger could not be reached (docs/ledger.md, "Offline stations and the
/// spool"), each spooled run once (``GrokLedger/Spool/sync(to:)``).
public struct LedgerSyncJob {
    /// The shared ledger (`postgresql://...`).
    public let location: String
    /// The spool files to send, in name order.
    public let spools: [String]

    /// The spools of every station in `spoolDirectory`, or only `station`'s (when it has one).
    /// - Throws: ``GrokLedger/LedgerError/syncNeedsShared(path:)`` when `location` is not a shared database.
    public init(location: String, spoolDirectory: String, station: String?) throws {
        guard LedgerLocation.isShared(location) else { throw LedgerError.syncNeedsShared(path: location) }
        self.location = location
        if let station {
            spools = [StationPaths.spool(station: station, in: spoolDirectory)].filter { FileManager.default.fileExists(atPath: $0) }
        } else {
            spools = ((try? FileManager.default.contentsOfDirectory(atPath: spoolDirectory)) ?? [])
                .filter { $0.hasSuffix(".sqlite") }.sorted().map { joinPath(spoolDirectory, $0) }
        }
    }

    /// Sends each spool in turn, recording as `machine` (each spooled record keeps its own
    /// run's station), and hands what each sent to `synced` as soon as it is sent.
    /// - Throws: the ledger's error; the spools before the one that failed stay sent.
    public func run(machine: String, synced: (SpoolSync) -> Void) throws {
        guard !spools.isEmpty else { return }
        let shared = try PostgresLedger.open(location, station: machine)
        defer { shared.close() }
        for path in spools {
            synced(SpoolSync(try Spool.open(path: path).sync(to: shared), spool: path, database: shared.target))
        }
    }
}

/// What one sync of a spool sent. `--json`: `{"event":"spool_synced", ...}`.
public struct SpoolSync: Sendable, Equatable, Encodable {
    /// A run sent now: its key in the spool, its key in the shared ledger (another station's
    /// run may have had the first), whether the database held it already, its steps.
    public struct Run: Sendable, Equatable, Encodable {
        public var runID: String
        public var sentAs: String
        public var wasThere: Bool
        public var steps: Int

        enum CodingKeys: String, CodingKey {
            case steps
            case runID = "run_id", sentAs = "sent_as", wasThere = "was_there"
        }
    }

    /// The spool sent (nil: the one a run sent before it started).
    public var spool: String?
    /// The shared ledger, without its password (nil: nothing to send to).
    public var database: String?
    public var sent: [Run]
    /// Runs still open in the spool (spooling now): left for a later sync.
    public var open: [String]
    /// Runs sent by an earlier sync.
    public var alreadySent: Int

    init(_ report: Spool.SyncReport, spool: String?, database: String) {
        self.spool = spool
        self.database = database
        sent = report.sent.map { Run(runID: $0.key, sentAs: $0.sharedKey, wasThere: $0.wasThere, steps: $0.steps) }
        open = report.open
        alreadySent = report.alreadySent
    }

    /// Nothing to send: no spool at `spool`.
    public init(noSpoolAt spool: String) {
        self.spool = spool
        database = nil
        sent = []
        open = []
        alreadySent = 0
    }

    /// Whether the sync sent something or left a run for later.
    public var isEmpty: Bool { sent.isEmpty && open.isEmpty }

    enum CodingKeys: String, CodingKey {
        case event, spool, database, sent, open
        case alreadySent = "already_sent"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("spool_synced", forKey: .event)
        try container.encodeIfPresent(spool, forKey: .spool)
        try container.encodeIfPresent(database, forKey: .database)
        try container.encode(sent, forKey: .sent)
        try container.encode(open, forKey: .open)
        try container.encode(alreadySent, forKey: .alreadySent)
    }
}

extension StationLedger {
    /// The spool this run records into (the shared ledger could not be reached), or nil.
    public var spoolPath: String? { spool?.path }

    /// What was sent from this station's spool before the run started, to the shared ledger
    /// (without its password).
    public var spoolSynced: SpoolSync? {
        synced.map { SpoolSync($0, spool: nil, database: (ledger as? SpoolFailover)?.shared.target ?? location) }
    }
}
