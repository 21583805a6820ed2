import Foundation
import GrokBasics
import Synchronization

/// The provisioning ledger: one SQLite database file holding devices, runs, steps and smoke
/// tests (docs/ledger.md). Safe to share between tasks and threads: one connection guarded by a
/// `Mutex`; every write is one `BEGIN IMMEDIATE` transaction, so a process killed at any moment
/// leaves the last committed state. Several processes may open the same file (WAL journal);
/// a writer waits up to the busy timeout for another process's lock.
public final class Ledger: RunRecorder {
    /// The database file.
    public let path: String
    /// Opened with `readOnly`: nothing is ever written (``LedgerError/readOnly(path:detail:)``).
    public let isReadOnly: Bool
    /// The runs this open found left open by a process that no longer exists, and closed as
    /// ``RunOutcome/abandoned`` at the time their process was last seen alive.
    public let interruptedAtOpen: [RunRecord]
    /// The schema version of the file (older than ``schemaVersion`` only when opened read-only).
    let fileVersion: Int
    private let connection: Mutex<SQLiteConnection>
    /// Locks of the runs this ledger has open (nil when read-only).
    private let runLocks: RunLockFile?
    private let ownRuns = Mutex<Set<Int64>>([])

    /// The newest schema version this build reads and writes (`PRAGMA user_version`).
    public static var schemaVersion: Int { Schema.currentVersion }

    init(connection: sending SQLiteConnection, readOnly: Bool, fileVersion: Int, runLocks: RunLockFile?,
         interrupted: [RunRecord] = []) {
        path = connection.path
        isReadOnly = readOnly
        self.fileVersion = fileVersion
        self.runLocks = runLocks
        interruptedAtOpen = interrupted
        self.connection = Mutex(connection)
    }

    /// Opens the ledger at `path` after verifying it, creating its directory and the file if
    /// needed, and brings its schema up to date.
    ///
    /// Before anything is written: the file's header is read directly (a 0-byte file, a file
    /// that is not SQLite, another application's database are refused and left byte for byte
    /// as they were), then SQLite checks its identity (application id, schema version) and
    /// runs `PRAGMA quick_check`, and the `-wal` is scanned frame by frame for damage SQLite
    /// would silently skip. A ledger that fails is never written to.
    ///
    /// A new ledger is built aside and moved into place whole, so two processes creating one
    /// at once both end up with the same complete file. Writable opens then close the runs
    /// left open by dead processes (``interruptedAtOpen``).
    /// - Parameters:
    ///   - path: the database file, e.g. `~/.local/share/grokctl/ledger.sqlite`.
    ///   - busyTimeout: how long a write waits (on the wall clock) for another process's lock
    ///     before ``LedgerError/locked(path:waitedMilliseconds:)``.
    ///   - readOnly: open without writing anything (`ledger show`, `export`, `check`): the file
    ///     must exist, nothing is created, migrated or closed.
    ///   - heartbeatInterval: how often the runs this ledger has open record that their
    ///     process is alive (`runs.heartbeat_at`); nil for never (records still do).
    /// - Throws: ``LedgerError`` -- `empty`, `notSQLite`, `notALedger`, `corrupt`,
    ///   `newerSchema`, `cannotOpen`, `readOnly`, `locked`.
    public static func open(path: String, busyTimeout: Duration = .seconds(5), readOnly: Bool = false,
                            heartbeatInterval: Duration? = .seconds(10)) throws(LedgerError) -> Ledger {
        try open(path: path, busyTimeout: busyTimeout, readOnly: readOnly, heartbeatInterval: heartbeatInterval, sealer: nil)
    }

