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
        if steps.contains(where: { $0.result == .postponed }) { return .postponed }
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

        static func done(_ code: String, _ detail: String = "") -> Result { Result(result: .done, code: code, detail: detail) }
        static func skipped(_ code: String, _ detail: String = "") -> Result { Result(result: .skipped, code: code, detail: detail) }
        static func failing(_ result: StepResult, _ error: FleetError) -> Result {
            Result(result: result, code: error.code, arguments: error.arguments, detail: error.description)
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
                let failure = FleetError.recorderFailed(operation: "recording step \(step.rawValue) of \(device.name)", detail: "\(error)")
                steps[steps.count - 1].result = .failed
                steps[steps.count - 1].code = failure.code
                steps[steps.count - 1].arguments = failure.arguments
                steps[steps.count - 1].detail = failure.description
            }
        }
        delegate.stepFinished(context, outcome: steps[steps.count - 1])
        if steps[steps.count - 1].result == .failed || steps[steps.count - 1].result == .refused { throw Stop() }
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
            return .failing(.failed, .recorderFailed(operation: "recording the intent of \(step.rawValue) on \(serial)", detail: "\(error)"))
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
            return .failing(.refused, .portUnavailable(device: device.name, detail: "the delegate did not allow the audio port"))
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
                return .failing(.failed, .portUnavailable(device: device.name, detail: "\(error)"))
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
        // A unit left in its loader by an interrupted update (GetVersion's software type 1)
        // has no application to go back to: the firmware step repairs it first (``run()``).
        inLoader = session.version?.software == .loader
        do {
            try runner.recorder.upsertDevice(deviceRecord(outcome: .done, provisioning: nil))
            history = try runner.recorder.completedSteps(serial: identified.serialNumberText)
            if mode != .verify { openIntents = try runner.recorder.openIntents(serial: identified.serialNumberText) }
        } catch {
            return .failing(.failed, .recorderFailed(operation: "reading the history of \(identified.serialNumberText)", detail: "\(error)"))
        }
        return .done("step_identified", identified.description)
    }

    /// Set when another run holds the device: nothing of this run is recorded for it.
    var lockedOut: FleetError?
    /// The unit answered from its loader when identified.
    var inLoader = false

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
        let needed = Self.provisioningChanges(policy, record: record)
        if mode == .verify {
            if let first = needed.first {
                return .failing(.failed, .verifyMismatch(device: device.name, what: first.field, expected: first.wanted, found: first.found))
            }
            return .done("step_verified", "provisioning as the profile says")
        }
        guard !needed.isEmpty else { return .skipped("step_already_satisfied", "provisioning as the profile says") }
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
        guard let policy = profile.region else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        // What the unit says it was set to (a region the vendor rules only show is "not set").
        let current = Self.regionSetByUser(info: info, version: session.version)
        let satisfied = Self.regionSatisfied(policy, info: info, version: session.version)
        if mode == .verify {
            if satisfied { return .done("step_verified", "region \(current?.name ?? "")") }
            let expected = policy.set?.name ?? policy.allowed.map(\.name).joined(separator: " | ")
            return .failing(.failed, .verifyMismatch(device: device.name, what: "region", expected: expected, found: current?.name ?? "not set"))
        }
        if satisfied { return .skipped("step_already_satisfied", "region \(current?.name ?? "")") }

        // The signed region catalogue of the channel says which regions this unit (its board
        // revision and serial number) may choose; without one, the vendor's 22 are offered.
        delegate.startBackgroundAction(context, cause: .loadingRegions)
        // (Read through TUF with the channel before the run: FleetFirmware.load.)
        let catalogue = runner.firmware?.regionCatalogue
        let offered = session.regionNames(catalogue: catalogue)
        delegate.finishBackgroundAction(context, cause: .loadingRegions)
        guard let index = delegate.chooseRegionFromRegions(context, names: offered.names, selected: offered.selected),
              offered.names.indices.contains(index)
        else {
            delegate.setRegionCancelled(context)
            return .failing(.refused, .regionNotChosen(device: device.name))
        }
        let name = offered.names[index]
        guard let chosen = RegionCatalog.find(name), policy.allows(chosen.setting) else {
            delegate.setRegionCancelled(context)
            return .failing(.refused, .regionNotAllowed(device: device.name, region: name, allowed: policy.allowed.map(\.name)))
        }
        guard delegate.confirmRegion(context, name: name) else {
            delegate.setRegionCancelled(context)
            return .failing(.refused, .regionNotChosen(device: device.name))
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
                    return .failing(.refused, .regionNotAllowed(device: device.name, region: name, allowed: offered.names))
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

    /// Whether a smoke test is still owed. In this run: after a change made in this run
    /// (provision or region for the first test, firmware for the final one). From the
    /// recorder's history (a re-run): when the newest recorded change has no passed smoke
    /// test after it, the test that follows that kind of change is owed; a Grokker never
    /// smoke-tested owes the first test; a Grokker whose firmware or region differ from its
    /// last passed test (changed elsewhere) owes the first test.
    func smokeTestOwed(_ step: FleetStep) -> Bool {
        let ownChanges: Set<FleetStep> = step == .smokeTest ? [.provision, .region] : [.firmware]
        if !changed.isDisjoint(with: ownChanges) { return true }
        let lastSmoke = history.lastIndex { [.smokeTest, .finalSmokeTest].contains($0.step) && $0.result == .done }
        let lastChange = history.lastIndex { [.provision, .region, .firmware].contains($0.step) && $0.result == .done }
        guard let lastSmoke else { return step == .smokeTest }
        if let lastChange, lastChange > lastSmoke {
            return ownChanges.contains(history[lastChange].step)
        }
        let proven = history[lastSmoke]
        return step == .smokeTest && (proven.firmwareAfter != firmwareText || proven.regionAfter != regionText)
    }

    func smokeTest(_ step: FleetStep) throws(Stop) -> Result {
        guard let policy = profile.smokeTest else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        if mode == .verify {
            if step == .finalSmokeTest { return .skipped("step_not_applicable") }
        } else if step == .smokeTest, changed.contains(.firmware) {
            // A unit repaired from its loader first: the final smoke test, after every change, proves it.
            return .skipped("step_not_needed", "the final smoke test follows the update")
        } else if !smokeTestOwed(step) {
            return .skipped("step_already_satisfied", "a smoke test passed since the last change")
        }
        if info.userMustSetRegion {
            return .failing(.failed, .smokeTestFailed(device: device.name, measurement: .regionNotSet()))
        }
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
                return .failing(.failed, .recorderFailed(operation: "recording the smoke test of \(serial)", detail: "\(error)"))
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
        if mode != .verify, !inLoader, !delegate.doAutomaticFirmwareUpdate(context) { return .skipped("step_firmware_check_disabled") }
        guard let firmware = runner.firmware else {
            let error = FleetError.firmwareCache(channel: policy.channel, cause: ErrorCause(code: "fleet_no_channel"))
            delegate.notifyFirmwareUpdateErrorLoadingUpdate(context, error: error)
            return .failing(.failed, error)
        }
        delegate.startBackgroundAction(context, cause: .loadingFirmwareUpdate)
        let listing: FirmwareListing
        let compatibility: FirmwareCompatibility
        switch FirmwareTargeting.resolve(policy, listings: firmware.listings, info: info, inLoader: inLoader, device: device.name) {
        case .satisfied(let detail):
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            return mode == .verify ? .done("step_verified", detail) : .skipped("step_already_satisfied", detail)
        case .refused(let error):
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            if mode == .verify {
                return .failing(.failed, .verifyMismatch(device: device.name, what: "firmware", expected: policy.target.description, found: "\(info.firmwareVersion)"))
            }
            delegate.notifyFirmwareUpdateErrorStartingUpdate(context, error: error)
            return .failing(.refused, error)
        case .install(let found, let value):
            listing = found
            compatibility = value
        }
        let target = listing.metadata.version
        firmwareTarget = target
        if mode == .verify {
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            let found = inLoader ? "loader \(info.firmwareVersion)" : "\(info.firmwareVersion)"
            return .failing(.failed, .verifyMismatch(device: device.name, what: "firmware", expected: "\(target)", found: found))
        }
        let release: FirmwareRelease
        do {
            release = try firmware.releaseBlocking(listing)
        } catch {
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            delegate.notifyFirmwareUpdateErrorLoadingUpdate(context, error: error)
            return .failing(.failed, error)
        }
        delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)

        // A loader answers no battery request: the update (the repair) goes ahead.
        var battery: BatteryInfo?
        if !inLoader {
            do {
                battery = try session.batteryInfo()
            } catch {
                return readerFailure(.firmware, error)
            }
        }
        let offer = FirmwareOffer(name: listing.name, channel: policy.channel, version: target,
                                  running: info.firmwareVersion, compatibility: compatibility,
                                  readerProtocol: listing.metadata.readerProtocol, notes: listing.metadata.notes,
                                  buildDate: listing.metadata.buildDate, batteryPercent: battery.map { Int($0.percentRemaining) },
                                  externalPower: battery?.externalPowerIsConnected ?? false)
        switch delegate.promptForFirmwareUpdate(context, offer: offer) {
        case .update:
            break
        case .postpone(let reason, let arguments):
            delegate.afterFirmwareUpdate(context, updated: false)
            return Result(result: .postponed, code: reason, arguments: arguments, detail: "update to \(offer.version) postponed")
        case .cancel(let reason, let arguments):
            delegate.afterFirmwareUpdate(context, updated: false)
            return Result(result: .skipped, code: reason, arguments: arguments, detail: "update to \(offer.version) not for this device")
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

    /// The stable code of a vendor update result (`firmware_update_battery_too_low` ...).
    static func code(of result: FirmwareUpdateResult) -> String { "firmware_update_" + result.vendorName.lowercased() }

    func reconnect() throws(Stop) -> Result {
        guard let session else { throw Stop() }
        guard changed.contains(.firmware), let target = firmwareTarget else { return .skipped("step_not_needed") }
        session.disconnect()
        do {
            try? session.rest(forAtMost: 0.2)
            _ = try connectWithRetries()
            context.info = try session.identify()
        } catch {
            return readerFailure(.reconnect, error)
        }
        inLoader = session.version?.software == .loader
        guard let info, info.firmwareVersion == target, !inLoader else {
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
            return .failing(.failed, .recorderFailed(operation: "recording Grokker \(serial)", detail: "\(error)"))
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

    func plan(policy: PolicyDelegate?) -> DevicePlan {
        let session: ReaderSession
        do {
            session = try ReaderSession(port: try device.openPort(), options: runner.readerOptions)
        } catch {
            return DevicePlan(device: device.name, serial: nil, error: .portUnavailable(device: device.name, detail: "\(error)"), steps: [])
        }
        defer { session.close() }
        let info: ReaderInfo
        do {
            info = try session.connect()
        } catch {
            return DevicePlan(device: device.name, serial: nil,
                              error: .reader(device: device.name, step: FleetStep.connect.rawValue, cause: ErrorCause(error)), steps: [])
        }
        context.info = info
        var planned: [PlannedStep] = []
        func add(_ step: FleetStep, _ action: PlannedStep.Action, _ code: String, _ arguments: [String] = [], _ detail: String = "") {
            planned.append(PlannedStep(step: step, action: action, code: code, arguments: arguments, detail: detail))
        }
        add(.connect, .run, "step_connected")
        add(.identify, .run, "step_identified", [], info.description)
        let verify = mode == .verify
        var changes = false
        // Provisioning.
        if let p = profile.provisioning {
            if let record = try? session.provisioningRecord() {
                let needed = Self.provisioningChanges(p, record: record)
                if needed.isEmpty { add(.provision, verify ? .run : .skip, verify ? "step_verified" : "step_already_satisfied") }
                else if verify {
                    let first = needed[0]
                    add(.provision, .refuse, FleetError.verifyMismatch(device: device.name, what: first.field, expected: first.wanted, found: first.found).code)
                } else {
                    changes = true
                    add(.provision, .run, "step_provisioned", [], needed.map { "\($0.field) \($0.found) -> \($0.wanted)" }.joined(separator: ", "))
                }
            } else {
                add(.provision, .refuse, FleetError.reader(device: device.name, step: "provision", cause: ErrorCause(code: "")).code)
            }
        } else {
            add(.provision, .skip, "step_not_configured")
        }
        // Region.
        var region = info.region
        let userRegion = Self.regionSetByUser(info: info, version: session.version)
        if let r = profile.region {
            let satisfied = Self.regionSatisfied(r, info: info, version: session.version)
            if satisfied {
                add(.region, verify ? .run : .skip, verify ? "step_verified" : "step_already_satisfied", [], info.region?.name ?? "")
            } else if verify {
                add(.region, .refuse, "fleet_verify_mismatch", [], userRegion?.name ?? "not set")
            } else if let wanted = r.set {
                changes = true
                region = wanted.setting
                add(.region, .run, "step_region_set", [], "\(userRegion?.name ?? "not set") -> \(wanted.name)")
            } else {
                add(.region, .run, "step_region_set", [], "a region to choose from the allowed list")
                changes = true
            }
        } else {
            add(.region, .skip, "step_not_configured")
        }
        if profile.smokeTest == nil {
            add(.smokeTest, .skip, "step_not_configured")
        } else if verify || changes {
            add(.smokeTest, .run, verify ? "step_verified" : "step_smoke_test_passed")
        } else {
            add(.smokeTest, .skip, "step_already_satisfied", [], "unless the ledger has no passed smoke test since the last change")
        }
        // Firmware.
        var flash = false
        if let f = profile.firmware, let firmware = runner.firmware {
            let loader = session.version?.software == .loader
            switch FirmwareTargeting.resolve(f, listings: firmware.listings, info: info, inLoader: loader, device: device.name) {
            case .satisfied(let detail):
                add(.firmware, verify ? .run : .skip, verify ? "step_verified" : "step_already_satisfied", [], detail)
            case .refused(let error):
                add(.firmware, .refuse, verify ? "fleet_verify_mismatch" : error.code, error.arguments, error.description)
            case .install(let listing, let compatibility):
                let target = listing.metadata.version
                if verify {
                    add(.firmware, .refuse, "fleet_verify_mismatch", [], "\(info.firmwareVersion) -> \(target)")
                } else {
                    let offer = FirmwareOffer(name: listing.name, channel: f.channel, version: target, running: info.firmwareVersion,
                                              compatibility: compatibility, readerProtocol: listing.metadata.readerProtocol,
                                              notes: listing.metadata.notes, buildDate: listing.metadata.buildDate,
                                              batteryPercent: nil, externalPower: false)
                    var planContext = context
                    planContext.info?.region = region
                    switch policy?.firmwareDecision(planContext, offer: offer) ?? .update {
                    case .update:
                        flash = true
                        let from = loader ? "loader \(info.firmwareVersion)" : "\(info.firmwareVersion)"
                        add(.firmware, .run, "step_firmware_updated", [], "\(from) -> \(target) (battery checked at run time)")
                    case .postpone(let reason, let arguments):
                        add(.firmware, .postpone, reason, arguments)
                    case .cancel(let reason, let arguments):
                        add(.firmware, .skip, reason, arguments)
                    }
                }
            }
        } else if let f = profile.firmware {
            add(.firmware, .refuse, "fleet_firmware_cache", [f.channel], "no firmware channel given")
        } else {
            add(.firmware, .skip, "step_not_configured")
        }
        add(.reconnect, flash ? .run : .skip, flash ? "step_reconnected" : "step_not_needed")
        add(.finalSmokeTest, flash && profile.smokeTest != nil ? .run : .skip,
            flash && profile.smokeTest != nil ? "step_smoke_test_passed" : (verify ? "step_not_applicable" : "step_not_needed"))
        add(.record, .run, "step_recorded")
        return DevicePlan(device: device.name, serial: info.serialNumberText, error: nil, steps: planned)
    }
}
