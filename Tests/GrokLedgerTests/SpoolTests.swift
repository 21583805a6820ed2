import Foundation
import PostgresTestSupport
import Synchronization
import Testing

@testable import GrokLedger

/// A station's spool (a SQLite ledger file) sent to the shared ledger on a real PostgreSQL
/// server (the test cluster): every spooled record once, however often it is sent.
@Suite("Spool of an offline station", .serialized)
struct SpoolTests {
    let cluster = PostgresCluster.shared

    /// What the shared database holds, table by table, as text (ids included): a second
    /// sync must leave it exactly as it was.
    func snapshot(_ database: String) throws -> String {
        try ["runs", "devices", "steps", "smoke_tests", "intents", "rollout_results"].map { table in
            try cluster.psql(database, "SELECT * FROM \(table) ORDER BY 1")
        }.joined(separator: "\n---\n")
    }

    /// One spooled run of `station` on two Grokkers: devices, an intent its step closes,
    /// three steps, a smoke test, finished.
    @discardableResult
    func spoolRun(_ spool: Spool, station: String = "bench-3", key: String? = nil, at time: Double = 0) throws -> RunRecord {
        let ledger = spool.ledger
        var begin = start(at: time)
        begin.station = station
        begin.key = key
        let run = try ledger.beginRun(begin)
        try ledger.upsertDevice(DeviceSighting(serial: "GRK-1", hardwareType: "grokker", hardwareRevision: "3", firmware: "1.7.3",
                                               seenAt: at(time + 1)))
        try ledger.upsertDevice(DeviceSighting(serial: "GRK-2", hardwareType: "grokker", firmware: "1.7.3", seenAt: at(time + 1)))
        try ledger.recordIntent(run: run, serial: "GRK-1", step: "firmware", target: "1.8.0", at: at(time + 1))
        try ledger.recordStep(step(run, "GRK-1", "firmware", from: time + 1, to: time + 3))
        try ledger.recordStep(step(run, "GRK-2", "region", from: time + 1, to: time + 2))
        try ledger.recordStep(step(run, "GRK-2", "firmware", .failed, from: time + 2, to: time + 4, detail: "link lost"))
        try ledger.recordSmokeTest(SmokeTestRecord(run: run, serial: "GRK-1", afterStep: "firmware", startedAt: at(time + 3),
                                                   durationMilliseconds: 3013, expectedTags: ["E200", "E201"], foundTags: ["E200"],
                                                   readsPerSecond: 40.826, minRSSI: -61.5, passed: false))
        try ledger.upsertDevice(DeviceSighting(serial: "GRK-1", firmware: "1.8.0", seenAt: at(time + 4)))
        try ledger.finishRun(run, outcome: .failed, endedAt: at(time + 5), reportPath: "/reports/r.json")
        return try #require(try ledger.run(run))
    }

    @Test("a spooled run is sent with every record once; a second sync sends nothing and changes nothing")
    func spoolThenSync() throws {
        let scratch = Scratch()
        let spool = try Spool.open(path: scratch.file("spool/bench-3.sqlite"))
        let spooled = try spoolRun(spool)
        let database = try cluster.newDatabase("spool")
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "sync")

        let first = try spool.sync(to: shared)
        #expect(first.sent.map(\.key) == [spooled.key] && first.sent.map(\.sharedKey) == [spooled.key])
        #expect(first.sent.first?.wasThere == false)
        let run = try #require(try shared.run(key: spooled.key))
        #expect(run.station == "bench-3" && run.outcome == .failed && run.endedAt == spooled.endedAt && run.reportPath == "/reports/r.json")
        #expect(run.startedAt == spooled.startedAt && run.profileSHA256 == spooled.profileSHA256 && run.operatorName == spooled.operatorName)
        // The same records as the spool holds, with the shared run's id.
        let spoolSteps = try spool.ledger.steps().map { s -> StepRecord in var s = s; s.run = run.id; return s }
        #expect(try shared.steps() == spoolSteps)
        let spoolTests = try spool.ledger.smokeTests().map { t -> SmokeTestRecord in var t = t; t.run = run.id; return t }
        #expect(try shared.smokeTests() == spoolTests)
        #expect(try shared.devices() == spool.ledger.devices())
        #expect(try shared.stepStations(run: run.id) == ["bench-3", "bench-3", "bench-3"])
        let intents = try shared.intents()
        #expect(intents.map { [$0.serial, $0.step, $0.target, $0.outcome?.rawValue ?? "open"] } == [["GRK-1", "firmware", "1.8.0", "done"]])
        #expect(intents.first?.resolvedBy == run.id)
        #expect(try spool.entries().map(\.sentAs) == [spooled.key])

