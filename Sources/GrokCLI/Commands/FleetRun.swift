import GrokBasics
import Foundation
import GrokFirmware
import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import UGrokIt

/// How `provision`, `rollout` and `verify` end (docs/fleet.md, "Exit codes").
enum FleetExit {
    /// Some Grokkers were postponed, refused or halted by policy; none failed.
    static let incomplete = ExitCode(rawValue: 2)
    /// The run was stopped (Ctrl-C, SIGTERM) before every Grokker finished; re-run it.
    static let interrupted = ExitCode(rawValue: 130)

    static func code(for outcome: GrokFleet.RunOutcome) -> ExitCode {
        switch outcome {
        case .succeeded: .success
        case .incomplete: incomplete
        case .failed: .failure
        case .interrupted: interrupted
        }
    }
}

/// What the device threads of a run tell the printing thread.
enum FleetRunEvent: Sendable {
    case event(FleetEvent)
    case finished(Result<FleetReport, FleetError>)
}

/// A fleet run from the command line: reads the profile, refreshes the profile's firmware
/// channel from the TUF repository (`--repository`) and opens the ledger,
/// chooses the delegate (a technician at a terminal, the profile's policy, JSON events),
/// runs every device on a thread of its own and presents the run on the command's thread.
struct FleetRun {
    let mode: FleetMode
    let options: FleetOptions
    /// `nil`: decide from the terminal.
    let interactive: Bool?
    let context: CommandContext

