import GrokBasics
import Foundation
import GrokCommandLine
import GrokFirmware
import GrokFleet
import UGrokIt

/// How `provision`, `rollout` and `verify` end (docs/fleet.md, "Exit codes").
enum FleetExit {
    /// Some Grokkers were postponed, declined, refused or halted by policy; none failed.
    static let incomplete = ExitStatus(2, meaning: .manExitFleetIncomplete)
    /// The run was stopped (Ctrl-C, SIGTERM) before every Grokker finished; re-run it.
    static let interrupted = ExitStatus(130, meaning: .manExitFleetInterrupted)
    /// What the three fleet commands declare (their man pages list them).
    static let statuses = [incomplete, interrupted]

    static func code(for outcome: GrokFleet.RunOutcome) -> ExitCode {
        switch outcome {
        case .succeeded: .success
        case .incomplete: incomplete.code
        case .failed: .failure
        case .interrupted: interrupted.code
        }
    }
}

/// A fleet run from the command line: the options become a ``FleetSession``, which reads
/// the profile, prepares (preflight, firmware channel, ledger) and runs; this chooses the
/// decider (a technician at a terminal, the profile's policy), presents the events and the
/// summary in the user's language and sets the exit code.
struct FleetRun {
    let mode: FleetMode
    let options: FleetOptions
    /// `nil`: decide from the terminal.
    let interactive: Bool?
    let context: CommandContext

    func run() throws -> ExitCode {
        let environment = context.environment
        // The station's name: --station, else $GROKCTL_STATION (both over the profile's), else
        // the profile's, else the station settings' (StationSettings), else the host name.
        let settings = try StationSettings(environment: environment)
        var configuration = FleetSession.Configuration(
            mode: mode, profileFile: options.profileFile, devices: options.devices, ports: context.ports,
            readerOptions: FirmwareDevices.readerOptions(context),
            station: StationSettings.override(.station, option: options.station, environment: environment),
            defaultStation: settings.fromFiles[.station]?.value,
            operatorName: options.operatorName ?? context.defaultOperator,
            ledger: StateDirectory.ledgerOverride(option: options.ledgerFile, environment: environment),
            defaultLedger: try StateDirectory.defaultLedger(environment: environment),
            spoolDirectory: StateDirectory.spoolDirectory(environment: environment),
            lockDirectory: StateDirectory.locks(environment: environment), reportFile: options.reportFile,
            reportsDirectory: StateDirectory.reports(environment: environment), dryRun: options.dryRun,
            quietReaders: options.quietReaders,
            repository: try options.firmware.openStationIfGiven()?.repository,
            stopRequested: { StopSignals.flagIsSet }, devicesFinished: { StopSignals.absorbFromNowOn() },
            chaos: FleetChaos(environment: environment))
        configuration.watch = options.watch
        let session: FleetSession
        do {
            session = try FleetSession(configuration)
        } catch {
            // A profile that is there but wrong is a usage error (64), caught before anything starts.
            guard error.isBadProfileContent else { throw error }
            context.console.report(error)
            return .usageError
        }
        // The profile's language, unless --lang says otherwise (CommandContext.adoptProfileLocale).
        context.adoptProfileLocale(session.profile.locale)
        let prepared = try Blocking.run { try await session.prepare() }
        let console = context.console
        for name in prepared.prefetched { console.say(.fleetPrefetched, name) }
        for name in prepared.wouldFetch { console.say(.fleetWouldFetch, name) }
        let useTerminal = interactive ?? (isatty(STDIN_FILENO) == 1 && console.isTerminal(.standardOutput))
        if options.dryRun {
            return FleetPlanPresenter(context: context).present(session.plan(prepared, interactive: mode == .provision && useTerminal))
        }
        if let opened = prepared.ledger { SpoolNotices(console: console).announce(opened) }
        // A station asks no one: the profile's policy decides for every Grokker plugged in.
        if options.watch { return try FleetWatch(session: session, prepared: prepared, context: context).run() }
        let decider: any ConfigurationDelegate
        let gate = PromptGate()
        if mode == .provision, useTerminal {
            let cancellation = session.runOptions.cancellation
            decider = TerminalDelegate(localizer: context.localizer, policy: prepared.policy,
                                       input: StandardInputLines(isCancelled: { cancellation.isCancelled }),
                                       output: FileDescriptorSink.standardOutput, gate: gate,
                                       isCancelled: { cancellation.isCancelled })
        } else {
            decider = prepared.policy
        }
        let presenter = FleetRunPresenter(devices: prepared.devices.map(\.name), context: context, liveBars: !useTerminal,
                                          smokeTestSeconds: session.profile.smokeTest?.duration ?? 0)
        // The run's plain-text log beside its report: the same lines as plain output, stamped.
        let log = RunLogFile(path: session.logPath)
        let logPresenter = FleetRunPresenter(
            devices: prepared.devices.map(\.name), context: context, liveBars: false,
            smokeTestSeconds: session.profile.smokeTest?.duration ?? 0,
            console: Console(localizer: context.localizer, json: false, quiet: false, standardOutput: log, standardError: log))
        // Installed until the process exits (not restored when the run returns): a signal
        // that arrives while the report is written or the summary printed must not kill it.
        _ = StopSignals.install(StopSignals.fleetSignals)
        let outcome = try session.run(prepared, decider: decider, holdEvents: { gate.isOpen }) { event in
            switch event {
            case .fleet(let event):
                presenter.handle(event)
                logPresenter.handle(event)
            case .spooling(let database, let spool): SpoolNotices(console: console).switched(database: database, spool: spool)
            }
        }
        logPresenter.summary(outcome.report, reportPath: outcome.reportPath, ledgerPath: outcome.ledgerLocation)
        log.close()
        if !log.isComplete { console.warn(.fleetLogNotWritten, log.path) }
        presenter.summary(outcome.report, reportPath: outcome.reportPath, ledgerPath: outcome.ledgerLocation,
                          logPath: log.isComplete ? log.path : nil)
        if let text = outcome.reportText { console.write(text) }
        if let failure = outcome.reportFailure { console.report(failure) }
        if let failure = outcome.ledgerFailure { console.report(failure) }
        if outcome.reportFailure != nil || outcome.ledgerFailure != nil { return .failure }
        return FleetExit.code(for: outcome.report.outcome)
    }
}

