import Foundation
import GrokPostgres

/// What a ledger holds about the fleet, read in one snapshot: the rollout stages and their
/// events, every rollout unit's result, the devices and the smoke tests (docs/fleet.md,
/// "Seeing the fleet"). The SQLite ledger gives one station's part; the shared ledger on
/// PostgreSQL every station's. ``FleetView`` turns it into the figures people read.
public struct FleetSnapshot: Sendable {
    /// A rollout's stage as `rollout_stages` holds it.
    public struct Stage: Sendable, Equatable {
        public var rolloutID: String
        public var release: String?
        public var percentage: Double
        /// `active`, `paused` or `halted`.
        public var state: String
        public var reasonCode: String?
        public var reasonDetail: String
        /// The station whose failures tripped the halt rule.
        public var trippedBy: String?
        public var updatedAt: Date?
        public var updatedBy: String

        public init(rolloutID: String, release: String? = nil, percentage: Double, state: String,
                    reasonCode: String? = nil, reasonDetail: String, trippedBy: String? = nil, updatedAt: Date? = nil,
                    updatedBy: String) {
            self.rolloutID = rolloutID
            self.release = release
            self.percentage = percentage
            self.state = state
            self.reasonCode = reasonCode
            self.reasonDetail = reasonDetail
            self.trippedBy = trippedBy
            self.updatedAt = updatedAt
            self.updatedBy = updatedBy
        }
    }

    /// A change of a stage (`stage_events`): created, paused, resumed, advanced, halted.
    public struct StageEvent: Sendable, Equatable {
        public var rolloutID: String
        public var action: String
        public var percentageBefore: Double?
        public var percentageAfter: Double?
        public var station: String?
        public var actor: String
        public var note: String
        public var at: Date?

        public init(rolloutID: String, action: String, percentageBefore: Double? = nil, percentageAfter: Double? = nil,
                    station: String? = nil, actor: String, note: String, at: Date? = nil) {
            self.rolloutID = rolloutID
            self.action = action
            self.percentageBefore = percentageBefore
            self.percentageAfter = percentageAfter
            self.station = station
            self.actor = actor
            self.note = note
            self.at = at
        }
    }

    /// How one unit a rollout run started ended (`rollout_results`).
    public struct UnitResult: Sendable, Equatable {
        public var rolloutID: String
        public var station: String
        public var serial: String
        /// The stage's percentage when the unit ran.
        public var percentage: Double
        /// `succeeded`, `incomplete` or `failed`.
        public var outcome: String
        public var hardwareRevision: String?
        public var firmwareAfter: String?
        public var finishedAt: Date?

        public init(rolloutID: String, station: String, serial: String, percentage: Double, outcome: String,
                    hardwareRevision: String? = nil, firmwareAfter: String? = nil, finishedAt: Date? = nil) {
            self.rolloutID = rolloutID
            self.station = station
            self.serial = serial
            self.percentage = percentage
            self.outcome = outcome
            self.hardwareRevision = hardwareRevision
            self.firmwareAfter = firmwareAfter
            self.finishedAt = finishedAt
        }
    }

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

    public var stages: [Stage]
    public var events: [StageEvent]
    public var results: [UnitResult]
    public var devices: [Device]
    public var smokeTests: [SmokeTest]

    public init(stages: [Stage] = [], events: [StageEvent] = [], results: [UnitResult] = [], devices: [Device] = [],
                smokeTests: [SmokeTest] = []) {
        self.stages = stages
        self.events = events
        self.results = results
        self.devices = devices
        self.smokeTests = smokeTests
    }
}

/// A ledger the fleet can be seen from: both ``Ledger`` and ``PostgresLedger``.
public protocol FleetViewSource {
    /// Everything ``FleetView`` needs, read in one transaction.
    func fleetSnapshot() throws(LedgerError) -> FleetSnapshot
}

/// The fleet as people see it (`grokctl fleet status`, `fleet report`): per rollout, its
/// stage and why it stopped, its units done, failed, incomplete and pending by station, by
/// hardware revision and by stage, its progress over time and its failure rate against the
/// halt threshold; the firmware versions in the fleet; the smoke tests' read rates.
///
/// A unit counts once, by its latest result in the rollout (a unit re-run after a failure
/// that then succeeds is done). Pending: the ledger's Grokkers the stage's percentage
/// selects that have no result yet; which ones are selected is the caller's rule
/// (GrokFleet's `RolloutSelection`), passed in, so this layer does not depend on the fleet's.
public struct FleetView: Sendable {
    /// Units by how they ended.
    public struct Counts: Sendable, Equatable {
        public var done = 0
        public var failed = 0
        public var incomplete = 0
        public var pending = 0

