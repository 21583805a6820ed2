import GrokBasics
import GrokPostgres

/// The shared ledger's schema on PostgreSQL: the SQLite ledger's tables (schema version 4,
/// docs/ledger.md) with what many stations writing into one database need besides:
/// - every row a station writes carries its station (`station` columns) and its run
///   (`run_id`), and each record a client id (`record_id`, unique), so a write retried after
///   a lost connection is kept once;
/// - `device_locks`: who works on which Grokker now (a lease with an expiry, beside the
///   session advisory lock that really excludes);
/// - `grokctl_schema`: the schema version, as `PRAGMA user_version` is for SQLite.
///
/// Version numbers follow the SQLite ledger's: the first shared schema is version 4, and a
/// later migration of one is a migration of the other.
enum PostgresSchema {
    /// The first version the shared ledger has (SQLite's version 4).
    static let firstVersion = 4

    /// Migration N takes the shared schema from version `firstVersion + N - 1` to `firstVersion + N`;
    /// the first one creates version 4 whole.
    static let migrations: [String] = [
        """
        CREATE TABLE devices (
            serial            text PRIMARY KEY CHECK (serial <> ''),
            hardware_type     text,
            hardware_revision text,
            antenna_type      text,
            first_seen        text NOT NULL,
            last_seen         text NOT NULL,
            firmware          text,
            region            text,
            provisioned       boolean NOT NULL DEFAULT false,
            last_station      text
        );
        CREATE TABLE runs (
            id             bigserial PRIMARY KEY,
            run_key        text NOT NULL UNIQUE CHECK (run_key <> ''),
            kind           text NOT NULL CHECK (kind IN ('provision', 'rollout', 'verify')),
            profile_name   text NOT NULL,
            profile_sha256 text NOT NULL CHECK (length(profile_sha256) = 64),
            station        text NOT NULL,
            operator       text NOT NULL,
            started_at     text NOT NULL,
            ended_at       text,
            outcome        text CHECK (outcome IS NULL OR outcome IN ('succeeded', 'incomplete', 'failed', 'interrupted', 'abandoned')),
            report_path    text,
            heartbeat_at   text
        );
        CREATE INDEX runs_open ON runs(id) WHERE ended_at IS NULL;
        CREATE TABLE steps (
            id              bigserial PRIMARY KEY,
            record_id       text UNIQUE,
            run_id          bigint NOT NULL REFERENCES runs(id),
            station         text NOT NULL,
            serial          text NOT NULL CHECK (serial <> ''),
            step            text NOT NULL CHECK (step <> ''),
            started_at      text NOT NULL,
            ended_at        text NOT NULL,
            duration_ms     bigint NOT NULL CHECK (duration_ms >= 0),
            result          text NOT NULL CHECK (result IN ('done', 'skipped', 'failed', 'postponed', 'refused')),
            firmware_before text,
            firmware_after  text,
            region_before   text,
            region_after    text,
            code            text,
            detail          text NOT NULL DEFAULT ''
        );
        CREATE INDEX steps_by_serial ON steps(serial, id);
        CREATE INDEX steps_by_run ON steps(run_id, id);
        CREATE TABLE smoke_tests (
            id               bigserial PRIMARY KEY,
            record_id        text UNIQUE,
            run_id           bigint NOT NULL REFERENCES runs(id),
            station          text NOT NULL,
            serial           text NOT NULL CHECK (serial <> ''),
            after_step       text NOT NULL,
            started_at       text NOT NULL,
            duration_ms      bigint NOT NULL CHECK (duration_ms >= 0),
            expected_tags    text NOT NULL,
            found_tags       text NOT NULL,
            missing_tags     text NOT NULL,
            reads_per_second double precision NOT NULL,
            min_rssi         double precision,
            passed           boolean NOT NULL
        );
        CREATE INDEX smoke_tests_by_serial ON smoke_tests(serial, id);
        CREATE INDEX smoke_tests_by_run ON smoke_tests(run_id, id);
        CREATE TABLE intents (
            id          bigserial PRIMARY KEY,
            record_id   text UNIQUE,
            run_id      bigint NOT NULL REFERENCES runs(id),
            station     text NOT NULL,
            serial      text NOT NULL CHECK (serial <> ''),
            step        text NOT NULL CHECK (step <> ''),
            target      text NOT NULL,
            recorded_at text NOT NULL,
            outcome     text CHECK (outcome IS NULL OR outcome IN ('done', 'not_done')),
            resolved_at text,
            resolved_by bigint REFERENCES runs(id)
        );
        CREATE INDEX intents_by_serial ON intents(serial, id);
        CREATE TABLE device_locks (
            serial      text PRIMARY KEY CHECK (serial <> ''),
            station     text NOT NULL,
            run_id      bigint NOT NULL REFERENCES runs(id),
            taken_at    text NOT NULL,
            expires_at  text NOT NULL
        );
        """,
        // 5: rollout stages across runs and stations (Schema.swift's migration 5); a record a
        // station writes carries a client-made `record_id`, as the other records do; a step may
        // end `declined`.
        """
        CREATE TABLE rollout_stages (
            rollout_id    text PRIMARY KEY CHECK (rollout_id <> ''),
            release       text,
            percentage    double precision NOT NULL CHECK (percentage >= 0 AND percentage <= 100),
            state         text NOT NULL CHECK (state IN ('active', 'paused', 'halted')),
            reason_code   text,
            reason_detail text NOT NULL DEFAULT '',
            tripped_by    text,
            updated_at    text NOT NULL,
            updated_by    text NOT NULL
        );
        CREATE TABLE stage_events (
            id                bigserial PRIMARY KEY,
            record_id         text UNIQUE,
            rollout_id        text NOT NULL REFERENCES rollout_stages(rollout_id),
            action            text NOT NULL CHECK (action IN ('created', 'paused', 'resumed', 'advanced', 'halted')),
            percentage_before double precision,
            percentage_after  double precision,
            station           text,
            actor             text NOT NULL,
            note              text NOT NULL DEFAULT '',
            at                text NOT NULL
        );
        CREATE INDEX stage_events_by_rollout ON stage_events(rollout_id, id);
        CREATE TABLE rollout_results (
            id                bigserial PRIMARY KEY,
            record_id         text UNIQUE,
            rollout_id        text NOT NULL CHECK (rollout_id <> ''),
            run_id            bigint NOT NULL REFERENCES runs(id),
            station           text NOT NULL,
            serial            text NOT NULL CHECK (serial <> ''),
            percentage        double precision NOT NULL,
            outcome           text NOT NULL CHECK (outcome IN ('succeeded', 'incomplete', 'failed')),
            hardware_revision text,
            firmware_after    text,
            finished_at       text NOT NULL
        );
        CREATE INDEX rollout_results_by_rollout ON rollout_results(rollout_id, id);
        ALTER TABLE steps DROP CONSTRAINT steps_result_check;
        ALTER TABLE steps ADD CONSTRAINT steps_result_check
            CHECK (result IN ('done', 'skipped', 'failed', 'postponed', 'refused', 'declined'));
        """,
        // 6: a step a stop signal ended is `interrupted` (Schema's migration 6).
        """
        ALTER TABLE steps DROP CONSTRAINT steps_result_check;
        UPDATE steps SET result = 'interrupted' WHERE result = 'failed' AND code IN ('fleet_interrupted', 'fleet_update_unfinished');
        ALTER TABLE steps ADD CONSTRAINT steps_result_check
            CHECK (result IN ('done', 'skipped', 'failed', 'postponed', 'refused', 'declined', 'interrupted'));
        """,
        // 7: link settings (Schema's migration 7); `station` is the station that learned it.
        """
        CREATE TABLE link_settings (
            id              bigserial PRIMARY KEY,
            subject_kind    text NOT NULL CHECK (subject_kind IN ('serial', 'sound_card')),
            subject         text NOT NULL CHECK (subject <> ''),
            samples_per_bit integer NOT NULL CHECK (samples_per_bit > 0),
            sample_rate     integer NOT NULL CHECK (sample_rate IN (44100, 48000)),
            reason          text NOT NULL CHECK (reason IN ('autoconfig', 'fallback')),
            station         text NOT NULL,
            recorded_at     text NOT NULL
        );
        CREATE INDEX link_settings_by_subject ON link_settings(subject_kind, subject, id);
        """,
        // 8: the USB port of a step's sound card (Schema's migration 8).
        """
        ALTER TABLE steps ADD COLUMN usb_path text CHECK (usb_path IS NULL OR usb_path <> '');
        """,
    ]

