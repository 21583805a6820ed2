import GrokBasics
import Foundation
import GrokLedger
import GrokAudio
import GrokFirmware
import GrokLink
import GrokProtocol
import UGrokIt

/// Thrown inside a worker to end the device early (the step outcome says why).
struct Stop: Error {}

/// One Grokker's way through the workflow, on one thread.
final class DeviceWorker {
    let runner: FleetRunner
    let device: FleetDevice
    var profile: Profile { runner.profile }
    var delegate: any ConfigurationDelegate { runner.delegate }
    /// The run's mode; `verify` for the rest of the turn of a unit found already done when
    /// the run verifies those (``FleetRunOptions/verifyAlreadyDone``): the workflow's.
    var mode: FleetMode { workflow.mode }
    var runID: String { runner.options.runID }

    var context: FleetDeviceContext
    var session: ReaderSession?
    var lock: DeviceLock?
    /// The port's lock, taken before the port is opened.
    var portLock: DeviceLock?
    /// Intents of this Grokker left open by runs that ended between a change and its
    /// record (read once the Grokker is locked); each is resolved by its step, which asks
    /// the Grokker.
    var openIntents: [IntentRecord] = []
    var steps: [StepOutcome] = []
    var smokeTests: [SmokeTestReport] = []
    var provisioning: ProvisioningRecord?
    /// The order of the steps and where the device stops (the same machine a plan walks).
    var workflow: DeviceWorkflow
    /// Steps done (changed the device) in this run.
    var changed: Set<FleetStep> { workflow.changed }
    /// The ledger's completed steps for this serial, oldest first.
    var history: [StepOutcome] = []
    var firmwareTarget: FirmwareVersion?
    /// The run was cancelled before this device finished.
    var interrupted = false
    var first: ReaderInfo?
    /// The link's setting, once the first connection found it (nil before).
    var linkSetting: LinkSetup.Outcome?
    /// Link settings learned and not yet written (``rememberLinkSettings()``).
    var learnedLinkSettings: [LinkSettingRecord] = []
    /// Set when another run holds the device: nothing of this run is recorded for it.
    var lockedOut: FleetError?
    /// The unit answered from its loader when identified.
    var inLoader = false
    /// Once identified: why the rollout's stage leaves the unit out (nil: it does not).
    var leftOut: FleetError?
    /// The battery, once read (the firmware step reads it before deciding on an update).
    var battery: BatteryInfo?
    /// The wall-clock bounds on this Grokker's audio I/O (the port's stall bound, this
    /// step's and the device run's limits, the run's cancellation), derived from the
    /// profile's timeouts (Profile.Timeouts; docs/profiles.md, "Wall-clock bounds").
    let bound: WallClockBound
    var stepLimit: String?

    /// The ledger a run records into, and its run there.
    struct Recording: Sendable {
        let store: any LedgerStore
        let run: RunID

        init(ledger store: any LedgerStore, run: RunID) {
            self.store = store
            self.run = run
        }
    }

    /// Where this run records (`nil`: a dry run, which records nothing).
    let recording: Recording?

    init(runner: FleetRunner, device: FleetDevice, recording: Recording?) {
        self.runner = runner
        self.device = device
        self.recording = recording
        context = FleetDeviceContext(device: device.name)
        workflow = DeviceWorkflow(mode: runner.options.mode, profile: runner.profile)
        let cancellation = runner.options.cancellation
        bound = WallClockBound(stallSeconds: runner.profile.timeouts.stallBound, isCancelled: { cancellation.isCancelled })
    }

    var info: ReaderInfo? { context.info }
    var serial: String { context.serial ?? "" }
    /// The application's version the unit runs; `nil` while it is in its loader (GetVersion
    /// then gives the loader's version, and the application is not whole).
    var firmwareText: String? { inLoader ? nil : info.map { "\($0.firmwareVersion)" } }
    /// The region the unit was set to (`nil`: not set).
    var regionText: String? { info?.region?.name }
    /// ``regionText`` when the unit was first connected.
    var firstRegion: String?

