import GrokBasics
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Ledger {
    /// Writes the ledger (or one table) to `path` atomically: a temporary file beside it is
    /// written, fsynced and renamed over `path`, so a reader sees the old file or the whole
    /// new one. All tables are read in one snapshot. Field names are the SQL column names
    /// (docs/ledger.md); they never change within a schema version.
    /// - Parameters:
    ///   - format: ``ExportFormat/json`` writes one object with an array per table;
    ///     ``ExportFormat/csv`` writes one table (RFC 4180, CRLF line ends, a header row).
    ///   - path: the output file; its directory is created if needed.
    ///   - table: the table to export; nil means every table for JSON and `steps` for CSV.
    public func export(format: ExportFormat, to path: String, table: LedgerTable? = nil) throws(LedgerError) {
        let tables = table.map { [$0] } ?? (format == .json ? LedgerTable.allCases : [.steps])
        let version = fileVersion
        let data = try read { (db) throws(LedgerError) in
            try tables.map { (table) throws(LedgerError) in try ExportTable.read(table, db, version: version) }
        }
        let text: String
        switch format {
        case .csv: text = data[0].csv()
        case .json: text = try ExportTable.json(data, path: self.path)
        }
        try ExportFile.write(Array(text.utf8), to: path)
    }
}

extension LedgerTable {
    /// The column rows are exported in the order of: the key, or the order they were recorded.
    var exportOrder: String {
        switch self {
        case .devices: "serial"
        case .rolloutStages: "rollout_id"
        default: "id"
        }
    }
}

/// One table's rows as exported.
struct ExportTable: Sendable {
    let table: LedgerTable
    let columns: [String]
    let rows: [[SQLValue]]

    /// The exported columns of each table, in export order, as selected from a file of schema
    /// `version` (a column the file does not have yet is selected as `NULL AS <name>`).
    /// The columns `table` stores, in export order, as selected from a file of schema
    /// `version` (a column the file does not have yet is selected as `NULL AS <name>`): what
    /// a recovery copies row by row.
    static func storedSelections(_ table: LedgerTable, version: Int = Schema.currentVersion) -> [String] {
        let list: String
        switch table {
        case .devices: list = LedgerRows.deviceColumns
        case .runs: return LedgerRows.runColumnList(version)
        case .steps: return ["id"] + LedgerRows.stepColumnList(version)
        case .smokeTests: list = "id, " + LedgerRows.smokeTestColumns
        case .intents: list = LedgerRows.intentColumns
        case .rolloutStages: list = LedgerRows.stageColumns
        case .stageEvents: list = LedgerRows.eventColumns
        case .rolloutResults: list = "id, rollout_id, run_id, station, serial, percentage, outcome, hardware_revision, firmware_after, finished_at"
        }
        return list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The exported columns of each table, in export order: the stored ones, then `extra`
    /// (columns only a shared ledger has), then, for a table with a `run_id` (the ledger's
    /// internal run number), the run's key `run_key`, the name people read and search for,
    /// added last.
    static func selections(_ table: LedgerTable, version: Int = Schema.currentVersion, extra: [String] = []) -> [String] {
        let stored = storedSelections(table, version: version)
        return stored + extra + (stored.contains("run_id") ? [runKeySelection(table, version: version)] : [])
    }

    /// The key of the run a row's `run_id` names (a file older than version 4 has no
    /// `run_key` column: the key it would migrate to), as SQLite and PostgreSQL both read it.
    static func runKeySelection(_ table: LedgerTable, version: Int) -> String {
        let key = version >= 4 ? "k.run_key" : RunKey.legacySQL(id: "k.id", startedAt: "k.started_at")
        return "(SELECT \(key) FROM runs k WHERE k.id = \(table.rawValue).run_id) AS run_key"
    }

    /// The exported column names of each table, in export order.
    static func columns(_ table: LedgerTable, extra: [String] = []) -> [String] {
        selections(table, extra: extra).map(name)
    }

    /// The names of the columns `table` stores, in export order.
    static func storedColumns(_ table: LedgerTable) -> [String] {
        storedSelections(table).map(name)
    }

    /// A selection's column name (`NULL AS heartbeat_at` is `heartbeat_at`).
    static func name(_ selection: String) -> String { selection.components(separatedBy: " AS ").last ?? selection }

    static let booleanColumns: Set<String> = ["provisioned", "passed"]
    static let tagColumns: Set<String> = ["expected_tags", "found_tags", "missing_tags"]

    static func read(_ table: LedgerTable, _ db: SQLiteConnection, version: Int = Schema.currentVersion) throws(LedgerError) -> ExportTable {
        let columns = columns(table)
        guard table.exists(inVersion: version) else { return ExportTable(table: table, columns: columns, rows: []) }
        let order = table.exportOrder
        let rows = try db.query("SELECT \(selections(table, version: version).joined(separator: ", ")) FROM \(table.rawValue) ORDER BY \(order)") {
            (row) throws(LedgerError) in
            try (0..<Int32(columns.count)).map { (index) throws(LedgerError) -> SQLValue in
                let value = row.value(index)
                // Tag lists are stored as JSON text; check them here so both formats can rely on them.
                if tagColumns.contains(columns[Int(index)]), case .text(let text) = value,
                   JSONText.parseStringArray(text) == nil {
                    throw .corrupt(path: db.path, damage: LedgerDamage("bad_json_array", ["\(table.rawValue).\(columns[Int(index)])", text]))
                }
                return value
            }
        }
        return ExportTable(table: table, columns: columns, rows: rows)
    }

    /// RFC 4180: a header row, then one record per row; booleans as `true`/`false`, tag lists
    /// as tags separated by single spaces, NULL as an empty field.
    func csv() -> String {
        var out = columns.map(Self.csvField).joined(separator: ",") + "\r\n"
        for row in rows {
            out += zip(columns, row).map { column, value in Self.csvField(csvText(column, value)) }.joined(separator: ",")
            out += "\r\n"
        }
        return out
    }

    private func csvText(_ column: String, _ value: SQLValue) -> String {
        switch value {
        case .null: return ""
        case .integer(let v): return Self.booleanColumns.contains(column) ? (v != 0 ? "true" : "false") : String(v)
        case .real(let v): return JSONText.number(v)
        case .text(let v):
            if Self.tagColumns.contains(column) { return (JSONText.parseStringArray(v) ?? []).joined(separator: " ") }
            return v
        }
    }

    private static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `{"format": "grokctl-ledger", "schema_version": N, "<table>": [{"<column>": value, ...}, ...], ...}`
    /// with keys in column order; booleans as JSON booleans, tag lists as arrays of strings.
    static func json(_ tables: [ExportTable], path: String) throws(LedgerError) -> String {
        var out = "{\n  \"format\": \"grokctl-ledger\",\n  \"schema_version\": \(Ledger.schemaVersion)"
        for table in tables {
            out += ",\n  \(JSONText.string(table.table.rawValue)): ["
            for (index, row) in table.rows.enumerated() {
                out += index == 0 ? "\n    {" : ",\n    {"
                out += zip(table.columns, row).map { column, value in
                    JSONText.string(column) + ": " + table.jsonValue(column, value)
                }.joined(separator: ", ")
                out += "}"
            }
            out += table.rows.isEmpty ? "]" : "\n  ]"
        }
        return out + "\n}\n"
    }

    private func jsonValue(_ column: String, _ value: SQLValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let v): return Self.booleanColumns.contains(column) ? (v != 0 ? "true" : "false") : String(v)
        case .real(let v): return JSONText.number(v)
        case .text(let v):
            if Self.tagColumns.contains(column) { return JSONText.array(JSONText.parseStringArray(v) ?? []) }
            return JSONText.string(v)
        }
    }
}

