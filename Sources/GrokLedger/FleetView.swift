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
        /// The region the unit was set to, as last recorded (nil: not set, or not known).
        public var region: String?

        public init(serial: String, hardwareRevision: String? = nil, firmware: String? = nil, station: String? = nil,
                    region: String? = nil) {
            self.serial = serial
            self.hardwareRevision = hardwareRevision
            self.firmware = firmware
            self.station = station
            self.region = region
        }
    }

    /// A step that failed, with its run (to name why a rollout's unit failed).
    public struct FailedStep: Sendable, Equatable {
        /// The run's key (``RunKey``), as ``RolloutResult/runKey`` names it.
        public var runKey: String
        public var serial: String
        public var step: String
        /// Its stable code (a `fleet_*` error code), when one was recorded.
        public var code: String?
        /// The ledger's text for people, as recorded.
        public var detail: String
        public var endedAt: Date
        /// The USB port of the sound card the Grokker was on (`1-1.4`); nil off USB and in
        /// ledgers older than schema 8.
        public var usbPath: String?

        public init(runKey: String, serial: String, step: String, code: String?, detail: String, endedAt: Date, usbPath: String? = nil) {
            self.runKey = runKey
            self.serial = serial
            self.step = step
            self.code = code
            self.detail = detail
            self.endedAt = endedAt
            self.usbPath = usbPath
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
    /// Every step that failed, in the order recorded (a rollout's failed units name theirs by run and serial).
    public var failedSteps: [FailedStep]

    public init(rollouts: RolloutRecords = RolloutRecords(), devices: [Device] = [], smokeTests: [SmokeTest] = [],
                failedSteps: [FailedStep] = []) {
        self.rollouts = rollouts
        self.devices = devices
        self.smokeTests = smokeTests
        self.failedSteps = failedSteps
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
                           (SELECT r.station FROM steps s JOIN runs r ON r.id = s.run_id WHERE s.serial = d.serial ORDER BY s.id DESC LIMIT 1),
                           d.region
                    FROM devices d ORDER BY d.serial
                    """) { (row) throws(LedgerError) in try FleetRows.device(row) },
                smokeTests: try db.rows("""
                    SELECT t.serial, r.station, t.reads_per_second, t.passed, t.started_at
                    FROM smoke_tests t JOIN runs r ON r.id = t.run_id ORDER BY t.id
                    """) { (row) throws(LedgerError) in try FleetRows.smokeTest(row) },
                failedSteps: version >= 4 ? try db.rows("""
                    SELECT r.run_key, s.serial, s.step, s.code, s.detail, s.ended_at, \(version >= 8 ? "s.usb_path" : "NULL")
                    FROM steps s JOIN runs r ON r.id = s.run_id WHERE s.result = 'failed' ORDER BY s.id
                    """) { (row) throws(LedgerError) in try FleetRows.failedStep(row) } : [])
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
                           coalesce(d.last_station, (SELECT s.station FROM steps s WHERE s.serial = d.serial ORDER BY s.id DESC LIMIT 1)),
                           d.region
                    FROM devices d ORDER BY d.serial
                    """) { (row) throws(LedgerError) in try FleetRows.device(row) },
                smokeTests: try Self.rows(db, target, """
                    SELECT serial, station, reads_per_second, passed, started_at FROM smoke_tests ORDER BY id
                    """) { (row) throws(LedgerError) in try FleetRows.smokeTest(row) },
                failedSteps: try Self.rows(db, target, """
                    SELECT r.run_key, s.serial, s.step, s.code, s.detail, s.ended_at, s.usb_path
                    FROM steps s JOIN runs r ON r.id = s.run_id WHERE s.result = 'failed' ORDER BY s.id
                    """) { (row) throws(LedgerError) in try FleetRows.failedStep(row) })
        }
    }
}

/// The view's own projections of a device and a smoke test (with the station), one decoder
/// each over both ledgers' rows.
enum FleetRows {
    /// serial, hardware revision, firmware, station, region.
    static func device(_ row: some LedgerRow) throws(LedgerError) -> FleetSnapshot.Device {
        FleetSnapshot.Device(serial: try row.required(0, "devices.serial"), hardwareRevision: row.text(1), firmware: row.text(2),
                             station: row.text(3), region: row.text(4))
    }

    /// run key, serial, step, code, detail, ended at, USB port.
    static func failedStep(_ row: some LedgerRow) throws(LedgerError) -> FleetSnapshot.FailedStep {
        FleetSnapshot.FailedStep(runKey: try row.required(0, "runs.run_key"), serial: try row.required(1, "steps.serial"),
                                 step: try row.required(2, "steps.step"), code: row.text(3), detail: row.text(4) ?? "",
                                 endedAt: try row.date(5, "steps.ended_at"), usbPath: row.text(6))
    }

    /// serial, station, reads per second, passed, started at.
    static func smokeTest(_ row: some LedgerRow) throws(LedgerError) -> FleetSnapshot.SmokeTest {
        FleetSnapshot.SmokeTest(serial: try row.required(0, "smoke_tests.serial"), station: try row.required(1, "smoke_tests.station"),
                                readsPerSecond: try row.requiredReal(2, "smoke_tests.reads_per_second"),
                                passed: try row.requiredBoolean(3, "smoke_tests.passed"),
                                startedAt: try row.date(4, "smoke_tests.started_at"))
    }
}
