import Foundation
import GrokBasics
import GrokLedger

/// `grokctl fleet stage ...`: the rollout stages a ledger keeps (docs/fleet.md, "Rollout
/// stages across stations"): every stage, one stage with its history, and a person's
/// change (pause, resume, advance), each change one transaction with its event.
public struct StageJob {
    private let store: any RolloutStageStore
    /// Where the stages are, as given (`--ledger`, `$GROKCTL_LEDGER`, the station's file).
    public let location: String

    /// Opens the stages of the ledger at `location`: the shared database (every station's;
    /// recording as `machine`), or the station's file, read-only unless `write`. A file must
    /// exist: a stage is made by a rollout run, never by looking.
    /// - Throws: ``FleetError/ledgerMissing(path:)``, or the ledger's error.
    public init(location: String, write: Bool, machine: String) throws {
        self.location = location
        if LedgerLocation.isShared(location) {
            store = try PostgresLedger.open(location, station: machine)
        } else {
            guard FileManager.default.fileExists(atPath: location) else { throw FleetError.ledgerMissing(path: location) }
            store = try Ledger.open(path: location, readOnly: !write, heartbeatInterval: nil)
        }
    }

    /// Every stage, by rollout id.
    public func stages() throws -> [StageSummary] {
        try store.rolloutStages().map(StageSummary.init)
    }

    /// The stage of `rolloutID` and its history, oldest first.
    /// - Throws: ``GrokLedger/LedgerError/noSuchStage(path:rollout:)`` when no rollout run made it.
    public func stage(_ rolloutID: String) throws -> (stage: StageSummary, history: [StageHistoryEntry]) {
        guard let stage = try store.rolloutStage(rolloutID) else { throw LedgerError.noSuchStage(path: location, rollout: rolloutID) }
        return (StageSummary(stage), try store.stageEvents(rolloutID).map(StageHistoryEntry.init))
    }

    /// What a change did: the stage's percentage before it (nil: no stage) and the stage after.
    public struct Changed: Sendable, Equatable {
        public var percentageBefore: Double?
        public var stage: StageSummary
        /// The stage was already as asked (a pause of a paused stage): nothing was changed or
        /// recorded, and that is no failure (as `systemctl stop` of a stopped unit).
        public var alreadySo = false
    }

    /// Stops the stage: no new unit starts until someone resumes it. A paused stage stays
    /// paused (``Changed/alreadySo``); a halted one is refused (resume it first).
    public func pause(_ rolloutID: String, by actor: String, note: String, at time: Date = Date()) throws -> Changed {
        try change(rolloutID, .pause, by: actor, note: note, at: time)
    }

    /// Lets units start again (also after a halt).
    public func resume(_ rolloutID: String, by actor: String, note: String, at time: Date = Date()) throws -> Changed {
        try change(rolloutID, .resume, by: actor, note: note, at: time)
    }

    /// Raises the stage's percentage to `percentage` (upward only).
    public func advance(_ rolloutID: String, to percentage: Double, by actor: String, note: String, at time: Date = Date()) throws -> Changed {
        try change(rolloutID, .advance(to: percentage), by: actor, note: note, at: time)
    }

    private func change(_ rolloutID: String, _ change: StageChange, by actor: String, note: String, at time: Date) throws -> Changed {
        let before = try store.rolloutStage(rolloutID)
        if let before, case .pause = change, before.state == .paused {
            return Changed(percentageBefore: before.percentage, stage: StageSummary(before), alreadySo: true)
        }
        let stage = try store.changeRolloutStage(rolloutID, change, by: actor, note: note, at: time)
        return Changed(percentageBefore: before?.percentage, stage: StageSummary(stage))
    }
}

/// A rollout's stage. `--json`: `{"record":"stage", ...}` (nulls written out).
public struct StageSummary: Sendable, Equatable, Encodable {
    public var rolloutID: String
    public var release: String?
    /// 0 ... 100.
    public var percentage: Double
    /// `active`, `paused` or `halted`.
    public var state: String
    /// Why no unit may start (halted, paused), as the runs say it; nil while active.
    public var stop: FleetError?
    /// The station whose failures tripped the halt, and how many of the window's failures were its.
    public var trippedBy: String?
    public var stationFailures: Int
    public var updatedAt: Date
    /// Empty when nobody was named.
    public var updatedBy: String
    private var reasonCode: String?
    private var halt: RolloutHalt?

    init(_ stage: RolloutStage) {
        rolloutID = stage.rolloutID
        release = stage.release
        percentage = stage.percentage
        state = stage.state.rawValue
        stop = RolloutStageTracker.stop(stage)
        trippedBy = stage.trippedBy
        stationFailures = stage.halt?.stationFailures ?? 0
        updatedAt = stage.updatedAt
        updatedBy = stage.updatedBy
        reasonCode = stage.reasonCode
        halt = stage.halt
    }

    enum CodingKeys: String, CodingKey {
        case record, rollout, release, percentage, state, reason, halt
        case trippedBy = "tripped_by"
        case updatedAt = "updated_at"
        case updatedBy = "updated_by"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("stage", forKey: .record)
        try container.encode(rolloutID, forKey: .rollout)
        try container.encode(release, forKey: .release)
        try container.encode(percentage, forKey: .percentage)
        try container.encode(state, forKey: .state)
        try container.encode(reasonCode, forKey: .reason)
        try container.encode(halt, forKey: .halt)
        try container.encode(trippedBy, forKey: .trippedBy)
        try container.encode(Timestamp.iso8601(updatedAt), forKey: .updatedAt)
        try container.encode(updatedBy, forKey: .updatedBy)
    }
}

/// One change of a stage, oldest first in a history. `--json`: `{"record":"stage_event", ...}` (nulls written out).
public struct StageHistoryEntry: Sendable, Equatable, Encodable {
    public var rolloutID: String
    /// `created`, `paused`, `resumed`, `advanced` or `halted`.
    public var action: String
    public var percentageBefore: Double?
    public var percentageAfter: Double?
    /// The station that made the change (nil: not known).
    public var station: String?
    public var actor: String
    public var note: String
    public var at: Date
    /// Why the rule halted the stage, for the `halted` change that halted it as it stands
    /// now (the stage keeps its current halt's figures and rule; a halt since resumed keeps
    /// none, so nil there: not known). Not part of `fleet stage show --json`.
    public var halt: FleetStatusView.HaltJudgement?

    init(_ event: StageEvent) {
        rolloutID = event.rolloutID
        action = event.action.rawValue
        percentageBefore = event.percentageBefore
        percentageAfter = event.percentageAfter
        station = event.station
        actor = event.actor
        note = event.note
        at = event.at
    }

    enum CodingKeys: String, CodingKey {
        case record, rollout, action, station, actor, note, at
        case percentageBefore = "percentage_before"
        case percentageAfter = "percentage_after"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("stage_event", forKey: .record)
        try container.encode(rolloutID, forKey: .rollout)
        try container.encode(action, forKey: .action)
        try container.encode(percentageBefore, forKey: .percentageBefore)
        try container.encode(percentageAfter, forKey: .percentageAfter)
        try container.encode(station, forKey: .station)
        try container.encode(actor, forKey: .actor)
        try container.encode(note, forKey: .note)
        try container.encode(Timestamp.iso8601(at), forKey: .at)
    }
}
