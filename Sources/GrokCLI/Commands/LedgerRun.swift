import Foundation
import GrokFleet
import GrokBasics
import GrokLedger

/// `grokctl ledger show`: the latest runs and every device, or (`--serial`) one device and
/// its history, oldest first. Dates in the user's language and local time.
func runLedgerShow(_ command: LedgerShowCommand, _ context: CommandContext) throws -> ExitCode {
    // Read-only: showing never creates, migrates or repairs anything, and a damaged ledger is
    // refused. A shared ledger on PostgreSQL shows every station's runs.
    let opened = try LedgerReader.open(option: command.ledgerFile, environment: context.environment)
    let ledger = opened.store
    let path = opened.location
    let console = context.console
    let localizer = context.localizer
    let language = localizer.language
    func date(_ value: Date?) -> String { value.map { LocaleFormat.dateTime($0, language) } ?? "–" }
    func kind(_ value: RunKind) -> String { MessageKey(rawValue: "ledger.kind." + value.rawValue).map { localizer.text($0) } ?? value.rawValue }
    func outcome(_ value: GrokLedger.RunOutcome?) -> String {
        guard let value else { return localizer.text(.ledgerUnfinished) }
        return localizer.runOutcome(code: value.rawValue)
    }
    func result(_ value: GrokLedger.StepResult) -> String {
        MessageKey(rawValue: "fleet.result." + value.rawValue).map { localizer.text($0) } ?? value.rawValue
    }
    func step(_ name: String) -> String { MessageKey(rawValue: "fleet.step." + name).map { localizer.text($0) } ?? name }
    func yes(_ value: Bool) -> String { localizer.text(value ? .ledgerYes : .ledgerNo) }

    if let key = command.runKey {
        guard let run = try ledger.run(key: key) else { throw LedgerError.noSuchRun(path: path, run: key) }
        let steps = try ledger.steps(run: run.id, serial: nil)
        if console.isJSON {
            console.json(LedgerRunObject(run))
            for step in steps { console.json(LedgerHistoryObject(HistoryEntry(run: run, event: .step(step)))) }
            return .success
        }
        console.print(localizer.text(.ledgerRunHeading, run.key))
        console.table(Table(headers: [localizer.text(.ledgerColumnField), localizer.text(.ledgerColumnValue)], rows: [
            [localizer.text(.ledgerColumnKind), kind(run.kind)],
            [localizer.text(.ledgerColumnProfile), run.profileName],
            [localizer.text(.ledgerColumnStation), run.station],
            [localizer.text(.ledgerColumnOperator), run.operatorName.isEmpty ? "–" : run.operatorName],
            [localizer.text(.ledgerColumnStarted), date(run.startedAt)],
            [localizer.text(.ledgerColumnEnded), date(run.endedAt)],
            [localizer.text(.fleetColumnResult), outcome(run.outcome)],
            [localizer.text(.ledgerColumnReport), run.reportPath ?? "–"],
        ]))
        console.print("")
        console.print(localizer.text(.ledgerStepsHeading, String(steps.count)))
        console.table(Table(
            headers: [localizer.text(.ledgerColumnWhen), localizer.text(.fleetColumnSerial), localizer.text(.fleetColumnStep),
                      localizer.text(.fleetColumnResult)],
            rows: steps.map { [date($0.startedAt), $0.serial, step($0.step), result($0.result)] }))
        return .success
    }

    if let serial = command.serialNumber {
        let found = try opened.file?.device(serial: serial) ?? opened.shared?.device(serial: serial)
        guard let device = found else { throw CLIError.ledgerNoDevice(serial: serial, path: path) }
        let history = try opened.file?.history(serial: serial) ?? opened.shared?.history(serial: serial) ?? []
        if console.isJSON {
            console.json(LedgerDeviceObject(device))
            for entry in history { console.json(LedgerHistoryObject(entry)) }
            return .success
        }
        console.print(localizer.text(.ledgerDeviceHeading, device.serial))
        console.table(Table(headers: [localizer.text(.ledgerColumnField), localizer.text(.ledgerColumnValue)], rows: [
            [localizer.text(.fleetColumnFirmware), device.firmware ?? "–"],
            [localizer.text(.fleetColumnRegion), localizer.regionDisplay(device.region)],
            [localizer.text(.ledgerColumnHardware), [device.hardwareType, device.hardwareRevision].compactMap { $0 }.joined(separator: " ")],
            [localizer.text(.ledgerColumnProvisioned), yes(device.provisioned)],
            [localizer.text(.ledgerColumnFirstSeen), date(device.firstSeen)],
            [localizer.text(.ledgerColumnLastSeen), date(device.lastSeen)],
        ]))
        console.print("")
        console.print(localizer.text(.ledgerHistoryHeading))
        var rows: [[String]] = []
        for entry in history {
            switch entry.event {
            case .step(let record):
                var change = ""
                if record.step == "firmware", let before = record.firmwareBefore, let after = record.firmwareAfter, before != after { change = "\(before) → \(after)" }
                if record.step == "region", record.regionBefore != record.regionAfter, record.regionAfter != nil {
                    change = localizer.regionDisplay(record.regionBefore) + " → " + localizer.regionDisplay(record.regionAfter)
                }
                rows.append([date(record.startedAt), entry.run.key, kind(entry.run.kind), step(record.step),
                             result(record.result), change])
            case .smokeTest(let test):
                let rate = LocaleFormat.decimal(test.readsPerSecond, digits: 1, language)
                rows.append([date(test.startedAt), entry.run.key, kind(entry.run.kind),
                             localizer.text(.ledgerSmokeTestAfter, step(test.afterStep)),
                             localizer.text(test.passed ? .fleetSmokePassed : .fleetSmokeFailed, rate), ""])
            }
        }
        console.table(Table(headers: [localizer.text(.ledgerColumnWhen), localizer.text(.ledgerColumnRun),
                                      localizer.text(.ledgerColumnKind), localizer.text(.fleetColumnStep),
                                      localizer.text(.fleetColumnResult), localizer.text(.ledgerColumnChange)], rows: rows))
        return .success
    }

    let runs = try ledger.runs(limit: command.limit)
    let devices = try ledger.devices()
    if console.isJSON {
        for run in runs { console.json(LedgerRunObject(run)) }
        for device in devices { console.json(LedgerDeviceObject(device)) }
        return .success
    }
    console.print(localizer.text(.ledgerRunsHeading, String(runs.count)))
    console.table(Table(
        headers: [localizer.text(.ledgerColumnRun), localizer.text(.ledgerColumnKind), localizer.text(.ledgerColumnProfile),
                  localizer.text(.ledgerColumnStation), localizer.text(.ledgerColumnOperator), localizer.text(.ledgerColumnStarted),
                  localizer.text(.ledgerColumnEnded), localizer.text(.fleetColumnResult)],
        rows: runs.map { [$0.key, kind($0.kind), $0.profileName, $0.station, $0.operatorName.isEmpty ? "–" : $0.operatorName,
                          date($0.startedAt), date($0.endedAt), outcome($0.outcome)] }))
    console.print("")
    console.print(localizer.text(.ledgerDevicesHeading, String(devices.count)))
    console.table(Table(
        headers: [localizer.text(.fleetColumnSerial), localizer.text(.fleetColumnFirmware), localizer.text(.fleetColumnRegion),
                  localizer.text(.ledgerColumnProvisioned), localizer.text(.ledgerColumnLastSeen)],
        rows: devices.map { [$0.serial, $0.firmware ?? "–", localizer.regionDisplay($0.region), yes($0.provisioned), date($0.lastSeen)] }))
    return .success
}

