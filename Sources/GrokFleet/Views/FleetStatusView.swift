import Foundation
import GrokBasics
import GrokLedger
import GrokProtocol

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
        /// The stage's units not finished yet: its whole now (finished and pending) less
        /// `finished`, so the last point's is the rollout's pending count.
        public var pending: Int
        public var failureRate: Double { finished == 0 ? 0 : Double(failed) / Double(finished) }
    }

    /// How the halt rule reads now, in words a manager reads right (`--json`: `judgement`).
    public enum HaltJudgement: Sendable, Equatable {
        /// The rule halted the stage: `failed` of `finished` in its window, above `threshold`
        /// (the rule the stage recorded when it halted).
        case halted(failed: Int, finished: Int, threshold: Double)
        /// No rule is known: the stage was not halted by one, and no `--profile` gave one.
        case noRule
        /// Fewer units finished in the rule's window than it waits for (`after_devices`).
        case tooFew(finished: Int, needed: Int)
        /// Enough finished in the window, and more than the threshold failed (the next
        /// check halts the stage, unless the profile given is not the stations' rule).
        case above(failed: Int, finished: Int, threshold: Double)
        /// Enough finished in the window, and no more than the threshold failed.
        case notAbove(failed: Int, finished: Int, threshold: Double)

        /// The stable code: `halted`, `no_rule`, `too_few`, `above`, `not_above`.
        public var code: String {
            switch self {
            case .halted: "halted"
            case .noRule: "no_rule"
            case .tooFew: "too_few"
            case .above: "above"
            case .notAbove: "not_above"
            }
        }
    }

    /// A rollout's unit whose latest result is a failure, with the step that failed and why.
    public struct FailedUnit: Sendable, Equatable {
        public var serial: String
        public var station: String
        public var finishedAt: Date
        /// The step that failed in that unit's run (nil: the ledger holds no failed step of it).
        public var step: String?
        /// Its stable code (a `fleet_*` code), when recorded.
        public var code: String?
        /// The ledger's text for people, as recorded.
        public var detail: String
        /// The USB port of the sound card it failed on (`1-1.4`), where the ledger has one.
        public var usbPath: String? = nil
    }

    /// How many of a rollout's units finished at one station on one day (in the view's time zone).
    public struct Throughput: Sendable, Equatable {
        public var station: String
        /// The day, `yyyy-MM-dd` in ``FleetStatusView/timeZone``.
        public var day: String
        public var counts: Counts
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
        /// The halt rule the figures are judged by: the one the stage recorded when it halted,
        /// else the `--profile`'s (nil: neither, or a halt recorded before halts kept their
        /// rule, of which only ``threshold`` is known). One rule, so one threshold on every page.
        public var rule: RolloutHaltRule?
        /// The threshold the failure rate is drawn against (0 ... 1): the halt's, else ``rule``'s; nil without either.
        public var threshold: Double?
        /// Where ``threshold`` and ``rule`` come from: `stage` (recorded with the halt) or `profile`.
        public var ruleSource: String?
        /// The halt rule read now: over the rule's window (since the stage was last resumed).
        public var judgement: HaltJudgement
        /// The units whose latest result is a failure, oldest first.
        public var failedUnits: [FailedUnit]
        /// Units finished per station and day, by day then station.
        public var throughput: [Throughput]

        /// The stage's state code (`active`, `paused`, `halted`); nil when only results name the rollout.
        public var state: String? { stageState?.rawValue }
        public var isHalted: Bool { stageState == .halted }

        /// The halt rule's finding, when the rule halted the stage (``GrokLedger/RolloutStage/halt``).
        var haltFinding: RolloutHalt? { stageState == .halted ? RolloutHalt(json: reasonDetail) : nil }

        /// Whether the rule's window is above its threshold: true for a halt and above; nil without a rule.
        public var aboveThreshold: Bool? {
            switch judgement {
            case .halted, .above: true
            case .tooFew, .notAbove: false
            case .noRule: nil
            }
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
            let threshold: Double
            let rule: RolloutHaltRule?
            let source: String
            enum CodingKeys: String, CodingKey {
                case afterDevices = "after_devices", maxFailureRate = "max_failure_rate", windowDevices = "window_devices"
                case windowMinutes = "window_minutes", source
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encodeIfPresent(rule?.afterDevices, forKey: .afterDevices)
                try container.encode(threshold, forKey: .maxFailureRate)
                try container.encodeIfPresent(rule?.windowDevices, forKey: .windowDevices)
                try container.encodeIfPresent(rule?.windowMinutes, forKey: .windowMinutes)
                try container.encode(source, forKey: .source)
            }
        }

        struct JudgementObject: Encodable {
            let judgement: HaltJudgement
            enum CodingKeys: String, CodingKey { case code, failed, finished, needed, threshold }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(judgement.code, forKey: .code)
                switch judgement {
                case .halted(let failed, let finished, let threshold), .above(let failed, let finished, let threshold),
                     .notAbove(let failed, let finished, let threshold):
                    try container.encode(failed, forKey: .failed)
                    try container.encode(finished, forKey: .finished)
                    try container.encode(threshold, forKey: .threshold)
                case .tooFew(let finished, let needed):
                    try container.encode(finished, forKey: .finished)
                    try container.encode(needed, forKey: .needed)
                case .noRule:
                    break
                }
            }
        }

        struct FailedObject: Encodable {
            let unit: FailedUnit
            enum CodingKeys: String, CodingKey {
                case serial, station, step, code, detail, at
                case usbPath = "usb_path"
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(unit.serial, forKey: .serial)
                try container.encode(unit.station, forKey: .station)
                try container.encodeIfPresent(unit.step, forKey: .step)
                try container.encodeIfPresent(unit.code, forKey: .code)
                try container.encode(unit.detail, forKey: .detail)
                try container.encode(Timestamp.iso8601(unit.finishedAt), forKey: .at)
                try container.encodeIfPresent(unit.usbPath, forKey: .usbPath)
            }
        }

        struct EventObject: Encodable {
            let action: String
            let percentageBefore: Double?
            let percentageAfter: Double?
            let station: String?
            let actor: String
            let note: String
            let at: String
            let halt: JudgementObject?
            enum CodingKeys: String, CodingKey {
                case action, station, actor, note, at, halt
                case percentageBefore = "percentage_before", percentageAfter = "percentage_after"
            }
        }

        enum CodingKeys: String, CodingKey {
            case record, id, release, percentage, state, totals, halt, stations, stages, events, judgement
            case failedUnits = "failed_units"
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
            try container.encodeIfPresent(threshold.map { HaltObject(threshold: $0, rule: rule, source: ruleSource ?? "profile") }, forKey: .halt)
            try container.encode(JudgementObject(judgement: judgement), forKey: .judgement)
            try container.encodeIfPresent(aboveThreshold, forKey: .aboveThreshold)
            try container.encode(byStation, forKey: .stations)
            try container.encode(byHardwareRevision, forKey: .hardwareRevisions)
            try container.encode(byStage, forKey: .stages)
            try container.encode(events.map {
                EventObject(action: $0.action, percentageBefore: $0.percentageBefore, percentageAfter: $0.percentageAfter,
                            station: $0.station, actor: $0.actor, note: $0.note, at: Timestamp.iso8601($0.at),
                            halt: $0.halt.map(JudgementObject.init))
            }, forKey: .events)
            try container.encode(failedUnits.map(FailedObject.init), forKey: .failedUnits)
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
    /// The time zone the days of ``Rollout/throughput`` are counted in (and the report's dates are shown in).
    public var timeZone: TimeZone

    /// What a profile tells the view about its rollout: the halt rule, and the regions the
    /// rollout is for (a unit recorded in another region is not pending in it).
    public struct RolloutProfile: Sendable {
        public var halt: RolloutPolicy.HaltRule?
        /// The regions (``GrokProtocol/VendorRegion`` codes: `etsi`, `fcc`) the rollout's units may be in (nil: any).
        public var regions: Set<String>?

        public init(halt: RolloutPolicy.HaltRule? = nil, regions: Set<String>? = nil) {
            self.halt = halt
            self.regions = regions
        }

        /// The profile's `region`: its `set` region, else its allowed ones (nil when it allows all).
        init(_ profile: Profile) {
            halt = profile.rollout?.halt
            if let policy = profile.region {
                if let set = policy.set {
                    regions = [set.code]
                } else if policy.allowed.count < RegionCatalog.all.count {
                    regions = Set(policy.allowed.map(\.code))
                }
            }
        }
    }

    /// The view of the ledger at `location` (read-only), with the halt rule and regions of
    /// `profile`'s rollout when a profile file is given.
    /// - Parameters:
    ///   - rollout: only this rollout (nil: all).
    ///   - timeZone: the days of the throughput are counted in it.
    /// - Throws: ``FleetError/ledgerMissing(path:)``, ``FleetError/noSuchRollout(ledger:rollout:)``,
    ///   the profile's or the ledger's error.
    public init(location: String, rollout: String? = nil, profile: String? = nil, timeZone: TimeZone = .current,
                now: Date = Date()) throws {
        var profiles: [String: RolloutProfile] = [:]
        if let profile {
            let loaded = try Profile.load(path: profile)
            if let policy = loaded.rollout { profiles[policy.id] = RolloutProfile(loaded) }
        }
        let reading = try LedgerReading(location: location)
        self.init(try reading.store.fleetSnapshot(), location: reading.location, selects: { id, serial, percentage in
            RolloutSelection.place(serial: serial, rolloutID: id) < percentage
        }, profiles: profiles, rollout: rollout, timeZone: timeZone, now: now)
        if let rollout, rollouts.isEmpty { throw FleetError.noSuchRollout(ledger: reading.location, rollout: rollout) }
    }

    /// The view of `snapshot`.
    /// - Parameters:
    ///   - selects: whether rollout `id` at `percentage` selects `serial` (``RolloutSelection`` in a real view).
    ///   - profiles: what each rollout's profile says (its halt rule, its regions), when known, by rollout id.
    ///   - rollout: only this rollout (nil: all).
    ///   - now: the time the rule's `window_minutes` is judged at.
    public init(_ snapshot: FleetSnapshot, location: String = "", selects: (_ id: String, _ serial: String, _ percentage: Double) -> Bool,
         profiles: [String: RolloutProfile] = [:], rollout only: String? = nil, timeZone: TimeZone = TimeZone(identifier: "UTC")!,
         now: Date = Date()) {
        self.location = location
        self.timeZone = timeZone
        var ids = Set(snapshot.rollouts.stages.map(\.rolloutID))
        ids.formUnion(snapshot.rollouts.results.map(\.rolloutID))
        if let only { ids = ids.filter { $0 == only } }
        rollouts = ids.sorted().map { id in
            Self.rollout(id, snapshot, stage: snapshot.rollouts.stages.first { $0.rolloutID == id }, selects: selects,
                         profile: profiles[id] ?? RolloutProfile(), timeZone: timeZone, now: now)
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
                                selects: (String, String, Double) -> Bool, profile: RolloutProfile, timeZone: TimeZone,
                                now: Date) -> Rollout {
        let results = snapshot.rollouts.results.enumerated().filter { $0.element.rolloutID == id }
            .sorted { ($0.element.finishedAt, $0.offset) < ($1.element.finishedAt, $1.offset) }
            .map(\.element)
        // The latest result of each unit decides how it counts.
        var latest: [String: RolloutResult] = [:]
        var running = Counts()
        var steps: [(at: Date, counts: Counts)] = []
        for result in results {
            if let before = latest[result.serial] { running.add(before.outcome, -1) }
            latest[result.serial] = result
            running.add(result.outcome)
            steps.append((result.finishedAt, running))
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
        // Pending: selected by the stage now, no result yet, and (when the profile says) in the rollout's regions.
        for device in snapshot.devices where latest[device.serial] == nil && selects(id, device.serial, percentage) {
            if let regions = profile.regions, let region = device.region, !regions.contains(RegionCatalog.find(region)?.code ?? region) {
                continue
            }
            totals.pending += 1
            stations[device.station ?? unknownStation, default: Counts()].pending += 1
            revisions[device.hardwareRevision ?? "", default: Counts()].pending += 1
            stages[percentage, default: Counts()].pending += 1
        }
        let whole = totals.finished + totals.pending
        let progress = steps.map {
            ProgressPoint(at: $0.at, done: $0.counts.done, failed: $0.counts.failed, finished: $0.counts.finished,
                          pending: whole - $0.counts.finished)
        }
        let events = snapshot.rollouts.events.filter { $0.rolloutID == id }
        // One rule: the one the stage recorded when it halted, else the profile's.
        let finding = stage?.halt
        var history = events.map(StageHistoryEntry.init)
        if let finding, let last = history.lastIndex(where: { $0.action == StageAction.halted.rawValue }) {
            history[last].halt = .halted(failed: finding.failed, finished: finding.finished, threshold: finding.threshold)
        }
        let given = profile.halt.map {
            RolloutHaltRule(afterDevices: $0.afterDevices, maxFailureRate: $0.maxFailureRate, windowDevices: $0.windowDevices,
                            windowMinutes: $0.windowMinutes)
        }
        let rule = finding.map { $0.rule } ?? given
        let judgement: HaltJudgement
        if let finding {
            judgement = .halted(failed: finding.failed, finished: finding.finished, threshold: finding.threshold)
        } else if let rule {
            judgement = Self.judge(rule, results: results, since: events.last { $0.action == .resumed }?.at, now: now)
        } else {
            judgement = .noRule
        }
        var failedUnits: [FailedUnit] = []
        for result in latest.values where result.outcome == .failed {
            let failed = snapshot.failedSteps.last { $0.runKey == result.runKey && $0.serial == result.serial }
            failedUnits.append(FailedUnit(serial: result.serial, station: result.station, finishedAt: result.finishedAt, step: failed?.step,
                                          code: failed?.code, detail: failed?.detail ?? "", usbPath: failed?.usbPath))
        }
        failedUnits.sort { ($0.finishedAt, $0.serial) < ($1.finishedAt, $1.serial) }
        return Rollout(
            id: id, release: stage?.release ?? results.last?.firmwareAfter, percentage: percentage, stageState: stage?.state,
            reasonCode: stage?.reasonCode, reasonDetail: stage?.reasonDetail ?? "", trippedBy: stage?.trippedBy,
            updatedAt: stage?.updatedAt, updatedBy: stage?.updatedBy, totals: totals,
            byStation: stations.keys.sorted().map { Group(name: $0, counts: stations[$0]!) },
            byHardwareRevision: revisions.keys.sorted(by: revisionOrder).map { Group(name: $0, counts: revisions[$0]!) },
            byStage: stages.keys.sorted().map { StageGroup(percentage: $0, counts: stages[$0]!) },
            progress: progress, events: history,
            rule: rule, threshold: finding?.threshold ?? rule?.maxFailureRate,
            ruleSource: finding != nil ? "stage" : (given != nil ? "profile" : nil), judgement: judgement,
            failedUnits: failedUnits, throughput: throughput(results, timeZone: timeZone))
    }

    /// The rule over its window as the stations judge it (``GrokLedger/RolloutHaltRule``): the
    /// results finished since the stage was last resumed, in the last `window_minutes`, the last
    /// `window_devices` of them.
    static func judge(_ rule: RolloutHaltRule, results: [RolloutResult], since resumed: Date?, now: Date) -> HaltJudgement {
        let cutoff = rule.cutoff(now: now)
        var window = results.reversed().filter { result in
            (resumed.map { result.finishedAt > $0 } ?? true) && (cutoff.map { result.finishedAt >= $0 } ?? true)
        }
        if let limit = rule.windowDevices { window = Array(window.prefix(limit)) }
        let finished = window.count
        let failed = window.filter { $0.outcome == .failed }.count
        guard finished > 0, finished >= rule.afterDevices else { return .tooFew(finished: finished, needed: max(rule.afterDevices, 1)) }
        return rule.evaluate(window) != nil ? .above(failed: failed, finished: finished, threshold: rule.maxFailureRate)
                                            : .notAbove(failed: failed, finished: finished, threshold: rule.maxFailureRate)
    }

    /// Units finished per station and calendar day in `timeZone` (every result: a re-run counts again).
    static func throughput(_ results: [RolloutResult], timeZone: TimeZone) -> [Throughput] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var counts: [String: [String: Counts]] = [:]
        for result in results {
            let parts = calendar.dateComponents([.year, .month, .day], from: result.finishedAt)
            let day = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
            counts[day, default: [:]][result.station, default: Counts()].add(result.outcome)
        }
        return counts.keys.sorted().flatMap { day in
            counts[day]!.keys.sorted().map { Throughput(station: $0, day: day, counts: counts[day]![$0]!) }
        }
    }
}
