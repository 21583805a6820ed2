internal import CSQLite
import GrokBasics
import Foundation

/// A value bound to, or read from, a SQL statement.
enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    init(_ text: String?) { self = text.map(SQLValue.text) ?? .null }
    init(_ integer: Int64?) { self = integer.map(SQLValue.integer) ?? .null }
    init(_ real: Double?) { self = real.map(SQLValue.real) ?? .null }
}

/// One SQLite connection (`sqlite3*`) with its cache of prepared statements; closed in `deinit`.
///
/// Every SQLite call that returns a result code goes through ``check(_:_:)``, which reads
/// `sqlite3_errmsg` at once and turns the code into a ``LedgerError`` naming the database file.
/// The handle is opened with `SQLITE_OPEN_FULLMUTEX`, but a connection is still not
/// `Sendable`: a transaction spans several calls, so ``Ledger`` keeps it inside a
/// `Mutex` and only one thread uses it at a time.
final class SQLiteConnection {
    let path: String
    let busyTimeoutMilliseconds: Int
    private let db: OpaquePointer
    private var statements: [String: PreparedStatement] = [:]
    /// The rows written in the open transaction (`sqlite3_update_hook`), kept only while a
    /// ``sealer`` is installed.
    private let changes = RowChanges()
    /// Called with every row a write transaction changed, inside it, just before `COMMIT`
    /// (``installSealer(_:)``): a spool seals its records in the transaction that writes them.
    private var sealer: (@Sendable (SQLiteConnection, [RowChanges.Row]) throws(LedgerError) -> Void)?

    /// Opens the existing database file at `path` with extended result codes and the busy
    /// timeout. Nothing is read or written yet: the caller verifies the file
    /// (``Ledger/open(path:busyTimeout:readOnly:heartbeatInterval:)``) before it calls
    /// ``configureForWriting()``. `create` lets SQLite create the file (only for a new ledger
    /// built in a private temporary file).
    init(path: String, busyTimeoutMilliseconds: Int, readOnly: Bool = false, create: Bool = false) throws(LedgerError) {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | (create ? SQLITE_OPEN_CREATE : 0)
            | SQLITE_OPEN_FULLMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard let handle else {
            throw .cannotOpen(path: path, detail: "sqlite3_open_v2: \(SystemCodes.sqliteName(rc))")
        }
        guard rc == SQLITE_OK else {
            let error = Self.error(code: rc, message: String(cString: sqlite3_errmsg(handle)), what: "open", path: path,
                                   waitedMilliseconds: 0)
            sqlite3_close_v2(handle)
            throw error
        }
        db = handle
        sqlite3_extended_result_codes(db, 1)
        // Until the caller has verified the file (``setCheckpointOnClose(_:)``).
        _ = CSQLite_setNoCheckpointOnClose(db, 1)
        try check(sqlite3_busy_timeout(db, Int32(clamping: busyTimeoutMilliseconds)), "sqlite3_busy_timeout")
    }

    /// Whether closing the last connection may checkpoint the WAL into the file. Off until a
    /// ledger is verified: closing a connection to a ledger refused as damaged must not write
    /// the readable part of its WAL into it (SQLite does that by default on the last close).
    func setCheckpointOnClose(_ allowed: Bool) throws(LedgerError) {
        try check(CSQLite_setNoCheckpointOnClose(db, allowed ? 0 : 1), "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE")
    }

    /// Puts a verified ledger in the mode every write relies on: WAL journal, full
    /// synchronous commits, foreign keys on. For a ledger grokctl made, the journal is
    /// already WAL and nothing is written.
    func configureForWriting() throws(LedgerError) {
        let mode = try queryText("PRAGMA journal_mode = WAL")
        guard mode?.lowercased() == "wal" else {
            throw .cannotOpen(path: path, detail: "wal_unavailable")
        }
        try execute("PRAGMA synchronous = FULL")
        try execute("PRAGMA foreign_keys = ON")
    }

