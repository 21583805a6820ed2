import Foundation
import GrokBasics
import GrokTestSupport
import Testing
@testable import GrokLedger

func bytes(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { [UInt8]($0) } }

func write(_ bytes: [UInt8], _ path: String) throws {
    try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(),
                                            withIntermediateDirectories: true)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// A closed ledger with `runs` finished runs of `stepsPerRun` steps and a smoke test each,
/// over eight devices: enough rows for every table to span several pages.
func populatedLedger(_ path: String, runs: Int = 6, stepsPerRun: Int = 60) throws {
    let ledger = try Ledger.open(path: path, heartbeatInterval: nil)
    for r in 0..<runs {
        let base = Double(r * 1000)
        let run = try ledger.beginRun(start(at: base))
        for s in 0..<stepsPerRun {
            let serial = "GK-\(s % 8)"
            try ledger.upsertDevice(DeviceSighting(serial: serial, firmware: "1.4.\(r)", region: "EU", seenAt: at(base + 1)))
            try ledger.recordStep(step(run, serial, "step-\(s)", from: base + Double(s), to: base + Double(s) + 0.5,
                                       detail: String(repeating: "detail \(r)/\(s) ", count: 4)))
        }
        try ledger.recordSmokeTest(SmokeTestRecord(run: run, serial: "GK-0", afterStep: "region", startedAt: at(base + 900),
                                                   durationMilliseconds: 40, expectedTags: ["E200"], foundTags: ["E200"],
                                                   readsPerSecond: 12.5, minRSSI: -61, passed: true))
        try ledger.finishRun(run, outcome: .succeeded, endedAt: at(base + 999), reportPath: nil)
    }
}

