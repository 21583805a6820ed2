import GrokBasics
import Foundation
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
    var mode: FleetMode { runner.options.mode }
    var runID: String { runner.options.runID }

    var context: FleetDeviceContext
    var session: ReaderSession?
    var lock: DeviceLock?
    /// The port's lock, taken before the port is opened.
    var portLock: DeviceLock?
    /// Intents of this Grokker left open by runs that ended between a change and its
    /// record (read once the Grokker is locked); each is resolved by its step, which asks
    /// the Grokker.
    var openIntents: [ChangeIntent] = []
    var steps: [StepOutcome] = []
    var smokeTests: [SmokeTestRecord] = []
    var provisioning: ProvisioningRecord?
    /// Steps done (changed the device) in this run.
    var changed: Set<FleetStep> = []
    /// The recorder's completed steps for this serial, oldest first.
    var history: [StepRecord] = []
    var firmwareTarget: FirmwareVersion?
    var stopCode: (String, [String])?
    /// The run was cancelled before this device finished.
    var interrupted = false
    var first: ReaderInfo?
    // p4-bounds hook: the wall-clock bounds on this Grokker's audio I/O (the port's stall
    // bound, this step's and the device run's limits, the run's cancellation), derived from
    // the profile's timeouts (Profile.Timeouts; docs/profiles.md, "Wall-clock bounds").
    let bound: WallClockBound
    var stepLimit: String?

    init(runner: FleetRunner, device: FleetDevice) {
        self.runner = runner
        self.device = device
        context = FleetDeviceContext(device: device.name)
        let cancellation = runner.options.cancellation
        bound = WallClockBound(stallSeconds: runner.profile.timeouts.stallBound, isCancelled: { cancellation.isCancelled })
    }

    var info: ReaderInfo? { context.info }
    var serial: String { context.serial ?? "" }
    var firmwareText: String? { info.map { "\($0.firmwareVersion)" } }
    /// The region the unit was set to (`nil`: not set, whatever the vendor rules show).
    var regionText: String? { info.flatMap { Self.regionSetByUser(info: $0, version: session?.version) }?.name }
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
        bound.setLimit("device run", seconds: profile.timeouts.deviceRunBound)  // p4-bounds hook
        defer {
            session?.close()
            lock?.unlock()
            portLock?.unlock()
        }
        var outcome = DeviceOutcome.done
        do {
            try step(.connect) { () throws(Stop) in try connect() }
            try step(.identify) { () throws(Stop) in try identify() }
            // A unit found in its loader can do nothing else: the update comes first.
            let repairFirst = inLoader && mode != .verify && profile.firmware != nil
            if repairFirst {
                try step(.firmware) { () throws(Stop) in try firmware() }
                try step(.reconnect) { () throws(Stop) in try reconnect() }
            }
            try step(.provision) { () throws(Stop) in try provision() }
            try step(.region) { () throws(Stop) in try region() }
            try step(.smokeTest) { () throws(Stop) in try smokeTest(.smokeTest) }
            if !repairFirst {
                try step(.firmware) { () throws(Stop) in try firmware() }
                try step(.reconnect) { () throws(Stop) in try reconnect() }
            }
            try step(.finalSmokeTest) { () throws(Stop) in try smokeTest(.finalSmokeTest) }
        } catch {
            // A step failed, was refused, or the run was cancelled: what follows is not tried.
        }
        if interrupted {
            outcome = .interrupted
        } else {
            outcome = Self.outcome(of: steps)
            // The ledger learns the device as it now stands, whatever happened, once it is known.
            if info != nil {
                try? step(.record) { () throws(Stop) in try record(outcome) }
                if steps.last?.step == .record, steps.last?.result == .failed { outcome = .failed }
            }
        }
        let report = finish(outcome, code: nil)
        delegate.deviceFinished(context, outcome: outcome, steps: steps)
        return report
    }

    static func outcome(of steps: [StepOutcome]) -> DeviceOutcome {
        if steps.contains(where: { $0.result == .failed }) { return .failed }
        if steps.contains(where: { $0.result == .refused }) { return .refused }
        // Declined by the person asked: not done, not failed; like a postponement the next run asks again.
        if steps.contains(where: { $0.result == .postponed || $0.result == .declined }) { return .postponed }
        return .done
    }

    func finish(_ outcome: DeviceOutcome, code error: FleetError?) -> DeviceReport {
        var code = error?.code
        var arguments = error?.arguments ?? []
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
        return DeviceReport(device: device.name, serial: context.serial, outcome: outcome, code: code, arguments: arguments,
                            steps: steps, smokeTests: smokeTests, firmwareBefore: firstFirmware, firmwareAfter: firmwareText,
                            regionBefore: firstRegion, regionAfter: regionText)
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

    /// Runs one step: checks for cancellation, tells the delegate, times it, records it,
    /// and stops the device when it failed or was refused.
    func step(_ step: FleetStep, _ body: () throws(Stop) -> Result) throws(Stop) {
        if runner.options.cancellation.isCancelled, step != .record {
            interrupted = true
            throw Stop()
        }
        delegate.stepStarted(context, step: step)
        // p4-bounds hook: this step's wall-clock limit replaces the last step's.
        if let stepLimit { bound.setLimit(stepLimit, seconds: nil) }
        stepLimit = "step \(step.rawValue)"
        bound.setLimit("step \(step.rawValue)", seconds: profile.timeouts.bound(of: step))
        let started = runner.options.clock()
        let wallStart = Date()
        let firmwareBefore = firmwareText
        let regionBefore = regionText
        var result: Result
        do {
            result = try body()
        } catch {
            result = Result(result: .failed, code: stopCode?.0 ?? "fleet_internal", arguments: stopCode?.1 ?? [])
        }
        // p4-bounds hook: a step the wall-clock bound ended says so (a stop signal: interrupted).
        if result.result == .failed, let fired = bound.fired { result = boundFailure(step, fired, otherwise: result) }
        if result.result == .done, step != .record, step != .connect, step != .identify, mode != .verify { changed.insert(step) }
        let outcome = StepOutcome(step: step, result: result.result, code: result.code, arguments: result.arguments,
                                  detail: result.detail, firmwareBefore: firmwareBefore, firmwareAfter: firmwareText,
                                  regionBefore: regionBefore, regionAfter: regionText, started: started,
                                  duration: Date().timeIntervalSince(wallStart))
        if result.result == .done, Self.changingSteps.contains(step), mode != .verify {
            runner.options.afterChange?(step)
        }
        steps.append(outcome)
        if info != nil {
            do {
                try runner.recorder.recordStep(StepRecord(runID: runID, serial: serial, device: device.name, outcome: outcome))
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
        let last = steps[steps.count - 1]
        // Verify changes nothing: a mismatch is reported and the next step is still checked.
        if mode == .verify, last.result == .failed, StepDecision.verifyGoesOn.contains(last.code) { return }
        if last.result == .failed || last.result == .refused { throw Stop() }
        // A declined region ends the device too (a smoke test cannot pass on a unit without
        // one); after a declined update the later steps are simply not needed.
        if last.result == .declined, step == .region { throw Stop() }
    }

    /// p4-bounds hook: what a step ended by ``bound`` reports.
    func boundFailure(_ step: FleetStep, _ fired: AudioError, otherwise: Result) -> Result {
        switch fired {
        case .cancelled:
            interrupted = true
            return .failing(.failed, .interrupted(device: device.name))
        case .stalled(_, let seconds):
            return .failing(.failed, .readerFrozen(device: device.name, step: step.rawValue, seconds: seconds))
        case .timedOut(_, let what, let seconds):
            return .failing(.failed, .timedOut(device: device.name, step: step.rawValue, what: what, seconds: seconds))
        default:
            return otherwise
        }
    }

    // MARK: Intents

    /// The steps that change a Grokker: each records its intent before sending the change.
    static let changingSteps: Set<FleetStep> = [.provision, .region, .firmware]

    /// Records the intent of `step` toward `target` before the change is sent. Returns the
    /// failure to end the step with when it cannot be recorded (then nothing is sent).
    func intend(_ step: FleetStep, target: String) -> Result? {
        do {
            try runner.recorder.recordIntent(runID: runID, serial: serial, step: step, target: target, at: runner.options.clock())
            return nil
        } catch {
            return .failing(.failed, .recorderFailed(operation: "record_intent", subject: "\(serial), \(step.rawValue)", error: error))
        }
    }

    /// Resolves the open intents of `step` left by ended runs, from what this run's step
    /// found on the Grokker: already satisfied means the interrupted run made the change
    /// (recorded as done by that run); changed now means it had not. Anything else (a
    /// failure, a refusal) leaves them open for the next run.
    func resolveOpenIntents(of step: FleetStep, outcome: StepOutcome) throws {
        let pending = openIntents.filter { $0.step == step }
        guard !pending.isEmpty else { return }
        let made: Bool
        if outcome.result == .skipped, outcome.code == "step_already_satisfied" {
            made = true
        } else if outcome.result == .done {
            made = false
        } else {
            return
        }
        for (index, intent) in pending.enumerated() {
            // Of several open intents for one step, the latest made the change.
            let author = made && index == pending.count - 1
            try runner.recorder.resolveIntent(intent, made: author, outcome: outcome, by: runID, at: runner.options.clock())
            if author {
                // History now knows the change (a smoke test after it may still be owed).
                var record = outcome
                record.result = .done
                history.append(StepRecord(runID: intent.runID, serial: serial, device: device.name, outcome: record))
            }
        }
        openIntents.removeAll { $0.step == step }
    }

    // MARK: Steps

    func readerFailure(_ step: FleetStep, _ error: ReaderError) -> Result {
        .failing(.failed, .reader(device: device.name, step: step.rawValue, cause: ErrorCause(error)))
    }

    func connect() throws(Stop) -> Result {
        guard delegate.requestMicrophonePermission(context) else {
            return .failing(.refused, .portUnavailable(device: device.name, cause: ErrorCause(code: "fleet_port_not_allowed")))
        }
        if session == nil {
            // Lock before you look: the port is this run's before anything is read from it.
            if portLock == nil, let key = device.portKey {
                do {
                    guard let held = try DeviceLock.acquire(directory: runner.options.lockDirectory, port: key) else {
                        let error = FleetError.portLocked(
                            device: device.name,
                            lockFile: DeviceLock.path(directory: runner.options.lockDirectory, fileName: DeviceLock.portLockName(key)))
                        lockedOut = error
                        return .failing(.refused, error)
                    }
                    portLock = held
                } catch {
                    return .failing(.failed, error)
                }
            }
            do {
                // p4-bounds hook: opening (a FIFO waits for its peer) and every transfer are bounded.
                let open = device.openPort
                session = try ReaderSession(port: try bound.guarding(port: device.name) { try open() }, options: runner.readerOptions)
                session?.driver.bound = bound
            } catch {
                return .failing(.failed, .portUnavailable(device: device.name, error: error))
            }
        }
        do {
            let connected = try connectWithRetries()
            context.info = connected
            if first == nil {
                first = connected
                firstRegion = regionText
            }
            return .done("step_connected", "connected in \(FleetError.number((session?.connectMilliseconds ?? 0) / 1000)) s of audio")
        } catch {
            return readerFailure(.connect, error)
        }
    }

    func connectWithRetries() throws(ReaderError) -> ReaderInfo {
        guard let session else { throw .lostConnection(port: device.name) }
        var attempt = 0
        while true {
            do {
                return try session.connect()
            } catch {
                attempt += 1
                if attempt > profile.retries.connect { throw error }
                try? session.rest(forAtMost: 0.5)
            }
        }
    }

    func identify() throws(Stop) -> Result {
        guard let session else { throw Stop() }
        let identified: ReaderInfo
        do {
            identified = try session.identify()
        } catch {
            return readerFailure(.identify, error)
        }
        context.info = identified
        do {
            guard let held = try DeviceLock.acquire(directory: runner.options.lockDirectory, serial: identified.serialNumberText) else {
                let path = (runner.options.lockDirectory as NSString).appendingPathComponent(identified.serialNumberText + ".lock")
                let error = FleetError.deviceLocked(device: device.name, serial: identified.serialNumberText, lockFile: path)
                lockedOut = error
                return .failing(.refused, error)
            }
            lock = held
        } catch {
            return .failing(.failed, error)
        }
        // The stations' shared ledger: no other station's run may work on it either.
        do {
            if let holder = try runner.recorder.lockFleetWide(serial: identified.serialNumberText, runID: runID) {
                let error = FleetError.deviceLocked(device: device.name, serial: identified.serialNumberText, lockFile: holder)
                lockedOut = error
                return .failing(.refused, error)
            }
        } catch {
            return .failing(.failed, .recorderFailed(operation: "lock_device", subject: identified.serialNumberText, error: error))
        }
        // A unit left in its loader by an interrupted update (GetVersion's software type 1)
        // has no application to go back to: the firmware step repairs it first (``run()``).
        inLoader = session.version?.software == .loader
        do {
            try runner.recorder.upsertDevice(deviceRecord(outcome: .done, provisioning: nil))
            history = try runner.recorder.completedSteps(serial: identified.serialNumberText)
            if mode != .verify { openIntents = try runner.recorder.openIntents(serial: identified.serialNumberText) }
        } catch {
            return .failing(.failed, .recorderFailed(operation: "read_history", subject: identified.serialNumberText, error: error))
        }
        if let failure = resolveUpdateShownByTheUnit(identified) { return failure }
        return .done("step_identified", identified.description)
    }

    /// An update an ended run was making, that the unit now runs (the run was stopped after
    /// the new image was started, before its step was recorded): resolved as that run's now,
    /// at identification, not at the firmware step. The smoke test before the firmware step
    /// is decided on history, and must see the update as a change that run made, not as
    /// firmware changed elsewhere (which would test the unit again before the final test).
    /// Region and provisioning are resolved at their own steps, which come before it.
    func resolveUpdateShownByTheUnit(_ info: ReaderInfo) -> Result? {
        let running = "\(info.firmwareVersion)"
        guard !inLoader, let latest = openIntents.last(where: { $0.step == .firmware }), latest.target == running else { return nil }
        let now = runner.options.clock()
        let found = StepOutcome(step: .firmware, result: .skipped, code: "step_already_satisfied",
                                detail: "runs \(running), the update an ended run was making",
                                firmwareBefore: running, firmwareAfter: running, regionBefore: regionText, regionAfter: regionText,
                                started: now, duration: 0)
        do {
            try resolveOpenIntents(of: .firmware, outcome: found)
            return nil
        } catch {
            return .failing(.failed, .recorderFailed(operation: "resolve_intent", subject: "\(serial), firmware", error: error))
        }
    }

    /// Set when another run holds the device: nothing of this run is recorded for it.
    var lockedOut: FleetError?
    /// The unit answered from its loader when identified.
    var inLoader = false
    /// The battery, once read (the firmware step reads it before deciding on an update).
    var battery: BatteryInfo?

    /// The decider of every step (the same one a plan and `verify` use).
    var decider: StepDecider { StepDecider(profile: profile) }

    /// What is known now, for a step's decision.
    func facts(_ info: ReaderInfo) -> StepFacts {
        let delegate = self.delegate
        let context = self.context
        return StepFacts(mode: mode, device: device.name, info: info, version: session?.version, inLoader: inLoader,
                         provisioning: provisioning, batteryPercent: battery.map { Int($0.percentRemaining) },
                         externalPower: battery?.externalPowerIsConnected ?? false, history: history, changed: changed,
                         regionsOffered: session?.regionNames(catalogue: runner.firmware?.regionCatalogue).names ?? RegionCatalog.all.map(\.name),
                         listings: runner.firmware?.listings, interactive: delegate.isInteractive,
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

    func provision() throws(Stop) -> Result {
        guard let policy = profile.provisioning else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        let record: ProvisioningRecord
        do {
            record = try session.provisioningRecord()
        } catch {
            return readerFailure(.provision, error)
        }
        provisioning = record
        let decision = decider.provision(facts(info))
        if let known = Self.result(of: decision) { return known }
        if mode == .verify { return .done("step_verified", decision.detail) }
        let needed = Self.provisioningChanges(policy, record: record)
        if let failure = intend(.provision, target: needed.map { "\($0.field) \($0.wanted)" }.joined(separator: ", ")) {
            return failure
        }
        do {
            try session.setProvisioningMode(true)
            defer { _ = try? session.setProvisioningMode(false) }
            for change in needed {
                switch change.field {
                case "serial_number": try session.registerSerialNumber(info.serialNumber)
                case "antenna_type": try session.setAntennaType(policy.antennaType ?? 0)
                case "hardware_revision": try session.setHardwareRevision(policy.hardwareRevision ?? info.hardwareRevision)
                case "provisioning_status": try session.setProvisioningStatus(policy.status ?? .none)
                default: break
                }
            }
            provisioning = try session.provisioningRecord()
            context.info = try session.identify()
        } catch {
            return readerFailure(.provision, error)
        }
        return .done("step_provisioned", needed.map { "\($0.field) \($0.found) -> \($0.wanted)" }.joined(separator: ", "))
    }

    struct ProvisioningChange {
        var field: String
        var wanted: String
        var found: String
    }

    static func provisioningChanges(_ policy: Profile.ProvisioningPolicy, record: ProvisioningRecord) -> [ProvisioningChange] {
        var changes: [ProvisioningChange] = []
        if policy.registerSerial, !record.provisioned {
            changes.append(ProvisioningChange(field: "serial_number", wanted: "registered", found: "not registered"))
        }
        if let type = policy.antennaType, type != record.antennaType {
            changes.append(ProvisioningChange(field: "antenna_type", wanted: String(type), found: String(record.antennaType)))
        }
        if let revision = policy.hardwareRevision, revision != record.hardwareRevision {
            changes.append(ProvisioningChange(field: "hardware_revision", wanted: String(revision), found: String(record.hardwareRevision)))
        }
        if let status = policy.status, status != record.status {
            changes.append(ProvisioningChange(field: "provisioning_status", wanted: status.name, found: record.status.name))
        }
        return changes
    }

    func region() throws(Stop) -> Result {
        guard profile.region != nil else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        let current = Self.regionSetByUser(info: info, version: session.version)
        // The signed region catalogue of the channel (read through TUF with the channel
        // before the run: FleetFirmware.load) says which regions this unit (its board
        // revision and serial number) may choose; without one, the vendor's 22.
        let catalogue = runner.firmware?.regionCatalogue
        let decision = decider.region(facts(info))
        if let known = Self.result(of: decision) {
            if decision.action == .refuse { delegate.setRegionCancelled(context) }
            return known
        }
        if mode == .verify { return .done("step_verified", decision.detail) }
        let name: String
        if decision.action == .ask {
            // Only the regions the profile allows (and the unit may choose) are offered.
            let choices = decision.choices
            delegate.startBackgroundAction(context, cause: .loadingRegions)
            delegate.finishBackgroundAction(context, cause: .loadingRegions)
            let index = delegate.chooseRegionFromRegions(context, names: choices, selected: nil)
            if let stopped = stoppedAtQuestion() { return stopped }
            guard let index, choices.indices.contains(index) else {
                if let stopped = stoppedAtQuestion() { return stopped }
                delegate.setRegionCancelled(context)
                return .failing(.refused, .regionNotChosen(device: device.name))
            }
            guard delegate.confirmRegion(context, name: choices[index]) else {
                if let stopped = stoppedAtQuestion() { return stopped }
                // The person said no to the region they were shown: declined, nothing set.
                delegate.setRegionCancelled(context)
                return .failing(.declined, .regionDeclined(device: device.name))
            }
            name = choices[index]
        } else {
            // The profile decided: nothing is asked.
            name = decision.target ?? ""
        }
        if let failure = intend(.region, target: name) { return failure }
        var attempt = 0
        while true {
            attempt += 1
            delegate.startBackgroundAction(context, cause: .settingRegion)
            do {
                let fresh = try session.setRegion(name, catalogue: catalogue)
                delegate.finishBackgroundAction(context, cause: .settingRegion)
                context.info = fresh
                delegate.notifySetRegionSuccess(context, name: name)
                delegate.afterSetRegionSuccess(context)
                return .done("step_region_set", "\(current?.name ?? "not set") -> \(name)")
            } catch {
                delegate.finishBackgroundAction(context, cause: .settingRegion)
                switch error {
                case .firmwareDoesNotSupportSetRegion:
                    delegate.notifyFirmwareDoesNotSupportSetRegion(context)
                    return .failing(.failed, .regionUnsupported(device: device.name, firmware: "\(info.firmwareVersion)"))
                case .regionNotApproved:
                    delegate.setRegionCancelled(context)
                    return .failing(.refused, .regionNotAllowed(device: device.name, region: name,
                                                                         allowed: session.regionNames(catalogue: catalogue).names))
                default:
                    break
                }
                let failure = FleetError.reader(device: device.name, step: FleetStep.region.rawValue, cause: ErrorCause(error))
                if delegate.notifySetRegionFailure(context, error: failure, attempt: attempt) == .giveUp {
                    return .failing(.failed, failure)
                }
                if session.connectionState != .connected, let info = try? connectWithRetries() { context.info = info }
            }
        }
    }

    /// Whether the reader's region is what `policy` wants. The vendor's rules show a region
    /// (FCC) for board revisions up to 5 even when none was ever set; a unit counts as set
    /// only when its GetVersion says the user set it (flag 0x80), so such a unit is given
    /// the profile's region explicitly (readers that enforce it refuse an inventory otherwise).
    static func regionSatisfied(_ policy: Profile.RegionPolicy, info: ReaderInfo, version: VendorReaderVersion?) -> Bool {
        guard let current = regionSetByUser(info: info, version: version) else { return false }
        if let wanted = policy.set { return current.number == wanted.number }
        return policy.allows(current)
    }

    /// The region the unit was set to: `nil` when GetVersion's user-set flag is clear.
    static func regionSetByUser(info: ReaderInfo, version: VendorReaderVersion?) -> RegionSetting? {
        if let version, version.deviceFlags & RegionSettingRules.userHasSetRegionFlag == 0 { return nil }
        return info.region
    }

    func smokeTest(_ step: FleetStep) throws(Stop) -> Result {
        guard let policy = profile.smokeTest else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        if let known = Self.result(of: decider.smokeTest(step, facts(info))) { return known }
        var attempt = 0
        while true {
            attempt += 1
            let measurement: SmokeTestMeasurement
            do {
                measurement = try SmokeTest.run(policy, on: session)
            } catch {
                if attempt <= profile.retries.smokeTest {
                    if session.connectionState != .connected, let fresh = try? connectWithRetries() { context.info = fresh }
                    continue
                }
                return readerFailure(step, error)
            }
            let record = SmokeTestRecord(
                runID: runID, serial: serial, device: device.name, step: step, passed: measurement.passed,
                reasons: measurement.reasons, inventoryType: policy.inventoryType.code, duration: measurement.duration,
                reads: measurement.reads, readsPerSecond: measurement.readsPerSecond, uniqueTags: measurement.uniqueTags,
                expectedTags: policy.referenceTags.map(\.description), missingTags: measurement.missingTags,
                strongestRSSI: measurement.strongestRSSI, weakestReferenceRSSI: measurement.weakestReferenceRSSI,
                firmware: "\(info.firmwareVersion)", region: regionText, time: runner.options.clock())
            smokeTests.append(record)
            do {
                try runner.recorder.recordSmokeTest(record)
            } catch {
                return .failing(.failed, .recorderFailed(operation: "record_smoke_test", subject: serial, error: error))
            }
            if measurement.passed { return .done(mode == .verify ? "step_verified" : "step_smoke_test_passed", measurement.detail) }
            if attempt > profile.retries.smokeTest {
                return .failing(.failed, .smokeTestFailed(device: device.name, measurement: measurement))
            }
        }
    }

    func firmware() throws(Stop) -> Result {
        guard let policy = profile.firmware else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        var known = facts(info)
        if mode != .verify, !inLoader { known.automaticFirmwareUpdate = delegate.doAutomaticFirmwareUpdate(context) }
        delegate.startBackgroundAction(context, cause: .loadingFirmwareUpdate)
        var decision = decider.firmware(known)
        // An update is judged on the battery (a loader answers no battery request: the
        // update, the repair, goes ahead): read it, then decide again.
        if decision.action == .run || decision.action == .ask, !inLoader, battery == nil {
            do {
                battery = try session.batteryInfo()
            } catch {
                delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
                return readerFailure(.firmware, error)
            }
            known.batteryPercent = battery.map { Int($0.percentRemaining) }
            known.externalPower = battery?.externalPowerIsConnected ?? false
            decision = decider.firmware(known)
        }
        if let ended = Self.result(of: decision) {
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            if let error = decision.error {
                if decision.code == "fleet_firmware_cache" { delegate.notifyFirmwareUpdateErrorLoadingUpdate(context, error: error) }
                else if decision.action == .refuse { delegate.notifyFirmwareUpdateErrorStartingUpdate(context, error: error) }
            }
            if decision.action == .postpone { delegate.afterFirmwareUpdate(context, updated: false) }
            return ended
        }
        if mode == .verify {
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            return .done("step_verified", decision.detail)
        }
        guard let firmware = runner.firmware,
              case .install(let listing, let compatibility) = FirmwareTargeting.resolve(policy, listings: firmware.listings, info: info,
                                                                                        inLoader: inLoader, device: device.name)
        else { throw Stop() }
        let target = listing.metadata.version
        firmwareTarget = target
        let release: FirmwareRelease
        do {
            release = try firmware.releaseBlocking(listing)
        } catch {
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            delegate.notifyFirmwareUpdateErrorLoadingUpdate(context, error: error)
            return .failing(.failed, error)
        }
        delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)

        let offer = FirmwareOffer(name: listing.name, channel: policy.channel, version: target,
                                  running: info.firmwareVersion, compatibility: compatibility,
                                  readerProtocol: listing.metadata.readerProtocol, notes: listing.metadata.notes,
                                  buildDate: listing.metadata.buildDate, batteryPercent: battery.map { Int($0.percentRemaining) },
                                  externalPower: battery?.externalPowerIsConnected ?? false)
        // The policy allowed it: the delegate is offered it (a person asked, the policy answers as decided).
        let answer = delegate.promptForFirmwareUpdate(context, offer: offer)
        if let stopped = stoppedAtQuestion() {
            delegate.afterFirmwareUpdate(context, updated: false)
            return stopped
        }
        switch answer {
        case .update:
            break
        case .postpone(let reason, let arguments):
            delegate.afterFirmwareUpdate(context, updated: false)
            return Result(result: .postponed, code: reason, arguments: arguments, detail: "update to \(offer.version) postponed")
        case .cancel(let reason, let arguments):
            delegate.afterFirmwareUpdate(context, updated: false)
            // Declined by whoever was asked: its own result, not a postponement by policy (the
            // device is not as the profile wants: the run is incomplete).
            return Result(result: .declined, code: reason, arguments: arguments, detail: "update to \(offer.version) declined")
        }

        if let failure = intend(.firmware, target: "\(target)") {
            delegate.afterFirmwareUpdate(context, updated: false)
            return failure
        }
        var options = FirmwareUpdateOptions()
        options.allowDowngrade = policy.allowDowngrade
        options.allowSameVersion = policy.allowSameVersion
        options.minimumBatteryPercent = profile.minimumBatteryPercent
        options.batteryPercent = battery.map { Int($0.percentRemaining) }
        options.reconnectTimeoutSeconds = profile.timeouts.reconnect
        let before = info.firmwareVersion
        var attempt = 0
        while true {
            attempt += 1
            let cancel = CancelSwitch()
            delegate.displayFirmwareUpdateProgress(context, cancel: cancel)
            let run = runner.options.cancellation
            let context = self.context
            let delegate = self.delegate
            let report = FirmwareUpdater(session: session, options: options).update(
                to: release.ugif, progress: { delegate.updateFirmwareUpdateProgress(context, progress: $0) },
                shouldCancel: { cancel.isCancelled || run.isCancelled })
            if let fresh = session.info { self.context.info = fresh }
            if report.result == .success {
                delegate.notifyFirmwareUpdateSuccess(self.context, report: report)
                delegate.afterFirmwareUpdate(self.context, updated: true)
                return .done("step_firmware_updated", "\(before) -> \(target) in \(FleetError.number(report.audioSeconds)) s of audio")
            }
            let failure = FleetError.firmwareUpdateFailed(device: device.name, code: Self.code(of: report.result), detail: report.detail)
            switch report.result {
            case .batteryTooLow:
                let low = FleetError.batteryLow(device: device.name, percent: options.batteryPercent ?? 0, minimum: profile.minimumBatteryPercent)
                delegate.notifyFirmwareUpdateErrorStartingUpdate(self.context, error: low)
                delegate.afterFirmwareUpdate(self.context, updated: false)
                return .failing(.postponed, low)
            case .incompatibleHardware, .incompatibleVersion, .badFile, .noFile:
                delegate.notifyFirmwareUpdateErrorStartingUpdate(self.context, error: failure)
                delegate.afterFirmwareUpdate(self.context, updated: false)
                return .failing(.refused, failure)
            case .cancelled:
                delegate.afterFirmwareUpdate(self.context, updated: false)
                if run.isCancelled {
                    interrupted = true
                    return .failing(.failed, .interrupted(device: device.name))
                }
                return .failing(.postponed, .updateDeclined(device: device.name, decision: "cancelled"))
            case .cantReconnect:
                delegate.abortFirmwareUpdateInteraction(self.context)
            default:
                break
            }
            if delegate.notifyFirmwareUpdateFailure(self.context, error: failure, mustRetry: false, attempt: attempt) == .giveUp {
                delegate.afterFirmwareUpdate(self.context, updated: false)
                return .failing(.failed, failure)
            }
            if !session.isConnected, let fresh = try? connectWithRetries() { self.context.info = fresh }
        }
    }

    /// When the run was stopped while a question was open (Ctrl-C at the prompt): the step
    /// ends interrupted, whatever the answer, and nothing more is changed.
    func stoppedAtQuestion() -> Result? {
        guard runner.options.cancellation.isCancelled else { return nil }
        interrupted = true
        return .failing(.failed, .interrupted(device: device.name))
    }

    /// The stable code of a vendor update result (`firmware_update_battery_too_low` ...).
    static func code(of result: FirmwareUpdateResult) -> String { "firmware_update_" + result.vendorName.lowercased() }

    func reconnect() throws(Stop) -> Result {
        guard let session else { throw Stop() }
        guard let info else { throw Stop() }
        if let known = Self.result(of: decider.reconnect(facts(info))) { return known }
        guard let target = firmwareTarget else { return .skipped("step_not_needed") }
        session.disconnect()
        do {
            try? session.rest(forAtMost: 0.2)
            _ = try connectWithRetries()
            context.info = try session.identify()
        } catch {
            return readerFailure(.reconnect, error)
        }
        inLoader = session.version?.software == .loader
        guard let info = self.info, info.firmwareVersion == target, !inLoader else {
            return .failing(.failed, .firmwareNotRunning(device: device.name, expected: "\(target)", found: firmwareText ?? "?"))
        }
        return .done("step_reconnected", "runs \(info.firmwareVersion)")
    }

    func record(_ outcome: DeviceOutcome) throws(Stop) -> Result {
        if lockedOut != nil { return .skipped("step_not_recorded_locked") }
        if provisioning == nil, let session, session.connectionState == .connected {
            provisioning = try? session.provisioningRecord()
        }
        do {
            try runner.recorder.upsertDevice(deviceRecord(outcome: outcome, provisioning: provisioning))
        } catch {
            return .failing(.failed, .recorderFailed(operation: "record_device", subject: serial, error: error))
        }
        return .done("step_recorded", "\(outcome.rawValue)")
    }

    func deviceRecord(outcome: DeviceOutcome, provisioning: ProvisioningRecord?) -> DeviceRecord {
        let info = self.info!
        return DeviceRecord(serial: info.serialNumberText, hardwareModel: info.hardwareModel, hardwareRevision: Int(info.hardwareRevision),
                            firmware: "\(info.firmwareVersion)", loader: "\(info.loaderVersion)", region: regionText,
                            provisioned: info.provisioned, antennaType: provisioning.map { Int($0.antennaType) },
                            provisioningStatus: provisioning?.status.name, lastDevice: device.name, lastRunID: runID,
                            lastOutcome: outcome, updated: runner.options.clock())
    }

    // MARK: Dry run

    /// What a run would do to this device, decided by the same ``StepDecider`` the run
    /// uses, from what the reader says about itself (identify, its provisioning record and
    /// battery), the ledger's history and the channel. Nothing is sent that changes the
    /// unit and nothing is recorded. The port is opened as the run opens it (its lock held
    /// while the plan reads, the wall-clock bounds), so a plan never talks to a port
    /// another run is using. After a step the plan assumes it succeeded (a smoke test's
    /// result is known only once it ran) and after a refusal or known failure it shows the
    /// later steps as not reached, as the run stops there.
    /// - Parameters:
    ///   - policy: the policy whose firmware answers the plan shows (default: the run's delegate's).
    ///   - interactive: the run would ask a person (the plan shows the questions as `ask`).
    func plan(policy: PolicyDelegate?, interactive: Bool) -> DevicePlan {
        defer {
            session?.close()
            lock?.unlock()
            portLock?.unlock()
        }
        bound.setLimit("device run", seconds: profile.timeouts.deviceRunBound)
        var planned: [PlannedStep] = []
        func unreachable(_ step: FleetStep, _ result: Result) -> DevicePlan {
            let error = result.error ?? .portUnavailable(device: device.name, cause: ErrorCause(code: "fleet_port_not_connected"))
            planned.append(PlannedStep(step: step, action: result.result == .refused ? .refuse : .fail, code: result.code,
                                       arguments: result.arguments, detail: result.detail))
            return DevicePlan(device: device.name, serial: self.context.serial, error: error, steps: planned)
        }
        bound.setLimit("step connect", seconds: profile.timeouts.bound(of: .connect))
        let connected = (try? connect()) ?? .failing(.failed, .portUnavailable(device: device.name, cause: ErrorCause(code: "fleet_port_not_connected")))
        guard connected.result == .done, let session, let info else { return unreachable(.connect, connected) }
        planned.append(decider.decide(.connect, facts(info)).planned)
        bound.setLimit("step connect", seconds: nil)
        bound.setLimit("step identify", seconds: profile.timeouts.bound(of: .identify))
        let identified: ReaderInfo
        do {
            identified = try session.identify()
        } catch {
            return unreachable(.identify, readerFailure(.identify, error))
        }
        context.info = identified
        // A Grokker another run holds is refused by the run: the plan says so (the lock is
        // held only while the plan reads).
        do {
            guard let held = try DeviceLock.acquire(directory: runner.options.lockDirectory, serial: identified.serialNumberText) else {
                let path = (runner.options.lockDirectory as NSString).appendingPathComponent(identified.serialNumberText + ".lock")
                return unreachable(.identify, .failing(.refused, .deviceLocked(device: device.name, serial: identified.serialNumberText, lockFile: path)))
            }
            lock = held
        } catch {
            return unreachable(.identify, .failing(.failed, error))
        }
        inLoader = session.version?.software == .loader
        history = (try? runner.recorder.completedSteps(serial: identified.serialNumberText)) ?? []
        planned.append(decider.decide(.identify, facts(identified)).planned)
        bound.setLimit("step identify", seconds: nil)

        var known = facts(identified)
        known.interactive = interactive
        let planContext = self.context
        if let policy { known.policy = { offer in policy.firmwareDecision(planContext, offer: offer) } }
        let repairFirst = inLoader && mode != .verify && profile.firmware != nil
        let sequence: [FleetStep] = repairFirst ? [.firmware, .reconnect, .provision, .region, .smokeTest, .finalSmokeTest]
                                                : [.provision, .region, .smokeTest, .firmware, .reconnect, .finalSmokeTest]
        var stopped = false
        for step in sequence {
            if stopped {
                planned.append(PlannedStep(step: step, action: .skip, code: "step_not_reached", arguments: [], detail: ""))
                continue
            }
            bound.setLimit("step \(step.rawValue)", seconds: profile.timeouts.bound(of: step))
            defer { bound.setLimit("step \(step.rawValue)", seconds: nil) }
            var decision: StepDecision
            switch step {
            case .provision where profile.provisioning != nil:
                do {
                    known.provisioning = try session.provisioningRecord()
                } catch {
                    return unreachable(step, readerFailure(step, error))
                }
                decision = decider.decide(step, known)
            case .firmware:
                if mode != .verify, !known.inLoader { known.automaticFirmwareUpdate = delegate.doAutomaticFirmwareUpdate(context) }
                decision = decider.decide(step, known)
                if decision.action == .run || decision.action == .ask, !known.inLoader, known.batteryPercent == nil {
                    do {
                        let battery = try session.batteryInfo()
                        known.batteryPercent = Int(battery.percentRemaining)
                        known.externalPower = battery.externalPowerIsConnected
                    } catch {
                        return unreachable(step, readerFailure(step, error))
                    }
                    decision = decider.decide(step, known)
                }
            default:
                decision = decider.decide(step, known)
            }
            planned.append(decision.planned)
            switch decision.action {
            case .refuse, .fail:
                stopped = decision.stopsTheDevice(mode)
            case .run, .ask:
                // What the run will have changed, had the step succeeded (the plan's assumption).
                guard mode != .verify else { break }
                switch step {
                case .provision:
                    known.changed.insert(.provision)
                case .region:
                    known.changed.insert(.region)
                    let name = decision.target ?? decision.choices.first
                    if let region = name.flatMap(RegionCatalog.find) {
                        known.info.region = region.setting
                        known.info.userMustSetRegion = false
                        known.version?.deviceFlags |= RegionSettingRules.userHasSetRegionFlag
                    }
                case .firmware:
                    known.changed.insert(.firmware)
                    if let target = decision.target.flatMap({ FirmwareVersion($0) }) { known.info.firmwareVersion = target }
                    known.inLoader = false
                default:
                    break
                }
            case .skip, .postpone:
                break
            }
        }
        planned.append(decider.decide(.record, known).planned)
        return DevicePlan(device: device.name, serial: identified.serialNumberText, error: nil, steps: planned)
    }
}
