import Foundation

// Rollout stages across runs and stations (docs/fleet.md, "Rollout stages across stations";
// the tables are schema version 5's `rollout_stages`, `stage_events` and `rollout_results`).
//
// A staged rollout has one stage row per rollout id, shared by every station that writes
// the ledger: its percentage (which the selection uses once the row exists), and whether it
// is active, paused or halted. Every unit a rollout run started records how it ended; the
// halt rule counts those results over a window, fleet-wide, and the station whose check
// finds it tripped marks the stage halted. The decisions are pure (``RolloutHaltRule``,
// ``RolloutStageDecisions``); each ledger only runs their statements in one transaction.

/// Where a rollout stands.
public enum RolloutStageState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Units start; the selection takes the stage's percentage.
    case active
    /// Stopped by a person (`grokctl fleet stage pause`): no new unit starts.
    case paused
    /// Stopped by the halt rule: no new unit starts until someone resumes it.
    case halted
}

/// What changed a stage, in its history (`stage_events.action`).
public enum StageAction: String, Sendable, Hashable, Codable, CaseIterable {
    case created, paused, resumed, advanced, halted
}

/// How a unit a rollout run started ended, as the halt rule counts it.
public enum RolloutUnitOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// Done: updated, or found on the target already.
    case succeeded
    /// Postponed or refused by policy (not a failure of the release).
    case incomplete
    case failed
}

/// The halt rule of a rollout, over the fleet's results: once the window holds at least
/// `afterDevices` finished units and more than `maxFailureRate` of them failed, the stage halts.
public struct RolloutHaltRule: Sendable, Hashable, Codable {
    enum CodingKeys: String, CodingKey {
        case afterDevices = "after_devices", maxFailureRate = "max_failure_rate", windowDevices = "window_devices"
        case windowMinutes = "window_minutes"
    }

    public var afterDevices: Int
    /// 0 ... 1.
    public var maxFailureRate: Double
    /// The window: the last N finished units of this rollout, every station's (`nil`: every
    /// unit since the stage was last resumed or created).
    public var windowDevices: Int?
    /// Only units finished in the last M minutes count (`nil`: no time limit).
    public var windowMinutes: Double?

    public init(afterDevices: Int, maxFailureRate: Double, windowDevices: Int? = nil, windowMinutes: Double? = nil) {
        self.afterDevices = afterDevices
        self.maxFailureRate = maxFailureRate
        self.windowDevices = windowDevices
        self.windowMinutes = windowMinutes
    }

    /// The earliest finish a unit may have to be in the window at `now` (`nil`: any).
    public func cutoff(now: Date) -> Date? {
        windowMinutes.map { now.addingTimeInterval(-$0 * 60) }
    }

    /// Whether the rule trips over `window` (newest first, already limited to the window:
    /// see ``cutoff(now:)`` and ``windowDevices``). Pure: the run, the dry run and every
    /// station judge the same results the same way.
    public func evaluate(_ window: [RolloutResult]) -> RolloutHalt? {
        let counted = windowDevices.map { Array(window.prefix($0)) } ?? window
        let finished = counted.count
        let failed = counted.filter { $0.outcome == .failed }.count
        guard finished > 0, finished >= afterDevices, Double(failed) / Double(finished) > maxFailureRate else { return nil }
        var byStation: [String: Int] = [:]
        for result in counted where result.outcome == .failed { byStation[result.station, default: 0] += 1 }
        // The station with the most failures; a tie goes to the first name.
        let worst = byStation.min { ($0.value, $1.key) > ($1.value, $0.key) }!
        return RolloutHalt(failed: failed, finished: finished, threshold: maxFailureRate, trippedBy: worst.key,
                           stationFailures: worst.value, rule: self)
    }
}

/// Why the halt rule stopped a stage: kept as data in `rollout_stages.reason_detail` (JSON),
/// so every language can say it, with the rule that halted it (a station's profile's, which
/// the fleet view shows instead of guessing it from another profile).
public struct RolloutHalt: Sendable, Hashable, Codable {
    /// Failed units in the window.
    public var failed: Int
    /// Finished units in the window.
    public var finished: Int
    /// The rule's `max_failure_rate` (0 ... 1).
    public var threshold: Double
    /// The station with the most failures in the window (a tie: the first by name).
    public var trippedBy: String
    /// Its failures in the window.
    public var stationFailures: Int
    /// The rule that halted it (`after_devices`, the window); nil in a halt recorded before
    /// halts kept their rule (only `threshold` is known then).
    public var rule: RolloutHaltRule?

