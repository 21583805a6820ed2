import Foundation
import GrokBasics
import GrokLedger

/// The fleet as people see it (`grokctl fleet status`, `fleet report`): per rollout, its
/// stage and why it stopped, its units done, failed, incomplete and pending by station, by
/// hardware revision and by stage, its progress over time and its failure rate against the
/// halt threshold; the firmware versions in the fleet; the smoke tests' read rates
/// (docs/fleet.md, "Seeing the fleet"). Read from one ``GrokLedger/FleetSnapshot``: a
/// station's SQLite file gives its part, the shared ledger every station's.
///
/// A unit counts once, by its latest result in the rollout (a unit re-run after a failure
/// that then succeeds is done). Pending: the ledger's Grokkers the stage's percentage
/// selects (``RolloutSelection``) that have no result yet.
///
/// Each part's `Encodable` form is its line of `fleet status --json` (stable codes,
/// figures as numbers, a failure rate of null while no unit finished).
public struct FleetStatusView: Sendable {
    /// Units by how they ended.
    public struct Counts: Sendable, Equatable, Encodable {
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

        enum CodingKeys: String, CodingKey {
            case done, failed, incomplete, pending, finished
            case failureRate = "failure_rate"
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(done, forKey: .done)
            try container.encode(failed, forKey: .failed)
            try container.encode(incomplete, forKey: .incomplete)
            try container.encode(pending, forKey: .pending)
            try container.encode(finished, forKey: .finished)
            // null, not left out, while no unit finished.
            try container.encode(failureRate, forKey: .failureRate)
        }
    }

    /// Counts under a name (a station, a hardware revision; "" when not known).
    public struct Group: Sendable, Equatable, Encodable {
        public var name: String
        public var counts: Counts

        public init(name: String, counts: Counts) {
            self.name = name
            self.counts = counts
        }
    }

    /// Counts of the units that ran at one stage's percentage (`--json`: `name` is the percentage, a number).
    public struct StageGroup: Sendable, Equatable, Encodable {
        /// 0 ... 100.
        public var percentage: Double
        public var counts: Counts

        public init(percentage: Double, counts: Counts) {
            self.percentage = percentage
            self.counts = counts
        }

        enum CodingKeys: String, CodingKey { case name = "name", counts }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(percentage, forKey: .name)
            try container.encode(counts, forKey: .counts)
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

    /// Why a rollout's stage lets no unit start.
    public enum StopReason: Sendable, Equatable {
        /// As the runs said it: the halt rule's finding (the ledger keeps its figures, not a
        /// sentence), or a pause with who made it.
        case error(FleetError)
        /// A halt recorded without figures: its reason code and detail as stored.
        case recorded(String)
    }

    /// One rollout (one release's staged rollout), as the fleet sees it. `--json`: `{"record":"rollout", ...}`.
    public struct Rollout: Sendable, Equatable, Encodable {
        public var id: String
        public var release: String?
        /// The stage's percentage now (the ledger's; the latest unit's when it has no stage row).
        public var percentage: Double
        /// Nil when only results name the rollout.
        var stageState: RolloutStageState?
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
        public var events: [StageHistoryEntry]
        /// The profile's halt rule, when one was given: the threshold the failure rate is drawn against.
        public var halt: RolloutPolicy.HaltRule?

        /// The stage's state code (`active`, `paused`, `halted`); nil when only results name the rollout.
        public var state: String? { stageState?.rawValue }
        public var isHalted: Bool { stageState == .halted }

        /// The halt rule's finding, when the rule halted the stage (``GrokLedger/RolloutStage/halt``).
        var haltFinding: RolloutHalt? { stageState == .halted ? RolloutHalt(json: reasonDetail) : nil }

        /// Whether the failure rate is above the halt threshold (nil without a rule or a finished unit).
        public var aboveThreshold: Bool? {
            guard let halt, let rate = totals.failureRate else { return nil }
            return rate > halt.maxFailureRate
        }

        /// Whether the threshold shows as crossed: above it, with at least as many units
        /// finished as the rule waits for.
        public var thresholdCrossed: Bool {
            guard let halt else { return false }
            return aboveThreshold == true && totals.finished >= halt.afterDevices
        }