/// `grokctl ledger export --csv|--json`: one table as CSV (default `steps`), or JSON (every
/// table, or one), to `--output` or standard output.
func runLedgerExport(_ command: LedgerExportCommand, _ context: CommandContext) throws -> ExitCode {
    let opened = try LedgerReader.open(option: command.ledgerFile, environment: context.environment)
    func export(to file: String) throws(LedgerError) {
        if let shared = opened.shared {
            try shared.export(format: command.format, to: file, table: command.table)
        } else if let ledger = opened.file {
            try ledger.export(format: command.format, to: file, table: command.table)
        }
    }
    if let output = command.outputFile {
        try export(to: output)
        context.console.say(.ledgerExported, output, to: .standardError)
        return .success
    }
    // Standard output: export into a private temporary directory, then copy it out.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grokctl-export-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let file = directory + "/export." + command.format.rawValue
    try export(to: file)
    guard let data = FileManager.default.contents(atPath: file) else {
        throw LedgerError.exportFailed(path: file, detail: ErrorDetail("export_unreadable"))
    }
    context.console.write(String(decoding: data, as: UTF8.self))
    return .success
}

/// `grokctl ledger check`: the full read-only check; exit 0 when sound, else the error (exit 1)
/// names the problem and the way to recover.
func runLedgerCheck(_ command: LedgerCheckCommand, _ context: CommandContext) throws -> ExitCode {
    let path = StateDirectory.ledger(option: command.ledgerFile, environment: context.environment)
    if LedgerLocation.isShared(path) { return try runSharedLedgerCheck(command, context) }
    guard FileManager.default.fileExists(atPath: path) else { throw CLIError.ledgerMissing(path: path) }
    let report = try Ledger.check(path: path)
    let rows = { (table: LedgerTable) in String(report.rows[table] ?? 0) }
    if context.console.isJSON {
        context.console.json(LedgerCheckObject(report))
        return .success
    }
    context.console.print(context.localizer.text(
        .ledgerCheckSound, path, String(report.schemaVersion), String(report.pages), rows(.runs), String(report.openRuns),
        rows(.steps), rows(.smokeTests), rows(.devices), String(report.walCommits)))
    return .success
}

