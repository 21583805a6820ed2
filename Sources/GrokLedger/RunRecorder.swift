import Foundation

/// What the workflow engine records while it runs, and the one question it asks back on a
/// re-run: the fleet records these records and no copy of them. ``Ledger`` is the SQLite
/// implementation, ``PostgresLedger`` the shared one (``LedgerStore`` adds what a run reads back).
///
/// Every call is one transaction: it is kept whole or not at all, even if the process is
/// killed during it. Calls block briefly (a few milliseconds, longer only while another
/// process holds the write lock, up to the busy timeout).
public protocol RunRecorder: Sendable {
    /// Records the start of a run and returns its identifier.
    func beginRun(_ start: RunStart) throws(LedgerError) -> RunID

    /// Inserts a device, or updates the one with the same serial: nil fields keep what is
    /// stored, `first_seen`/`last_seen` widen to include `seenAt`.
    func upsertDevice(_ sighting: DeviceSighting) throws(LedgerError)

    /// Records one step of an open run.
    func recordStep(_ step: StepRecord) throws(LedgerError)

    /// Records one smoke test of an open run.
    func recordSmokeTest(_ test: SmokeTestRecord) throws(LedgerError)

    /// Closes an open run with its outcome and the path of its JSON report.
    func finishRun(_ run: RunID, outcome: RunOutcome, endedAt: Date, reportPath: String?) throws(LedgerError)

    /// The steps a new run with the same profile content may skip for this device: those whose
    /// latest record, in provision or rollout runs of the profile with SHA-256 `profileSHA256`,
    /// is `done` or `skipped`. Verify runs never count (they change nothing).
    func completedSteps(serial: String, profileSHA256: String) throws(LedgerError) -> Set<String>
}
