import Foundation
import GrokBasics
import GrokCrypto
import GrokPostgres

/// A station's offline journal (docs/ledger.md, "Offline stations and the spool"): while the
/// shared database cannot be reached, a station whose profile says `"offline": "spool"`
/// records into a normal SQLite ledger file of its own (``ledger``, the same records and
/// guarantees), and sends it to the shared database exactly once when it is back
/// (``sync(to:)``).
///
/// Exactly once, by each record's identity:
/// - every spooled record is sent with a record id made from its run's station and key, its
///   table and its row (`spool:bench-3:20261201-104000-abcd:steps:<row>`), never from
///   anything a copy of the file could change without changing the records; the shared
///   tables keep a record id once (`record_id` is unique there), so sending a record again,
///   from this file or any copy of it, changes nothing;
/// - a spooled run is sent in one transaction of the shared database, and marked sent in
///   the spool (`spool_sent`) only after that commit: a crash between the two sends the run
///   again, which the record ids and the run's key make a no-op;
/// - a spooled run whose key another station's run has already taken is never merged into
///   it: it is sent under a key of its own (the key, a dash and hex digits of the SHA-256 of
///   its station's name), the same key every time.
///
/// Only as the station wrote it: every record is sealed with the station's key
/// (``SpoolSeal``, ``SpoolKey``, `<station>.key` beside the spool), and ``sync(to:)`` checks
/// every record it would send before it sends anything.
public final class Spool: Sendable {
    /// The spool file, a ledger like any other (what a spooling run records into).
    public let ledger: Ledger
    let key: SpoolKey

    public var path: String { ledger.path }
    /// The station's spool key, beside the spool.
    public var keyPath: String { key.path }

    private init(ledger: Ledger, key: SpoolKey) {
        self.ledger = ledger
        self.key = key
    }

    /// The spool's bookkeeping, beside the ledger's tables: which runs were sent where, and
    /// the records' seals. (No foreign key to `runs`: a later migration may rebuild that table.)
    static let bookkeeping = SpoolSeal.schema + """
        CREATE TABLE IF NOT EXISTS spool_sent (
            run_id     INTEGER PRIMARY KEY,
            shared_key TEXT NOT NULL,
            sent_at    TEXT NOT NULL,
            database   TEXT NOT NULL
        );
        """

    /// Opens (or creates) the spool at `path`: a ledger file (``Ledger/open(path:busyTimeout:readOnly:heartbeatInterval:)``)
    /// with the spool's bookkeeping added in one transaction, every record written through
    /// it sealed with the station's key (`<path without .sqlite>.key`, made 0600 when there
    /// is none).
    /// - Throws: ``LedgerError/spoolKey(path:problem:)`` for a key that cannot be used, or
    ///   the ledger's errors.
    public static func open(path: String) throws(LedgerError) -> Spool {
        let existed = FileManager.default.fileExists(atPath: path)
        var key = try SpoolKey.loadOrCreate(SpoolKey.path(forSpool: path))
        key.isNew = key.isNew && existed
        let secret = key.bytes
        let ledger = try Ledger.open(path: path, sealer: Ledger.RowSealer(tables: SpoolSeal.tables) {
            (db, rows) throws(LedgerError) in try SpoolSeal.seal(db, rows, key: secret)
        })
        try ledger.write { (db) throws(LedgerError) in try db.executeScript(bookkeeping) }
        return Spool(ledger: ledger, key: key)
    }

    /// A run of the spool and whether it was sent.
    public struct Entry: Sendable, Equatable {
        public var run: RunRecord
        /// The key it has in the shared database, once sent (its own, or one of its own when
        /// another station's run had taken it).
        public var sentAs: String?
    }

    /// Every run of the spool, oldest first, with whether it was sent.
    public func entries() throws(LedgerError) -> [Entry] {
        let sent = try ledger.read { (db) throws(LedgerError) -> [Int64: String] in
            var sent: [Int64: String] = [:]
            for (run, key) in try db.query("SELECT run_id, shared_key FROM spool_sent", [], { ($0.integer(0) ?? 0, $0.text(1) ?? "") }) {
                sent[run] = key
            }
            return sent
        }
        return try ledger.runs(limit: nil).reversed().map { Entry(run: $0, sentAs: sent[$0.id.rawValue]) }
    }