        public init(done: Int = 0, failed: Int = 0, incomplete: Int = 0, pending: Int = 0) {
            self.done = done
            self.failed = failed
            self.incomplete = incomplete
            self.pending = pending
        }

        /// Units that ran to an end (done, failed or incomplete).
        public var finished: Int { done + failed + incomplete }
        /// Failed of finished; nil before any finished.
        public var failureRate: Double? { finished == 0 ? nil : Double(failed) / Double(finished) }

        mutating func add(_ outcome: String) {
            switch outcome {
            case "succeeded": done += 1
            case "failed": failed += 1
            default: incomplete += 1
            }
        }
    }

    /// The profile's halt rule (`rollout.halt`): the threshold the failure rate is drawn against.
    public struct HaltRule: Sendable, Equatable {
        public var afterDevices: Int
        public var maxFailureRate: Double

        public init(afterDevices: Int, maxFailureRate: Double) {
            self.afterDevices = afterDevices
            self.maxFailureRate = maxFailureRate
        }
    }

    /// Counts under a name (a station, a hardware revision, a stage's percentage).
    public struct Group: Sendable, Equatable {
        public var name: String
        public var counts: Counts

        public init(name: String, counts: Counts) {
            self.name = name
            self.counts = counts
        }
    }

    /// The rollout after each unit finished, in time order.
    public struct ProgressPoint: Sendable, Equatable {
        public var at: Date
        public var done: Int
        public var failed: Int
        public var finished: Int
        public var failureRate: Double { finished == 0 ? 0 : Double(failed) / Double(finished) }
    }

    /// One rollout (one release's staged rollout), as the fleet sees it.
    public struct Rollout: Sendable, Equatable {
        public var id: String
        public var release: String?
        /// The stage's percentage now (the ledger's; the latest unit's when it has no stage row).
        public var percentage: Double
        /// `active`, `paused`, `halted`; nil when only results name the rollout.
        public var state: String?
        public var reasonCode: String?
        public var reasonDetail: String
        public var trippedBy: String?
        public var updatedAt: Date?
        public var updatedBy: String?
        public var totals: Counts
        public var byStation: [Group]
        public var byHardwareRevision: [Group]
        /// Units by the stage (percentage) they ran in; pending belongs to the current one.
        public var byStage: [Group]
        public var progress: [ProgressPoint]
        public var events: [FleetSnapshot.StageEvent]
        public var halt: HaltRule?

        /// Whether the failure rate is above the halt threshold (nil without a rule or a finished unit).
        public var aboveThreshold: Bool? {
            guard let halt, let rate = totals.failureRate else { return nil }
            return rate > halt.maxFailureRate
        }
    }

    /// How many Grokkers run a firmware version (nil: not known yet).
    public struct Tally: Sendable, Equatable {
        public var name: String?
        public var count: Int

        public init(name: String? = nil, count: Int) {
            self.name = name
            self.count = count
        }
    }

    /// A station's smoke tests: how many, how many passed, their read rates.
    public struct ReadRates: Sendable, Equatable {
        public var station: String
        public var tests: Int
        public var passed: Int
        public var minimum: Double
        public var median: Double
        public var maximum: Double

        public init(station: String, tests: Int, passed: Int, minimum: Double, median: Double, maximum: Double) {
            self.station = station
            self.tests = tests
            self.passed = passed
            self.minimum = minimum
            self.median = median
            self.maximum = maximum
        }
    }

    public var rollouts: [Rollout]
    public var firmware: [Tally]
    public var readRates: [ReadRates]
    public var deviceCount: Int
    /// Every station the view names, sorted.
    public var stations: [String]

