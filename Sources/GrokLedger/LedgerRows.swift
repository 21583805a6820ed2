import GrokBasics
import Foundation
import GrokPostgres

// One decoder per record, over rows of either ledger (docs/ledger.md, "Reading rows").
//
// The station's SQLite file and the shared ledger on PostgreSQL hold the same columns; each
// record (a device, a run, a step, a smoke test, an intent, a rollout stage, a stage event, a
// rollout result) is read back by one function below, over ``LedgerRow``, which both drivers'
// rows satisfy. A column's NULL, a number that is none, a time or a code that cannot be read
// are reported the same way from both ledgers (``LedgerError/corrupt(path:damage:)`` naming
// the column), so the two reads cannot drift apart.

/// One row of a ledger query, as a driver gives it.
protocol LedgerRow {
    /// The ledger the row came from (a file's path, a server's target), as errors name it.
    var location: String { get }
    /// The column's text; nil for NULL.
    func text(_ column: Int) -> String?
    /// The column as an integer; nil for NULL.
    /// - Throws: `bad_number` naming `name` when it holds something else.
    func integer(_ column: Int, _ name: String) throws(LedgerError) -> Int64?
    /// The column as a floating-point number; nil for NULL.
    /// - Throws: `bad_number` naming `name` when it holds something else.
    func real(_ column: Int, _ name: String) throws(LedgerError) -> Double?
    /// The column as a Boolean (SQLite's 0 or 1, PostgreSQL's `t` or `f`); nil for NULL.
    func boolean(_ column: Int) -> Bool?
}

extension LedgerRow {
    func damage(_ code: String, _ arguments: [String]) -> LedgerError {
        .corrupt(path: location, damage: LedgerDamage(code, arguments))
    }

    /// A NOT NULL text column; a NULL means the ledger was edited by hand or damaged.
    func required(_ column: Int, _ name: String) throws(LedgerError) -> String {
        guard let value = text(column) else { throw damage("null_column", [name]) }
        return value
    }

    func requiredInteger(_ column: Int, _ name: String) throws(LedgerError) -> Int64 {
        guard let value = try integer(column, name) else { throw damage("null_column", [name]) }
        return value
    }

    func requiredReal(_ column: Int, _ name: String) throws(LedgerError) -> Double {
        guard let value = try real(column, name) else { throw damage("null_column", [name]) }
        return value
    }

    func requiredBoolean(_ column: Int, _ name: String) throws(LedgerError) -> Bool {
        guard let value = boolean(column) else { throw damage("null_column", [name]) }
        return value
    }

    /// A NOT NULL time (``LedgerTime``).
    func date(_ column: Int, _ name: String) throws(LedgerError) -> Date {
        let value = try required(column, name)
        guard let date = LedgerTime.parse(value) else { throw damage("bad_time", [name, value]) }
        return date
    }

    /// A time that may be NULL.
    func optionalDate(_ column: Int, _ name: String) throws(LedgerError) -> Date? {
        text(column) == nil ? nil : try date(column, name)
    }

    /// A NOT NULL code of a known set (a state, an outcome, a kind).
    func code<E: RawRepresentable>(_ column: Int, _ name: String) throws(LedgerError) -> E where E.RawValue == String {
        let value = try required(column, name)
        guard let parsed = E(rawValue: value) else { throw damage("unknown_value", [name, value]) }
        return parsed
    }

    /// A code that may be NULL.
    func optionalCode<E: RawRepresentable>(_ column: Int, _ name: String) throws(LedgerError) -> E? where E.RawValue == String {
        text(column) == nil ? nil : try code(column, name) as E
    }

    /// A NOT NULL JSON list of texts (a smoke test's tags).
    func tags(_ column: Int, _ name: String) throws(LedgerError) -> [String] {
        let value = try required(column, name)
        guard let tags = JSONText.parseStringArray(value) else { throw damage("bad_json_array", [name, value]) }
        return tags
    }
}

/// A SQLite statement on its current row.
struct SQLiteRow: LedgerRow {
    let statement: PreparedStatement
    let location: String

    func text(_ column: Int) -> String? { statement.text(Int32(column)) }

    // A number column may hold text (SQLite keeps what its affinity cannot convert): read as
    // PostgreSQL's text is, and refused the same way when it is no number.
    func integer(_ column: Int, _ name: String) throws(LedgerError) -> Int64? {
        switch statement.value(Int32(column)) {
        case .null: return nil
        case .integer(let value): return value
        case .real(let value):
            guard let exact = Int64(exactly: value) else { throw damage("bad_number", [name, "\(value)"]) }
            return exact
        case .text(let text):
            guard let value = Int64(text) else { throw damage("bad_number", [name, text]) }
            return value
        }
    }

    func real(_ column: Int, _ name: String) throws(LedgerError) -> Double? {
        switch statement.value(Int32(column)) {
        case .null: return nil
        case .integer(let value): return Double(value)
        case .real(let value): return value
        case .text(let text):
            guard let value = Double(text) else { throw damage("bad_number", [name, text]) }
            return value
        }
    }