    static var currentVersion: Int { firstVersion + migrations.count - 1 }

    /// A key for the whole database's migration lock (`pg_advisory_xact_lock`): 'GRKL'.
    static let migrationLock: Int64 = 0x4752_4B4C

    /// The version of the ledger in the database, reading only: refuses a database without
    /// one (empty, or another application's) and one of a newer grokctl.
    static func version(_ db: PostgresConnection, target: String) throws(LedgerError) -> Int {
        let version: Int
        do {
            guard try db.execute("SELECT to_regclass('grokctl_schema') IS NOT NULL").rows.first?.bool(0) ?? false else {
                let tables = try db.execute("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").rows.first?.int(0) ?? 0
                // An empty database: no station has recorded there yet (the CLI says so).
                if tables == 0 { throw LedgerError.cannotOpen(path: target, detail: "no_ledger") }
                throw LedgerError.notALedger(path: target, applicationID: 0)
            }
            version = Int(try db.execute("SELECT version FROM grokctl_schema").rows.first?.int(0) ?? 0)
        } catch let error as LedgerError {
            throw error
        } catch let error as PostgresError {
            throw PostgresLedger.ledgerError(error, target: target)
        } catch {
            throw .server(path: target, state: "", detail: ErrorDetail("server_said", ["\(error)"]))
        }
        if version > currentVersion { throw .newerSchema(path: target, found: version, supported: currentVersion) }
        return version
    }