    /// The view of `snapshot`.
    /// - Parameters:
    ///   - selects: whether rollout `id` at `percentage` selects `serial` (GrokFleet's `RolloutSelection`).
    ///   - haltRules: each rollout's halt rule, when known (from its profile), by rollout id.
    ///   - rollout: only this rollout (nil: all).
    public init(_ snapshot: FleetSnapshot, selects: (_ id: String, _ serial: String, _ percentage: Double) -> Bool,
                haltRules: [String: HaltRule] = [:], rollout only: String? = nil) {
        var ids = snapshot.stages.map(\.rolloutID)
        for result in snapshot.results where !ids.contains(result.rolloutID) { ids.append(result.rolloutID) }
        if let only { ids = ids.filter { $0 == only } }
        ids.sort()
        rollouts = ids.map { id in
            Self.rollout(id, snapshot, stage: snapshot.stages.first { $0.rolloutID == id }, selects: selects, halt: haltRules[id])
        }
        var versions: [String?: Int] = [:]
        for device in snapshot.devices { versions[device.firmware, default: 0] += 1 }
        // Most Grokkers first; at the same count the newer version first.
        firmware = versions.map { Tally(name: $0.key, count: $0.value) }.sorted {
            if $0.count != $1.count { return $0.count > $1.count }
            return Self.versionKey($1.name).lexicographicallyPrecedes(Self.versionKey($0.name))
        }
        var rates: [String: [SmokeTest]] = [:]
        for test in snapshot.smokeTests { rates[test.station, default: []].append(SmokeTest(rate: test.readsPerSecond, passed: test.passed)) }
        readRates = rates.keys.sorted().map { station in
            let tests = rates[station]!
            let sorted = tests.map(\.rate).sorted()
            let middle = sorted.count / 2
            let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
            return ReadRates(station: station, tests: tests.count, passed: tests.filter(\.passed).count,
                             minimum: sorted.first!, median: median, maximum: sorted.last!)
        }
        deviceCount = snapshot.devices.count
        var names = Set(snapshot.smokeTests.map(\.station))
        for rollout in rollouts { names.formUnion(rollout.byStation.map(\.name)) }
        stations = names.sorted()
    }

    private struct SmokeTest {
        var rate: Double
        var passed: Bool
    }

    /// Versions newest first when counts tie (`1.10.0` after `1.9.0`): numeric parts compared as numbers.
    static func versionKey(_ version: String?) -> [Int] {
        (version ?? "").split(separator: ".").map { Int($0) ?? 0 }
    }

    /// Hardware revisions in numeric order (`3` before `10`), then by name.
    static func revisionOrder(_ a: String, _ b: String) -> Bool {
        versionKey(a) == versionKey(b) ? a < b : versionKey(a).lexicographicallyPrecedes(versionKey(b))
    }

    /// The name pending units without a known station are counted under.
    public static let unknownStation = ""

    private static func rollout(_ id: String, _ snapshot: FleetSnapshot, stage: FleetSnapshot.Stage?,
                                selects: (String, String, Double) -> Bool, halt: HaltRule?) -> Rollout {
        let results = snapshot.results.enumerated().filter { $0.element.rolloutID == id }
            .sorted { ($0.element.finishedAt ?? .distantPast, $0.offset) < ($1.element.finishedAt ?? .distantPast, $1.offset) }
            .map(\.element)
        // The latest result of each unit decides how it counts.
        var latest: [String: FleetSnapshot.UnitResult] = [:]
        var progress: [ProgressPoint] = []
        var running = Counts()
        for result in results {
            if let before = latest[result.serial] {
                switch before.outcome {
                case "succeeded": running.done -= 1
                case "failed": running.failed -= 1
                default: running.incomplete -= 1
                }
            }
            latest[result.serial] = result
            running.add(result.outcome)
            if let at = result.finishedAt {
                progress.append(ProgressPoint(at: at, done: running.done, failed: running.failed, finished: running.finished))
            }
        }
        let percentage = stage?.percentage ?? results.last?.percentage ?? 0
        var totals = Counts()
        var stations: [String: Counts] = [:]
        var revisions: [String: Counts] = [:]
        var stages: [Double: Counts] = [:]
        for result in latest.values {
            totals.add(result.outcome)
            stations[result.station, default: Counts()].add(result.outcome)
            revisions[result.hardwareRevision ?? "", default: Counts()].add(result.outcome)
            stages[result.percentage, default: Counts()].add(result.outcome)
        }
        for device in snapshot.devices where latest[device.serial] == nil && selects(id, device.serial, percentage) {
            totals.pending += 1
            stations[device.station ?? unknownStation, default: Counts()].pending += 1
            revisions[device.hardwareRevision ?? "", default: Counts()].pending += 1
            stages[percentage, default: Counts()].pending += 1
        }
        return Rollout(
            id: id, release: stage?.release ?? results.last?.firmwareAfter, percentage: percentage, state: stage?.state,
            reasonCode: stage?.reasonCode, reasonDetail: stage?.reasonDetail ?? "", trippedBy: stage?.trippedBy,
            updatedAt: stage?.updatedAt, updatedBy: stage?.updatedBy, totals: totals,
            byStation: stations.keys.sorted().map { Group(name: $0, counts: stations[$0]!) },
            byHardwareRevision: revisions.keys.sorted(by: revisionOrder).map { Group(name: $0, counts: revisions[$0]!) },
            byStage: stages.keys.sorted().map { Group(name: JSONText.number($0), counts: stages[$0]!) },
            progress: progress, events: snapshot.events.filter { $0.rolloutID == id }, halt: halt)
    }
}

