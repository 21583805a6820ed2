import Foundation
import GrokBasics
import GrokCommandLine
import GrokFleet

// MARK: grokctl fleet status

/// The options `fleet status` and `fleet report` share: the ledger, one rollout, a profile's halt rule.
enum FleetViewOptions {
    static let rollout = OptionDeclaration.option("rollout", value: .valueName, help: .optionFleetRollout)
    static let profile = OptionDeclaration.option("profile", value: .valueFile, help: .optionFleetHaltProfile, type: .profile)

    /// `--profile`'s file (a file or a profile's name), checked while parsing.
    static func profileFile(_ values: ParsedValues) throws(CLIError) -> String? {
        guard let name = values.value(profile) else { return nil }
        return try InstallPaths(environment: values.environment).profile(name, option: profile.spelling)
    }

    static func rolloutID(_ values: ParsedValues) throws(CLIError) -> String? {
        guard let value = values.value(rollout) else { return nil }
        guard !value.trimmingCharacters(in: .whitespaces).isEmpty else { throw .invalidValue(value: value, option: rollout.spelling) }
        return value
    }
}

/// `grokctl fleet status [--ledger L] [--rollout ID] [--profile P] [--json]`.
struct FleetStatusCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "status", abstract: .commandFleetStatusAbstract, discussion: .commandFleetStatusDiscussion,
                             options: [FleetOptions.ledger, FleetViewOptions.rollout, FleetViewOptions.profile])
    }

    let ledgerFile: String?
    let rollout: String?
    let profileFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        ledgerFile = values.value(FleetOptions.ledger)
        if let ledgerFile, ledgerFile.isEmpty { throw .invalidValue(value: ledgerFile, option: FleetOptions.ledger.spelling) }
        rollout = try FleetViewOptions.rolloutID(values)
        profileFile = try FleetViewOptions.profileFile(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let view = try FleetStatusView(location: StateDirectory.ledger(option: ledgerFile, environment: context.environment),
                                       rollout: rollout, profile: profileFile)
        let console = context.console
        if console.isJSON {
            for rollout in view.rollouts { console.json(rollout) }
            for tally in view.firmware { console.json(tally) }
            for rates in view.readRates { console.json(rates) }
            return .success
        }
        FleetStatusText(localizer: context.localizer).print(view, to: console)
        return .success
    }
}

/// The status as tables, in the user's language.
struct FleetStatusText {
    let localizer: Localizer
    var language: Language { localizer.language }

    func percent(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : LocaleFormat.decimal(value, digits: 1, language)
    }

    func rate(_ value: Double?) -> String { value.map { LocaleFormat.decimal($0 * 100, digits: 1, language) + " %" } ?? "–" }

    /// A stage's state (`active`, `paused`, `halted`; nil: no stage recorded).
    func state(_ code: String?) -> String {
        guard let code else { return localizer.text(.fleetStateUnknown) }
        return MessageKey(rawValue: "fleet.state." + code).map { localizer.text($0) } ?? code
    }

    /// What changed a stage (`created`, `paused`, `resumed`, `advanced`, `halted`).
    func action(_ code: String) -> String { MessageKey(rawValue: "fleet.action." + code).map { localizer.text($0) } ?? code }

    func station(_ name: String) -> String { name.isEmpty ? localizer.text(.fleetStatusUnknownStation) : name }

    /// How the halt rule reads now: "halted: 3 of 3 failed, above 20 %", "too few finished to
    /// judge: 4 of 10", ... (the rule the stage recorded when it halted, else `--profile`'s).
    func judgement(_ rollout: FleetStatusView.Rollout) -> String { judgement(rollout.judgement) }

    func judgement(_ judgement: FleetStatusView.HaltJudgement) -> String {
        switch judgement {
        case .noRule: localizer.text(.fleetStatusNoThreshold)
        case .halted(let failed, let finished, let threshold):
            localizer.text(.fleetStatusJudgementHalted, String(failed), String(finished), percent(threshold * 100))
        case .above(let failed, let finished, let threshold):
            localizer.text(.fleetStatusJudgementAbove, String(failed), String(finished), percent(threshold * 100))
        case .notAbove(let failed, let finished, let threshold):
            localizer.text(.fleetStatusJudgementNotAbove, String(failed), String(finished), percent(threshold * 100))
        case .tooFew(let finished, let needed):
            localizer.text(.fleetStatusJudgementTooFew, String(finished), String(needed))
        }
    }

    /// Why a stage is halted or paused, in the reader's language: a halt as the runs that met
    /// it said it (the ledger keeps its figures, not a sentence), a pause with who made it.
    func why(_ rollout: FleetStatusView.Rollout) -> String? {
        switch rollout.stopReason {
        case .error(let error)?: localizer.message(for: error)
        case .recorded(let reason)?: localizer.text(.fleetStatusWhy, reason)
        case nil: nil
        }
    }

    /// Who changed a stage; a dash when nobody was named (no `--operator` and no `$USER`).
    func person(_ name: String?) -> String { (name ?? "").isEmpty ? "–" : name! }

    /// Units finished and their failure rate ("no unit finished yet" before any did).
    func finished(_ counts: FleetStatusView.Counts) -> String {
        guard let rate = counts.failureRate else { return localizer.text(.fleetStatusNoneFinished) }
        return localizer.text(.fleetStatusFinished, String(counts.finished), LocaleFormat.decimal(rate * 100, digits: 1, language))
    }

