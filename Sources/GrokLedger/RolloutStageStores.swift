import Foundation
import GrokPostgres

// The rollout stage statements of each ledger (RolloutStages.swift has the decisions).
// Rows are read as text on both sides, so one set of parsers serves both.

enum StageRows {
    static let stageColumns = "rollout_id, release, percentage, state, reason_code, reason_detail, tripped_by, updated_at, updated_by"
    static let eventColumns = "id, rollout_id, action, percentage_before, percentage_after, station, actor, note, at"
    /// `rollout_results` joined with `runs r` for the run's key.
    static let resultColumns = """
        x.rollout_id, r.run_key, x.station, x.serial, x.percentage, x.outcome, x.hardware_revision, x.firmware_after, x.finished_at
        """

    static func text(_ row: [String?], _ index: Int, _ name: String, _ location: String) throws(LedgerError) -> String {
        guard index < row.count, let value = row[index] else { throw .corrupt(path: location, damage: LedgerDamage("null_column", [name])) }
        return value
    }

    static func number(_ row: [String?], _ index: Int, _ name: String, _ location: String) throws(LedgerError) -> Double {
        let value = try text(row, index, name, location)
        guard let number = Double(value) else { throw .corrupt(path: location, damage: LedgerDamage("bad_number", [name, value])) }
        return number
    }

    static func optionalNumber(_ row: [String?], _ index: Int, _ name: String, _ location: String) throws(LedgerError) -> Double? {
        row[index] == nil ? nil : try number(row, index, name, location)
    }

    static func date(_ row: [String?], _ index: Int, _ name: String, _ location: String) throws(LedgerError) -> Date {
        let value = try text(row, index, name, location)
        guard let date = LedgerTime.parse(value) else { throw .corrupt(path: location, damage: LedgerDamage("bad_time", [name, value])) }
        return date
    }

    static func code<E: RawRepresentable>(_ row: [String?], _ index: Int, _ name: String, _ location: String) throws(LedgerError) -> E
    where E.RawValue == String {
        let value = try text(row, index, name, location)
        guard let parsed = E(rawValue: value) else { throw .corrupt(path: location, damage: LedgerDamage("unknown_value", [name, value])) }
        return parsed
    }

    static func stage(_ row: [String?], _ location: String) throws(LedgerError) -> RolloutStage {
        RolloutStage(rolloutID: try text(row, 0, "rollout_stages.rollout_id", location), release: row[1],
                     percentage: try number(row, 2, "rollout_stages.percentage", location),
                     state: try code(row, 3, "rollout_stages.state", location), reasonCode: row[4], reasonDetail: row[5] ?? "",
                     trippedBy: row[6], updatedAt: try date(row, 7, "rollout_stages.updated_at", location),
                     updatedBy: try text(row, 8, "rollout_stages.updated_by", location))
    }

    static func event(_ row: [String?], _ location: String) throws(LedgerError) -> StageEvent {
        let id = try text(row, 0, "stage_events.id", location)
        return StageEvent(id: Int64(id) ?? 0, rolloutID: try text(row, 1, "stage_events.rollout_id", location),
                          action: try code(row, 2, "stage_events.action", location),
                          percentageBefore: try optionalNumber(row, 3, "stage_events.percentage_before", location),
                          percentageAfter: try optionalNumber(row, 4, "stage_events.percentage_after", location),
                          station: row[5], actor: try text(row, 6, "stage_events.actor", location), note: row[7] ?? "",
                          at: try date(row, 8, "stage_events.at", location))
    }

    static func result(_ row: [String?], _ location: String) throws(LedgerError) -> RolloutResult {
        RolloutResult(rolloutID: try text(row, 0, "rollout_results.rollout_id", location),
                      runKey: try text(row, 1, "runs.run_key", location),
                      station: try text(row, 2, "rollout_results.station", location),
                      serial: try text(row, 3, "rollout_results.serial", location),
                      percentage: try number(row, 4, "rollout_results.percentage", location),
                      outcome: try code(row, 5, "rollout_results.outcome", location), hardwareRevision: row[6],
                      firmwareAfter: row[7], finishedAt: try date(row, 8, "rollout_results.finished_at", location))
    }