    public init(failed: Int, finished: Int, threshold: Double, trippedBy: String, stationFailures: Int, rule: RolloutHaltRule? = nil) {
        self.failed = failed
        self.finished = finished
        self.threshold = threshold
        self.trippedBy = trippedBy
        self.stationFailures = stationFailures
        self.rule = rule
    }

    enum CodingKeys: String, CodingKey {
        case failed, finished, threshold, rule
        case trippedBy = "tripped_by"
        case stationFailures = "station_failures"
    }

    /// The detail as stored: compact JSON with sorted keys.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// The detail read back; `nil` for text that is not one.
    public init?(json: String) {
        guard let value = try? JSONDecoder().decode(RolloutHalt.self, from: Data(json.utf8)) else { return nil }
        self = value
    }
}

/// A rollout's stage as the ledger holds it (`rollout_stages`).
public struct RolloutStage: Sendable, Hashable {
    public var rolloutID: String
    /// The release the stage rolls out (the profile's firmware target), when known.
    public var release: String?
    /// 0 ... 100: the share of serial numbers the stage selects.
    public var percentage: Double
    public var state: RolloutStageState
    /// Why it is halted or paused (`fleet_halted`, `fleet_stage_paused`), else nil.
    public var reasonCode: String?
    /// For a halt, ``RolloutHalt/json``; for a pause, the person's note.
    public var reasonDetail: String
    /// The station whose failures tripped the halt.
    public var trippedBy: String?
    public var updatedAt: Date
    public var updatedBy: String
    /// False for a stage no rollout run made yet (a dry run's view: the profile's percentage).
    public var inLedger: Bool

    public init(rolloutID: String, release: String?, percentage: Double, state: RolloutStageState, reasonCode: String?,
                reasonDetail: String, trippedBy: String?, updatedAt: Date, updatedBy: String, inLedger: Bool = true) {
        self.rolloutID = rolloutID
        self.release = release
        self.percentage = percentage
        self.state = state
        self.reasonCode = reasonCode
        self.reasonDetail = reasonDetail
        self.trippedBy = trippedBy
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.inLedger = inLedger
    }

    /// The halt rule's finding, when the rule halted the stage.
    public var halt: RolloutHalt? { state == .halted ? RolloutHalt(json: reasonDetail) : nil }
}

/// One change of a stage (`stage_events`), oldest first in a history.
public struct StageEvent: Sendable, Hashable {
    public var id: Int64
    public var rolloutID: String
    public var action: StageAction
    public var percentageBefore: Double?
    public var percentageAfter: Double?
    /// The station whose run made the change (created, halted); nil for a person's command.
    public var station: String?
    /// Who: the operator of the run, or the person who paused, resumed or advanced it.
    public var actor: String
    /// The person's note (`--note`); for the events a run causes, the run's key.
    public var note: String
    public var at: Date

