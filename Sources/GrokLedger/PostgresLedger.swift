import GrokBasics
import Foundation
import GrokPostgres
import Synchronization

/// The ledger shared by many stations, in a PostgreSQL database (docs/ledger.md, "The
/// shared ledger"): the SQLite ledger's records, each also naming the station that wrote it.
///
/// Every call is one transaction. A write whose connection is lost (the server restarted,
/// the network dropped) is sent again on a new connection, for up to ``reconnectSeconds``
/// of wall-clock time; each record carries a client-made id (`record_id`, unique), so a
/// transaction that committed just before the connection went is not kept twice.
///
/// A run this ledger begins holds a session advisory lock (space ``runLockSpace``, key the
/// run's id) for as long as it is open: the next station to open the ledger closes a run
/// left open whose lock nobody holds as ``RunOutcome/abandoned`` (its process died), at its
/// last heartbeat. The lock is taken again after a reconnection.
public final class PostgresLedger: RunRecorder {
    /// The connection string without its password (what errors name).
    public let target: String
    /// The station whose records this ledger writes.
    public let station: String
    /// The runs this open found left open by a dead station process and closed as abandoned.
    public let abandonedAtOpen: [RunRecord]
    /// How long a write keeps trying to reach the server again before it fails.
    public let reconnectSeconds: Double

    static let runLockSpace: Int32 = 0x4752   // 'GR'
    private let conninfo: String
    private let connection: Mutex<PostgresConnection?>
    private let ownRuns = Mutex<Set<Int64>>([])
    /// Set by ``stopReconnecting()``: writes no longer wait for a lost server.
    private let givenUp = Mutex(false)

    private init(conninfo: String, target: String, station: String, connection: sending PostgresConnection,
                 reconnectSeconds: Double, abandoned: [RunRecord]) {
        self.conninfo = conninfo
        self.target = target
        self.station = station
        self.reconnectSeconds = reconnectSeconds
        self.connection = Mutex(connection)
        abandonedAtOpen = abandoned
    }

    /// Connects to the shared ledger at `conninfo` (`postgresql://...` or libpq's
    /// `key=value` form), creates or migrates its schema, and closes the runs of stations
    /// that died with a run open.
    /// - Throws: ``LedgerError/cannotOpen(path:detail:)`` when the server cannot be reached,
    ///   ``LedgerError/notALedger(path:applicationID:)`` for a database with other tables,
    ///   ``LedgerError/newerSchema(path:found:supported:)``, ``LedgerError/server(path:state:detail:)``.
    /// - Parameter readOnly: for the commands that only read (`ledger show`, `export`, `check`,
    ///   `fleet status`, `fleet report`): nothing is created, migrated or closed, and a database
    ///   that holds no ledger is refused (``LedgerError/notALedger(path:applicationID:)``).
    ///
    /// A server restarting (not answering, or rejecting connections while it starts, or the
    /// session cut while the schema is checked) is not an outage: the whole open is tried
    /// again every 0.2 s for up to `startupGraceSeconds` (at most `reconnectSeconds`) before
    /// the failure is thrown, so a station that starts during a restart goes ahead instead of
    /// counting as offline. A server that accepts connections but refused this one (no such
    /// database, a wrong password) fails at once.
    public static func open(_ conninfo: String, station: String, reconnectSeconds: Double = 30,
                            startupGraceSeconds: Double = 5, readOnly: Bool = false) throws(LedgerError) -> PostgresLedger {
        guard !station.isEmpty else { throw .invalidRecord(path: conninfo, detail: ErrorDetail("station_name_missing")) }
        let deadline = ContinuousClock.now + .milliseconds(Int(1000 * max(0, min(reconnectSeconds, startupGraceSeconds))))
        while true {
            let db: PostgresConnection
            do throws(PostgresError) {
                db = try PostgresConnection(conninfo, applicationName: "grokctl " + station)
            } catch {
                let reason = connectFailure(state: PostgresConnection.ping(conninfo, connectTimeoutSeconds: 2),
                                            message: error.arguments.last ?? error.description)
                if ConnectFailure.transient.contains(reason.code), ContinuousClock.now < deadline {
                    usleep(200_000)
                    continue
                }
                throw .cannotOpen(path: PostgresConnection.redacted(conninfo), detail: reason.text)
            }
            do throws(LedgerError) {
                return try finishOpen(db, conninfo: conninfo, station: station, reconnectSeconds: reconnectSeconds, readOnly: readOnly)
            } catch {
                guard retryable(error), ContinuousClock.now < deadline else { throw error }
                usleep(200_000)
            }
        }
    }

