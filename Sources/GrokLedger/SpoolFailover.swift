import Foundation
import GrokBasics
import Synchronization

/// The shared ledger with the station's spool behind it, for a run whose profile says
/// `"offline": "spool"` (docs/ledger.md, "Offline stations and the spool"): records go to
/// ``shared`` until it is lost for good (a write failed on a lost connection after
/// PostgresLedger's reconnection window), then, for the rest of the run, to the spool at
/// ``spoolPath``.
///
/// At the switch each open run this ledger began is begun again in the spool under the same
/// key, station, start and profile, so a later ``Spool/sync(to:)`` finds the run in the
/// shared database as its own and adds what the spool holds to it (the record that failed
/// is kept once: a step the database did commit is recognized by its run, Grokker, name,
/// start and result).
///
/// Ids: a run or intent the spool holds is handed out negated (`-id`), so an id always
/// says where its record is; one of the shared database after the switch is
/// ``LedgerError/server(path:state:detail:)`` (it cannot be reached), except that a run's
/// records follow the run into the spool.
public final class SpoolFailover: LedgerStore {
    public let shared: PostgresLedger
    public let spoolPath: String

    private struct State {
        var spool: Spool?
        /// The open runs begun in the shared database (their id there, how they began).
        var began: [Int64: RunStart] = [:]
        /// Those runs begun again in the spool at the switch (shared id: spool id).
        var mirrored: [Int64: Int64] = [:]
    }
    private let state = Mutex(State())
    /// Held for the whole switch to the spool: the station decides once, and every worker
    /// that lost the database meanwhile waits here and then follows that decision.
    private let switching = Mutex(())

    public init(shared: PostgresLedger, spoolPath: String) {
        self.shared = shared
        self.spoolPath = spoolPath
    }

    /// The spool, once the shared ledger was lost; nil while records go to the database.
    public var spool: Spool? { state.withLock { $0.spool } }

    /// The shared ledger while it is in use (nil once spooling: then no fleet-wide lock).
    public var online: PostgresLedger? { spool == nil ? shared : nil }

    public var location: String { spool?.path ?? shared.location }

    /// A write failed because the server cannot be reached (after the reconnection window).
    static func isLost(_ error: LedgerError) -> Bool {
        guard case .server(_, let state, _) = error else { return false }
        return state.isEmpty || state.hasPrefix("08") || state == "57P01" || state == "57P03"
    }

    /// Opens the spool and begins this ledger's open runs again in it, once for the whole
    /// station: the first worker that finds the database lost makes the switch holding
    /// ``switching``; the others wait for it and use its spool (two workers switching at
    /// once each began the run again, and the second was refused as `ledger_duplicate_run`).
    /// A switch that failed is tried again by the next worker.
    private func switchToSpool() throws(LedgerError) -> Spool {
        try switching.withLock { (_) throws(LedgerError) -> Spool in
            if let spool { return spool }
            let spool = try Spool.open(path: spoolPath)
            let began = state.withLock { $0.began }
            var mirrored: [Int64: Int64] = [:]
            for (id, start) in began.sorted(by: { $0.key < $1.key }) {
                mirrored[id] = try spool.ledger.beginRun(start).rawValue
            }
            state.withLock { state in
                state.spool = spool
                state.mirrored = mirrored
            }
            // The workers still waiting for the server follow this decision at their next try.
            shared.stopReconnecting()
            return spool
        }
    }

    /// Where run `run` (as handed out) is recorded now: `nil` for the shared database, else
    /// its id in the spool.
    private func spoolRun(_ run: RunID) throws(LedgerError) -> RunID? {
        if run.rawValue < 0 { return RunID(rawValue: -run.rawValue) }
        let (spooling, mirror) = state.withLock { ($0.spool != nil, $0.mirrored[run.rawValue]) }
        guard spooling else { return nil }
        guard let mirror else { throw .server(path: shared.target, state: "08006", detail: ErrorDetail("run_unreachable", [String(run.rawValue)])) }
        return RunID(rawValue: mirror)
    }

