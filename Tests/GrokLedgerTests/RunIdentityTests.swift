import Foundation
import GrokBasics
import Testing

@testable import GrokLedger

/// Issue 12 item 4: the id a run prints is the ledger's key for it, the ledger points to the
/// report, and run outcomes have one set of codes.
@Suite("Ledger: one run identity (schema 4)")
struct RunIdentityTests {
    @Test("the key a run is begun with is stored, unique, and finds the run; a key made by the ledger has the printed form")
    func keyIsTheRunsIdentity() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        var given = start()
        given.key = "20240501-104000-2be6"
        let run = try ledger.beginRun(given)
        #expect(try ledger.run(run)?.key == "20240501-104000-2be6")
        #expect(try ledger.run(key: "20240501-104000-2be6")?.id == run)
        #expect(try ledger.run(key: "20240501-104000-0000") == nil)
        #expect(throws: LedgerError.duplicateRun(path: scratch.ledgerPath, run: "20240501-104000-2be6")) {
            try ledger.beginRun(given)
        }
        // Made by the ledger: the UTC start to the second, then four hex digits; never a duplicate,
        // even for many runs begun in the same second.
        var keys: Set<String> = []
        for _ in 0..<300 { keys.insert(try #require(try ledger.run(try ledger.beginRun(start()))).key) }
        #expect(keys.count == 300)
        #expect(keys.allSatisfy { $0.range(of: #"^20240501-104000-[0-9a-f]{4}$"#, options: .regularExpression) != nil }, "\(keys.first!)")
    }

    @Test("a finished run accepts its report's path, and the export names the run by its key")
    func reportPathIsRecorded() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        var given = start()
        given.key = "20240501-104000-00ff"
        let run = try ledger.beginRun(given)
        try ledger.finishRun(run, outcome: .incomplete, endedAt: at(5), reportPath: nil)
        #expect(try ledger.run(run)?.reportPath == nil)
        try ledger.recordReport(run, path: "/var/reports/20240501-104000-00ff.json")
        #expect(try ledger.run(run)?.reportPath == "/var/reports/20240501-104000-00ff.json")
        #expect(throws: LedgerError.unknownRun(path: scratch.ledgerPath, run: 99)) {
            try ledger.recordReport(RunID(rawValue: 99), path: "/x.json")
        }
        let csv = scratch.file("runs.csv")
        try ledger.export(format: .csv, to: csv, table: .runs)
        let rows = parseCSV(try String(contentsOfFile: csv, encoding: .utf8))
        #expect(rows[0].last == "run_key" && rows[1].last == "20240501-104000-00ff")
        #expect(rows[1][rows[0].firstIndex(of: "outcome")!] == "incomplete")
        #expect(rows[1][rows[0].firstIndex(of: "report_path")!] == "/var/reports/20240501-104000-00ff.json")
    }

    @Test("the steps, smoke tests and intents exports name each row's run by its key, after run_id, the internal number")
    func rowsExportTheirRunKey() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        var given = start()
        given.key = "20240501-104000-00ff"
        let run = try ledger.beginRun(given)
        try ledger.recordStep(step(run, "GK-1", "region"))
        try ledger.recordSmokeTest(SmokeTestRecord(run: run, serial: "GK-1", afterStep: "region", startedAt: at(2), durationMilliseconds: 3000,
                                                   expectedTags: ["E200"], foundTags: ["E200"], readsPerSecond: 40, minRSSI: -60, passed: true))
        _ = try ledger.recordIntent(run: run, serial: "GK-1", step: "firmware", target: "1.8.0", at: at(3))
        for table in [LedgerTable.steps, .smokeTests, .intents] {
            let csv = scratch.file("\(table.rawValue).csv")
            try ledger.export(format: .csv, to: csv, table: table)
            let rows = parseCSV(try String(contentsOfFile: csv, encoding: .utf8))
            #expect(rows[0].last == "run_key" && rows.count == 2, "\(table): \(rows)")
            #expect(rows[1].last == "20240501-104000-00ff", "\(table): \(rows)")
            #expect(rows[1][rows[0].firstIndex(of: "run_id")!] == String(run.rawValue), "\(table)")
        }
        let json = scratch.file("ledger.json")
        try ledger.export(format: .json, to: json)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        #expect((object["steps"] as? [[String: Any]])?.first?["run_key"] as? String == "20240501-104000-00ff")
    }

    @Test("a schema 3 ledger migrates: every run gets a key of its own, old outcome words become today's codes, rows and numbering kept")
    func schemaThreeMigrates() throws {
        let scratch = Scratch()
        do {
            // The file a grokctl of schema 3 made: runs ended with each of the old outcome words.
            let connection = try olderLedger(at: scratch.ledgerPath, version: 3)
            var script = ""
            for (n, outcome) in ["succeeded", "partial", "failed", "halted", "cancelled", "interrupted"].enumerated() {
                script += """
                    INSERT INTO runs (kind, profile_name, profile_sha256, station, operator, started_at, ended_at, outcome, report_path)
                        VALUES ('provision', 'p', '\(profileDigest)', 's', 'o', '2024-05-01T10:0\(n):03.250Z',
                                '2024-05-01T10:0\(n):09.000Z', '\(outcome)', \(n == 0 ? "'/r/1.json'" : "NULL"));

                    """
            }
            script += """
                INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result)
                    VALUES (2, 'GK-1', 'firmware', '2024-05-01T10:01:04.000Z', '2024-05-01T10:01:08.000Z', 4000, 'postponed');
                INSERT INTO intents (run_id, serial, step, target, recorded_at) VALUES (6, 'GK-1', 'region', 'EU', '2024-05-01T10:05:04.000Z');
                """
            try connection.executeScript(script)
        }
        let expected: [GrokLedger.RunOutcome] = [.succeeded, .incomplete, .failed, .incomplete, .interrupted, .abandoned]
        let keys = (0..<6).map { "20240501-100\($0)03-r\($0 + 1)" }

        // Read-only: read as schema 4 would have it, nothing written.
        let before = try Data(contentsOf: URL(fileURLWithPath: scratch.ledgerPath))
        let reader = try Ledger.open(path: scratch.ledgerPath, readOnly: true)
        #expect(reader.fileVersion == 3)
        #expect(try reader.runs().reversed().map(\.key) == keys)
        #expect(try reader.runs().reversed().map(\.outcome) == expected)
        #expect(try reader.run(key: "20240501-100103-r2")?.id.rawValue == 2)
        // Its export names a step's run by the key it would migrate to.
        let csv = scratch.file("steps.csv")
        try reader.export(format: .csv, to: csv, table: .steps)
        let exported = parseCSV(try String(contentsOfFile: csv, encoding: .utf8))
        #expect(exported[0].last == "run_key" && exported.count == 2 && exported[1].last == "20240501-100103-r2", "\(exported)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.ledgerPath)) == before)

        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        #expect(try ledger.withConnection { (db) throws(LedgerError) in try db.queryInteger("PRAGMA user_version") } == Int64(Schema.currentVersion))
        let runs = try ledger.runs().reversed() as [RunRecord]
        #expect(runs.map(\.key) == keys)
        #expect(runs.map(\.outcome) == expected)
        #expect(runs[0].reportPath == "/r/1.json")
        #expect(try ledger.run(key: "20240501-100103-r2")?.id.rawValue == 2)
        #expect(try ledger.steps(run: RunID(rawValue: 2)).map(\.result) == [.postponed])
        #expect(try ledger.intents(serial: "GK-1", openOnly: true).map(\.run.rawValue) == [6])
        // Numbering goes on, and a new run's key is the printed form.
        var next = start()
        next.key = "20240502-080000-beef"
        #expect(try ledger.beginRun(next).rawValue == 7)
        #expect(try ledger.run(key: "20240502-080000-beef")?.id.rawValue == 7)
        #expect(try Ledger.check(path: scratch.ledgerPath).schemaVersion == Schema.currentVersion)
    }

    @Test("a schema 5 ledger migrates: steps a stop signal ended, recorded failed, become interrupted; other failures stay failed; a read-only reader sees the same")
    func schemaFiveMigrates() throws {
        let scratch = Scratch()
        do {
            let connection = try olderLedger(at: scratch.ledgerPath, version: 5)
            var script = """
                INSERT INTO runs (kind, profile_name, profile_sha256, station, operator, started_at, ended_at, outcome, run_key)
                    VALUES ('rollout', 'p', '\(profileDigest)', 's', 'o', '2024-05-01T10:00:00.000Z', '2024-05-01T10:01:00.000Z',
                            'interrupted', '20240501-100000-abcd');

                """
            for (n, code) in ["fleet_update_unfinished", "fleet_interrupted", "fleet_reader_failed"].enumerated() {
                script += """
                    INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result, code)
                        VALUES (1, 'GK-\(n)', 'firmware', '2024-05-01T10:00:01.000Z', '2024-05-01T10:00:09.000Z', 8000, 'failed', '\(code)');

                    """
            }
            try connection.executeScript(script)
        }
        let expected: [StepResult] = [.interrupted, .interrupted, .failed]
        let reader = try Ledger.open(path: scratch.ledgerPath, readOnly: true)
        #expect(reader.fileVersion == 5)
        #expect(try reader.steps().map(\.result) == expected)
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        #expect(try ledger.steps().map(\.result) == expected)
        #expect(try ledger.steps().map(\.code) == ["fleet_update_unfinished", "fleet_interrupted", "fleet_reader_failed"])
        // The new result is stored as such, and the schema still refuses words outside the codes.
        let run = try ledger.beginRun(start(.rollout))
        try ledger.recordStep(step(run, "GK-9", "firmware", .interrupted))
        #expect(try ledger.steps(serial: "GK-9").map(\.result) == [.interrupted])
        #expect(throws: LedgerError.self) {
            try ledger.withConnection { (db) throws(LedgerError) in
                try db.execute("UPDATE steps SET result = 'stopped' WHERE serial = 'GK-9'")
            }
        }
    }

    @Test("schema 7: a version 6 file still opens read-only (no link settings there) and migrates on a write open; the newest setting of each subject is read back, the schema refuses a rate the protocol has not")
    func schemaSixToSevenLinkSettings() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: scratch.ledgerPath).deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        do {
            let connection = try SQLiteConnection(path: scratch.ledgerPath, busyTimeoutMilliseconds: 1000, create: true)
            try connection.setCheckpointOnClose(true)
            try Schema.migrate(connection, migrations: Array(Schema.migrations.prefix(6)))
        }
        let reader = try Ledger.open(path: scratch.ledgerPath, readOnly: true)
        #expect(reader.fileVersion == 6)
        #expect(try reader.linkSettings().isEmpty)
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        #expect(Schema.currentVersion >= 7)
        let at = { (seconds: Double) in Date(timeIntervalSince1970: 1_700_000_000 + seconds) }
        try ledger.recordLinkSetting(LinkSettingRecord(subject: .serial("00004242"), samplesPerBit: 8, sampleRate: 44_100,
                                                       reason: .autoconfig, station: "bench-1", recordedAt: at(0)))
        try ledger.recordLinkSetting(LinkSettingRecord(subject: .soundCard("emulated"), samplesPerBit: 8, sampleRate: 44_100,
                                                       reason: .autoconfig, station: "bench-1", recordedAt: at(0)))
        let fell = LinkSettingRecord(subject: .serial("00004242"), samplesPerBit: 10, sampleRate: 44_100, reason: .fallback,
                                     station: "bench-2", recordedAt: at(60))
        try ledger.recordLinkSetting(fell)
        let newest = try ledger.linkSettings()
        #expect(newest.count == 2)
        #expect(newest.first { $0.subject == .serial("00004242") } == fell)
        #expect(try Ledger.check(path: scratch.ledgerPath).schemaVersion == Schema.currentVersion)
        #expect(throws: LedgerError.self) {
            try ledger.recordLinkSetting(LinkSettingRecord(subject: .serial("x"), samplesPerBit: 8, sampleRate: 22_050,
                                                           reason: .autoconfig, station: "", recordedAt: at(0)))
        }
    }

    @Test("schema 8: a version 7 file reads its steps without a USB port read-only, and migrates on a write open; a step's USB port is stored and read back, never empty")
    func schemaSevenToEightUSBPath() throws {
        let scratch = Scratch()
        do {
            let connection = try olderLedger(at: scratch.ledgerPath, version: 7)
            try connection.executeScript("""
                INSERT INTO runs (kind, profile_name, profile_sha256, station, operator, started_at, ended_at, outcome, run_key)
                    VALUES ('provision', 'p', '\(profileDigest)', 's', 'o', '2024-05-01T10:00:00.000Z', '2024-05-01T10:01:00.000Z',
                            'succeeded', '20240501-100000-abcd');
                INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result)
                    VALUES (1, 'GK-1', 'region', '2024-05-01T10:00:01.000Z', '2024-05-01T10:00:02.000Z', 1000, 'done');
                """)
        }
        let reader = try Ledger.open(path: scratch.ledgerPath, readOnly: true)
        #expect(reader.fileVersion == 7)
        #expect(try reader.steps().map(\.usbPath) == [nil])
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        #expect(Schema.currentVersion == 8)
        #expect(try ledger.steps().map(\.usbPath) == [nil])
        let run = try ledger.beginRun(start())
        var onUSB = step(run, "GK-2", "region")
        onUSB.usbPath = "1-1.4"
        try ledger.recordStep(onUSB)
        try ledger.recordStep(step(run, "GK-3", "region"))
        #expect(try ledger.steps(run: run).map(\.usbPath) == ["1-1.4", nil])
        #expect(try ledger.history(serial: "GK-2").count == 1)
        #expect(try Ledger.check(path: scratch.ledgerPath).schemaVersion == 8)
        onUSB.usbPath = ""
        #expect(throws: LedgerError.self) { try ledger.recordStep(onUSB) }
    }

    @Test("a run's key is refused empty; outcomes outside the codes are refused by the schema")
    func outcomeCodesAreTheOnlyOnes() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        var empty = start()
        empty.key = ""
        #expect(throws: LedgerError.self) { try ledger.beginRun(empty) }
        let run = try ledger.beginRun(start())
        for old in ["partial", "cancelled", "success", "failure", "halted"] {
            #expect(throws: LedgerError.self, "\(old)") {
                try ledger.write { (db) throws(LedgerError) in
                    try db.execute("UPDATE runs SET outcome = ? WHERE id = ?", [.text(old), .integer(run.rawValue)])
                }
            }
        }
        #expect(GrokLedger.RunOutcome.allCases.map(\.rawValue) == ["succeeded", "incomplete", "failed", "interrupted", "abandoned"])
    }
}

