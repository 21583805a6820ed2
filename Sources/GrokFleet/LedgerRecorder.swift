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
            endedAt: step.started.addingTimeInterval(step.duration), result: step.result,
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
        let holder: PostgresLedger.DeviceHolder?
        if let shared = ledger as? PostgresLedger {
            holder = try shared.lockDevice(serial, run: try ledgerRun(runID))
        } else if let failover = ledger as? SpoolFailover {
            // None once spooling (the run said so).
            holder = try failover.lockDevice(serial, run: try ledgerRun(runID))
        } else {
            return nil
        }
        guard let holder else { return nil }
        return "station \(holder.station), run \(holder.runKey)"
    }

    public func recordIntent(runID: String, serial: String, step: FleetStep, target: String, at time: Date) throws {
        try ledger.recordIntent(run: try ledgerRun(runID), serial: serial, step: step.rawValue, target: target, at: time)
    }

    public func openIntents(serial: String) throws -> [ChangeIntent] {
        // Asked once the Grokker is locked and before this run records any intent for it, so
        // every open intent found belongs to a run that is no longer working on it.
        try ledger.intents(serial: serial, openOnly: true).map { intent throws(LedgerError) -> ChangeIntent in
            ChangeIntent(id: intent.id, runID: key(intent.run), serial: intent.serial, step: try step(intent.step, column: "intents.step"),
                         target: intent.target)
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

    /// The workflow's step a ledger's step name names; a name no step has is damage
    /// (the ledger holds only the workflow's steps), never skipped over.
    private func step(_ name: String, column: String) throws(LedgerError) -> FleetStep {
        guard let step = FleetStep(rawValue: name) else {
            throw .corrupt(path: ledger.location, damage: LedgerDamage("unknown_value", [column, name]))
        }
        return step
    }

    public func completedSteps(serial: String) throws -> [StepRecord] {
        let counted = Dictionary(try ledger.runs(limit: nil).filter { $0.kind != .verify }.map { ($0.id, $0.key) }) { first, _ in first }
        return try ledger.steps(run: nil, serial: serial).compactMap { record throws(LedgerError) -> StepRecord? in
            // Steps of verify runs, and steps not completed, are not history.
            guard let key = counted[record.run], record.result == .done || record.result == .skipped else { return nil }
            let outcome = StepOutcome(step: try step(record.step, column: "steps.step"), result: record.result, code: record.code ?? "", detail: record.detail,
                                      firmwareBefore: record.firmwareBefore, firmwareAfter: record.firmwareAfter,
                                      regionBefore: record.regionBefore, regionAfter: record.regionAfter,
                                      started: record.startedAt, duration: record.endedAt.timeIntervalSince(record.startedAt))
            return StepRecord(runID: key, serial: serial, device: "", outcome: outcome)
        }
    }
}

// MARK: Opening a station's ledger, online or offline

/// The ledger a run records into, as ``LedgerRecorder/openStation(location:station:mode:offline:spoolPath:)``
/// found it: the station's file, the shared database (after sending what this station
/// spooled while it was away), or, when the database cannot be reached and the profile says
/// `"offline": "spool"`, the station's spool.
public struct StationLedger: Sendable {
    public let recorder: LedgerRecorder
    /// The spool the run records into because the shared database could not be reached;
    /// nil when it records where `--ledger` says. While spooling there is no fleet-wide
    /// device lock.
    public let spool: Spool?
    /// The shared database that could not be reached (without its password), when spooling.
    public let unreachable: String?
    /// What was sent from this station's spool before the run started (the database was back).
    public let synced: Spool.SyncReport?
    /// Why sending the spool at the start failed (the run goes ahead; `grokctl ledger sync` retries).
    public let syncFailure: LedgerError?

    /// Where the run's records go, as people are shown it: the file, the database without
    /// its password, or the spool file.
    public var location: String { recorder.ledger.location }
}

extension LedgerRecorder {
    /// Opens the ledger `location` names for a run of `mode` by `station`.
    ///
    /// A file is opened as always. A shared database (`postgresql://`) that answers is opened,
    /// and first this station's spool at `spoolPath`, if there is one, is sent to it
    /// (``Spool/sync(to:)``: each spooled run once). One that cannot be reached
    /// (``LedgerError/cannotOpen(path:detail:)``) is:
    /// - for a rollout, always ``FleetError/ledgerOfflineRollout(database:detail:)`` (its halt
    ///   rule needs every station's results);
    /// - with `offline` `.refuse`, ``FleetError/ledgerOffline(database:detail:)``;
    /// - with `.spool`, the spool at `spoolPath` (created if needed), a SQLite ledger.
    /// Any of these is thrown before a Grokker is touched.
    public static func openStation(location: String, station: String, mode: FleetMode,
                                   offline: Profile.StationConfig.Offline, spoolPath: String) throws -> StationLedger {
        guard LedgerLocation.isShared(location) else {
            return StationLedger(recorder: try LedgerRecorder(location: location, station: station), spool: nil,
                                 unreachable: nil, synced: nil, syncFailure: nil)
        }
        let shared: PostgresLedger
        do {
            shared = try PostgresLedger.open(location, station: station)
        } catch {
            guard case .cannotOpen(let database, let detail) = error else { throw error }
            if mode == .rollout { throw FleetError.ledgerOfflineRollout(database: database, detail: detail) }
            guard offline == .spool else { throw FleetError.ledgerOffline(database: database, detail: detail) }
            let spool = try Spool.open(path: spoolPath)
            return StationLedger(recorder: LedgerRecorder(ledger: spool.ledger), spool: spool, unreachable: database,
                                 synced: nil, syncFailure: nil)
        }
        var synced: Spool.SyncReport?
        var failure: LedgerError?
        if FileManager.default.fileExists(atPath: spoolPath) {
            do throws(LedgerError) {
                synced = try Spool.open(path: spoolPath).sync(to: shared)
            } catch {
                failure = error
            }
        }
        // With spool (not a rollout), a database lost for good mid-run hands the rest of the
        // run to the spool (SpoolFailover).
        let store: any LedgerStore = offline == .spool && mode != .rollout ? SpoolFailover(shared: shared, spoolPath: spoolPath) : shared
        return StationLedger(recorder: LedgerRecorder(ledger: store), spool: nil, unreachable: nil, synced: synced, syncFailure: failure)
    }
}

extension LedgerRecorder {
    /// The ledger a dry run reads its history from (it writes nothing): the file when it
    /// exists, the shared database, or, when that cannot be reached, the same refusal a run
    /// would meet (``openStation(location:station:mode:offline:spoolPath:)``), or with
    /// `spool` the station's spool read-only (nil when there is none yet).
    public static func openForPlan(location: String, station: String, mode: FleetMode,
                                   offline: Profile.StationConfig.Offline, spoolPath: String) throws -> LedgerRecorder? {
        guard LedgerLocation.isShared(location) else {
            return FileManager.default.fileExists(atPath: location) ? try LedgerRecorder(location: location, station: station) : nil
        }
        do {
            return LedgerRecorder(ledger: try PostgresLedger.open(location, station: station))
        } catch {
            guard case .cannotOpen(let database, let detail) = error else { throw error }
            if mode == .rollout { throw FleetError.ledgerOfflineRollout(database: database, detail: detail) }
            guard offline == .spool else { throw FleetError.ledgerOffline(database: database, detail: detail) }
            guard FileManager.default.fileExists(atPath: spoolPath) else { return nil }
            return LedgerRecorder(ledger: try Ledger.open(path: spoolPath, readOnly: true))
        }
    }
}
