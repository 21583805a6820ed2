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

    /// Records the intent of `step` toward `target` before the change is sent. Returns the
    /// failure to end the step with when it cannot be recorded (then nothing is sent).
    func intend(_ step: FleetStep, target: String) -> Result? {
        do {
            try ledger.store.recordIntent(run: ledger.run, serial: serial, step: step.rawValue, target: target, at: runner.options.clock())
            return nil
        } catch {
            return .failing(.failed, .recorderFailed(operation: "record_intent", subject: "\(serial), \(step.rawValue)", error: error))
        }
    }

    /// Resolves the open intents of `step` left by ended runs, from what this run's step
    /// found on the Grokker: already satisfied means the interrupted run made the change
    /// (recorded as done by that run); changed now means it had not. Anything else (a
    /// failure, a refusal) leaves them open for the next run.
    func resolveOpenIntents(of step: FleetStep, outcome: StepOutcome) throws(LedgerError) {
        let pending = openIntents.filter { $0.step == step.rawValue }
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
            // Found made: recorded as done, by the intent's own run, as this run found it.
            let found = StepRecord(
                run: ledger.run, serial: intent.serial, step: intent.step, startedAt: outcome.started,
                endedAt: outcome.started.addingTimeInterval(outcome.duration), result: .done, firmwareAfter: outcome.firmwareAfter,
                regionAfter: outcome.regionAfter, code: "step_completed_by_interrupted_run",
                detail: "made by this run before it ended; found made by run \(runID) (\(intent.target))", usbPath: device.usbPath)
            try ledger.store.resolveIntent(intent.id, outcome: author ? .done : .notDone, by: ledger.run, step: author ? found : nil,
                                           at: runner.options.clock())
            if author {
                // History now knows the change (a smoke test after it may still be owed).
                var record = outcome
                record.result = .done
                history.append(record)
            }
        }
        openIntents.removeAll { $0.step == step.rawValue }
    }


    func record(_ outcome: DeviceOutcome) throws(Stop) -> Result {
        if lockedOut != nil { return .skipped("step_not_recorded_locked") }
        if provisioning == nil, let session, session.connectionState == .connected {
            provisioning = try? session.provisioningRecord()
        }
        do {
            try ledger.store.upsertDevice(sighting(provisioning: provisioning))
        } catch {
            return .failing(.failed, .recorderFailed(operation: "record_device", subject: serial, error: error))
        }
        return .done("step_recorded", "\(outcome.rawValue)")
    }

    /// The Grokker as it now stands, for the ledger's devices.
    func sighting(provisioning: ProvisioningRecord?) -> DeviceSighting {
        let info = self.info!
        return DeviceSighting(serial: info.serialNumberText, hardwareType: info.hardwareModel, hardwareRevision: String(info.hardwareRevision),
                              antennaType: provisioning.map { String($0.antennaType) }, firmware: "\(info.firmwareVersion)",
                              region: regionText, provisioned: info.provisioned, seenAt: runner.options.clock())
    }

    // MARK: The ledger

    /// The ledger this run records into and its run there. Only a run records; a dry run
    /// (which has none) never asks.
    var ledger: Recording {
        guard let recording else { preconditionFailure("a dry run records nothing") }
        return recording
    }

    /// `outcome` as the ledger's record of the step.
    func stepRecord(_ outcome: StepOutcome) -> StepRecord {
        StepRecord(run: ledger.run, serial: serial, step: outcome.step.rawValue, startedAt: outcome.started,
                   endedAt: outcome.started.addingTimeInterval(outcome.duration), result: outcome.result,
                   firmwareBefore: outcome.firmwareBefore, firmwareAfter: outcome.firmwareAfter, regionBefore: outcome.regionBefore,
                   regionAfter: outcome.regionAfter, code: outcome.code, detail: outcome.detail, usbPath: device.usbPath)
    }

    /// Every step of the Grokker `serial` that ended `done` or `skipped`, in provision and
    /// rollout runs (verify runs never count as work done, nor does a check `verify` made of
    /// an already done unit in a provision run: a `step_verified` provision, region or
    /// firmware step changed nothing), oldest first: the history a
    /// re-run uses to finish only what is left. A step name no workflow step has is damage
    /// (``LedgerError/corrupt(path:damage:)``), never skipped over.
    static func completedSteps(serial: String, in store: any LedgerStore) throws(LedgerError) -> [StepOutcome] {
        let counted = Set(try store.runs(limit: nil).filter { $0.kind != .verify }.map(\.id))
        var history: [StepOutcome] = []
        for record in try store.steps(run: nil, serial: serial)
        where counted.contains(record.run) && (record.result == .done || record.result == .skipped) {
            guard let step = FleetStep(rawValue: record.step) else {
                throw .corrupt(path: store.location, damage: LedgerDamage("unknown_value", ["steps.step", record.step]))
            }
            if record.code == WatchResult.verifiedCode, DeviceWorkflow.changingSteps.contains(step) { continue }
            history.append(StepOutcome(step: step, result: record.result, code: record.code ?? "", detail: record.detail,
                                       firmwareBefore: record.firmwareBefore, firmwareAfter: record.firmwareAfter,
                                       regionBefore: record.regionBefore, regionAfter: record.regionAfter,
                                       started: record.startedAt, duration: record.endedAt.timeIntervalSince(record.startedAt)))
        }
        return history
    }
}