    /// Record ids for the events one call may write (the shared ledger keeps a retried
    /// transaction once by them).
    static func recordIDs() -> [String] { [UUID().uuidString, UUID().uuidString] }
}

// MARK: SQLite

/// The stage statements in one transaction of the station's SQLite ledger.
struct SQLiteStageTransaction: StageTransaction {
    let db: SQLiteConnection
    var location: String { db.path }

    private func rows(_ sql: String, _ values: [SQLValue] = [], columns: Int32) throws(LedgerError) -> [[String?]] {
        try db.query(sql, values) { row in (0..<columns).map { row.text($0) } }
    }

    func stage(_ rolloutID: String) throws(LedgerError) -> RolloutStage? {
        try rows("SELECT \(StageRows.stageColumns) FROM rollout_stages WHERE rollout_id = ?", [.text(rolloutID)], columns: 9)
            .first.map { (row) throws(LedgerError) in try StageRows.stage(row, location) }
    }

    func insertStage(_ stage: RolloutStage) throws(LedgerError) -> Bool {
        try db.execute("""
            INSERT INTO rollout_stages (\(StageRows.stageColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
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
        try rows("""
            SELECT \(StageRows.resultColumns) FROM rollout_results x JOIN runs r ON r.id = x.run_id
            WHERE x.rollout_id = ?1 AND (?2 IS NULL OR x.finished_at > ?2) AND (?3 IS NULL OR x.finished_at >= ?3)
            ORDER BY x.id DESC LIMIT ?4
            """, [.text(rolloutID), SQLValue(after.map(LedgerTime.format)), SQLValue(cutoff.map(LedgerTime.format)),
                  .integer(Int64(limit ?? -1))], columns: 9)
            .map { (row) throws(LedgerError) in try StageRows.result(row, location) }
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
            try db.query("SELECT \(StageRows.stageColumns) FROM rollout_stages ORDER BY rollout_id") { row in (0..<9).map { row.text($0) } }
                .map { (row) throws(LedgerError) in try StageRows.stage(row, db.path) }
        }
    }

    public func stageEvents(_ rolloutID: String) throws(LedgerError) -> [StageEvent] {
        guard hasStages else { return [] }
        return try read { (db) throws(LedgerError) in
            try db.query("SELECT \(StageRows.eventColumns) FROM stage_events WHERE rollout_id = ? ORDER BY id", [.text(rolloutID)]) { row in
                (0..<9).map { row.text($0) }
            }.map { (row) throws(LedgerError) in try StageRows.event(row, db.path) }
        }
    }

    public func rolloutResults(_ rolloutID: String) throws(LedgerError) -> [RolloutResult] {
        guard hasStages else { return [] }
        return try read { (db) throws(LedgerError) in
            try SQLiteStageTransaction(db: db).results(rolloutID, after: nil, cutoff: nil, limit: nil).reversed()
        }
    }

    public func checkRolloutStage(_ check: StageCheck) throws(LedgerError) -> RolloutStage {
        let ids = StageRows.recordIDs()
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
        let ids = StageRows.recordIDs()
        return try read { (db) throws(LedgerError) in
            try RolloutStageDecisions.check(SQLiteStageTransaction(db: db), check, write: false, recordIDs: ids)
        }
    }

    public func recordRolloutResult(_ result: RolloutResult, _ check: StageCheck) throws(LedgerError) -> RolloutStage {
        let ids = StageRows.recordIDs()
        let recordID = UUID().uuidString
        return try write { (db) throws(LedgerError) in
            let tx = SQLiteStageTransaction(db: db)
            // The stage first (made if missing), so the result is counted by the rule below.
            _ = try RolloutStageDecisions.check(tx, StageCheck(rolloutID: check.rolloutID, release: check.release,
                                                               profilePercentage: check.profilePercentage, rule: nil,
                                                               station: check.station, actor: check.actor, runKey: check.runKey,
                                                               now: check.now), write: true, recordIDs: ids)
            try tx.insertResult(result, recordID: recordID)
            return try RolloutStageDecisions.check(tx, check, write: true, recordIDs: StageRows.recordIDs())
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

    private func rows(_ sql: String, _ values: [String?] = []) throws(LedgerError) -> [[String?]] {
        try PostgresLedger.query(db, location, sql, values).map(\.values)
    }

    private func number(_ value: Double?) -> String? { value.map { "\($0)" } }

    func stage(_ rolloutID: String) throws(LedgerError) -> RolloutStage? {
        try rows("SELECT \(StageRows.stageColumns) FROM rollout_stages WHERE rollout_id = $1 FOR UPDATE", [rolloutID])
            .first.map { (row) throws(LedgerError) in try StageRows.stage(row, location) }
    }

    func insertStage(_ stage: RolloutStage) throws(LedgerError) -> Bool {
        !(try rows("""
            INSERT INTO rollout_stages (\(StageRows.stageColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
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
        try rows("""
            SELECT \(StageRows.resultColumns) FROM rollout_results x JOIN runs r ON r.id = x.run_id
            WHERE x.rollout_id = $1 AND ($2::text IS NULL OR x.finished_at > $2::text)
              AND ($3::text IS NULL OR x.finished_at >= $3::text)
            ORDER BY x.id DESC LIMIT $4::bigint
            """, [rolloutID, after.map(LedgerTime.format), cutoff.map(LedgerTime.format), limit.map(String.init)])
            .map { (row) throws(LedgerError) in try StageRows.result(row, location) }
    }
}

extension PostgresLedger: RolloutStageStore {
    public func rolloutStage(_ rolloutID: String) throws(LedgerError) -> RolloutStage? {
        try read { (db) throws(LedgerError) in
            try Self.query(db, target, "SELECT \(StageRows.stageColumns) FROM rollout_stages WHERE rollout_id = $1", [rolloutID])
                .first.map { (row) throws(LedgerError) in try StageRows.stage(row.values, target) }
        }
    }

    public func rolloutStages() throws(LedgerError) -> [RolloutStage] {
        try read { (db) throws(LedgerError) in
            try Self.query(db, target, "SELECT \(StageRows.stageColumns) FROM rollout_stages ORDER BY rollout_id")
                .map { (row) throws(LedgerError) in try StageRows.stage(row.values, target) }
        }
    }

    public func stageEvents(_ rolloutID: String) throws(LedgerError) -> [StageEvent] {
        try read { (db) throws(LedgerError) in
            try Self.query(db, target, "SELECT \(StageRows.eventColumns) FROM stage_events WHERE rollout_id = $1 ORDER BY id", [rolloutID])
                .map { (row) throws(LedgerError) in try StageRows.event(row.values, target) }
        }
    }

    public func rolloutResults(_ rolloutID: String) throws(LedgerError) -> [RolloutResult] {
        try read { (db) throws(LedgerError) in
            try PostgresStageTransaction(db: db, location: target).results(rolloutID, after: nil, cutoff: nil, limit: nil).reversed()
        }
    }

    public func checkRolloutStage(_ check: StageCheck) throws(LedgerError) -> RolloutStage {
        let ids = StageRows.recordIDs()
        return try write { (db) throws(LedgerError) in
            try RolloutStageDecisions.check(PostgresStageTransaction(db: db, location: target), check, write: true, recordIDs: ids)
        }
    }

    public func previewRolloutStage(_ check: StageCheck) throws(LedgerError) -> RolloutStage {
        let ids = StageRows.recordIDs()
        return try write { (db) throws(LedgerError) in
            // Read only: the transaction writes nothing (and the row lock ends with it).
            try RolloutStageDecisions.check(PostgresStageTransaction(db: db, location: target), check, write: false, recordIDs: ids)
        }
    }

    public func recordRolloutResult(_ result: RolloutResult, _ check: StageCheck) throws(LedgerError) -> RolloutStage {
        // Made once, outside the retries: a transaction sent again after a lost connection
        // finds its own rows by these ids and adds nothing.
        let first = StageRows.recordIDs(), second = StageRows.recordIDs()
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