    /// Runs `online` on the shared ledger, or, once it is lost (now or before), `offline`
    /// on the spool with the run mapped into it.
    private func perform<T>(_ run: RunID?, online: (RunID?) throws(LedgerError) -> T,
                            offline: (Ledger, RunID?) throws(LedgerError) -> T) throws(LedgerError) -> T {
        if let spool {
            return try offline(spool.ledger, try run.flatMap { (run) throws(LedgerError) in try spoolRun(run) })
        }
        do {
            return try online(run)
        } catch where Self.isLost(error) {
            let spool = try switchToSpool()
            return try offline(spool.ledger, try run.flatMap { (run) throws(LedgerError) in try spoolRun(run) })
        }
    }

    private static func negated(_ run: RunID) -> RunID { RunID(rawValue: -run.rawValue) }

    // MARK: RunRecorder

    public func beginRun(_ start: RunStart) throws(LedgerError) -> RunID {
        try perform(nil, online: { (_) throws(LedgerError) -> RunID in
            let id = try shared.beginRun(start)
            var begun = start
            // The key as the database drew it (when the caller gave none), for the mirror.
            if begun.key == nil { begun.key = try shared.run(id)?.key }
            state.withLock { $0.began[id.rawValue] = begun }
            return id
        }, offline: { (spool, _) throws(LedgerError) -> RunID in Self.negated(try spool.beginRun(start)) })
    }

    public func upsertDevice(_ sighting: DeviceSighting) throws(LedgerError) {
        try perform(nil, online: { (_) throws(LedgerError) in try shared.upsertDevice(sighting) },
                    offline: { (spool, _) throws(LedgerError) in try spool.upsertDevice(sighting) })
    }

    public func recordStep(_ step: StepRecord) throws(LedgerError) {
        try perform(step.run, online: { (_) throws(LedgerError) in try shared.recordStep(step) },
                    offline: { (spool, run) throws(LedgerError) in
            var moved = step
            moved.run = run ?? step.run
            try spool.recordStep(moved)
        })
    }

    public func recordSmokeTest(_ test: SmokeTestRecord) throws(LedgerError) {
        try perform(test.run, online: { (_) throws(LedgerError) in try shared.recordSmokeTest(test) },
                    offline: { (spool, run) throws(LedgerError) in
            var moved = test
            moved.run = run ?? test.run
            try spool.recordSmokeTest(moved)
        })
    }

    public func finishRun(_ run: RunID, outcome: RunOutcome, endedAt: Date, reportPath: String?) throws(LedgerError) {
        try perform(run, online: { (_) throws(LedgerError) in
            try shared.finishRun(run, outcome: outcome, endedAt: endedAt, reportPath: reportPath)
            _ = state.withLock { $0.began.removeValue(forKey: run.rawValue) }
        }, offline: { (spool, mapped) throws(LedgerError) in
            try spool.finishRun(mapped ?? run, outcome: outcome, endedAt: endedAt, reportPath: reportPath)
        })
    }

    public func completedSteps(serial: String, profileSHA256: String) throws(LedgerError) -> Set<String> {
        try perform(nil, online: { (_) throws(LedgerError) in try shared.completedSteps(serial: serial, profileSHA256: profileSHA256) },
                    offline: { (spool, _) throws(LedgerError) in try spool.completedSteps(serial: serial, profileSHA256: profileSHA256) })
    }

    // MARK: LedgerStore

    public func recordReport(_ run: RunID, path reportPath: String) throws(LedgerError) {
        try perform(run, online: { (_) throws(LedgerError) in try shared.recordReport(run, path: reportPath) },
                    offline: { (spool, mapped) throws(LedgerError) in try spool.recordReport(mapped ?? run, path: reportPath) })
    }

