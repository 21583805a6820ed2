import Foundation
import GrokBasics
import GrokCommandLine
import GrokFleet

/// `grokctl fleet stage ...` at work: the ledger (`--ledger`, `$GROKCTL_LEDGER`, the
/// station's file) read or changed through ``StageJob``, and what it found said in the
/// user's language or, with `--json`, as stable codes.
struct FleetStageRun {
    let context: CommandContext
    let ledgerFile: String?

    private func job(write: Bool) throws -> StageJob {
        try StageJob(location: StateDirectory.ledger(option: ledgerFile, environment: context.environment), write: write,
                     machine: ProcessInfo.processInfo.hostName)
    }

    func show(_ rolloutID: String?) throws -> ExitCode {
        let job = try job(write: false)
        let console = context.console
        let localizer = context.localizer
        guard let rolloutID else {
            let stages = try job.stages()
            if console.isJSON {
                for stage in stages { console.json(stage) }
                return .success
            }
            guard !stages.isEmpty else {
                console.print(localizer.text(.fleetStageNone, job.location))
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
        let (stage, events) = try job.stage(rolloutID)
        if console.isJSON {
            console.json(stage)
            for event in events { console.json(event) }
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
        if let stop = stage.stop {
            rows.append([localizer.text(.fleetStageColumnReason), localizer.message(for: stop)])
        }
        if let trippedBy = stage.trippedBy {
            rows.append([localizer.text(.fleetStageColumnTrippedBy),
                         localizer.text(.fleetStageTrippedBy, trippedBy, String(stage.stationFailures))])
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

    func pause(_ options: FleetStageChangeOptions) throws -> ExitCode {
        try change(options) { job, actor in try job.pause(options.rolloutID, by: actor, note: options.note) } text: { changed in
            context.localizer.text(changed.alreadySo ? .fleetStageAlreadyPaused : .fleetStagePausedDone, options.rolloutID)
        }
    }

    func resume(_ options: FleetStageChangeOptions) throws -> ExitCode {
        try change(options) { job, actor in try job.resume(options.rolloutID, by: actor, note: options.note) } text: { changed in
            context.localizer.text(.fleetStageResumedDone, options.rolloutID, percent(changed.stage.percentage))
        }
    }

    func advance(_ options: FleetStageChangeOptions, to percentage: Double) throws -> ExitCode {
        try change(options) { job, actor in
            try job.advance(options.rolloutID, to: percentage, by: actor, note: options.note)
        } text: { changed in
            context.localizer.text(.fleetStageAdvancedDone, options.rolloutID,
                                   percent(changed.percentageBefore ?? changed.stage.percentage), percent(changed.stage.percentage))
        }
    }

    /// A person's change (by `--operator`, else the user), then the stage (`--json`) or `text` of it.
    private func change(_ options: FleetStageChangeOptions, _ perform: (StageJob, String) throws -> StageJob.Changed,
                        text: (StageJob.Changed) -> String) throws -> ExitCode {
        let changed = try perform(try job(write: true), options.operatorName ?? context.defaultOperator)
        if context.console.isJSON {
            context.console.json(changed.stage)
        } else {
            context.console.print(text(changed))
        }
        return .success
    }

    // MARK: Words

    private func state(_ code: String) -> String {
        MessageKey(rawValue: "fleet.stage.state." + code).map { context.localizer.text($0) } ?? code
    }

    private func action(_ code: String) -> String {
        MessageKey(rawValue: "fleet.stage.action." + code).map { context.localizer.text($0) } ?? code
    }

    private func percent(_ value: Double) -> String {
        let digits = value == value.rounded() ? 0 : (value * 10 == (value * 10).rounded() ? 1 : 2)
        return context.localizer.text(.fleetStagePercent, LocaleFormat.decimal(value, digits: digits, context.localizer.language))
    }

    private func date(_ value: Date) -> String { LocaleFormat.dateTime(value, context.localizer.language) }
}
