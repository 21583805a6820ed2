import GrokBasics

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
        // 2: runs may end `interrupted` (closed by a later process because the one that ran
        // them died), and keep `heartbeat_at`, the last time their process was seen alive.
        // SQLite cannot change a CHECK constraint in place, so `runs` is rebuilt (with
        // foreign keys off, as sqlite.org/lang_altertable.html prescribes; see `migrate`).
        """
        CREATE TABLE runs_2 (
            id             INTEGER PRIMARY KEY AUTOINCREMENT,
            kind           TEXT NOT NULL CHECK (kind IN ('provision', 'rollout', 'verify')),
            profile_name   TEXT NOT NULL,
            profile_sha256 TEXT NOT NULL CHECK (length(profile_sha256) = 64),
            station        TEXT NOT NULL,
            operator       TEXT NOT NULL,
            started_at     TEXT NOT NULL,
            ended_at       TEXT,
            outcome        TEXT CHECK (outcome IS NULL OR outcome IN ('succeeded', 'partial', 'failed', 'halted', 'cancelled',
                                                                      'interrupted')),
            report_path    TEXT,
            heartbeat_at   TEXT
        );
        INSERT INTO runs_2 (id, kind, profile_name, profile_sha256, station, operator, started_at, ended_at, outcome, report_path)
            SELECT id, kind, profile_name, profile_sha256, station, operator, started_at, ended_at, outcome, report_path FROM runs;
        DROP TABLE runs;
        ALTER TABLE runs_2 RENAME TO runs;
        """,
        // 3: intents. A step that changes a Grokker records what it is about to do before it
        // sends the change, and the step's record closes it; an intent left open (the process
        // died between the change and its record) is resolved by the next run, which asks the
        // Grokker (docs/ledger.md, "Intents").
        """
        CREATE TABLE intents (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id      INTEGER NOT NULL REFERENCES runs(id),
            serial      TEXT NOT NULL CHECK (serial <> ''),
            step        TEXT NOT NULL CHECK (step <> ''),
            target      TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            outcome     TEXT CHECK (outcome IS NULL OR outcome IN ('done', 'not_done')),
            resolved_at TEXT,
            resolved_by INTEGER REFERENCES runs(id)
        );
        CREATE INDEX intents_by_serial ON intents(serial, id);
        """,
        // 4: one run identity and one vocabulary. `run_key` is the run's identifier as people
        // see it (the id printed in the summary, the report and --json: `20250115-120000-3fa2`),
        // unique; runs recorded before keep their number in a key of their own
        // (`20241201-104003-r7`). Outcomes take the fleet's codes: `partial` and `halted` become
        // `incomplete`, `cancelled` (a stop signal) `interrupted`, and `interrupted` (the process
        // died) `abandoned`. `runs` is rebuilt again (a new CHECK), as in migration 2.
        """
        CREATE TABLE runs_4 (
            id             INTEGER PRIMARY KEY AUTOINCREMENT,
            kind           TEXT NOT NULL CHECK (kind IN ('provision', 'rollout', 'verify')),
            profile_name   TEXT NOT NULL,
            profile_sha256 TEXT NOT NULL CHECK (length(profile_sha256) = 64),
            station        TEXT NOT NULL,
            operator       TEXT NOT NULL,
            started_at     TEXT NOT NULL,
            ended_at       TEXT,
            outcome        TEXT CHECK (outcome IS NULL OR outcome IN ('succeeded', 'incomplete', 'failed', 'interrupted',
                                                                      'abandoned')),
            report_path    TEXT,
            heartbeat_at   TEXT,
            run_key        TEXT NOT NULL UNIQUE CHECK (run_key <> '')
        );
        INSERT INTO runs_4 (id, kind, profile_name, profile_sha256, station, operator, started_at, ended_at, outcome,
                            report_path, heartbeat_at, run_key)
            SELECT id, kind, profile_name, profile_sha256, station, operator, started_at, ended_at,
                   \(Schema.legacyOutcomeSQL), report_path, heartbeat_at, \(RunKey.legacySQL()) FROM runs;
        DROP TABLE runs;
        ALTER TABLE runs_4 RENAME TO runs;
        """,
        // 5: rollout stages across runs and stations (docs/ledger.md, "Rollout stages").
        // `rollout_stages` is a staged rollout's state as the fleet sees it (its percentage,
        // whether it is active, paused or halted, and why); `stage_events` who changed it and
        // when; `rollout_results` how each unit a rollout run started ended, which the halt
        // rule counts over the window the profile sets. A step may end `declined` (the person
        // at the terminal said no); `steps` is rebuilt for the new CHECK, as `runs` was in 2.
        """
        CREATE TABLE rollout_stages (
            rollout_id    TEXT PRIMARY KEY NOT NULL CHECK (rollout_id <> ''),
            release       TEXT,
            percentage    REAL NOT NULL CHECK (percentage >= 0 AND percentage <= 100),
            state         TEXT NOT NULL CHECK (state IN ('active', 'paused', 'halted')),
            reason_code   TEXT,
            reason_detail TEXT NOT NULL DEFAULT '',
            tripped_by    TEXT,
            updated_at    TEXT NOT NULL,
            updated_by    TEXT NOT NULL
        );
        CREATE TABLE stage_events (
            id                INTEGER PRIMARY KEY AUTOINCREMENT,
            rollout_id        TEXT NOT NULL REFERENCES rollout_stages(rollout_id),
            action            TEXT NOT NULL CHECK (action IN ('created', 'paused', 'resumed', 'advanced', 'halted')),
            percentage_before REAL,
            percentage_after  REAL,
            station           TEXT,
            actor             TEXT NOT NULL,
            note              TEXT NOT NULL DEFAULT '',
            at                TEXT NOT NULL
        );
        CREATE INDEX stage_events_by_rollout ON stage_events(rollout_id, id);
        CREATE TABLE rollout_results (
            id                INTEGER PRIMARY KEY AUTOINCREMENT,
            rollout_id        TEXT NOT NULL CHECK (rollout_id <> ''),
            run_id            INTEGER NOT NULL REFERENCES runs(id),
            station           TEXT NOT NULL,
            serial            TEXT NOT NULL CHECK (serial <> ''),
            percentage        REAL NOT NULL,
            outcome           TEXT NOT NULL CHECK (outcome IN ('succeeded', 'incomplete', 'failed')),
            hardware_revision TEXT,
            firmware_after    TEXT,
            finished_at       TEXT NOT NULL
        );
        CREATE INDEX rollout_results_by_rollout ON rollout_results(rollout_id, id);
        CREATE TABLE steps_5 (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id          INTEGER NOT NULL REFERENCES runs(id),
            serial          TEXT NOT NULL CHECK (serial <> ''),
            step            TEXT NOT NULL CHECK (step <> ''),
            started_at      TEXT NOT NULL,
            ended_at        TEXT NOT NULL,
            duration_ms     INTEGER NOT NULL CHECK (duration_ms >= 0),
            result          TEXT NOT NULL CHECK (result IN ('done', 'skipped', 'failed', 'postponed', 'refused', 'declined')),
            firmware_before TEXT,
            firmware_after  TEXT,
            region_before   TEXT,
            region_after    TEXT,
            code            TEXT,
            detail          TEXT NOT NULL DEFAULT ''
        );
        INSERT INTO steps_5 SELECT id, run_id, serial, step, started_at, ended_at, duration_ms, result, firmware_before,
                                   firmware_after, region_before, region_after, code, detail FROM steps;
        DROP TABLE steps;
        ALTER TABLE steps_5 RENAME TO steps;
        CREATE INDEX steps_by_serial ON steps(serial, id);
        CREATE INDEX steps_by_run ON steps(run_id, id);
        """,
        // 6: a step a stop signal ended is `interrupted`, not `failed` (a firmware update
        // stopped in the unit's loader is unfinished, not broken; the same command finishes
        // it). `steps` is rebuilt for the new CHECK, and the steps earlier versions recorded
        // `failed` with the stop's own codes become `interrupted`.
        """
        CREATE TABLE steps_6 (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id          INTEGER NOT NULL REFERENCES runs(id),
            serial          TEXT NOT NULL CHECK (serial <> ''),
            step            TEXT NOT NULL CHECK (step <> ''),
            started_at      TEXT NOT NULL,
            ended_at        TEXT NOT NULL,
            duration_ms     INTEGER NOT NULL CHECK (duration_ms >= 0),
            result          TEXT NOT NULL CHECK (result IN ('done', 'skipped', 'failed', 'postponed', 'refused', 'declined',
                                                            'interrupted')),
            firmware_before TEXT,
            firmware_after  TEXT,
            region_before   TEXT,
            region_after    TEXT,
            code            TEXT,
            detail          TEXT NOT NULL DEFAULT ''
        );
        INSERT INTO steps_6 SELECT id, run_id, serial, step, started_at, ended_at, duration_ms,
                                   \(Schema.interruptedStepSQL), firmware_before,
                                   firmware_after, region_before, region_after, code, detail FROM steps;
        DROP TABLE steps;
        ALTER TABLE steps_6 RENAME TO steps;
        CREATE INDEX steps_by_serial ON steps(serial, id);
        CREATE INDEX steps_by_run ON steps(run_id, id);
        """,
        // 7: link settings (docs/ledger.md, "Link settings"): the samples per bit and sample
        // rate AutoConfig chose for a Grokker (by serial) or a sound-card model (USB
        // vendor:product, or `emulated`), or a fallback after a setting failed mid-run; the
        // newest record of a subject is its setting, so every station starts from it.
        """
        CREATE TABLE link_settings (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,
            subject_kind    TEXT NOT NULL CHECK (subject_kind IN ('serial', 'sound_card')),
            subject         TEXT NOT NULL CHECK (subject <> ''),
            samples_per_bit INTEGER NOT NULL CHECK (samples_per_bit > 0),
            sample_rate     INTEGER NOT NULL CHECK (sample_rate IN (44100, 48000)),
            reason          TEXT NOT NULL CHECK (reason IN ('autoconfig', 'fallback')),
            station         TEXT NOT NULL DEFAULT '',
            recorded_at     TEXT NOT NULL
        );
        CREATE INDEX link_settings_by_subject ON link_settings(subject_kind, subject, id);
        """,
        // 8: the USB port of the sound card a step's Grokker was on (`1-1.4`; NULL when the
        // port is not on a USB sound card, and for the steps earlier versions recorded).
        """
        ALTER TABLE steps ADD COLUMN usb_path TEXT CHECK (usb_path IS NULL OR usb_path <> '');
        """,
    ]

    /// A step's result as schema version 6 names it, from a file older than that: the stop
    /// signal's codes were recorded `failed` (PostgresSchema's migration 6 does the same).
    static let interruptedStepSQL = """
        CASE WHEN result = 'failed' AND code IN ('fleet_interrupted', 'fleet_update_unfinished') THEN 'interrupted' \
        ELSE result END
        """

    /// A run's outcome as schema version 4 names it, from a file older than that.
    static let legacyOutcomeSQL = """
        CASE outcome WHEN 'partial' THEN 'incomplete' WHEN 'halted' THEN 'incomplete' WHEN 'cancelled' THEN 'interrupted' \
        WHEN 'interrupted' THEN 'abandoned' ELSE outcome END
        """

    /// The newest schema version this build knows.
    static var currentVersion: Int { migrations.count }

    /// Brings the database to the newest version: refuses a foreign or newer database, and
    /// applies the missing migrations in one write transaction (a crash applies all or none;
    /// two processes opening a new ledger at once migrate it once).
    ///
    /// Foreign keys are switched off for the migration (a table that others reference is
    /// rebuilt) and checked with `PRAGMA foreign_key_check` before it commits; the caller
    /// switches them on afterwards.
    static func migrate(_ connection: SQLiteConnection, migrations: [String] = Schema.migrations) throws(LedgerError) {
        let known = migrations.count
        // Cheap read first, so a newer or foreign database is refused without taking the write lock.
        try checkIdentity(connection, known: known)
        let version = Int(try connection.queryInteger("PRAGMA user_version") ?? 0)
        guard version < known else { return }
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.transaction { (db) throws(LedgerError) in
            try checkIdentity(db, known: known)
            let start = Int(try db.queryInteger("PRAGMA user_version") ?? 0)
            guard start < known else { return }
            for migration in migrations[start...] { try db.executeScript(migration) }
            let violations = try db.query("PRAGMA foreign_key_check") { $0.text(0) ?? "" }
            guard violations.isEmpty else {
                throw .corrupt(path: db.path, damage: LedgerDamage("orphan_rows", [Set(violations).sorted().joined(separator: ", ")]))
            }
            // PRAGMA takes no bound parameters; both values are integers from this file.
            try db.execute("PRAGMA user_version = \(known)")
            try db.execute("PRAGMA application_id = \(applicationID)")
        }
    }

    /// Refuses another application's database (by its `application_id`, or a database with
    /// tables but neither an application id nor a version) and one from a newer grokctl.
    /// Reads only. Returns the schema version found.
    @discardableResult
    static func checkIdentity(_ connection: SQLiteConnection, known: Int = Schema.currentVersion) throws(LedgerError) -> Int {
        let application = Int32(truncatingIfNeeded: try connection.queryInteger("PRAGMA application_id") ?? 0)
        let version = Int(try connection.queryInteger("PRAGMA user_version") ?? 0)
        if application != 0 && application != applicationID {
            throw .notALedger(path: connection.path, applicationID: application)
        }
        let tables = Set(try connection.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
            $0.text(0) ?? ""
        })
        if application == 0 {
            // A fresh file, or someone else's database without an application_id: refuse the
            // latter. grokctl sets the application id in the same transaction as the version,
            // so a version without it is not ours either.
            if !tables.isEmpty || version != 0 { throw .notALedger(path: connection.path, applicationID: 0) }
            return version
        }
        if version > known {
            throw .newerSchema(path: connection.path, found: version, supported: known)
        }
        let missing = ["devices", "runs", "steps", "smoke_tests"].filter { !tables.contains($0) }
        if !missing.isEmpty {
            throw .corrupt(path: connection.path, damage: LedgerDamage("missing_tables", [String(version), missing.joined(separator: ", ")]))
        }
        return version
    }
}