    public func run(_ id: RunID) throws(LedgerError) -> RunRecord? {
        try perform(id, online: { (_) throws(LedgerError) in try shared.run(id) },
                    offline: { (spool, mapped) throws(LedgerError) in try spool.run(mapped ?? id) })
    }

    public func run(key: String) throws(LedgerError) -> RunRecord? {
        try perform(nil, online: { (_) throws(LedgerError) in try shared.run(key: key) },
                    offline: { (spool, _) throws(LedgerError) in try spool.run(key: key) })
    }

    public func runs(limit: Int?) throws(LedgerError) -> [RunRecord] {
        try perform(nil, online: { (_) throws(LedgerError) in try shared.runs(limit: limit) },
                    offline: { (spool, _) throws(LedgerError) in try spool.runs(limit: limit) })
    }

    public func steps(run: RunID?, serial: String?) throws(LedgerError) -> [StepRecord] {
        try perform(run, online: { (_) throws(LedgerError) in try shared.steps(run: run, serial: serial) },
                    offline: { (spool, mapped) throws(LedgerError) in try spool.steps(run: mapped, serial: serial) })
    }

    public func devices() throws(LedgerError) -> [DeviceRecord] {
        try perform(nil, online: { (_) throws(LedgerError) in try shared.devices() },
                    offline: { (spool, _) throws(LedgerError) in try spool.devices() })
    }

    @discardableResult
    public func recordIntent(run: RunID, serial: String, step: String, target: String, at time: Date) throws(LedgerError) -> Int64 {
        try perform(run, online: { (_) throws(LedgerError) in
            try shared.recordIntent(run: run, serial: serial, step: step, target: target, at: time)
        }, offline: { (spool, mapped) throws(LedgerError) in
            -(try spool.recordIntent(run: mapped ?? run, serial: serial, step: step, target: target, at: time))
        })
    }

    public func intents(serial: String?, openOnly: Bool) throws(LedgerError) -> [IntentRecord] {
        try perform(nil, online: { (_) throws(LedgerError) in try shared.intents(serial: serial, openOnly: openOnly) },
                    offline: { (spool, _) throws(LedgerError) in
            try spool.intents(serial: serial, openOnly: openOnly).map { intent in
                var handed = intent
                handed.id = -intent.id
                handed.run = Self.negated(intent.run)
                handed.resolvedBy = intent.resolvedBy.map(Self.negated)
                return handed
            }
        })
    }

    @discardableResult
    public func resolveIntent(_ id: Int64, outcome: IntentOutcome, by resolver: RunID, step: StepRecord?, at time: Date) throws(LedgerError) -> Bool {
        guard id < 0 else {
            return try perform(resolver, online: { (_) throws(LedgerError) in
                try shared.resolveIntent(id, outcome: outcome, by: resolver, step: step, at: time)
            }, offline: { (_, _) throws(LedgerError) -> Bool in
                throw .server(path: shared.target, state: "08006", detail: ErrorDetail("intent_unreachable", [String(id)]))
            })
        }
        return try perform(resolver, online: { (_) throws(LedgerError) -> Bool in
            throw .invalidRecord(path: spoolPath, detail: ErrorDetail("intent_in_spool", [String(-id)]))
        }, offline: { (spool, mapped) throws(LedgerError) in
            try spool.resolveIntent(-id, outcome: outcome, by: mapped ?? resolver, step: step, at: time)
        })
    }

    // MARK: The fleet-wide device lock

    /// The fleet-wide lock on `serial` for `run` while the shared ledger is in use; nil
    /// (taken) once spooling, when there is no such lock (the run said so).
    public func lockFleetWide(serial: String, run: RunID) throws(LedgerError) -> PostgresLedger.DeviceHolder? {
        try perform(run, online: { (_) throws(LedgerError) in try shared.lockDevice(serial, run: run) },
                    offline: { (_, _) throws(LedgerError) -> PostgresLedger.DeviceHolder? in nil })
    }
}
