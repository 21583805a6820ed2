import Foundation
import GrokBasics
import Testing
@testable import GrokLedger

@Suite("Ledger: schema, migrations and files")
struct SchemaTests {
    @Test("open creates the directories and the schema; a reopen keeps everything")
    func createAndReopen() throws {
        let scratch = Scratch()
        do {
            let ledger = try Ledger.open(path: scratch.ledgerPath)
            let run = try ledger.beginRun(start())
            try ledger.upsertDevice(DeviceSighting(serial: "GK-0001", hardwareType: "Grokker", hardwareRevision: "C",
                                                   antennaType: "internal", firmware: "1.4.0", region: "US",
                                                   provisioned: true, seenAt: at(1)))
            try ledger.recordStep(step(run, "GK-0001", "region"))
            try ledger.finishRun(run, outcome: .succeeded, endedAt: at(9), reportPath: "/tmp/report.json")
            let tables = try ledger.withConnection { (db) throws(LedgerError) in
                try db.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") {
                    $0.text(0) ?? ""
                }
            }
            #expect(tables == ["devices", "intents", "link_settings", "rollout_results", "rollout_stages", "runs", "smoke_tests", "stage_events", "steps"])
            let pragmas = try ledger.withConnection { (db) throws(LedgerError) in
                (try db.queryInteger("PRAGMA user_version"), try db.queryText("PRAGMA journal_mode"),
                 try db.queryInteger("PRAGMA foreign_keys"), try db.queryInteger("PRAGMA application_id"))
            }
            #expect(pragmas.0 == Int64(Ledger.schemaVersion))
            #expect(pragmas.1 == "wal")
            #expect(pragmas.2 == 1)
            #expect(pragmas.3 == Int64(Schema.applicationID))
        }
        #expect(FileManager.default.fileExists(atPath: scratch.ledgerPath))
        let reopened = try Ledger.open(path: scratch.ledgerPath)
        let device = try #require(try reopened.device(serial: "GK-0001"))
        #expect(device == DeviceRecord(serial: "GK-0001", hardwareType: "Grokker", hardwareRevision: "C",
                                       antennaType: "internal", firstSeen: at(1), lastSeen: at(1), firmware: "1.4.0",
                                       region: "US", provisioned: true))
        let runs = try reopened.runs()
        #expect(runs.count == 1)
        #expect(runs.first?.outcome == .succeeded)
        #expect(runs.first?.endedAt == at(9))
        #expect(runs.first?.reportPath == "/tmp/report.json")
        #expect(runs.first?.operatorName == "Zoë")
        #expect(try reopened.steps(serial: "GK-0001") == [step(RunID(rawValue: 1), "GK-0001", "region")])
    }

    @Test("a database with a newer user_version is refused, naming the file")
    func newerSchemaRefused() throws {
        let scratch = Scratch()
        do {
            let ledger = try Ledger.open(path: scratch.ledgerPath)
            _ = try ledger.beginRun(start())
            try ledger.withConnection { (db) throws(LedgerError) in try db.execute("PRAGMA user_version = 99") }
        }
        let error = #expect(throws: LedgerError.self) { try Ledger.open(path: scratch.ledgerPath) }
        #expect(error == .newerSchema(path: scratch.ledgerPath, found: 99, supported: Ledger.schemaVersion))
        #expect(error?.code == "ledger_newer_schema")
        #expect(error?.description.contains(scratch.ledgerPath) == true)
        #expect(error?.description.contains("upgrade grokctl") == true)
    }

    @Test("a later migration upgrades an existing ledger and keeps its rows; this build then refuses it")
    func migrationUpgrades() throws {
        let scratch = Scratch()
        do {
            let ledger = try Ledger.open(path: scratch.ledgerPath)
            try ledger.upsertDevice(DeviceSighting(serial: "GK-7", seenAt: at(0)))
        }
        do {
            let connection = try SQLiteConnection(path: scratch.ledgerPath, busyTimeoutMilliseconds: 1000)
            let next = Schema.migrations + ["ALTER TABLE devices ADD COLUMN note TEXT; UPDATE devices SET note = 'migrated';"]
            try Schema.migrate(connection, migrations: next)
            #expect(try connection.queryInteger("PRAGMA user_version") == Int64(Schema.currentVersion + 1))
            #expect(try connection.queryText("SELECT note FROM devices WHERE serial = 'GK-7'") == "migrated")
            // Migrating again is a no-op.
            try Schema.migrate(connection, migrations: next)
            #expect(try connection.queryInteger("SELECT count(*) FROM devices") == 1)
        }
        #expect(throws: LedgerError.newerSchema(path: scratch.ledgerPath, found: Schema.currentVersion + 1,
                                                supported: Schema.currentVersion)) {
            try Ledger.open(path: scratch.ledgerPath)
        }
    }

    @Test("a failing migration leaves the previous version and its data")
    func failingMigrationRollsBack() throws {
        let scratch = Scratch()
        do {
            let ledger = try Ledger.open(path: scratch.ledgerPath)
            try ledger.upsertDevice(DeviceSighting(serial: "GK-8", seenAt: at(0)))
        }
        let connection = try SQLiteConnection(path: scratch.ledgerPath, busyTimeoutMilliseconds: 1000)
        let broken = Schema.migrations + ["CREATE TABLE extra (x INTEGER); INSERT INTO no_such_table VALUES (1);"]
        #expect(throws: LedgerError.self) { try Schema.migrate(connection, migrations: broken) }
        #expect(try connection.queryInteger("PRAGMA user_version") == Int64(Schema.currentVersion))
        #expect(try connection.queryInteger("SELECT count(*) FROM sqlite_schema WHERE name = 'extra'") == 0)
        #expect(try connection.queryInteger("SELECT count(*) FROM devices") == 1)
    }

    @Test("a file that is not a database is refused as not SQLite, naming it, and left as it was")
    func garbageIsCorrupt() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: scratch.ledgerPath).deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        let text = Data(String(repeating: "not a database, just text. ", count: 200).utf8)
        try text.write(to: URL(fileURLWithPath: scratch.ledgerPath))
        let error = #expect(throws: LedgerError.self) { try Ledger.open(path: scratch.ledgerPath) }
        #expect(error?.code == "ledger_not_sqlite")
        #expect(error?.path == scratch.ledgerPath)
        #expect(error?.description.contains("left untouched") == true)
        #expect(FileManager.default.contents(atPath: scratch.ledgerPath) == text)
    }

    @Test("another application's SQLite database is refused")
    func foreignDatabaseRefused() throws {
        let scratch = Scratch()
        let path = scratch.file("other.sqlite")
        try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true)
        do {
            let other = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 100, create: true)
            try other.execute("CREATE TABLE contacts (name TEXT)")
        }
        #expect(throws: LedgerError.notALedger(path: path, applicationID: 0)) { try Ledger.open(path: path) }
        // Nothing was added to it.
        let other = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 100)
        #expect(try other.queryInteger("SELECT count(*) FROM sqlite_schema") == 1)
    }

    @Test("a path under a regular file cannot be opened")
    func cannotOpen() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true)
        let blocker = scratch.file("blocker")
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        let error = #expect(throws: LedgerError.self) { try Ledger.open(path: blocker + "/ledger.sqlite") }
        #expect(error?.code == "ledger_cannot_open")
    }
}

