/// The ledger's schema and its migrations. `PRAGMA user_version` holds the number of
/// migrations applied; `PRAGMA application_id` marks the file as a grokctl ledger.
/// docs/ledger.md describes every table and column.
enum Schema {
    /// 'GRKL': the ledger's `application_id`.
    static let applicationID: Int32 = 0x4752_4B4C

    /// Migration N (1-based) takes the schema from version N-1 to N. Append only: a released
    /// migration never changes.
    static let migrations: [String] = [
        // 1: the first schema.
        """
        CREATE TABLE devices (
            serial            TEXT PRIMARY KEY NOT NULL CHECK (serial <> ''),
            hardware_type     TEXT,
            hardware_revision TEXT,
            antenna_type      TEXT,
            first_seen        TEXT NOT NULL,
            last_seen         TEXT NOT NULL,
            firmware          TEXT,
            region            TEXT,
            provisioned       INTEGER NOT NULL DEFAULT 0 CHECK (provisioned IN (0, 1))
        );
        CREATE TABLE runs (
            id             INTEGER PRIMARY KEY AUTOINCREMENT,
            kind           TEXT NOT NULL CHECK (kind IN ('provision', 'rollout', 'verify')),
            profile_name   TEXT NOT NULL,
            profile_sha256 TEXT NOT NULL CHECK (length(profile_sha256) = 64),
            station        TEXT NOT NULL,
            operator       TEXT NOT NULL,
            started_at     TEXT NOT NULL,
            ended_at       TEXT,
            outcome        TEXT CHECK (outcome IS NULL OR outcome IN ('succeeded', 'partial', 'failed', 'halted', 'cancelled')),
            report_path    TEXT
        );
        CREATE TABLE steps (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id          INTEGER NOT NULL REFERENCES runs(id),
            serial          TEXT NOT NULL CHECK (serial <> ''),
            step            TEXT NOT NULL CHECK (step <> ''),
            started_at      TEXT NOT NULL,
            ended_at        TEXT NOT NULL,
            duration_ms     INTEGER NOT NULL CHECK (duration_ms >= 0),
            result          TEXT NOT NULL CHECK (result IN ('done', 'skipped', 'failed', 'postponed', 'refused')),
            firmware_before TEXT,
            firmware_after  TEXT,
            region_before   TEXT,
            region_after    TEXT,
            code            TEXT,
            detail          TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX steps_by_serial ON steps(serial, id);
        CREATE INDEX steps_by_run ON steps(run_id, id);
        CREATE TABLE smoke_tests (
            id               INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id           INTEGER NOT NULL REFERENCES runs(id),
            serial           TEXT NOT NULL CHECK (serial <> ''),
            after_step       TEXT NOT NULL,
            started_at       TEXT NOT NULL,
            duration_ms      INTEGER NOT NULL CHECK (duration_ms >= 0),
            expected_tags    TEXT NOT NULL,
            found_tags       TEXT NOT NULL,
            missing_tags     TEXT NOT NULL,
            reads_per_second REAL NOT NULL,
            min_rssi         REAL,
            passed           INTEGER NOT NULL CHECK (passed IN (0, 1))
        );
        CREATE INDEX smoke_tests_by_serial ON smoke_tests(serial, id);
        CREATE INDEX smoke_tests_by_run ON smoke_tests(run_id, id);
        """,
    ]

    /// The newest schema version this build knows.
    static var currentVersion: Int { migrations.count }

    /// Brings the database to the newest version: refuses a foreign or newer database, and
    /// applies the missing migrations in one write transaction (a crash applies all or none;
    /// two processes opening a new ledger at once migrate it once).
    static func migrate(_ connection: SQLiteConnection, migrations: [String] = Schema.migrations) throws(LedgerError) {
        let known = migrations.count
        // Cheap read first, so a newer or foreign database is refused without taking the write lock.
        try checkIdentity(connection, known: known)
        let version = Int(try connection.queryInteger("PRAGMA user_version") ?? 0)
        guard version < known else { return }
        try connection.transaction { (db) throws(LedgerError) in
            try checkIdentity(db, known: known)
            let start = Int(try db.queryInteger("PRAGMA user_version") ?? 0)
            guard start < known else { return }
            for migration in migrations[start...] { try db.executeScript(migration) }
            // PRAGMA takes no bound parameters; both values are integers from this file.
            try db.execute("PRAGMA user_version = \(known)")
            try db.execute("PRAGMA application_id = \(applicationID)")
        }
    }

    private static func checkIdentity(_ connection: SQLiteConnection, known: Int) throws(LedgerError) {
        let application = Int32(truncatingIfNeeded: try connection.queryInteger("PRAGMA application_id") ?? 0)
        let version = Int(try connection.queryInteger("PRAGMA user_version") ?? 0)
        if application != 0 && application != applicationID {
            throw .notALedger(path: connection.path, applicationID: application)
        }
        if application == 0 && version == 0 {
            // A fresh file, or someone else's database without an application_id: refuse the latter.
            let tables = try connection.queryInteger("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'") ?? 0
            if tables > 0 { throw .notALedger(path: connection.path, applicationID: 0) }
        }
        if version > known {
            throw .newerSchema(path: connection.path, found: version, supported: known)
        }
    }
}