    func boolean(_ column: Int) -> Bool? { statement.integer(Int32(column)).map { $0 != 0 } }
}

/// A PostgreSQL row (text values).
struct PostgresLedgerRow: LedgerRow {
    let row: PostgresRow
    let location: String

    func text(_ column: Int) -> String? { row.values[column] }

    func integer(_ column: Int, _ name: String) throws(LedgerError) -> Int64? {
        guard let text = row.values[column] else { return nil }
        guard let value = Int64(text) else { throw damage("bad_number", [name, text]) }
        return value
    }

    func real(_ column: Int, _ name: String) throws(LedgerError) -> Double? {
        guard let text = row.values[column] else { return nil }
        guard let value = Double(text) else { throw damage("bad_number", [name, text]) }
        return value
    }

    func boolean(_ column: Int) -> Bool? { row.bool(column) }
}

extension SQLiteConnection {
    /// The rows of `sql`, each decoded by `decode` over ``LedgerRow``.
    func rows<Row>(_ sql: String, _ values: [SQLValue] = [], _ decode: (SQLiteRow) throws(LedgerError) -> Row) throws(LedgerError) -> [Row] {
        let location = path
        return try query(sql, values) { (statement) throws(LedgerError) in try decode(SQLiteRow(statement: statement, location: location)) }
    }
}

extension PostgresLedger {
    /// The rows of `sql`, each decoded by `decode` over ``LedgerRow``.
    static func rows<Row>(_ db: PostgresConnection, _ target: String, _ sql: String, _ parameters: [String?] = [],
                          _ decode: (PostgresLedgerRow) throws(LedgerError) -> Row) throws(LedgerError) -> [Row] {
        try query(db, target, sql, parameters).map { (row) throws(LedgerError) in try decode(PostgresLedgerRow(row: row, location: target)) }
    }
}

/// The columns each record is read from, in the order its decoder reads them, and the decoders.
enum LedgerRows {
    static let deviceColumns = "serial, hardware_type, hardware_revision, antenna_type, first_seen, last_seen, firmware, region, provisioned"

    static func device(_ row: some LedgerRow) throws(LedgerError) -> DeviceRecord {
        DeviceRecord(
            serial: try row.required(0, "devices.serial"), hardwareType: row.text(1), hardwareRevision: row.text(2),
            antennaType: row.text(3), firstSeen: try row.date(4, "devices.first_seen"), lastSeen: try row.date(5, "devices.last_seen"),
            firmware: row.text(6), region: row.text(7), provisioned: try row.requiredBoolean(8, "devices.provisioned"))
    }

    /// The columns of `runs` in a ledger of schema `version`, as schema version 4 has them
    /// (`heartbeat_at` came with version 2, `run_key` and today's outcome codes with 4; an
    /// older SQLite file opened read-only reads NULL, the legacy key and the outcome renamed).
    static func runColumnList(_ version: Int) -> [String] {
        ["id", "kind", "profile_name", "profile_sha256", "station", "operator", "started_at", "ended_at",
         version >= 4 ? "outcome" : Schema.legacyOutcomeSQL + " AS outcome", "report_path",
         version >= 2 ? "heartbeat_at" : "NULL AS heartbeat_at",
         version >= 4 ? "run_key" : RunKey.legacySQL() + " AS run_key"]
    }

    static func runColumns(_ version: Int) -> String { runColumnList(version).joined(separator: ", ") }

    static func run(_ row: some LedgerRow) throws(LedgerError) -> RunRecord {
        RunRecord(
            id: RunID(rawValue: try row.requiredInteger(0, "runs.id")), key: try row.required(11, "runs.run_key"),
            kind: try row.code(1, "runs.kind"), profileName: try row.required(2, "runs.profile_name"),
            profileSHA256: try row.required(3, "runs.profile_sha256"), station: try row.required(4, "runs.station"),
            operatorName: try row.required(5, "runs.operator"), startedAt: try row.date(6, "runs.started_at"),
            endedAt: try row.optionalDate(7, "runs.ended_at"), outcome: try row.optionalCode(8, "runs.outcome"),
            reportPath: row.text(9), lastSeenAt: try row.optionalDate(10, "runs.heartbeat_at"))
    }

    /// The columns of `steps` in a ledger of schema `version`, as the newest schema has them
    /// (before 6, a step a stop signal ended was recorded `failed`: read as `interrupted`;
    /// before 8, no step recorded its USB port).
    static func stepColumnList(_ version: Int) -> [String] {
        ["run_id", "serial", "step", "started_at", "ended_at", "duration_ms",
         version >= 6 ? "result" : "(" + Schema.interruptedStepSQL + ") AS result",
         "firmware_before", "firmware_after", "region_before", "region_after", "code", "detail",
         version >= 8 ? "usb_path" : "NULL AS usb_path"]
    }
    static func stepColumns(_ version: Int) -> String { stepColumnList(version).joined(separator: ", ") }
    static let stepColumns = stepColumns(Schema.currentVersion)
    static let stepColumnCount = 14