    /// Has `sealer` called, inside every later write transaction and just before its
    /// `COMMIT`, with the rows of `tables` the transaction inserted, updated or deleted, each
    /// updated or deleted row with its values as they were before (`sqlite3_preupdate_hook`;
    /// rowid tables only). A sealer that throws rolls the whole transaction back.
    func installSealer(tables: Set<String>, _ sealer: @escaping @Sendable (SQLiteConnection, [RowChanges.Row]) throws(LedgerError) -> Void) {
        self.sealer = sealer
        changes.tables = tables
        let context = Unmanaged.passUnretained(changes).toOpaque()
        _ = sqlite3_preupdate_hook(db, { context, db, operation, _, table, oldRowid, newRowid in
            guard let context, let table else { return }
            let changes = Unmanaged<RowChanges>.fromOpaque(context).takeUnretainedValue()
            let name = String(cString: table)
            guard changes.tables.contains(name) else { return }
            var before: [SQLValue]?
            if operation != SQLITE_INSERT {
                before = (0..<sqlite3_preupdate_count(db)).map { column in
                    var value: OpaquePointer?
                    guard sqlite3_preupdate_old(db, column, &value) == SQLITE_OK, let value else { return .null }
                    return SQLValue(value)
                }
            }
            changes.rows.append(RowChanges.Row(table: name, rowid: operation == SQLITE_INSERT ? newRowid : oldRowid,
                                               newRowid: operation == SQLITE_DELETE ? nil : newRowid, before: before))
        }, context)
    }

    deinit {
        if sealer != nil { _ = sqlite3_preupdate_hook(db, nil, nil) }
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        sqlite3_close_v2(db)
    }

    // MARK: The checking funnel

    /// Throws the ``LedgerError`` for any result code other than OK, ROW and DONE.
    /// `waited` is how long the call waited for a lock, for ``LedgerError/locked(path:waitedMilliseconds:)``.
    func check(_ rc: Int32, _ what: String, waited: Int = 0) throws(LedgerError) {
        switch rc {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE: return
        default:
            throw Self.error(code: rc, message: String(cString: sqlite3_errmsg(db)), what: what, path: path,
                             waitedMilliseconds: waited)
        }
    }