/// `grokctl ledger check --ledger postgresql://...`: what makes sense to check on a server
/// (PostgreSQL keeps its pages and its log sound itself): the schema version, the runs left
/// open (by a live station, by one that is gone, or not seen for over ten minutes) and rows
/// naming what does not exist. Exit 0 when nothing calls for action, else 1.
func runSharedLedgerCheck(_ command: LedgerCheckCommand, _ context: CommandContext) throws -> ExitCode {
    let opened = try LedgerReader.open(option: command.ledgerFile, environment: context.environment)
    guard let shared = opened.shared else { return .failure }
    let report = try shared.check()
    let console = context.console
    let localizer = context.localizer
    if console.isJSON {
        console.json(SharedLedgerCheckObject(report))
        return report.isSound ? .success : .failure
    }
    let rows = { (table: LedgerTable) in String(report.rows[table] ?? 0) }
    console.print(localizer.text(
        .ledgerCheckShared, report.target, String(report.schemaVersion), rows(.runs), String(report.openRunsAlive), rows(.steps),
        rows(.smokeTests), rows(.devices), rows(.rolloutResults)))
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

struct SharedLedgerCheckObject: Encodable {
    let record = "check"
    let target: String
    let schemaVersion: Int
    let rows: [String: Int]
    let openRunsAlive: Int
    let openRunsDead: [String]
    let staleRuns: [String]
    let foreignRows: [String: Int]
    let sound: Bool

    init(_ report: SharedLedgerCheckReport) {
        target = report.target
        schemaVersion = report.schemaVersion
        rows = Dictionary(uniqueKeysWithValues: report.rows.map { ($0.key.rawValue, $0.value) })
        openRunsAlive = report.openRunsAlive
        openRunsDead = report.openRunsDead
        staleRuns = report.staleRuns
        foreignRows = report.foreignRows
        sound = report.isSound
    }

    enum CodingKeys: String, CodingKey {
        case record, target, rows, sound
        case schemaVersion = "schema_version", openRunsAlive = "open_runs_alive", openRunsDead = "open_runs_dead"
        case staleRuns = "stale_runs", foreignRows = "foreign_rows"
    }
}

/// `grokctl ledger recover`: salvages what is readable into `--output` (default
/// `<ledger>.recovered`), says what was lost and how to put the new file in place. Exit 0
/// when nothing was lost, 1 otherwise.
func runLedgerRecover(_ command: LedgerRecoverCommand, _ context: CommandContext) throws -> ExitCode {
    let path = StateDirectory.ledger(option: command.ledgerFile, environment: context.environment)
    guard FileManager.default.fileExists(atPath: path) else { throw CLIError.ledgerMissing(path: path) }
    let output = command.outputFile ?? path + ".recovered"
    let report = try Ledger.recover(from: path, to: output)
    let console = context.console
    let localizer = context.localizer
    if console.isJSON {
        console.json(LedgerRecoveryObject(report))
        return report.isComplete ? .success : .failure
    }
    let count = { (table: LedgerTable) in String(report.recovered[table] ?? 0) }
    console.print(localizer.text(.ledgerRecovered, path, output, count(.runs), count(.steps), count(.smokeTests), count(.devices)))
    if let problem = report.problem { console.print(localizer.text(.ledgerRecoverProblem, localizer.message(for: problem))) }
    for table in [LedgerTable.runs, .steps, .smokeTests, .intents] where report.lostCount(table) > 0 {
        console.print(localizer.text(.ledgerRecoverLostRows, table.rawValue, String(report.lostCount(table)),
                                     rangesText(report.lost[table] ?? [])))
    }
    if let devices = report.lost[.devices], !devices.isEmpty {
        console.print(localizer.text(.ledgerRecoverLostDevices, rangesText(devices)))
    }
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

struct LedgerCheckObject: Encodable {
    let record = "check"
    let path: String
    let schemaVersion: Int
    let pages: Int
    let rows: [String: Int]
    let openRuns: Int
    let walCommits: Int

    init(_ report: LedgerCheckReport) {
        path = report.path
        schemaVersion = report.schemaVersion
        pages = report.pages
        rows = Dictionary(uniqueKeysWithValues: report.rows.map { ($0.key.rawValue, $0.value) })
        openRuns = report.openRuns
        walCommits = report.walCommits
    }

    enum CodingKeys: String, CodingKey {
        case record, path, pages, rows
        case schemaVersion = "schema_version", openRuns = "open_runs", walCommits = "wal_commits"
    }
}

struct LedgerRecoveryObject: Encodable {
    let record = "recovery"
    let source: String
    let output: String
    let problem: String?
    let recovered: [String: Int]
    let lost: [String: [[Int64]]]
    let placeholderRuns: [Int64]
    let walCommitsLost: Int
    let complete: Bool

    init(_ report: LedgerRecoveryReport) {
        source = report.source
        output = report.output
        problem = report.problem?.code
        recovered = Dictionary(uniqueKeysWithValues: report.recovered.map { ($0.key.rawValue, $0.value) })
        lost = Dictionary(uniqueKeysWithValues: report.lost.filter { !$0.value.isEmpty }
            .map { ($0.key.rawValue, $0.value.map { [$0.lowerBound, $0.upperBound] }) })
        placeholderRuns = report.placeholderRuns
        walCommitsLost = report.walCommitsLost
        complete = report.isComplete
    }

    enum CodingKeys: String, CodingKey {
        case record, source, output, problem, recovered, lost, complete
        case placeholderRuns = "placeholder_runs", walCommitsLost = "wal_commits_lost"
    }
}

// MARK: JSON lines of `ledger show --json`

private func iso(_ date: Date?) -> String? { date.map { Timestamp.iso8601($0) } }

struct LedgerRunObject: Encodable {
    let record = "run"
    /// The run's key: the id its summary, report and `--json` gave it.
    let id: String
    let kind: String
    let profile: String
    let station: String
    let operatorName: String
    let started: String?
    let ended: String?
    let outcome: String?
    let report: String?

    init(_ run: RunRecord) {
        id = run.key
        report = run.reportPath
        kind = run.kind.rawValue
        profile = run.profileName
        station = run.station
        operatorName = run.operatorName
        started = iso(run.startedAt)
        ended = iso(run.endedAt)
        outcome = run.outcome?.rawValue
    }

    enum CodingKeys: String, CodingKey {
        case record, id, kind, profile, station, started, ended, outcome, report
        case operatorName = "operator"
    }
}

struct LedgerDeviceObject: Encodable {
    let record = "device"
    let serial: String
    let firmware: String?
    let region: String?
    let provisioned: Bool
    let firstSeen: String?
    let lastSeen: String?

    init(_ device: GrokLedger.DeviceRecord) {
        serial = device.serial
        firmware = device.firmware
        region = device.region
        provisioned = device.provisioned
        firstSeen = iso(device.firstSeen)
        lastSeen = iso(device.lastSeen)
    }

    enum CodingKeys: String, CodingKey {
        case record, serial, firmware, region, provisioned
        case firstSeen = "first_seen", lastSeen = "last_seen"
    }
}

struct LedgerHistoryObject: Encodable {
    let record: String
    /// The run's key.
    let run: String
    let kind: String
    let at: String?
    let step: String
    let result: String
    let code: String?
    let firmwareBefore: String?
    let firmwareAfter: String?
    let regionBefore: String?
    let regionAfter: String?
    let readsPerSecond: Double?

    init(_ entry: HistoryEntry) {
        run = entry.run.key
        kind = entry.run.kind.rawValue
        at = iso(entry.at)
        switch entry.event {
        case .step(let s):
            record = "step"
            step = s.step
            result = s.result.rawValue
            code = s.code
            firmwareBefore = s.firmwareBefore
            firmwareAfter = s.firmwareAfter
            regionBefore = s.regionBefore
            regionAfter = s.regionAfter
            readsPerSecond = nil
        case .smokeTest(let t):
            record = "smoke_test"
            step = t.afterStep
            result = t.passed ? "passed" : "failed"
            code = nil
            firmwareBefore = nil
            firmwareAfter = nil
            regionBefore = nil
            regionAfter = nil
            readsPerSecond = t.readsPerSecond
        }
    }

    enum CodingKeys: String, CodingKey {
        case record, run, kind, at, step, result, code
        case firmwareBefore = "firmware_before", firmwareAfter = "firmware_after"
        case regionBefore = "region_before", regionAfter = "region_after", readsPerSecond = "reads_per_second"
    }
}
