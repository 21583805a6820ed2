import Foundation
import GrokPostgres

/// What a ledger holds about the fleet, read in one snapshot: the rollout stages and their
/// events, every rollout unit's result (the stage store's own records, ``RolloutRecords``),
/// the devices and the smoke tests (docs/fleet.md, "Seeing the fleet"). The SQLite ledger
/// gives one station's part; the shared ledger on PostgreSQL every station's. GrokFleet's
/// `FleetStatusView` turns it into the figures people read.
public struct FleetSnapshot: Sendable {
    /// A Grokker the ledger knows, with the station that saw it last (nil when unknown).
    public struct Device: Sendable, Equatable {
        public var serial: String
        public var hardwareRevision: String?
        public var firmware: String?
        public var station: String?

        public init(serial: String, hardwareRevision: String? = nil, firmware: String? = nil, station: String? = nil) {
            self.serial = serial
            self.hardwareRevision = hardwareRevision
            self.firmware = firmware
            self.station = station
        }
    }

    /// One smoke test's read rate, and the station that ran it.
    public struct SmokeTest: Sendable, Equatable {
        public var serial: String
        public var station: String
        public var readsPerSecond: Double
        public var passed: Bool
        public var startedAt: Date?

        public init(serial: String, station: String, readsPerSecond: Double, passed: Bool, startedAt: Date? = nil) {
            self.serial = serial
            self.station = station
            self.readsPerSecond = readsPerSecond
            self.passed = passed
            self.startedAt = startedAt
        }
    }

    /// Every rollout's stage, events and units' results, as the stage store reads them.
    public var rollouts: RolloutRecords
    public var devices: [Device]
    public var smokeTests: [SmokeTest]

    public init(rollouts: RolloutRecords = RolloutRecords(), devices: [Device] = [], smokeTests: [SmokeTest] = []) {
        self.rollouts = rollouts
        self.devices = devices
        self.smokeTests = smokeTests
    }
}

/// A ledger the fleet can be seen from: both ``Ledger`` and ``PostgresLedger``.
public protocol FleetViewSource {
    /// Everything the fleet's view needs, read in one transaction.
    func fleetSnapshot() throws(LedgerError) -> FleetSnapshot
}

// MARK: Reading the snapshot

extension Ledger: FleetViewSource {
    /// One station's part of the fleet. A file older than schema 5 has no rollout tables:
    /// its stages and results are empty.
    public func fleetSnapshot() throws(LedgerError) -> FleetSnapshot {
        let version = fileVersion
        return try read { (db) throws(LedgerError) -> FleetSnapshot in
            FleetSnapshot(
                rollouts: version >= 5 ? try SQLiteStageTransaction(db: db).records() : RolloutRecords(),
                devices: try db.rows("""
                    SELECT d.serial, d.hardware_revision, d.firmware,
                           (SELECT r.station FROM steps s JOIN runs r ON r.id = s.run_id WHERE s.serial = d.serial ORDER BY s.id DESC LIMIT 1)
                    FROM devices d ORDER BY d.serial
                    """) { (row) throws(LedgerError) in try FleetRows.device(row) },
                smokeTests: try db.rows("""
                    SELECT t.serial, r.station, t.reads_per_second, t.passed, t.started_at
                    FROM smoke_tests t JOIN runs r ON r.id = t.run_id ORDER BY t.id
                    """) { (row) throws(LedgerError) in try FleetRows.smokeTest(row) })
        }
    }
}

extension PostgresLedger: FleetViewSource {
    /// Every station's part of the fleet, in one transaction.
    public func fleetSnapshot() throws(LedgerError) -> FleetSnapshot {
        let target = self.target
        return try read { (db) throws(LedgerError) -> FleetSnapshot in
            FleetSnapshot(
                rollouts: try PostgresStageTransaction(db: db, location: target).records(),
                devices: try Self.rows(db, target, """
                    SELECT d.serial, d.hardware_revision, d.firmware,
                           coalesce(d.last_station, (SELECT s.station FROM steps s WHERE s.serial = d.serial ORDER BY s.id DESC LIMIT 1))
                    FROM devices d ORDER BY d.serial
                    """) { (row) throws(LedgerError) in try FleetRows.device(row) },
                smokeTests: try Self.rows(db, target, """
                    SELECT serial, station, reads_per_second, passed, started_at FROM smoke_tests ORDER BY id
                    """) { (row) throws(LedgerError) in try FleetRows.smokeTest(row) })
        }
    }
}

/// The view's own projections of a device and a smoke test (with the station), one decoder
/// each over both ledgers' rows.
enum FleetRows {
    /// serial, hardware revision, firmware, station.
    static func device(_ row: some LedgerRow) throws(LedgerError) -> FleetSnapshot.Device {
        FleetSnapshot.Device(serial: try row.required(0, "devices.serial"), hardwareRevision: row.text(1), firmware: row.text(2),
                             station: row.text(3))
    }

    /// serial, station, reads per second, passed, started at.
    static func smokeTest(_ row: some LedgerRow) throws(LedgerError) -> FleetSnapshot.SmokeTest {
        FleetSnapshot.SmokeTest(serial: try row.required(0, "smoke_tests.serial"), station: try row.required(1, "smoke_tests.station"),
                                readsPerSecond: try row.requiredReal(2, "smoke_tests.reads_per_second"),
                                passed: try row.requiredBoolean(3, "smoke_tests.passed"),
                                startedAt: try row.date(4, "smoke_tests.started_at"))
    }
}
