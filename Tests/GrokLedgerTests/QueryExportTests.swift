import GrokBasics
import Foundation
import Testing
@testable import GrokLedger

@Suite("Ledger: devices, history and what a re-run may skip")
struct QueryTests {
    @Test("upsertDevice keeps stored fields for nil ones and widens first/last seen")
    func upsertMerges() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        try ledger.upsertDevice(DeviceSighting(serial: "GK-9", hardwareType: "Grokker", hardwareRevision: "B",
                                               firmware: "1.4.0", seenAt: at(100)))
        try ledger.upsertDevice(DeviceSighting(serial: "GK-9", firmware: "1.5.2", region: "EU", provisioned: true,
                                               seenAt: at(200)))
        try ledger.upsertDevice(DeviceSighting(serial: "GK-9", antennaType: "external", seenAt: at(50)))
        try ledger.upsertDevice(DeviceSighting(serial: "GK-1", seenAt: at(1)))
        let device = try #require(try ledger.device(serial: "GK-9"))
        #expect(device == DeviceRecord(serial: "GK-9", hardwareType: "Grokker", hardwareRevision: "B",
                                       antennaType: "external", firstSeen: at(50), lastSeen: at(200),
                                       firmware: "1.5.2", region: "EU", provisioned: true))
        #expect(try ledger.devices().map(\.serial) == ["GK-1", "GK-9"])
        #expect(try ledger.device(serial: "GK-1")?.provisioned == false)
        #expect(try ledger.device(serial: "nope") == nil)
    }

    @Test("history of a serial is its steps and smoke tests across runs in time order, and only its own")
    func historyOrdered() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        let first = try ledger.beginRun(start(at: 0))
        let second = try ledger.beginRun(start(.verify, at: 1000))
        // Recorded out of time order on purpose.
        try ledger.recordStep(step(second, "GK-2", "identify", from: 1001, to: 1002))
        try ledger.recordStep(step(first, "GK-2", "firmware", from: 20, to: 80))
        try ledger.recordStep(step(first, "GK-2", "identify", from: 1, to: 2))
        try ledger.recordStep(step(first, "GK-OTHER", "identify", from: 0.5, to: 2))
        try ledger.recordSmokeTest(SmokeTestRecord(run: first, serial: "GK-2", afterStep: "firmware", startedAt: at(81),
                                                   durationMilliseconds: 3000, expectedTags: ["E200"], foundTags: ["E200"],
                                                   readsPerSecond: 41.5, minRSSI: -62.25, passed: true))
        try ledger.recordSmokeTest(SmokeTestRecord(run: second, serial: "GK-2", afterStep: "identify", startedAt: at(1002),
                                                   durationMilliseconds: 3000, expectedTags: ["E200"], foundTags: [],
                                                   readsPerSecond: 0, minRSSI: nil, passed: false))
        try ledger.finishRun(first, outcome: .succeeded, endedAt: at(90), reportPath: nil)
        let history = try ledger.history(serial: "GK-2")
        let summary = history.map { entry -> String in
            switch entry.event {
            case .step(let s): "\(entry.run.id) step \(s.step)"
            case .smokeTest(let t): "\(entry.run.id) smoke \(t.afterStep) \(t.passed)"
            }
        }
        #expect(summary == ["1 step identify", "1 step firmware", "1 smoke firmware true", "2 step identify",
                            "2 smoke identify false"])
        #expect(history.map(\.at) == history.map(\.at).sorted())
        #expect(history.first?.run.outcome == .succeeded)
        #expect(history.last?.run.kind == .verify)
        if case .smokeTest(let failed) = history.last?.event {
            #expect(failed.missingTags == ["E200"])
            #expect(failed.minRSSI == nil)
        } else {
            Issue.record("the last entry is not the failed smoke test")
        }
        #expect(try ledger.history(serial: "GK-none").isEmpty)
    }

    @Test("completedSteps: latest result per step, same profile content, provision and rollout runs only")
    func completedSteps() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        let killed = try ledger.beginRun(start())  // never finished: the process was killed
        try ledger.recordStep(step(killed, "GK-1", "identify"))
        try ledger.recordStep(step(killed, "GK-1", "provision", .skipped))
        try ledger.recordStep(step(killed, "GK-1", "region"))
        try ledger.recordStep(step(killed, "GK-1", "firmware", .failed))
        try ledger.recordStep(step(killed, "GK-1", "smoke_test", .postponed))
        try ledger.recordStep(step(killed, "GK-2", "identify"))
        let rerun = try ledger.beginRun(start(.rollout))
        try ledger.recordStep(step(rerun, "GK-1", "region", .failed))  // the region was lost: do it again
        let verify = try ledger.beginRun(start(.verify))
        try ledger.recordStep(step(verify, "GK-1", "firmware"))  // verify proves, never completes
        let otherProfile = try ledger.beginRun(start(digest: otherDigest))
        try ledger.recordStep(step(otherProfile, "GK-1", "smoke_test"))

        #expect(try ledger.completedSteps(serial: "GK-1", profileSHA256: profileDigest) == ["identify", "provision"])
        #expect(try ledger.completedSteps(serial: "GK-1", profileSHA256: profileDigest.uppercased()) == ["identify", "provision"])
        #expect(try ledger.completedSteps(serial: "GK-1", profileSHA256: otherDigest) == ["smoke_test"])
        #expect(try ledger.completedSteps(serial: "GK-2", profileSHA256: profileDigest) == ["identify"])
        #expect(try ledger.completedSteps(serial: "GK-3", profileSHA256: profileDigest).isEmpty)
    }

    @Test("runs(limit:) lists the newest first")
    func runsNewestFirst() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        let ids = try (0..<5).map { _ in try ledger.beginRun(start()) }
        #expect(try ledger.runs(limit: 2).map(\.id) == [ids[4], ids[3]])
        #expect(try ledger.runs().map(\.id) == ids.reversed())
        #expect(try ledger.runs().allSatisfy { $0.endedAt == nil && $0.outcome == nil })
    }

    @Test("the recorder protocol is usable as an existential")
    func recorderProtocol() throws {
        let scratch = Scratch()
        let recorder: any RunRecorder = try Ledger.open(path: scratch.ledgerPath)
        let run = try recorder.beginRun(start())
        try recorder.upsertDevice(DeviceSighting(serial: "GK-1", seenAt: at(0)))
        try recorder.recordStep(step(run, "GK-1", "identify"))
        try recorder.recordSmokeTest(SmokeTestRecord(run: run, serial: "GK-1", afterStep: "identify", startedAt: at(3),
                                                     durationMilliseconds: 10, expectedTags: [], foundTags: ["A"],
                                                     readsPerSecond: 5, minRSSI: -40, passed: true))
        try recorder.finishRun(run, outcome: .succeeded, endedAt: at(4), reportPath: nil)
        #expect(try recorder.completedSteps(serial: "GK-1", profileSHA256: profileDigest) == ["identify"])
        let ledger = try #require(recorder as? Ledger)
        #expect(try ledger.smokeTests(run: run).map(\.foundTags) == [["A"]])
    }
}

