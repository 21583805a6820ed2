import Foundation
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import PostgresTestSupport
import Testing

/// Rollout stages from the command line (real grokctl processes on emulated benches): two
/// stations on one PostgreSQL ledger, where one station's failures halt the stage for the
/// other; `grokctl fleet stage show|pause|resume|advance`; the stage's percentage ruling
/// the selection on a station's SQLite ledger.
@Suite("Rollout stages from the command line", .serialized)
struct FleetStageCommandTests {
    static let rolloutID = "fw-1.8-test"
    static let v173 = FirmwareVersion(major: 1, minor: 7, build: 3)
    static let v180 = FirmwareVersion(major: 1, minor: 8, build: 0)

    /// The bench profile with a rollout section, written beside `world`'s bench.
    static func profile(_ world: FleetWorld, percentage: Double, halt: String? = nil, name: String = "rollout.json") throws -> String {
        var text = try String(contentsOfFile: FleetWorld.profile, encoding: .utf8)
        let rollout = "\"rollout\": {\"id\": \"\(rolloutID)\", \"percentage\": \(percentage)" + (halt.map { ", \"halt\": \($0)" } ?? "") + "},"
        let region = try #require(text.range(of: "\"region\": {"))
        text.replaceSubrange(region, with: rollout + "\n  \"region\": {")
        let path = world.root + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A bench whose reference tag `3034257BF4789000000003E8` lies out of reach: every unit
    /// on it fails its smoke test (a bad bench antenna), although the scene names the tag.
    static func breakBench(_ world: FleetWorld, devices: Int) throws {
        for n in 0..<devices {
            let path = world.bench + "/sim-\(n)/scene.json"
            var scene = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            var tags = try #require(scene["tags"] as? [[String: Any]])
            for i in tags.indices where tags[i]["epc"] as? String == "3034257BF4789000000003E8" { tags[i]["distance_m"] = 60.0 }
            scene["tags"] = tags
            try JSONSerialization.data(withJSONObject: scene).write(to: URL(fileURLWithPath: path))
        }
    }

    static func jsonLines(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    @Test("two stations on one shared ledger: one station's failures halt the stage, the other station starts no Grokker and says which station tripped it; after a resume it goes on")
    func haltReachesTheOtherStation() throws {
        let cluster = PostgresCluster.shared
        let uri = cluster.uri(try cluster.newDatabase("stage"))
        let bad = try FleetWorld(devices: 2), good = try FleetWorld(devices: 2)
        try Self.breakBench(bad, devices: 2)
        let halt = #"{"after_devices": 2, "max_failure_rate": 0.3, "window_devices": 8}"#
        let badProfile = try Self.profile(bad, percentage: 100, halt: halt)
        let goodProfile = try Self.profile(good, percentage: 100, halt: halt)
        func rollout(_ world: FleetWorld, _ profile: String, station: String, json: Bool = false) throws -> RunResult {
            try world.run(["rollout", "--profile", profile, "--device", "sim:0-1"] + world.common
                          + ["--ledger", uri, "--station", station, "--operator", "op-" + station] + (json ? ["--json"] : []))
        }

        // Station bench-bad: both units fail their smoke test; the second failure trips the rule.
        let first = try rollout(bad, badProfile, station: "bench-bad")
        #expect(first.status == 1, "\(first.standardOutput)\n\(first.standardError)")
        let shared = try PostgresLedger.open(uri, station: "auditor")
        let stage = try #require(try shared.rolloutStage(Self.rolloutID))
        #expect(stage.state == .halted && stage.trippedBy == "bench-bad")
        #expect(stage.halt == RolloutHalt(failed: 2, finished: 2, threshold: 0.3, trippedBy: "bench-bad", stationFailures: 2,
                                           rule: RolloutHaltRule(afterDevices: 2, maxFailureRate: 0.3, windowDevices: 8)))

        // Station bench-good: the stage is halted, so no unit starts, and the run says why.
        let before = good.deviceBytes(2)
        let stopped = try rollout(good, goodProfile, station: "bench-good")
        #expect(stopped.status == 2, "\(stopped.standardOutput)\n\(stopped.standardError)")
        let text = stopped.standardOutput + stopped.standardError
        #expect(text.contains("Rollout \(Self.rolloutID) halted: 2 of 2 units failed in the last 2 (above 30 %), most at station bench-bad (2)"),
                "\(text)")
        #expect(good.deviceBytes(2) == before, "a halted station touched a Grokker")
        let stoppedJSON = try rollout(good, goodProfile, station: "bench-good", json: true)
        let halted = Self.jsonLines(stoppedJSON.standardOutput).filter { $0["event"] as? String == "device_halted" }
        #expect(halted.count == 2, "\(stoppedJSON.standardOutput)")
        let data = try #require(halted.first?["data"] as? [String: Any])
        #expect(data["code"] as? String == "fleet_halted" && data["tripped_by"] as? String == "bench-bad")
        #expect(data["station_failures"] as? Int == 2 && data["rollout"] as? String == Self.rolloutID)

