import Foundation
import GrokLedger

/// Opens the ledger a location names for the views that only read it (`ledger show`,
/// `export`, `check`, `fleet status`, `fleet report`): a SQLite file must exist and is
/// opened read-only; a shared ledger on PostgreSQL is read without creating, migrating or
/// closing anything. A damaged file is refused, never repaired.
struct LedgerReading {
    /// The ledger as a store and a fleet snapshot source.
    let store: any LedgerStore & FleetViewSource
    /// Where it is, as errors and people name it (a database without its password).
    let location: String
    /// The SQLite ledger, when it is one (history, export and check differ by backend).
    let file: Ledger?
    let shared: PostgresLedger?

    /// - Throws: ``FleetError/ledgerMissing(path:)`` when nothing was recorded there yet, else
    ///   the ledger's error.
    init(location: String) throws {
        if LedgerLocation.isShared(location) {
            let ledger = try Self.openShared(location)
            self.init(store: ledger, location: ledger.target, file: nil, shared: ledger)
        } else {
            guard FileManager.default.fileExists(atPath: location) else { throw FleetError.ledgerMissing(path: location) }
            let ledger = try Ledger.open(path: location, readOnly: true)
            self.init(store: ledger, location: location, file: ledger, shared: nil)
        }
    }

    private init(store: any LedgerStore & FleetViewSource, location: String, file: Ledger?, shared: PostgresLedger?) {
        self.store = store
        self.location = location
        self.file = file
        self.shared = shared
    }

    /// The shared ledger, read-only; a database without the ledger's tables has nothing recorded.
    private static func openShared(_ location: String) throws -> PostgresLedger {
        do {
            return try PostgresLedger.open(location, station: "grokctl-reader", readOnly: true)
        } catch .cannotOpen(let target, "no_ledger") {
            throw FleetError.ledgerMissing(path: target)
        }
    }

    func device(serial: String) throws(LedgerError) -> DeviceRecord? {
        if let file { return try file.device(serial: serial) }
        return try shared?.device(serial: serial)
    }

    func history(serial: String) throws(LedgerError) -> [HistoryEntry] {
        if let file { return try file.history(serial: serial) }
        return try shared?.history(serial: serial) ?? []
    }

    func export(format: ExportFormat, to path: String, table: LedgerTable?) throws(LedgerError) {
        if let shared {
            try shared.export(format: format, to: path, table: table)
        } else if let file {
            try file.export(format: format, to: path, table: table)
        }
    }
}