@Suite("Ledger: export")
struct ExportTests {
    static let tricky = "comma, \"quoted\"\nsecond line\r\nÜñíçødé 日本語 🚀\tend"

    func filledLedger(_ scratch: borrowing Scratch) throws -> (Ledger, RunID) {
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        let run = try ledger.beginRun(start())
        try ledger.upsertDevice(DeviceSighting(serial: "GK-1", hardwareType: "Grokker, \"v2\"", firmware: "1.5.2",
                                               region: "EU", provisioned: true, seenAt: at(1)))
        var onUSB = step(run, "GK-1", "region", .failed, from: 1, to: 3.25, detail: Self.tricky)
        onUSB.usbPath = "1-1.4"
        try ledger.recordStep(onUSB)
        try ledger.recordStep(step(run, "GK-1", "firmware", from: 4, to: 5))
        try ledger.recordSmokeTest(SmokeTestRecord(run: run, serial: "GK-1", afterStep: "firmware", startedAt: at(6),
                                                   durationMilliseconds: 2500, expectedTags: ["E2001", "E2002"],
                                                   foundTags: ["E2001", "3000AB"], readsPerSecond: 37.25,
                                                   minRSSI: -58.5, passed: false))
        try ledger.finishRun(run, outcome: .incomplete, endedAt: at(10), reportPath: "/var/reports/run 1.json")
        return (ledger, run)
    }

    @Test("the fleet's view of a failed step has the USB port it failed on")
    func failedStepUSBPort() throws {
        let scratch = Scratch()
        let (ledger, _) = try filledLedger(scratch)
        #expect(try ledger.fleetSnapshot().failedSteps.map(\.usbPath) == ["1-1.4"])
    }