@Suite("Ledger: verified at open")
struct OpenVerificationTests {
    @Test("every page of a ledger overwritten with random bytes, in turn: refused at open with the recovery hint, never written")
    func everyPageCorrupted() throws {
        let scratch = Scratch()
        try populatedLedger(scratch.ledgerPath)
        let original = try #require(bytes(scratch.ledgerPath))
        #expect(!FileManager.default.fileExists(atPath: scratch.ledgerPath + "-wal"), "the close checkpoints the WAL")
        let pageSize = 4096
        let pages = original.count / pageSize
        #expect(pages >= 20, "\(pages) pages")
        var random = SplitMix64(seed: 0xC0DE_0001)
        for page in 0..<pages {
            var damaged = original
            damaged.replaceSubrange(page * pageSize..<(page + 1) * pageSize, with: random.bytes(pageSize))
            let path = scratch.file("page-\(page)/ledger.sqlite")
            try write(damaged, path)
            let error = #expect(throws: LedgerError.self, "page \(page + 1) of \(pages)") {
                try Ledger.open(path: path, heartbeatInterval: nil)
            }
            #expect(["ledger_corrupt", "ledger_not_sqlite"].contains(error?.code ?? ""), "page \(page + 1): \(String(describing: error))")
            #expect(error?.description.contains("grokctl ledger recover") == true, "page \(page + 1)")
            #expect(bytes(path) == damaged, "page \(page + 1) was written to")
            // Read-only opens (ledger show, export) refuse it too.
            #expect(throws: LedgerError.self, "page \(page + 1), read-only") { try Ledger.open(path: path, readOnly: true) }
        }
    }

    @Test("a damaged -wal that SQLite would silently cut short is refused; the undamaged copy opens with every step")
    func damagedWAL() throws {
        let scratch = Scratch()
        // Kept open so nothing is checkpointed: every step is in the -wal.
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        let run = try ledger.beginRun(start())
        for s in 0..<80 { try ledger.recordStep(step(run, "GK-\(s % 4)", "step-\(s)", detail: "detail \(s)")) }
        let main = try #require(bytes(scratch.ledgerPath))
        let wal = try #require(bytes(scratch.ledgerPath + "-wal"))
        let scan = WALScan.scan(wal)
        #expect(scan.headerValid && scan.commits >= 80 && scan.firstBadFrame == nil, "\(scan)")

        let intact = scratch.file("intact/ledger.sqlite")
        try write(main, intact)
        try write(wal, intact + "-wal")
        #expect(try Ledger.open(path: intact, heartbeatInterval: nil).steps().count == 80)

        // One byte changed in a page of a frame a third of the way in.
        let frameSize = 24 + 4096
        for (index, frame) in [scan.frames / 3, scan.frames / 2, scan.frames - 5].enumerated() {
            var damaged = wal
            damaged[32 + frame * frameSize + 24 + 1000] ^= 0x5A
            let path = scratch.file("damaged-\(index)/ledger.sqlite")
            try write(main, path)
            try write(damaged, path + "-wal")
            #expect(WALScan.scan(damaged).isDamaged)
            let error = #expect(throws: LedgerError.self) { try Ledger.open(path: path, heartbeatInterval: nil) }
            #expect(error?.code == "ledger_corrupt")
            #expect(error?.description.contains("write-ahead log") == true, "\(String(describing: error))")
            #expect(bytes(path) == main && bytes(path + "-wal") == damaged, "the damaged ledger was written to")
            #expect(throws: LedgerError.self) { try Ledger.open(path: path, readOnly: true) }
        }
    }

    @Test("a 0-byte file is refused and left as it was")
    func emptyFileRefused() throws {
        let scratch = Scratch()
        try write([], scratch.ledgerPath)
        #expect(throws: LedgerError.empty(path: scratch.ledgerPath)) { try Ledger.open(path: scratch.ledgerPath) }
        #expect(throws: LedgerError.empty(path: scratch.ledgerPath)) { try Ledger.open(path: scratch.ledgerPath, readOnly: true) }
        #expect(bytes(scratch.ledgerPath) == [])
        let siblings = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: scratch.ledgerPath).deletingLastPathComponent().path)
        #expect(siblings == ["ledger.sqlite"])
    }

    @Test("another application's SQLite files are refused byte for byte unchanged, still in their own journal mode",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func foreignFilesUnchanged() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true)
        for (name, sql, id) in [("with-id.db", "PRAGMA application_id = 1234; CREATE TABLE t (x); INSERT INTO t VALUES (1);", Int32(1234)),
                                ("without-id.db", "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('a');", 0),
                                ("versioned.db", "PRAGMA user_version = 1;", 0)] {
            let path = scratch.file(name)
            let shell = try Process.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), arguments: [path, sql])
            shell.waitUntilExit()
            let before = try #require(bytes(path))
            #expect(before[18] == 1, "\(name) starts in rollback-journal mode")
            #expect(throws: LedgerError.notALedger(path: path, applicationID: id)) { try Ledger.open(path: path) }
            #expect(bytes(path) == before, "\(name) was modified")
        }
    }

    @Test("read-only opens write nothing: no migration, no closing of runs, writes refused")
    func readOnlyWritesNothing() throws {
        let scratch = Scratch()
        do {
            let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
            _ = try ledger.beginRun(start())
            let before = try #require(bytes(scratch.ledgerPath))
            let reader = try Ledger.open(path: scratch.ledgerPath, readOnly: true)
            #expect(try reader.runs().count == 1)
            #expect(throws: LedgerError.self) { try reader.beginRun(start()) }
            #expect(bytes(scratch.ledgerPath) == before)
        }
        #expect(throws: LedgerError.self) { try Ledger.open(path: scratch.file("none/ledger.sqlite"), readOnly: true) }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("none")))
    }

    @Test("ledger check passes a sound ledger and names the problem of a damaged one")
    func check() throws {
        let scratch = Scratch()
        try populatedLedger(scratch.ledgerPath, runs: 2, stepsPerRun: 10)
        let report = try Ledger.check(path: scratch.ledgerPath)
        #expect(report.rows[.steps] == 20 && report.rows[.runs] == 2 && report.openRuns == 0)
        #expect(report.schemaVersion == Ledger.schemaVersion)
        var damaged = try #require(bytes(scratch.ledgerPath))
        let page = damaged.count / 4096 - 1
        for i in 0..<4096 { damaged[page * 4096 + i] = UInt8(truncatingIfNeeded: i * 7) }
        try write(damaged, scratch.ledgerPath)
        let error = #expect(throws: LedgerError.self) { try Ledger.check(path: scratch.ledgerPath) }
        #expect(error?.code == "ledger_corrupt")
    }
}