    /// Maps a SQLite (extended) result code to the ledger's error, by its primary code. The
    /// detail is the code's name and what was being done, not SQLite's English message
    /// (`message`, kept out of what a person reads in another language).
    static func error(code: Int32, message: String, what: String, path: String, waitedMilliseconds: Int) -> LedgerError {
        let detail = ErrorDetail("sqlite_call", [SystemCodes.sqliteName(code), what])
        switch code & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED: return .locked(path: path, waitedMilliseconds: waitedMilliseconds)
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt(path: path, damage: LedgerDamage("sqlite", [SystemCodes.sqliteName(code)]))
        case SQLITE_FULL: return .diskFull(path: path)
        case SQLITE_READONLY, SQLITE_PERM: return .readOnly(path: path, detail: detail)
        case SQLITE_CANTOPEN: return .cannotOpen(path: path, detail: "\(SystemCodes.sqliteName(code)) (\(what))")
        case SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG: return .invalidRecord(path: path, detail: detail)
        default: return .sqlite(path: path, sqliteCode: code, detail: detail)
        }
    }

    // MARK: Statements

    /// The cached prepared statement for `sql`, reset and with its bindings cleared.
    func statement(_ sql: String) throws(LedgerError) -> PreparedStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var handle: OpaquePointer?
        let (rc, waited) = retryingBusy { sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil) }
        try check(rc, "prepare \(sql)", waited: waited)
        guard let handle else {
            throw .invalidRecord(path: path, detail: ErrorDetail("empty_statement", [sql]))
        }
        let statement = PreparedStatement(handle: handle, sql: sql, connection: self)
        statements[sql] = statement
        return statement
    }

    /// Runs one statement that returns no rows (or whose rows are ignored).
    func execute(_ sql: String, _ values: [SQLValue] = []) throws(LedgerError) {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {}
    }

    /// Runs a script of several statements (a migration), none of which binds values.
    func executeScript(_ sql: String) throws(LedgerError) {
        try check(sqlite3_exec(db, sql, nil, nil, nil), "script")
    }

    /// Calls `body` again while it returns SQLITE_BUSY and the busy timeout has not passed on
    /// the wall clock; returns its last result and how long it waited, in milliseconds.
    ///
    /// SQLite's own busy handler does not cover every case: a `BEGIN IMMEDIATE` or a
    /// `PRAGMA journal_mode` racing another process that is creating or recovering the same
    /// file can return SQLITE_BUSY at once, without waiting. Only calls that may be repeated
    /// are passed here: statements outside an explicit transaction, `COMMIT`, and `prepare`.
    /// With `retry` false the call is made once, and only timed.
    func retryingBusy(retry: Bool = true, _ body: () -> Int32) -> (rc: Int32, waitedMilliseconds: Int) {
        let clock = ContinuousClock()
        let start = clock.now
        var pause = 1
        while true {
            let rc = body()
            let waited = start.duration(to: clock.now)
            let milliseconds = Int(waited.components.seconds * 1000 + waited.components.attoseconds / 1_000_000_000_000_000)
            guard retry, rc & 0xFF == SQLITE_BUSY, milliseconds < busyTimeoutMilliseconds else { return (rc, milliseconds) }
            // Back off from 1 ms to 20 ms between tries, never past the deadline.
            usleep(UInt32(min(pause, max(1, busyTimeoutMilliseconds - milliseconds)) * 1000))
            pause = min(pause * 2, 20)
        }
    }

    /// Runs a query and maps each row.
    func query<Row>(_ sql: String, _ values: [SQLValue] = [], _ row: (PreparedStatement) throws(LedgerError) -> Row)
        throws(LedgerError) -> [Row]
    {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [Row] = []
        while try statement.step() {
            rows.append(try row(statement))
        }
        return rows
    }

    /// The first column of the first row, as text.
    func queryText(_ sql: String, _ values: [SQLValue] = []) throws(LedgerError) -> String? {
        try query(sql, values) { $0.text(0) }.first ?? nil
    }

    /// The first column of the first row, as an integer.
    func queryInteger(_ sql: String, _ values: [SQLValue] = []) throws(LedgerError) -> Int64? {
        try query(sql, values) { $0.integer(0) }.first ?? nil
    }

    /// The row id of the last successful INSERT on this connection.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(db) }

    /// Whether a transaction is open on this connection.
    var inTransaction: Bool { sqlite3_get_autocommit(db) == 0 }

    // MARK: Transactions

    /// Runs `body` inside `BEGIN IMMEDIATE` ... `COMMIT` (the write lock is taken up front, so
    /// a busy database fails at BEGIN, never half-way); any error thrown by `body` or by
    /// COMMIT rolls everything back and is rethrown.
    func transaction<T>(_ body: (SQLiteConnection) throws(LedgerError) -> T) throws(LedgerError) -> T {
        try begin("BEGIN IMMEDIATE")
        return try finish(body, sealing: true)
    }

    /// Runs `body` in a read transaction: every query in it sees the same snapshot.
    func readTransaction<T>(_ body: (SQLiteConnection) throws(LedgerError) -> T) throws(LedgerError) -> T {
        try begin("BEGIN DEFERRED")
        return try finish(body, sealing: false)
    }

    private func begin(_ sql: String) throws(LedgerError) {
        guard !inTransaction else {
            throw .sqlite(path: path, sqliteCode: SQLITE_MISUSE, detail: ErrorDetail("nested_transaction", [sql]))
        }
        changes.rows.removeAll()
        try execute(sql)
    }

    private func finish<T>(_ body: (SQLiteConnection) throws(LedgerError) -> T, sealing: Bool) throws(LedgerError) -> T {
        defer { changes.rows.removeAll() }
        do {
            let result = try body(self)
            if sealing, let sealer, !changes.rows.isEmpty {
                let rows = changes.rows
                try sealer(self, rows)
            }
            try execute("COMMIT")
            return result
        } catch {
            // SQLite may already have rolled back (after SQLITE_FULL, for instance).
            if inTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }
}

