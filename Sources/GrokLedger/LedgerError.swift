import GrokBasics

/// Everything that can go wrong with the provisioning ledger. Every case names the database
/// file (or, for an export, the output file) and its message says what to do next; `code`
/// is stable (`ledger_*`) for `--json` output and for the localized catalog
/// (`error.ledger.<code>`), and `arguments` are the values a translation fills in, in order.
public enum LedgerError: Error, Sendable, CodedError, Equatable {
    /// The database file (or its directory) could not be created or opened: a missing
    /// permission, a path that is a directory, an unusable file system.
    case cannotOpen(path: String, detail: String)
    /// Another connection (usually another grokctl process) held the write lock for longer
    /// than the busy timeout; `waitedMilliseconds` is how long this process really waited
    /// (measured on the wall clock, not the timeout it was given).
    case locked(path: String, waitedMilliseconds: Int)
    /// The ledger's pages or its write-ahead log (`-wal`) are damaged. It is never written to:
    /// `grokctl ledger check` says what is wrong and `grokctl ledger recover` salvages what is
    /// readable into a new file. `damage` says what, as a code and its values (shown through
    /// `ledger.damage.<code>` in the reader's language), never as English prose.
    case corrupt(path: String, damage: LedgerDamage)
    /// The file exists but is empty (0 bytes): grokctl never leaves a ledger empty (a new one
    /// is built aside and moved into place whole), so this file is someone else's; it is left
    /// untouched.
    case empty(path: String)
    /// The file does not start with the SQLite header: it is not a database at all.
    case notSQLite(path: String)
    /// The file is a SQLite database of another application (its `application_id` is not the ledger's).
    case notALedger(path: String, applicationID: Int32)
    /// The database was written by a newer grokctl: its schema version is above the newest
    /// this build knows, so it is refused rather than misread.
    case newerSchema(path: String, found: Int, supported: Int)
    /// The disk (or the database's page limit) is full; nothing of the failed write was kept.
    case diskFull(path: String)
    /// The file or its directory is read-only for this process.
    case readOnly(path: String, detail: ErrorDetail)
    /// A record was refused before or by the database: an empty serial, a step that ends
    /// before it starts, a malformed profile digest, a violated constraint.
    case invalidRecord(path: String, detail: ErrorDetail)
    /// A step, smoke test or finish names a run that the ledger does not hold.
    case unknownRun(path: String, run: Int64)
    /// A step, smoke test or finish names a run that has already finished.
    case runFinished(path: String, run: Int64)
    /// Writing an export file failed; the previous file at `path`, if any, is untouched.
    case exportFailed(path: String, detail: ErrorDetail)
    /// SQLite failed in a way not listed above (an I/O error, out of memory);
    /// `sqliteCode` is its extended result code.
    case sqlite(path: String, sqliteCode: Int32, detail: ErrorDetail)
    /// A run with this key (``RunKey``) is already recorded, and a key given for a new run
    /// must be new: nothing was recorded (the run is never merged into the other one).
    case duplicateRun(path: String, run: String)
    /// No run has this key (`grokctl ledger show RUN`).
    case noSuchRun(path: String, run: String)
    /// The shared ledger's PostgreSQL server refused a statement or went away (`path` is
    /// the connection string without its password; `state` the SQLSTATE, empty when the
    /// connection was lost).
    case server(path: String, state: String, detail: ErrorDetail)
    /// No rollout run made a stage of this rollout id (`grokctl fleet stage`).
    case noSuchStage(path: String, rollout: String)
    /// The stage's state does not allow the change (`change`: `pause`, `resume`, `advance`):
    /// a halted or paused stage is resumed before it is advanced.
    case stageNotChangeable(path: String, rollout: String, state: String, change: String)
    /// An advance must raise the stage's percentage (at most 100).
    case stageNotUpward(path: String, rollout: String, percentage: Double, requested: Double)
    /// `grokctl ledger sync` was given a ledger that is not a shared database: a spool is
    /// sent to a `postgresql://` ledger only.
    case syncNeedsShared(path: String)
    /// A spool was not sent (nothing of it): record `row` of `table` (of run `run`) is not
    /// as the station that wrote it sealed it (`problem`, `ledger.spool.<code>`: `unsealed`,
    /// `seal_mismatch`, `key_new`, `missing`); docs/ledger.md, "What a spool's seals protect".
    case spoolRefused(path: String, table: String, row: Int64, run: String, problem: ErrorDetail)
    /// The station's spool key cannot be used (`problem`, `ledger.spool_key.<code>`:
    /// `not_regular`, `not_owned`, `not_private`, `malformed`, `system_call`).
    case spoolKey(path: String, problem: ErrorDetail)