@Suite("Ledger: recovery")
struct RecoveryTests {
    @Test("recover salvages every readable row of a ledger damaged at any page, says what was lost, and the result is sound")
    func recoverEveryPage() throws {
        let scratch = Scratch()
        try populatedLedger(scratch.ledgerPath)
        let original = try #require(bytes(scratch.ledgerPath))
        let reference = try Ledger.open(path: scratch.ledgerPath, readOnly: true)
        let allSteps = try reference.steps()
        let allRuns = try reference.runs()
        let pages = original.count / 4096
        var random = SplitMix64(seed: 0xC0DE_0002)
        // The pages of the table of tables (page 1 and those the schema spilled into):
        // without them nothing can be read, and recovery must refuse rather than salvage.
        let schemaPages = Set(try SQLiteConnection(path: scratch.ledgerPath, busyTimeoutMilliseconds: 5000, readOnly: true)
            .query("SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'") { Int($0.integer(0) ?? 0) })
        #expect(schemaPages.contains(1))
        var lostSomething = 0
        for page in 1..<pages {    // page 1 (index 0) holds the file header as well: the first-page case
            var damaged = original
            damaged.replaceSubrange(page * 4096..<(page + 1) * 4096, with: random.bytes(4096))
            let path = scratch.file("page-\(page)/ledger.sqlite")
            try write(damaged, path)
            let output = scratch.file("page-\(page)/recovered.sqlite")
            if schemaPages.contains(page + 1) {
                let error = #expect(throws: LedgerError.self, "page \(page + 1) holds the schema") {
                    try Ledger.recover(from: path, to: output)
                }
                #expect(error?.code == "ledger_corrupt")
                #expect(!FileManager.default.fileExists(atPath: output))
                continue
            }
            let report = try Ledger.recover(from: path, to: output)
            #expect(bytes(path) == damaged, "page \(page + 1): the damaged ledger was written to")
            #expect(report.problem != nil, "page \(page + 1): the damage was not noticed")
            _ = try Ledger.check(path: output)
            let recovered = try Ledger.open(path: output, heartbeatInterval: nil)
            // Every step either came back exactly or is listed as lost.
            let back = try recovered.steps()
            let lostSteps = report.lost[.steps] ?? []
            #expect(Int64(back.count) + report.lostCount(.steps) == Int64(allSteps.count), "page \(page + 1): \(report)")
            for (index, record) in allSteps.enumerated() where !lostSteps.contains(where: { $0.contains(Int64(index + 1)) }) {
                #expect(back.contains(record), "page \(page + 1): step \(index + 1) neither recovered nor reported lost")
            }
            let runs = try recovered.runs().filter { !report.placeholderRuns.contains($0.id.rawValue) }
            #expect(Int64(runs.count) + report.lostCount(.runs) == Int64(allRuns.count), "page \(page + 1): \(report)")
            if !report.isComplete { lostSomething += 1 }
        }
        #expect(lostSomething > 0, "no page held rows")
    }

    @Test("recover keeps the rollout stages: a halted stage, its events and its units' results come back as they were")
    func recoverKeepsRolloutStages() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        var rollout = start(.rollout)
        rollout.key = "20250115-120000-aa01"
        let run = try ledger.beginRun(rollout)
        let check = StageCheck(rolloutID: "fw-1.8", release: "1.8.0", profilePercentage: 25,
                               rule: RolloutHaltRule(afterDevices: 2, maxFailureRate: 0.4), station: "bench-1", actor: "op",
                               runKey: "20250115-120000-aa01", now: at(1))
        _ = try ledger.checkRolloutStage(check)
        for unit in 0..<2 {
            _ = try ledger.recordRolloutResult(RolloutResult(rolloutID: "fw-1.8", runKey: "20250115-120000-aa01", station: "bench-1",
                                                             serial: "GK-\(unit)", percentage: 25, outcome: .failed, hardwareRevision: "3",
                                                             firmwareAfter: "1.7.3", finishedAt: at(Double(2 + unit))), check)
        }
        try ledger.finishRun(run, outcome: .failed, endedAt: at(5), reportPath: nil)
        let stage = try #require(try ledger.rolloutStage("fw-1.8"))
        #expect(stage.state == .halted)
        let events = try ledger.stageEvents("fw-1.8"), results = try ledger.rolloutResults("fw-1.8")
        #expect(events.count == 2 && results.count == 2)

        let output = scratch.file("recovered.sqlite")
        let report = try Ledger.recover(from: scratch.ledgerPath, to: output)
        #expect(report.isComplete && report.recovered[.rolloutStages] == 1 && report.recovered[.stageEvents] == 2
                && report.recovered[.rolloutResults] == 2, "\(report)")
        let recovered = try Ledger.open(path: output, readOnly: true)
        #expect(try recovered.rolloutStage("fw-1.8") == stage)
        #expect(try recovered.stageEvents("fw-1.8") == events)
        #expect(try recovered.rolloutResults("fw-1.8") == results)
    }

    @Test("recover reports the transactions a damaged -wal lost and keeps the rest")
    func recoverDamagedWAL() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        let run = try ledger.beginRun(start())
        for s in 0..<40 { try ledger.recordStep(step(run, "GK-1", "step-\(s)")) }
        var wal = try #require(bytes(scratch.ledgerPath + "-wal"))
        let main = try #require(bytes(scratch.ledgerPath))
        let scan = WALScan.scan(wal)
        wal[32 + (scan.frames / 2) * (24 + 4096) + 24 + 100] ^= 0xFF
        let path = scratch.file("copy/ledger.sqlite")
        try write(main, path)
        try write(wal, path + "-wal")
        let report = try Ledger.recover(from: path, to: scratch.file("copy/recovered.sqlite"))
        #expect(report.walCommitsLost > 0)
        #expect(!report.isComplete)
        let steps = try Ledger.open(path: report.output, readOnly: true).steps()
        #expect(steps.count > 0 && steps.count < 40)
        #expect(steps.map(\.step) == (0..<steps.count).map { "step-\($0)" })
    }

    @Test("recover refuses to overwrite an existing file")
    func recoverRefusesExistingOutput() throws {
        let scratch = Scratch()
        try populatedLedger(scratch.ledgerPath, runs: 1, stepsPerRun: 2)
        try write([1, 2, 3], scratch.file("taken"))
        #expect(throws: LedgerError.self) { try Ledger.recover(from: scratch.ledgerPath, to: scratch.file("taken")) }
        #expect(bytes(scratch.file("taken")) == [1, 2, 3])
    }
}