    /// Brings the database to the newest version in one transaction; two stations starting
    /// on a new database at once migrate it once (the second waits on the migration lock).
    /// Refuses a database of a newer grokctl, and one that has tables but no version (not ours).
    /// `migrations` is this build's list; a test gives a prefix of it to make an older database.
    static func migrate(_ db: PostgresConnection, target: String, migrations: [String] = PostgresSchema.migrations) throws(LedgerError) {
        let currentVersion = firstVersion + migrations.count - 1
        do {
            try db.execute("BEGIN")
            do {
                try db.execute("SELECT pg_advisory_xact_lock($1)", [String(migrationLock)])
                let hasVersion = try db.execute("SELECT to_regclass('grokctl_schema') IS NOT NULL").rows.first?.bool(0) ?? false
                var version = 0
                if hasVersion {
                    version = Int(try db.execute("SELECT version FROM grokctl_schema").rows.first?.int(0) ?? 0)
                } else {
                    let tables = try db.execute("""
                        SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()
                        """).rows.first?.int(0) ?? 0
                    if tables > 0 { throw LedgerError.notALedger(path: target, applicationID: 0) }
                    try db.execute("CREATE TABLE grokctl_schema (version integer NOT NULL)")
                    try db.execute("INSERT INTO grokctl_schema VALUES (0)")
                }
                if version > currentVersion {
                    throw LedgerError.newerSchema(path: target, found: version, supported: currentVersion)
                }
                let applied = version == 0 ? 0 : version - firstVersion + 1
                for migration in migrations[applied...] { try db.executeScript(migration) }
                try db.execute("UPDATE grokctl_schema SET version = $1", [String(currentVersion)])
                try db.execute("COMMIT")
            } catch {
                _ = try? db.execute("ROLLBACK")
                throw error
            }
        } catch let error as LedgerError {
            throw error
        } catch let error as PostgresError {
            throw PostgresLedger.ledgerError(error, target: target)
        } catch {
            throw .server(path: target, state: "", detail: ErrorDetail("server_said", ["\(error)"]))
        }
    }
}
