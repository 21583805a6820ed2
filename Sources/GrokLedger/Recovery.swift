import GrokBasics
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `Ledger.check(path:)` found in a sound ledger.
public struct LedgerCheckReport: Sendable, Equatable {
    public var path: String
    public var schemaVersion: Int
    /// Pages of the database (as SQLite sees it, WAL included) and their size in bytes.
    public var pages: Int
    public var pageSize: Int
    /// Rows per table.
    public var rows: [LedgerTable: Int]
    /// Runs with no end yet: running now, or left by a process that died (closed as
    /// `abandoned` by the next writable open).
    public var openRuns: Int
    /// Frames and committed transactions in the `-wal` not yet copied into the file.
    public var walFrames: Int
    public var walCommits: Int
}

/// What `Ledger.recover(from:to:)` salvaged and what it could not.
public struct LedgerRecoveryReport: Sendable, Equatable {
    public var source: String
    public var output: String
    /// Why the source needed recovering (its check's error), nil if it checked sound.
    public var problem: LedgerError?
    /// Rows copied, per table.
    public var recovered: [LedgerTable: Int]
    /// Row ids that could not be read (or were refused by the new file), per table, as
    /// ranges. Runs, steps and smoke tests are numbered 1, 2, 3...: a gap is a lost row. For
    /// devices a range is of SQLite row ids: how many devices it held is unknown.
    public var lost: [LedgerTable: [ClosedRange<Int64>]]
    /// Runs that steps or smoke tests name but that were lost: recreated as placeholders
    /// (profile `(lost in recovery)`, outcome `abandoned`, key `lost-<number>`) so their steps are kept.
    public var placeholderRuns: [Int64]
    /// Committed transactions of the `-wal` that SQLite could not read (after a damaged frame).
    public var walCommitsLost: Int

    /// How many row ids the lost ranges of `table` cover.
    public func lostCount(_ table: LedgerTable) -> Int64 {
        (lost[table] ?? []).reduce(0) { $0 + ($1.upperBound - $1.lowerBound + 1) }
    }

    /// Nothing was lost.
    public var isComplete: Bool { lost.values.allSatisfy(\.isEmpty) && walCommitsLost == 0 }
}