extension Error {
    /// A profile file that was read but is wrong (not JSON, a bad or missing or unknown key).
    var isBadProfileContent: Bool {
        switch self as? FleetError {
        case .profileNotJSON?, .profileInvalid?, .profileMissingKey?, .profileUnknownKey?: true
        // A profile file that is not there was named wrong on the command line.
        case .profileUnreadable(_, let detail)?: detail == "no_such_file"
        default: false
        }
    }
}

/// Lines of standard input, read on whichever device thread asks (the terminal delegate
/// serializes its prompts, so one reads at a time). The wait is polled, so a stop signal
/// (Ctrl-C at the prompt) ends it at once: the question then has no answer (`nil`).
struct StandardInputLines: LineSource {
    /// Whether the run was stopped.
    var isCancelled: @Sendable () -> Bool = { false }

    func readLine() -> String? {
        var bytes: [UInt8] = []
        while true {
            if isCancelled() { return nil }
            var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 100)
            if ready < 0, errno == EINTR { continue }
            if ready < 0 { return nil }
            if ready == 0 { continue }
            var byte: UInt8 = 0
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") {
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
            bytes.append(byte)
        }
    }
}

// MARK: Presenting a run

/// Prints a run as it goes, on the command's thread: live bars with ETA on a terminal, plain
/// lines otherwise, the engine's events under `--json`, nothing but errors under `--quiet`.
/// A bar fills with the Grokker's work in link time (``FleetWork``: the update's bytes over
/// the link's rate, the smoke tests' length, the other steps as measured), so its ETA, the
/// rate ``ETAEstimate`` measures on it, follows the long firmware upload.
final class FleetRunPresenter {
    private let devices: [String]
    private let rows: [String: Int]
    private let console: Console
    private let localizer: Localizer
    private let board: ProgressBoard?
    private var serials: [String: String] = [:]
    /// Each Grokker's work so far (by row).
    private var work: [FleetWork]
    /// The halts and pauses said so far (each once per run).
    private var runStops: Set<String> = []