    /// What one ``sync(to:)`` did.
    public struct SyncReport: Sendable, Equatable {
        public struct Sent: Sendable, Equatable {
            /// The run's key in the spool (the one its summary printed).
            public var key: String
            /// Its key in the shared database: `key`, unless another station's run had that one.
            public var sharedKey: String
            /// The shared database held it already (a sync that committed and was not marked).
            public var wasThere: Bool
            public var steps: Int
        }
        /// The runs sent now, oldest first.
        public var sent: [Sent] = []
        /// Runs still open (a run spooling now): left for a later sync.
        public var open: [String] = []
        /// Runs sent before.
        public var alreadySent: Int = 0
    }

    /// Sends every finished run of the spool not yet sent to `shared`, oldest first, each in
    /// one transaction there, and marks each sent after its commit. First every record those
    /// runs would send is checked against its seal: one that is not as the station sealed it
    /// (``LedgerError/spoolRefused(path:table:row:run:problem:)``) stops the sync before
    /// anything is sent. Then it stops at the first run that cannot be sent (the error says
    /// why); the runs sent before it stay sent.
    @discardableResult
    public func sync(to shared: PostgresLedger) throws(LedgerError) -> SyncReport {
        var report = SyncReport()
        let entries = try entries()
        for entry in entries where entry.sentAs == nil && entry.run.endedAt != nil { _ = try read(entry.run) }
        for entry in entries {
            if entry.sentAs != nil { report.alreadySent += 1; continue }
            guard entry.run.endedAt != nil else { report.open.append(entry.run.key); continue }
            let batch = try read(entry.run)
            let (sharedKey, wasThere) = try send(batch, to: shared)
            try ledger.write { (db) throws(LedgerError) in
                try db.execute("INSERT OR REPLACE INTO spool_sent (run_id, shared_key, sent_at, database) VALUES (?, ?, ?, ?)",
                               [.integer(entry.run.id.rawValue), .text(sharedKey), .text(LedgerTime.format(Date())),
                                .text(shared.target)])
            }
            report.sent.append(.init(key: entry.run.key, sharedKey: sharedKey, wasThere: wasThere, steps: batch.steps.count))
        }
        return report
    }

    // MARK: Reading a run's records

    /// One spooled run and every record its sync sends, as text (the shared ledger's
    /// parameters are text; columns in the shared table's order).
    struct Batch: Sendable {
        var run: RunRecord
        /// `[record id, run row, serial, step, started_at, ended_at, duration_ms, result,
        /// firmware_before, firmware_after, region_before, region_after, code, detail, usb_path]`.
        var steps: [[String?]] = []
        /// `[record id, run row, serial, after_step, started_at, duration_ms, expected, found,
        /// missing, reads_per_second, min_rssi, passed]`.
        var smokeTests: [[String?]] = []
        /// `[record id, run row, serial, step, target, recorded_at, outcome, resolved_at, resolved_by row]`:
        /// the run's own intents, and those of other spooled runs it resolved.
        var intents: [[String?]] = []
        /// `[record id, rollout_id, run row, serial, percentage, outcome, hardware_revision,
        /// firmware_after, finished_at]`.
        var rolloutResults: [[String?]] = []
        var devices: [DeviceRecord] = []
        /// The shared keys of the other spooled runs these records name (by spool row).
        var sentKeys: [Int64: String] = [:]
    }

    /// A spooled record's identity in the shared database: its run's station and key, its
    /// table and its row in the spool (`spool:<station>:<run key>:<table>:<row>`).
    static func recordID(station: String, run: String, table: String, row: String?) -> String {
        "spool:\(station):\(run):\(table):\(row ?? "")"
    }