@Suite("Ledger: transactions and concurrency")
struct TransactionTests {
    @Test("an error thrown inside a transaction rolls back every write in it")
    func rollbackOnThrow() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        let kept = try ledger.beginRun(start())
        try ledger.recordStep(step(kept, "GK-1", "identify"))
        let error = #expect(throws: LedgerError.self) {
            try ledger.write { (db) throws(LedgerError) in
                try db.execute("INSERT INTO runs (kind, profile_name, profile_sha256, station, operator, started_at, run_key) VALUES ('verify', 'p', ?, 's', 'o', 'x', 'k')",
                               [.text(profileDigest)])
                try db.execute("INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result) VALUES (?, 'GK-1', 'region', 'a', 'b', 5, 'done')",
                               [.integer(db.lastInsertRowID)])
                try db.execute("UPDATE devices SET region = 'EU'")
                // The process "dies" here: nothing above may survive.
                throw LedgerError.invalidRecord(path: db.path, detail: ErrorDetail("run_without_key"))
            }
        }
        #expect(error == .invalidRecord(path: scratch.ledgerPath, detail: ErrorDetail("run_without_key")))
        #expect(try ledger.runs().map(\.id) == [kept])
        #expect(try ledger.steps().map(\.step) == ["identify"])
        #expect(try ledger.withConnection { (db) throws(LedgerError) in db.inTransaction } == false)
    }

    @Test("a constraint violation half-way through a transaction keeps nothing of it")
    func constraintRollsBack() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        let run = try ledger.beginRun(start())
        let error = #expect(throws: LedgerError.self) {
            try ledger.write { (db) throws(LedgerError) in
                try db.execute("INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result) VALUES (?, 'GK-1', 'a', 'x', 'y', 1, 'done')",
                               [.integer(run.rawValue)])
                // A step of a run that does not exist: the foreign key refuses it.
                try db.execute("INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result) VALUES (999, 'GK-1', 'b', 'x', 'y', 1, 'done')")
            }
        }
        #expect(error?.code == "ledger_invalid_record")
        #expect(try ledger.steps().isEmpty)
    }

    @Test("recording into an unknown or finished run is refused and writes nothing")
    func unknownAndFinishedRuns() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        #expect(throws: LedgerError.unknownRun(path: scratch.ledgerPath, run: 42)) {
            try ledger.recordStep(step(RunID(rawValue: 42), "GK-1", "identify"))
        }
        let run = try ledger.beginRun(start())
        try ledger.finishRun(run, outcome: .failed, endedAt: at(5), reportPath: nil)
        #expect(throws: LedgerError.runFinished(path: scratch.ledgerPath, run: run.rawValue)) {
            try ledger.recordStep(step(run, "GK-1", "identify"))
        }
        #expect(throws: LedgerError.runFinished(path: scratch.ledgerPath, run: run.rawValue)) {
            try ledger.finishRun(run, outcome: .succeeded, endedAt: at(6), reportPath: nil)
        }
        #expect(try ledger.steps().isEmpty)
        #expect(try ledger.run(run)?.outcome == .failed)
    }

    @Test("malformed records are refused before touching the database")
    func invalidRecords() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        #expect(throws: LedgerError.self) { try ledger.beginRun(start(digest: "abc")) }
        let run = try ledger.beginRun(start(digest: profileDigest.uppercased()))
        #expect(try ledger.run(run)?.profileSHA256 == profileDigest)
        #expect(throws: LedgerError.self) { try ledger.recordStep(step(run, "GK-1", "region", from: 5, to: 4)) }
        #expect(throws: LedgerError.self) { try ledger.recordStep(step(run, "", "region")) }
        #expect(throws: LedgerError.self) { try ledger.upsertDevice(DeviceSighting(serial: "", seenAt: at(0))) }
        #expect(throws: LedgerError.self) {
            try ledger.recordSmokeTest(SmokeTestRecord(run: run, serial: "GK-1", afterStep: "region", startedAt: at(0),
                                                       durationMilliseconds: 10, expectedTags: [], foundTags: [],
                                                       readsPerSecond: .nan, minRSSI: nil, passed: false))
        }
        #expect(try ledger.steps().isEmpty)
        #expect(try ledger.devices().isEmpty)
    }

    @Test("16 tasks recording steps at once lose nothing (two connections share the file)")
    func concurrentWriters() async throws {
        let scratch = Scratch()
        let first = try Ledger.open(path: scratch.ledgerPath)
        let second = try Ledger.open(path: scratch.ledgerPath)
        let run = try first.beginRun(start())
        let perTask = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                let ledger = task % 2 == 0 ? first : second
                group.addTask {
                    let serial = "GK-\(task)"
                    try ledger.upsertDevice(DeviceSighting(serial: serial, firmware: "1.4.0", seenAt: at(Double(task))))
                    for index in 0..<perTask {
                        try ledger.recordStep(step(run, serial, "step-\(index)", from: Double(index), to: Double(index) + 0.5,
                                                   detail: "task \(task) index \(index)"))
                    }
                }
            }
            try await group.waitForAll()
        }
        let steps = try second.steps(run: run)
        #expect(steps.count == 16 * perTask)
        #expect(Set(steps.map(\.detail)).count == 16 * perTask)
        for task in 0..<16 {
            // Each task's own steps stay in the order it recorded them.
            #expect(try first.steps(serial: "GK-\(task)").map(\.step) == (0..<perTask).map { "step-\($0)" })
        }
        #expect(try first.devices().count == 16)
    }

    @Test("a second connection sees committed data, never uncommitted data")
    func secondConnectionSeesCommits() throws {
        let scratch = Scratch()
        let writer = try Ledger.open(path: scratch.ledgerPath)
        let reader = try Ledger.open(path: scratch.ledgerPath)
        let run = try writer.beginRun(start())
        try writer.recordStep(step(run, "GK-3", "identify"))
        #expect(try reader.steps(serial: "GK-3").count == 1)
        let seenDuring = try writer.write { (db) throws(LedgerError) -> Int in
            try db.execute("UPDATE devices SET region = 'x'")
            try db.execute("INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result) VALUES (?, 'GK-3', 'region', ?, ?, 0, 'done')",
                           [.integer(run.rawValue), .text(LedgerTime.format(at(3))), .text(LedgerTime.format(at(3)))])
            return try reader.steps(serial: "GK-3").count
        }
        #expect(seenDuring == 1)
        #expect(try reader.steps(serial: "GK-3").count == 2)
    }

    @Test("a write that cannot get the lock within the busy timeout fails as locked, naming the file")
    func lockedByAnotherConnection() throws {
        let scratch = Scratch()
        let holder = try Ledger.open(path: scratch.ledgerPath)
        let waiter = try Ledger.open(path: scratch.ledgerPath, busyTimeout: .milliseconds(50))
        let run = try holder.beginRun(start())
        let began = ContinuousClock.now
        let error = try holder.write { (db) throws(LedgerError) -> LedgerError? in
            do throws(LedgerError) {
                try waiter.recordStep(step(run, "GK-4", "identify"))
                return nil
            } catch {
                return error
            }
        }
        let elapsed = ContinuousClock.now - began
        #expect(elapsed >= .milliseconds(50))
        // It says how long it really waited: the whole timeout, and no more than it took.
        guard case .locked(scratch.ledgerPath, let waited) = error else {
            Issue.record("expected ledger_locked, got \(String(describing: error))")
            return
        }
        #expect(waited >= 50 && waited <= Ledger.milliseconds(elapsed), "reported \(waited) ms, took \(elapsed)")
        #expect(error?.description.contains("locked by another process") == true)
        // Once the lock is released the same write succeeds.
        try waiter.recordStep(step(run, "GK-4", "identify"))
        #expect(try holder.steps().count == 1)
    }

    @Test("a full disk fails the write as disk_full and keeps nothing of it")
    func diskFull() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        let run = try ledger.beginRun(start())
        try ledger.withConnection { (db) throws(LedgerError) in
            let pages = try db.queryInteger("PRAGMA page_count") ?? 0
            _ = try db.queryInteger("PRAGMA max_page_count = \(pages)")
        }
        let error = #expect(throws: LedgerError.self) {
            try ledger.recordStep(step(run, "GK-5", "firmware", detail: String(repeating: "x", count: 200_000)))
        }
        #expect(error == .diskFull(path: scratch.ledgerPath))
        #expect(error?.description.contains("Free space") == true)
        #expect(try ledger.steps().isEmpty)
    }
}