    /// - Parameter smokeTestSeconds: the profile's smoke test length (`smoke_test.duration_s`;
    ///   0 without a smoke test), what a smoke test is expected to take.
    /// - Parameter console: where it prints (the run's log); by default the command's console.
    init(devices: [String], context: CommandContext, liveBars: Bool, smokeTestSeconds: Double, console: Console? = nil) {
        self.devices = devices
        rows = Dictionary(devices.enumerated().map { ($1, $0) }) { first, _ in first }
        let console = console ?? context.console
        self.console = console
        localizer = context.localizer
        work = devices.map { _ in FleetWork(smokeTestSeconds: smokeTestSeconds) }
        let bars = liveBars && !console.isJSON && !console.isQuiet && console.isTerminal(.standardError)
        board = bars ? ProgressBoard(labels: devices, phase: context.localizer.text(.phaseConnecting),
                                     localizer: context.localizer) : nil
    }

    /// Row `row`'s bar from its work: steps finished, or KiB during the update.
    private func show(row: Int, step: FleetStep) {
        guard let board else { return }
        let model = work[row]
        let amounts: ProgressBoard.Amounts
        if step == .firmware, let bytes = model.firmwareBytes {
            amounts = .bytes(done: bytes.done, total: bytes.total)
        } else {
            amounts = .steps(done: model.stepsDone, total: FleetWork.stepCount)
        }
        board.update(row: row, phase: localizer.stepName(step), done: model.doneMilliseconds, total: model.totalMilliseconds,
                     amounts: amounts)
    }

    func handle(_ event: FleetEvent) {
        if console.isJSON {
            console.write(event.jsonLine() + "\n")
            return
        }
        if let serial = event.serial { serials[event.device] = serial }
        guard let row = rows[event.device] else { return }
        work[row].apply(event)
        switch event.event {
        case "step_started":
            guard let step = event.data["step"]?.string.flatMap(FleetStep.init(rawValue:)) else { return }
            show(row: row, step: step)
        case "firmware_progress":
            show(row: row, step: .firmware)
        case "step_finished":
            stepFinished(event, row: row)
        case "device_finished":
            let outcome = event.data["outcome"]?.string.flatMap(DeviceOutcome.init(rawValue:)) ?? .failed
            board?.finish(row: row, message: localizer.deviceOutcome(outcome))
        case "device_halted":
            // The rollout's halt (or pause) is the run's, not the unit's: said once, not for
            // each of the units it keeps from starting (the summary lists them).
            let code = event.data["code"]?.string ?? "fleet_halted"
            let message = localizer.fleetMessage(code: code, arguments: event.arguments)
            if board == nil, !console.isQuiet, runStops.insert(message).inserted {
                console.print(message)
            }
        default:
            break
        }
    }