    @Test("CSV of steps round-trips commas, quotes, newlines and non-ASCII")
    func csvSteps() throws {
        let scratch = Scratch()
        let (ledger, _) = try filledLedger(scratch)
        let path = scratch.file("out/steps.csv")
        try ledger.export(format: .csv, to: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let records = parseCSV(text)
        #expect(records.first == ["id", "run_id", "serial", "step", "started_at", "ended_at", "duration_ms", "result",
                                  "firmware_before", "firmware_after", "region_before", "region_after", "code", "detail", "usb_path",
                                  "run_key"])
        #expect(records.count == 3)
        let rows = records.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(records[0], $0)) }
        #expect(rows.allSatisfy { $0.count == 16 })
        #expect(rows[0]["usb_path"] == "1-1.4" && rows[1]["usb_path"] == "")
        #expect(rows[0]["detail"] == Self.tricky)
        #expect(rows[0]["duration_ms"] == "2250")
        #expect(rows[0]["started_at"] == "2024-05-01T10:40:01.000Z")
        #expect(rows[0]["ended_at"] == "2024-05-01T10:40:03.250Z")
        #expect(rows[0]["code"] == "link_timeout")
        #expect(rows[0]["region_before"] == "")
        #expect(rows[1]["step"] == "firmware")
        #expect(rows[1]["detail"] == "")
    }

    @Test("CSV of smoke tests and devices: tag lists space-separated, booleans as words")
    func csvOtherTables() throws {
        let scratch = Scratch()
        let (ledger, _) = try filledLedger(scratch)
        let smokePath = scratch.file("smoke.csv")
        try ledger.export(format: .csv, to: smokePath, table: .smokeTests)
        let smoke = parseCSV(try String(contentsOfFile: smokePath, encoding: .utf8))
        let row = Dictionary(uniqueKeysWithValues: zip(smoke[0], smoke[1]))
        #expect(row["expected_tags"] == "E2001 E2002")
        #expect(row["found_tags"] == "E2001 3000AB")
        #expect(row["missing_tags"] == "E2002")
        #expect(row["passed"] == "false")
        #expect(row["reads_per_second"] == "37.25")
        #expect(row["min_rssi"] == "-58.5")
        let devicesPath = scratch.file("devices.csv")
        try ledger.export(format: .csv, to: devicesPath, table: .devices)
        let devices = parseCSV(try String(contentsOfFile: devicesPath, encoding: .utf8))
        let device = Dictionary(uniqueKeysWithValues: zip(devices[0], devices[1]))
        #expect(device["hardware_type"] == "Grokker, \"v2\"")
        #expect(device["provisioned"] == "true")
    }

    @Test("JSON holds every table with stable field names and round-trips the content")
    func jsonAllTables() throws {
        let scratch = Scratch()
        let (ledger, run) = try filledLedger(scratch)
        let path = scratch.file("ledger.json")
        try ledger.export(format: .json, to: path)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
            as? [String: Any])
        // Schema 5's rollout tables too (empty here).
        #expect(Set(object.keys) == ["format", "schema_version", "devices", "runs", "steps", "smoke_tests", "intents",
                                     "rollout_stages", "stage_events", "rollout_results"])
        #expect((object["rollout_results"] as? [Any])?.isEmpty == true)
        #expect(object["format"] as? String == "grokctl-ledger")
        #expect(object["schema_version"] as? Int == Ledger.schemaVersion)
        let steps = try #require(object["steps"] as? [[String: Any]])
        #expect(steps.count == 2)
        #expect(Set(steps[0].keys) == Set(ExportTable.columns(.steps)))
        #expect(steps[0]["detail"] as? String == Self.tricky)
        #expect(steps[0]["run_id"] as? Int == Int(run.rawValue))
        #expect(steps[0]["region_before"] is NSNull)
        #expect(steps[0]["usb_path"] as? String == "1-1.4" && steps[1]["usb_path"] is NSNull)
        let runs = try #require(object["runs"] as? [[String: Any]])
        #expect(runs[0]["operator"] as? String == "Zoë")
        #expect(runs[0]["outcome"] as? String == "incomplete")
        #expect(runs[0]["report_path"] as? String == "/var/reports/run 1.json")
        let smoke = try #require((object["smoke_tests"] as? [[String: Any]])?.first)
        #expect(smoke["expected_tags"] as? [String] == ["E2001", "E2002"])
        #expect(smoke["missing_tags"] as? [String] == ["E2002"])
        #expect(smoke["passed"] as? Bool == false)
        #expect(smoke["min_rssi"] as? Double == -58.5)
        let device = try #require((object["devices"] as? [[String: Any]])?.first)
        #expect(device["provisioned"] as? Bool == true)
        #expect(device["hardware_type"] as? String == "Grokker, \"v2\"")
        #expect(device["first_seen"] as? String == "2024-05-01T10:40:01.000Z")
    }

    @Test("an export replaces the old file whole and leaves no temporary file")
    func atomicReplace() throws {
        let scratch = Scratch()
        let (ledger, run) = try filledLedger(scratch)
        let path = scratch.file("exports/ledger.json")
        try ledger.export(format: .json, to: path, table: .runs)
        let before = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!before.contains("\"steps\""))
        let second = try ledger.beginRun(start(.verify))
        try ledger.export(format: .json, to: path, table: .runs)
        let after = try String(contentsOfFile: path, encoding: .utf8)
        #expect(after.contains("\"id\": \(second.rawValue)") && after.contains("\"id\": \(run.rawValue)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("exports")) == ["ledger.json"])
    }

    @Test("an export that cannot be written fails as export_failed and keeps the old file")
    func exportFailure() throws {
        let scratch = Scratch()
        let (ledger, _) = try filledLedger(scratch)
        let path = scratch.file("taken")
        // A directory where the file should go: rename(2) refuses to replace it.
        try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
        let error = #expect(throws: LedgerError.self) { try ledger.export(format: .csv, to: path) }
        #expect(error?.code == "ledger_export_failed")
        #expect(error?.path == path)
        #expect(FileManager.default.fileExists(atPath: path + "/inside"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path).sorted() == ["state", "taken"])
    }
}