@available(*, unavailable) extension SQLiteConnection: Sendable {}

/// The rows of some tables a connection's open transaction changed, as
/// `sqlite3_preupdate_hook` reports them (called on the thread running the statement, which
/// holds the connection).
final class RowChanges {
    struct Row {
        var table: String
        /// The row's id before the change (for an insert, its new id).
        var rowid: Int64
        /// Its id after the change; nil when it was deleted.
        var newRowid: Int64?
        /// Its values before the change, in the table's column order; nil for an insert.
        var before: [SQLValue]?
    }
    var tables: Set<String> = []
    var rows: [Row] = []
}

extension SQLValue {
    /// A value as SQLite holds it (`sqlite3_value*`), read as ``PreparedStatement/value(_:)``
    /// reads a column (a blob, which no ledger column holds, as its bytes taken for text).
    init(_ value: OpaquePointer) {
        switch sqlite3_value_type(value) {
        case SQLITE_NULL: self = .null
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        default:
            guard let bytes = sqlite3_value_text(value) else { self = .null; return }
            let count = Int(sqlite3_value_bytes(value))
            self = .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        }
    }
}

/// One prepared statement (`sqlite3_stmt*`), owned by its connection's cache and finalized
/// with it. Columns are read by index while a row is current.
final class PreparedStatement {
    private var handle: OpaquePointer?
    let sql: String
    private unowned let connection: SQLiteConnection

    init(handle: OpaquePointer, sql: String, connection: SQLiteConnection) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit { finalize() }

    /// Frees the statement; called by the connection before it closes.
    func finalize() {
        if let handle { sqlite3_finalize(handle) }
        handle = nil
    }

    /// Ends the current evaluation and clears the bindings, so the statement holds no lock.
    func reset() {
        guard let handle else { return }
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ values: [SQLValue]) throws(LedgerError) {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard expected == values.count else {
            throw .sqlite(path: connection.path, sqliteCode: SQLITE_RANGE,
                          detail: ErrorDetail("parameter_count", [String(values.count), String(expected), sql]))
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .real(let v): rc = sqlite3_bind_double(handle, index, v)
            case .text(let v):
                var text = v
                rc = text.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { chars in
                        // An empty buffer may have no base address; SQLite needs a pointer for ''.
                        guard let base = chars.baseAddress else { return CSQLite_bindTransientText(handle, index, "", 0) }
                        return CSQLite_bindTransientText(handle, index, base, Int32(clamping: chars.count))
                    }
                }
            }
            try connection.check(rc, "bind parameter \(index) of \(sql)")
        }
    }

    /// Advances to the next row; false when the statement is done. A statement that may be
    /// repeated (outside an explicit transaction, or `COMMIT`) is retried while the database
    /// is busy, up to the busy timeout on the wall clock.
    func step() throws(LedgerError) -> Bool {
        let repeatable = !connection.inTransaction || sql == "COMMIT"
        let (rc, waited) = connection.retryingBusy(retry: repeatable) { sqlite3_step(handle) }
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            try connection.check(rc, sql, waited: waited)
            return false
        }
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func integer(_ column: Int32) -> Int64? {
        isNull(column) ? nil : sqlite3_column_int64(handle, column)
    }

    func real(_ column: Int32) -> Double? {
        isNull(column) ? nil : sqlite3_column_double(handle, column)
    }

    func text(_ column: Int32) -> String? {
        guard !isNull(column), let bytes = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column as a ``SQLValue``, by its stored type.
    func value(_ column: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: .real(sqlite3_column_double(handle, column))
        case SQLITE_NULL: .null
        default: text(column).map(SQLValue.text) ?? .null
        }
    }

    var columnCount: Int32 { sqlite3_column_count(handle) }

    func columnName(_ column: Int32) -> String {
        sqlite3_column_name(handle, column).map { String(cString: $0) } ?? "column\(column)"
    }
}

@available(*, unavailable) extension PreparedStatement: Sendable {}