    private func stepFinished(_ event: FleetEvent, row: Int) {
        guard let step = event.data["step"]?.string.flatMap(FleetStep.init(rawValue:)),
              let result = event.data["result"]?.string else { return }
        let code = event.data["code"]?.string ?? ""
        if board != nil {
            show(row: row, step: step)
            return
        }
        // Plain lines: what changed, what was checked, and anything not done.
        guard !console.isQuiet, result != "skipped", step != .connect, step != .record else {
            if console.isQuiet, result == "failed" || result == "refused" {
                console.report(FleetStepProblem(device: event.device, code: code, arguments: event.arguments))
            }
            return
        }
        let device = event.device
        if step == .identify {
            let firmware = event.data["firmware_before"]?.string ?? event.data["firmware_after"]?.string ?? "?"
            let region = localizer.regionDisplay(event.data["region_before"]?.string ?? event.data["region_after"]?.string)
            console.print(localizer.text(.fleetIdentified, device, event.serial ?? "?", firmware, region))
            return
        }
        var message = localizer.fleetMessage(code: code, arguments: event.arguments, about: device)
        if step == .region, result == "done", code == "step_region_set" {
            message = localizer.text(.fleetRegionChange, localizer.regionDisplay(event.data["region_before"]?.string),
                                     localizer.regionDisplay(event.data["region_after"]?.string))
        } else if step == .firmware, result == "done", code == "step_firmware_updated",
                  let before = event.data["firmware_before"]?.string, let after = event.data["firmware_after"]?.string {
            message = localizer.text(.fleetFirmwareChange, before, after)
        }
        // A step that failed, was refused or was stopped is what a station's journal is read for.
        let priority: Console.JournalPriority = result == "done" || result == "skipped" ? .info : .warning
        console.print(localizer.text(.fleetStepLine, device, localizer.stepName(step), localizer.stepResult(code: result), message),
                      priority: priority)
    }

    /// The human summary at the end: a row per device, then the run's outcome, the report
    /// file and the ledger.
    /// - Parameters:
    ///   - reportPath: where the report was written; nil when it could not be.
    ///   - logPath: where the run's log is; nil when it could not be written (or in the log itself).
    func summary(_ report: FleetReport, reportPath: String?, ledgerPath: String, logPath: String? = nil) {
        if console.isJSON {
            console.json(FleetSummaryObject(report: report, reportPath: reportPath, ledgerPath: ledgerPath, logPath: logPath))
            return
        }
        guard !console.isQuiet else {
            for device in report.devices where device.outcome == .failed || device.outcome == .interrupted {
                if let code = device.code {
                    console.report(FleetStepProblem(device: device.device, code: code, arguments: device.arguments))
                }
            }
            return
        }
        console.print("")
        let headers: [MessageKey] = [.fleetColumnDevice, .fleetColumnSerial, .fleetColumnFirmware, .fleetColumnRegion,
                                     .fleetColumnSmokeTest, .fleetColumnResult]
        var rows: [[String]] = []
        var stops: [String] = []
        for device in report.devices {
            let firmware: String
            switch (device.firmwareBefore, device.firmwareAfter) {
            case (let before?, _) where device.inLoader:
                firmware = "\(before) → " + localizer.text(.fleetFirmwareInLoader)
            case (nil, _) where device.inLoader: firmware = localizer.text(.fleetFirmwareInLoader)
            case (let before?, let after?) where before != after: firmware = "\(before) → \(after)"
            case (_, let after?): firmware = after
            case (let before?, nil): firmware = before
            default: firmware = "–"
            }
            var result = localizer.deviceOutcome(device.outcome)
            if device.outcome == .halted, let code = device.code {
                // The run's halt or pause: said once, under the table.
                let message = localizer.fleetMessage(code: code, arguments: device.arguments)
                if !stops.contains(message) { stops.append(message) }
            } else if device.outcome != .done, let code = device.code {
                result += ": " + localizer.fleetMessage(code: code, arguments: device.arguments, about: device.device)
            }
            rows.append([device.device, device.serial ?? "–", firmware,
                         device.serial == nil ? "–" : localizer.regionDisplay(device.regionAfter ?? device.regionBefore),
                         smokeTest(device), result])
        }
        console.table(Table(headers: headers.map { localizer.text($0) }, rows: rows))
        for stop in stops { console.print(stop) }
        console.print("")
        let done = report.devices.filter { $0.outcome == .done }.count
        let seconds = report.ended.timeIntervalSince(report.started)
        // An incomplete run whose units were held back only by the technician's answers says so.
        let declinedCodes: Set<String> = ["fleet_update_declined", "fleet_region_declined"]
        let notDone = report.devices.filter { $0.outcome != .done }
        let outcome = report.outcome == .incomplete && !notDone.isEmpty && notDone.allSatisfy { declinedCodes.contains($0.code ?? "") }
            ? localizer.text(.fleetRunOutcomeDeclined) : localizer.runOutcome(report.outcome)
        console.print(localizer.text(.fleetRunSummary, report.runID, outcome, String(done),
                                     String(report.devices.count), LocaleFormat.decimal(seconds, digits: 1, localizer.language)))
        if let reportPath { console.print(localizer.text(.fleetReportWritten, reportPath)) }
        if let logPath { console.print(localizer.text(.fleetLogWritten, logPath)) }
        console.print(localizer.text(.fleetLedgerAt, ledgerPath))
    }

