import Foundation
import GrokLedger

/// The ledger a run records into, as ``open(location:station:mode:offline:spoolPath:)``
/// found it: the station's file, the shared database (after sending what this station
/// spooled while it was away), or, when the database cannot be reached and the profile says
/// `"offline": "spool"`, the station's spool.
public struct StationLedger: Sendable {
    /// Where the run records (``FleetRunner``'s recorder).
    public let ledger: any LedgerStore
    /// The spool the run records into because the shared database could not be reached;
    /// nil when it records where `--ledger` says. While spooling there is no fleet-wide
    /// device lock.
    public let spool: Spool?
    /// The shared database that could not be reached (without its password), when spooling.
    public let unreachable: String?
    /// What was sent from this station's spool before the run started (the database was back).
    public let synced: Spool.SyncReport?
    /// Why sending the spool at the start failed (the run goes ahead; `grokctl ledger sync` retries).
    public let syncFailure: LedgerError?

    /// Where the run's records go, as people are shown it: the file, the database without
    /// its password, or the spool file.
    public var location: String { ledger.location }
}

extension StationLedger {
    /// Opens the ledger `location` names for a run of `mode` by `station`.
    ///
    /// A file is opened as always. A shared database (`postgresql://`) that answers is opened,
    /// and first this station's spool at `spoolPath`, if there is one, is sent to it
    /// (``Spool/sync(to:)``: each spooled run once). One that cannot be reached
    /// (``LedgerError/cannotOpen(path:detail:)``) is:
    /// - for a rollout, always ``FleetError/ledgerOfflineRollout(database:detail:)`` (its halt
    ///   rule needs every station's results);
    /// - with `offline` `.refuse`, ``FleetError/ledgerOffline(database:detail:)``;
    /// - with `.spool`, the spool at `spoolPath` (created if needed), a SQLite ledger.
    /// Any of these is thrown before a Grokker is touched. `reconnectSeconds` is how long the
    /// shared database may stop answering before it counts as lost (the profile's
    /// `station.ledger_reconnect_s`).
    public static func open(location: String, station: String, mode: FleetMode,
                            offline: Profile.StationConfig.Offline, spoolPath: String,
                            reconnectSeconds: Double = Profile.StationConfig.defaultLedgerReconnectSeconds) throws -> StationLedger {
        guard LedgerLocation.isShared(location) else {
            return StationLedger(ledger: try LedgerLocation.open(location, station: station), spool: nil,
                                 unreachable: nil, synced: nil, syncFailure: nil)
        }
        let shared: PostgresLedger
        do {
            shared = try PostgresLedger.open(location, station: station, reconnectSeconds: reconnectSeconds)
        } catch {
            guard case .cannotOpen(let database, let detail) = error else { throw error }
            if mode == .rollout { throw FleetError.ledgerOfflineRollout(database: database, detail: detail) }
            guard offline == .spool else { throw FleetError.ledgerOffline(database: database, detail: detail) }
            let spool = try Spool.open(path: spoolPath)
            return StationLedger(ledger: spool.ledger, spool: spool, unreachable: database,
                                 synced: nil, syncFailure: nil)
        }
        var synced: Spool.SyncReport?
        var failure: LedgerError?
        if FileManager.default.fileExists(atPath: spoolPath) {
            do throws(LedgerError) {
                synced = try Spool.open(path: spoolPath).sync(to: shared)
            } catch {
                failure = error
            }
        }
        // With spool (not a rollout), a database lost for good mid-run hands the rest of the
        // run to the spool (SpoolFailover).
        let store: any LedgerStore = offline == .spool && mode != .rollout ? SpoolFailover(shared: shared, spoolPath: spoolPath) : shared
        return StationLedger(ledger: store, spool: nil, unreachable: nil, synced: synced, syncFailure: failure)
    }
}

extension StationLedger {
    /// The ledger a dry run reads its history from (it writes nothing): the file when it
    /// exists, the shared database, or, when that cannot be reached, the same refusal a run
    /// would meet (``open(location:station:mode:offline:spoolPath:)``), or with
    /// `spool` the station's spool read-only (nil when there is none yet).
    public static func openForPlan(location: String, station: String, mode: FleetMode,
                                   offline: Profile.StationConfig.Offline, spoolPath: String,
                                   reconnectSeconds: Double = Profile.StationConfig.defaultLedgerReconnectSeconds) throws -> (any LedgerStore)? {
        guard LedgerLocation.isShared(location) else {
            return FileManager.default.fileExists(atPath: location) ? try LedgerLocation.open(location, station: station) : nil
        }
        do {
            return try PostgresLedger.open(location, station: station, reconnectSeconds: reconnectSeconds)
        } catch {
            guard case .cannotOpen(let database, let detail) = error else { throw error }
            if mode == .rollout { throw FleetError.ledgerOfflineRollout(database: database, detail: detail) }
            guard offline == .spool else { throw FleetError.ledgerOffline(database: database, detail: detail) }
            guard FileManager.default.fileExists(atPath: spoolPath) else { return nil }
            return try Ledger.open(path: spoolPath, readOnly: true)
        }
    }
}
