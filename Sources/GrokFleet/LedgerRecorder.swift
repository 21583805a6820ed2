import GrokBasics
import Foundation
import GrokCrypto
import GrokLedger
import Synchronization

/// The workflow's ``RunRecorder`` on a ledger (docs/ledger.md): the station's SQLite file or
/// the database the stations share; runs, steps, smoke tests and devices, each write its own
/// transaction.
///
/// The engine's run id is the ledger's key for the run (``RunKey``, `runs.run_key`); this
/// keeps the ledger's row numbers of the runs it began. A re-run reads the device's earlier steps from the ledger (provision and
/// rollout runs only; verify runs never count as work done).
public final class LedgerRecorder: RunRecorder {
    public let ledger: any LedgerStore
    private let runs = Mutex<[String: RunID]>([:])

    public init(ledger: any LedgerStore) {
        self.ledger = ledger
    }

    /// Opens (or creates) the ledger `location` names: a file path, or a `postgresql://`
    /// database shared by the stations (recording as `station`).
    public convenience init(location: String, station: String) throws(LedgerError) {
        self.init(ledger: try LedgerLocation.open(location, station: station))
    }

    public func beginRun(_ run: RunInfo) throws {
        // The profile file's digest; a profile not read from a file is known by its name.
        let bytes = FileManager.default.contents(atPath: run.profileFile).map { [UInt8]($0) } ?? Array("profile:\(run.profileName)".utf8)
        let digest = SHA256.hash(bytes).hex
        let kind: RunKind = switch run.mode {
        case .provision: .provision
        case .rollout: .rollout
        case .verify: .verify
        }
        let id = try ledger.beginRun(RunStart(kind: kind, profileName: run.profileName, profileSHA256: digest,
                                              station: run.station, operatorName: run.operatorName, startedAt: run.started,
                                              key: run.id))
        runs.withLock { $0[run.id] = id }
    }

    private func ledgerRun(_ id: String) throws -> RunID {
        guard let run = runs.withLock({ $0[id] }) else { throw FleetError.recorderFailed(operation: "record_step", subject: id, cause: ErrorCause(code: "fleet_run_not_begun", arguments: [id])) }
        return run
    }

    public func recordStep(_ step: StepRecord) throws {
        let run = try ledgerRun(step.runID)
        try ledger.recordStep(GrokLedger.StepRecord(
            run: run, serial: step.serial, step: step.step.rawValue, startedAt: step.started,
            endedAt: step.started.addingTimeInterval(step.duration), result: GrokLedger.StepResult(rawValue: step.result.rawValue) ?? .failed,
            firmwareBefore: step.firmwareBefore, firmwareAfter: step.firmwareAfter, regionBefore: step.regionBefore,
            regionAfter: step.regionAfter, code: step.code, detail: step.detail))
    }

    public func recordSmokeTest(_ result: SmokeTestRecord) throws {
        let run = try ledgerRun(result.runID)
        let missing = Set(result.missingTags)
        try ledger.recordSmokeTest(GrokLedger.SmokeTestRecord(
            run: run, serial: result.serial, afterStep: result.step.rawValue, startedAt: result.time,
            durationMilliseconds: Int64((result.duration * 1000).rounded()), expectedTags: result.expectedTags,
            foundTags: result.expectedTags.filter { !missing.contains($0) }, readsPerSecond: result.readsPerSecond,
            minRSSI: result.weakestReferenceRSSI ?? result.strongestRSSI, passed: result.passed))
    }

    public func upsertDevice(_ device: DeviceRecord) throws {
        try ledger.upsertDevice(DeviceSighting(
            serial: device.serial, hardwareType: device.hardwareModel, hardwareRevision: String(device.hardwareRevision),
            antennaType: device.antennaType.map(String.init), firmware: device.firmware, region: device.region,
            provisioned: device.provisioned, seenAt: device.updated))
    }

    public func finishRun(_ summary: RunSummary) throws {
        let run = try ledgerRun(summary.runID)
        // The same codes on both sides (one vocabulary); the switch keeps them in step.
        let outcome: GrokLedger.RunOutcome = switch summary.outcome {
        case .succeeded: .succeeded
        case .incomplete: .incomplete
        case .failed: .failed
        case .interrupted: .interrupted
        }
        try ledger.finishRun(run, outcome: outcome, endedAt: summary.ended, reportPath: nil)
    }

    public func recordReport(runID: String, path: String) throws {
        try ledger.recordReport(try ledgerRun(runID), path: path)
    }

    /// The key of the ledger's run `run` (its row number when the row is gone).
    private func key(_ run: RunID) -> String {
        (try? ledger.run(run))??.key ?? String(run.rawValue)
    }

    public func lockFleetWide(serial: String, runID: String) throws -> String? {
        guard let shared = ledger as? PostgresLedger else { return nil }
        guard let holder = try shared.lockDevice(serial, run: try ledgerRun(runID)) else { return nil }
        return "station \(holder.station), run \(holder.runKey)"
    }

    public func recordIntent(runID: String, serial: String, step: FleetStep, target: String, at time: Date) throws {
        try ledger.recordIntent(run: try ledgerRun(runID), serial: serial, step: step.rawValue, target: target, at: time)
    }

    public func openIntents(serial: String) throws -> [ChangeIntent] {
        // Asked once the Grokker is locked and before this run records any intent for it, so
        // every open intent found belongs to a run that is no longer working on it.
        try ledger.intents(serial: serial, openOnly: true).compactMap { intent -> ChangeIntent? in
            guard let step = FleetStep(rawValue: intent.step) else { return nil }
            return ChangeIntent(id: intent.id, runID: key(intent.run), serial: intent.serial, step: step, target: intent.target)
        }
    }

    public func resolveIntent(_ intent: ChangeIntent, made: Bool, outcome: StepOutcome, by runID: String, at time: Date) throws {
        let resolver = try ledgerRun(runID)
        let step = GrokLedger.StepRecord(
            run: resolver, serial: intent.serial, step: intent.step.rawValue, startedAt: outcome.started,
            endedAt: outcome.started.addingTimeInterval(outcome.duration), result: .done,
            firmwareBefore: nil, firmwareAfter: outcome.firmwareAfter, regionBefore: nil, regionAfter: outcome.regionAfter,
            code: "step_completed_by_interrupted_run",
            detail: "made by this run before it ended; found made by run \(runID) (\(intent.target))")
        try ledger.resolveIntent(intent.id, outcome: made ? .done : .notDone, by: resolver, step: made ? step : nil, at: time)
    }

    public func completedSteps(serial: String) throws -> [StepRecord] {
        let counted = Dictionary(try ledger.runs(limit: nil).filter { $0.kind != .verify }.map { ($0.id, $0.key) }) { first, _ in first }
        return try ledger.steps(run: nil, serial: serial).compactMap { record -> StepRecord? in
            guard let key = counted[record.run], record.result == .done || record.result == .skipped,
                  let step = FleetStep(rawValue: record.step), let result = GrokFleet.StepResult(rawValue: record.result.rawValue)
            else { return nil }
            let outcome = StepOutcome(step: step, result: result, code: record.code ?? "", detail: record.detail,
                                      firmwareBefore: record.firmwareBefore, firmwareAfter: record.firmwareAfter,
                                      regionBefore: record.regionBefore, regionAfter: record.regionAfter,
                                      started: record.startedAt, duration: record.endedAt.timeIntervalSince(record.startedAt))
            return StepRecord(runID: key, serial: serial, device: "", outcome: outcome)
        }
    }
}
