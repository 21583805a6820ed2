import Foundation
import GrokLedger
import GrokTestSupport
import Testing

@testable import GrokFleet

/// `grokctl fleet stage` reads and changes stages through ``StageJob``.
@Suite("Stage job")
struct StageJobTests {
    @Test("show lists the stages and one with its history; pause, resume and advance change it, each with its event and who made it")
    func showAndChange() throws {
        let fixture = ViewLedgerFixture()
        try fixture.addRollout(try fixture.make(), "eu-night", percentage: 50, failed: false)
        let reader = try StageJob(location: fixture.path, write: false, machine: "host")
        let stages = try reader.stages()
        #expect(stages.map(\.rolloutID) == ["eu-night"] && stages.first?.state == "active" && stages.first?.percentage == 50)
        #expect(stages.first?.stop == nil && stages.first?.release == "1.8.0")
        let job = try StageJob(location: fixture.path, write: true, machine: "host")
        let paused = try job.pause("eu-night", by: "Zoë", note: "night shift", at: ViewLedgerFixture.at(20))
        #expect(paused.stage.state == "paused" && paused.stage.updatedBy == "Zoë" && paused.percentageBefore == 50)
        #expect(paused.stage.stop == .stagePaused(rollout: "eu-night", by: "Zoë"))
        let resumed = try job.resume("eu-night", by: "ops", note: "", at: ViewLedgerFixture.at(21))
        #expect(resumed.stage.state == "active" && resumed.stage.stop == nil)
        let advanced = try job.advance("eu-night", to: 75, by: "ops", note: "", at: ViewLedgerFixture.at(22))
        #expect(advanced.percentageBefore == 50 && advanced.stage.percentage == 75)
        let (stage, history) = try reader.stage("eu-night")
        #expect(stage == advanced.stage)
        #expect(history.map(\.action) == ["created", "paused", "resumed", "advanced"])
        #expect(history[1].actor == "Zoë" && history[1].note == "night shift")
        #expect(history[3].percentageBefore == 50 && history[3].percentageAfter == 75)
    }

    @Test("pausing a paused stage is no failure: it says so, changes nothing and records no second event")
    func pauseIsIdempotent() throws {
        let fixture = ViewLedgerFixture()
        try fixture.addRollout(try fixture.make(), "eu-night", percentage: 50, failed: false)
        let job = try StageJob(location: fixture.path, write: true, machine: "host")
        let first = try job.pause("eu-night", by: "Zoë", note: "night shift", at: ViewLedgerFixture.at(20))
        #expect(!first.alreadySo)
        let again = try job.pause("eu-night", by: "ops", note: "", at: ViewLedgerFixture.at(21))
        #expect(again.alreadySo && again.stage == first.stage && again.stage.updatedBy == "Zoë")
        #expect(try job.stage("eu-night").history.map(\.action) == ["created", "paused"])
    }

    @Test("refused: an unknown stage, a step down, a change through a read-only job, a ledger that does not exist (and is not created)")
    func refusals() throws {
        let fixture = ViewLedgerFixture()
        try fixture.addRollout(try fixture.make(), "eu-night", percentage: 50, failed: false)
        let job = try StageJob(location: fixture.path, write: true, machine: "host")
        #expect(throws: LedgerError.noSuchStage(path: fixture.path, rollout: "nope")) { try job.stage("nope") }
        #expect(throws: LedgerError.self) { try job.advance("eu-night", to: 25, by: "ops", note: "") }
        #expect(throws: LedgerError.self) { try StageJob(location: fixture.path, write: false, machine: "host").pause("eu-night", by: "ops", note: "") }
        #expect(try job.stage("eu-night").stage.state == "active", "nothing changed")
        let missing = fixture.directory.file("none.sqlite")
        #expect(throws: FleetError.ledgerMissing(path: missing)) { try StageJob(location: missing, write: true, machine: "host") }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test("the JSON lines write every field, null when unknown: a stage and its events")
    func jsonLines() throws {
        let fixture = ViewLedgerFixture()
        try fixture.addRollout(try fixture.make(), "eu-night", percentage: 50, failed: false)
        let (stage, history) = try StageJob(location: fixture.path, write: false, machine: "host").stage("eu-night")
        let json = try jsonObject(stage)
        #expect(json["record"] as? String == "stage" && json["rollout"] as? String == "eu-night" && json["state"] as? String == "active")
        #expect(json["reason"] is NSNull && json["halt"] is NSNull && json["tripped_by"] is NSNull, "\(json)")
        let event = try jsonObject(try #require(history.first))
        #expect(event["record"] as? String == "stage_event" && event["action"] as? String == "created")
        #expect(event["percentage_before"] is NSNull && event["percentage_after"] as? Double == 50, "\(event)")
    }
}