        // fleet stage show: the state, who tripped it, the history.
        let show = try good.run(["fleet", "stage", "show", Self.rolloutID, "--ledger", uri])
        #expect(show.status == 0, "\(show.standardError)")
        #expect(show.standardOutput.contains("halted") && show.standardOutput.contains("station bench-bad (2 failures in the window)"),
                "\(show.standardOutput)")
        let showJSON = Self.jsonLines(try good.run(["fleet", "stage", "show", Self.rolloutID, "--ledger", uri, "--json"]).standardOutput)
        #expect(showJSON.first?["state"] as? String == "halted" && showJSON.first?["tripped_by"] as? String == "bench-bad")
        #expect((showJSON.first?["halt"] as? [String: Any])?["failed"] as? Int == 2)
        #expect(showJSON.dropFirst().compactMap { $0["action"] as? String } == ["created", "halted"])

        // A halted stage is not advanced: resume first.
        let advance = try good.run(["fleet", "stage", "advance", Self.rolloutID, "--to", "100", "--ledger", uri])
        #expect(advance.status == 1 && advance.standardError.contains("resume it first"), "\(advance.standardError)")
        let resume = try good.run(["fleet", "stage", "resume", Self.rolloutID, "--ledger", uri, "--operator", "Zoë", "--note", "antenna cable replaced"])
        #expect(resume.status == 0, "\(resume.standardError)")

        // The window starts again: bench-good's units go ahead.
        let goes = try rollout(good, goodProfile, station: "bench-good")
        #expect(goes.status == 0, "\(goes.standardOutput)\n\(goes.standardError)")
        #expect(try (0..<2).map { try good.device($0).firmwareVersion } == [Self.v180, Self.v180])

        // Paused by hand: nothing starts, with its own reason.
        #expect(try good.run(["fleet", "stage", "pause", Self.rolloutID, "--ledger", uri, "--operator", "Ann"]).status == 0)
        let paused = try rollout(good, goodProfile, station: "bench-good")
        #expect(paused.status == 2 && (paused.standardOutput + paused.standardError).contains("is paused (by Ann)"),
                "\(paused.standardOutput)\n\(paused.standardError)")
        let events = try shared.stageEvents(Self.rolloutID)
        #expect(events.map(\.action) == [.created, .halted, .resumed, .paused])
        #expect(events.map(\.actor) == ["op-bench-bad", "op-bench-bad", "Zoë", "Ann"])
        #expect(events[2].note == "antenna cable replaced")
        // Two units failed, two succeeded; the halted and paused ones were never counted.
        let results = try shared.rolloutResults(Self.rolloutID)
        #expect(results.map(\.outcome) == [.failed, .failed, .succeeded, .succeeded])
        #expect(results.map(\.station) == ["bench-bad", "bench-bad", "bench-good", "bench-good"])
    }

    @Test("the stage's percentage in the ledger rules the selection once the stage exists; the dry run says whose percentage it used; advance reaches the next run")
    func ledgerPercentageRules() throws {
        let world = try FleetWorld(devices: 2)
        let none = try Self.profile(world, percentage: 0, name: "zero.json")
        let all = try Self.profile(world, percentage: 100, name: "all.json")
        func rollout(_ profile: String, _ extra: [String] = []) throws -> RunResult {
            try world.run(["rollout", "--profile", profile, "--device", "sim:0-1"] + world.common + extra)
        }
        // Before any ledger: the dry run uses the profile's percentage and makes no ledger.
        let dry = try rollout(none, ["--dry-run"])
        #expect(dry.status == 0, "\(dry.standardOutput)\n\(dry.standardError)")
        #expect(dry.standardOutput.contains("the profile's percentage: the ledger has no stage of this rollout yet"), "\(dry.standardOutput)")
        #expect(!FileManager.default.fileExists(atPath: world.ledger))
        // The first run makes the stage at the profile's 0 %: nothing is selected, so nothing is
        // done to either unit: the summary says "not in this stage" (never "done"), with no smoke
        // test, and `fleet status` counts no unit of the rollout.
        let first = try rollout(none)
        #expect(first.status == 0, "\(first.standardOutput)\n\(first.standardError)")
        #expect(first.standardOutput.components(separatedBy: "not in this stage: ").count - 1 == 2, "\(first.standardOutput)")
        #expect(first.standardOutput.contains("succeeded; 0 of 2 Grokkers done"), "\(first.standardOutput)")
        #expect(!first.standardOutput.contains("passed,"), "a smoke test ran on a unit the stage leaves out: \(first.standardOutput)")
        let status = try world.run(["fleet", "status", "--json"])
        let totals = Self.jsonLines(status.standardOutput).first { $0["record"] as? String == "rollout" }?["totals"] as? [String: Any]
        #expect(totals?["finished"] as? Int == 0 && totals?["pending"] as? Int == 0, "\(status.standardOutput)")
        // The profile now says 100 %, the ledger's stage 0 %: the ledger rules, and the plan says so.
        let disagree = try rollout(all, ["--dry-run"])
        #expect(disagree.standardOutput.contains("the stage's percentage in the ledger; the profile says 100 %"), "\(disagree.standardOutput)")
        #expect(try rollout(all).status == 0)
        #expect(try (0..<2).map { try world.device($0).firmwareVersion } == [Self.v173, Self.v173])

        // Advance: only upward, typed; then every run selects by the ledger's percentage.
        #expect(try world.run(["fleet", "stage", "advance", Self.rolloutID, "--to", "0"]).status == 64)
        #expect(try world.run(["fleet", "stage", "advance", Self.rolloutID, "--to", "lots"]).status == 64)
        let missing = try world.run(["fleet", "stage", "advance", "no-such-rollout", "--to", "50"])
        #expect(missing.status == 1 && missing.standardError.contains("holds no rollout stage 'no-such-rollout'"), "\(missing.standardError)")
        let advanced = try world.run(["fleet", "stage", "advance", Self.rolloutID, "--to", "100", "--operator", "Ann", "--note", "all in"])
        #expect(advanced.status == 0 && advanced.standardOutput.contains("advanced from 0 % to 100 %"), "\(advanced.standardOutput)")
        let down = try world.run(["fleet", "stage", "advance", Self.rolloutID, "--to", "50"])
        #expect(down.status == 1 && down.standardError.contains("advance only raises it"), "\(down.standardError)")
        #expect(try rollout(none).status == 0)
        #expect(try (0..<2).map { try world.device($0).firmwareVersion } == [Self.v180, Self.v180])

        // The station's own ledger keeps the stage and its history.
        let ledger = try Ledger.open(path: world.ledger, readOnly: true)
        #expect(try ledger.rolloutStage(Self.rolloutID)?.percentage == 100)
        let events = try ledger.stageEvents(Self.rolloutID)
        #expect(events.map(\.action) == [.created, .advanced])
        #expect(events[1].actor == "Ann" && events[1].note == "all in" && events[1].percentageBefore == 0)
        let list = try world.run(["fleet", "stage", "show", "--lang", "de"])
        #expect(list.status == 0 && list.standardOutput.contains("1 Rollout-Stufe") && list.standardOutput.contains("100 %"), "\(list.standardOutput)")
    }
}