    /// Reads one run's records, each checked against its seal
    /// (``LedgerError/spoolRefused(path:table:row:run:problem:)`` for the first that fails).
    private func read(_ run: RunRecord) throws(LedgerError) -> Batch {
        let id = SQLValue.integer(run.id.rawValue)
        let spoolPath = path
        let key = key
        return try ledger.read { (db) throws(LedgerError) -> Batch in
            // The station and key of every spooled run, by row: what the records' ids are made of.
            let runs = Dictionary(try db.query("SELECT id, station, run_key FROM runs", [], {
                (String($0.integer(0) ?? 0), (station: $0.text(1) ?? "", key: $0.text(2) ?? ""))
            }), uniquingKeysWith: { first, _ in first })
            func checked(_ table: String, _ row: Int64?, runRow: String?) throws(LedgerError) {
                guard let row else { return }
                if let problem = try SpoolSeal.problem(db, table, row, key: key) {
                    throw .spoolRefused(path: spoolPath, table: table, row: row, run: runRow.flatMap { runs[$0]?.key } ?? run.key,
                                        problem: problem)
                }
            }
            func identified(_ table: String, runColumn: Int) -> ([String?]) throws(LedgerError) -> [String?] {
                { (record) throws(LedgerError) -> [String?] in
                    try checked(table, record[0].flatMap { Int64($0) }, runRow: record[runColumn])
                    let owner = record[runColumn].flatMap { runs[$0] } ?? (run.station, run.key)
                    return [Self.recordID(station: owner.station, run: owner.key, table: table, row: record[0])] + record.dropFirst()
                }
            }
            try checked("runs", run.id.rawValue, runRow: String(run.id.rawValue))
            // Reals as Swift writes them (the shortest text that reads back exactly), not SQLite's 15 digits.
            func rows(_ sql: String, _ count: Int32, reals: Set<Int32> = []) throws(LedgerError) -> [[String?]] {
                try db.query(sql, [id]) { row in
                    (0..<count).map { column in reals.contains(column) ? row.real(column).map { "\($0)" } : row.text(column) }
                }
            }
            var batch = Batch(run: run)
            // Its own steps, and the steps it added to an earlier spooled run whose change it
            // found made (`resolveIntent`: the author is the earlier run).
            batch.steps = try rows("""
                SELECT id, run_id, serial, step, started_at, ended_at, duration_ms, result, firmware_before, firmware_after,
                       region_before, region_after, code, detail, usb_path FROM steps s
                WHERE run_id = ?1 OR (code = 'step_completed_by_interrupted_run' AND EXISTS (
                    SELECT 1 FROM intents i WHERE i.resolved_by = ?1 AND i.run_id = s.run_id AND i.serial = s.serial AND i.step = s.step))
                ORDER BY id
                """, 15).map(identified("steps", runColumn: 1))
            batch.smokeTests = try rows("""
                SELECT id, run_id, serial, after_step, started_at, duration_ms, expected_tags, found_tags, missing_tags,
                       reads_per_second, min_rssi, passed FROM smoke_tests WHERE run_id = ?1 ORDER BY id
                """, 12, reals: [9, 10]).map(identified("smoke_tests", runColumn: 1))
            batch.intents = try rows("""
                SELECT id, run_id, serial, step, target, recorded_at, outcome, resolved_at, resolved_by FROM intents
                WHERE run_id = ?1 OR resolved_by = ?1 ORDER BY id
                """, 9).map(identified("intents", runColumn: 1))
            batch.rolloutResults = try rows("""
                SELECT id, rollout_id, run_id, serial, percentage, outcome, hardware_revision, firmware_after, finished_at
                FROM rollout_results WHERE run_id = ?1 ORDER BY id
                """, 9, reals: [4]).map(identified("rollout_results", runColumn: 2))
            let serials = Set(batch.steps.compactMap { $0[2] } + batch.smokeTests.compactMap { $0[2] } + batch.intents.compactMap { $0[2] })
            for (row, serial) in try db.query("SELECT rowid, serial FROM devices ORDER BY serial", [], { ($0.integer(0), $0.text(1) ?? "") })
            where serials.contains(serial) {
                try checked("devices", row, runRow: nil)
            }
            batch.devices = try db.rows("SELECT \(LedgerRows.deviceColumns) FROM devices ORDER BY serial") {
                (row) throws(LedgerError) in try LedgerRows.device(row)
            }.filter { serials.contains($0.serial) }
            for (row, key) in try db.query("SELECT run_id, shared_key FROM spool_sent", [], { ($0.integer(0) ?? 0, $0.text(1) ?? "") }) {
                batch.sentKeys[row] = key
            }
            return batch
        }
    }

    // MARK: Sending

    /// The keys a spooled run of `station` may have in the shared database, in the order
    /// they are tried: its own, then its own with more and more hex digits of the SHA-256 of
    /// the station's name (the same list every time, from whatever copy of the spool, so a
    /// run sent again finds the key it was sent under).
    static func candidateKeys(_ key: String, station: String) -> [String] {
        let stem = SHA256.hash(Array(station.utf8)).hex
        return [key] + [4, 8, 12, 16, 64].map { "\(key)-\(stem.prefix($0))" }
    }