extension Ledger {
    /// The full check behind `grokctl ledger check`, read-only: the header, the identity,
    /// `PRAGMA integrity_check` (indexes matched to tables too), and the `-wal`'s frames.
    /// - Throws: the first problem found, as ``LedgerError``.
    public static func check(path: String) throws(LedgerError) -> LedgerCheckReport {
        guard FileManager.default.fileExists(atPath: path) else { throw .cannotOpen(path: path, detail: "no_such_file") }
        let header = try FileCheck.verifyHeader(path)
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5000, readOnly: true)
        let version = try Schema.checkIdentity(connection)
        try Integrity.fullCheck(connection)
        let wal = try FileCheck.verifyWAL(path, attempts: 3)
        return try connection.readTransaction { (db) throws(LedgerError) in
            var rows: [LedgerTable: Int] = [:]
            for table in LedgerTable.allCases where table.exists(inVersion: version) {
                rows[table] = Int(try db.queryInteger("SELECT count(*) FROM \(table.rawValue)") ?? 0)
            }
            return LedgerCheckReport(
                path: path, schemaVersion: version, pages: Int(try db.queryInteger("PRAGMA page_count") ?? 0),
                pageSize: header.pageSize, rows: rows,
                openRuns: Int(try db.queryInteger("SELECT count(*) FROM runs WHERE ended_at IS NULL") ?? 0),
                walFrames: wal.committedFrames, walCommits: wal.commits)
        }
    }

    /// Salvages what is readable of the ledger at `source` into a new ledger at `output`
    /// (which must not exist), and says what was lost. The source is opened read-only and
    /// never modified. Rows are read one at a time by row id, so a damaged page costs only
    /// the rows on it; the new file is built aside and linked into place whole.
    /// - Throws: ``LedgerError`` when the source cannot be read at all (its first page is
    ///   gone) or `output` cannot be made.
    public static func recover(from source: String, to output: String) throws(LedgerError) -> LedgerRecoveryReport {
        guard !FileManager.default.fileExists(atPath: output) else {
            throw .cannotOpen(path: output, detail: "output_exists")
        }
        var problem: LedgerError?
        do { _ = try check(path: source) } catch { problem = error }
        let wal = WALScan.scan(try FileCheck.readAll(source + "-wal"))
        let reader = try SQLiteConnection(path: source, busyTimeoutMilliseconds: 5000, readOnly: true)
        let version = Int(try reader.queryInteger("PRAGMA user_version") ?? 0)
        guard version <= Schema.currentVersion else {
            throw .newerSchema(path: source, found: version, supported: Schema.currentVersion)
        }
        // The table of tables spans page 1 and, as the schema grows, pages after it: without
        // it no table can be found, so a damaged one is refused rather than reported as a
        // ledger that lost nothing but a row or two.
        do throws(LedgerError) {
            _ = try reader.query("SELECT type, name, rootpage, sql FROM sqlite_schema") { $0.text(1) }
        } catch {
            throw .corrupt(path: source, damage: LedgerDamage("schema_damaged"))
        }

        var salvaged: [LedgerTable: [[SQLValue]]] = [:]
        var lost: [LedgerTable: [ClosedRange<Int64>]] = [:]
        for table in LedgerTable.allCases where table.exists(inVersion: version) {
            let (rows, gaps) = salvage(table, reader, version: version)
            salvaged[table] = rows
            lost[table] = gaps
        }
        let sequences = (try? reader.query("SELECT name, seq FROM sqlite_sequence") { ($0.text(0) ?? "", $0.integer(1) ?? 0) }) ?? []

        // Build the new ledger aside, fill it, then put it in place.
        let temporary = output + ".new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { for suffix in ["", "-journal", "-wal", "-shm", "-runs"] { unlink(temporary + suffix) } }
        try LedgerFiles.createIfMissing(temporary, busyTimeoutMilliseconds: 5000)
        var recovered: [LedgerTable: Int] = [:]
        var placeholders: [Int64] = []
        do {  // the writer is closed at the end of this scope, before the file is published
            let writer = try SQLiteConnection(path: temporary, busyTimeoutMilliseconds: 5000)
            try writer.setCheckpointOnClose(true)
            try writer.configureForWriting()
            try writer.transaction { (db) throws(LedgerError) in
                // Intents too: a recovered ledger keeps the changes made without an outcome
                // recorded, so the next run still resolves them.
                // The rollout stages too (schema 5), a stage before its events: a halt or a
                // pause must survive a recovery, or the fleet would start units it had stopped.
                for table in [LedgerTable.devices, .runs, .steps, .smokeTests, .intents, .rolloutStages, .stageEvents, .rolloutResults] {
                    let columns = ExportTable.storedColumns(table)
                    // Tables numbered by `id` keep it (the row id is the same column); devices keep their row id.
                    let keepsRowID = columns.first != "id"
                    let names = (keepsRowID ? ["rowid"] : []) + columns
                    let values = Array(repeating: "?", count: names.count).joined(separator: ", ")
                    let sql = "INSERT INTO \(table.rawValue) (\(names.joined(separator: ", "))) VALUES (\(values))"
                    if table == .steps || table == .smokeTests || table == .intents || table == .rolloutResults {
                        // Steps, smoke tests, intents and rollout results whose run was lost keep a placeholder run.
                        let timeColumn = switch table { case .intents: "recorded_at"; case .rolloutResults: "finished_at"; default: "started_at" }
                        let time = columns.firstIndex(of: timeColumn)! + 1
                        for column in ["run_id", "resolved_by"] {
                            guard let runIndex = columns.firstIndex(of: column).map({ $0 + 1 }) else { continue }
                            for row in salvaged[table] ?? [] {
                                guard case .integer(let run) = row[runIndex],
                                      try db.queryInteger("SELECT count(*) FROM runs WHERE id = ?", [.integer(run)]) == 0
                                else { continue }
                                try db.execute(
                                    """
                                    INSERT INTO runs (id, kind, profile_name, profile_sha256, station, operator, started_at, ended_at, outcome,
                                                      run_key)
                                    VALUES (?1, 'provision', '(lost in recovery)', ?2, '', '', ?3, ?3, 'abandoned', 'lost-' || ?1)
                                    """, [.integer(run), .text(String(repeating: "0", count: 64)), row[time]])
                                placeholders.append(run)
                            }
                        }
                    }
                    var count = 0
                    for row in salvaged[table] ?? [] {
                        do throws(LedgerError) {
                            try db.execute(sql, keepsRowID ? row : Array(row.dropFirst()))
                            count += 1
                        } catch .invalidRecord {
                            // A row whose bytes were damaged into values the schema refuses.
                            if case .integer(let id) = row[0] { lost[table, default: []].append(id...id) }
                        }
                    }
                    recovered[table] = count
                }
                for (name, seq) in sequences where LedgerTable(rawValue: name) != nil {
                    try db.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", [.integer(seq), .text(name)])
                }
            }
        }
        guard link(temporary, output) == 0 else {
            throw LedgerFiles.systemError(output, "cannot put the recovered ledger in place")
        }
        LedgerFiles.syncDirectory(of: output)
        for table in LedgerTable.allCases { lost[table] = merge(lost[table] ?? []) }
        return LedgerRecoveryReport(source: source, output: output, problem: problem, recovered: recovered, lost: lost,
                                    placeholderRuns: placeholders.sorted(),
                                    walCommitsLost: wal.isDamaged ? wal.commitsLostAfterDamage : (wal.headerValid ? 0 : 1))
    }

    /// Every readable row of `table` (row id first, then the exported columns), and the row
    /// ids that could not be read. A read that fails is retried further on, stepping 1, 2,
    /// 4, ... ids ahead until one succeeds, then bisected back to the first id readable again.
    static func salvage(_ table: LedgerTable, _ db: SQLiteConnection, version: Int)
        -> (rows: [[SQLValue]], lost: [ClosedRange<Int64>])
    {
        let selections = ExportTable.storedSelections(table, version: version)
        let sql = "SELECT rowid, \(selections.joined(separator: ", ")) FROM \(table.rawValue) NOT INDEXED WHERE rowid >= ? ORDER BY rowid LIMIT 1"
        // The highest id handed out, when sqlite_sequence is readable: rows up to it existed.
        let highest = (try? db.queryInteger("SELECT seq FROM sqlite_sequence WHERE name = ?", [.text(table.rawValue)])) ?? nil
        func first(from id: Int64) -> Result<[SQLValue]?, LedgerError> {
            Result { () throws(LedgerError) -> [SQLValue]? in
                try db.query(sql, [.integer(id)]) { (row) in (0..<Int32(selections.count + 1)).map { row.value($0) } }.first
            }
        }
        var rows: [[SQLValue]] = []
        var lost: [ClosedRange<Int64>] = []
        var next: Int64 = 1
        let limit = Int64(1) << 62
        scanning: while true {
            switch first(from: next) {
            case .success(nil):
                break scanning
            case .success(let row?):
                guard case .integer(let id) = row[0] else { break scanning }
                if id > next, table != .devices { lost.append(next...(id - 1)) }
                rows.append(row)
                if id == Int64.max { break scanning }
                next = id + 1
            case .failure:
                // Jump ahead until a read works (finding a row, or that none lies beyond),
                // then bisect back to the first id from which reading works again.
                var failed = next
                var step: Int64 = 1
                var found: Int64?
                while failed < limit {
                    let probe = failed > limit - step ? limit : failed + step
                    if case .failure = first(from: probe) {
                        failed = probe
                        step = step < (1 << 61) ? step * 2 : step
                        continue
                    }
                    found = probe
                    break
                }
                guard var good = found else {
                    // Nothing readable after `next`: lost up to the highest id handed out.
                    lost.append(next...max(highest ?? next, next))
                    break scanning
                }
                while good - failed > 1 {
                    let middle = failed + (good - failed) / 2
                    if case .failure = first(from: middle) { failed = middle } else { good = middle }
                }
                lost.append(next...(good - 1))
                next = good
            }
        }
        // Rows after the last one read, up to the highest id handed out, were lost too.
        if let highest, table != .devices, highest >= next, lost.last.map({ $0.upperBound < highest }) ?? true {
            lost.append(next...highest)
        }
        return (rows, lost)
    }

    /// Sorted, overlapping and adjacent ranges joined.
    static func merge(_ ranges: [ClosedRange<Int64>]) -> [ClosedRange<Int64>] {
        var out: [ClosedRange<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, range.lowerBound <= last.upperBound &+ 1 {
                out[out.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                out.append(range)
            }
        }
        return out
    }
}