    public init(id: Int64 = 0, rolloutID: String, action: StageAction, percentageBefore: Double?, percentageAfter: Double?,
                station: String?, actor: String, note: String, at: Date) {
        self.id = id
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

/// How one unit of a rollout run ended (`rollout_results`).
public struct RolloutResult: Sendable, Hashable {
    public var rolloutID: String
    /// The run's key (``RunKey``); the ledger stores the run's row.
    public var runKey: String
    public var station: String
    public var serial: String
    /// The stage's percentage the unit was selected by.
    public var percentage: Double
    public var outcome: RolloutUnitOutcome
    public var hardwareRevision: String?
    public var firmwareAfter: String?
    public var finishedAt: Date

    public init(rolloutID: String, runKey: String, station: String, serial: String, percentage: Double,
                outcome: RolloutUnitOutcome, hardwareRevision: String?, firmwareAfter: String?, finishedAt: Date) {
        self.rolloutID = rolloutID
        self.runKey = runKey
        self.station = station
        self.serial = serial
        self.percentage = percentage
        self.outcome = outcome
        self.hardwareRevision = hardwareRevision
        self.firmwareAfter = firmwareAfter
        self.finishedAt = finishedAt
    }
}

/// Every rollout's stage, history and units' results, read in one transaction: a
/// consistent snapshot (``RolloutStageStore/rolloutRecords()``; what GrokFleet's `FleetStatusView` shows).
public struct RolloutRecords: Sendable, Hashable {
    /// Every stage, by rollout id.
    public var stages: [RolloutStage]
    /// Every stage's changes, oldest first.
    public var events: [StageEvent]
    /// Every unit's result, in the order they were recorded.
    public var results: [RolloutResult]

    public init(stages: [RolloutStage] = [], events: [StageEvent] = [], results: [RolloutResult] = []) {
        self.stages = stages
        self.events = events
        self.results = results
    }
}

/// What a station's rollout run knows when it checks its stage: the profile's rollout, who
/// runs it and where.
public struct StageCheck: Sendable, Hashable {
    public var rolloutID: String
    /// The profile's firmware target, recorded when the stage is made.
    public var release: String?
    /// The profile's percentage: the stage's, until the stage exists.
    public var profilePercentage: Double
    /// The profile's halt rule (`nil`: the rule never halts the stage).
    public var rule: RolloutHaltRule?
    public var station: String
    /// The run's operator (who made the stage, whose run saw it halt).
    public var actor: String
    /// The run's key, noted with the events the run causes.
    public var runKey: String
    public var now: Date

    public init(rolloutID: String, release: String?, profilePercentage: Double, rule: RolloutHaltRule?, station: String,
                actor: String, runKey: String, now: Date) {
        self.rolloutID = rolloutID
        self.release = release
        self.profilePercentage = profilePercentage
        self.rule = rule
        self.station = station
        self.actor = actor
        self.runKey = runKey
        self.now = now
    }
}

/// A person's change of a stage (`grokctl fleet stage pause|resume|advance`).
public enum StageChange: Sendable, Hashable {
    case pause
    /// Also clears a halt; the window of the halt rule starts again.
    case resume
    /// Only upward, and only an active stage.
    case advance(to: Double)
}

/// A ledger that keeps rollout stages: the station's SQLite file (the stage is that
/// station's) or the database the stations share (the stage is the fleet's). Each call is
/// one transaction.
public protocol RolloutStageStore: Sendable {
    /// The stage of `rolloutID`, or nil when no rollout run made it.
    func rolloutStage(_ rolloutID: String) throws(LedgerError) -> RolloutStage?
    /// Every stage, by rollout id.
    func rolloutStages() throws(LedgerError) -> [RolloutStage]
    /// The stage's history, oldest first.
    func stageEvents(_ rolloutID: String) throws(LedgerError) -> [StageEvent]
    /// Every unit's result of the rollout, oldest first.
    func rolloutResults(_ rolloutID: String) throws(LedgerError) -> [RolloutResult]
    /// Every rollout's stage, events and results, in one transaction (a ledger without
    /// rollout tables yet, opened read-only, has none).
    func rolloutRecords() throws(LedgerError) -> RolloutRecords
    /// Before a unit starts and before its firmware decision: makes the stage when it is
    /// missing (with the profile's percentage, event `created`), judges the halt rule over
    /// the window and, when it trips an active stage, marks it halted (event `halted`).
    func checkRolloutStage(_ check: StageCheck) throws(LedgerError) -> RolloutStage
    /// The same judgement without writing anything (a dry run): a missing stage is shown
    /// with the profile's percentage (``RolloutStage/inLedger`` false), a tripped rule as halted.
    func previewRolloutStage(_ check: StageCheck) throws(LedgerError) -> RolloutStage
    /// Records how a unit ended, then judges the rule as ``checkRolloutStage(_:)`` does, in
    /// the same transaction (so the result that trips it halts the stage at once).
    func recordRolloutResult(_ result: RolloutResult, _ check: StageCheck) throws(LedgerError) -> RolloutStage
    /// A person's change, with its event.
    /// - Throws: ``LedgerError/noSuchStage(path:rollout:)``, ``LedgerError/stageNotChangeable(path:rollout:state:change:)``,
    ///   ``LedgerError/stageNotUpward(path:rollout:percentage:requested:)``.
    func changeRolloutStage(_ rolloutID: String, _ change: StageChange, by actor: String, note: String, at time: Date) throws(LedgerError) -> RolloutStage
}

// MARK: The decisions, shared by both ledgers

/// The statements the decisions need, inside one open transaction of one ledger.
protocol StageTransaction {
    var location: String { get }
    /// The stage row (on PostgreSQL locked `FOR UPDATE`, so stations take turns).
    func stage(_ rolloutID: String) throws(LedgerError) -> RolloutStage?
    /// Inserts the row unless one exists; whether it did.
    func insertStage(_ stage: RolloutStage) throws(LedgerError) -> Bool
    func updateStage(_ stage: RolloutStage) throws(LedgerError)
    func insertEvent(_ event: StageEvent, recordID: String) throws(LedgerError)
    func insertResult(_ result: RolloutResult, recordID: String) throws(LedgerError)
    /// When the stage was last resumed (nil: never).
    func lastResume(_ rolloutID: String) throws(LedgerError) -> Date?
    /// Results finished after `after` and not before `cutoff`, newest first, at most `limit`.
    func results(_ rolloutID: String, after: Date?, cutoff: Date?, limit: Int?) throws(LedgerError) -> [RolloutResult]
}

enum RolloutStageDecisions {
    /// Record ids for the events one call may write (the shared ledger keeps a retried
    /// transaction once by them).
    static func recordIDs() -> [String] { [UUID().uuidString, UUID().uuidString] }

    /// The stage as the check finds it, and the writes it makes when `write`.
    static func check(_ tx: some StageTransaction, _ check: StageCheck, write: Bool, recordIDs: [String]) throws(LedgerError) -> RolloutStage {
        var stage: RolloutStage
        if let found = try tx.stage(check.rolloutID) {
            stage = found
        } else {
            stage = RolloutStage(rolloutID: check.rolloutID, release: check.release, percentage: check.profilePercentage,
                                 state: .active, reasonCode: nil, reasonDetail: "", trippedBy: nil, updatedAt: check.now,
                                 updatedBy: check.actor, inLedger: write)
            if write {
                if try tx.insertStage(stage) {
                    try tx.insertEvent(StageEvent(rolloutID: check.rolloutID, action: .created, percentageBefore: nil,
                                                  percentageAfter: check.profilePercentage, station: check.station,
                                                  actor: check.actor, note: check.runKey, at: check.now),
                                       recordID: recordIDs[0])
                } else if let raced = try tx.stage(check.rolloutID) {
                    stage = raced
                }
            }
        }
        guard stage.state == .active, let rule = check.rule else { return stage }
        let since = stage.inLedger ? try tx.lastResume(check.rolloutID) : nil
        let window = try tx.results(check.rolloutID, after: since, cutoff: rule.cutoff(now: check.now), limit: rule.windowDevices)
        guard let halt = rule.evaluate(window) else { return stage }
        let before = stage.percentage
        stage.state = .halted
        stage.reasonCode = "fleet_halted"
        stage.reasonDetail = halt.json
        stage.trippedBy = halt.trippedBy
        stage.updatedAt = check.now
        stage.updatedBy = check.actor
        if write {
            try tx.updateStage(stage)
            try tx.insertEvent(StageEvent(rolloutID: check.rolloutID, action: .halted, percentageBefore: before, percentageAfter: before,
                                          station: check.station, actor: check.actor, note: check.runKey, at: check.now),
                               recordID: recordIDs[1])
        }
        return stage
    }

    /// A person's change: pause an active stage; resume a paused or halted one; advance an
    /// active one upward.
    static func change(_ tx: some StageTransaction, _ rolloutID: String, _ change: StageChange, actor: String, note: String,
                       at time: Date, recordID: String) throws(LedgerError) -> RolloutStage {
        guard var stage = try tx.stage(rolloutID) else { throw .noSuchStage(path: tx.location, rollout: rolloutID) }
        let before = stage.percentage
        let action: StageAction
        switch change {
        case .pause:
            guard stage.state == .active else {
                throw .stageNotChangeable(path: tx.location, rollout: rolloutID, state: stage.state.rawValue, change: "pause")
            }
            stage.state = .paused
            stage.reasonCode = "fleet_stage_paused"
            stage.reasonDetail = note
            action = .paused
        case .resume:
            guard stage.state != .active else {
                throw .stageNotChangeable(path: tx.location, rollout: rolloutID, state: stage.state.rawValue, change: "resume")
            }
            stage.state = .active
            stage.reasonCode = nil
            stage.reasonDetail = ""
            stage.trippedBy = nil
            action = .resumed
        case .advance(let percentage):
            guard stage.state == .active else {
                throw .stageNotChangeable(path: tx.location, rollout: rolloutID, state: stage.state.rawValue, change: "advance")
            }
            guard percentage.isFinite, percentage > stage.percentage, percentage <= 100 else {
                throw .stageNotUpward(path: tx.location, rollout: rolloutID, percentage: stage.percentage, requested: percentage)
            }
            stage.percentage = percentage
            action = .advanced
        }
        stage.updatedAt = time
        stage.updatedBy = actor
        try tx.updateStage(stage)
        try tx.insertEvent(StageEvent(rolloutID: rolloutID, action: action, percentageBefore: before, percentageAfter: stage.percentage,
                                      station: nil, actor: actor, note: note, at: time), recordID: recordID)
        return stage
    }
}
