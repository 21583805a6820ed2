import Foundation
import GrokPostgres

/// A ledger the fleet engine records into: the SQLite file of one station (``Ledger``) or
/// the database many stations share (``PostgresLedger``). The same records and the same
/// guarantees (each call one transaction); what differs is where it lives.
public protocol LedgerStore: RunRecorder {
    /// Where it is, as errors name it: the file's path, or the connection string without
    /// its password.
    var location: String { get }
    func recordReport(_ run: RunID, path reportPath: String) throws(LedgerError)
    func run(_ id: RunID) throws(LedgerError) -> RunRecord?
    func run(key: String) throws(LedgerError) -> RunRecord?
    func runs(limit: Int?) throws(LedgerError) -> [RunRecord]
    func steps(run: RunID?, serial: String?) throws(LedgerError) -> [StepRecord]
    func devices() throws(LedgerError) -> [DeviceRecord]
    @discardableResult
    func recordIntent(run: RunID, serial: String, step: String, target: String, at time: Date) throws(LedgerError) -> Int64
    func intents(serial: String?, openOnly: Bool) throws(LedgerError) -> [IntentRecord]
    @discardableResult
    func resolveIntent(_ id: Int64, outcome: IntentOutcome, by resolver: RunID, step: StepRecord?, at time: Date) throws(LedgerError) -> Bool
    /// Takes the fleet-wide lock on `serial` for `run` (a ledger the stations share): nil
    /// when taken, or who holds it when another station's live run does. A station's own
    /// file has no fleet-wide lock (nil: taken).
    func lockFleetWide(serial: String, run: RunID) throws(LedgerError) -> PostgresLedger.DeviceHolder?
    /// Records a link setting a station learned (``LinkSettingRecord``).
    func recordLinkSetting(_ record: LinkSettingRecord) throws(LedgerError)
    /// The newest link setting of each Grokker and sound-card model.
    func linkSettings() throws(LedgerError) -> [LinkSettingRecord]
}

public extension LedgerStore {
    func lockFleetWide(serial: String, run: RunID) throws(LedgerError) -> PostgresLedger.DeviceHolder? { nil }
}

extension Ledger: LedgerStore {
    public var location: String { path }
}

extension PostgresLedger: LedgerStore {
    public var location: String { target }
    public func lockFleetWide(serial: String, run: RunID) throws(LedgerError) -> DeviceHolder? { try lockDevice(serial, run: run) }
}

/// Which ledger a `--ledger` value (or `GROKCTL_LEDGER`) names.
public enum LedgerLocation {
    /// Whether `location` names a PostgreSQL database (`postgresql://` or `postgres://`, as
    /// libpq takes them) rather than a file.
    public static func isShared(_ location: String) -> Bool {
        location.hasPrefix("postgresql://") || location.hasPrefix("postgres://")
    }

    /// `location` as people are shown it: a database's password masked (`***`, in the
    /// `user:password@` part and any `password=` parameter), a file as it is. Every place
    /// that shows a ledger's address (`grokctl paths`, messages, the spool's notices) goes
    /// through this or through the opened ledger's ``LedgerStore/location``, which is masked
    /// the same way.
    public static func shown(_ location: String) -> String {
        isShared(location) ? PostgresConnection.redacted(location) : location
    }

    /// Opens the ledger `location` names for writing: the shared database, recording as
    /// `station`, or the SQLite file.
    public static func open(_ location: String, station: String) throws(LedgerError) -> any LedgerStore {
        if isShared(location) { return try PostgresLedger.open(location, station: station) }
        return try Ledger.open(path: location)
    }
}
