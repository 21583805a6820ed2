import Foundation
import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Synchronization
import Testing

/// A rollout run and its stage in the ledger while another station writes the same stage:
/// the run checks the stage before each unit starts and before each firmware decision, so
/// a halt (or a pause) recorded elsewhere stops it within one unit's run.
@Suite("Rollout runs and their stage in the ledger")
struct RolloutStageRunTests {
    static let rollout = RolloutPolicy(id: "mid-run", percentage: 100, halt: .init(afterDevices: 2, maxFailureRate: 0.5, windowDevices: 10))

    /// Another station on the same ledger: its own run, and two failed units recorded the
    /// moment `trigger` says so (once).
    final class OtherStation: @unchecked Sendable {
        let ledger: Ledger
        let runKey: String
        private var done = false

        init(_ ledger: Ledger) throws {
            self.ledger = ledger
            let run = try ledger.beginRun(RunStart(kind: .rollout, profileName: "test", profileSHA256: String(repeating: "ab", count: 32),
                                                   station: "bench-b", operatorName: "op-b", startedAt: Date(), key: "other-station-run"))
            runKey = try #require(try ledger.run(run)?.key)
        }

        func failTwice() throws {
            guard !done else { return }
            done = true
            let check = StageCheck(rolloutID: RolloutStageRunTests.rollout.id, release: nil, profilePercentage: 100,
                                   rule: RolloutHaltRule(afterDevices: 2, maxFailureRate: 0.5, windowDevices: 10), station: "bench-b",
                                   actor: "op-b", runKey: runKey, now: Date())
            for serial in ["90000001", "90000002"] {
                _ = try ledger.recordRolloutResult(RolloutResult(rolloutID: RolloutStageRunTests.rollout.id, runKey: runKey, station: "bench-b",
                                                                 serial: serial, percentage: 100, outcome: .failed, hardwareRevision: "3",
                                                                 firmwareAfter: "1.7.3", finishedAt: Date()), check)
            }
        }
    }

    static func runner(_ bench: FleetBench, _ ledger: Ledger, firmware: FirmwareFixture, onEvent: @escaping @Sendable (FleetEvent) -> Void) throws -> FleetRunner {
        let profile = try testProfile(rollout: rollout)
        let options = bench.options(.rollout, concurrency: 1)
        let stage = RolloutStageTracker(store: ledger, rollout: rollout, station: "bench-a", operatorName: options.operatorName,
                                        runKey: options.runID)
        let delegate = EventStreamDelegate(decider: PolicyDelegate(profile: profile, mode: .rollout, stage: stage), sink: onEvent)
        return FleetRunner(profile: profile, firmware: firmware.fleet, delegate: delegate, recorder: ledger, options: options)
    }

    @Test("another station's halt between two units: the next unit of this run does not start, and names that station")
    func haltBetweenUnits() async throws {
        let bench = FleetBench()
        for i in 0..<2 { try bench.prepare(i, serial: 61_000_000 + UInt32(i)) }
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let ledger = try Ledger.open(path: bench.path + "/ledger.sqlite")
        let other = try OtherStation(ledger)
        let report = try await Self.runner(bench, ledger, firmware: firmware) { event in
            if event.event == "device_finished", event.device == "sim:0" { try? other.failTwice() }
        }.run((0..<2).map { bench.device($0) })
        #expect(report.devices.map(\.outcome) == [.done, .halted])
        #expect(report.devices[1].code == "fleet_halted")
        // 2 of the last 3 failed (bench-b's two), above one half.
        #expect(report.devices[1].arguments == ["mid-run", "2", "3", "50", "bench-b", "2"])
        #expect(try bench.state(1).firmwareVersion == DeviceState.outOfBoxFirmware, "the halted unit was touched")
        #expect(try ledger.rolloutStage("mid-run")?.trippedBy == "bench-b")
        #expect(try ledger.stageEvents("mid-run").map(\.station) == ["bench-a", "bench-b"], "created by bench-a, halted by bench-b")
    }