        /// Why the stage is halted or paused.
        public var stopReason: StopReason? {
            if let halt = haltFinding {
                return .error(.halted(rollout: id, failed: halt.failed, finished: halt.finished, threshold: halt.threshold,
                                      trippedBy: halt.trippedBy, stationFailures: halt.stationFailures))
            }
            if stageState == .paused {
                return .error(.stagePaused(rollout: id, by: (updatedBy ?? "").isEmpty ? "–" : updatedBy!))
            }
            guard stageState == .halted else { return nil }
            let why = [reasonCode, reasonDetail.isEmpty ? nil : reasonDetail].compactMap { $0 }
            return why.isEmpty ? nil : .recorded(why.joined(separator: ": "))
        }

        struct HaltObject: Encodable {
            let afterDevices: Int
            let maxFailureRate: Double
            enum CodingKeys: String, CodingKey { case afterDevices = "after_devices", maxFailureRate = "max_failure_rate" }
        }

        struct EventObject: Encodable {
            let action: String
            let percentageBefore: Double?
            let percentageAfter: Double?
            let station: String?
            let actor: String
            let note: String
            let at: String
            enum CodingKeys: String, CodingKey {
                case action, station, actor, note, at
                case percentageBefore = "percentage_before", percentageAfter = "percentage_after"
            }
        }

        enum CodingKeys: String, CodingKey {
            case record, id, release, percentage, state, totals, halt, stations, stages, events
            case reasonCode = "reason_code", reasonDetail = "reason_detail", trippedBy = "tripped_by", updatedAt = "updated_at"
            case updatedBy = "updated_by", aboveThreshold = "above_threshold", hardwareRevisions = "hardware_revisions"
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("rollout", forKey: .record)
            try container.encode(id, forKey: .id)
            try container.encodeIfPresent(release, forKey: .release)
            try container.encode(percentage, forKey: .percentage)
            try container.encodeIfPresent(state, forKey: .state)
            try container.encodeIfPresent(reasonCode, forKey: .reasonCode)
            try container.encode(reasonDetail, forKey: .reasonDetail)
            try container.encodeIfPresent(trippedBy, forKey: .trippedBy)
            try container.encodeIfPresent(updatedAt.map { Timestamp.iso8601($0) }, forKey: .updatedAt)
            try container.encodeIfPresent(updatedBy, forKey: .updatedBy)
            try container.encode(totals, forKey: .totals)
            try container.encodeIfPresent(halt.map { HaltObject(afterDevices: $0.afterDevices, maxFailureRate: $0.maxFailureRate) },
                                          forKey: .halt)
            try container.encodeIfPresent(aboveThreshold, forKey: .aboveThreshold)
            try container.encode(byStation, forKey: .stations)
            try container.encode(byHardwareRevision, forKey: .hardwareRevisions)
            try container.encode(byStage, forKey: .stages)
            try container.encode(events.map {
                EventObject(action: $0.action, percentageBefore: $0.percentageBefore, percentageAfter: $0.percentageAfter,
                            station: $0.station, actor: $0.actor, note: $0.note, at: Timestamp.iso8601($0.at))
            }, forKey: .events)
        }
    }

    /// How many Grokkers run a firmware version (nil: not known yet). `--json`: `{"record":"firmware", ...}`.
    public struct Tally: Sendable, Equatable, Encodable {
        public var name: String?
        public var count: Int
        /// Its share of the fleet's Grokkers (0 ... 1).
        public var share: Double

        public init(name: String? = nil, count: Int, share: Double) {
            self.name = name
            self.count = count
            self.share = share
        }

        enum CodingKeys: String, CodingKey { case record, version, devices }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("firmware", forKey: .record)
            try container.encodeIfPresent(name, forKey: .version)
            try container.encode(count, forKey: .devices)
        }
    }

    /// A station's smoke tests: how many, how many passed, their read rates. `--json`: `{"record":"smoke_tests", ...}`.
    public struct ReadRates: Sendable, Equatable, Encodable {
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

        enum CodingKeys: String, CodingKey {
            case record, station, tests, passed
            case minimum = "reads_per_second_min", median = "reads_per_second_median", maximum = "reads_per_second_max"
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("smoke_tests", forKey: .record)
            try container.encode(station, forKey: .station)
            try container.encode(tests, forKey: .tests)
            try container.encode(passed, forKey: .passed)
            try container.encode(minimum, forKey: .minimum)
            try container.encode(median, forKey: .median)
            try container.encode(maximum, forKey: .maximum)
        }
    }

    /// The ledger read, as people are shown it (a database without its password).
    public var location: String
    public var rollouts: [Rollout]
    public var firmware: [Tally]
    public var readRates: [ReadRates]
    public var deviceCount: Int
    /// Every station the view names, sorted.
    public var stations: [String]