@Suite("Ledger: runs always close")
struct InterruptedRunTests {
    @Test("a run whose process is gone is closed as interrupted by the next open, at the time it was last seen alive")
    func abandonedRunClosed() throws {
        let scratch = Scratch()
        var owner: Ledger? = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        let run = try #require(owner).beginRun(start())
        try owner?.recordStep(step(run, "GK-1", "identify", from: 1, to: 3))
        // Recording is a sign of life, on the wall clock; so is the heartbeat.
        #expect(try owner?.run(run)?.lastSeenAt.map { $0 > at(3) } == true)
        let alive = LedgerTime.rounded(Date().addingTimeInterval(3600))
        owner?.beat(at: alive)
        // While its owner lives, another open leaves it open.
        let other = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        #expect(other.interruptedAtOpen.isEmpty)
        #expect(try other.run(run)?.endedAt == nil)
        #expect(try other.run(run)?.lastSeenAt == alive)
        // The owner goes away without finishing (as a killed process does: its lock goes).
        owner = nil
        // Other tests in this process start subprocesses all the time; a child between its
        // fork and its exec briefly shares every descriptor, the run lock's too, so the lock
        // can outlive the owner by that instant. A dead process's lock cannot come back, so
        // the next open that finds it gone is the one to check.
        var reopened = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        for _ in 0..<50 where reopened.interruptedAtOpen.isEmpty {
            Thread.sleep(forTimeInterval: 0.1)
            reopened = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        }
        let closed = try #require(try reopened.run(run))
        #expect(closed.outcome == .abandoned)
        #expect(closed.endedAt == alive)
        #expect(reopened.interruptedAtOpen.map(\.id) == [run])
        #expect(throws: LedgerError.runFinished(path: scratch.ledgerPath, run: run.rawValue)) {
            try reopened.recordStep(step(run, "GK-1", "region"))
        }
    }

    @Test("the heartbeat moves while the run is open and stops when it finishes")
    func heartbeat() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: .milliseconds(20))
        let run = try ledger.beginRun(start())
        let deadline = Date().addingTimeInterval(10)
        var seen = try ledger.run(run)?.lastSeenAt
        while seen == at(0), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
            seen = try ledger.run(run)?.lastSeenAt
        }
        #expect(seen.map { $0 > at(0) } == true, "no heartbeat in 10 s")
        try ledger.finishRun(run, outcome: .succeeded, endedAt: Date(), reportPath: nil)
    }

    @Test("eight connections creating one new ledger at once all succeed, and it is made once")
    func concurrentCreation() async throws {
        for trial in 0..<5 {
            let scratch = Scratch()
            let path = scratch.ledgerPath
            let results = await withTaskGroup(of: Result<Int64, LedgerError>.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        Result { () throws(LedgerError) -> Int64 in
                            let ledger = try Ledger.open(path: path, busyTimeout: .seconds(10), heartbeatInterval: nil)
                            let run = try ledger.beginRun(start())
                            try ledger.finishRun(run, outcome: .succeeded, endedAt: at(1), reportPath: nil)
                            return run.rawValue
                        }
                    }
                }
                var all: [Result<Int64, LedgerError>] = []
                for await result in group { all.append(result) }
                return all
            }
            let ids = results.compactMap { try? $0.get() }
            #expect(ids.count == 8, "trial \(trial): \(results)")
            #expect(Set(ids) == Set(1...8))
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
                .filter { $0.contains(".new-") }
            #expect(leftovers.isEmpty)
        }
    }

    @Test("stale temporary files of a dead builder are removed at open; a live builder's are kept")
    func staleTemporaries() throws {
        let scratch = Scratch()
        try populatedLedger(scratch.ledgerPath, runs: 1, stepsPerRun: 1)
        let stale = scratch.ledgerPath + ".new-\(try exitedProcessID())-42"
        let live = scratch.ledgerPath + ".new-\(getpid())-43"
        for file in [stale, stale + "-journal", live] { try write([0], file) }
        _ = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(!FileManager.default.fileExists(atPath: stale + "-journal"))
        #expect(FileManager.default.fileExists(atPath: live))
    }
}