    @Test("a halt that lands while a unit is on its way: its firmware update is postponed, nothing is flashed")
    func haltBeforeTheFirmwareDecision() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 62_000_000)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let ledger = try Ledger.open(path: bench.path + "/ledger.sqlite")
        let other = try OtherStation(ledger)
        let report = try await Self.runner(bench, ledger, firmware: firmware) { event in
            if event.event == "step_finished", event.data["step"] == "smoke_test" { try? other.failTwice() }
        }.run([bench.device(0)])
        let step = try #require(report.devices[0].step(.firmware))
        #expect(step.result == .postponed && step.code == "fleet_halted", "\(step)")
        #expect(step.arguments.contains("bench-b"))
        #expect(try bench.state(0).firmwareVersion == DeviceState.outOfBoxFirmware)
        // Postponed by policy: counted, as incomplete (not a failure of the release).
        #expect(try ledger.rolloutResults("mid-run").map(\.outcome) == [.failed, .failed, .incomplete])
    }

    @Test("a paused stage starts no unit, with its own reason; after a resume the same run setup goes ahead")
    func pausedStage() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 63_000_000)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let ledger = try Ledger.open(path: bench.path + "/ledger.sqlite")
        let other = try OtherStation(ledger)
        _ = try ledger.checkRolloutStage(StageCheck(rolloutID: "mid-run", release: nil, profilePercentage: 100, rule: nil, station: "bench-b",
                                                    actor: "op-b", runKey: other.runKey, now: Date()))
        _ = try ledger.changeRolloutStage("mid-run", .pause, by: "Ann", note: "", at: Date())
        let paused = try await Self.runner(bench, ledger, firmware: firmware) { _ in }.run([bench.device(0)])
        #expect(paused.devices.map(\.outcome) == [.halted])
        #expect(paused.devices[0].code == "fleet_stage_paused" && paused.devices[0].arguments == ["mid-run", "Ann"])
        _ = try ledger.changeRolloutStage("mid-run", .resume, by: "Ann", note: "", at: Date())
        let resumed = try await Self.runner(bench, ledger, firmware: firmware) { _ in }.run([bench.device(0)])
        #expect(resumed.devices.map(\.outcome) == [.done])
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
    }

    @Test("a 25 % stage leaves the other units untouched: 'not in this stage', no smoke test, no change, not counted; the view counts as the run did")
    func unitsTheStageLeavesOut() async throws {
        let bench = FleetBench()
        // At 25 % of rollout "eu-25" only 64000005 is selected (its place is 0.8; the others' 26.0 and 85.7).
        let serials: [UInt32] = [64_000_001, 64_000_003, 64_000_005]
        for (i, serial) in serials.enumerated() { try bench.prepare(i, serial: serial) }
        let rollout = RolloutPolicy(id: "eu-25", percentage: 25, halt: .init(afterDevices: 5, maxFailureRate: 0.5))
        #expect(serials.map { RolloutSelection.selects(rollout, serial: ReaderInfo.formatSerialNumber($0)) } == [false, false, true])
        let before = try serials.indices.map { try bench.state($0) }
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let ledger = try Ledger.open(path: bench.path + "/ledger.sqlite")
        let profile = try testProfile(rollout: rollout)
        let devices = serials.indices.map { bench.device($0) }
        // The dry run says it first, with the same code.
        let plan = FleetRunner(profile: profile, firmware: firmware.fleet, delegate: PolicyDelegate(profile: profile, mode: .rollout),
                               recorder: ledger, options: bench.options(.rollout, concurrency: 1))
            .plan([devices[0]], policy: PolicyDelegate(profile: profile, mode: .rollout))
        #expect(plan[0].steps.map(\.action) == [.run, .run, .skip, .skip, .skip, .skip, .skip, .skip, .run], "\(plan[0].steps)")
        #expect(plan[0].steps.dropFirst(2).dropLast().allSatisfy { $0.code == "fleet_not_in_rollout" })

        let options = bench.options(.rollout, concurrency: 1)
        let stage = RolloutStageTracker(store: ledger, rollout: rollout, station: "bench-a", operatorName: options.operatorName,
                                        runKey: options.runID)
        let events = Mutex<[FleetEvent]>([])
        let delegate = EventStreamDelegate(decider: PolicyDelegate(profile: profile, mode: .rollout, stage: stage)) { event in
            events.withLock { $0.append(event) }
        }
        let report = try await FleetRunner(profile: profile, firmware: firmware.fleet, delegate: delegate, recorder: ledger,
                                           options: options).run(devices)
        #expect(report.devices.map(\.outcome) == [.notInStage, .notInStage, .done])
        #expect(report.outcome == .succeeded)
        for i in 0..<2 {
            let device = report.devices[i]
            #expect(device.code == "fleet_not_in_rollout" && device.arguments.contains("25"), "\(device)")
            #expect(device.smokeTests.isEmpty, "a smoke test ran on a unit the stage leaves out")
            #expect(device.steps.filter { $0.result == .done }.map(\.step) == [.connect, .identify, .record])
            #expect(device.steps.filter { $0.result == .skipped }.allSatisfy { $0.code == "fleet_not_in_rollout" })
            let after = try bench.state(i)
            #expect(after.firmwareVersion == before[i].firmwareVersion && after.region == before[i].region, "the unit was changed")
        }
        #expect(report.devices[2].step(.firmware)?.result == .done)
        // --json says it with its stable code; the ledger records the skipped steps with theirs.
        let finished = events.withLock { $0 }.filter { $0.event == "device_finished" }.compactMap { $0.data["outcome"]?.string }
        #expect(finished == ["not_in_stage", "not_in_stage", "done"])
        let steps = try ledger.steps(run: nil, serial: ReaderInfo.formatSerialNumber(serials[0]))
        #expect(steps.first { $0.step == "smoke_test" }?.code == "fleet_not_in_rollout")
        #expect(try ledger.smokeTests(serial: ReaderInfo.formatSerialNumber(serials[0])).isEmpty)
        // The rollout's results hold the selected unit only, and the fleet view counts what the run's summary counted.
        #expect(try ledger.rolloutResults("eu-25").map(\.serial) == [ReaderInfo.formatSerialNumber(serials[2])])
        let rolloutView = try #require(try FleetStatusView(location: bench.path + "/ledger.sqlite").rollouts.first)
        #expect(rolloutView.totals == FleetStatusView.Counts(done: report.devices.filter { $0.outcome == .done }.count,
                                                             failed: report.devices.filter { $0.outcome == .failed }.count))
    }
}
