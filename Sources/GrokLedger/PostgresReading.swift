import GrokBasics
import Foundation
import GrokPostgres

/// What `ledger check` finds in a shared ledger: what makes sense to check on a server
/// (PostgreSQL keeps its own pages and write-ahead log sound): the schema version, the rows
/// of each table, the runs left open and whether their station's session still holds them,
/// and rows that name what does not exist.
public struct SharedLedgerCheckReport: Sendable, Equatable {
    public var target: String
    public var schemaVersion: Int
    public var rows: [LedgerTable: Int]
    /// Open runs whose station's session still holds their run lock (the station works on them).
    public var openRunsAlive: Int
    /// Open runs whose session is gone: the next station to open the ledger closes them as abandoned.
    public var openRunsDead: [String]
    /// Open runs alive whose heartbeat is older than the check's limit (a station that stopped recording).
    public var staleRuns: [String]
    /// Rows that name a run, stage or device that does not exist, or a lock of a finished run, by table.
    public var foreignRows: [String: Int]

    /// Whether nothing calls for action: no dead open run, no stale one, no foreign row.
    public var isSound: Bool { openRunsDead.isEmpty && staleRuns.isEmpty && foreignRows.values.allSatisfy { $0 == 0 } }
}

extension PostgresLedger {
    /// Checks the shared ledger, reading only (see ``SharedLedgerCheckReport``).
    /// - Parameter staleAfter: how old an open run's heartbeat may be, in seconds, before it counts as stale.
    public func check(staleAfter: Double = 600, now: Date = Date()) throws(LedgerError) -> SharedLedgerCheckReport {
        let target = self.target
        return try read { (db) throws(LedgerError) -> SharedLedgerCheckReport in
            let version = try PostgresSchema.version(db, target: target)
            var rows: [LedgerTable: Int] = [:]
            for table in LedgerTable.allCases where table.exists(inVersion: version) {
                rows[table] = Int(try Self.int(try Self.query(db, target, "SELECT count(*) FROM \(table.rawValue)")[0], 0, target))
            }
            // The run lock of an open run is held by its station's session while it works on it.
            let open = try Self.query(db, target, """
                SELECT r.run_key, r.heartbeat_at, r.started_at, EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory'
                    AND l.classid::bigint = $1::bigint AND l.objid::bigint = (r.id & 4294967295) AND l.objsubid = 2 AND l.granted)
                FROM runs r WHERE r.ended_at IS NULL ORDER BY r.id
                """, [String(Self.runLockSpace)])
            var alive = 0
            var dead: [String] = []
            var stale: [String] = []
            for row in open {
                let key = row.text(0) ?? ""
                guard row.bool(3) == true else { dead.append(key); continue }
                alive += 1
                let seen = (row.text(1) ?? row.text(2)).flatMap(LedgerTime.parse) ?? .distantPast
                if now.timeIntervalSince(seen) > staleAfter { stale.append(key) }
            }
            var foreign: [String: Int] = [:]
            var checks = [
                ("steps", "SELECT count(*) FROM steps s WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id)"),
                ("smoke_tests", "SELECT count(*) FROM smoke_tests s WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id)"),
                ("intents", """
                    SELECT count(*) FROM intents i WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = i.run_id)
                        OR (i.resolved_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = i.resolved_by))
                    """),
                ("device_locks", """
                    SELECT count(*) FROM device_locks l WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = l.run_id AND r.ended_at IS NULL)
                    """),
            ]
            if version >= 5 {
                checks.append(("stage_events", """
                    SELECT count(*) FROM stage_events e WHERE NOT EXISTS (SELECT 1 FROM rollout_stages s WHERE s.rollout_id = e.rollout_id)
                    """))
                checks.append(("rollout_results", """
                    SELECT count(*) FROM rollout_results x WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = x.run_id)
                    """))
            }
            for (table, sql) in checks { foreign[table] = Int(try Self.int(try Self.query(db, target, sql)[0], 0, target)) }
            return SharedLedgerCheckReport(target: target, schemaVersion: version, rows: rows, openRunsAlive: alive,
                                           openRunsDead: dead, staleRuns: stale, foreignRows: foreign)
        }
    }

