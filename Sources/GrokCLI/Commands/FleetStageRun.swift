import GrokBasics
import Foundation
import GrokFleet
import GrokLedger

/// `grokctl fleet stage ...` at work: opens the ledger (`--ledger`, `$GROKCTL_LEDGER`, the
/// station's file), reads or changes a stage (one transaction with its event), and says
/// what it found in the user's language or, with `--json`, as stable codes.
struct FleetStageRun {
    let context: CommandContext
    let ledgerFile: String?

    private var location: String { StateDirectory.ledger(option: ledgerFile, environment: context.environment) }

    /// The ledger's stages: the shared database (every station's), or the station's file
    /// (which must exist: a stage is made by a rollout run, never by looking).
    private func open(write: Bool) throws -> any RolloutStageStore {
        let location = location
        if LedgerLocation.isShared(location) {
            return try PostgresLedger.open(location, station: ProcessInfo.processInfo.hostName)
        }
        guard FileManager.default.fileExists(atPath: location) else { throw CLIError.ledgerMissing(path: location) }
        return try Ledger.open(path: location, readOnly: !write, heartbeatInterval: nil)
    }

    func show(_ rolloutID: String?) throws -> ExitCode {
        let store = try open(write: false)
        let console = context.console
        let localizer = context.localizer
        guard let rolloutID else {
            let stages = try store.rolloutStages()
            if console.isJSON {
                for stage in stages { console.json(StageObject(stage)) }
                return .success
            }
            guard !stages.isEmpty else {
                console.print(localizer.text(.fleetStageNone, location))
                return .success
            }
            console.print(localizer.text(.fleetStageListHeading, String(stages.count)))
            console.table(Table(
                headers: [localizer.text(.fleetStageColumnRollout), localizer.text(.fleetStageColumnState),
                          localizer.text(.fleetStageColumnPercentage), localizer.text(.fleetStageColumnRelease),
                          localizer.text(.fleetStageColumnUpdated), localizer.text(.fleetStageColumnBy)],
                rows: stages.map { [$0.rolloutID, state($0.state), percent($0.percentage), $0.release ?? "–", date($0.updatedAt),
                                    $0.updatedBy.isEmpty ? "–" : $0.updatedBy] }))
            return .success
        }
        guard let stage = try store.rolloutStage(rolloutID) else {
            throw LedgerError.noSuchStage(path: location, rollout: rolloutID)
        }
        let events = try store.stageEvents(rolloutID)
        if console.isJSON {
            console.json(StageObject(stage))
            for event in events { console.json(StageEventObject(event)) }
            return .success
        }
        console.print(localizer.text(.fleetStageHeading, stage.rolloutID))
        var rows = [
            [localizer.text(.fleetStageColumnState), state(stage.state)],
            [localizer.text(.fleetStageColumnPercentage), percent(stage.percentage)],
            [localizer.text(.fleetStageColumnRelease), stage.release ?? "–"],
            [localizer.text(.fleetStageColumnUpdated), date(stage.updatedAt)],
            [localizer.text(.fleetStageColumnBy), stage.updatedBy.isEmpty ? "–" : stage.updatedBy],
        ]
        if let stop = RolloutStageTracker.stop(stage) {
            rows.append([localizer.text(.fleetStageColumnReason), localizer.message(for: stop)])
        }
        if let trippedBy = stage.trippedBy {
            rows.append([localizer.text(.fleetStageColumnTrippedBy),
                         localizer.text(.fleetStageTrippedBy, trippedBy, String(stage.halt?.stationFailures ?? 0))])
        }
        console.table(Table(headers: [localizer.text(.ledgerColumnField), localizer.text(.ledgerColumnValue)], rows: rows))
        console.print("")
        console.print(localizer.text(.fleetStageHistoryHeading, String(events.count)))
        console.table(Table(
            headers: [localizer.text(.ledgerColumnWhen), localizer.text(.fleetStageColumnAction), localizer.text(.ledgerColumnChange),
                      localizer.text(.ledgerColumnStation), localizer.text(.fleetStageColumnBy), localizer.text(.fleetStageColumnNote)],
            rows: events.map { event in
                let change: String = switch (event.percentageBefore, event.percentageAfter) {
                case (let before?, let after?) where before != after: percent(before) + " → " + percent(after)
                case (_, let after?): percent(after)
                default: "–"
                }
                return [date(event.at), action(event.action), change, event.station ?? "–", event.actor.isEmpty ? "–" : event.actor,
                        event.note.isEmpty ? "–" : event.note]
            }))
        return .success
    }