    /// Why a connection could not be made, as a stable code (`ledger.open.<code>` in the
    /// catalogs) rather than libpq's or the server's English: from what the server answers
    /// to a ping and, for a server that accepts connections but refused this one, the few
    /// refusals a station meets (English servers' wording; another language's is kept as
    /// it came, the only text a station has then).
    enum ConnectFailure {
        /// The codes worth waiting out: a server restarting or full for a moment.
        static let transient: Set<String> = ["server_not_answering", "server_rejecting", "server_busy"]
    }

    static func connectFailure(state: PostgresConnection.ServerState, message: String) -> (code: String, text: String) {
        func coded(_ code: String) -> (code: String, text: String) { (code, code) }
        switch state {
        case .noResponse: return coded("server_not_answering")
        case .rejecting: return coded("server_rejecting")
        case .badParameters: return coded("bad_connection_string")
        case .accepting:
            let lower = message.lowercased()
            // The ping came just after the server finished starting; the refusal is what counts.
            if lower.contains("starting up") || lower.contains("shutting down") || lower.contains("recovery mode")
                || lower.contains("not yet accepting connections") { return coded("server_rejecting") }
            if lower.contains("too many clients") || lower.contains("remaining connection slots") { return coded("server_busy") }
            if lower.contains("database") && lower.contains("does not exist") { return coded("database_missing") }
            if lower.contains("role") && lower.contains("does not exist") { return coded("role_missing") }
            if lower.contains("authentication failed") || lower.contains("no password supplied") { return coded("authentication_failed") }
            if lower.contains("pg_hba.conf") { return coded("not_permitted") }
            return ("server_refused", message)
        }
    }

    private static func finishOpen(_ db: sending PostgresConnection, conninfo: String, station: String, reconnectSeconds: Double,
                                   readOnly: Bool) throws(LedgerError) -> PostgresLedger {
        let target = db.target
        if readOnly {
            _ = try PostgresSchema.version(db, target: target)
            return PostgresLedger(conninfo: conninfo, target: target, station: station, connection: db,
                                  reconnectSeconds: reconnectSeconds, abandoned: [])
        }
        try PostgresSchema.migrate(db, target: target)
        let abandoned = try closeAbandonedRuns(db, target: target)
        return PostgresLedger(conninfo: conninfo, target: target, station: station, connection: db,
                              reconnectSeconds: reconnectSeconds, abandoned: abandoned)
    }

    /// Ends the connection (and with it this process's run locks).
    public func close() {
        connection.withLock { $0?.close(); $0 = nil }
    }

    // MARK: Recording

    public func beginRun(_ start: RunStart) throws(LedgerError) -> RunID {
        let digest = start.profileSHA256.lowercased()
        guard digest.utf8.count == 64, digest.allSatisfy(\.isHexDigit) else {
            throw .invalidRecord(path: target, detail: ErrorDetail("bad_profile_sha256", [start.profileSHA256]))
        }
        let given = start.key
        if let given, given.isEmpty { throw .invalidRecord(path: target, detail: ErrorDetail("run_without_key")) }
        var key = given ?? RunKey.make(at: start.startedAt)
        let id = try write { (db) throws(LedgerError) -> Int64 in
            // A retry of this very insert finds its own row (same key, same station and start).
            if let row = try Self.query(db, target, "SELECT id, station, started_at FROM runs WHERE run_key = $1", [key]).first {
                if row.text(1) == station, row.text(2) == LedgerTime.format(start.startedAt) {
                    let id = try Self.int(row, 0, target)
                    try Self.holdRunLock(db, id, target)
                    return id
                }
                if given != nil { throw .duplicateRun(path: target, run: key) }
                key = RunKey.make(at: start.startedAt)
            }
            let time = LedgerTime.format(start.startedAt)
            let rows = try Self.query(db, target, """
                INSERT INTO runs (run_key, kind, profile_name, profile_sha256, station, operator, started_at, heartbeat_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id
                """, [key, start.kind.rawValue, start.profileName, digest, start.station, start.operatorName, time])
            let id = try Self.int(rows[0], 0, target)
            // Taken before the insert commits: another station's open never sees this run
            // open without its lock held, and so never closes it as abandoned.
            try Self.holdRunLock(db, id, target)
            return id
        }
        ownRuns.withLock { _ = $0.insert(id) }
        return RunID(rawValue: id)
    }