    func run() throws -> ExitCode {
        let profile: Profile
        do {
            profile = try Profile.load(path: options.profileFile)
        } catch {
            // A profile that is there but wrong is a usage error (64), caught before anything starts.
            guard error.isBadProfileContent else { throw error }
            context.console.report(error)
            return .usageError
        }
        // The profile's language, unless --lang says otherwise (CommandContext.adoptProfileLocale).
        context.adoptProfileLocale(profile.locale)
        let specs = try deviceSpecs()
        // Preflight: what can be known to fail is found before the first unit is touched.
        try checkScenes(specs, profile: profile)
        if !options.dryRun { try checkReportWritable() }
        let firmware = try openFirmware(profile)
        let ports = FirmwareDevices.portContext(context)
        let devices = specs.map { spec in
            FleetDevice(name: spec.description, portKey: DevicePorts.portKey(spec, context: ports)) {
                // The engine takes the port's lock itself (DeviceWorker), before it opens the port.
                try DevicePorts.openUnlocked(spec, context: ports)
            }
        }
        let environment = context.environment
        var runOptions = FleetRunOptions(mode: mode, lockDirectory: StateDirectory.locks(environment: environment),
                                         runID: RunKey.make(), readerOptions: FirmwareDevices.readerOptions(context))
        // --station, else the profile's station.name, else the host name (the default).
        if let station = options.station ?? profile.station?.name { runOptions.station = station }
        runOptions.operatorName = options.operatorName ?? context.defaultOperator
        // The chaos suite's hook (scripts/chaos.sh, docs/fleet.md): die the hard way right
        // after a step changed a Grokker, before the change is recorded.
        if let chaos = environment["GROKCTL_CHAOS_KILL_AFTER_CHANGE"], !chaos.isEmpty {
            runOptions.afterChange = { step in
                if step.rawValue == chaos { kill(getpid(), SIGKILL) }
            }
        }

        let ledgerPath = StateDirectory.ledger(option: options.ledgerFile, environment: environment, profile: profile.station?.ledger)
        let console = context.console
        let useTerminal = interactive ?? (isatty(STDIN_FILENO) == 1 && console.isTerminal(.standardOutput))
        if options.dryRun {
            // The plan reads the ledger's history (whether a smoke test is owed) and writes nothing.
            let history = try StationLedger.openForPlan(
                location: ledgerPath, station: runOptions.station, mode: mode, offline: profile.station?.offline ?? .refuse,
                spoolPath: StateDirectory.spool(station: runOptions.station, environment: environment))
            let policy = try Self.policy(profile, mode: mode, ledger: history, options: runOptions, readOnly: true)
            let runner = FleetRunner(profile: profile, firmware: firmware, delegate: policy, recorder: history,
                                     options: runOptions)
            return FleetPlanPresenter(context: context).present(runner.plan(devices, policy: policy,
                                                                            interactive: mode == .provision && useTerminal))
        }
        // The shared ledger, or (unreachable) a refusal or this station's spool: before any unit is touched.
        let opened = try StationLedger.open(
            location: ledgerPath, station: runOptions.station, mode: mode, offline: profile.station?.offline ?? .refuse,
            spoolPath: StateDirectory.spool(station: runOptions.station, environment: environment))
        SpoolNotices(console: console).announce(opened)
        let recorder = opened.ledger
        let policy = try Self.policy(profile, mode: mode, ledger: recorder, options: runOptions, readOnly: false)
        let decider: any ConfigurationDelegate
        let gate = PromptGate()
        if mode == .provision, useTerminal {
            let cancellation = runOptions.cancellation
            decider = TerminalDelegate(localizer: context.localizer, policy: policy,
                                       input: StandardInputLines(isCancelled: { cancellation.isCancelled }),
                                       output: FileDescriptorSink.standardOutput, gate: gate,
                                       isCancelled: { cancellation.isCancelled })
        } else {
            decider = policy
        }
        let queue = EventQueue<FleetRunEvent>()
        let delegate = EventStreamDelegate(decider: decider) { queue.post(.event($0)) }
        let runner = FleetRunner(profile: profile, firmware: firmware, delegate: delegate, recorder: recorder, options: runOptions)

        // Installed until the process exits (not restored when the run returns): a signal
        // that arrives while the report is written or the summary printed must not kill it.
        let stop = StopSignals.install(StopSignals.fleetSignals)
        let worker = Thread {
            queue.post(.finished(Result { () throws(FleetError) -> FleetReport in try runner.runBlocking(devices) }))
        }
        worker.stackSize = 1 << 20
        worker.start()

        let presenter = FleetRunPresenter(devices: devices.map(\.name), context: context, liveBars: !useTerminal,
                                          smokeTestSeconds: profile.smokeTest?.duration ?? 0)
        var result: Result<FleetReport, FleetError>?
        var held: [FleetRunEvent] = []
        var switchAnnounced = false
        while result == nil {
            // The shared ledger lost for good mid-run: said once that the rest goes to the spool.
            if !switchAnnounced, let failover = recorder as? SpoolFailover, failover.spool != nil {
                SpoolNotices(console: console).switched(failover)
                switchAnnounced = true
            }
            // Woken at least every 100 ms, so a signal stops the devices even while none of
            // them has anything to say (a step blocked on a silent reader).
            if stop.requested { runOptions.cancellation.cancel() }
            // While a question is open, the other devices' lines wait (shown once it is answered).
            held += queue.take(waitingAtMost: 0.1)
            if gate.isOpen, !stop.requested { continue }
            for event in held {
                switch event {
                case .event(let event): presenter.handle(event)
                case .finished(let outcome): result = outcome
                }
            }
            held.removeAll()
            if stop.requested { runOptions.cancellation.cancel() }
        }
        if !switchAnnounced, let failover = recorder as? SpoolFailover, failover.spool != nil {
            SpoolNotices(console: console).switched(failover)
        }
        // The devices are done: what is left (the report, the summary) must finish whatever
        // arrives now.
        StopSignals.absorbFromNowOn()
        // The chaos suite's hook: a stop signal right as the report is about to be written.
        if let chaos = environment["GROKCTL_CHAOS_SIGNAL_BEFORE_REPORT"], let number = Int32(chaos) {
            kill(getpid(), number)
        }
        let report = try result!.get()
        let reportPath = options.reportFile
            ?? StateDirectory.join(StateDirectory.reports(environment: environment), report.runID + ".json")
        // Written whatever the ledger did: when it failed, the report is the record of the run.
        // The run's outcome is already in the ledger; the ledger then points to the report.
        let written = FleetReportFile(report: report, profile: profile, options: runOptions, ledger: opened.location)
        var reportFailure: OutputError?
        // `--report -`: the report goes to standard output, after everything else (no file, so
        // the ledger's report_path stays NULL and no "Report:" line is printed).
        let toStandardOutput = reportPath == "-"
        if !toStandardOutput {
            do throws(OutputError) {
                try written.write(to: reportPath)
            } catch {
                reportFailure = error.asReport()
            }
        }
        var ledgerFailure: (any Error)? = report.ledgerFailure
        if reportFailure == nil, ledgerFailure == nil, !toStandardOutput {
            do { try runner.recordReport(path: Self.absolute(reportPath)) } catch { ledgerFailure = error }
        }
        presenter.summary(report, reportPath: reportFailure == nil && !toStandardOutput ? reportPath : nil, ledgerPath: opened.location)
        if toStandardOutput, let text = written.text() { console.write(text) }
        if let reportFailure { console.report(reportFailure) }
        if let ledgerFailure { console.report(ledgerFailure) }
        if reportFailure != nil || ledgerFailure != nil { return .failure }
        return FleetExit.code(for: report.outcome)
    }