    static func step(_ row: some LedgerRow) throws(LedgerError) -> StepRecord {
        StepRecord(
            run: RunID(rawValue: try row.requiredInteger(0, "steps.run_id")), serial: try row.required(1, "steps.serial"),
            step: try row.required(2, "steps.step"), startedAt: try row.date(3, "steps.started_at"),
            endedAt: try row.date(4, "steps.ended_at"), result: try row.code(6, "steps.result"),
            firmwareBefore: row.text(7), firmwareAfter: row.text(8), regionBefore: row.text(9), regionAfter: row.text(10),
            code: row.text(11), detail: row.text(12) ?? "", usbPath: row.text(13))
    }

    static let smokeTestColumns = """
        run_id, serial, after_step, started_at, duration_ms, expected_tags, found_tags, missing_tags, \
        reads_per_second, min_rssi, passed
        """
    static let smokeTestColumnCount = 11

    static func smokeTest(_ row: some LedgerRow) throws(LedgerError) -> SmokeTestRecord {
        SmokeTestRecord(
            run: RunID(rawValue: try row.requiredInteger(0, "smoke_tests.run_id")), serial: try row.required(1, "smoke_tests.serial"),
            afterStep: try row.required(2, "smoke_tests.after_step"), startedAt: try row.date(3, "smoke_tests.started_at"),
            durationMilliseconds: try row.requiredInteger(4, "smoke_tests.duration_ms"),
            expectedTags: try row.tags(5, "smoke_tests.expected_tags"), foundTags: try row.tags(6, "smoke_tests.found_tags"),
            readsPerSecond: try row.requiredReal(8, "smoke_tests.reads_per_second"), minRSSI: try row.real(9, "smoke_tests.min_rssi"),
            passed: try row.requiredBoolean(10, "smoke_tests.passed"))
    }

    static let intentColumns = "id, run_id, serial, step, target, recorded_at, outcome, resolved_at, resolved_by"

    static func intent(_ row: some LedgerRow) throws(LedgerError) -> IntentRecord {
        IntentRecord(
            id: try row.requiredInteger(0, "intents.id"), run: RunID(rawValue: try row.requiredInteger(1, "intents.run_id")),
            serial: try row.required(2, "intents.serial"), step: try row.required(3, "intents.step"),
            target: try row.required(4, "intents.target"), recordedAt: try row.date(5, "intents.recorded_at"),
            outcome: try row.optionalCode(6, "intents.outcome"), resolvedAt: try row.optionalDate(7, "intents.resolved_at"),
            resolvedBy: try row.integer(8, "intents.resolved_by").map(RunID.init(rawValue:)))
    }

    static let stageColumns = "rollout_id, release, percentage, state, reason_code, reason_detail, tripped_by, updated_at, updated_by"

    static func stage(_ row: some LedgerRow) throws(LedgerError) -> RolloutStage {
        RolloutStage(rolloutID: try row.required(0, "rollout_stages.rollout_id"), release: row.text(1),
                     percentage: try row.requiredReal(2, "rollout_stages.percentage"),
                     state: try row.code(3, "rollout_stages.state"), reasonCode: row.text(4), reasonDetail: row.text(5) ?? "",
                     trippedBy: row.text(6), updatedAt: try row.date(7, "rollout_stages.updated_at"),
                     updatedBy: try row.required(8, "rollout_stages.updated_by"))
    }

    static let eventColumns = "id, rollout_id, action, percentage_before, percentage_after, station, actor, note, at"

    static func event(_ row: some LedgerRow) throws(LedgerError) -> StageEvent {
        StageEvent(id: try row.requiredInteger(0, "stage_events.id"), rolloutID: try row.required(1, "stage_events.rollout_id"),
                   action: try row.code(2, "stage_events.action"),
                   percentageBefore: try row.real(3, "stage_events.percentage_before"),
                   percentageAfter: try row.real(4, "stage_events.percentage_after"),
                   station: row.text(5), actor: try row.required(6, "stage_events.actor"), note: row.text(7) ?? "",
                   at: try row.date(8, "stage_events.at"))
    }

    /// `rollout_results x` joined with `runs r` for the run's key.
    static let resultColumns = """
        x.rollout_id, r.run_key, x.station, x.serial, x.percentage, x.outcome, x.hardware_revision, x.firmware_after, x.finished_at
        """

    static func result(_ row: some LedgerRow) throws(LedgerError) -> RolloutResult {
        RolloutResult(rolloutID: try row.required(0, "rollout_results.rollout_id"), runKey: try row.required(1, "runs.run_key"),
                      station: try row.required(2, "rollout_results.station"), serial: try row.required(3, "rollout_results.serial"),
                      percentage: try row.requiredReal(4, "rollout_results.percentage"),
                      outcome: try row.code(5, "rollout_results.outcome"), hardwareRevision: row.text(6),
                      firmwareAfter: row.text(7), finishedAt: try row.date(8, "rollout_results.finished_at"))
    }
}
