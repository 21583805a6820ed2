import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokLedger
import GrokLink
import GrokProtocol
import UGrokIt

// Recording: the intents sent before a change, the ones ended runs left open, and the
// device as it stands at the end.
extension DeviceWorker {
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
}