@Suite("Ledger: schema 1 to 2")
struct SchemaTwoTests {
    @Test("a version 1 ledger is read as it is when opened read-only, and a writable open migrates it, keeping every row and closing its open runs")
    func versionOneLedger() throws {
        let scratch = Scratch()
        do {
            // The file a grokctl of schema 1 made: one finished run and one left open by a kill.
            let connection = try olderLedger(at: scratch.ledgerPath, version: 1)
            try connection.executeScript("""
                INSERT INTO runs (kind, profile_name, profile_sha256, station, operator, started_at, ended_at, outcome)
                    VALUES ('provision', 'p', '\(profileDigest)', 's', 'o', '2024-05-01T10:00:00.000Z', '2024-05-01T10:05:00.000Z', 'succeeded');
                INSERT INTO runs (kind, profile_name, profile_sha256, station, operator, started_at)
                    VALUES ('rollout', 'p', '\(profileDigest)', 's', 'o', '2024-05-02T10:00:00.000Z');
                INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result)
                    VALUES (2, 'GK-1', 'firmware', '2024-05-02T10:00:01.000Z', '2024-05-02T10:00:09.000Z', 8000, 'done');
                """)
        }
        let reader = try Ledger.open(path: scratch.ledgerPath, readOnly: true)
        #expect(reader.fileVersion == 1)
        #expect(try reader.runs().map(\.outcome) == [nil, .succeeded])
        #expect(try reader.runs().allSatisfy { $0.lastSeenAt == nil })
        let exported = scratch.file("runs.csv")
        try reader.export(format: .csv, to: exported, table: .runs)
        #expect(try String(contentsOfFile: exported, encoding: .utf8).hasPrefix("id,kind,profile_name,profile_sha256,station,operator,started_at,ended_at,outcome,report_path,heartbeat_at,run_key\r\n"))

        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        let runs = try ledger.runs()
        #expect(runs.map(\.id.rawValue) == [2, 1])
        #expect(runs[1].outcome == .succeeded && runs[1].endedAt == LedgerTime.parse("2024-05-01T10:05:00.000Z"))
        // Left open before heartbeats existed: it ends at its start.
        #expect(runs[0].outcome == .abandoned && runs[0].endedAt == runs[0].startedAt)
        #expect(ledger.interruptedAtOpen.map(\.id.rawValue) == [2])
        #expect(try ledger.steps(run: RunID(rawValue: 2)).map(\.step) == ["firmware"])
        // The rebuilt table still numbers on from the old one, and foreign keys hold.
        #expect(try ledger.beginRun(start()).rawValue == 3)
        #expect(throws: LedgerError.self) { try ledger.recordStep(step(RunID(rawValue: 99), "GK-1", "x")) }
        _ = try Ledger.check(path: scratch.ledgerPath)
    }
}
