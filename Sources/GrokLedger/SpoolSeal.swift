#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import GrokBasics
import GrokCrypto

/// A station's spool key (docs/ledger.md, "What a spool's seals protect"): 32 random bytes,
/// 64 hex digits in `<spool dir>/<station>.key` beside the spool `<station>.sqlite`, made
/// 0600 by the first spooling run of the station and read only by that station's grokctl.
/// Every spooled record is sealed with it (``SpoolSeal``), so a spool is sent only as the
/// station wrote it.
struct SpoolKey: Sendable {
    let path: String
    let bytes: [UInt8]
    /// This open made the key for a spool file that existed already: whatever that spool
    /// holds was written under another key (or none).
    var isNew: Bool

    /// The key of the spool at `spool`: its name with `.sqlite` replaced by `.key`.
    static func path(forSpool spool: String) -> String {
        (spool.hasSuffix(".sqlite") ? String(spool.dropLast(".sqlite".count)) : spool) + ".key"
    }

    /// The key at `path`, made (0600, created exclusively: of two processes making it at
    /// once, both use the one that got there first) when there is none.
    static func loadOrCreate(_ path: String) throws(LedgerError) -> SpoolKey {
        if let bytes = try load(path) { return SpoolKey(path: path, bytes: bytes, isNew: false) }
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        let made: Bool
        do {
            made = try AtomicFile.write(Array((Hex.encode(bytes) + "\n").utf8), to: path,
                                        options: AtomicFile.Options(mode: 0o600, exclusive: true, createsDirectories: true))
        } catch {
            throw .spoolKey(path: path, problem: ErrorDetail("system_call", [error.call, error.errnoName]))
        }
        if made { return SpoolKey(path: path, bytes: bytes, isNew: true) }
        guard let theirs = try load(path) else {
            throw .spoolKey(path: path, problem: ErrorDetail("system_call", ["open", systemErrorName(ENOENT)]))
        }
        return SpoolKey(path: path, bytes: theirs, isNew: false)
    }

    /// The key's bytes; nil when there is no file. Refuses a link, a FIFO or any file that is
    /// not regular (never opened through a link; no wait on a FIFO), a file of another user
    /// or one that others may read, and anything but 64 hex digits.
    static func load(_ path: String) throws(LedgerError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            let number = errno
            if number == ENOENT { return nil }
            if number == ELOOP { throw .spoolKey(path: path, problem: ErrorDetail("not_regular")) }
            throw .spoolKey(path: path, problem: ErrorDetail("system_call", ["open", systemErrorName(number)]))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw .spoolKey(path: path, problem: ErrorDetail("system_call", ["fstat", systemErrorName(errno)]))
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .spoolKey(path: path, problem: ErrorDetail("not_regular")) }
        guard info.st_uid == geteuid() else {
            throw .spoolKey(path: path, problem: ErrorDetail("not_owned", [String(info.st_uid), String(geteuid())]))
        }
        guard info.st_mode & 0o077 == 0 else {
            throw .spoolKey(path: path, problem: ErrorDetail("not_private", [String(info.st_mode & 0o7777, radix: 8)]))
        }
        var buffer = [UInt8](repeating: 0, count: 130)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw .spoolKey(path: path, problem: ErrorDetail("system_call", ["read", systemErrorName(errno)])) }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count == 64, let bytes = Hex.decode(text), bytes.count == 32 else {
            throw .spoolKey(path: path, problem: ErrorDetail("malformed"))
        }
        return bytes
    }
}

/// The seals of a spool's records: one HMAC-SHA256 per row of the tables a sync sends,
/// under the station's ``SpoolKey``, kept in the spool's `spool_seals` and written in the
/// transaction that writes the row (``Ledger/RowSealer``). A row changed by the station is
/// sealed again only when it matched its seal just before the change; a row changed behind
/// the station's back therefore keeps a seal that no longer matches, and a sync refuses it.
enum SpoolSeal {
    /// The tables whose rows a sync sends.
    static let tables: Set<String> = ["runs", "devices", "steps", "smoke_tests", "intents", "rollout_results"]

    static let schema = """
        CREATE TABLE IF NOT EXISTS spool_seals (
            tbl    TEXT NOT NULL,
            row_id INTEGER NOT NULL,
            mac    TEXT NOT NULL,
            PRIMARY KEY (tbl, row_id)
        );
        """