    /// Every run's steps and smoke tests of one Grokker, oldest first, across every station
    /// (as ``Ledger/history(serial:)`` orders them).
    public func history(serial: String) throws(LedgerError) -> [HistoryEntry] {
        let steps = try steps(run: nil, serial: serial)
        let tests = try smokeTests(run: nil, serial: serial)
        var runs: [RunID: RunRecord] = [:]
        for id in Set(steps.map(\.run) + tests.map(\.run)) {
            if let run = try run(id) { runs[id] = run }
        }
        typealias Keyed = (at: Date, run: Int64, kind: Int, index: Int, entry: HistoryEntry)
        var events: [Keyed] = []
        for (index, step) in steps.enumerated() {
            guard let run = runs[step.run] else { throw .unknownRun(path: target, run: step.run.rawValue) }
            events.append((step.startedAt, step.run.rawValue, 0, index, HistoryEntry(run: run, event: .step(step))))
        }
        for (index, test) in tests.enumerated() {
            guard let run = runs[test.run] else { throw .unknownRun(path: target, run: test.run.rawValue) }
            events.append((test.startedAt, test.run.rawValue, 1, index, HistoryEntry(run: run, event: .smokeTest(test))))
        }
        events.sort { ($0.at, $0.run, $0.kind, $0.index) < ($1.at, $1.run, $1.kind, $1.index) }
        return events.map(\.entry)
    }

    /// Writes the shared ledger (or one table) to `path` as ``Ledger/export(format:to:table:)``
    /// does, read in one transaction: the same fields in the same order, with the station
    /// columns only a shared ledger has (`station` of steps, smoke tests and intents,
    /// `last_station` of devices) after the file's own and before `run_key`, the field added last.
    public func export(format: ExportFormat, to path: String, table: LedgerTable? = nil) throws(LedgerError) {
        let tables = table.map { [$0] } ?? (format == .json ? LedgerTable.allCases : [.steps])
        let target = self.target
        let data = try read { (db) throws(LedgerError) -> [ExportTable] in
            let version = try PostgresSchema.version(db, target: target)
            return try tables.map { (table) throws(LedgerError) -> ExportTable in
                let columns = ExportTable.columns(table, extra: Self.stationColumns(table))
                guard table.exists(inVersion: version) else { return ExportTable(table: table, columns: columns, rows: []) }
                let selections = ExportTable.selections(table, extra: Self.stationColumns(table))
                let sql = "SELECT \(selections.joined(separator: ", ")) FROM \(table.rawValue) ORDER BY \(table.exportOrder)"
                let rows = try Self.query(db, target, sql)
                    .map { (row) throws(LedgerError) -> [SQLValue] in
                        try columns.indices.map { (index) throws(LedgerError) -> SQLValue in
                            try Self.exportValue(row, index, column: columns[index], table: table, target)
                        }
                    }
                return ExportTable(table: table, columns: columns, rows: rows)
            }
        }
        let text: String
        switch format {
        case .csv: text = data[0].csv()
        case .json: text = try ExportTable.json(data, path: target)
        }
        try ExportFile.write(Array(text.utf8), to: path)
    }

    static func stationColumns(_ table: LedgerTable) -> [String] {
        switch table {
        case .steps, .smokeTests, .intents: ["station"]
        case .devices: ["last_station"]
        default: []
        }
    }

    static let integerColumns: Set<String> = ["id", "run_id", "duration_ms", "resolved_by"]
    static let realColumns: Set<String> = ["reads_per_second", "min_rssi", "percentage", "percentage_before", "percentage_after"]

    /// A value as the SQLite export would hold it: numbers as numbers, booleans as 0 or 1.
    static func exportValue(_ row: PostgresRow, _ index: Int, column: String, table: LedgerTable, _ target: String) throws(LedgerError) -> SQLValue {
        guard let text = row.text(index) else { return .null }
        if ExportTable.booleanColumns.contains(column) { return .integer(row.bool(index) == true ? 1 : 0) }
        if integerColumns.contains(column) {
            guard let value = Int64(text) else { throw .corrupt(path: target, damage: LedgerDamage("bad_number", ["\(table.rawValue).\(column)", text])) }
            return .integer(value)
        }
        if realColumns.contains(column) {
            guard let value = Double(text) else { throw .corrupt(path: target, damage: LedgerDamage("bad_number", ["\(table.rawValue).\(column)", text])) }
            return .real(value)
        }
        if ExportTable.tagColumns.contains(column), JSONText.parseStringArray(text) == nil {
            throw .corrupt(path: target, damage: LedgerDamage("bad_json_array", ["\(table.rawValue).\(column)", text]))
        }
        return .text(text)
    }
}