    public func upsertDevice(_ sighting: DeviceSighting) throws(LedgerError) {
        guard !sighting.serial.isEmpty else { throw .invalidRecord(path: target, detail: ErrorDetail("device_without_serial")) }
        try write { (db) throws(LedgerError) in
            try Self.query(db, target, """
                INSERT INTO devices (serial, hardware_type, hardware_revision, antenna_type, first_seen, last_seen,
                                     firmware, region, provisioned, last_station)
                VALUES ($1, $2, $3, $4, $5, $5, $6, $7, coalesce($8::boolean, false), $9)
                ON CONFLICT (serial) DO UPDATE SET
                    hardware_type = coalesce($2, devices.hardware_type),
                    hardware_revision = coalesce($3, devices.hardware_revision),
                    antenna_type = coalesce($4, devices.antenna_type),
                    first_seen = least(devices.first_seen, $5),
                    last_seen = greatest(devices.last_seen, $5),
                    firmware = coalesce($6, devices.firmware),
                    region = coalesce($7, devices.region),
                    provisioned = coalesce($8::boolean, devices.provisioned),
                    last_station = $9
                """,
                [sighting.serial, sighting.hardwareType, sighting.hardwareRevision, sighting.antennaType,
                 LedgerTime.format(sighting.seenAt), sighting.firmware, sighting.region,
                 sighting.provisioned.map { $0 ? "true" : "false" }, station])
        }
    }

    public func recordStep(_ step: StepRecord) throws(LedgerError) {
        guard !step.serial.isEmpty, !step.step.isEmpty else {
            throw .invalidRecord(path: target, detail: ErrorDetail("step_without_serial_or_name"))
        }
        guard step.durationMilliseconds >= 0 else {
            throw .invalidRecord(path: target, detail: ErrorDetail("step_ends_before_start", [step.step, step.serial]))
        }
        let recordID = UUID().uuidString
        try write { (db) throws(LedgerError) in
            try requireOpenRun(step.run, db)
            let inserted = try Self.query(db, target, """
                INSERT INTO steps (record_id, run_id, station, serial, step, started_at, ended_at, duration_ms, result,
                                   firmware_before, firmware_after, region_before, region_after, code, detail, usb_path)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
                ON CONFLICT (record_id) DO NOTHING RETURNING id
                """,
                [recordID, String(step.run.rawValue), station, step.serial, step.step, LedgerTime.format(step.startedAt),
                 LedgerTime.format(step.endedAt), String(step.durationMilliseconds), step.result.rawValue,
                 step.firmwareBefore, step.firmwareAfter, step.regionBefore, step.regionAfter, step.code, step.detail, step.usbPath])
            guard !inserted.isEmpty else { return }   // a retry of a write that committed
            try touch(step.run, db)
            if let outcome = IntentOutcome(closing: step.result) {
                try Self.query(db, target, """
                    UPDATE intents SET outcome = $1, resolved_at = $2, resolved_by = $3
                    WHERE run_id = $3 AND serial = $4 AND step = $5 AND outcome IS NULL
                    """, [outcome.rawValue, LedgerTime.format(step.endedAt), String(step.run.rawValue), step.serial, step.step])
            }
        }
    }

    public func recordSmokeTest(_ test: SmokeTestRecord) throws(LedgerError) {
        guard !test.serial.isEmpty else { throw .invalidRecord(path: target, detail: ErrorDetail("smoke_test_without_serial")) }
        guard test.durationMilliseconds >= 0, test.readsPerSecond.isFinite, test.readsPerSecond >= 0, test.minRSSI?.isFinite ?? true else {
            throw .invalidRecord(path: target, detail: ErrorDetail("smoke_test_bad_measurement", [test.serial]))
        }
        let recordID = UUID().uuidString
        try write { (db) throws(LedgerError) in
            try requireOpenRun(test.run, db)
            let inserted = try Self.query(db, target, """
                INSERT INTO smoke_tests (record_id, run_id, station, serial, after_step, started_at, duration_ms, expected_tags,
                                         found_tags, missing_tags, reads_per_second, min_rssi, passed)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
                ON CONFLICT (record_id) DO NOTHING RETURNING id
                """,
                [recordID, String(test.run.rawValue), station, test.serial, test.afterStep, LedgerTime.format(test.startedAt),
                 String(test.durationMilliseconds), JSONText.array(test.expectedTags), JSONText.array(test.foundTags),
                 JSONText.array(test.missingTags), "\(test.readsPerSecond)", test.minRSSI.map { "\($0)" }, test.passed ? "true" : "false"])
            if !inserted.isEmpty { try touch(test.run, db) }
        }
    }