    /// ``open(path:busyTimeout:readOnly:heartbeatInterval:)``, with `sealer` called inside
    /// every write transaction after the file is verified and migrated (closing abandoned
    /// runs included), just before its commit, with the rows of its tables the transaction
    /// changed: a spool's seals (``Spool``).
    static func open(path: String, busyTimeout: Duration = .seconds(5), readOnly: Bool = false,
                     heartbeatInterval: Duration? = .seconds(10),
                     sealer: RowSealer?) throws(LedgerError) -> Ledger {
        guard !path.isEmpty else { throw .cannotOpen(path: path, detail: "empty_path") }
        let milliseconds = max(0, Self.milliseconds(busyTimeout))
        if readOnly {
            guard FileManager.default.fileExists(atPath: path) else {
                throw .cannotOpen(path: path, detail: "no_such_file")
            }
        } else {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw .cannotOpen(path: path, detail: "mkdir '\(directory.path)': \(SystemCodes.name(of: error))")
            }
            LedgerFiles.removeStaleTemporaries(of: path)
            try LedgerFiles.createIfMissing(path, busyTimeoutMilliseconds: milliseconds)
        }
        _ = try FileCheck.verifyHeader(path)
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: milliseconds, readOnly: readOnly)
        let version = try Schema.checkIdentity(connection)
        try Integrity.quickCheck(connection)
        if readOnly {
            try FileCheck.verifyWAL(path, attempts: 3)
            return Ledger(connection: connection, readOnly: true, fileVersion: version, runLocks: nil)
        }
        // Scanned holding the write lock: no other process appends to or restarts the WAL meanwhile.
        _ = try connection.transaction { (_) throws(LedgerError) in try FileCheck.verifyWAL(path) }
        try connection.setCheckpointOnClose(true)
        try connection.configureForWriting()
        try Schema.migrate(connection)
        try connection.execute("PRAGMA foreign_keys = ON")
        if let sealer { connection.installSealer(tables: sealer.tables, sealer.seal) }
        let locks = try RunLockFile(ledgerPath: path)
        let interrupted = try closeAbandonedRuns(connection, locks)
        let ledger = Ledger(connection: connection, readOnly: false, fileVersion: Schema.currentVersion, runLocks: locks,
                            interrupted: interrupted)
        if let heartbeatInterval { ledger.startHeartbeat(every: heartbeatInterval) }
        return ledger
    }

    /// What ``open(path:busyTimeout:readOnly:heartbeatInterval:sealer:)`` calls before each commit.
    struct RowSealer: Sendable {
        var tables: Set<String>
        var seal: @Sendable (SQLiteConnection, [RowChanges.Row]) throws(LedgerError) -> Void
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// Runs `body` with the connection, holding the lock for its whole duration.
    func withConnection<T: Sendable>(_ body: (SQLiteConnection) throws(LedgerError) -> T) throws(LedgerError) -> T {
        try connection.withLock { (db: inout sending SQLiteConnection) throws(LedgerError) -> T in
            try body(db)
        }
    }

    /// Runs `body` in one write transaction.
    func write<T: Sendable>(_ body: (SQLiteConnection) throws(LedgerError) -> T) throws(LedgerError) -> T {
        guard !isReadOnly else { throw .readOnly(path: path, detail: ErrorDetail("opened_read_only")) }
        return try withConnection { (db) throws(LedgerError) in try db.transaction(body) }
    }

    /// Runs `body` in one read transaction (one consistent snapshot).
    func read<T: Sendable>(_ body: (SQLiteConnection) throws(LedgerError) -> T) throws(LedgerError) -> T {
        try withConnection { (db) throws(LedgerError) in try db.readTransaction(body) }
    }

    // MARK: Runs left open, heartbeats

    /// Closes every open run whose process is gone (nobody holds its byte in `<ledger>-runs`)
    /// as `abandoned`, ending at the last time it was seen alive: its heartbeat (wall-clock
    /// times only; a step's own times may come from an emulated unit's faster sample clock),
    /// or its start. One transaction,
    /// holding the write lock, so a run being begun by another process (which locks its byte
    /// before it commits) is never mistaken for a dead one.
    private static func closeAbandonedRuns(_ connection: SQLiteConnection, _ locks: RunLockFile) throws(LedgerError) -> [RunRecord] {
        return try connection.transaction { (db) throws(LedgerError) -> [RunRecord] in
            let open = try db.query("SELECT id FROM runs WHERE ended_at IS NULL ORDER BY id") { $0.integer(0) ?? 0 }
            var closed: [RunRecord] = []
            for id in open where !locks.isHeldElsewhere(id) {
                try db.execute(
                    """
                    UPDATE runs SET outcome = 'abandoned', ended_at = max(started_at, coalesce(heartbeat_at, started_at))
                    WHERE id = ?1
                    """, [.integer(id)])
                closed += try db.rows("SELECT \(LedgerRows.runColumns(Schema.currentVersion)) FROM runs WHERE id = ?", [.integer(id)]) {
                    (row) throws(LedgerError) in try LedgerRows.run(row)
                }
            }
            return closed
        }
    }

    /// Records that this process is alive in every run it has open, now and then every `interval`.
    /// The thread holds the ledger weakly and ends at its first wake after the ledger is gone.
    private func startHeartbeat(every interval: Duration) {
        let seconds = max(0.001, Double(Self.milliseconds(interval)) / 1000)
        let thread = Thread { [weak self] in
            while true {
                Thread.sleep(forTimeInterval: seconds)
                guard let ledger = self else { return }
                ledger.beat(at: Date())
            }
        }
        thread.name = "grokledger heartbeat"
        thread.start()
    }

    /// Sets `heartbeat_at` of this ledger's open runs to `time` (never backwards). A failure
    /// is left for the next beat or record: a heartbeat never fails a run.
    func beat(at time: Date) {
        let runs = ownRuns.withLock { $0 }
        guard !runs.isEmpty else { return }
        let list = runs.sorted().map(String.init).joined(separator: ", ")
        try? write { (db) throws(LedgerError) in
            try db.execute("UPDATE runs SET heartbeat_at = max(coalesce(heartbeat_at, ''), ?) WHERE ended_at IS NULL AND id IN (\(list))",
                           [.text(LedgerTime.format(time))])
        }
    }

    /// Moves run `run`'s heartbeat to now, on the wall clock, if that is later (inside a
    /// record's transaction: recording is a sign of life).
    func touch(_ run: RunID, _ db: SQLiteConnection) throws(LedgerError) {
        try db.execute("UPDATE runs SET heartbeat_at = max(coalesce(heartbeat_at, ''), ?) WHERE id = ?",
                       [.text(LedgerTime.format(Date())), .integer(run.rawValue)])
    }

    // MARK: Recording

    public func beginRun(_ start: RunStart) throws(LedgerError) -> RunID {
        let digest = start.profileSHA256.lowercased()
        guard digest.utf8.count == 64, digest.utf8.allSatisfy({ isHexDigit($0) }) else {
            throw .invalidRecord(path: path, detail: ErrorDetail("bad_profile_sha256", [start.profileSHA256]))
        }
        if let key = start.key, key.isEmpty { throw .invalidRecord(path: path, detail: ErrorDetail("run_without_key")) }
        guard let runLocks else { throw .readOnly(path: path, detail: ErrorDetail("opened_read_only")) }
        var locked: Int64?
        do {
            let id = try write { (db) throws(LedgerError) in
                func taken(_ key: String) throws(LedgerError) -> Bool {
                    try db.queryInteger("SELECT count(*) FROM runs WHERE run_key = ?", [.text(key)]) != 0
                }
                // A key the caller gave (and printed) must be new; one made here is drawn again until it is.
                var key = start.key ?? RunKey.make(at: start.startedAt)
                if start.key != nil, try taken(key) { throw .duplicateRun(path: path, run: key) }
                while try taken(key) { key = RunKey.make(at: start.startedAt) }
                try db.execute(
                    """
                    INSERT INTO runs (kind, profile_name, profile_sha256, station, operator, started_at, heartbeat_at, run_key)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)
                    """,
                    [.text(start.kind.rawValue), .text(start.profileName), .text(digest), .text(start.station),
                     .text(start.operatorName), .text(LedgerTime.format(start.startedAt)), .text(key)])
                let id = db.lastInsertRowID
                // Locked before the row is committed: no other process can see the run without its lock.
                try runLocks.lock(id)
                locked = id
                return id
            }
            ownRuns.withLock { _ = $0.insert(id) }
            return RunID(rawValue: id)
        } catch {
            // Rolled back: the id may be handed out again, so its lock must go.
            if let locked { runLocks.unlock(locked) }
            throw error
        }
    }

    public func upsertDevice(_ sighting: DeviceSighting) throws(LedgerError) {
        guard !sighting.serial.isEmpty else { throw .invalidRecord(path: path, detail: ErrorDetail("device_without_serial")) }
        let provisioned: SQLValue = sighting.provisioned.map { .integer($0 ? 1 : 0) } ?? .null
        try write { (db) throws(LedgerError) in
            try db.execute(
                """
                INSERT INTO devices (serial, hardware_type, hardware_revision, antenna_type, first_seen, last_seen,
                                     firmware, region, provisioned)
                VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, coalesce(?8, 0))
                ON CONFLICT (serial) DO UPDATE SET
                    hardware_type = coalesce(?2, hardware_type),
                    hardware_revision = coalesce(?3, hardware_revision),
                    antenna_type = coalesce(?4, antenna_type),
                    first_seen = min(first_seen, ?5),
                    last_seen = max(last_seen, ?5),
                    firmware = coalesce(?6, firmware),
                    region = coalesce(?7, region),
                    provisioned = coalesce(?8, provisioned)
                """,
                [.text(sighting.serial), SQLValue(sighting.hardwareType), SQLValue(sighting.hardwareRevision),
                 SQLValue(sighting.antennaType), .text(LedgerTime.format(sighting.seenAt)), SQLValue(sighting.firmware),
                 SQLValue(sighting.region), provisioned])
        }
    }

    public func recordStep(_ step: StepRecord) throws(LedgerError) {
        guard !step.serial.isEmpty else { throw .invalidRecord(path: path, detail: ErrorDetail("step_without_serial", [step.step])) }
        guard !step.step.isEmpty else { throw .invalidRecord(path: path, detail: ErrorDetail("step_without_name", [step.serial])) }
        guard step.durationMilliseconds >= 0 else {
            throw .invalidRecord(path: path, detail: ErrorDetail("step_ends_before_start", [step.step, step.serial]))
        }
        try write { (db) throws(LedgerError) in
            try requireOpenRun(step.run, db)
            try touch(step.run, db)
            try db.execute(
                """
                INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result,
                                   firmware_before, firmware_after, region_before, region_after, code, detail, usb_path)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [.integer(step.run.rawValue), .text(step.serial), .text(step.step),
                 .text(LedgerTime.format(step.startedAt)), .text(LedgerTime.format(step.endedAt)),
                 .integer(step.durationMilliseconds), .text(step.result.rawValue),
                 SQLValue(step.firmwareBefore), SQLValue(step.firmwareAfter), SQLValue(step.regionBefore),
                 SQLValue(step.regionAfter), SQLValue(step.code), .text(step.detail), SQLValue(step.usbPath)])
            // The step's record is the outcome of this run's intent for it, in the same
            // transaction: done, or nothing was sent. A failed step leaves its intent open
            // (the change may or may not have been made; the next run asks the Grokker).
            if let outcome = IntentOutcome(closing: step.result) {
                try db.execute(
                    """
                    UPDATE intents SET outcome = ?1, resolved_at = ?2, resolved_by = ?3
                    WHERE run_id = ?3 AND serial = ?4 AND step = ?5 AND outcome IS NULL
                    """,
                    [.text(outcome.rawValue), .text(LedgerTime.format(step.endedAt)), .integer(step.run.rawValue),
                     .text(step.serial), .text(step.step)])
            }
        }
    }

    public func recordSmokeTest(_ test: SmokeTestRecord) throws(LedgerError) {
        guard !test.serial.isEmpty else { throw .invalidRecord(path: path, detail: ErrorDetail("smoke_test_without_serial")) }
        guard test.durationMilliseconds >= 0 else {
            throw .invalidRecord(path: path, detail: ErrorDetail("smoke_test_negative_duration", [test.serial]))
        }
        guard test.readsPerSecond.isFinite, test.readsPerSecond >= 0, test.minRSSI?.isFinite ?? true else {
            throw .invalidRecord(path: path, detail: ErrorDetail("smoke_test_bad_measurement", [test.serial]))
        }
        try write { (db) throws(LedgerError) in
            try requireOpenRun(test.run, db)
            try touch(test.run, db)
            try db.execute(
                """
                INSERT INTO smoke_tests (run_id, serial, after_step, started_at, duration_ms, expected_tags, found_tags,
                                         missing_tags, reads_per_second, min_rssi, passed)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [.integer(test.run.rawValue), .text(test.serial), .text(test.afterStep),
                 .text(LedgerTime.format(test.startedAt)), .integer(test.durationMilliseconds),
                 .text(JSONText.array(test.expectedTags)), .text(JSONText.array(test.foundTags)),
                 .text(JSONText.array(test.missingTags)), .real(test.readsPerSecond), SQLValue(test.minRSSI),
                 .integer(test.passed ? 1 : 0)])
        }
    }

    public func finishRun(_ run: RunID, outcome: RunOutcome, endedAt: Date, reportPath: String?) throws(LedgerError) {
        try write { (db) throws(LedgerError) in
            let started = try requireOpenRun(run, db)
            guard LedgerTime.milliseconds(endedAt) >= LedgerTime.milliseconds(started) else {
                throw .invalidRecord(path: path, detail: ErrorDetail("run_ends_before_start", [String(run.rawValue)]))
            }
            try db.execute("UPDATE runs SET ended_at = ?, outcome = ?, report_path = ? WHERE id = ?",
                           [.text(LedgerTime.format(endedAt)), .text(outcome.rawValue), SQLValue(reportPath),
                            .integer(run.rawValue)])
        }
        if ownRuns.withLock({ $0.remove(run.rawValue) }) != nil { runLocks?.unlock(run.rawValue) }
    }

    /// Points run `run` to its report file, once the file is written (the report is written
    /// after the run is closed, so this is the one change a finished run accepts).
    public func recordReport(_ run: RunID, path reportPath: String) throws(LedgerError) {
        try write { (db) throws(LedgerError) in
            guard try db.queryInteger("SELECT count(*) FROM runs WHERE id = ?", [.integer(run.rawValue)]) == 1 else {
                throw .unknownRun(path: path, run: run.rawValue)
            }
            try db.execute("UPDATE runs SET report_path = ? WHERE id = ?", [.text(reportPath), .integer(run.rawValue)])
        }
    }

    /// Throws unless `run` exists and has not ended; returns its start.
    @discardableResult
    func requireOpenRun(_ run: RunID, _ db: SQLiteConnection) throws(LedgerError) -> Date {
        let rows = try db.rows("SELECT started_at, ended_at FROM runs WHERE id = ?", [.integer(run.rawValue)]) {
            (row) throws(LedgerError) in (try row.date(0, "runs.started_at"), row.text(1))
        }
        guard let (started, ended) = rows.first else { throw .unknownRun(path: path, run: run.rawValue) }
        guard ended == nil else { throw .runFinished(path: path, run: run.rawValue) }
        return started
    }

    // MARK: Queries

    /// Every device, by serial.
    public func devices() throws(LedgerError) -> [DeviceRecord] {
        try read { (db) throws(LedgerError) in
            try db.rows("SELECT \(LedgerRows.deviceColumns) FROM devices ORDER BY serial") { (row) throws(LedgerError) in
                try LedgerRows.device(row)
            }
        }
    }

    /// The device with this serial, or nil.
    public func device(serial: String) throws(LedgerError) -> DeviceRecord? {
        try read { (db) throws(LedgerError) in
            try db.rows("SELECT \(LedgerRows.deviceColumns) FROM devices WHERE serial = ?", [.text(serial)]) {
                (row) throws(LedgerError) in try LedgerRows.device(row)
            }.first
        }
    }

    /// The newest runs first; all of them when `limit` is nil.
    public func runs(limit: Int? = nil) throws(LedgerError) -> [RunRecord] {
        try read { (db) throws(LedgerError) in
            try db.rows("SELECT \(LedgerRows.runColumns(fileVersion)) FROM runs ORDER BY id DESC LIMIT ?", [.integer(Int64(limit ?? -1))]) {
                (row) throws(LedgerError) in try LedgerRows.run(row)
            }
        }
    }

    /// The run with this key (``RunKey``, the identifier people see), or nil.
    public func run(key: String) throws(LedgerError) -> RunRecord? {
        let keyColumn = fileVersion >= 4 ? "run_key" : "(" + RunKey.legacySQL() + ")"
        return try read { (db) throws(LedgerError) in
            try db.rows("SELECT \(LedgerRows.runColumns(fileVersion)) FROM runs WHERE \(keyColumn) = ?", [.text(key)]) {
                (row) throws(LedgerError) in try LedgerRows.run(row)
            }.first
        }
    }

    /// The run with this identifier, or nil.
    public func run(_ id: RunID) throws(LedgerError) -> RunRecord? {
        try read { (db) throws(LedgerError) in
            try db.rows("SELECT \(LedgerRows.runColumns(fileVersion)) FROM runs WHERE id = ?", [.integer(id.rawValue)]) {
                (row) throws(LedgerError) in try LedgerRows.run(row)
            }.first
        }
    }

    /// Steps in the order they were recorded, of one run and/or one device (all when both are nil).
    public func steps(run: RunID? = nil, serial: String? = nil) throws(LedgerError) -> [StepRecord] {
        try read { (db) throws(LedgerError) in
            try db.rows(
                "SELECT \(LedgerRows.stepColumns(fileVersion)) FROM steps WHERE (?1 IS NULL OR run_id = ?1) AND (?2 IS NULL OR serial = ?2) ORDER BY id",
                [SQLValue(run?.rawValue), SQLValue(serial)]
            ) { (row) throws(LedgerError) in try LedgerRows.step(row) }
        }
    }

    /// Smoke tests in the order they were recorded, of one run and/or one device (all when both are nil).
    public func smokeTests(run: RunID? = nil, serial: String? = nil) throws(LedgerError) -> [SmokeTestRecord] {
        try read { (db) throws(LedgerError) in
            try db.rows(
                """
                SELECT \(LedgerRows.smokeTestColumns) FROM smoke_tests
                WHERE (?1 IS NULL OR run_id = ?1) AND (?2 IS NULL OR serial = ?2) ORDER BY id
                """,
                [SQLValue(run?.rawValue), SQLValue(serial)]
            ) { (row) throws(LedgerError) in try LedgerRows.smokeTest(row) }
        }
    }

    /// Everything that happened to one device, oldest first: its steps and smoke tests across
    /// all runs, ordered by start time, then run, then (at the same millisecond) steps before
    /// smoke tests, then the order they were recorded.
    public func history(serial: String) throws(LedgerError) -> [HistoryEntry] {
        try read { (db) throws(LedgerError) in
            let path = db.path
            var runs: [RunID: RunRecord] = [:]
            for run in try db.rows(
                """
                SELECT \(LedgerRows.runColumns(fileVersion)) FROM runs WHERE id IN
                    (SELECT run_id FROM steps WHERE serial = ?1 UNION SELECT run_id FROM smoke_tests WHERE serial = ?1)
                """, [.text(serial)], { (row) throws(LedgerError) in try LedgerRows.run(row) })
            {
                runs[run.id] = run
            }
            typealias Keyed = (at: String, run: Int64, kind: Int, id: Int64, event: HistoryEntry.Event)
            var events: [Keyed] = try db.rows("SELECT \(LedgerRows.stepColumns(fileVersion)), id FROM steps WHERE serial = ?", [.text(serial)]) {
                (row) throws(LedgerError) in
                let step = try LedgerRows.step(row)
                return (row.text(3) ?? "", step.run.rawValue, 0, try row.requiredInteger(LedgerRows.stepColumnCount, "steps.id"), .step(step))
            }
            events += try db.rows("SELECT \(LedgerRows.smokeTestColumns), id FROM smoke_tests WHERE serial = ?", [.text(serial)]) {
                (row) throws(LedgerError) in
                let test = try LedgerRows.smokeTest(row)
                return (row.text(3) ?? "", test.run.rawValue, 1, try row.requiredInteger(LedgerRows.smokeTestColumnCount, "smoke_tests.id"),
                        .smokeTest(test))
            }
            events.sort { ($0.at, $0.run, $0.kind, $0.id) < ($1.at, $1.run, $1.kind, $1.id) }
            return try events.map { (entry) throws(LedgerError) -> HistoryEntry in
                guard let run = runs[RunID(rawValue: entry.run)] else { throw .unknownRun(path: path, run: entry.run) }
                return HistoryEntry(run: run, event: entry.event)
            }
        }
    }

    public func completedSteps(serial: String, profileSHA256: String) throws(LedgerError) -> Set<String> {
        try read { (db) throws(LedgerError) in
            let rows = try db.query(
                """
                SELECT s.step, s.result FROM steps s JOIN runs r ON r.id = s.run_id
                WHERE s.serial = ? AND r.profile_sha256 = ? AND r.kind IN ('provision', 'rollout')
                ORDER BY s.id
                """,
                [.text(serial), .text(profileSHA256.lowercased())]
            ) { (row) in (row.text(0) ?? "", row.text(1) ?? "") }
            var latest: [String: String] = [:]
            for (step, result) in rows { latest[step] = result }
            return Set(latest.filter { $0.value == StepResult.done.rawValue || $0.value == StepResult.skipped.rawValue }.keys)
        }
    }
}

private func isHexDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
}
