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
                                   profiles: ["r1": .init(halt: RolloutPolicy.HaltRule(afterDevices: 2, maxFailureRate: 0.2))])
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
        // Every result counts in the rule's window (no resume): 2 of 5 failed, above 20 %.
        #expect(rollout.judgement == .above(failed: 2, finished: 5, threshold: 0.2))
        #expect(rollout.aboveThreshold == true && rollout.ruleSource == "profile")
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
        #expect(rollout.rule == nil && rollout.aboveThreshold == nil && rollout.judgement == .noRule, "no profile given: no threshold")
        // Why the unit failed: its run's failed step, as the ledger holds it (none here: the result names the provision run's key).
        #expect(rollout.failedUnits.map(\.serial) == [fixture.serials[0]])
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

    // MARK: The halt rule as a manager reads it

    static func stage(_ state: RolloutStageState, percentage: Double = 100, halt: RolloutHalt? = nil) -> RolloutStage {
        RolloutStage(rolloutID: "r1", release: "1.8.0", percentage: percentage, state: state, reasonCode: halt == nil ? nil : "fleet_halted",
                     reasonDetail: halt?.json ?? "", trippedBy: halt?.trippedBy, updatedAt: Date(timeIntervalSince1970: 1_796_000_000),
                     updatedBy: "bench-1")
    }

    static func event(_ action: StageAction, at minute: Double) -> StageEvent {
        StageEvent(rolloutID: "r1", action: action, percentageBefore: 100, percentageAfter: 100, station: "bench-1", actor: "Ann",
                   note: action == .resumed ? "cable swapped" : "", at: Date(timeIntervalSince1970: 1_796_000_000 + minute * 60))
    }

    @Test("a halted stage reads as the rule that halted it (recorded with the halt), never as another profile's threshold")
    func haltReadsAsTheRuleThatHaltedIt() throws {
        let rule = RolloutHaltRule(afterDevices: 3, maxFailureRate: 0.2, windowDevices: 10)
        // The ledger's own rule records itself in the finding.
        let found = try #require(rule.evaluate((0..<3).map { Self.result("S\($0)", .failed, station: "bench-1", at: Double($0)) }))
        #expect(found.rule == rule && RolloutHalt(json: found.json) == found)
        var snapshot = FleetSnapshot()
        snapshot.rollouts.stages = [Self.stage(.halted, halt: found)]
        snapshot.rollouts.results = (0..<3).map { Self.result("S\($0)", .failed, station: "bench-1", at: Double($0)) }
        // The profile given says 10 % after 1: the stage's recorded 20 % after 3 is the one shown.
        let view = FleetStatusView(snapshot, selects: { _, _, _ in true },
                                   profiles: ["r1": .init(halt: RolloutPolicy.HaltRule(afterDevices: 1, maxFailureRate: 0.1))])
        let rollout = try #require(view.rollouts.first)
        #expect(rollout.judgement == .halted(failed: 3, finished: 3, threshold: 0.2))
        #expect(rollout.threshold == 0.2 && rollout.rule == rule && rollout.ruleSource == "stage")
        #expect(rollout.events.isEmpty)
        snapshot.rollouts.events = [Self.event(.created, at: 0), Self.event(.halted, at: 3)]
        let history = try #require(FleetStatusView(snapshot, selects: { _, _, _ in true }).rollouts.first?.events)
        #expect(history.map(\.halt) == [nil, .halted(failed: 3, finished: 3, threshold: 0.2)], "the halt that holds the stage now says why")
        let json = try jsonObject(rollout)
        #expect((json["judgement"] as? [String: Any])?["code"] as? String == "halted")
        #expect((json["halt"] as? [String: Any])?["max_failure_rate"] as? Double == 0.2)
        #expect((json["halt"] as? [String: Any])?["source"] as? String == "stage")
    }

    @Test("after a resume the rule's window starts again: an active stage is not 'above the threshold' for the results before it")
    func resumeStartsTheWindowAgain() throws {
        var snapshot = FleetSnapshot()
        snapshot.rollouts.stages = [Self.stage(.active)]
        snapshot.rollouts.events = [Self.event(.created, at: 0), Self.event(.halted, at: 4), Self.event(.resumed, at: 10)]
        snapshot.rollouts.results = (0..<3).map { Self.result("F\($0)", .failed, station: "bench-1", at: Double($0 + 1)) }
            + [Self.result("OK", .succeeded, station: "bench-1", at: 11)]
        let profile = FleetStatusView.RolloutProfile(halt: RolloutPolicy.HaltRule(afterDevices: 2, maxFailureRate: 0.2))
        let rollout = try #require(FleetStatusView(snapshot, selects: { _, _, _ in true }, profiles: ["r1": profile]).rollouts.first)
        #expect(rollout.totals.failureRate == 0.75, "the totals still count every unit")
        #expect(rollout.judgement == .tooFew(finished: 1, needed: 2), "\(rollout.judgement)")
        #expect(rollout.aboveThreshold == false)
        #expect(rollout.events.map(\.halt) == [nil, nil, nil], "a halt since resumed keeps no figures: not known, never made up")
        // Ten finished of which four are newer than the resume, none failed: judged, and not above.
        snapshot.rollouts.results += (0..<3).map { Self.result("N\($0)", .succeeded, station: "bench-2", at: Double(12 + $0)) }
        let later = try #require(FleetStatusView(snapshot, selects: { _, _, _ in true }, profiles: ["r1": profile]).rollouts.first)
        #expect(later.judgement == .notAbove(failed: 0, finished: 4, threshold: 0.2))
        // Too few to judge: 4 finished, the rule waits for 10.
        let patient = FleetStatusView.RolloutProfile(halt: RolloutPolicy.HaltRule(afterDevices: 10, maxFailureRate: 0.2))
        #expect(FleetStatusView(snapshot, selects: { _, _, _ in true }, profiles: ["r1": patient]).rollouts.first?.judgement
                    == .tooFew(finished: 4, needed: 10))
    }

    @Test("the pending series ends at the pending count; units recorded in a region the rollout is not for are not pending")
    func pendingSeriesAndRegions() throws {
        var snapshot = FleetSnapshot()
        snapshot.rollouts.stages = [Self.stage(.active)]
        snapshot.rollouts.results = [Self.result("A", .succeeded, station: "eu-1", at: 1), Self.result("B", .failed, station: "eu-1", at: 2)]
        snapshot.devices = [
            FleetSnapshot.Device(serial: "A", station: "eu-1", region: "ETSI (EU)"), FleetSnapshot.Device(serial: "B", station: "eu-1", region: "ETSI (EU)"),
            FleetSnapshot.Device(serial: "C", station: "eu-1", region: "ETSI (EU)"), FleetSnapshot.Device(serial: "D", station: "eu-1"),
            FleetSnapshot.Device(serial: "US1", station: "us-1", region: "FCC (US), IC (Canada)"), FleetSnapshot.Device(serial: "US2", station: "us-1", region: "FCC (US), IC (Canada)"),
        ]
        let eu = FleetStatusView.RolloutProfile(regions: ["etsi"])
        let rollout = try #require(FleetStatusView(snapshot, selects: { _, _, _ in true }, profiles: ["r1": eu]).rollouts.first)
        // C (ETSI) and D (no region recorded yet: the run sets it) are pending; the FCC units are not.
        #expect(rollout.totals.pending == 2, "\(rollout.totals)")
        #expect(!rollout.byStation.map(\.name).contains("us-1"))
        #expect(rollout.progress.map(\.pending) == [3, 2])
        #expect(rollout.progress.last?.pending == rollout.totals.pending)
        // Without a profile nothing says which region the rollout is for: every selected unit is pending.
        #expect(FleetStatusView(snapshot, selects: { _, _, _ in true }).rollouts.first?.totals.pending == 4)
        // A profile's region policy: its set region, else the allowed ones; all 22 allowed says nothing.
        var profile = try testProfile()
        #expect(FleetStatusView.RolloutProfile(profile).regions == ["fcc"])
        profile.region = Profile.RegionPolicy(set: nil)
        #expect(FleetStatusView.RolloutProfile(profile).regions == nil)
    }

    @Test("failed units name their station, step and reason; throughput counts units per station and day in the view's time zone")
    func failedUnitsAndThroughput() throws {
        var snapshot = FleetSnapshot()
        snapshot.rollouts.stages = [Self.stage(.active)]
        snapshot.rollouts.results = [
            Self.result("A", .failed, station: "s1", at: 0), Self.result("B", .failed, station: "s2", at: 1),
            Self.result("B", .succeeded, station: "s2", at: 2), Self.result("C", .succeeded, station: "s1", at: 600),
        ]
        snapshot.failedSteps = [
            FleetSnapshot.FailedStep(runKey: "run-s1", serial: "A", step: "connect", code: "fleet_port_unavailable", detail: "no carrier",
                                     endedAt: Date(timeIntervalSince1970: 1_796_000_000)),
            FleetSnapshot.FailedStep(runKey: "run-s1", serial: "A", step: "smoke_test", code: "fleet_smoke_test_failed", detail: "missing tags",
                                     endedAt: Date(timeIntervalSince1970: 1_796_000_000), usbPath: "1-1.4"),
            FleetSnapshot.FailedStep(runKey: "run-s2", serial: "B", step: "firmware", code: "fleet_firmware_update_failed", detail: "",
                                     endedAt: Date(timeIntervalSince1970: 1_796_000_060)),
        ]
        let utc = try #require(FleetStatusView(snapshot, selects: { _, _, _ in false }).rollouts.first)
        // B succeeded on its re-run: only A is a failed unit, with its last failed step.
        #expect(utc.failedUnits == [FleetStatusView.FailedUnit(serial: "A", station: "s1", finishedAt: Date(timeIntervalSince1970: 1_796_000_000),
                                                                step: "smoke_test", code: "fleet_smoke_test_failed", detail: "missing tags",
                                                                usbPath: "1-1.4")])
        // 1_796_000_000 is 2026-11-30 00:53 UTC; ten hours later is the same day in UTC.
        #expect(utc.throughput.map(\.day) == ["2026-11-30", "2026-11-30"])
        #expect(utc.throughput.map(\.station) == ["s1", "s2"])
        #expect(utc.throughput[0].counts == FleetStatusView.Counts(done: 1, failed: 1))
        #expect(utc.throughput[1].counts == FleetStatusView.Counts(done: 1, failed: 1), "a re-run counts again")
        // In New York the first three finished the evening before.
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        let local = try #require(FleetStatusView(snapshot, selects: { _, _, _ in false }, timeZone: newYork).rollouts.first)
        #expect(local.throughput.map(\.day) == ["2026-11-29", "2026-11-29", "2026-11-30"])
    }
}
