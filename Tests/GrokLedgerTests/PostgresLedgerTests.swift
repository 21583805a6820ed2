import Foundation
import GrokPostgres
import PostgresTestSupport
import Synchronization
import Testing

@testable import GrokLedger

/// The shared ledger on a real PostgreSQL server (a throwaway cluster, Tests/PostgresTestSupport).
@Suite("Shared ledger on PostgreSQL", .serialized)
struct PostgresLedgerTests {
    let cluster = PostgresCluster.shared

    func fresh(_ name: String) throws -> String { cluster.conninfo(try cluster.newDatabase(name)) }

    /// One scripted run, recorded into any ledger the same way.
    func script(begin: (RunStart) throws -> RunID, device: (DeviceSighting) throws -> Void, step: (StepRecord) throws -> Void,
                smoke: (SmokeTestRecord) throws -> Void, intent: (RunID) throws -> Void, finish: (RunID) throws -> Void) throws {
        let run = try begin(start())
        try device(DeviceSighting(serial: "GRK-1", hardwareType: "grokker", hardwareRevision: "3", firmware: "1.7.3", seenAt: at(1)))
        try intent(run)
        try step(GrokLedgerTests.step(run, "GRK-1", "region", from: 1, to: 2))
        try step(GrokLedgerTests.step(run, "GRK-1", "firmware", .failed, from: 2, to: 5, detail: "link lost"))
        try smoke(SmokeTestRecord(run: run, serial: "GRK-1", afterStep: "region", startedAt: at(2), durationMilliseconds: 3013,
                                  expectedTags: ["3074257BF7194E4000001A85", "E200"], foundTags: ["E200"], readsPerSecond: 40.826,
                                  minRSSI: -61.5, passed: false))
        try device(DeviceSighting(serial: "GRK-1", region: "US", provisioned: true, seenAt: at(6)))
        try finish(run)
    }