    public func finishRun(_ run: RunID, outcome: RunOutcome, endedAt: Date, reportPath: String?) throws(LedgerError) {
        try write { (db) throws(LedgerError) in
            let rows = try Self.query(db, target, "SELECT started_at, ended_at, outcome FROM runs WHERE id = $1", [String(run.rawValue)])
            guard let row = rows.first else { throw .unknownRun(path: target, run: run.rawValue) }
            if row.text(1) != nil {
                // A retry of this very close is done already; anything else is a second close.
                guard row.text(2) == outcome.rawValue else { throw .runFinished(path: target, run: run.rawValue) }
                return
            }
            guard let started = row.text(0).flatMap(LedgerTime.parse),
                  LedgerTime.milliseconds(endedAt) >= LedgerTime.milliseconds(started) else {
                throw .invalidRecord(path: target, detail: ErrorDetail("run_ends_before_start", [String(run.rawValue)]))
            }
            try Self.query(db, target, "UPDATE runs SET ended_at = $1, outcome = $2, report_path = $3 WHERE id = $4",
                           [LedgerTime.format(endedAt), outcome.rawValue, reportPath, String(run.rawValue)])
            try Self.query(db, target, "DELETE FROM device_locks WHERE run_id = $1", [String(run.rawValue)])
        }
        if ownRuns.withLock({ $0.remove(run.rawValue) }) != nil {
            try? withConnection { (db) throws(LedgerError) in
                _ = try Self.run(target) { () throws(PostgresError) in try db.unlock(space: Self.runLockSpace, key: Int32(truncatingIfNeeded: run.rawValue)) }
            }
        }
    }

    /// Points a run to its report once the file is written.
    public func recordReport(_ run: RunID, path reportPath: String) throws(LedgerError) {
        try write { (db) throws(LedgerError) in
            let updated = try Self.query(db, target, "UPDATE runs SET report_path = $1 WHERE id = $2 RETURNING id",
                                         [reportPath, String(run.rawValue)])
            if updated.isEmpty { throw .unknownRun(path: target, run: run.rawValue) }
        }
    }

    /// Records that this station's process is alive for its open runs.
    public func heartbeat() throws(LedgerError) {
        let runs = ownRuns.withLock { Array($0) }
        guard !runs.isEmpty else { return }
        try write { (db) throws(LedgerError) in
            for run in runs { try touch(RunID(rawValue: run), db) }
        }
    }

    // MARK: Fleet-wide device locks

    /// Who holds a Grokker now, when another station's run does.
    public struct DeviceHolder: Sendable, Equatable {
        public var station: String
        public var runKey: String
        public var since: Date
    }