// MARK: Reading the snapshot

extension Ledger: FleetViewSource {
    /// One station's part of the fleet. A file older than schema 5 has no rollout tables:
    /// its stages and results are empty.
    public func fleetSnapshot() throws(LedgerError) -> FleetSnapshot {
        let version = fileVersion
        return try read { (db) throws(LedgerError) -> FleetSnapshot in
            let path = db.path
            var snapshot = FleetSnapshot()
            if version >= 5 {
                snapshot.stages = try db.query(
                    "SELECT \(FleetSQL.stageColumns) FROM rollout_stages ORDER BY rollout_id") { (row) throws(LedgerError) in
                    FleetSnapshot.Stage(
                        rolloutID: try row.required(0, "rollout_stages.rollout_id", path), release: row.text(1),
                        percentage: row.real(2) ?? 0, state: try row.required(3, "rollout_stages.state", path),
                        reasonCode: row.text(4), reasonDetail: row.text(5) ?? "", trippedBy: row.text(6),
                        updatedAt: row.text(7).flatMap(LedgerTime.parse), updatedBy: row.text(8) ?? "")
                }
                snapshot.events = try db.query("SELECT \(FleetSQL.eventColumns) FROM stage_events ORDER BY id") { (row) throws(LedgerError) in
                    FleetSnapshot.StageEvent(
                        rolloutID: try row.required(0, "stage_events.rollout_id", path), action: try row.required(1, "stage_events.action", path),
                        percentageBefore: row.real(2), percentageAfter: row.real(3), station: row.text(4), actor: row.text(5) ?? "",
                        note: row.text(6) ?? "", at: row.text(7).flatMap(LedgerTime.parse))
                }
                snapshot.results = try db.query("SELECT \(FleetSQL.resultColumns) FROM rollout_results ORDER BY id") { (row) throws(LedgerError) in
                    FleetSnapshot.UnitResult(
                        rolloutID: try row.required(0, "rollout_results.rollout_id", path), station: row.text(1) ?? "",
                        serial: try row.required(2, "rollout_results.serial", path), percentage: row.real(3) ?? 0,
                        outcome: try row.required(4, "rollout_results.outcome", path), hardwareRevision: row.text(5),
                        firmwareAfter: row.text(6), finishedAt: row.text(7).flatMap(LedgerTime.parse))
                }
            }
            snapshot.devices = try db.query("""
                SELECT d.serial, d.hardware_revision, d.firmware,
                       (SELECT r.station FROM steps s JOIN runs r ON r.id = s.run_id WHERE s.serial = d.serial ORDER BY s.id DESC LIMIT 1)
                FROM devices d ORDER BY d.serial
                """) { (row) throws(LedgerError) in
                FleetSnapshot.Device(serial: try row.required(0, "devices.serial", path), hardwareRevision: row.text(1),
                                     firmware: row.text(2), station: row.text(3))
            }
            snapshot.smokeTests = try db.query("""
                SELECT t.serial, r.station, t.reads_per_second, t.passed, t.started_at FROM smoke_tests t JOIN runs r ON r.id = t.run_id ORDER BY t.id
                """) { (row) throws(LedgerError) in
                FleetSnapshot.SmokeTest(serial: try row.required(0, "smoke_tests.serial", path), station: row.text(1) ?? "",
                                        readsPerSecond: row.real(2) ?? 0, passed: (row.integer(3) ?? 0) != 0,
                                        startedAt: row.text(4).flatMap(LedgerTime.parse))
            }
            return snapshot
        }
    }
}