    func change(_ rolloutID: String, _ change: StageChange, operatorName: String?, note: String) throws -> ExitCode {
        let store = try open(write: true)
        let actor = operatorName ?? context.defaultOperator
        let before = try store.rolloutStage(rolloutID)
        let stage = try store.changeRolloutStage(rolloutID, change, by: actor, note: note, at: Date())
        let console = context.console
        if console.isJSON {
            console.json(StageObject(stage))
            return .success
        }
        let localizer = context.localizer
        switch change {
        case .pause: console.print(localizer.text(.fleetStagePausedDone, rolloutID))
        case .resume: console.print(localizer.text(.fleetStageResumedDone, rolloutID, percent(stage.percentage)))
        case .advance:
            console.print(localizer.text(.fleetStageAdvancedDone, rolloutID, percent(before?.percentage ?? stage.percentage),
                                         percent(stage.percentage)))
        }
        return .success
    }

    // MARK: Words

    private func state(_ state: RolloutStageState) -> String {
        MessageKey(rawValue: "fleet.stage.state." + state.rawValue).map { context.localizer.text($0) } ?? state.rawValue
    }

    private func action(_ action: StageAction) -> String {
        MessageKey(rawValue: "fleet.stage.action." + action.rawValue).map { context.localizer.text($0) } ?? action.rawValue
    }

    private func percent(_ value: Double) -> String {
        let digits = value == value.rounded() ? 0 : (value * 10 == (value * 10).rounded() ? 1 : 2)
        return context.localizer.text(.fleetStagePercent, LocaleFormat.decimal(value, digits: digits, context.localizer.language))
    }

    private func date(_ value: Date) -> String { LocaleFormat.dateTime(value, context.localizer.language) }
}

/// A stage under `--json`: stable codes, numbers as numbers.
struct StageObject: Encodable {
    let record = "stage"
    let rollout: String
    let release: String?
    let percentage: Double
    let state: String
    let reason: String?
    let halt: RolloutHalt?
    let trippedBy: String?
    let updatedAt: String
    let updatedBy: String

    init(_ stage: RolloutStage) {
        rollout = stage.rolloutID
        release = stage.release
        percentage = stage.percentage
        state = stage.state.rawValue
        reason = stage.reasonCode
        halt = stage.halt
        trippedBy = stage.trippedBy
        updatedAt = Timestamp.iso8601(stage.updatedAt)
        updatedBy = stage.updatedBy
    }

    enum CodingKeys: String, CodingKey {
        case record, rollout, release, percentage, state, reason, halt
        case trippedBy = "tripped_by"
        case updatedAt = "updated_at"
        case updatedBy = "updated_by"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(record, forKey: .record)
        try container.encode(rollout, forKey: .rollout)
        try container.encode(release, forKey: .release)
        try container.encode(percentage, forKey: .percentage)
        try container.encode(state, forKey: .state)
        try container.encode(reason, forKey: .reason)
        try container.encode(halt, forKey: .halt)
        try container.encode(trippedBy, forKey: .trippedBy)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(updatedBy, forKey: .updatedBy)
    }
}

/// One event of a stage's history under `--json`.
struct StageEventObject: Encodable {
    let record = "stage_event"
    let rollout: String
    let action: String
    let percentageBefore: Double?
    let percentageAfter: Double?
    let station: String?
    let actor: String
    let note: String
    let at: String

    init(_ event: StageEvent) {
        rollout = event.rolloutID
        action = event.action.rawValue
        percentageBefore = event.percentageBefore
        percentageAfter = event.percentageAfter
        station = event.station
        actor = event.actor
        note = event.note
        at = Timestamp.iso8601(event.at)
    }

    enum CodingKeys: String, CodingKey {
        case record, rollout, action, station, actor, note, at
        case percentageBefore = "percentage_before"
        case percentageAfter = "percentage_after"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(record, forKey: .record)
        try container.encode(rollout, forKey: .rollout)
        try container.encode(action, forKey: .action)
        try container.encode(percentageBefore, forKey: .percentageBefore)
        try container.encode(percentageAfter, forKey: .percentageAfter)
        try container.encode(station, forKey: .station)
        try container.encode(actor, forKey: .actor)
        try container.encode(note, forKey: .note)
        try container.encode(at, forKey: .at)
    }
}