    /// The stable machine code of the case.
    public var code: String {
        switch self {
        case .cannotOpen: "ledger_cannot_open"
        case .locked: "ledger_locked"
        case .corrupt: "ledger_corrupt"
        case .empty: "ledger_empty"
        case .notSQLite: "ledger_not_sqlite"
        case .notALedger: "ledger_not_a_ledger"
        case .newerSchema: "ledger_newer_schema"
        case .diskFull: "ledger_disk_full"
        case .readOnly: "ledger_read_only"
        case .invalidRecord: "ledger_invalid_record"
        case .unknownRun: "ledger_unknown_run"
        case .runFinished: "ledger_run_finished"
        case .exportFailed: "ledger_export_failed"
        case .sqlite: "ledger_sqlite"
        case .duplicateRun: "ledger_duplicate_run"
        case .noSuchRun: "ledger_no_such_run"
        case .server: "ledger_server"
        case .noSuchStage: "ledger_no_such_stage"
        case .stageNotChangeable: "ledger_stage_not_changeable"
        case .stageNotUpward: "ledger_stage_not_upward"
        case .syncNeedsShared: "ledger_sync_not_shared"
        case .spoolRefused: "ledger_spool_refused"
        case .spoolKey: "ledger_spool_key"
        }
    }

    /// The values a localized message fills in, in the order of the associated values.
    public var arguments: [String] {
        switch self {
        case .cannotOpen(let p, let d): [p, d]
        case .locked(let p, let t): [p, String(t)]
        case .corrupt(let p, let d): [p, d.code] + d.arguments
        case .empty(let p): [p]
        case .notSQLite(let p): [p]
        case .notALedger(let p, let a): [p, String(a)]
        case .newerSchema(let p, let f, let s): [p, String(f), String(s)]
        case .diskFull(let p): [p]
        case .readOnly(let p, let d): [p] + d.flattened
        case .invalidRecord(let p, let d): [p] + d.flattened
        case .unknownRun(let p, let r): [p, String(r)]
        case .runFinished(let p, let r): [p, String(r)]
        case .exportFailed(let p, let d): [p] + d.flattened
        case .sqlite(let p, let c, let d): [p, String(c)] + d.flattened
        case .duplicateRun(let p, let r): [p, r]
        case .noSuchRun(let p, let r): [p, r]
        case .server(let p, let s, let d): [p, s] + d.flattened
        case .noSuchStage(let p, let r): [p, r]
        case .stageNotChangeable(let p, let r, let s, let c): [p, r, s, c]
        case .stageNotUpward(let p, let r, let c, let n): [p, r, NumberText.plain(c), NumberText.plain(n)]
        case .syncNeedsShared(let p): [p]
        case .spoolRefused(let p, let t, let r, let k, let d): [p, t, String(r), k] + d.flattened
        case .spoolKey(let p, let d): [p] + d.flattened
        }
    }

    /// The file the error is about: the database, or for ``exportFailed(path:detail:)`` the export.
    public var path: String {
        switch self {
        case .cannotOpen(let p, _), .locked(let p, _), .corrupt(let p, _), .empty(let p), .notSQLite(let p), .notALedger(let p, _),
            .newerSchema(let p, _, _), .diskFull(let p), .readOnly(let p, _), .invalidRecord(let p, _),
            .unknownRun(let p, _), .runFinished(let p, _), .exportFailed(let p, _), .sqlite(let p, _, _),
            .duplicateRun(let p, _), .noSuchRun(let p, _), .server(let p, _, _), .noSuchStage(let p, _),
            .stageNotChangeable(let p, _, _, _), .stageNotUpward(let p, _, _, _), .syncNeedsShared(let p),
            .spoolRefused(let p, _, _, _, _), .spoolKey(let p, _):
            p
        }
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }
}

/// What is damaged in a ledger (``LedgerError/corrupt(path:damage:)``), shown through
/// `ledger.damage.<code>`: `null_column`, `null_number`, `bad_time`, `unknown_value`,
/// `bad_json_array`, `orphan_rows`, `missing_tables`, `schema_damaged`, `short_file`,
/// `bad_header`, `partial_page`, `wal_header`, `wal_frame`, `check_failed`, `sqlite`, `bad_number`.
public typealias LedgerDamage = ErrorDetail

