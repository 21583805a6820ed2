import Foundation
import GrokPostgres

// The rollout stage statements of each ledger (RolloutStages.swift has the decisions;
// LedgerRows.swift the one decoder of each row, shared by both ledgers).

// MARK: SQLite

/// The stage statements in one transaction of the station's SQLite ledger.
struct SQLiteStageTransaction: StageTransaction {
    let db: SQLiteConnection
    var location: String { db.path }

    func stage(_ rolloutID: String) throws(LedgerError) -> RolloutStage? {
        try db.rows("SELECT \(LedgerRows.stageColumns) FROM rollout_stages WHERE rollout_id = ?", [.text(rolloutID)]) {
            (row) throws(LedgerError) in try LedgerRows.stage(row)
        }.first
    }

    func stages() throws(LedgerError) -> [RolloutStage] {
        try db.rows("SELECT \(LedgerRows.stageColumns) FROM rollout_stages ORDER BY rollout_id") {
            (row) throws(LedgerError) in try LedgerRows.stage(row)
        }
    }

    /// Every stage, every event and every result (``RolloutRecords``), in this transaction.
    func records() throws(LedgerError) -> RolloutRecords {
        RolloutRecords(
            stages: try stages(),
            events: try db.rows("SELECT \(LedgerRows.eventColumns) FROM stage_events ORDER BY id") {
                (row) throws(LedgerError) in try LedgerRows.event(row)
            },
            results: try db.rows("""
                SELECT \(LedgerRows.resultColumns) FROM rollout_results x JOIN runs r ON r.id = x.run_id ORDER BY x.id
                """) { (row) throws(LedgerError) in try LedgerRows.result(row) })
    }

    func insertStage(_ stage: RolloutStage) throws(LedgerError) -> Bool {
        try db.execute("""
            INSERT INTO rollout_stages (\(LedgerRows.stageColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (rollout_id) DO NOTHING
            """, values(stage))
        return try db.queryInteger("SELECT changes()") == 1
    }

    func updateStage(_ stage: RolloutStage) throws(LedgerError) {
        try db.execute("""
            UPDATE rollout_stages SET release = ?2, percentage = ?3, state = ?4, reason_code = ?5, reason_detail = ?6,
                                      tripped_by = ?7, updated_at = ?8, updated_by = ?9 WHERE rollout_id = ?1
            """, values(stage))
    }

    private func values(_ stage: RolloutStage) -> [SQLValue] {
        [.text(stage.rolloutID), SQLValue(stage.release), .real(stage.percentage), .text(stage.state.rawValue), SQLValue(stage.reasonCode),
         .text(stage.reasonDetail), SQLValue(stage.trippedBy), .text(LedgerTime.format(stage.updatedAt)), .text(stage.updatedBy)]
    }

    func insertEvent(_ event: StageEvent, recordID: String) throws(LedgerError) {
        try db.execute("""
            INSERT INTO stage_events (rollout_id, action, percentage_before, percentage_after, station, actor, note, at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(event.rolloutID), .text(event.action.rawValue), SQLValue(event.percentageBefore), SQLValue(event.percentageAfter),
                  SQLValue(event.station), .text(event.actor), .text(event.note), .text(LedgerTime.format(event.at))])
    }

    func insertResult(_ result: RolloutResult, recordID: String) throws(LedgerError) {
        guard let run = try db.queryInteger("SELECT id FROM runs WHERE run_key = ?", [.text(result.runKey)]) else {
            throw .noSuchRun(path: location, run: result.runKey)
        }
        try db.execute("""
            INSERT INTO rollout_results (rollout_id, run_id, station, serial, percentage, outcome, hardware_revision,
                                         firmware_after, finished_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(result.rolloutID), .integer(run), .text(result.station), .text(result.serial), .real(result.percentage),
                  .text(result.outcome.rawValue), SQLValue(result.hardwareRevision), SQLValue(result.firmwareAfter),
                  .text(LedgerTime.format(result.finishedAt))])
    }

    func lastResume(_ rolloutID: String) throws(LedgerError) -> Date? {
        try db.queryText("SELECT at FROM stage_events WHERE rollout_id = ? AND action = 'resumed' ORDER BY id DESC LIMIT 1",
                         [.text(rolloutID)]).flatMap(LedgerTime.parse)
    }

