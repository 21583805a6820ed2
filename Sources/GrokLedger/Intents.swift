import Foundation
import GrokBasics

/// How an intent ended.
public enum IntentOutcome: String, Sendable, CaseIterable {
    /// The change was made (by the run that recorded the intent).
    case done
    /// The change was not made (refused, postponed, not needed, or found not made afterwards).
    case notDone = "not_done"

    /// The outcome a step's record gives its run's intent; `nil` for a failed or interrupted
    /// step, which may or may not have made the change.
    init?(closing result: StepResult) {
        switch result {
        case .done: self = .done
        case .skipped, .refused, .postponed, .declined: self = .notDone
        case .failed, .interrupted: return nil
        }
    }
}

/// One row of `intents`: a change a run was about to make to a Grokker.
public struct IntentRecord: Sendable, Equatable {
    public var id: Int64
    /// The run that recorded it (the author of the change, if it was made).
    public var run: RunID
    public var serial: String
    public var step: String
    /// What the change was to bring about (`FCC`, `1.8.0`, `antenna_type 2`, ...).
    public var target: String
    public var recordedAt: Date
    /// `nil` while open.
    public var outcome: IntentOutcome?
    public var resolvedAt: Date?
    /// The run that closed it: its own run, or the later run that asked the Grokker.
    public var resolvedBy: RunID?
}

extension Ledger {
    /// Records that open run `run` is about to change `serial` by `step` toward `target`,
    /// before the change is sent. Its step record closes it (``recordStep(_:)``).
    /// - Returns: the intent's id.
    @discardableResult
    public func recordIntent(run: RunID, serial: String, step: String, target: String, at time: Date) throws(LedgerError) -> Int64 {
        guard !serial.isEmpty, !step.isEmpty else { throw .invalidRecord(path: path, detail: ErrorDetail("intent_without_serial_or_step")) }
        return try write { (db) throws(LedgerError) -> Int64 in
            try requireOpenRun(run, db)
            try touch(run, db)
            try db.execute("INSERT INTO intents (run_id, serial, step, target, recorded_at) VALUES (?, ?, ?, ?, ?)",
                           [.integer(run.rawValue), .text(serial), .text(step), .text(target), .text(LedgerTime.format(time))])
            return db.lastInsertRowID
        }
    }

    /// The intents recorded for `serial` (every one when `nil`), oldest first; only the open
    /// ones with `openOnly`.
    public func intents(serial: String? = nil, openOnly: Bool = false) throws(LedgerError) -> [IntentRecord] {
        var conditions: [String] = []
        var values: [SQLValue] = []
        if let serial {
            conditions.append("serial = ?")
            values.append(.text(serial))
        }
        if openOnly { conditions.append("outcome IS NULL") }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return try read { (db) throws(LedgerError) -> [IntentRecord] in
            // A file older than version 3 (opened read-only) has no intents.
            let version = Int(try db.queryInteger("PRAGMA user_version") ?? 0)
            guard version >= 3 else { return [] }
            return try db.rows("SELECT \(LedgerRows.intentColumns) FROM intents\(filter) ORDER BY id", values) {
                (row) throws(LedgerError) -> IntentRecord in try LedgerRows.intent(row)
            }
        }
    }

    /// Resolves an open intent of a run that ended without closing it, after `resolver` asked
    /// the Grokker. Made (`done`): a `done` record of the step is added to the intent's own
    /// run (it made the change: every change has exactly one author), with `step`'s times
    /// and values. Not made: the intent is closed `not_done`. One transaction; an intent
    /// already closed is left as it is.
    /// - Returns: whether this call resolved it.
    @discardableResult
    public func resolveIntent(_ id: Int64, outcome: IntentOutcome, by resolver: RunID, step: StepRecord?,
                              at time: Date) throws(LedgerError) -> Bool {
        try write { (db) throws(LedgerError) -> Bool in
            try requireOpenRun(resolver, db)
            let open = try db.query("SELECT run_id, serial, step FROM intents WHERE id = ? AND outcome IS NULL", [.integer(id)]) {
                ($0.integer(0) ?? 0, $0.text(1) ?? "", $0.text(2) ?? "")
            }
            guard let (author, serial, name) = open.first else { return false }
            if outcome == .done, let step {
                try db.execute(
                    """
                    INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result,
                                       firmware_before, firmware_after, region_before, region_after, code, detail, usb_path)
                    VALUES (?, ?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [.integer(author), .text(serial), .text(name),
                     .text(LedgerTime.format(step.startedAt)), .text(LedgerTime.format(step.endedAt)),
                     .integer(step.durationMilliseconds), SQLValue(step.firmwareBefore), SQLValue(step.firmwareAfter),
                     SQLValue(step.regionBefore), SQLValue(step.regionAfter), SQLValue(step.code), .text(step.detail),
                     SQLValue(step.usbPath)])
            }
            try db.execute("UPDATE intents SET outcome = ?, resolved_at = ?, resolved_by = ? WHERE id = ?",
                           [.text(outcome.rawValue), .text(LedgerTime.format(time)), .integer(resolver.rawValue), .integer(id)])
            try touch(resolver, db)
            return true
        }
    }
}
