import Foundation
import GrokPostgres

/// What a ledger holds about the fleet, read in one snapshot: the rollout stages and their
/// events, every rollout unit's result (the stage store's own records, ``RolloutRecords``),
/// the devices and the smoke tests (docs/fleet.md, "Seeing the fleet"). The SQLite ledger
/// gives one station's part; the shared ledger on PostgreSQL every station's. ``FleetView``
/// turns it into the figures people read.
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

        mutating func add(_ outcome: RolloutUnitOutcome, _ units: Int = 1) {
            switch outcome {
            case .succeeded: done += units
            case .failed: failed += units
            case .incomplete: incomplete += units
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

    /// Counts under a name (a station, a hardware revision).
    public struct Group: Sendable, Equatable {
        public var name: String
        public var counts: Counts

        public init(name: String, counts: Counts) {
            self.name = name
            self.counts = counts
        }
    }

    /// Counts of the units that ran at one stage's percentage.
    public struct StageGroup: Sendable, Equatable {
        /// 0 ... 100.
        public var percentage: Double
        public var counts: Counts

        public init(percentage: Double, counts: Counts) {
            self.percentage = percentage
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
        /// Nil when only results name the rollout.
        public var state: RolloutStageState?
        public var reasonCode: String?
        public var reasonDetail: String
        public var trippedBy: String?
        public var updatedAt: Date?
        public var updatedBy: String?
        public var totals: Counts
        public var byStation: [Group]
        public var byHardwareRevision: [Group]
        /// Units by the stage (percentage) they ran in; pending belongs to the current one.
        public var byStage: [StageGroup]
        public var progress: [ProgressPoint]
        public var events: [StageEvent]
        public var halt: HaltRule?

        /// The halt rule's finding, when the rule halted the stage (``RolloutStage/halt``).
        public var haltFinding: RolloutHalt? { state == .halted ? RolloutHalt(json: reasonDetail) : nil }

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
        var ids = Set(snapshot.rollouts.stages.map(\.rolloutID))
        ids.formUnion(snapshot.rollouts.results.map(\.rolloutID))
        if let only { ids = ids.filter { $0 == only } }
        rollouts = ids.sorted().map { id in
            Self.rollout(id, snapshot, stage: snapshot.rollouts.stages.first { $0.rolloutID == id }, selects: selects, halt: haltRules[id])
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

    private static func rollout(_ id: String, _ snapshot: FleetSnapshot, stage: RolloutStage?,
                                selects: (String, String, Double) -> Bool, halt: HaltRule?) -> Rollout {
        let results = snapshot.rollouts.results.enumerated().filter { $0.element.rolloutID == id }
            .sorted { ($0.element.finishedAt, $0.offset) < ($1.element.finishedAt, $1.offset) }
            .map(\.element)
        // The latest result of each unit decides how it counts.
        var latest: [String: RolloutResult] = [:]
        var progress: [ProgressPoint] = []
        var running = Counts()
        for result in results {
            if let before = latest[result.serial] { running.add(before.outcome, -1) }
            latest[result.serial] = result
            running.add(result.outcome)
            progress.append(ProgressPoint(at: result.finishedAt, done: running.done, failed: running.failed, finished: running.finished))
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
            byStage: stages.keys.sorted().map { StageGroup(percentage: $0, counts: stages[$0]!) },
            progress: progress, events: snapshot.rollouts.events.filter { $0.rolloutID == id }, halt: halt)
    }
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