    /// Preflight: every emulated Grokker's scene holds the smoke test's reference tags (a unit
    /// without a scene file has the default bench, `RFScene.defaultBench`, which holds the
    /// shipped profiles' tags).
    private func checkScenes(_ specs: [DeviceSpec], profile: Profile) throws {
        guard let wanted = profile.smokeTest?.referenceTags, !wanted.isEmpty else { return }
        for spec in specs {
            guard case .emulated(let index) = spec else { continue }
            let path = DeviceStateStore.deviceDirectory(in: context.bench.directory, index: index) + "/scene.json"
            var present: Set<[UInt8]> = []
            if FileManager.default.fileExists(atPath: path) {
                if let scene = try? RFScene.load(path: path) { present = Set(scene.tags.map(\.epc)) }
            } else {
                present = Set(RFScene.defaultBench(seed: UInt64(index)).tags.map(\.epc))
            }
            let missing = wanted.filter { !present.contains($0.bytes) }
            if !missing.isEmpty {
                throw FleetError.sceneLacksReferenceTags(device: spec.description, scene: path, missing: missing.map(\.description))
            }
        }
    }

    /// Preflight: the report's folder can be made and written to, and the report file (when
    /// it is there) written over.
    private func checkReportWritable() throws {
        let environment = context.environment
        if options.reportFile == "-" { return }  // standard output: checked as every write to it is
        let path = options.reportFile ?? StateDirectory.join(StateDirectory.reports(environment: environment), "preflight.json")
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        // Made folder by folder with mkdir(2), so the refusal names the system's code (EACCES,
        // EROFS, ...), the same in every language, not Foundation's English sentence.
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                throw FleetError.reportNotWritable(path: path, detail: OutputError.reasonCode(errno))
            }
        }
        var isDirectory: ObjCBool = false
        if options.reportFile != nil, FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw FleetError.reportNotWritable(path: path, detail: OutputError.reasonCode(EISDIR)) }
            if access(path, W_OK) != 0 { throw FleetError.reportNotWritable(path: path, detail: OutputError.reasonCode(errno)) }
        }
        let probe = directory + "/.grokctl-preflight-\(getpid())"
        let descriptor = open(probe, O_CREAT | O_EXCL | O_WRONLY, 0o600)
        guard descriptor >= 0 else { throw FleetError.reportNotWritable(path: path, detail: OutputError.reasonCode(errno)) }
        close(descriptor)
        unlink(probe)
    }

    /// `--device`, or for a rollout without it, every emulated Grokker on the bench.
    private func deviceSpecs() throws -> [DeviceSpec] {
        if !options.devices.isEmpty { return options.devices }
        let onBench = try context.bench.emulatedDevices()
        guard !onBench.isEmpty else { throw CLIError.noDevices(bench: context.bench.directory) }
        return onBench.map { DeviceSpec.emulated(index: $0) }
    }

    /// The profile's firmware channel, refreshed through TUF from `--repository` (with
    /// `--trusted-root` and `--state`), its listings and region catalogue read and the images
    /// the profile targets downloaded and verified before any device starts (so the devices
    /// never wait on the network). `nil` when the profile has no firmware section.
    private func openFirmware(_ profile: Profile) throws -> FleetFirmware? {
        guard let policy = profile.firmware else { return nil }
        guard let station = try options.firmware.openStationIfGiven() else {
            throw FleetError.firmwareCache(channel: policy.channel, cause: ErrorCause(code: "fleet_no_repository"))
        }
        let channel = FirmwareChannel(repository: station.repository, name: policy.channel)
        let firmware = try Blocking.run { try await FleetFirmware.load(channel, prefetch: policy) }
        for listing in firmware.listings where firmware.isDownloaded(listing) { context.console.say(.fleetPrefetched, listing.name) }
        return firmware
    }

    /// `path` made absolute against the current directory (what the ledger records).
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
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

    /// - Parameter smokeTestSeconds: the profile's smoke test length (`smoke_test.duration_s`;
    ///   0 without a smoke test), what a smoke test is expected to take.
    init(devices: [String], context: CommandContext, liveBars: Bool, smokeTestSeconds: Double) {
        self.devices = devices
        rows = Dictionary(devices.enumerated().map { ($1, $0) }) { first, _ in first }
        console = context.console
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
            let code = event.data["code"]?.string ?? "fleet_halted"
            if board == nil, !console.isQuiet {
                console.print(localizer.text(.infoDeviceFailed, event.device, localizer.fleetMessage(code: code, arguments: event.arguments)))
            }
        default:
            break
        }
    }

    private func stepFinished(_ event: FleetEvent, row: Int) {
        guard let step = event.data["step"]?.string.flatMap(FleetStep.init(rawValue:)),
              let result = event.data["result"]?.string.flatMap(StepResult.init(rawValue:)) else { return }
        let code = event.data["code"]?.string ?? ""
        if board != nil {
            show(row: row, step: step)
            return
        }
        // Plain lines: what changed, what was checked, and anything not done.
        guard !console.isQuiet, result != .skipped, step != .connect, step != .record else {
            if console.isQuiet, result == .failed || result == .refused {
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
        var message = localizer.fleetMessage(code: code, arguments: event.arguments)
        if step == .region, result == .done, code == "step_region_set" {
            message = localizer.text(.fleetRegionChange, localizer.regionDisplay(event.data["region_before"]?.string),
                                     localizer.regionDisplay(event.data["region_after"]?.string))
        } else if step == .firmware, result == .done, code == "step_firmware_updated",
                  let before = event.data["firmware_before"]?.string, let after = event.data["firmware_after"]?.string {
            message = localizer.text(.fleetFirmwareChange, before, after)
        }
        console.print(localizer.text(.fleetStepLine, device, localizer.stepName(step), localizer.stepResult(result), message))
    }

    /// The human summary at the end: a row per device, then the run's outcome, the report
    /// file and the ledger.
    /// - Parameter reportPath: where the report was written; nil when it could not be.
    func summary(_ report: FleetReport, reportPath: String?, ledgerPath: String) {
        if console.isJSON {
            console.json(FleetSummaryObject(report: report, reportPath: reportPath, ledgerPath: ledgerPath))
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
        for device in report.devices {
            let firmware: String
            switch (device.firmwareBefore, device.firmwareAfter) {
            case (let before?, let after?) where before != after: firmware = "\(before) → \(after)"
            case (_, let after?): firmware = after
            case (let before?, nil): firmware = before
            default: firmware = "–"
            }
            var result = localizer.deviceOutcome(device.outcome)
            if device.outcome != .done, let code = device.code {
                result += ": " + localizer.fleetMessage(code: code, arguments: device.arguments)
            }
            rows.append([device.device, device.serial ?? "–", firmware,
                         device.serial == nil ? "–" : localizer.regionDisplay(device.regionAfter ?? device.regionBefore),
                         smokeTest(device), result])
        }
        console.table(Table(headers: headers.map { localizer.text($0) }, rows: rows))
        console.print("")
        let done = report.devices.filter { $0.outcome == .done }.count
        let seconds = report.ended.timeIntervalSince(report.started)
        console.print(localizer.text(.fleetRunSummary, report.runID, localizer.runOutcome(report.outcome), String(done),
                                     String(report.devices.count), LocaleFormat.decimal(seconds, digits: 1, localizer.language)))
        if let reportPath { console.print(localizer.text(.fleetReportWritten, reportPath)) }
        console.print(localizer.text(.fleetLedgerAt, ledgerPath))
    }

    private func smokeTest(_ device: DeviceReport) -> String {
        guard let test = device.smokeTests.last else {
            if let step = device.step(.smokeTest), step.result == .skipped, step.code == "step_already_satisfied" {
                return localizer.text(.fleetSmokeEarlier)
            }
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

    init(report: FleetReport, reportPath: String?, ledgerPath: String) {
        runID = report.runID
        mode = report.mode.rawValue
        outcome = report.outcome.rawValue
        devices = report.devices.count
        var counts: [String: Int] = [:]
        for device in report.devices { counts[device.outcome.rawValue, default: 0] += 1 }
        self.counts = counts
        self.report = reportPath
        ledger = ledgerPath
    }

    enum CodingKeys: String, CodingKey {
        case event, mode, outcome, devices, counts, report, ledger
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

    /// The decision's reason in the user's language (region names localized too).
    func reason(_ step: PlannedStep) -> String {
        let localizer = context.localizer
        var arguments = step.arguments
        if step.code == "step_region_needed" { arguments = arguments.map { localizer.regionDisplay($0) } }
        return localizer.fleetMessage(code: step.code, arguments: arguments)
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
                rows: plan.steps.map { [localizer.stepName($0.step), localizer.planAction($0.action), reason($0)] }))
            console.print("")
        }
        if !console.isJSON { console.say(.fleetPlanNothingDone) }
        return plans.contains { $0.error != nil } ? .failure : .success
    }
}

// MARK: The report file

/// The JSON report a run leaves (`--report`, else `<state dir>/reports/<run id>.json`).
struct FleetReportFile: Encodable {
    struct Step: Encodable {
        let step: String
        let result: String
        let code: String
        let arguments: [String]
        let detail: String
        let firmwareBefore: String?
        let firmwareAfter: String?
        let regionBefore: String?
        let regionAfter: String?
        let started: String
        let durationS: Double

        enum CodingKeys: String, CodingKey {
            case step, result, code, arguments, detail, started
            case firmwareBefore = "firmware_before", firmwareAfter = "firmware_after"
            case regionBefore = "region_before", regionAfter = "region_after", durationS = "duration_s"
        }
    }

    struct SmokeTest: Encodable {
        let step: String
        let passed: Bool
        let reasons: [String]
        let readsPerSecond: Double
        let uniqueTags: Int
        let missingTags: [String]
        let durationS: Double

        enum CodingKeys: String, CodingKey {
            case step, passed, reasons
            case readsPerSecond = "reads_per_second", uniqueTags = "unique_tags", missingTags = "missing_tags"
            case durationS = "duration_s"
        }
    }

    struct Device: Encodable {
        let device: String
        let serial: String?
        let outcome: String
        let code: String?
        let arguments: [String]
        let message: String?
        let firmwareBefore: String?
        let firmwareAfter: String?
        let regionBefore: String?
        let regionAfter: String?
        let steps: [Step]
        let smokeTests: [SmokeTest]

        enum CodingKeys: String, CodingKey {
            case device, serial, outcome, code, arguments, message, steps
            case firmwareBefore = "firmware_before", firmwareAfter = "firmware_after"
            case regionBefore = "region_before", regionAfter = "region_after", smokeTests = "smoke_tests"
        }
    }

    let format = "grokctl-fleet-report"
    let runID: String
    let mode: String
    let outcome: String
    let profile: String
    let profileFile: String
    let station: String
    let operatorName: String
    let started: String
    let ended: String
    let ledger: String
    let devices: [Device]

    enum CodingKeys: String, CodingKey {
        case format, mode, outcome, profile, station, started, ended, ledger, devices
        case runID = "run_id", profileFile = "profile_file", operatorName = "operator"
    }

    init(report: FleetReport, profile: Profile, options: FleetRunOptions, ledger: String) {
        runID = report.runID
        mode = report.mode.rawValue
        outcome = report.outcome.rawValue
        self.profile = profile.name
        profileFile = profile.file
        station = options.station
        operatorName = options.operatorName
        started = FleetReportFile.iso(report.started)
        ended = FleetReportFile.iso(report.ended)
        self.ledger = ledger
        devices = report.devices.map { device in
            Device(device: device.device, serial: device.serial, outcome: device.outcome.rawValue, code: device.code,
                   arguments: device.arguments,
                   message: device.code.map { Localizer.english.fleetMessage(code: $0, arguments: device.arguments) },
                   firmwareBefore: device.firmwareBefore, firmwareAfter: device.firmwareAfter,
                   regionBefore: device.regionBefore, regionAfter: device.regionAfter,
                   steps: device.steps.map { step in
                       Step(step: step.step.rawValue, result: step.result.rawValue, code: step.code, arguments: step.arguments,
                            detail: step.detail, firmwareBefore: step.firmwareBefore, firmwareAfter: step.firmwareAfter,
                            regionBefore: step.regionBefore, regionAfter: step.regionAfter,
                            started: FleetReportFile.iso(step.started), durationS: (step.duration * 1000).rounded() / 1000)
                   },
                   smokeTests: device.smokeTests.map { test in
                       SmokeTest(step: test.step.rawValue, passed: test.passed, reasons: test.reasons,
                                 readsPerSecond: (test.readsPerSecond * 10).rounded() / 10, uniqueTags: test.uniqueTags,
                                 missingTags: test.missingTags, durationS: (test.duration * 1000).rounded() / 1000)
                   })
        }
    }

    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// Writes the report (pretty, keys sorted), creating the directory; every system call is
    /// checked (``CheckedFile``), so a report that is not on disk is an error naming `path`.
    func write(to path: String) throws(OutputError) {
        // Only a non-finite number cannot be encoded.
        guard let data = encoded() else { throw OutputError(path: path, errno: EINVAL) }
        try CheckedFile.write(Array(data) + [0x0A], to: path)
    }

    /// The report as its file holds it (for `--report -`), with its final newline.
    func text() -> String? { encoded().map { String(decoding: $0, as: UTF8.self) + "\n" } }

    private func encoded() -> Data? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try? encoder.encode(self)
    }
}

// MARK: Words for the fleet

extension Localizer {
    /// The message of a step or fleet code: `error.<code>` when its placeholders are all
    /// filled, else `fleet.code.<code>` (the `step_*` codes), else a generic line naming the code.
    func fleetMessage(code: String, arguments: [String]) -> String {
        if let key = MessageKey(errorCode: code) {
            let needed = Catalogs.placeholders(in: Localizer.english.text(key))
            if needed.isSubset(of: Set(0..<arguments.count)) { return text(key, arguments: arguments) }
        }
        if let key = MessageKey(rawValue: "fleet.code." + code) {
            let needed = Catalogs.placeholders(in: Localizer.english.text(key))
            return needed.isSubset(of: Set(0..<arguments.count)) ? text(key, arguments: arguments) : text(key)
        }
        return text(.fleetCodeOther, code)
    }

    func stepName(_ step: FleetStep) -> String {
        MessageKey(rawValue: "fleet.step." + step.rawValue).map { text($0) } ?? step.rawValue
    }

    func stepResult(_ result: StepResult) -> String {
        MessageKey(rawValue: "fleet.result." + result.rawValue).map { text($0) } ?? result.rawValue
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

    /// A date and time in the local time zone, in the language's short form.
    static func dateTime(_ date: Date, _ language: Language) -> String {
        let formatter = DateFormatter()
        formatter.locale = locale(language)
        formatter.dateStyle = .short
        formatter.timeStyle = .medium
        return formatter.string(from: date)
    }
}
