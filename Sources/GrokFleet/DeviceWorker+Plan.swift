import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokLedger
import GrokLink
import GrokProtocol
import UGrokIt

// The dry run: the same workflow and decisions, without changing the unit.
extension DeviceWorker {
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
        // Connect and identify read the unit as the run does; the workflow then says which
        // steps follow, in which order, and where the device would stop.
        var action = workflow.next(.start)
        bound.setLimit("step connect", seconds: profile.timeouts.bound(of: .connect))
        let connected = (try? connect()) ?? .failing(.failed, .portUnavailable(device: device.name, cause: ErrorCause(code: "fleet_port_not_connected")))
        guard connected.result == .done, let session, let info else { return unreachable(.connect, connected) }
        let connectDecision = decider.decide(.connect, facts(info))
        planned.append(connectDecision.planned)
        action = workflow.next(.ended(DeviceWorkflow.assumedEnding(of: connectDecision)))
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
        if let refused = lockBySerial(identified.serialNumberText) { return unreachable(.identify, refused) }
        inLoader = session.version?.software == .loader
        history = runner.recorder.flatMap { try? Self.completedSteps(serial: identified.serialNumberText, in: $0) } ?? []
        // The stage the run would ask: the plan's policy's (a dry run reads it, never makes it).
        leftOut = (policy.map { $0 as any ConfigurationDelegate } ?? delegate).stageLeavesOut(context)
        let identifyDecision = decider.decide(.identify, facts(identified))
        planned.append(identifyDecision.planned)
        action = workflow.next(.ended(DeviceWorkflow.assumedEnding(of: identifyDecision, inLoader: inLoader)))
        bound.setLimit("step identify", seconds: nil)

        var known = facts(identified)
        known.interactive = interactive
        let planContext = self.context
        if let policy { known.policy = { offer in policy.firmwareDecision(planContext, offer: offer) } }
        while true {
            let step: FleetStep
            switch action {
            case .finish:
                return DevicePlan(device: device.name, serial: identified.serialNumberText, error: nil, steps: planned)
            case .notReached(let passed):
                planned.append(PlannedStep(step: passed, action: .skip, code: "step_not_reached", arguments: [], detail: ""))
                action = workflow.next(.passedOver)
                continue
            case .perform(let next):
                step = next
            }
            known.changed = workflow.changed
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
            // What the run will have changed, had the step succeeded (the plan's assumption,
            // declared by the workflow).
            workflow.assumeDone(decision, in: &known)
            action = workflow.next(.ended(DeviceWorkflow.assumedEnding(of: decision)))
        }
    }
}
