import Foundation
import GrokBasics
import GrokCommandLine
import GrokFleet

/// `grokctl ledger show`: the latest runs and every device, or one run and its steps, or
/// (`--serial`) one device and its history, oldest first. Dates in the user's language and
/// local time. Read-only: showing never creates, migrates or repairs anything, and a damaged
/// ledger is refused. A shared ledger on PostgreSQL shows every station's runs.
func runLedgerShow(_ command: LedgerShowCommand, _ context: CommandContext) throws -> ExitCode {
    let query = try LedgerQuery(location: StateDirectory.ledger(option: command.ledgerFile, environment: context.environment))
    let console = context.console
    let words = LedgerWords(localizer: context.localizer)
    let localizer = context.localizer

    if let key = command.runKey {
        let (run, steps) = try query.run(key: key)
        if console.isJSON {
            console.json(run)
            for step in steps { console.json(step) }
            return .success
        }
        console.print(localizer.text(.ledgerRunHeading, run.key))
        console.table(Table(headers: [localizer.text(.ledgerColumnField), localizer.text(.ledgerColumnValue)], rows: [
            [localizer.text(.ledgerColumnKind), words.kind(run.kind)],
            [localizer.text(.ledgerColumnProfile), run.profile],
            [localizer.text(.ledgerColumnStation), run.station],
            [localizer.text(.ledgerColumnOperator), run.operatorName.isEmpty ? "–" : run.operatorName],
            [localizer.text(.ledgerColumnStarted), words.date(run.startedAt)],
            [localizer.text(.ledgerColumnEnded), words.date(run.endedAt)],
            [localizer.text(.fleetColumnResult), words.outcome(run.outcome)],
            [localizer.text(.ledgerColumnReport), run.reportPath ?? "–"],
        ]))
        console.print("")
        console.print(localizer.text(.ledgerStepsHeading, String(steps.count)))
        console.table(Table(
            headers: [localizer.text(.ledgerColumnWhen), localizer.text(.fleetColumnSerial), localizer.text(.fleetColumnStep),
                      localizer.text(.fleetColumnResult)],
            rows: steps.map { [words.date($0.at), $0.serial, words.event($0.event).step, words.event($0.event).result] }))
        return .success
    }

    if let serial = command.serialNumber {
        let (device, history) = try query.device(serial: serial)
        if console.isJSON {
            console.json(device)
            for entry in history { console.json(entry) }
            return .success
        }
        console.print(localizer.text(.ledgerDeviceHeading, device.serial))
        console.table(Table(headers: [localizer.text(.ledgerColumnField), localizer.text(.ledgerColumnValue)], rows: [
            [localizer.text(.fleetColumnFirmware), device.firmware ?? "–"],
            [localizer.text(.fleetColumnRegion), localizer.regionDisplay(device.region)],
            [localizer.text(.ledgerColumnHardware), [device.hardwareType, device.hardwareRevision].compactMap { $0 }.joined(separator: " ")],
            [localizer.text(.ledgerColumnProvisioned), words.yes(device.provisioned)],
            [localizer.text(.ledgerColumnFirstSeen), words.date(device.firstSeen)],
            [localizer.text(.ledgerColumnLastSeen), words.date(device.lastSeen)],
        ]))
        console.print("")
        console.print(localizer.text(.ledgerHistoryHeading))
        console.table(Table(headers: [localizer.text(.ledgerColumnWhen), localizer.text(.ledgerColumnRun),
                                      localizer.text(.ledgerColumnKind), localizer.text(.fleetColumnStep),
                                      localizer.text(.fleetColumnResult), localizer.text(.ledgerColumnChange)],
                            rows: history.map { entry in
                                let (step, result, change) = words.event(entry.event)
                                return [words.date(entry.at), entry.run, words.kind(entry.kind), step, result, change]
                            }))
        return .success
    }

    let (runs, devices) = try query.overview(limit: command.limit)
    if console.isJSON {
        for run in runs { console.json(run) }
        for device in devices { console.json(device) }
        return .success
    }
    console.print(localizer.text(.ledgerRunsHeading, String(runs.count)))
    console.table(Table(
        headers: [localizer.text(.ledgerColumnRun), localizer.text(.ledgerColumnKind), localizer.text(.ledgerColumnProfile),
                  localizer.text(.ledgerColumnStation), localizer.text(.ledgerColumnOperator), localizer.text(.ledgerColumnStarted),
                  localizer.text(.ledgerColumnEnded), localizer.text(.fleetColumnResult)],
        rows: runs.map { [$0.key, words.kind($0.kind), $0.profile, $0.station, $0.operatorName.isEmpty ? "–" : $0.operatorName,
                          words.date($0.startedAt), words.date($0.endedAt), words.outcome($0.outcome)] }))
    console.print("")
    console.print(localizer.text(.ledgerDevicesHeading, String(devices.count)))
    console.table(Table(
        headers: [localizer.text(.fleetColumnSerial), localizer.text(.fleetColumnFirmware), localizer.text(.fleetColumnRegion),
                  localizer.text(.ledgerColumnProvisioned), localizer.text(.ledgerColumnLastSeen)],
        rows: devices.map { [$0.serial, $0.firmware ?? "–", localizer.regionDisplay($0.region), words.yes($0.provisioned),
                             words.date($0.lastSeen)] }))
    return .success
}