@Suite("Ledger: errors and timestamps")
struct ErrorAndTimeTests {
    static let samples: [LedgerError] = [
        .cannotOpen(path: "/l.sqlite", detail: "d"), .locked(path: "/l.sqlite", waitedMilliseconds: 5000),
        .corrupt(path: "/l.sqlite", damage: LedgerDamage("sqlite", ["SQLITE_CORRUPT"])), .empty(path: "/l.sqlite"), .notSQLite(path: "/l.sqlite"), .notALedger(path: "/l.sqlite", applicationID: 7),
        .newerSchema(path: "/l.sqlite", found: 3, supported: 1), .diskFull(path: "/l.sqlite"),
        .readOnly(path: "/l.sqlite", detail: ErrorDetail("opened_read_only")), .invalidRecord(path: "/l.sqlite", detail: ErrorDetail("run_without_key")),
        .unknownRun(path: "/l.sqlite", run: 4), .runFinished(path: "/l.sqlite", run: 4),
        .exportFailed(path: "/l.sqlite", detail: ErrorDetail("export_unreadable")),
        .sqlite(path: "/l.sqlite", sqliteCode: 10, detail: ErrorDetail("sqlite_call", ["SQLITE_IOERR", "step"])),
    ]

    @Test("every error has a distinct ledger_ code, names the file and carries its arguments")
    func errorsAreComplete() {
        #expect(Set(Self.samples.map(\.code)).count == Self.samples.count)
        for error in Self.samples {
            #expect(error.code.hasPrefix("ledger_"))
            #expect(error.code == error.code.lowercased() && !error.code.contains(" "))
            #expect(error.description.contains("/l.sqlite"))
            #expect(error.arguments.first == "/l.sqlite")
            #expect(error.path == "/l.sqlite")
        }
    }

    @Test("SQLite result codes map to the ledger's cases")
    func resultCodeMapping() {
        func map(_ code: Int32) -> String {
            SQLiteConnection.error(code: code, message: "m", what: "w", path: "/p", waitedMilliseconds: 1).code
        }
        #expect(map(5) == "ledger_locked")  // SQLITE_BUSY
        #expect(map(5 | (2 << 8)) == "ledger_locked")  // SQLITE_BUSY_SNAPSHOT
        #expect(map(11) == "ledger_corrupt")  // SQLITE_CORRUPT
        #expect(map(26) == "ledger_corrupt")  // SQLITE_NOTADB
        #expect(map(13) == "ledger_disk_full")  // SQLITE_FULL
        #expect(map(8) == "ledger_read_only")  // SQLITE_READONLY
        #expect(map(14) == "ledger_cannot_open")  // SQLITE_CANTOPEN
        #expect(map(19 | (7 << 8)) == "ledger_invalid_record")  // SQLITE_CONSTRAINT_FOREIGNKEY
        #expect(map(10) == "ledger_sqlite")  // SQLITE_IOERR
    }

    @Test("timestamps are fixed-width ISO 8601 UTC with milliseconds and round-trip",
          arguments: [0.0, 0.001, 951_782_400.5, 1_714_560_000.123, 4_102_444_799.999, -86_400.25])
    func timestamps(seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let text = LedgerTime.format(date)
        #expect(text.utf8.count == 24)
        let parsed = try #require(LedgerTime.parse(text))
        #expect(LedgerTime.milliseconds(parsed) == LedgerTime.milliseconds(date))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(formatter.date(from: text).map(LedgerTime.milliseconds) == LedgerTime.milliseconds(date))
    }

    @Test("known timestamps")
    func knownTimestamps() {
        #expect(LedgerTime.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(LedgerTime.format(Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
        #expect(LedgerTime.format(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        #expect(LedgerTime.parse("2024-05-01T10:40:00Z") == Date(timeIntervalSince1970: 1_714_560_000))
        #expect(LedgerTime.parse("2024-13-01T10:40:00.000Z") == nil)
        #expect(LedgerTime.parse("2024-05-01 10:40:00.000Z") == nil)
    }
}