    /// Sends one run in one transaction of `shared`; returns its key there and whether it was
    /// there already.
    private func send(_ batch: Batch, to shared: PostgresLedger) throws(LedgerError) -> (String, Bool) {
        let target = shared.target
        let run = batch.run
        let candidates = Self.candidateKeys(run.key, station: run.station)
        let spoolPath = path
        return try shared.write { (db) throws(LedgerError) -> (String, Bool) in
            @discardableResult
            func query(_ sql: String, _ parameters: [String?]) throws(LedgerError) -> [PostgresRow] {
                try PostgresLedger.query(db, target, sql, parameters)
            }
            // The run: found by its key when a sync before this one committed it (same
            // station, same start, same profile), else inserted under the first free key.
            var sharedID: Int64?
            var sharedKey = ""
            var wasThere = false
            for key in candidates {
                guard let row = try query("SELECT id, station, started_at, profile_sha256 FROM runs WHERE run_key = $1", [key]).first else {
                    let inserted = try query("""
                        INSERT INTO runs (run_key, kind, profile_name, profile_sha256, station, operator, started_at, ended_at,
                                          outcome, report_path, heartbeat_at)
                        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id
                        """, [key, run.kind.rawValue, run.profileName, run.profileSHA256, run.station, run.operatorName,
                              LedgerTime.format(run.startedAt), run.endedAt.map(LedgerTime.format), run.outcome?.rawValue,
                              run.reportPath, LedgerTime.format(run.lastSeenAt ?? run.startedAt)])
                    sharedID = try PostgresLedger.int(inserted[0], 0, target)
                    sharedKey = key
                    break
                }
                if row.text(1) == run.station, row.text(2) == LedgerTime.format(run.startedAt), row.text(3) == run.profileSHA256 {
                    sharedID = try PostgresLedger.int(row, 0, target)
                    sharedKey = key
                    wasThere = true
                    try query("UPDATE runs SET report_path = coalesce(report_path, $1) WHERE id = $2", [run.reportPath, String(sharedID!)])
                    // A run that went on in the spool when the database was lost mid-run
                    // (SpoolFailover): it ends as the spool says, not as the open run another
                    // station's process closed as abandoned meanwhile.
                    if let ended = run.endedAt {
                        try query("""
                            UPDATE runs SET ended_at = $1, outcome = $2, heartbeat_at = greatest(coalesce(heartbeat_at, ''), $3)
                            WHERE id = $4 AND (ended_at IS NULL OR outcome = 'abandoned')
                            """, [LedgerTime.format(ended), run.outcome?.rawValue, LedgerTime.format(run.lastSeenAt ?? ended),
                                  String(sharedID!)])
                        try query("DELETE FROM device_locks WHERE run_id = $1", [String(sharedID!)])
                    }
                    break
                }
                // Another station's run has this key: never merged into it; the next key.
            }
            guard let sharedID else { throw .duplicateRun(path: target, run: run.key) }

            // The shared ids of the spooled runs these records name: this one, and those sent before.
            var ids: [Int64: String] = [run.id.rawValue: String(sharedID)]
            for (row, key) in batch.sentKeys where row != run.id.rawValue {
                if let found = try query("SELECT id FROM runs WHERE run_key = $1", [key]).first {
                    ids[row] = String(try PostgresLedger.int(found, 0, target))
                }
            }
            func mapped(_ row: String?) throws(LedgerError) -> String? {
                guard let row else { return nil }
                guard let local = Int64(row), let id = ids[local] else {
                    throw .invalidRecord(path: spoolPath, detail: ErrorDetail("spooled_run_unsent", ["\(run.key)", row]))
                }
                return id
            }

            for device in batch.devices {
                // Widened first/last seen; the other fields from a sighting at least as late as
                // the one the database holds (an old spooled sighting never overwrites what a
                // later run saw; it only fills in what the database does not know).
                try query("""
                    INSERT INTO devices (serial, hardware_type, hardware_revision, antenna_type, first_seen, last_seen,
                                         firmware, region, provisioned, last_station)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::boolean, $10)
                    ON CONFLICT (serial) DO UPDATE SET
                        hardware_type = CASE WHEN $6 >= devices.last_seen THEN coalesce($2, devices.hardware_type) ELSE coalesce(devices.hardware_type, $2) END,
                        hardware_revision = CASE WHEN $6 >= devices.last_seen THEN coalesce($3, devices.hardware_revision) ELSE coalesce(devices.hardware_revision, $3) END,
                        antenna_type = CASE WHEN $6 >= devices.last_seen THEN coalesce($4, devices.antenna_type) ELSE coalesce(devices.antenna_type, $4) END,
                        firmware = CASE WHEN $6 >= devices.last_seen THEN coalesce($7, devices.firmware) ELSE coalesce(devices.firmware, $7) END,
                        region = CASE WHEN $6 >= devices.last_seen THEN coalesce($8, devices.region) ELSE coalesce(devices.region, $8) END,
                        provisioned = CASE WHEN $6 >= devices.last_seen THEN $9::boolean ELSE devices.provisioned END,
                        last_station = CASE WHEN $6 >= devices.last_seen THEN $10 ELSE devices.last_station END,
                        first_seen = least(devices.first_seen, $5),
                        last_seen = greatest(devices.last_seen, $6)
                    """,
                    [device.serial, device.hardwareType, device.hardwareRevision, device.antennaType,
                     LedgerTime.format(device.firstSeen), LedgerTime.format(device.lastSeen), device.firmware, device.region,
                     device.provisioned ? "true" : "false", run.station])
            }
            for step in batch.steps {
                var values = step
                values[1] = try mapped(step[1])
                // A step the database committed just as it was lost (and the spool then kept
                // too) is the same run, Grokker, step, start and result: kept once.
                try query("""
                    INSERT INTO steps (record_id, run_id, station, serial, step, started_at, ended_at, duration_ms, result,
                                       firmware_before, firmware_after, region_before, region_after, code, detail, usb_path)
                    SELECT $1, $2::bigint, $16, $3, $4, $5, $6, $7::bigint, $8, $9, $10, $11, $12, $13, coalesce($14, ''), $15
                    WHERE NOT EXISTS (SELECT 1 FROM steps WHERE run_id = $2::bigint AND serial = $3 AND step = $4
                                      AND started_at = $5 AND result = $8 AND record_id IS DISTINCT FROM $1)
                    ON CONFLICT (record_id) DO NOTHING
                    """, values + [run.station])
            }
            for test in batch.smokeTests {
                var values = test
                values[1] = try mapped(test[1])
                try query("""
                    INSERT INTO smoke_tests (record_id, run_id, station, serial, after_step, started_at, duration_ms, expected_tags,
                                             found_tags, missing_tags, reads_per_second, min_rssi, passed)
                    VALUES ($1, $2, $13, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::integer::boolean)
                    ON CONFLICT (record_id) DO NOTHING
                    """, values + [run.station])
            }
            for intent in batch.intents {
                var values = intent
                values[1] = try mapped(intent[1])
                // Its resolver may be a spooled run not sent yet: that run's sync fills it in.
                values[8] = intent[8].flatMap { Int64($0) }.flatMap { ids[$0] }
                try query("""
                    INSERT INTO intents (record_id, run_id, station, serial, step, target, recorded_at, outcome, resolved_at, resolved_by)
                    VALUES ($1, $2, $10, $3, $4, $5, $6, $7, $8, $9)
                    ON CONFLICT (record_id) DO UPDATE SET outcome = excluded.outcome, resolved_at = excluded.resolved_at,
                                                          resolved_by = excluded.resolved_by
                    WHERE excluded.outcome IS NOT NULL AND (intents.outcome IS NULL OR intents.resolved_by IS NULL)
                    """, values + [run.station])
            }
            // An intent recorded in the database before it was lost mid-run, whose step the
            // spool then recorded: closed as the step closes it (done, or not done).
            for step in batch.steps where step[1].flatMap(Int64.init) == run.id.rawValue {
                guard let result = step[7].flatMap(StepResult.init(rawValue:)), let outcome = IntentOutcome(closing: result) else { continue }
                try query("""
                    UPDATE intents SET outcome = $1, resolved_at = $2, resolved_by = $3
                    WHERE run_id = $3 AND serial = $4 AND step = $5 AND outcome IS NULL AND record_id NOT LIKE 'spool:%'
                    """, [outcome.rawValue, step[5], String(sharedID), step[2], step[3]])
            }
            for result in batch.rolloutResults {
                var values = result
                values[2] = try mapped(result[2])
                try query("""
                    INSERT INTO rollout_results (record_id, rollout_id, run_id, station, serial, percentage, outcome,
                                                 hardware_revision, firmware_after, finished_at)
                    VALUES ($1, $2, $3, $10, $4, $5, $6, $7, $8, $9)
                    ON CONFLICT (record_id) DO NOTHING
                    """, values + [run.station])
            }
            return (sharedKey, wasThere)
        }
    }
}

extension Spool {
    /// The file name of a station's spool: its name with anything but letters, digits, `.`,
    /// `-` and `_` made `_` (never a path, never hidden), then `.sqlite`.
    public static func fileName(station: String) -> String {
        var name = String(station.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_.".unicodeScalars.contains(scalar))
                ? Character(scalar) : "_"
        })
        if name.isEmpty || name.hasPrefix(".") { name = "_" + name }
        return name + ".sqlite"
    }
}