    /// The view of the ledger at `location` (read-only), with the halt rule of `profile`'s
    /// rollout when a profile file is given.
    /// - Parameter rollout: only this rollout (nil: all).
    /// - Throws: ``FleetError/ledgerMissing(path:)``, ``FleetError/noSuchRollout(ledger:rollout:)``,
    ///   the profile's or the ledger's error.
    public init(location: String, rollout: String? = nil, profile: String? = nil) throws {
        var haltRules: [String: RolloutPolicy.HaltRule] = [:]
        if let profile, let policy = try Profile.load(path: profile).rollout, let halt = policy.halt { haltRules[policy.id] = halt }
        let reading = try LedgerReading(location: location)
        self.init(try reading.store.fleetSnapshot(), location: reading.location, selects: { id, serial, percentage in
            RolloutSelection.place(serial: serial, rolloutID: id) < percentage
        }, haltRules: haltRules, rollout: rollout)
        if let rollout, rollouts.isEmpty { throw FleetError.noSuchRollout(ledger: reading.location, rollout: rollout) }
    }

    /// The view of `snapshot`.
    /// - Parameters:
    ///   - selects: whether rollout `id` at `percentage` selects `serial` (``RolloutSelection`` in a real view).
    ///   - haltRules: each rollout's halt rule, when known (from its profile), by rollout id.
    ///   - rollout: only this rollout (nil: all).
    init(_ snapshot: FleetSnapshot, location: String = "", selects: (_ id: String, _ serial: String, _ percentage: Double) -> Bool,
         haltRules: [String: RolloutPolicy.HaltRule] = [:], rollout only: String? = nil) {
        self.location = location
        var ids = Set(snapshot.rollouts.stages.map(\.rolloutID))
        ids.formUnion(snapshot.rollouts.results.map(\.rolloutID))
        if let only { ids = ids.filter { $0 == only } }
        rollouts = ids.sorted().map { id in
            Self.rollout(id, snapshot, stage: snapshot.rollouts.stages.first { $0.rolloutID == id }, selects: selects, halt: haltRules[id])
        }
        var versions: [String?: Int] = [:]
        for device in snapshot.devices { versions[device.firmware, default: 0] += 1 }
        let devices = snapshot.devices.count
        // Most Grokkers first; at the same count the newer version first.
        firmware = versions.map { Tally(name: $0.key, count: $0.value, share: Double($0.value) / Double(devices)) }.sorted {
            if $0.count != $1.count { return $0.count > $1.count }
            return Self.versionKey($1.name).lexicographicallyPrecedes(Self.versionKey($0.name))
        }
        var rates: [String: [(rate: Double, passed: Bool)]] = [:]
        for test in snapshot.smokeTests { rates[test.station, default: []].append((test.readsPerSecond, test.passed)) }
        readRates = rates.keys.sorted().map { station in
            let tests = rates[station]!
            let sorted = tests.map(\.rate).sorted()
            let middle = sorted.count / 2
            let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
            return ReadRates(station: station, tests: tests.count, passed: tests.filter(\.passed).count,
                             minimum: sorted.first!, median: median, maximum: sorted.last!)
        }
        deviceCount = devices
        var names = Set(snapshot.smokeTests.map(\.station))
        for rollout in rollouts { names.formUnion(rollout.byStation.map(\.name)) }
        stations = names.sorted()
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
                                selects: (String, String, Double) -> Bool, halt: RolloutPolicy.HaltRule?) -> Rollout {
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
            id: id, release: stage?.release ?? results.last?.firmwareAfter, percentage: percentage, stageState: stage?.state,
            reasonCode: stage?.reasonCode, reasonDetail: stage?.reasonDetail ?? "", trippedBy: stage?.trippedBy,
            updatedAt: stage?.updatedAt, updatedBy: stage?.updatedBy, totals: totals,
            byStation: stations.keys.sorted().map { Group(name: $0, counts: stations[$0]!) },
            byHardwareRevision: revisions.keys.sorted(by: revisionOrder).map { Group(name: $0, counts: revisions[$0]!) },
            byStage: stages.keys.sorted().map { StageGroup(percentage: $0, counts: stages[$0]!) },
            progress: progress, events: snapshot.rollouts.events.filter { $0.rolloutID == id }.map(StageHistoryEntry.init),
            halt: halt)
    }
}