extension PostgresLedger: FleetViewSource {
    /// Every station's part of the fleet, in one transaction.
    public func fleetSnapshot() throws(LedgerError) -> FleetSnapshot {
        let target = self.target
        return try read { (db) throws(LedgerError) -> FleetSnapshot in
            func real(_ row: PostgresRow, _ index: Int) throws(LedgerError) -> Double? {
                try Self.run(target) { () throws(PostgresError) in try row.double(index) }
            }
            var snapshot = FleetSnapshot()
            // A shared ledger still at schema 4 (opened read-only, not migrated) has no rollout tables.
            let staged = try Self.query(db, target, "SELECT to_regclass('rollout_results') IS NOT NULL").first?.bool(0) ?? false
            if staged {
            snapshot.stages = try Self.query(db, target, "SELECT \(FleetSQL.stageColumns) FROM rollout_stages ORDER BY rollout_id")
                .map { (row) throws(LedgerError) in
                    FleetSnapshot.Stage(
                        rolloutID: try Self.required(row, 0, "rollout_stages.rollout_id", target), release: row.text(1),
                        percentage: try real(row, 2) ?? 0, state: try Self.required(row, 3, "rollout_stages.state", target),
                        reasonCode: row.text(4), reasonDetail: row.text(5) ?? "", trippedBy: row.text(6),
                        updatedAt: row.text(7).flatMap(LedgerTime.parse), updatedBy: row.text(8) ?? "")
                }
            snapshot.events = try Self.query(db, target, "SELECT \(FleetSQL.eventColumns) FROM stage_events ORDER BY id")
                .map { (row) throws(LedgerError) in
                    FleetSnapshot.StageEvent(
                        rolloutID: try Self.required(row, 0, "stage_events.rollout_id", target),
                        action: try Self.required(row, 1, "stage_events.action", target),
                        percentageBefore: try real(row, 2), percentageAfter: try real(row, 3), station: row.text(4),
                        actor: row.text(5) ?? "", note: row.text(6) ?? "", at: row.text(7).flatMap(LedgerTime.parse))
                }
            snapshot.results = try Self.query(db, target, "SELECT \(FleetSQL.resultColumns) FROM rollout_results ORDER BY id")
                .map { (row) throws(LedgerError) in
                    FleetSnapshot.UnitResult(
                        rolloutID: try Self.required(row, 0, "rollout_results.rollout_id", target), station: row.text(1) ?? "",
                        serial: try Self.required(row, 2, "rollout_results.serial", target), percentage: try real(row, 3) ?? 0,
                        outcome: try Self.required(row, 4, "rollout_results.outcome", target), hardwareRevision: row.text(5),
                        firmwareAfter: row.text(6), finishedAt: row.text(7).flatMap(LedgerTime.parse))
                }
            }
            snapshot.devices = try Self.query(db, target, """
                SELECT d.serial, d.hardware_revision, d.firmware,
                       coalesce(d.last_station, (SELECT s.station FROM steps s WHERE s.serial = d.serial ORDER BY s.id DESC LIMIT 1))
                FROM devices d ORDER BY d.serial
                """).map { (row) throws(LedgerError) in
                FleetSnapshot.Device(serial: try Self.required(row, 0, "devices.serial", target), hardwareRevision: row.text(1),
                                     firmware: row.text(2), station: row.text(3))
            }
            snapshot.smokeTests = try Self.query(db, target, """
                SELECT serial, station, reads_per_second, passed, started_at FROM smoke_tests ORDER BY id
                """).map { (row) throws(LedgerError) in
                FleetSnapshot.SmokeTest(serial: try Self.required(row, 0, "smoke_tests.serial", target), station: row.text(1) ?? "",
                                        readsPerSecond: try real(row, 2) ?? 0, passed: row.bool(3) ?? false,
                                        startedAt: row.text(4).flatMap(LedgerTime.parse))
            }
            return snapshot
        }
    }
}

enum FleetSQL {
    static let stageColumns = "rollout_id, release, percentage, state, reason_code, reason_detail, tripped_by, updated_at, updated_by"
    static let eventColumns = "rollout_id, action, percentage_before, percentage_after, station, actor, note, at"
    static let resultColumns = "rollout_id, station, serial, percentage, outcome, hardware_revision, firmware_after, finished_at"
}
