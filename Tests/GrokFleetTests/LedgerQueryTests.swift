import Foundation
import GrokLedger
import GrokTestSupport
import Testing

@testable import GrokFleet

/// `grokctl ledger show`, `export`, `check` and `recover` read through ``LedgerQuery`` and ``LedgerCheck``.
@Suite("Ledger query")
struct LedgerQueryTests {
    @Test("the overview lists the runs and every device; a run has its steps on every unit; a unit its history with what changed, oldest first")
    func runsDevicesAndHistory() throws {
        let fixture = ViewLedgerFixture()
        _ = try fixture.make()
        let query = try LedgerQuery(location: fixture.path)
        let (runs, devices) = try query.overview(limit: 20)
        #expect(runs.map(\.key) == [fixture.runKey])
        #expect(runs.first?.kind == "provision" && runs.first?.outcome == "failed" && runs.first?.operatorName == "Zoë")
        #expect(runs.first?.endedAt == ViewLedgerFixture.at(6) && runs.first?.reportPath == "/r/run.json")
        #expect(devices.map(\.serial) == fixture.serials && devices.allSatisfy { $0.provisioned && $0.hardwareRevision == "3" })

        let (run, steps) = try query.run(key: fixture.runKey)
        #expect(run == runs.first)
        #expect(steps.map(\.serial) == [fixture.serials[0], fixture.serials[0], fixture.serials[0], fixture.serials[1]])
        #expect(steps.last?.event == .step(name: "connect", result: "failed", code: "reader_timeout", change: nil))

        let (device, history) = try query.device(serial: fixture.serials[0])
        #expect(device.serial == fixture.serials[0] && device.firmware == "1.8.0" && device.region == "FCC")
        #expect(history.map(\.event) == [
            .step(name: "connect", result: "done", code: nil, change: nil),
            .step(name: "region", result: "done", code: nil, change: .region(from: nil, to: "FCC")),
            .step(name: "firmware", result: "done", code: nil, change: .firmware(from: "1.7.3", to: "1.8.0")),
            .smokeTest(afterStep: "firmware", passed: true, readsPerSecond: 41.5),
        ])
        #expect(history.allSatisfy { $0.run == fixture.runKey && $0.kind == "provision" })
        #expect(history.map(\.at) == history.map(\.at).sorted())
    }

    @Test("an unknown run or Grokker is an error naming it and the ledger; no ledger yet is ledger_missing, and nothing is created")
    func unknownRunDeviceAndLedger() throws {
        let fixture = ViewLedgerFixture()
        _ = try fixture.make()
        let query = try LedgerQuery(location: fixture.path)
        #expect(throws: LedgerError.noSuchRun(path: fixture.path, run: "nope")) { try query.run(key: "nope") }
        #expect(throws: FleetError.ledgerNoDevice(serial: "99999999", path: fixture.path)) { try query.device(serial: "99999999") }
        let missing = fixture.directory.file("none.sqlite")
        #expect(throws: FleetError.ledgerMissing(path: missing)) { try LedgerQuery(location: missing) }
        #expect(throws: FleetError.ledgerMissing(path: missing)) { try LedgerCheck.check(location: missing) }
        #expect(throws: FleetError.ledgerMissing(path: missing)) { try LedgerCheck.recover(location: missing, to: missing + ".recovered") }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test("the JSON lines: a run by its key, a device, a step with its before and after, a smoke test as passed or failed with its rate")
    func jsonLines() throws {
        let fixture = ViewLedgerFixture()
        _ = try fixture.make()
        let query = try LedgerQuery(location: fixture.path)
        let (runs, devices) = try query.overview(limit: 1)
        let run = try jsonObject(try #require(runs.first))
        #expect(run["record"] as? String == "run" && run["id"] as? String == fixture.runKey && run["operator"] as? String == "Zoë")
        #expect(run["started"] as? String == "2026-11-30T00:53:20.000Z" && run["outcome"] as? String == "failed", "\(run)")
        let device = try jsonObject(try #require(devices.first))
        #expect(device["record"] as? String == "device" && device["provisioned"] as? Bool == true && device["first_seen"] is String)
        let history = try query.device(serial: fixture.serials[0]).history.map(jsonObject)
        #expect(history.map { $0["record"] as? String } == ["step", "step", "step", "smoke_test"])
        #expect(history[2]["firmware_before"] as? String == "1.7.3" && history[2]["firmware_after"] as? String == "1.8.0")
        #expect(history[1]["region_before"] == nil && history[1]["region_after"] as? String == "FCC")
        #expect(history[3]["result"] as? String == "passed" && history[3]["reads_per_second"] as? Double == 41.5 && history[3]["step"] as? String == "firmware")
    }

    @Test("export writes one table as CSV or every table as JSON, to a file or as text; the tables are the ledger's")
    func export() throws {
        let fixture = ViewLedgerFixture()
        _ = try fixture.make()
        let query = try LedgerQuery(location: fixture.path)
        #expect(LedgerExportTable.all.map(\.name) == LedgerTable.allCases.map(\.rawValue))
        #expect(LedgerExportTable(name: "smoke_tests")?.name == "smoke_tests" && LedgerExportTable(name: "bogus") == nil)
        let csv = try query.export(.csv, table: nil)
        #expect(csv.split(whereSeparator: \.isNewline).count == 5, "a header and the four steps: \(csv)")
        #expect(csv.contains("reader_timeout"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try query.export(.json, table: nil).utf8)) as? [String: Any])
        #expect((json["runs"] as? [Any])?.count == 1 && (json["devices"] as? [Any])?.count == 2, "\(json.keys)")
        let file = fixture.directory.file("devices.csv")
        try query.export(.csv, table: LedgerExportTable(name: "devices"), to: file)
        let devices = try String(contentsOfFile: file, encoding: .utf8)
        #expect(devices.split(whereSeparator: \.isNewline).count == 3 && fixture.serials.allSatisfy(devices.contains))
    }

    @Test("check reads a sound file's rows; recover of a sound file loses nothing and keeps every row")
    func checkAndRecover() throws {
        let fixture = ViewLedgerFixture()
        _ = try fixture.make()
        guard case .file(let check) = try LedgerCheck.check(location: fixture.path) else { Issue.record("not a file's check"); return }
        #expect(check.path == fixture.path && check.openRuns == 0)
        #expect(check.rows["runs"] == 1 && check.rows["steps"] == 4 && check.rows["smoke_tests"] == 1 && check.rows["devices"] == 2, "\(check.rows)")
        #expect(try jsonObject(check)["record"] as? String == "check")
        let output = fixture.directory.file("recovered.sqlite")
        let recovery = try LedgerCheck.recover(location: fixture.path, to: output)
        #expect(recovery.isComplete && recovery.lostRows.isEmpty && recovery.lostDevices.isEmpty && recovery.problem == nil)
        #expect(recovery.recovered["runs"] == 1 && recovery.recovered["steps"] == 4 && recovery.recovered["devices"] == 2, "\(recovery.recovered)")
        let json = try jsonObject(recovery)
        #expect(json["record"] as? String == "recovery" && json["complete"] as? Bool == true && (json["lost"] as? [String: Any])?.isEmpty == true)
        #expect(try LedgerQuery(location: output).overview(limit: 5).runs.count == 1)
    }
}