    // MARK: The run

    func run() -> DeviceReport {
        if runner.options.cancellation.isCancelled { return finish(.interrupted, code: FleetError.interrupted(device: device.name)) }
        if let halt = delegate.shouldStartDevice(context) {
            let report = finish(.halted, code: halt)
            return report
        }
        delegate.deviceStarted(context)
        bound.setLimit("device run", seconds: profile.timeouts.deviceRunBound)
        defer {
            session?.close()
            lock?.unlock()
            portLock?.unlock()
        }
        // Set once the device is recorded: the outcome as recorded (a failed record fails it).
        var recorded: DeviceOutcome?
        var action = workflow.next(.start)
        while true {
            switch action {
            case .finish:
                let outcome = recorded ?? (interrupted ? .interrupted : Self.outcome(of: steps))
                if let cue = ReaderCue.closing(outcome, steps: steps, mode: runner.options.mode) { play(cue) }
                let report = finish(outcome, code: nil)
                delegate.deviceFinished(context, outcome: outcome, steps: steps)
                return report
            case .notReached:
                // A step after the one that stopped the device: not tried.
                action = workflow.next(.passedOver)
            case .perform(let step):
                // A safe point: a stopped run ends here, before the next step of the unit's
                // work begins (the record of what was done is still made).
                if step != .record, runner.options.cancellation.isCancelled { interrupted = true }
                if interrupted {
                    action = workflow.next(.interrupted)
                    continue
                }
                let ended = self.step(step) { () throws(Stop) in try perform(step) }
                if step == .identify, ended.result == .done {
                    leftOut = delegate.stageLeavesOut(context)
                    play(.recognised)
                    if runner.options.verifyAlreadyDone, mode != .verify, leftOut == nil, !inLoader, openIntents.isEmpty,
                       alreadyAsTheProfileWants() {
                        // Already done, at a station that verifies such a unit: the rest of
                        // its turn is verify's checks (recorded `step_verified`), no change.
                        // (A change left open by an earlier run is resolved by its step first.)
                        workflow.mode = .verify
                    }
                }
                if step == .record { recorded = Self.outcome(of: steps) }
                action = workflow.next(interrupted && step != .record
                    ? .interrupted
                    : .ended(DeviceWorkflow.Ending(step: step, result: ended.result, code: ended.code, inLoader: inLoader)))
            }
        }
    }

    /// Performs `step` with the device; the record is of the device as its steps left it.
    func perform(_ step: FleetStep) throws(Stop) -> Result {
        // A unit the rollout's stage leaves out is not touched (the same decision a plan shows).
        if let info, let skipped = decider.leftOut(step, facts(info)).flatMap(Self.result(of:)) { return skipped }
        return switch step {
        case .connect: try connect()
        case .identify: try identify()
        case .provision: try provision()
        case .region: try region()
        case .smokeTest, .finalSmokeTest: try smokeTest(step)
        case .firmware: try firmware()
        case .reconnect: try reconnect()
        case .record: try record(Self.outcome(of: steps))
        }
    }

    static func outcome(of steps: [StepOutcome]) -> DeviceOutcome {
        if steps.contains(where: { $0.result == .failed }) { return .failed }
        // Stopped part-way by a stop signal: not a failure; the same command finishes it.
        if steps.contains(where: { $0.result == .interrupted }) { return .interrupted }
        if steps.contains(where: { $0.result == .refused }) { return .refused }
        // Declined by the person asked: not done, not failed; like a postponement the next run asks again.
        if steps.contains(where: { $0.result == .postponed || $0.result == .declined }) { return .postponed }
        if steps.contains(where: { $0.result == .skipped && $0.code == notInStageCode }) { return .notInStage }
        return .done
    }

    /// The code of a step a rollout's stage left out (``FleetError/notInRollout(device:serial:percentage:source:profilePercentage:)``).
    static let notInStageCode = "fleet_not_in_rollout"