/// The little JSON the ledger writes: strings, arrays of strings, numbers.
enum JSONText {
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20 || c.value == 0x2028 || c.value == 0x2029:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func array(_ strings: [String]) -> String {
        "[" + strings.map(string).joined(separator: ",") + "]"
    }

    /// Shortest round-trip decimal; JSON has no infinity or NaN, so those become null.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func parseStringArray(_ text: String) -> [String]? {
        try? JSONDecoder().decode([String].self, from: Data(text.utf8))
    }
}

/// An export's output file, written by GrokBasics' ``AtomicFile`` (readers see the old
/// content or the whole new one, even across a crash); a device or FIFO such as
/// `/dev/stdout` is written in place. A failure is ``LedgerError/exportFailed(path:detail:)``.
enum ExportFile {
    static func write(_ bytes: [UInt8], to path: String) throws(LedgerError) {
        let options = AtomicFile.Options(createsDirectories: true, writesSpecialFilesInPlace: true)
        do throws(SystemCallError) {
            try AtomicFile.write(bytes, to: path, options: options)
        } catch {
            throw .exportFailed(path: path, detail: detail(error, path))
        }
    }

    /// `mkdir_failed` with the output's directory, else `system_call` with the call (and the
    /// temporary file an `open` was for).
    private static func detail(_ error: SystemCallError, _ path: String) -> ErrorDetail {
        if error.call == "mkdir" {
            return ErrorDetail("mkdir_failed", [URL(fileURLWithPath: path).deletingLastPathComponent().path, error.errnoName])
        }
        if error.call == "open", let temporary = error.path, temporary != path {
            return ErrorDetail("system_call", ["open '\(temporary)'", error.errnoName])
        }
        return ErrorDetail("system_call", [error.call, error.errnoName])
    }
}