    /// Takes the fleet-wide lock on `serial` for `run` (open, this station's), for
    /// `leaseSeconds`. Returns nil when taken, or the holder when another live run holds it.
    /// A lock whose run has ended, whose station's process died (its run lock is free) or
    /// whose lease expired is taken over.
    public func lockDevice(_ serial: String, run: RunID, leaseSeconds: Double = 3600, now: Date = Date()) throws(LedgerError) -> DeviceHolder? {
        try write { (db) throws(LedgerError) -> DeviceHolder? in
            try requireOpenRun(run, db)
            let lease = [serial, station, String(run.rawValue), LedgerTime.format(now), LedgerTime.format(now.addingTimeInterval(leaseSeconds))]
            // A serial nobody holds: the insert takes it. Of two stations taking the same new
            // serial at once, the second's insert waits for the first's commit and then finds
            // the row (DO NOTHING), and judges the holder below like any other: an
            // unconditional upsert here gave both of them the lock.
            let inserted = try Self.query(db, target, """
                INSERT INTO device_locks (serial, station, run_id, taken_at, expires_at) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (serial) DO NOTHING RETURNING serial
                """, lease)
            if !inserted.isEmpty { return nil }
            let rows = try Self.query(db, target, """
                SELECT l.station, l.run_id, l.taken_at, l.expires_at, r.run_key, r.ended_at
                FROM device_locks l JOIN runs r ON r.id = l.run_id WHERE l.serial = $1 FOR UPDATE OF l
                """, [serial])
            if let row = rows.first {
                let holderRun = try Self.int(row, 1, target)
                let expired = (row.text(3).flatMap(LedgerTime.parse) ?? .distantPast) <= now
                let ended = row.text(5) != nil
                var alive = !expired && !ended
                if alive, holderRun != run.rawValue, !ownRuns.withLock({ $0.contains(holderRun) }) {
                    // Free run lock: the holder's process is gone.
                    let free = try Self.run(target) { () throws(PostgresError) in
                        try db.tryLock(space: Self.runLockSpace, key: Int32(truncatingIfNeeded: holderRun))
                    }
                    if free {
                        _ = try Self.run(target) { () throws(PostgresError) in
                            try db.unlock(space: Self.runLockSpace, key: Int32(truncatingIfNeeded: holderRun))
                        }
                        alive = false
                    }
                }
                if alive, holderRun != run.rawValue {
                    return DeviceHolder(station: row.text(0) ?? "", runKey: row.text(4) ?? "",
                                        since: row.text(2).flatMap(LedgerTime.parse) ?? now)
                }
            }
            // The row is locked (FOR UPDATE): ours again, or taken over from a holder that is gone.
            let updated = try Self.query(db, target, """
                UPDATE device_locks SET station = $2, run_id = $3, taken_at = $4, expires_at = $5 WHERE serial = $1 RETURNING serial
                """, lease)
            // The holder let go between the insert and the read (its run ended): the whole
            // transaction again, as after a serialization failure.
            if updated.isEmpty { throw .server(path: target, state: "40001", detail: ErrorDetail("lock_changed_hands", [serial])) }
            return nil
        }
    }

    /// Releases the lock on `serial` if `run` holds it.
    public func unlockDevice(_ serial: String, run: RunID) throws(LedgerError) {
        try write { (db) throws(LedgerError) in
            try Self.query(db, target, "DELETE FROM device_locks WHERE serial = $1 AND run_id = $2", [serial, String(run.rawValue)])
        }
    }

    /// The fleet-wide device locks held now (serial, station, run key).
    public func deviceLocks() throws(LedgerError) -> [(serial: String, station: String, runKey: String)] {
        try read { (db) throws(LedgerError) in
            try Self.query(db, target, "SELECT l.serial, l.station, r.run_key FROM device_locks l JOIN runs r ON r.id = l.run_id ORDER BY l.serial")
                .map { ($0.text(0) ?? "", $0.text(1) ?? "", $0.text(2) ?? "") }
        }
    }

    // MARK: Intents

    @discardableResult
    public func recordIntent(run: RunID, serial: String, step: String, target change: String, at time: Date) throws(LedgerError) -> Int64 {
        guard !serial.isEmpty, !step.isEmpty else { throw .invalidRecord(path: target, detail: ErrorDetail("intent_without_serial_or_step")) }
        let recordID = UUID().uuidString
        return try write { (db) throws(LedgerError) -> Int64 in
            try requireOpenRun(run, db)
            if let existing = try Self.query(db, target, "SELECT id FROM intents WHERE record_id = $1", [recordID]).first {
                return try Self.int(existing, 0, target)
            }
            try touch(run, db)
            let rows = try Self.query(db, target, """
                INSERT INTO intents (record_id, run_id, station, serial, step, target, recorded_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
                """, [recordID, String(run.rawValue), station, serial, step, change, LedgerTime.format(time)])
            return try Self.int(rows[0], 0, target)
        }
    }