    private func smokeTest(_ device: DeviceReport) -> String {
        guard let test = device.smokeTests.last else {
            if device.smokeTestPassedEarlier { return localizer.text(.fleetSmokeEarlier) }
            return "–"
        }
        let rate = LocaleFormat.decimal(test.readsPerSecond, digits: 1, localizer.language)
        return localizer.text(test.passed ? .fleetSmokePassed : .fleetSmokeFailed, rate)
    }
}

@available(*, unavailable) extension FleetRunPresenter: Sendable {}

/// A failed step or device as an error line (`--quiet`, and the summary's failures).
struct FleetStepProblem: CodedError {
    let device: String
    let code: String
    let arguments: [String]
    var description: String { "\(device): \(code) \(arguments.joined(separator: ", "))" }
}

/// The last line of `--json`: how the run ended and where its report is.
struct FleetSummaryObject: Encodable {
    let event = "run_finished"
    let runID: String
    let mode: String
    let outcome: String
    let devices: Int
    let counts: [String: Int]
    /// Nil when the report could not be written (the error says why).
    let report: String?
    let ledger: String
    /// The run's plain-text log; nil when it could not be written.
    let log: String?

    init(report: FleetReport, reportPath: String?, ledgerPath: String, logPath: String?) {
        runID = report.runID
        mode = report.mode.rawValue
        outcome = report.outcome.rawValue
        devices = report.devices.count
        var counts: [String: Int] = [:]
        for device in report.devices { counts[device.outcome.rawValue, default: 0] += 1 }
        self.counts = counts
        self.report = reportPath
        ledger = ledgerPath
        log = logPath
    }

    enum CodingKeys: String, CodingKey {
        case event, mode, outcome, devices, counts, report, ledger, log
        case runID = "run_id"
    }
}

// MARK: The dry run

/// Prints the plan of a dry run: per device, each step and what a run would do.
struct FleetPlanPresenter {
    let context: CommandContext

    struct PlanObject: Encodable {
        struct Step: Encodable {
            let step: String
            let action: String
            let code: String
            let arguments: [String]
            let detail: String
        }
        let event = "plan"
        let device: String
        let serial: String?
        let error: String?
        let steps: [Step]
    }

    /// The decision's reason in the user's language (region names localized too), without
    /// the device a refusal's message starts with: the plan's heading names it.
    func reason(_ step: PlannedStep, device: String) -> String {
        let localizer = context.localizer
        var arguments = step.arguments
        if step.code == "step_region_needed" { arguments = arguments.map { localizer.regionDisplay($0) } }
        return localizer.fleetMessage(code: step.code, arguments: arguments, about: device)
    }

    func present(_ plans: [DevicePlan]) -> ExitCode {
        let console = context.console
        let localizer = context.localizer
        for plan in plans {
            if console.isJSON {
                console.json(PlanObject(device: plan.device, serial: plan.serial, error: plan.error?.code,
                                        steps: plan.steps.map { .init(step: $0.step.rawValue, action: $0.action.rawValue,
                                                                      code: $0.code, arguments: $0.arguments, detail: $0.detail) }))
                continue
            }
            if let error = plan.error {
                console.report(error)
                continue
            }
            guard !console.isQuiet else { continue }
            console.print(localizer.text(.fleetPlanHeading, plan.device, plan.serial ?? "?"))
            console.table(Table(
                headers: [localizer.text(.fleetColumnStep), localizer.text(.fleetColumnAction), localizer.text(.fleetColumnDetail)],
                rows: plan.steps.map { [localizer.stepName($0.step), localizer.planAction($0.action), reason($0, device: plan.device)] }))
            console.print("")
        }
        if !console.isJSON { console.say(.fleetPlanNothingDone) }
        return plans.contains { $0.error != nil } ? .failure : .success
    }
}