    func finish(_ outcome: DeviceOutcome, code error: FleetError?) -> DeviceReport {
        var code = error?.code
        var arguments = error?.arguments ?? []
        if outcome == .notInStage, let left = steps.last(where: { $0.code == Self.notInStageCode }) {
            code = left.code
            arguments = left.arguments
        }
        if code == nil, outcome != .done, let last = steps.last(where: { $0.result != .done && $0.result != .skipped }) {
            code = last.code
            arguments = last.arguments
        }
        if outcome == .interrupted, code == nil {
            let interrupted = FleetError.interrupted(device: device.name)
            code = interrupted.code
            arguments = interrupted.arguments
        }
        if error != nil, outcome == .halted || outcome == .interrupted, steps.isEmpty {
            delegate.deviceFinished(context, outcome: outcome, steps: [])
        }
        let firstFirmware = first.map { "\($0.firmwareVersion)" }
        return DeviceReport(device: device.name, usbPath: device.usbPath, serial: context.serial, outcome: outcome, code: code, arguments: arguments,
                            steps: steps, smokeTests: smokeTests, firmwareBefore: firstFirmware, firmwareAfter: firmwareText,
                            regionBefore: firstRegion, regionAfter: regionText, inLoader: inLoader)
    }

    /// What a step's body returns.
    struct Result {
        var result: StepResult
        var code: String
        var arguments: [String] = []
        var detail: String = ""
        var error: FleetError? = nil

        static func done(_ code: String, _ detail: String = "") -> Result { Result(result: .done, code: code, detail: detail) }
        static func skipped(_ code: String, _ detail: String = "") -> Result { Result(result: .skipped, code: code, detail: detail) }
        static func failing(_ result: StepResult, _ error: FleetError) -> Result {
            var detail = error.description
            // The updater's own words stay in the log's detail (never in a message's arguments).
            if case .firmwareUpdateFailed(_, _, let extra) = error, !extra.isEmpty { detail += " [" + extra + "]" }
            return Result(result: result, code: error.code, arguments: error.arguments, detail: detail, error: error)
        }
    }

    /// Runs one step: tells the delegate, times it, bounds it, records it, and returns its
    /// outcome (the workflow says what follows).
    func step(_ step: FleetStep, _ body: () throws(Stop) -> Result) -> StepOutcome {
        delegate.stepStarted(context, step: step)
        // This step's wall-clock limit replaces the last step's.
        if let stepLimit { bound.setLimit(stepLimit, seconds: nil) }
        stepLimit = "step \(step.rawValue)"
        bound.setLimit("step \(step.rawValue)", seconds: profile.timeouts.bound(of: step))
        let started = runner.options.clock()
        let wallStart = Date()
        let firmwareBefore = firmwareText
        let regionBefore = regionText
        let recoveriesBefore = (tried: session?.linkRecoveries ?? 0, failed: session?.linkRecoveriesFailed ?? 0)
        var result: Result
        do {
            result = try body()
        } catch {
            result = Result(result: .failed, code: "fleet_internal")
        }
        // A link reset inside the step (the session's recovery) is a link fact of the step.
        if let session, session.linkRecoveries > recoveriesBefore.tried {
            let resets = session.linkRecoveries - recoveriesBefore.tried
            let failed = session.linkRecoveriesFailed - recoveriesBefore.failed
            result.detail += (result.detail.isEmpty ? "" : "; ")
                + "link resets in this step: \(resets) tried, \(resets - failed) reconnected"
        }
        // A step the wall-clock bound ended says so (a stop signal: interrupted).
        if result.result == .failed, let fired = bound.fired { result = boundFailure(step, fired, otherwise: result) }
        // Pulled out mid-step at a watching station: interrupted; it resumes when plugged back in.
        if result.result == .failed, runner.options.unplugInterrupts, session?.port.jackPlugged == false {
            interrupted = true
            result = .failing(.interrupted, .unplugged(device: device.name, step: step.rawValue))
        }
        let outcome = StepOutcome(step: step, result: result.result, code: result.code, arguments: result.arguments,
                                  detail: result.detail, firmwareBefore: firmwareBefore, firmwareAfter: firmwareText,
                                  regionBefore: regionBefore, regionAfter: regionText, started: started,
                                  duration: Date().timeIntervalSince(wallStart))
        if result.result == .done, DeviceWorkflow.changingSteps.contains(step), mode != .verify {
            runner.options.afterChange?(step)
        }
        steps.append(outcome)
        if info != nil {
            do {
                try ledger.store.recordStep(stepRecord(outcome))
                try resolveOpenIntents(of: step, outcome: outcome)
            } catch {
                let failure = FleetError.recorderFailed(operation: "record_step", subject: "\(device.name), \(step.rawValue)", error: error)
                steps[steps.count - 1].result = .failed
                steps[steps.count - 1].code = failure.code
                steps[steps.count - 1].arguments = failure.arguments
                steps[steps.count - 1].detail = failure.description
            }
        }
        delegate.stepFinished(context, outcome: steps[steps.count - 1])
        return steps[steps.count - 1]
    }