    func summary(_ rollout: FleetStatusView.Rollout) -> String {
        localizer.text(.fleetStatusSummary, finished(rollout.totals), judgement(rollout),
                       localizer.text(.fleetStatusPending, String(rollout.totals.pending)))
    }

    func countsTable(_ title: String, _ groups: [FleetStatusView.Group], total: FleetStatusView.Counts?) -> Table {
        var rows = groups.map { group in
            [group.name, String(group.counts.done), String(group.counts.failed), String(group.counts.incomplete),
             String(group.counts.pending), rate(group.counts.failureRate)]
        }
        if let total {
            rows.append([localizer.text(.fleetStatusTotal), String(total.done), String(total.failed), String(total.incomplete),
                         String(total.pending), rate(total.failureRate)])
        }
        return Table(headers: [title, localizer.text(.fleetColumnDone), localizer.text(.fleetColumnFailed),
                               localizer.text(.fleetColumnIncomplete), localizer.text(.fleetColumnPending),
                               localizer.text(.fleetColumnFailureRate)],
                     rows: rows, alignments: [.left, .right, .right, .right, .right, .right])
    }

    func date(_ value: Date?) -> String { value.map { LocaleFormat.dateTime($0, language) } ?? "–" }

    /// The stage's history (created, halted, paused, resumed, advanced: when, the change of
    /// percentage, station, who, note), as `fleet status` and the report show it; nil when empty.
    func history(_ rollout: FleetStatusView.Rollout, timeZone: TimeZone = .current) -> (headers: [String], rows: [[String]])? {
        guard !rollout.events.isEmpty else { return nil }
        let headers = [localizer.text(.ledgerColumnWhen), localizer.text(.fleetColumnChange), localizer.text(.fleetColumnStage),
                       localizer.text(.fleetColumnStation), localizer.text(.fleetColumnWho), localizer.text(.fleetColumnDetail),
                       localizer.text(.fleetColumnNote)]
        let rows = rollout.events.map { event in
            var stage = [event.percentageBefore, event.percentageAfter].compactMap { $0 }.map { percent($0) + " %" }
            if stage.count == 2, stage[0] == stage[1] { stage.removeFirst() }
            // Why a halt happened: the current halt's figures; a halt since resumed kept none (a dash: not known).
            var why = ""
            if let halt = event.halt {
                why = judgement(halt)
            } else if event.action == "halted" {
                why = "–"
            }
            return [LocaleFormat.dateTime(event.at, language, timeZone: timeZone), action(event.action), stage.joined(separator: " → "),
                    event.station ?? "–", person(event.actor), why, event.note]
        }
        return (headers, rows)
    }

    func print(_ view: FleetStatusView, to console: Console) {
        if view.rollouts.isEmpty { console.print(localizer.text(.fleetStatusNone, view.location)) }
        for rollout in view.rollouts {
            console.print(localizer.text(.fleetStatusRollout, rollout.id, rollout.release ?? "–", percent(rollout.percentage),
                                         state(rollout.state)))
            if let why = why(rollout) { console.print("  " + why) }
            if rollout.isHalted, let tripped = rollout.trippedBy {
                console.print("  " + localizer.text(.fleetStatusTrippedBy, tripped))
            }
            if let by = rollout.updatedBy { console.print("  " + localizer.text(.fleetStatusChanged, date(rollout.updatedAt), person(by))) }
            console.print("  " + summary(rollout))
            console.table(countsTable(localizer.text(.fleetColumnStation),
                                      rollout.byStation.map { FleetStatusView.Group(name: station($0.name), counts: $0.counts) },
                                      total: rollout.totals))
            console.print("")
            console.table(countsTable(localizer.text(.fleetColumnHardwareRevision),
                                      rollout.byHardwareRevision.map { FleetStatusView.Group(name: $0.name.isEmpty ? "–" : $0.name, counts: $0.counts) },
                                      total: nil))
            if rollout.byStage.count > 1 {
                console.print("")
                console.table(countsTable(localizer.text(.fleetColumnStage),
                                          rollout.byStage.map { FleetStatusView.Group(name: percent($0.percentage) + " %", counts: $0.counts) },
                                          total: nil))
            }
            if let history = history(rollout) {
                console.print("")
                console.print("  " + localizer.text(.fleetStatusEvents))
                console.table(Table(headers: history.headers, rows: history.rows))
            }
            console.print("")
        }
        console.print(localizer.text(.fleetStatusFirmware, String(view.deviceCount)))
        console.table(Table(
            headers: [localizer.text(.fleetColumnFirmware), localizer.text(.fleetColumnGrokkers), localizer.text(.fleetColumnShare)],
            rows: view.firmware.map { tally in
                [tally.name ?? localizer.text(.fleetStatusUnknownFirmware), String(tally.count),
                 rate(tally.share)]
            }, alignments: [.left, .right, .right]))
        if !view.readRates.isEmpty {
            console.print("")
            console.print(localizer.text(.fleetStatusReadRates))
            console.table(Table(
                headers: [localizer.text(.fleetColumnStation), localizer.text(.fleetColumnTests), localizer.text(.fleetColumnPassed),
                          localizer.text(.fleetColumnMinimum), localizer.text(.fleetColumnMedian), localizer.text(.fleetColumnMaximum)],
                rows: view.readRates.map { rates in
                    [station(rates.station), String(rates.tests), String(rates.passed), LocaleFormat.decimal(rates.minimum, digits: 1, language),
                     LocaleFormat.decimal(rates.median, digits: 1, language), LocaleFormat.decimal(rates.maximum, digits: 1, language)]
                }, alignments: [.left, .right, .right, .right, .right, .right]))
        }
    }
}