/// The ledger's codes and dates in the user's language.
private struct LedgerWords {
    let localizer: Localizer

    func date(_ value: Date?) -> String { value.map { LocaleFormat.dateTime($0, localizer.language) } ?? "–" }
    func kind(_ code: String) -> String { MessageKey(rawValue: "ledger.kind." + code).map { localizer.text($0) } ?? code }
    func outcome(_ code: String?) -> String { code.map { localizer.runOutcome(code: $0) } ?? localizer.text(.ledgerUnfinished) }
    func result(_ code: String) -> String { MessageKey(rawValue: "fleet.result." + code).map { localizer.text($0) } ?? code }
    func step(_ name: String) -> String { MessageKey(rawValue: "fleet.step." + name).map { localizer.text($0) } ?? name }
    func yes(_ value: Bool) -> String { localizer.text(value ? .ledgerYes : .ledgerNo) }

    /// A history entry's step, result and change columns.
    func event(_ event: LedgerHistoryItem.Event) -> (step: String, result: String, change: String) {
        switch event {
        case .step(let name, let code, _, let change):
            let shown: String = switch change {
            case .firmware(let before, let after)?: "\(before) → \(after)"
            case .region(let before, let after)?: localizer.regionDisplay(before) + " → " + localizer.regionDisplay(after)
            case nil: ""
            }
            return (step(name), result(code), shown)
        case .smokeTest(let afterStep, let passed, let readsPerSecond):
            let rate = LocaleFormat.decimal(readsPerSecond, digits: 1, localizer.language)
            return (localizer.text(.ledgerSmokeTestAfter, step(afterStep)), localizer.text(passed ? .fleetSmokePassed : .fleetSmokeFailed, rate), "")
        }
    }
}

/// `grokctl ledger export --csv|--json`: one table as CSV (default `steps`), or JSON (every
/// table, or one), to `--output` or standard output.
func runLedgerExport(_ command: LedgerExportCommand, _ context: CommandContext) throws -> ExitCode {
    let query = try LedgerQuery(location: StateDirectory.ledger(option: command.ledgerFile, environment: context.environment))
    guard let output = command.outputFile else {
        context.console.write(try query.export(command.format, table: command.table))
        return .success
    }
    try query.export(command.format, table: command.table, to: output)
    context.console.say(.ledgerExported, output, to: .standardError)
    return .success
}