    /// What is sealed: the table, the row id and every column, each value with its type
    /// (text with its length), so no two rows read the same.
    static func message(_ table: String, _ rowid: Int64, _ values: [SQLValue]) -> [UInt8] {
        var bytes = Array("grokctl-spool-seal-1\u{0}\(table)\u{0}\(rowid)\u{0}".utf8)
        for value in values {
            switch value {
            case .null: bytes += Array("N;".utf8)
            case .integer(let v): bytes += Array("I\(v);".utf8)
            case .real(let v): bytes += Array("R\(String(v.bitPattern, radix: 16));".utf8)
            case .text(let t):
                let utf8 = Array(t.utf8)
                bytes += Array("T\(utf8.count):".utf8) + utf8
            }
        }
        return bytes
    }

    /// The row's values now, in column order; nil when there is no such row. Columns a
    /// later schema added to a sealed table (``columnsBefore``) count only when they hold a
    /// value, so a row sealed before they existed still matches its seal.
    static func values(_ db: SQLiteConnection, _ table: String, _ rowid: Int64) throws(LedgerError) -> [SQLValue]? {
        precondition(tables.contains(table))
        return try db.query("SELECT * FROM \(table) WHERE rowid = ?", [.integer(rowid)]) { row in
            var values = (0..<row.columnCount).map { row.value($0) }
            if let count = columnsBefore[table], values.count > count, values[count...].allSatisfy({ $0 == .null }) {
                values.removeLast(values.count - count)
            }
            return values
        }.first
    }

    /// How many columns a sealed table had before later schemas added some: `steps` had 14
    /// before schema 8 added `usb_path`.
    static let columnsBefore: [String: Int] = ["steps": 14]

    static func stored(_ db: SQLiteConnection, _ table: String, _ rowid: Int64) throws(LedgerError) -> [UInt8]? {
        try db.queryText("SELECT mac FROM spool_seals WHERE tbl = ? AND row_id = ?", [.text(table), .integer(rowid)]).flatMap(Hex.decode)
    }

    /// Seals the rows a write transaction changed (see the type's comment), inside it.
    static func seal(_ db: SQLiteConnection, _ changes: [RowChanges.Row], key: [UInt8]) throws(LedgerError) {
        struct Row: Hashable { var table: String; var rowid: Int64 }
        try db.executeScript(schema)
        var seen: Set<Row> = []
        var tainted: Set<Row> = []
        var touched: [Row] = []
        var deleted: Set<Row> = []
        for change in changes {
            let row = Row(table: change.table, rowid: change.rowid)
            // Only the row as it was before this transaction counts.
            if let before = change.before, !seen.contains(row) {
                let sealed = try stored(db, row.table, row.rowid)
                if sealed.map({ !HMACSHA256.isValid($0, key: key, message: message(row.table, row.rowid, before)) }) ?? true {
                    tainted.insert(row)
                }
            }
            seen.insert(row)
            guard let newRowid = change.newRowid else { deleted.insert(row); continue }
            let now = Row(table: change.table, rowid: newRowid)
            if now != row {
                if tainted.contains(row) { tainted.insert(now) }
                deleted.insert(row)
                seen.insert(now)
            }
            deleted.remove(now)
            touched.append(now)
        }
        for row in deleted {
            try db.execute("DELETE FROM spool_seals WHERE tbl = ? AND row_id = ?", [.text(row.table), .integer(row.rowid)])
        }
        for row in Set(touched) where !tainted.contains(row) && !deleted.contains(row) {
            guard let values = try values(db, row.table, row.rowid) else { continue }
            let code = HMACSHA256.code(key: key, message: message(row.table, row.rowid, values))
            try db.execute("INSERT OR REPLACE INTO spool_seals (tbl, row_id, mac) VALUES (?, ?, ?)",
                           [.text(row.table), .integer(row.rowid), .text(Hex.encode(code))])
        }
    }

    /// What is wrong with row `rowid` of `table` (a `ledger.spool.<code>`), or nil when it
    /// matches its seal.
    static func problem(_ db: SQLiteConnection, _ table: String, _ rowid: Int64, key: SpoolKey) throws(LedgerError) -> ErrorDetail? {
        guard let values = try values(db, table, rowid) else { return ErrorDetail("missing") }
        guard let sealed = try stored(db, table, rowid) else {
            return ErrorDetail(key.isNew ? "key_new" : "unsealed", [key.path])
        }
        guard HMACSHA256.isValid(sealed, key: key.bytes, message: message(table, rowid, values)) else {
            return ErrorDetail(key.isNew ? "key_new" : "seal_mismatch", [key.path])
        }
        return nil
    }
}