// MARK: Words for the fleet

extension Localizer {
    /// The message of a step or fleet code, in this language (``MessageCatalog/fleetMessage(code:arguments:)``).
    func fleetMessage(code: String, arguments: [String]) -> String {
        catalog.fleetMessage(code: code, arguments: arguments)
    }

    /// The message of a code about `device` without the device it starts with (`sim:2: `,
    /// `sim:2 : `), for a line or a table row that names the device already.
    func fleetMessage(code: String, arguments: [String], about device: String) -> String {
        Localizer.dropping(subject: device, from: fleetMessage(code: code, arguments: arguments))
    }

    func stepName(_ step: FleetStep) -> String {
        MessageKey(rawValue: "fleet.step." + step.rawValue).map { text($0) } ?? step.rawValue
    }

    /// The words for a step result's code (`done`, `skipped`, ...; the ledger's `StepResult`).
    func stepResult(code: String) -> String {
        MessageKey(rawValue: "fleet.result." + code).map { text($0) } ?? code
    }

    func deviceOutcome(_ outcome: DeviceOutcome) -> String {
        MessageKey(rawValue: "fleet.outcome." + outcome.rawValue).map { text($0) } ?? outcome.rawValue
    }

    func runOutcome(_ outcome: GrokFleet.RunOutcome) -> String { runOutcome(code: outcome.rawValue) }

    /// The words for a run outcome's code (the fleet's and the ledger's codes are one set).
    func runOutcome(code: String) -> String {
        MessageKey(rawValue: "fleet.run_outcome." + code).map { text($0) } ?? code
    }

    func planAction(_ action: PlannedStep.Action) -> String {
        MessageKey(rawValue: "fleet.action." + action.rawValue).map { text($0) } ?? action.rawValue
    }

    /// A region by its vendor name, code or number, in this language; "not set" for none.
    func regionDisplay(_ name: String?) -> String {
        guard let name, !name.isEmpty else { return text(.fleetRegionNotSet) }
        return RegionCatalog.find(name).map(regionName) ?? name
    }
}

/// Numbers and dates as the user's language writes them (decimal comma in es, fr, de).
enum LocaleFormat {
    static func locale(_ language: Language) -> Locale {
        switch language {
        case .en: Locale(identifier: "en_US")
        case .es: Locale(identifier: "es_ES")
        case .fr: Locale(identifier: "fr_FR")
        case .de: Locale(identifier: "de_DE")
        }
    }

    /// `12.5` / `12,5` with exactly `digits` decimals (no grouping: the figures are small).
    static func decimal(_ value: Double, digits: Int, _ language: Language) -> String {
        let text = String(format: "%.\(max(0, digits))f", value)
        return language == .en ? text : text.replacingOccurrences(of: ".", with: ",")
    }

    /// A date and time in `timeZone` (the local one unless said), in the language's short form, with
    /// the zone.
    static func dateTime(_ date: Date, _ language: Language, timeZone: TimeZone = .current) -> String {
        let formatter = DateFormatter()
        formatter.locale = locale(language)
        formatter.timeZone = timeZone
        formatter.dateStyle = .short
        formatter.timeStyle = .medium
        // With the zone (`UTC`, `CET`, `GMT+1`), so a date read on another station or
        // after a clock change is not taken for local time.
        let zone = timeZone.abbreviation(for: date) ?? timeZone.identifier
        return formatter.string(from: date) + " " + zone
    }
}