/// The C libraries' English (`strerror`, `sqlite3_errmsg`) stays out of the ledger's errors:
/// their details name the system's and SQLite's codes, which read the same in every language.
@Suite("Ledger: codes, not the C libraries' English, in error details")
struct SystemCodeDetailTests {
    @Test("an export to /dev/full fails as export_failed with 'write: ENOSPC', and /dev/full stays the device")
    func exportToAFullDevice() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        _ = try ledger.beginRun(start())
        #expect(throws: LedgerError.exportFailed(path: "/dev/full", detail: ErrorDetail("system_call", ["write", "ENOSPC"]))) {
            try ledger.export(format: .json, to: "/dev/full")
        }
        var info = stat()
        #expect(stat("/dev/full", &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR)
    }

    @Test("a constraint SQLite refuses is named by its extended code, not SQLite's English message")
    func sqliteFailureIsNamedByItsCode() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        let error = #expect(throws: LedgerError.self) {
            try ledger.write { (db) throws(LedgerError) in
                try db.execute("INSERT INTO devices (serial, first_seen, last_seen) VALUES ('GK-1', NULL, 'x')")
            }
        }
        guard case .invalidRecord(_, let detail)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(detail.code == "sqlite_call" && detail.arguments.first == "SQLITE_CONSTRAINT_NOTNULL", "\(detail)")
        #expect(!detail.arguments.joined().contains("constraint failed"), "\(detail)")
        #expect(SystemCodes.sqliteName(778) == "SQLITE_IOERR_WRITE" && SystemCodes.sqliteName(5) == "SQLITE_BUSY")
        #expect(SystemCodes.errnoName(ENOSPC) == "ENOSPC")
    }
}