    /// What a step ended by ``bound`` reports.
    func boundFailure(_ step: FleetStep, _ fired: AudioError, otherwise: Result) -> Result {
        switch fired {
        case .cancelled:
            interrupted = true
            return .failing(.interrupted, .interrupted(device: device.name))
        case .stalled(_, let seconds):
            return .failing(.failed, .readerFrozen(device: device.name, step: step.rawValue, seconds: seconds))
        case .timedOut(_, let what, let seconds):
            return .failing(.failed, .timedOut(device: device.name, step: step.rawValue, what: what, seconds: seconds))
        default:
            return otherwise
        }
    }

    /// Whether the unit is already as the profile wants: every step after identify would be
    /// skipped as satisfied, not needed or not configured, decided by the same
    /// ``StepDecider`` as the steps from what identify found and the unit's provisioning
    /// record (read here; one that cannot be read: not known, so no).
    func alreadyAsTheProfileWants() -> Bool {
        guard let session, let info else { return false }
        var known = facts(info)
        if profile.provisioning != nil {
            guard let record = try? session.provisioningRecord() else { return false }
            known.provisioning = record
        }
        let satisfied: Set<String> = ["step_already_satisfied", "step_not_needed", "step_not_configured"]
        return DeviceWorkflow.stepsAfterIdentify(repairFirst: false).allSatisfy { step in
            let decision = decider.decide(step, known)
            return decision.action == .skip && satisfied.contains(decision.code)
        }
    }

    /// The decider of every step (the same one a plan and `verify` use).
    var decider: StepDecider { StepDecider(profile: profile) }

    /// What is known now, for a step's decision.
    func facts(_ info: ReaderInfo) -> StepFacts {
        let delegate = self.delegate
        let context = self.context
        return StepFacts(mode: mode, device: device.name, info: info, inLoader: inLoader,
                         provisioning: provisioning, batteryPercent: battery.map { Int($0.percentRemaining) },
                         externalPower: battery?.externalPowerIsConnected ?? false, history: history, changed: changed,
                         regionsOffered: session?.regionNames(catalogue: runner.firmware?.regionCatalogue).names ?? RegionCatalog.all.map(\.name),
                         listings: runner.firmware?.listings, interactive: delegate.isInteractive, leftOut: leftOut,
                         policy: { offer in delegate.firmwarePolicy(context, offer: offer) })
    }

    /// A decision known to end the step (skip, refuse, postpone, fail) as its result.
    static func result(of decision: StepDecision) -> Result? {
        switch decision.action {
        case .skip: Result(result: .skipped, code: decision.code, arguments: decision.arguments, detail: decision.detail)
        case .refuse: Result(result: .refused, code: decision.code, arguments: decision.arguments, detail: decision.detail)
        case .postpone: Result(result: .postponed, code: decision.code, arguments: decision.arguments, detail: decision.detail)
        case .fail: Result(result: .failed, code: decision.code, arguments: decision.arguments, detail: decision.detail)
        case .run, .ask: nil
        }
    }

}