    func results(_ rolloutID: String, after: Date?, cutoff: Date?, limit: Int?) throws(LedgerError) -> [RolloutResult] {
        try db.rows("""
            SELECT \(LedgerRows.resultColumns) FROM rollout_results x JOIN runs r ON r.id = x.run_id
            WHERE x.rollout_id = ?1 AND (?2 IS NULL OR x.finished_at > ?2) AND (?3 IS NULL OR x.finished_at >= ?3)
            ORDER BY x.id DESC LIMIT ?4
            """, [.text(rolloutID), SQLValue(after.map(LedgerTime.format)), SQLValue(cutoff.map(LedgerTime.format)),
                  .integer(Int64(limit ?? -1))]) { (row) throws(LedgerError) in try LedgerRows.result(row) }
    }
}

extension Ledger: RolloutStageStore {
    /// Files older than schema 5 (opened read-only) have no stages.
    private var hasStages: Bool { fileVersion >= 5 }

    public func rolloutStage(_ rolloutID: String) throws(LedgerError) -> RolloutStage? {
        guard hasStages else { return nil }
        return try read { (db) throws(LedgerError) in try SQLiteStageTransaction(db: db).stage(rolloutID) }
    }

    public func rolloutStages() throws(LedgerError) -> [RolloutStage] {
        guard hasStages else { return [] }
        return try read { (db) throws(LedgerError) in
            try SQLiteStageTransaction(db: db).stages()
        }
    }

    public func stageEvents(_ rolloutID: String) throws(LedgerError) -> [StageEvent] {
        guard hasStages else { return [] }
        return try read { (db) throws(LedgerError) in
            try db.rows("SELECT \(LedgerRows.eventColumns) FROM stage_events WHERE rollout_id = ? ORDER BY id", [.text(rolloutID)]) {
                (row) throws(LedgerError) in try LedgerRows.event(row)
            }
        }
    }

    public func rolloutResults(_ rolloutID: String) throws(LedgerError) -> [RolloutResult] {
        guard hasStages else { return [] }
        return try read { (db) throws(LedgerError) in
            try SQLiteStageTransaction(db: db).results(rolloutID, after: nil, cutoff: nil, limit: nil).reversed()
        }
    }

    public func rolloutRecords() throws(LedgerError) -> RolloutRecords {
        guard hasStages else { return RolloutRecords() }
        return try read { (db) throws(LedgerError) in try SQLiteStageTransaction(db: db).records() }
    }

    public func checkRolloutStage(_ check: StageCheck) throws(LedgerError) -> RolloutStage {
        let ids = RolloutStageDecisions.recordIDs()
        return try write { (db) throws(LedgerError) in
            try RolloutStageDecisions.check(SQLiteStageTransaction(db: db), check, write: true, recordIDs: ids)
        }
    }

    public func previewRolloutStage(_ check: StageCheck) throws(LedgerError) -> RolloutStage {
        guard hasStages else {
            return RolloutStage(rolloutID: check.rolloutID, release: check.release, percentage: check.profilePercentage, state: .active,
                                reasonCode: nil, reasonDetail: "", trippedBy: nil, updatedAt: check.now, updatedBy: check.actor,
                                inLedger: false)
        }
        let ids = RolloutStageDecisions.recordIDs()
        return try read { (db) throws(LedgerError) in
            try RolloutStageDecisions.check(SQLiteStageTransaction(db: db), check, write: false, recordIDs: ids)
        }
    }

    public func recordRolloutResult(_ result: RolloutResult, _ check: StageCheck) throws(LedgerError) -> RolloutStage {
        let ids = RolloutStageDecisions.recordIDs()
        let recordID = UUID().uuidString
        return try write { (db) throws(LedgerError) in
            let tx = SQLiteStageTransaction(db: db)
            // The stage first (made if missing), so the result is counted by the rule below.
            _ = try RolloutStageDecisions.check(tx, StageCheck(rolloutID: check.rolloutID, release: check.release,
                                                               profilePercentage: check.profilePercentage, rule: nil,
                                                               station: check.station, actor: check.actor, runKey: check.runKey,
                                                               now: check.now), write: true, recordIDs: ids)
            try tx.insertResult(result, recordID: recordID)
            return try RolloutStageDecisions.check(tx, check, write: true, recordIDs: RolloutStageDecisions.recordIDs())
        }
    }

    public func changeRolloutStage(_ rolloutID: String, _ change: StageChange, by actor: String, note: String,
                                   at time: Date) throws(LedgerError) -> RolloutStage {
        let recordID = UUID().uuidString
        return try write { (db) throws(LedgerError) in
            try RolloutStageDecisions.change(SQLiteStageTransaction(db: db), rolloutID, change, actor: actor, note: note, at: time,
                                             recordID: recordID)
        }
    }
}

// MARK: PostgreSQL