        let before = try snapshot(database)
        let second = try spool.sync(to: shared)
        #expect(second.sent.isEmpty && second.alreadySent == 1)
        #expect(try snapshot(database) == before)
    }

    @Test("a spool sealed under schema 7 still syncs once schema 8 adds the steps' USB port; a later step's USB port is sealed and sent")
    func schemaSevenSealsHold() throws {
        let scratch = Scratch()
        let path = scratch.file("spool/bench-3.sqlite")
        let spooled = try spoolRun(try Spool.open(path: path))
        // The spool as a version 7 grokctl left it: no `usb_path`, every step sealed by that version.
        do {
            let db = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1000)
            try db.executeScript("ALTER TABLE steps DROP COLUMN usb_path; PRAGMA user_version = 7;")
            let key = try #require(try SpoolKey.load(keyFile(path)))
            let rows = try db.query("SELECT rowid FROM steps", []) { RowChanges.Row(table: "steps", rowid: $0.integer(0) ?? 0, newRowid: $0.integer(0)) }
            try SpoolSeal.seal(db, rows, key: key)
        }
        let spool = try Spool.open(path: path)
        let run = try spool.ledger.beginRun(start(at: 10))
        var onUSB = step(run, "GRK-3", "region", from: 11, to: 12)
        onUSB.usbPath = "1-1.4"
        try spool.ledger.recordStep(onUSB)
        try spool.ledger.finishRun(run, outcome: .succeeded, endedAt: at(13), reportPath: nil)
        let shared = try PostgresLedger.open(cluster.conninfo(try cluster.newDatabase("spool7")), station: "sync")
        #expect(try spool.sync(to: shared).sent.count == 2)
        #expect(try shared.steps(run: try #require(try shared.run(key: spooled.key)).id).count == 3)
        #expect(try shared.steps(serial: "GRK-3").map(\.usbPath) == ["1-1.4"])
    }

    @Test("killed between the database's commit and the spool's mark: the run is sent again and the database does not change")
    func crashBetweenCommitAndMark() throws {
        let scratch = Scratch()
        let spool = try Spool.open(path: scratch.file("spool/bench-3.sqlite"))
        let spooled = try spoolRun(spool)
        let database = try cluster.newDatabase("spoolcrash")
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "sync")
        try spool.sync(to: shared)
        let before = try snapshot(database)
        // The mark never reached the spool (the process died right after the commit).
        try spool.ledger.write { (db) throws(LedgerError) in try db.execute("DELETE FROM spool_sent") }
        #expect(try spool.entries().map(\.sentAs) == [nil])

        let again = try spool.sync(to: shared)
        #expect(again.sent.map(\.sharedKey) == [spooled.key])
        #expect(again.sent.first?.wasThere == true, "the run was taken for a new one")
        #expect(try snapshot(database) == before)
        #expect(try shared.steps().count == 3)
        #expect(try spool.entries().map(\.sentAs) == [spooled.key])
    }

    @Test("a spooled run whose key another station's run has is never merged into it: it is sent under a key of its own, once")
    func keyTakenByAnotherStation() throws {
        let scratch = Scratch()
        let spool = try Spool.open(path: scratch.file("spool/bench-3.sqlite"))
        let key = "20240501-104000-abcd"
        let spooled = try spoolRun(spool, key: key)
        let database = try cluster.newDatabase("spoolkey")
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "sync")
        // Another station's run under the very same key, online, with one step.
        let other = try PostgresLedger.open(cluster.conninfo(database), station: "bench-9")
        var theirs = start(at: 100)
        theirs.station = "bench-9"
        theirs.key = key
        let theirRun = try other.beginRun(theirs)
        try other.recordStep(step(theirRun, "GRK-7", "region", from: 101, to: 102))
        try other.finishRun(theirRun, outcome: .succeeded, endedAt: at(103), reportPath: nil)

        let report = try spool.sync(to: shared)
        let sentAs = try #require(report.sent.first?.sharedKey)
        #expect(sentAs != key && sentAs.hasPrefix(key + "-"), "\(sentAs)")
        #expect(Spool.candidateKeys(key, station: "bench-3").dropFirst().first == sentAs, "the key of its own is the spool's first choice")
        // Their run is untouched: its station, its one step.
        let theirRecord = try #require(try shared.run(key: key))
        #expect(theirRecord.station == "bench-9" && theirRecord.id == theirRun)
        #expect(try shared.steps(run: theirRun).map(\.serial) == ["GRK-7"])
        // Ours is whole under its own key.
        let ours = try #require(try shared.run(key: sentAs))
        #expect(ours.station == "bench-3" && ours.startedAt == spooled.startedAt)
        #expect(try shared.steps(run: ours.id).count == 3)

        // Sent again (the mark lost): the same key of its own is found as ours, nothing added.
        let before = try snapshot(database)
        try spool.ledger.write { (db) throws(LedgerError) in try db.execute("DELETE FROM spool_sent") }
        let again = try spool.sync(to: shared)
        #expect(again.sent.map(\.sharedKey) == [sentAs] && again.sent.first?.wasThere == true)
        #expect(try snapshot(database) == before)
    }

    @Test("an old spooled sighting widens a device's first and last seen and fills in what is unknown, but never overwrites what a later run saw")
    func deviceRecency() throws {
        let scratch = Scratch()
        let spool = try Spool.open(path: scratch.file("spool/bench-3.sqlite"))
        try spoolRun(spool, at: 0)
        let database = try cluster.newDatabase("spooldev")
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "bench-4")
        // Online, later: GRK-1 was flashed to 1.9.0 at another station.
        try shared.upsertDevice(DeviceSighting(serial: "GRK-1", firmware: "1.9.0", region: "ETSI", seenAt: at(500)))
        try spool.sync(to: shared)
        let device = try #require(try shared.device(serial: "GRK-1"))
        #expect(device.firmware == "1.9.0" && device.region == "ETSI", "the later sighting was overwritten")
        #expect(device.firstSeen == at(1) && device.lastSeen == at(500))
        #expect(device.hardwareRevision == "3", "what only the spool knew was not filled in")
    }

    @Test("a change found made by a later spooled run is sent with its author's run, and the intent names its resolver")
    func intentResolvedByALaterSpooledRun() throws {
        let scratch = Scratch()
        let spool = try Spool.open(path: scratch.file("spool/bench-3.sqlite"))
        let ledger = spool.ledger
        // Run 1 records an intent and dies before the step's record.
        var first = start(at: 0); first.station = "bench-3"
        let run1 = try ledger.beginRun(first)
        let intent = try ledger.recordIntent(run: run1, serial: "GRK-1", step: "region", target: "ETSI", at: at(1))
        try ledger.finishRun(run1, outcome: .interrupted, endedAt: at(2), reportPath: nil)
        // Run 2 finds the change made: the step goes to run 1, its author.
        var second = start(at: 10); second.station = "bench-3"
        let run2 = try ledger.beginRun(second)
        #expect(try ledger.resolveIntent(intent, outcome: .done, by: run2, step: step(run2, "GRK-1", "region", from: 11, to: 12), at: at(12)))
        try ledger.finishRun(run2, outcome: .succeeded, endedAt: at(13), reportPath: nil)

        let database = try cluster.newDatabase("spoolintent")
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "sync")
        let report = try spool.sync(to: shared)
        #expect(report.sent.count == 2)
        let keys = try ledger.runs().reversed().map(\.key)
        let shared1 = try #require(try shared.run(key: keys[0])), shared2 = try #require(try shared.run(key: keys[1]))
        #expect(try shared.steps(run: shared1.id).map(\.step) == ["region"], "the change's one author is run 1")
        #expect(try shared.steps(run: shared2.id).isEmpty)
        let sent = try #require(try shared.intents().first)
        #expect(sent.outcome == .done && sent.run == shared1.id && sent.resolvedBy == shared2.id)
    }

    @Test("the database lost for good mid-run: the rest of the run goes to the spool, and the sync completes that same run, every record once")
    func lostMidRun() throws {
        // A cluster of its own: it is stopped under the run.
        let cluster = try PostgresCluster()
        let database = try cluster.newDatabase("midrun")
        let scratch = Scratch()
        let spoolPath = scratch.file("spool/bench-3.sqlite")
        let failover = SpoolFailover(shared: try PostgresLedger.open(cluster.conninfo(database), station: "bench-3", reconnectSeconds: 0.5),
                                     spoolPath: spoolPath)
        var begin = start(at: 0)
        begin.station = "bench-3"
        begin.key = "20240501-104000-beef"
        let run = try failover.beginRun(begin)
        try failover.upsertDevice(DeviceSighting(serial: "GRK-1", firmware: "1.7.3", seenAt: at(1)))
        try failover.recordStep(step(run, "GRK-1", "region", from: 1, to: 2))
        let intent = try failover.recordIntent(run: run, serial: "GRK-1", step: "firmware", target: "1.8.0", at: at(2))
        #expect(try failover.lockFleetWide(serial: "GRK-1", run: run) == nil)
        #expect(failover.spool == nil)

        // The firmware step's commit reaches the database just as it goes (written here on a
        // second connection); the station never hears of it and keeps the step in the spool.
        try PostgresLedger.open(cluster.conninfo(database), station: "bench-3").recordStep(step(run, "GRK-1", "firmware", from: 2, to: 4))
        cluster.stop()
        try failover.recordStep(step(run, "GRK-1", "firmware", from: 2, to: 4))
        #expect(failover.spool != nil, "the lost database was not left for the spool")
        #expect(failover.location == spoolPath)
        #expect(try failover.lockFleetWide(serial: "GRK-1", run: run) == nil, "no fleet-wide lock while spooling")
        try failover.recordSmokeTest(SmokeTestRecord(run: run, serial: "GRK-1", afterStep: "firmware", startedAt: at(4),
                                                     durationMilliseconds: 2000, expectedTags: ["E200"], foundTags: ["E200"],
                                                     readsPerSecond: 12.5, minRSSI: -50, passed: true))
        try failover.upsertDevice(DeviceSighting(serial: "GRK-1", firmware: "1.8.0", seenAt: at(5)))
        try failover.finishRun(run, outcome: .succeeded, endedAt: at(6), reportPath: "/reports/r.json")
        #expect(intent > 0)

        try cluster.start()
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "sync")
        let spool = try Spool.open(path: spoolPath)
        let report = try spool.sync(to: shared)
        #expect(report.sent.map(\.sharedKey) == ["20240501-104000-beef"], "the run was not completed under its own key")
        let record = try #require(try shared.run(key: "20240501-104000-beef"))
        #expect(try shared.runs().count == 1)
        #expect(record.outcome == .succeeded && record.endedAt == at(6) && record.reportPath == "/reports/r.json")
        #expect(try shared.steps(run: record.id).map(\.step) == ["region", "firmware"])
        #expect(try shared.smokeTests(run: record.id).count == 1)
        #expect(try shared.device(serial: "GRK-1")?.firmware == "1.8.0")
        #expect(try shared.intents().map { $0.outcome } == [.done], "the intent recorded online stayed open")
        #expect(try shared.deviceLocks().isEmpty)

        let before = try ["runs", "steps", "smoke_tests", "intents", "devices"].map { try cluster.psql(database, "SELECT * FROM \($0) ORDER BY 1") }
        try spool.ledger.write { (db) throws(LedgerError) in try db.execute("DELETE FROM spool_sent") }
        try spool.sync(to: shared)
        #expect(try ["runs", "steps", "smoke_tests", "intents", "devices"].map { try cluster.psql(database, "SELECT * FROM \($0) ORDER BY 1") } == before)
    }

    // MARK: Replays and forgeries (issue 27 item 4)

    /// The spool file at `path` and its `-wal` copied to `copy`, with the station's key
    /// beside it when `key` (a restored backup, a renamed spool).
    func copySpool(_ path: String, to copy: String, key: Bool) throws {
        try FileManager.default.createDirectory(atPath: (copy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        if key { try FileManager.default.copyItem(atPath: keyFile(path), toPath: keyFile(copy)) }
    }

    func keyFile(_ spool: String) -> String { String(spool.dropLast(".sqlite".count)) + ".key" }

    /// The code and arguments of what `body` threw (nil: it threw nothing).
    func thrown(_ body: () throws -> Void) -> [String]? {
        do { try body() } catch let error as LedgerError { return [error.code] + error.arguments } catch { return ["\(error)"] }
        return nil
    }

    @Test("a copy of a sent spool under another name, its sent marks gone and its spool id changed, stores nothing again: records are known by their station, run and row")
    func renamedCopySendsNothingNew() throws {
        let scratch = Scratch()
        let path = scratch.file("spool/bench-3.sqlite")
        let spool = try Spool.open(path: path)
        try spoolRun(spool)
        let database = try cluster.newDatabase("spoolcopy")
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "sync")
        try spool.sync(to: shared)
        let before = try snapshot(database)

        let copy = scratch.file("spool/bench-3-restored.sqlite")
        try copySpool(path, to: copy, key: true)
        // The sqlite3 shell: the marks gone and, where a spool has an id of its own, a new one.
        try Ledger.open(path: copy).write { (db) throws(LedgerError) in
            try db.execute("DELETE FROM spool_sent")
            if try db.queryInteger("SELECT count(*) FROM sqlite_master WHERE name = 'spool_identity'") != 0 {
                try db.execute("UPDATE spool_identity SET spool_id = '00000000-0000-4000-8000-00000000beef'")
            }
        }
        let again = try Spool.open(path: copy).sync(to: shared)
        #expect(again.sent.map(\.wasThere) == [true])
        #expect(try snapshot(database) == before, "the copy's records were stored a second time")
        #expect(try shared.smokeTests().count == 1 && shared.steps().count == 3 && shared.intents().count == 1)
    }

    @Test("a spool edited behind the station's back is refused whole before anything is sent, naming the spool, the record and what is wrong; put back, it syncs")
    func editedSpoolIsRefused() throws {
        let database = try cluster.newDatabase("spoolforged")
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "sync")
        let refusal = "ledger_spool_refused"

        // A serial rewritten with the sqlite3 shell (a connection without the station's key).
        let scratch = Scratch()
        let path = scratch.file("spool/bench-3.sqlite")
        let spool = try Spool.open(path: path)
        let spooled = try spoolRun(spool)
        let shell = try Ledger.open(path: path)
        try shell.write { (db) throws(LedgerError) in try db.execute("UPDATE steps SET serial = 'GRK-9' WHERE serial = 'GRK-2' AND step = 'region'") }
        #expect(thrown { try spool.sync(to: shared) } == [refusal, path, "steps", "2", spooled.key, "seal_mismatch", keyFile(path)])
        #expect(try shared.runs().isEmpty && shared.steps().isEmpty && shared.devices().isEmpty, "part of a forged spool was sent")

        // A step added for a Grokker no station saw.
        let added = Scratch()
        let addedPath = added.file("spool/bench-3.sqlite")
        let addedSpool = try Spool.open(path: addedPath)
        let addedRun = try spoolRun(addedSpool)
        try Ledger.open(path: addedPath).write { (db) throws(LedgerError) in
            try db.execute("""
                INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result, detail)
                SELECT run_id, 'GRK-666', step, started_at, ended_at, duration_ms, result, detail FROM steps WHERE id = 1
                """)
        }
        #expect(thrown { try addedSpool.sync(to: shared) } == [refusal, addedPath, "steps", "4", addedRun.key, "unsealed", keyFile(addedPath)])

        // A device row changed by hand, then seen again by the station: the station's write
        // does not bless what it found changed.
        let device = Scratch()
        let devicePath = device.file("spool/bench-3.sqlite")
        let deviceSpool = try Spool.open(path: devicePath)
        try spoolRun(deviceSpool)
        try Ledger.open(path: devicePath).write { (db) throws(LedgerError) in
            try db.execute("UPDATE devices SET provisioned = 1, hardware_revision = '9' WHERE serial = 'GRK-2'")
        }
        try deviceSpool.ledger.upsertDevice(DeviceSighting(serial: "GRK-2", firmware: "1.8.0", seenAt: at(9)))
        let deviceRefusal = thrown { try deviceSpool.sync(to: shared) }
        #expect(deviceRefusal?.first == refusal && deviceRefusal?[2] == "devices" && deviceRefusal?[5] == "seal_mismatch", "\(deviceRefusal ?? [])")
        #expect(try shared.runs().isEmpty)

        // The serial put back as the station wrote it: the spool is whole again and syncs.
        try shell.write { (db) throws(LedgerError) in try db.execute("UPDATE steps SET serial = 'GRK-2' WHERE id = 2") }
        #expect(try spool.sync(to: shared).sent.map(\.key) == [spooled.key])
        #expect(try shared.steps().map(\.serial).sorted() == ["GRK-1", "GRK-2", "GRK-2"])
    }

    @Test("another station's spool copied or renamed into this station's name is refused: it was sealed under another key")
    func foreignSpoolIsRefused() throws {
        let database = try cluster.newDatabase("spoolforeign")
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "sync")
        let scratch = Scratch()
        let theirs = scratch.file("bench-3/spool/bench-3.sqlite")
        let spooled = try spoolRun(try Spool.open(path: theirs))
        // Station bench-4 has a key of its own; bench-3's spool copied over its spool.
        let ours = scratch.file("bench-4/spool/bench-4.sqlite")
        _ = try Spool.open(path: ours)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: ours + suffix) }
        try copySpool(theirs, to: ours, key: false)
        #expect(thrown { try Spool.open(path: ours).sync(to: shared) } == ["ledger_spool_refused", ours, "runs", "1", spooled.key, "seal_mismatch", keyFile(ours)])
        // Renamed where no station has a key yet: the key made now cannot have sealed it.
        let renamed = scratch.file("elsewhere/spool/bench-5.sqlite")
        try copySpool(theirs, to: renamed, key: false)
        #expect(thrown { try Spool.open(path: renamed).sync(to: shared) } == ["ledger_spool_refused", renamed, "runs", "1", spooled.key, "key_new", keyFile(renamed)])
        #expect(try shared.runs().isEmpty)
    }

    @Test("the station's spool key is made 0600 beside the spool; a key others may read, or a link in its place, is refused, naming it")
    func spoolKeyFile() throws {
        let scratch = Scratch()
        let path = scratch.file("spool/bench-3.sqlite")
        _ = try Spool.open(path: path)
        let key = keyFile(path)
        let attributes = try FileManager.default.attributesOfItem(atPath: key)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let text = try String(contentsOfFile: key, encoding: .utf8)
        #expect(text.count == 65 && text.hasSuffix("\n"))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)
        #expect(thrown { _ = try Spool.open(path: path) } == ["ledger_spool_key", key, "not_private", "644"])
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.createSymbolicLink(atPath: key, withDestinationPath: scratch.file("elsewhere.key"))
        #expect(thrown { _ = try Spool.open(path: path) } == ["ledger_spool_key", key, "not_regular"])
        #expect(!FileManager.default.fileExists(atPath: scratch.file("elsewhere.key")), "a key was written through the link")
    }

    // MARK: The switch to the spool (issue 27 item 8)

    @Test("the database lost under four workers at once: the station goes over to its spool once, and every worker's records land there")
    func fourWorkersSwitchOnce() throws {
        let cluster = try PostgresCluster()
        let database = try cluster.newDatabase("switch")
        let scratch = Scratch()
        let failover = SpoolFailover(shared: try PostgresLedger.open(cluster.conninfo(database), station: "bench-3", reconnectSeconds: 1),
                                     spoolPath: scratch.file("spool/bench-3.sqlite"))
        var begin = start(at: 0)
        begin.station = "bench-3"
        begin.key = "20240501-104000-cafe"
        let run = try failover.beginRun(begin)
        cluster.stop()
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for worker in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                do throws(LedgerError) {
                    try failover.upsertDevice(DeviceSighting(serial: "GRK-\(worker)", firmware: "1.7.3", seenAt: at(1)))
                    try failover.recordStep(step(run, "GRK-\(worker)", "region", from: 1, to: 2))
                } catch {
                    failures.withLock { $0.append(error.code + ": " + error.arguments.joined(separator: " ")) }
                }
            }.start()
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
        let spool = try #require(failover.spool)
        #expect(try spool.ledger.runs().map(\.key) == ["20240501-104000-cafe"], "the run was begun in the spool more than once")
        #expect(try spool.ledger.steps().map(\.serial).sorted() == ["GRK-0", "GRK-1", "GRK-2", "GRK-3"])
        try failover.finishRun(run, outcome: .succeeded, endedAt: at(3), reportPath: nil)
        #expect(try spool.ledger.run(key: "20240501-104000-cafe")?.outcome == .succeeded)
    }
}
