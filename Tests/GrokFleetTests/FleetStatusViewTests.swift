import Foundation
import GrokLedger
import GrokTestSupport
import Testing

@testable import GrokFleet

/// `grokctl fleet status` and `fleet report` read the fleet through ``FleetStatusView``:
/// from snapshots made by hand, then from a station's SQLite ledger.
@Suite("Fleet status view")
struct FleetStatusViewTests {
    static func result(_ serial: String, _ outcome: RolloutUnitOutcome, station: String, at minute: Double, revision: String = "3",
                       percentage: Double = 50) -> RolloutResult {
        RolloutResult(rolloutID: "r1", runKey: "run-\(station)", station: station, serial: serial, percentage: percentage,
                      outcome: outcome, hardwareRevision: revision, firmwareAfter: nil,
                      finishedAt: Date(timeIntervalSince1970: 1_796_000_000 + minute * 60))
    }

    @Test("a unit counts once, by its latest result; pending is what the selection picks among the Grokkers without one")
    func viewCountsUnitsByTheirLatestResult() throws {
        var snapshot = FleetSnapshot()
        snapshot.rollouts.stages = [RolloutStage(rolloutID: "r1", release: "1.8.0", percentage: 50, state: .active, reasonCode: nil,
                                                 reasonDetail: "", trippedBy: nil, updatedAt: Date(timeIntervalSince1970: 1_796_000_000),
                                                 updatedBy: "ops")]
        // Recorded out of time order: the view orders by when each unit finished.
        snapshot.rollouts.results = [
            Self.result("A", .succeeded, station: "s1", at: 3),
            Self.result("B", .failed, station: "s2", at: 1, revision: "5"),
            Self.result("B", .succeeded, station: "s2", at: 4, revision: "5"),
            Self.result("C", .failed, station: "s2", at: 2, percentage: 25),
            Self.result("D", .incomplete, station: "s1", at: 5),
        ]
        snapshot.devices = ["A", "B", "C", "D", "E", "F", "G"].map {
            FleetSnapshot.Device(serial: $0, hardwareRevision: "3", firmware: $0 < "D" ? "1.8.0" : "1.7.3", station: $0 == "G" ? nil : "s1")
        }
        // The selection picks E and G (not F): G's station is not known.
        let view = FleetStatusView(snapshot, selects: { id, serial, percentage in id == "r1" && percentage == 50 && serial != "F" },
                                   haltRules: ["r1": RolloutPolicy.HaltRule(afterDevices: 2, maxFailureRate: 0.2)])
        let rollout = try #require(view.rollouts.first)
        #expect(view.rollouts.count == 1)
        #expect(rollout.totals == FleetStatusView.Counts(done: 2, failed: 1, incomplete: 1, pending: 2))
        #expect(rollout.byStation.map(\.name) == ["", "s1", "s2"])
        #expect(rollout.byStation[0].counts == FleetStatusView.Counts(pending: 1))
        #expect(rollout.byStation[1].counts == FleetStatusView.Counts(done: 1, incomplete: 1, pending: 1))
        #expect(rollout.byStation[2].counts == FleetStatusView.Counts(done: 1, failed: 1))
        #expect(rollout.byHardwareRevision.map(\.name) == ["3", "5"])
        #expect(rollout.byStage.map(\.percentage) == [25, 50])
        #expect(rollout.byStage[0].counts == FleetStatusView.Counts(failed: 1))
        // After B failed, C failed, A succeeded, B succeeded, D incomplete.
        #expect(rollout.progress.map(\.failed) == [1, 2, 2, 1, 1])
        #expect(rollout.progress.map(\.done) == [0, 0, 1, 2, 2])
        #expect(rollout.progress.map(\.finished) == [1, 2, 3, 3, 4])
        #expect(rollout.aboveThreshold == true)
        #expect(rollout.thresholdCrossed, "1 of 4 finished failed, above 20 %, after 2 units")
        #expect(view.firmware == [FleetStatusView.Tally(name: "1.7.3", count: 4, share: 4.0 / 7),
                                  FleetStatusView.Tally(name: "1.8.0", count: 3, share: 3.0 / 7)])
    }

    @Test("why a stage stopped: the halt as the runs said it, a pause with who made it (a dash for nobody), a bare halt by its stored reason")
    func stopReasons() {
        func view(_ state: RolloutStageState, detail: String, by: String) -> FleetStatusView.Rollout? {
            var snapshot = FleetSnapshot()
            snapshot.rollouts.stages = [RolloutStage(rolloutID: "r1", release: nil, percentage: 10, state: state, reasonCode: "fleet_halted",
                                                     reasonDetail: detail, trippedBy: "bench-1", updatedAt: Date(), updatedBy: by)]
            return FleetStatusView(snapshot, selects: { _, _, _ in true }).rollouts.first
        }
        let halt = RolloutHalt(failed: 1, finished: 3, threshold: 0.3, trippedBy: "bench-1", stationFailures: 1)
        let json = #"{"failed":1,"finished":3,"station_failures":1,"threshold":0.3,"tripped_by":"bench-1"}"#
        #expect(RolloutHalt(json: json) == halt)
        #expect(view(.halted, detail: json, by: "bench-1")?.stopReason
                    == .error(.halted(rollout: "r1", failed: 1, finished: 3, threshold: 0.3, trippedBy: "bench-1", stationFailures: 1)))
        #expect(view(.halted, detail: "", by: "bench-1")?.stopReason == .recorded("fleet_halted"))
        #expect(view(.halted, detail: "", by: "bench-1")?.isHalted == true)
        #expect(view(.paused, detail: "", by: "Zoë")?.stopReason == .error(.stagePaused(rollout: "r1", by: "Zoë")))
        #expect(view(.paused, detail: "", by: "")?.stopReason == .error(.stagePaused(rollout: "r1", by: "–")))
        #expect(view(.active, detail: "", by: "ops")?.stopReason == nil)
    }

    @Test("a station's SQLite ledger shows that station's part; an unknown rollout is an error naming it and the ledger; no ledger yet is ledger_missing")
    func statusOfASQLiteLedger() throws {
        let fixture = ViewLedgerFixture()
        let ledger = try fixture.make()
        try fixture.addRollout(ledger, "eu-night", failed: true)
        _ = try ledger.changeRolloutStage("eu-night", .pause, by: "ops", note: "", at: ViewLedgerFixture.at(12))
        let view = try FleetStatusView(location: fixture.path)
        #expect(view.location == fixture.path)
        let rollout = try #require(view.rollouts.first)
        #expect(rollout.state == "paused")
        #expect(rollout.stopReason == .error(.stagePaused(rollout: "eu-night", by: "ops")))
        #expect(rollout.totals.failed == 1 && rollout.totals.pending == 1, "\(rollout.totals)")
        #expect(rollout.halt == nil && rollout.aboveThreshold == nil, "no profile given: no threshold")
        #expect(rollout.events.map(\.action) == ["created", "paused"])
        #expect(view.firmware == [FleetStatusView.Tally(name: "1.8.0", count: 2, share: 1)])
        #expect(view.readRates == [FleetStatusView.ReadRates(station: "bench-a", tests: 1, passed: 1, minimum: 41.5, median: 41.5, maximum: 41.5)])
        #expect(throws: FleetError.noSuchRollout(ledger: fixture.path, rollout: "nope")) { try FleetStatusView(location: fixture.path, rollout: "nope") }
        let missing = fixture.directory.file("none.sqlite")
        #expect(throws: FleetError.ledgerMissing(path: missing)) { try FleetStatusView(location: missing) }
        #expect(!FileManager.default.fileExists(atPath: missing), "reading creates nothing")
    }

    @Test("a rollout no unit finished yet has no failure rate: null in its JSON line, for the totals and every station")
    func rolloutWithNoUnitFinished() throws {
        let fixture = ViewLedgerFixture()
        try fixture.addRollout(try fixture.make(), "eu-night", failed: false)
        let rollout = try #require(try FleetStatusView(location: fixture.path).rollouts.first)
        #expect(rollout.totals.finished == 0 && rollout.totals.pending == 2 && rollout.totals.failureRate == nil)
        let json = try jsonObject(rollout)
        #expect(json["record"] as? String == "rollout" && json["state"] as? String == "active")
        let totals = try #require(json["totals"] as? [String: Any])
        #expect(totals["finished"] as? Int == 0 && totals["pending"] as? Int == 2, "\(totals)")
        #expect(totals.keys.contains("failure_rate") && totals["failure_rate"] is NSNull, "\(totals)")
        let stations = try #require(json["stations"] as? [[String: Any]])
        #expect(!stations.isEmpty && stations.allSatisfy { ($0["counts"] as? [String: Any])?["failure_rate"] is NSNull }, "\(stations)")
        #expect(json["halt"] == nil && json["above_threshold"] == nil)
    }
}