/// The stage statements in one transaction of the shared ledger. The stage row is read
/// `FOR UPDATE`: two stations judging the rule at once take turns, and the second sees the
/// first one's halt.
struct PostgresStageTransaction: StageTransaction {
    let db: PostgresConnection
    let location: String

    /// The texts of the rows of a statement that is no record's read (inserts, updates, ids).
    @discardableResult
    private func rows(_ sql: String, _ values: [String?] = []) throws(LedgerError) -> [[String?]] {
        try PostgresLedger.query(db, location, sql, values).map(\.values)
    }

    private func records<Row>(_ sql: String, _ values: [String?] = [], _ decode: (PostgresLedgerRow) throws(LedgerError) -> Row)
        throws(LedgerError) -> [Row] {
        try PostgresLedger.rows(db, location, sql, values, decode)
    }

    private func number(_ value: Double?) -> String? { value.map { "\($0)" } }

    func stage(_ rolloutID: String) throws(LedgerError) -> RolloutStage? {
        try records("SELECT \(LedgerRows.stageColumns) FROM rollout_stages WHERE rollout_id = $1 FOR UPDATE", [rolloutID]) {
            (row) throws(LedgerError) in try LedgerRows.stage(row)
        }.first
    }

    func stages() throws(LedgerError) -> [RolloutStage] {
        try records("SELECT \(LedgerRows.stageColumns) FROM rollout_stages ORDER BY rollout_id") {
            (row) throws(LedgerError) in try LedgerRows.stage(row)
        }
    }

    func events(_ rolloutID: String?) throws(LedgerError) -> [StageEvent] {
        try records("SELECT \(LedgerRows.eventColumns) FROM stage_events WHERE ($1::text IS NULL OR rollout_id = $1) ORDER BY id",
                    [rolloutID]) { (row) throws(LedgerError) in try LedgerRows.event(row) }
    }

    /// Every stage, every event and every result (``RolloutRecords``), in this transaction.
    /// A shared ledger still at schema 4 (opened read-only, not migrated) has none.
    func records() throws(LedgerError) -> RolloutRecords {
        let staged = try PostgresLedger.query(db, location, "SELECT to_regclass('rollout_results') IS NOT NULL").first?.bool(0) ?? false
        guard staged else { return RolloutRecords() }
        return RolloutRecords(
            stages: try stages(), events: try events(nil),
            results: try records("""
                SELECT \(LedgerRows.resultColumns) FROM rollout_results x JOIN runs r ON r.id = x.run_id ORDER BY x.id
                """) { (row) throws(LedgerError) in try LedgerRows.result(row) })
    }

    func insertStage(_ stage: RolloutStage) throws(LedgerError) -> Bool {
        !(try rows("""
            INSERT INTO rollout_stages (\(LedgerRows.stageColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (rollout_id) DO NOTHING RETURNING rollout_id
            """, values(stage))).isEmpty
    }

    func updateStage(_ stage: RolloutStage) throws(LedgerError) {
        try rows("""
            UPDATE rollout_stages SET release = $2, percentage = $3, state = $4, reason_code = $5, reason_detail = $6,
                                      tripped_by = $7, updated_at = $8, updated_by = $9 WHERE rollout_id = $1
            """, values(stage))
    }

    private func values(_ stage: RolloutStage) -> [String?] {
        [stage.rolloutID, stage.release, number(stage.percentage), stage.state.rawValue, stage.reasonCode, stage.reasonDetail,
         stage.trippedBy, LedgerTime.format(stage.updatedAt), stage.updatedBy]
    }

    func insertEvent(_ event: StageEvent, recordID: String) throws(LedgerError) {
        try rows("""
            INSERT INTO stage_events (record_id, rollout_id, action, percentage_before, percentage_after, station, actor, note, at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (record_id) DO NOTHING
            """, [recordID, event.rolloutID, event.action.rawValue, number(event.percentageBefore), number(event.percentageAfter),
                  event.station, event.actor, event.note, LedgerTime.format(event.at)])
    }

    func insertResult(_ result: RolloutResult, recordID: String) throws(LedgerError) {
        guard let run = try rows("SELECT id FROM runs WHERE run_key = $1", [result.runKey]).first?[0] else {
            throw .noSuchRun(path: location, run: result.runKey)
        }
        try rows("""
            INSERT INTO rollout_results (record_id, rollout_id, run_id, station, serial, percentage, outcome, hardware_revision,
                                         firmware_after, finished_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (record_id) DO NOTHING
            """, [recordID, result.rolloutID, run, result.station, result.serial, number(result.percentage), result.outcome.rawValue,
                  result.hardwareRevision, result.firmwareAfter, LedgerTime.format(result.finishedAt)])
    }