    @Test("records and reads back exactly what the SQLite ledger does for the same run")
    func parityWithSQLite() throws {
        let scratch = Scratch()
        let sqlite = try Ledger.open(path: scratch.ledgerPath)
        let shared = try PostgresLedger.open(try fresh("parity"), station: "bench-1")
        for (recorder, intent) in [(sqlite as any RunRecorder, { (run: RunID) throws in
            _ = try sqlite.recordIntent(run: run, serial: "GRK-1", step: "region", target: "US", at: at(1)) }),
                                   (shared as any RunRecorder, { (run: RunID) throws in
            _ = try shared.recordIntent(run: run, serial: "GRK-1", step: "region", target: "US", at: at(1)) })] {
            try script(begin: { try recorder.beginRun($0) }, device: { try recorder.upsertDevice($0) },
                       step: { try recorder.recordStep($0) }, smoke: { try recorder.recordSmokeTest($0) }, intent: intent,
                       finish: { try recorder.finishRun($0, outcome: .failed, endedAt: at(7), reportPath: "/r.json") })
        }
        #expect(try shared.devices() == sqlite.devices())
        #expect(try shared.steps() == sqlite.steps())
        #expect(try shared.smokeTests() == sqlite.smokeTests())
        var sqliteRuns = try sqlite.runs(), sharedRuns = try shared.runs()
        #expect(sqliteRuns.count == 1 && sharedRuns.count == 1)
        // Keys are drawn at random; heartbeats follow the wall clock.
        sqliteRuns[0].key = ""; sharedRuns[0].key = ""
        sqliteRuns[0].lastSeenAt = nil; sharedRuns[0].lastSeenAt = nil
        #expect(sharedRuns == sqliteRuns)
        #expect(try shared.completedSteps(serial: "GRK-1", profileSHA256: profileDigest)
                == sqlite.completedSteps(serial: "GRK-1", profileSHA256: profileDigest))
        let sqliteIntents = try sqlite.intents().map { [$0.step, $0.target, $0.outcome?.rawValue ?? "open"] }
        let sharedIntents = try shared.intents().map { [$0.step, $0.target, $0.outcome?.rawValue ?? "open"] }
        #expect(sharedIntents == sqliteIntents && sharedIntents == [["region", "US", "done"]])
        #expect(try shared.stepStations(run: sharedRuns[0].id) == ["bench-1", "bench-1"])
        // Both exports name a step's run by its key, last; the shared one has its station before it.
        let sqliteCSV = scratch.file("sqlite-steps.csv"), sharedCSV = scratch.file("shared-steps.csv")
        try sqlite.export(format: .csv, to: sqliteCSV)
        try shared.export(format: .csv, to: sharedCSV)
        let sqliteRows = parseCSV(try String(contentsOfFile: sqliteCSV, encoding: .utf8))
        let sharedRows = parseCSV(try String(contentsOfFile: sharedCSV, encoding: .utf8))
        #expect(sharedRows[0] == sqliteRows[0].dropLast() + ["station", "run_key"] && sqliteRows[0].last == "run_key")
        #expect(sqliteRows.dropFirst().map(\.last) == [try sqlite.runs()[0].key, try sqlite.runs()[0].key])
        #expect(sharedRows.dropFirst().map(\.last) == [try shared.runs()[0].key, try shared.runs()[0].key])
    }

    @Test("the same Grokker on two stations at once: the second is refused, told which station holds it")
    func deviceLockAcrossStations() throws {
        let conninfo = try fresh("locks")
        let bench1 = try PostgresLedger.open(conninfo, station: "bench-1")
        let bench2 = try PostgresLedger.open(conninfo, station: "bench-2")
        let run1 = try bench1.beginRun(start())
        var second = start(); second.station = "bench-2"
        let run2 = try bench2.beginRun(second)
        #expect(try bench1.lockDevice("GRK-7", run: run1) == nil)
        let holder = try #require(try bench2.lockDevice("GRK-7", run: run2))
        #expect(holder.station == "bench-1")
        #expect(holder.runKey == (try bench1.run(run1))?.key)
        // Taking it again for the same run is fine; releasing hands it over.
        #expect(try bench1.lockDevice("GRK-7", run: run1) == nil)
        try bench1.unlockDevice("GRK-7", run: run1)
        #expect(try bench2.lockDevice("GRK-7", run: run2) == nil)
        #expect(try bench1.deviceLocks().map(\.station) == ["bench-2"])
        // A finished run's locks go with it.
        try bench2.finishRun(run2, outcome: .succeeded, endedAt: at(9), reportPath: nil)
        #expect(try bench1.deviceLocks().isEmpty)
    }

    @Test("a station killed mid-run: its locks are taken over and its run is closed abandoned by the next station to open")
    func deadStationReleases() throws {
        let conninfo = try fresh("dead")
        let doomed = try PostgresLedger.open(conninfo, station: "bench-1")
        let run = try doomed.beginRun(start())
        #expect(try doomed.lockDevice("GRK-9", run: run) == nil)
        let survivor = try PostgresLedger.open(conninfo, station: "bench-2")
        var other = start(); other.station = "bench-2"
        let run2 = try survivor.beginRun(other)
        #expect(try survivor.lockDevice("GRK-9", run: run2)?.station == "bench-1", "a live station's lock must hold")
        // The process dies: its connection ends without a word (as kill -9 ends it).
        doomed.close()
        var taken = false
        for _ in 0..<500 where !taken {
            taken = try survivor.lockDevice("GRK-9", run: run2) == nil
            if !taken { usleep(20_000) }
        }
        #expect(taken, "the dead station's lock was never released")
        let later = try PostgresLedger.open(conninfo, station: "bench-3")
        #expect(later.abandonedAtOpen.map(\.id) == [run])
        #expect(try later.run(run)?.outcome == .abandoned)
        #expect(try later.run(run2)?.outcome == nil, "a live station's run was closed")
    }

    @Test("the server restarted mid-run: every record is kept exactly once")
    func serverRestart() throws {
        // A cluster of its own: restarting the shared one would cut the other suites' connections.
        let cluster = try PostgresCluster()
        let conninfo = cluster.conninfo(try cluster.newDatabase("restart"))
        let shared = try PostgresLedger.open(conninfo, station: "bench-1")
        let run = try shared.beginRun(start())
        let restarted = Atomic<Bool>(false)
        let restarter = Thread {
            usleep(150_000)
            cluster.stop(mode: "fast")
            usleep(300_000)
            try? cluster.start()
            restarted.store(true, ordering: .releasing)
        }
        restarter.start()
        var written = 0
        while !restarted.load(ordering: .acquiring) || written < 200 {
            try shared.recordStep(step(run, "GRK-\(written % 8)", "step-\(written)", from: 1, to: 2))
            written += 1
        }
        let names = try shared.steps(run: run).map(\.step)
        #expect(names.count == written)
        #expect(Set(names).count == written)
        try shared.finishRun(run, outcome: .succeeded, endedAt: at(10), reportPath: nil)
        #expect(try shared.run(run)?.outcome == .succeeded)
    }

    @Test("a station opening while the server restarts waits for it instead of counting as offline")
    func openDuringRestart() throws {
        let cluster = try PostgresCluster()
        let conninfo = cluster.conninfo(try cluster.newDatabase("grace"))
        cluster.stop(mode: "fast")
        let restarter = Thread {
            usleep(700_000)
            try? cluster.start()
        }
        restarter.start()
        // Without the grace this open failed at once with cannotOpen (the server was down).
        let ledger = try PostgresLedger.open(conninfo, station: "bench-1", startupGraceSeconds: 60)
        let run = try ledger.beginRun(start())
        #expect(try ledger.run(run) != nil)
        #expect(PostgresConnection.ping(conninfo) == .accepting)
    }

    @Test("a running server that refuses the station (no such database) fails at once, not after the grace")
    func openRefusedForGood() throws {
        let missing = cluster.conninfo("no_such_database_\(getpid())")
        #expect(PostgresConnection.ping(missing) == .accepting)
        let started = ContinuousClock.now
        // Said as a code (the catalogs' `ledger.open.database_missing`), not in libpq's English.
        #expect(throws: LedgerError.cannotOpen(path: missing, detail: "database_missing")) {
            _ = try PostgresLedger.open(missing, station: "bench-1", startupGraceSeconds: 120)
        }
        // Retrying would have taken the whole 120 s grace.
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(PostgresConnection.ping("host=/nonexistent-socket-dir dbname=x connect_timeout=1") == .noResponse)
        #expect(PostgresConnection.ping("no_such_keyword=1") == .badParameters)
        #expect(throws: LedgerError.cannotOpen(path: "no_such_keyword=1", detail: "bad_connection_string")) {
            _ = try PostgresLedger.open("no_such_keyword=1", station: "bench-1", startupGraceSeconds: 120)
        }
    }

    @Test("a refused connection is named by a code; a refusal it does not know keeps the server's words")
    func connectFailureCodes() {
        let accepting = PostgresConnection.ServerState.accepting
        #expect(PostgresLedger.connectFailure(state: .noResponse, message: "connection to server on socket failed").text == "server_not_answering")
        #expect(PostgresLedger.connectFailure(state: .rejecting, message: "the database system is starting up").text == "server_rejecting")
        // A ping made just after the server came up says accepting; the refusal still was a start-up.
        #expect(PostgresLedger.connectFailure(state: accepting, message: "FATAL:  the database system is starting up").text == "server_rejecting")
        #expect(PostgresLedger.connectFailure(state: accepting, message: "FATAL:  sorry, too many clients already").code == "server_busy")
        #expect(PostgresLedger.connectFailure(state: accepting, message: "FATAL:  role \"grok\" does not exist").text == "role_missing")
        #expect(PostgresLedger.connectFailure(state: accepting, message: "FATAL:  password authentication failed for user \"grok\"").text
                == "authentication_failed")
        #expect(PostgresLedger.connectFailure(state: accepting, message: "FATAL:  no pg_hba.conf entry for host").text == "not_permitted")
        let other = PostgresLedger.connectFailure(state: accepting, message: "FATAL:  la base está en modo de solo lectura")
        #expect(other.code == "server_refused" && other.text == "FATAL:  la base está en modo de solo lectura")
    }

    @Test("stations opening a new shared ledger at once create it once")
    func concurrentCreation() throws {
        let conninfo = try fresh("create")
        let failures = Mutex<[String]>([])
        let threads = (0..<6).map { index in
            Thread {
                do { _ = try PostgresLedger.open(conninfo, station: "bench-\(index)") } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        threads.forEach { $0.start() }
        let deadline = Date().addingTimeInterval(60)
        while threads.contains(where: { !$0.isFinished }), Date() < deadline { usleep(10_000) }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let database = String(conninfo.split(separator: "=").last!)
        #expect(try cluster.psql(database, "SELECT version FROM grokctl_schema").trimmingCharacters(in: .whitespacesAndNewlines)
                == String(PostgresSchema.currentVersion))
    }

    @Test("a version 5 shared ledger migrates: steps a stop signal ended, recorded failed, become interrupted; other failures stay failed")
    func versionFiveMigrates() throws {
        let database = try cluster.newDatabase("v5")
        do {
            let db = try PostgresConnection(cluster.conninfo(database), applicationName: "test")
            try PostgresSchema.migrate(db, target: database, migrations: Array(PostgresSchema.migrations.prefix(2)))
        }
        #expect(try cluster.psql(database, "SELECT version FROM grokctl_schema").trimmingCharacters(in: .whitespacesAndNewlines) == "5")
        var script = """
            INSERT INTO runs (run_key, kind, profile_name, profile_sha256, station, operator, started_at)
                VALUES ('20240501-100000-abcd', 'rollout', 'p', '\(profileDigest)', 'bench-1', 'o', '2024-05-01T10:00:00.000Z');

            """
        for (n, code) in ["fleet_update_unfinished", "fleet_interrupted", "fleet_reader_failed"].enumerated() {
            script += """
                INSERT INTO steps (run_id, station, serial, step, started_at, ended_at, duration_ms, result, code)
                    VALUES (1, 'bench-1', 'GK-\(n)', 'firmware', '2024-05-01T10:00:0\(n).000Z', '2024-05-01T10:00:09.000Z', 8000,
                            'failed', '\(code)');

                """
        }
        _ = try cluster.psql(database, script)
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "bench-1")
        #expect(try shared.steps().map(\.result) == [.interrupted, .interrupted, .failed])
        #expect(try cluster.psql(database, "SELECT version FROM grokctl_schema").trimmingCharacters(in: .whitespacesAndNewlines)
                == String(PostgresSchema.currentVersion))
    }

    @Test("a version 7 shared ledger migrates to 8: its steps read without a USB port; a step's USB port is stored and read back")
    func versionSevenMigratesToUSBPaths() throws {
        let database = try cluster.newDatabase("v7")
        do {
            let db = try PostgresConnection(cluster.conninfo(database), applicationName: "test")
            try PostgresSchema.migrate(db, target: database, migrations: Array(PostgresSchema.migrations.prefix(4)))
        }
        #expect(try cluster.psql(database, "SELECT version FROM grokctl_schema").trimmingCharacters(in: .whitespacesAndNewlines) == "7")
        _ = try cluster.psql(database, """
            INSERT INTO runs (run_key, kind, profile_name, profile_sha256, station, operator, started_at)
                VALUES ('20240501-100000-abcd', 'provision', 'p', '\(profileDigest)', 'bench-1', 'o', '2024-05-01T10:00:00.000Z');
            INSERT INTO steps (run_id, station, serial, step, started_at, ended_at, duration_ms, result)
                VALUES (1, 'bench-1', 'GK-1', 'region', '2024-05-01T10:00:01.000Z', '2024-05-01T10:00:02.000Z', 1000, 'done');
            """)
        let shared = try PostgresLedger.open(cluster.conninfo(database), station: "bench-1")
        #expect(PostgresSchema.currentVersion == 8)
        #expect(try shared.steps().map(\.usbPath) == [nil])
        let run = try shared.beginRun(start())
        var onUSB = step(run, "GK-2", "region")
        onUSB.usbPath = "1-1.4"
        try shared.recordStep(onUSB)
        #expect(try shared.steps(run: run, serial: nil).map(\.usbPath) == ["1-1.4"])
        var failedOnUSB = step(run, "GK-3", "smoke_test", .failed)
        failedOnUSB.usbPath = "1-1.2"
        try shared.recordStep(failedOnUSB)
        #expect(try shared.fleetSnapshot().failedSteps.map(\.usbPath) == ["1-1.2"], "the fleet's view has the port it failed on")
        #expect(try cluster.psql(database, "SELECT version FROM grokctl_schema").trimmingCharacters(in: .whitespacesAndNewlines) == "8")
    }

    @Test("a version 6 shared ledger migrates to 7; what one station learned about a link is what another reads")
    func linkSettingsAreShared() throws {
        let database = try cluster.newDatabase("v6")
        do {
            let db = try PostgresConnection(cluster.conninfo(database), applicationName: "test")
            try PostgresSchema.migrate(db, target: database, migrations: Array(PostgresSchema.migrations.prefix(3)))
        }
        #expect(try cluster.psql(database, "SELECT version FROM grokctl_schema").trimmingCharacters(in: .whitespacesAndNewlines) == "6")
        let one = try PostgresLedger.open(cluster.conninfo(database), station: "bench-1")
        #expect(PostgresSchema.currentVersion >= 7)
        let learned = LinkSettingRecord(subject: .soundCard("0d8c:0014"), samplesPerBit: 10, sampleRate: 48_000, reason: .autoconfig,
                                        station: "", recordedAt: Date(timeIntervalSince1970: 1_700_000_000))
        try one.recordLinkSetting(learned)
        let two = try PostgresLedger.open(cluster.conninfo(database), station: "bench-2")
        var expected = learned
        expected.station = "bench-1"
        #expect(try two.linkSettings() == [expected])
    }

    @Test("a database of another application, a newer schema, and no server are each refused clearly")
    func refusals() throws {
        let foreign = try cluster.newDatabase("foreign")
        try cluster.psql(foreign, "CREATE TABLE invoices (id int)")
        #expect(throws: LedgerError.notALedger(path: cluster.conninfo(foreign), applicationID: 0)) {
            _ = try PostgresLedger.open(cluster.conninfo(foreign), station: "bench-1")
        }
        let newer = try cluster.newDatabase("newer")
        _ = try PostgresLedger.open(cluster.conninfo(newer), station: "bench-1")
        try cluster.psql(newer, "UPDATE grokctl_schema SET version = 99")
        #expect(throws: LedgerError.newerSchema(path: cluster.conninfo(newer), found: 99, supported: PostgresSchema.currentVersion)) {
            _ = try PostgresLedger.open(cluster.conninfo(newer), station: "bench-1")
        }
        do {
            _ = try PostgresLedger.open("host=/nonexistent-socket-dir user=grok password=hunter2 dbname=x connect_timeout=2", station: "bench-1",
                                        startupGraceSeconds: 0)
            Issue.record("opened a ledger on no server")
        } catch {
            guard case .cannotOpen(let path, _) = error else { Issue.record("\(error)"); return }
            #expect(path.contains("password=***") && !path.contains("hunter2"))
        }
    }
}