/// `grokctl ledger check`: the full read-only check; exit 0 when sound, else the error (exit 1)
/// names the problem and the way to recover. On a shared ledger (`postgresql://...`), what
/// makes sense on a server: the schema version, the runs left open (by a live station, by one
/// that is gone, or not seen for over ten minutes) and rows naming what does not exist; exit 0
/// when nothing calls for action, else 1.
func runLedgerCheck(_ command: LedgerCheckCommand, _ context: CommandContext) throws -> ExitCode {
    let finding = try LedgerCheck.check(location: StateDirectory.ledger(option: command.ledgerFile, environment: context.environment))
    let console = context.console
    let localizer = context.localizer
    switch finding {
    case .file(let report):
        if console.isJSON {
            console.json(report)
            return .success
        }
        let rows = { (table: String) in String(report.rows[table] ?? 0) }
        console.print(localizer.text(
            .ledgerCheckSound, report.path, String(report.schemaVersion), String(report.pages), rows("runs"), String(report.openRuns),
            rows("steps"), rows("smoke_tests"), rows("devices"), String(report.walCommits)))
        return .success
    case .shared(let report):
        if console.isJSON {
            console.json(report)
            return report.isSound ? .success : .failure
        }
        let rows = { (table: String) in String(report.rows[table] ?? 0) }
        console.print(localizer.text(
            .ledgerCheckShared, report.target, String(report.schemaVersion), rows("runs"), String(report.openRunsAlive), rows("steps"),
            rows("smoke_tests"), rows("devices"), rows("rollout_results")))
        if !report.openRunsDead.isEmpty {
            console.print(localizer.text(.ledgerCheckDeadRuns, String(report.openRunsDead.count), report.openRunsDead.joined(separator: ", ")))
        }
        if !report.staleRuns.isEmpty {
            console.print(localizer.text(.ledgerCheckStaleRuns, String(report.staleRuns.count), report.staleRuns.joined(separator: ", ")))
        }
        for (table, count) in report.foreignRows.sorted(by: { $0.key < $1.key }) where count > 0 {
            console.print(localizer.text(.ledgerCheckForeignRows, String(count), table))
        }
        if report.isSound { console.print(localizer.text(.ledgerCheckSharedSound)) }
        return report.isSound ? .success : .failure
    }
}

/// `grokctl ledger recover`: salvages what is readable into `--output` (default
/// `<ledger>.recovered`), says what was lost and how to put the new file in place. Exit 0
/// when nothing was lost, 1 otherwise.
func runLedgerRecover(_ command: LedgerRecoverCommand, _ context: CommandContext) throws -> ExitCode {
    let path = try StateDirectory.ledger(option: command.ledgerFile, environment: context.environment)
    let output = command.outputFile ?? path + ".recovered"
    let report = try LedgerCheck.recover(location: path, to: output)
    let console = context.console
    let localizer = context.localizer
    if console.isJSON {
        console.json(report)
        return report.isComplete ? .success : .failure
    }
    let count = { (table: String) in String(report.recovered[table] ?? 0) }
    console.print(localizer.text(.ledgerRecovered, path, output, count("runs"), count("steps"), count("smoke_tests"), count("devices")))
    if let problem = report.problem { console.print(localizer.text(.ledgerRecoverProblem, localizer.message(for: problem))) }
    for lost in report.lostRows {
        console.print(localizer.text(.ledgerRecoverLostRows, lost.table, String(lost.count), rangesText(lost.ranges)))
    }
    if !report.lostDevices.isEmpty { console.print(localizer.text(.ledgerRecoverLostDevices, rangesText(report.lostDevices))) }
    if report.walCommitsLost > 0 { console.print(localizer.text(.ledgerRecoverWalLost, String(report.walCommitsLost))) }
    if !report.placeholderRuns.isEmpty {
        console.print(localizer.text(.ledgerRecoverPlaceholders, report.placeholderRuns.map(String.init).joined(separator: ", ")))
    }
    if report.isComplete { console.print(localizer.text(.ledgerRecoverNothingLost)) }
    console.print(localizer.text(.ledgerRecoverNext, path, output))
    return report.isComplete ? .success : .failure
}

/// `3, 7-9, 12`.
private func rangesText(_ ranges: [ClosedRange<Int64>]) -> String {
    ranges.map { $0.lowerBound == $0.upperBound ? String($0.lowerBound) : "\($0.lowerBound)-\($0.upperBound)" }
        .joined(separator: ", ")
}