    func lastResume(_ rolloutID: String) throws(LedgerError) -> Date? {
        try rows("SELECT at FROM stage_events WHERE rollout_id = $1 AND action = 'resumed' ORDER BY id DESC LIMIT 1", [rolloutID])
            .first?[0].flatMap(LedgerTime.parse)
    }

    func results(_ rolloutID: String, after: Date?, cutoff: Date?, limit: Int?) throws(LedgerError) -> [RolloutResult] {
        try records("""
            SELECT \(LedgerRows.resultColumns) FROM rollout_results x JOIN runs r ON r.id = x.run_id
            WHERE x.rollout_id = $1 AND ($2::text IS NULL OR x.finished_at > $2::text)
              AND ($3::text IS NULL OR x.finished_at >= $3::text)
            ORDER BY x.id DESC LIMIT $4::bigint
            """, [rolloutID, after.map(LedgerTime.format), cutoff.map(LedgerTime.format), limit.map(String.init)]) {
            (row) throws(LedgerError) in try LedgerRows.result(row)
        }
    }
}

extension PostgresLedger: RolloutStageStore {
    public func rolloutStage(_ rolloutID: String) throws(LedgerError) -> RolloutStage? {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, "SELECT \(LedgerRows.stageColumns) FROM rollout_stages WHERE rollout_id = $1", [rolloutID]) {
                (row) throws(LedgerError) in try LedgerRows.stage(row)
            }.first
        }
    }

    public func rolloutStages() throws(LedgerError) -> [RolloutStage] {
        try read { (db) throws(LedgerError) in try PostgresStageTransaction(db: db, location: target).stages() }
    }

    public func stageEvents(_ rolloutID: String) throws(LedgerError) -> [StageEvent] {
        try read { (db) throws(LedgerError) in try PostgresStageTransaction(db: db, location: target).events(rolloutID) }
    }

    public func rolloutRecords() throws(LedgerError) -> RolloutRecords {
        try read { (db) throws(LedgerError) in try PostgresStageTransaction(db: db, location: target).records() }
    }

    public func rolloutResults(_ rolloutID: String) throws(LedgerError) -> [RolloutResult] {
        try read { (db) throws(LedgerError) in
            try PostgresStageTransaction(db: db, location: target).results(rolloutID, after: nil, cutoff: nil, limit: nil).reversed()
        }
    }

    public func checkRolloutStage(_ check: StageCheck) throws(LedgerError) -> RolloutStage {
        let ids = RolloutStageDecisions.recordIDs()
        return try write { (db) throws(LedgerError) in
            try RolloutStageDecisions.check(PostgresStageTransaction(db: db, location: target), check, write: true, recordIDs: ids)
        }
    }

    public func previewRolloutStage(_ check: StageCheck) throws(LedgerError) -> RolloutStage {
        let ids = RolloutStageDecisions.recordIDs()
        return try write { (db) throws(LedgerError) in
            // Read only: the transaction writes nothing (and the row lock ends with it).
            try RolloutStageDecisions.check(PostgresStageTransaction(db: db, location: target), check, write: false, recordIDs: ids)
        }
    }

    public func recordRolloutResult(_ result: RolloutResult, _ check: StageCheck) throws(LedgerError) -> RolloutStage {
        // Made once, outside the retries: a transaction sent again after a lost connection
        // finds its own rows by these ids and adds nothing.
        let first = RolloutStageDecisions.recordIDs(), second = RolloutStageDecisions.recordIDs()
        let recordID = UUID().uuidString
        return try write { (db) throws(LedgerError) in
            let tx = PostgresStageTransaction(db: db, location: target)
            _ = try RolloutStageDecisions.check(tx, StageCheck(rolloutID: check.rolloutID, release: check.release,
                                                               profilePercentage: check.profilePercentage, rule: nil,
                                                               station: check.station, actor: check.actor, runKey: check.runKey,
                                                               now: check.now), write: true, recordIDs: first)
            try tx.insertResult(result, recordID: recordID)
            return try RolloutStageDecisions.check(tx, check, write: true, recordIDs: second)
        }
    }

    public func changeRolloutStage(_ rolloutID: String, _ change: StageChange, by actor: String, note: String,
                                   at time: Date) throws(LedgerError) -> RolloutStage {
        let recordID = UUID().uuidString
        return try write { (db) throws(LedgerError) in
            try RolloutStageDecisions.change(PostgresStageTransaction(db: db, location: target), rolloutID, change, actor: actor,
                                             note: note, at: time, recordID: recordID)
        }
    }
}