    public func intents(serial: String? = nil, openOnly: Bool = false) throws(LedgerError) -> [IntentRecord] {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, """
                SELECT \(LedgerRows.intentColumns) FROM intents
                WHERE ($1::text IS NULL OR serial = $1) AND (NOT $2::boolean OR outcome IS NULL) ORDER BY id
                """, [serial, openOnly ? "true" : "false"]) { (row) throws(LedgerError) -> IntentRecord in try LedgerRows.intent(row) }
        }
    }

    /// Resolves an open intent (found by a later run): `done` records the step for the run
    /// that made the change, in the same transaction. Whether it was still open.
    @discardableResult
    public func resolveIntent(_ id: Int64, outcome: IntentOutcome, by resolver: RunID, step: StepRecord?, at time: Date) throws(LedgerError) -> Bool {
        try write { (db) throws(LedgerError) -> Bool in
            try requireOpenRun(resolver, db)
            let open = try Self.query(db, target, """
                SELECT run_id, serial, step, station FROM intents WHERE id = $1 AND outcome IS NULL FOR UPDATE
                """, [String(id)])
            guard let row = open.first else { return false }
            if outcome == .done, let step {
                try Self.query(db, target, """
                    INSERT INTO steps (run_id, station, serial, step, started_at, ended_at, duration_ms, result,
                                       firmware_before, firmware_after, region_before, region_after, code, detail, usb_path)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, 'done', $8, $9, $10, $11, $12, $13, $14)
                    """,
                    [row.text(0), row.text(3), row.text(1), row.text(2), LedgerTime.format(step.startedAt),
                     LedgerTime.format(step.endedAt), String(step.durationMilliseconds), step.firmwareBefore, step.firmwareAfter,
                     step.regionBefore, step.regionAfter, step.code, step.detail, step.usbPath])
            }
            try Self.query(db, target, "UPDATE intents SET outcome = $1, resolved_at = $2, resolved_by = $3 WHERE id = $4",
                           [outcome.rawValue, LedgerTime.format(time), String(resolver.rawValue), String(id)])
            try touch(resolver, db)
            return true
        }
    }

    // MARK: Queries

    public func devices() throws(LedgerError) -> [DeviceRecord] {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, "SELECT \(LedgerRows.deviceColumns) FROM devices ORDER BY serial") {
                (row) throws(LedgerError) in try LedgerRows.device(row)
            }
        }
    }

    public func device(serial: String) throws(LedgerError) -> DeviceRecord? {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, "SELECT \(LedgerRows.deviceColumns) FROM devices WHERE serial = $1", [serial]) {
                (row) throws(LedgerError) in try LedgerRows.device(row)
            }.first
        }
    }

    /// The newest runs first, of every station.
    public func runs(limit: Int? = nil) throws(LedgerError) -> [RunRecord] {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, "SELECT \(Self.runColumns) FROM runs ORDER BY id DESC LIMIT $1", [limit.map(String.init)]) {
                (row) throws(LedgerError) in try LedgerRows.run(row)
            }
        }
    }

    public func run(key: String) throws(LedgerError) -> RunRecord? {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, "SELECT \(Self.runColumns) FROM runs WHERE run_key = $1", [key]) {
                (row) throws(LedgerError) in try LedgerRows.run(row)
            }.first
        }
    }

    public func run(_ id: RunID) throws(LedgerError) -> RunRecord? {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, "SELECT \(Self.runColumns) FROM runs WHERE id = $1", [String(id.rawValue)]) {
                (row) throws(LedgerError) in try LedgerRows.run(row)
            }.first
        }
    }

    /// Steps in the order they were recorded, of one run and/or one device.
    public func steps(run: RunID? = nil, serial: String? = nil) throws(LedgerError) -> [StepRecord] {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, """
                SELECT \(LedgerRows.stepColumns) FROM steps WHERE ($1::bigint IS NULL OR run_id = $1) AND ($2::text IS NULL OR serial = $2) ORDER BY id
                """, [run.map { String($0.rawValue) }, serial]) { (row) throws(LedgerError) in try LedgerRows.step(row) }
        }
    }

    /// The station that recorded each step of `run`, in record order (for tests and reports).
    public func stepStations(run: RunID) throws(LedgerError) -> [String] {
        try read { (db) throws(LedgerError) in
            try Self.query(db, target, "SELECT station FROM steps WHERE run_id = $1 ORDER BY id", [String(run.rawValue)]).map { $0.text(0) ?? "" }
        }
    }

    public func smokeTests(run: RunID? = nil, serial: String? = nil) throws(LedgerError) -> [SmokeTestRecord] {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, """
                SELECT \(LedgerRows.smokeTestColumns) FROM smoke_tests
                WHERE ($1::bigint IS NULL OR run_id = $1) AND ($2::text IS NULL OR serial = $2) ORDER BY id
                """, [run.map { String($0.rawValue) }, serial]) { (row) throws(LedgerError) in try LedgerRows.smokeTest(row) }
        }
    }

    public func completedSteps(serial: String, profileSHA256: String) throws(LedgerError) -> Set<String> {
        try read { (db) throws(LedgerError) in
            let rows = try Self.query(db, target, """
                SELECT DISTINCT ON (s.step) s.step, s.result FROM steps s JOIN runs r ON r.id = s.run_id
                WHERE s.serial = $1 AND r.profile_sha256 = $2 AND r.kind IN ('provision', 'rollout')
                ORDER BY s.step, s.id DESC
                """, [serial, profileSHA256.lowercased()])
            return Set(rows.filter { $0.text(1) == StepResult.done.rawValue || $0.text(1) == StepResult.skipped.rawValue }.compactMap { $0.text(0) })
        }
    }

    // MARK: Transactions and reconnection

    /// Ends the waiting for a lost server: from now on a write (one waiting now included, at
    /// its next try) fails at once on a lost connection instead of trying again for up to
    /// ``reconnectSeconds``. ``SpoolFailover`` calls it once the station has gone over to its
    /// spool, so every worker follows that one decision without waiting out its own window.
    public func stopReconnecting() {
        givenUp.withLock { $0 = true }
    }

    /// Runs `body` in one transaction, again on a new connection while the server cannot be
    /// reached (up to ``reconnectSeconds``, unless ``stopReconnecting()`` was called), or
    /// after a serialization failure.
    func write<T: Sendable>(_ body: (PostgresConnection) throws(LedgerError) -> T) throws(LedgerError) -> T {
        let deadline = ContinuousClock.now.advanced(by: .seconds(reconnectSeconds))
        var pause: Duration = .milliseconds(50)
        while true {
            do throws(LedgerError) {
                return try withConnection { (db) throws(LedgerError) -> T in
                    try Self.run(target) { () throws(PostgresError) in try db.execute("BEGIN") }
                    do throws(LedgerError) {
                        let value = try body(db)
                        try Self.run(target) { () throws(PostgresError) in try db.execute("COMMIT") }
                        return value
                    } catch {
                        if db.isOpen { _ = try? db.execute("ROLLBACK") }
                        throw error
                    }
                }
            } catch {
                guard Self.retryable(error), ContinuousClock.now < deadline, !givenUp.withLock({ $0 }) else { throw error }
                connection.withLock { db in if db?.isOpen != true { db?.close(); db = nil } }
                let ms = pause.components.seconds * 1000 + pause.components.attoseconds / 1_000_000_000_000_000
                usleep(UInt32(clamping: ms * 1000))
                pause = min(pause * 2, .seconds(1))
            }
        }
    }

    func read<T: Sendable>(_ body: (PostgresConnection) throws(LedgerError) -> T) throws(LedgerError) -> T {
        try write(body)
    }

    /// Runs `body` on the connection, opening a new one (and taking this station's run locks
    /// again) when the last one was lost.
    private func withConnection<T: Sendable>(_ body: (PostgresConnection) throws(LedgerError) -> T) throws(LedgerError) -> T {
        let runs = ownRuns.withLock { $0 }
        return try connection.withLock { (db: inout sending PostgresConnection?) throws(LedgerError) -> T in
            if db == nil || db?.isOpen == false {
                db?.close()
                let fresh: PostgresConnection
                do throws(PostgresError) { fresh = try PostgresConnection(conninfo, applicationName: "grokctl " + station) } catch {
                    throw .server(path: target, state: "08001", detail: ErrorDetail("server_said", [error.arguments.last ?? error.description]))
                }
                for run in runs {
                    _ = try Self.run(target) { () throws(PostgresError) in try fresh.tryLock(space: Self.runLockSpace, key: Int32(truncatingIfNeeded: run)) }
                }
                db = fresh
            }
            return try body(db!)
        }
    }

    private static func retryable(_ error: LedgerError) -> Bool {
        guard case .server(_, let state, _) = error else { return false }
        return state.isEmpty || state.hasPrefix("08") || state == "40001" || state == "40P01" || state == "57P01" || state == "57P03"
    }

    static func ledgerError(_ error: PostgresError, target: String) -> LedgerError {
        switch error {
        case .statementFailed(let state, let detail): .server(path: target, state: state, detail: ErrorDetail("server_said", [detail]))
        // SQLSTATE class 08, connection exceptions: 08006 connection failure, 08001 unable to connect.
        case .connectionLost(let detail): .server(path: target, state: "08006", detail: ErrorDetail("server_said", [detail]))
        case .connectFailed(_, let detail): .server(path: target, state: "08001", detail: ErrorDetail("server_said", [detail]))
        case .badValue, .closed: .server(path: target, state: "", detail: ErrorDetail("server_said", [error.description]))
        }
    }

    static func run<T>(_ target: String, _ body: () throws(PostgresError) -> T) throws(LedgerError) -> T {
        do { return try body() } catch { throw ledgerError(error, target: target) }
    }

    @discardableResult
    static func query(_ db: PostgresConnection, _ target: String, _ sql: String, _ parameters: [String?] = []) throws(LedgerError) -> [PostgresRow] {
        try run(target) { () throws(PostgresError) in try db.execute(sql, parameters).rows }
    }

    private func requireOpenRun(_ run: RunID, _ db: PostgresConnection) throws(LedgerError) {
        let rows = try Self.query(db, target, "SELECT ended_at FROM runs WHERE id = $1", [String(run.rawValue)])
        guard let row = rows.first else { throw .unknownRun(path: target, run: run.rawValue) }
        guard row.text(0) == nil else { throw .runFinished(path: target, run: run.rawValue) }
    }

    private func touch(_ run: RunID, _ db: PostgresConnection) throws(LedgerError) {
        try Self.query(db, target, "UPDATE runs SET heartbeat_at = $1 WHERE id = $2", [LedgerTime.format(Date()), String(run.rawValue)])
    }

    /// Closes the open runs whose station process is gone (nobody holds their run lock) as
    /// abandoned, at their last heartbeat.
    /// The session lock held for as long as run `id` is open: the sign that its station
    /// still works on it (a session lock outlives the transaction it is taken in).
    static func holdRunLock(_ db: PostgresConnection, _ id: Int64, _ target: String) throws(LedgerError) {
        _ = try run(target) { () throws(PostgresError) in try db.tryLock(space: runLockSpace, key: Int32(truncatingIfNeeded: id)) }
    }

    static func closeAbandonedRuns(_ db: PostgresConnection, target: String) throws(LedgerError) -> [RunRecord] {
        let open = try rows(db, target, "SELECT \(runColumns) FROM runs WHERE ended_at IS NULL ORDER BY id") { (row) throws(LedgerError) in try LedgerRows.run(row) }
        var closed: [RunRecord] = []
        for var record in open {
            let key = Int32(truncatingIfNeeded: record.id.rawValue)
            guard try run(target, { () throws(PostgresError) in try db.tryLock(space: runLockSpace, key: key) }) else { continue }
            defer { _ = try? db.unlock(space: runLockSpace, key: key) }
            let end = record.lastSeenAt ?? record.startedAt
            let updated = try query(db, target, """
                UPDATE runs SET ended_at = $1, outcome = 'abandoned' WHERE id = $2 AND ended_at IS NULL RETURNING id
                """, [LedgerTime.format(end), String(record.id.rawValue)])
            try query(db, target, "DELETE FROM device_locks WHERE run_id = $1", [String(record.id.rawValue)])
            if !updated.isEmpty {
                record.endedAt = end
                record.outcome = .abandoned
                closed.append(record)
            }
        }
        return closed
    }

    // MARK: Rows

    /// The columns of `runs` on the shared ledger (always at the current schema).
    static let runColumns = LedgerRows.runColumns(PostgresSchema.currentVersion)

    /// An id or a count the statement returns (records are read by ``LedgerRows``).
    static func int(_ row: PostgresRow, _ index: Int, _ target: String) throws(LedgerError) -> Int64 {
        guard let value = try run(target, { () throws(PostgresError) in try row.int(index) }) else {
            throw .corrupt(path: target, damage: LedgerDamage("null_number"))
        }
        return value
    }
}

