import Foundation
import GrokAudio
import GrokFirmware
import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import GrokTUF
import Synchronization
import Testing
import UGrokIt

/// Steps that every run does again by nature (they change nothing).
let everyRunSteps: Set<FleetStep> = [.connect, .identify, .record]

func runner(_ bench: FleetBench, _ profile: Profile, _ firmware: FirmwareFixture?, mode: FleetMode = .provision,
            recorder: TestLedger, delegate: (any ConfigurationDelegate)? = nil,
            cancellation: CancelSwitch = CancelSwitch(), concurrency: Int? = nil,
            now: @escaping @Sendable () -> Date = { Date() }) -> FleetRunner {
    FleetRunner(profile: profile, firmware: firmware?.fleet,
                delegate: delegate ?? PolicyDelegate(profile: profile, mode: mode, now: now),
                recorder: recorder, options: bench.options(mode, cancellation: cancellation, concurrency: concurrency))
}

@Suite("Fleet workflow")
struct WorkflowTests {
    @Test("four out-of-the-box Grokkers provisioned at once end correct, recorded; a re-run changes nothing")
    func provisionFour() async throws {
        let bench = FleetBench()
        for i in 0..<4 { try bench.prepare(i, serial: 20_000_000 + UInt32(i)) }
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile()
        let recorder = try TestLedger()
        let report = try await runner(bench, profile, firmware, recorder: recorder).run((0..<4).map { bench.device($0) })
        #expect(report.outcome == .succeeded)
        for i in 0..<4 {
            let state = try bench.state(i)
            #expect(state.firmwareVersion == FirmwareFixture.v180)
            #expect(state.region?.number == 1)
            #expect(state.antennaType == 2 && state.provisioningStatus == .complete && state.hardwareRevision == 3)
            let device = report.devices[i]
            #expect(device.serial == "2000000\(i)")
            #expect(device.firmwareBefore == "1.7.3" && device.firmwareAfter == "1.8.0")
            // Not set before (the vendor's rules show FCC for board revisions up to 5, but
            // GetVersion's "user has set region" flag was clear), set after.
            #expect(device.regionBefore == nil && device.regionAfter == "FCC (US), IC (Canada)")
            for step in FleetStep.allCases { #expect(device.step(step)?.result == .done, "\(step)") }
        }
        let ledger = try recorder.snapshot
        #expect(ledger.devices.count == 4)
        #expect(ledger.devices.values.allSatisfy { $0.firmware == "1.8.0" && $0.provisioned && $0.antennaType == "2" })
        #expect(ledger.smokeTests.count == 8 && ledger.smokeTests.allSatisfy(\.passed))
        #expect(ledger.lastOutcome == .succeeded)
        // AutoConfig met each unit first and the ledger keeps what it chose, by serial and
        // for the card model, for every station that shares it.
        let learned = try recorder.linkSettings()
        #expect(learned.count == 5 && learned.allSatisfy { $0.samplesPerBit == 8 && $0.reason == .autoconfig }, "\(learned)")
        #expect(Set(learned.map(\.subject)) == Set((0..<4).map { .serial("2000000\($0)") } + [.soundCard("emulated")]))

        // Again: every step is satisfied; nothing is done but connect, identify and record.
        let before = try (0..<4).map { try bench.state($0) }
        let again = try await runner(bench, profile, firmware, recorder: recorder).run((0..<4).map { bench.device($0) })
        #expect(again.outcome == .succeeded)
        for device in again.devices {
            for step in device.steps where !everyRunSteps.contains(step.step) {
                #expect(step.result == .skipped, "\(device.device) \(step.step) \(step.code)")
            }
        }
        #expect(try (0..<4).map { try bench.state($0) } == before)
        // Connected at the stored settings: nothing learned anew.
        #expect(try recorder.linkSettings() == learned)
    }

    @Test("outside the maintenance window nothing is flashed (postponed); inside it, it is")
    func maintenanceWindow() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_001)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        // 22:00-06:00 in Berlin; Wednesday noon UTC is 13:00 there.
        let windows = MaintenanceWindows(timeZone: TimeZone(identifier: "Europe/Berlin")!,
                                         windows: [.init(days: Set(MaintenanceWindows.Day.allCases), startMinute: 22 * 60, endMinute: 6 * 60)])
        let profile = try testProfile(windows: windows)
        let recorder = try TestLedger()
        let noon = try await runner(bench, profile, firmware, mode: .rollout, recorder: recorder, now: { wednesdayNoonUTC }).run([bench.device(0)])
        let step = try #require(noon.devices[0].step(.firmware))
        #expect(step.result == .postponed && step.code == "fleet_outside_window")
        #expect(noon.devices[0].outcome == .postponed && noon.outcome == .incomplete)
        #expect(try bench.state(0).firmwareVersion == DeviceState.outOfBoxFirmware)
        #expect(noon.devices[0].step(.reconnect)?.result == .skipped)

        // 23:30 in Berlin (22:30 UTC): inside the window.
        let night = wednesdayNoonUTC.addingTimeInterval(10.5 * 3600)
        let later = try await runner(bench, profile, firmware, mode: .rollout, recorder: recorder, now: { night }).run([bench.device(0)])
        #expect(later.devices[0].step(.firmware)?.result == .done)
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
    }

    @Test("low battery postpones the update; nothing is flashed")
    func lowBattery() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_002, battery: 10, revision: 6)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile(minimumBattery: 30, revision: 6)
        let report = try await runner(bench, profile, firmware, recorder: try TestLedger()).run([bench.device(0)])
        let step = try #require(report.devices[0].step(.firmware))
        #expect(step.result == .postponed && step.code == "fleet_battery_low", "\(step)")
        #expect(step.arguments == ["sim:0", "10", "30"])
        #expect(try bench.state(0).firmwareVersion == DeviceState.outOfBoxFirmware)
        // The rest was done: provisioned, region set, smoke-tested.
        #expect(report.devices[0].step(.region)?.result == .done)
        #expect(report.devices[0].step(.smokeTest)?.result == .done)
    }

    @Test("a downgrade is refused unless the profile allows it")
    func downgrade() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_003)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let refused = try await runner(bench, try testProfile(target: .version(FirmwareFixture.v170)), firmware,
                                       recorder: try TestLedger()).run([bench.device(0)])
        let step = try #require(refused.devices[0].step(.firmware))
        #expect(step.result == .refused && step.code == "fleet_downgrade_not_allowed")
        #expect(refused.devices[0].outcome == .refused)
        #expect(try bench.state(0).firmwareVersion == DeviceState.outOfBoxFirmware)

        let allowed = try await runner(bench, try testProfile(target: .version(FirmwareFixture.v170), allowDowngrade: true), firmware,
                                       recorder: try TestLedger()).run([bench.device(0)])
        #expect(allowed.devices[0].step(.firmware)?.result == .done)
        #expect(allowed.devices[0].step(.finalSmokeTest)?.result == .done)
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v170)
    }

    @Test("the staged rollout flashes exactly the serial numbers it selects, the same ones every time")
    func rolloutSelection() async throws {
        let bench = FleetBench()
        let serials: [UInt32] = (1...6).map { 40_000_000 + $0 }
        for (i, serial) in serials.enumerated() { try bench.prepare(i, serial: serial) }
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let rollout = RolloutPolicy(id: "fw-1.8.0-stage-1", percentage: 50)
        let expected = Set(serials.map { ReaderInfo.formatSerialNumber($0) }.filter { RolloutSelection.selects(rollout, serial: $0) })
        #expect(!expected.isEmpty && expected.count < serials.count, "the fixture's serials must split")
        let profile = try testProfile(rollout: rollout)
        let devices = serials.indices.map { bench.device($0) }
        // The dry run predicts it, twice alike, touching nothing.
        let states = try serials.indices.map { try bench.state($0) }
        let plan1 = runner(bench, profile, firmware, mode: .rollout, recorder: try TestLedger()).plan(devices, policy: PolicyDelegate(profile: profile, mode: .rollout))
        let plan2 = runner(bench, profile, firmware, mode: .rollout, recorder: try TestLedger()).plan(devices, policy: PolicyDelegate(profile: profile, mode: .rollout))
        #expect(plan1 == plan2)
        #expect(Set(plan1.filter { $0.steps.first { $0.step == .firmware }?.action == .run }.compactMap(\.serial)) == expected)
        #expect(try serials.indices.map { try bench.state($0) } == states)

        let report = try await runner(bench, profile, firmware, mode: .rollout, recorder: try TestLedger()).run(devices)
        var flashed = Set<String>()
        for (i, device) in report.devices.enumerated() {
            let step = try #require(device.step(.firmware))
            if step.result == .done {
                flashed.insert(try #require(device.serial))
                #expect(try bench.state(i).firmwareVersion == FirmwareFixture.v180)
            } else {
                #expect(step.result == .skipped && step.code == "fleet_not_in_rollout")
                #expect(try bench.state(i).firmwareVersion == DeviceState.outOfBoxFirmware)
            }
        }
        #expect(flashed == expected)
    }

    @Test("the halt rule, over the ledger's results, stops starting devices once too many failed; the stage stays halted for the next run")
    func haltRule() async throws {
        let bench = FleetBench()
        for i in 0..<5 { try bench.prepare(i, serial: 50_000_000 + UInt32(i)) }
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        var profile = try testProfile(rollout: RolloutPolicy(id: "halt", percentage: 100, halt: .init(afterDevices: 2, maxFailureRate: 0.4)))
        profile.timeouts.reconnect = 3
        let ledger = try Ledger.open(path: bench.path + "/ledger.sqlite")
        func run(_ devices: [FleetDevice], units: UnitRegistry) async throws -> FleetReport {
            let options = bench.options(.rollout, concurrency: 1)
            let stage = RolloutStageTracker(store: ledger, rollout: profile.rollout!, station: options.station,
                                            operatorName: options.operatorName, runKey: options.runID)
            // Every unit loses its power 300 bytes into the update.
            let delegate = EventStreamDelegate(decider: PolicyDelegate(profile: profile, mode: .rollout, stage: stage)) { event in
                if event.event == "firmware_progress", let done = event.data["done"]?.integer, done >= 300 { units.cutPower(event.device, after: 0) }
            }
            return try await FleetRunner(profile: profile, firmware: firmware.fleet, delegate: delegate, recorder: ledger,
                                         options: options).run(devices)
        }
        let units = UnitRegistry()
        let report = try await run((0..<4).map { units.device(bench, $0) }, units: units)
        #expect(report.devices.map(\.outcome) == [.failed, .failed, .halted, .halted])
        #expect(report.devices[0].step(.firmware)?.code == "fleet_firmware_update_failed")
        #expect(report.devices[2].code == "fleet_halted" && report.devices[2].steps.isEmpty)
        #expect(report.devices[2].arguments == ["halt", "2", "2", "40", "test", "2"])
        #expect(report.outcome == .failed)
        let stage = try #require(try ledger.rolloutStage("halt"))
        #expect(stage.state == .halted && stage.trippedBy == "test")
        #expect(try ledger.rolloutResults("halt").map(\.outcome) == [.failed, .failed], "the halted units are not counted")
        // Another run of the rollout starts nothing: the stage is halted in the ledger.
        let again = try await run([units.device(bench, 4)], units: UnitRegistry())
        #expect(again.devices.map(\.outcome) == [.halted])
        // The halted ones were never touched.
        for i in 2..<5 {
            #expect(try bench.state(i).region == nil)
            #expect(try bench.state(i).firmwareVersion == DeviceState.outOfBoxFirmware)
        }
    }

    /// A person who is offered regions, remembers them, and answers with a choice that is
    /// not on the list.
    final class ChoosesNotOffered: ConfigurationDelegate, @unchecked Sendable {
        let offered = Mutex<[String]>([])
        var isInteractive: Bool { true }
        func chooseRegionFromRegions(_ context: FleetDeviceContext, names: [String], selected: Int?) -> Int? {
            offered.withLock { $0 = names }
            return names.count
        }
    }

    @Test("only the regions the profile allows are offered; a choice outside them is refused and nothing is set")
    func regionNotAllowed() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_004)
        var profile = try testProfile()
        profile.region = Profile.RegionPolicy(set: nil, allowed: [try require(RegionCatalog.find("fcc")), try require(RegionCatalog.find("australia"))])
        let chooser = ChoosesNotOffered()
        let report = try await runner(bench, profile, nil, recorder: try TestLedger(), delegate: chooser).run([bench.device(0)])
        let step = try #require(report.devices[0].step(.region))
        #expect(step.result == .refused && step.code == "fleet_region_not_chosen")
        #expect(chooser.offered.withLock { $0 } == profile.region?.allowed.map(\.name))
        #expect(try bench.state(0).region == nil)
        #expect(report.devices[0].step(.firmware) == nil)
    }

    @Test("the signed region catalogue decides what a unit may choose: a region it does not list is refused, one it lists is set")
    func regionCatalogue() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_005)
        try bench.prepare(1, serial: 30_000_006)
        let profile = try testProfile()
        // The catalogue lets revision 3 choose only ETSI: the profile's FCC is refused.
        let etsiOnly = try await FirmwareFixture(directory: bench.path + "/cache-etsi", regions: ["etsi"])
        let refused = try await runner(bench, profile, etsiOnly, recorder: try TestLedger()).run([bench.device(0)])
        let step = try #require(refused.devices[0].step(.region))
        #expect(step.result == .refused, "\(step.code)")
        #expect(try bench.state(0).region == nil)
        // With FCC listed, it is set.
        let withFCC = try await FirmwareFixture(directory: bench.path + "/cache-fcc", regions: ["fcc", "etsi"])
        let done = try await runner(bench, profile, withFCC, recorder: try TestLedger()).run([bench.device(1)])
        #expect(done.devices[0].step(.region)?.result == .done)
        #expect(try bench.state(1).region?.number == 1)
    }

    @Test("a Grokker left in its loader by an interrupted update (power kept) is repaired by the update, then provisioned")
    func leftInLoader() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_007)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        // The same powered unit for both hosts: the first stops once the unit runs its new
        // loader, before the application is sent.
        let grokker = try EmulatedGrokker(benchDirectory: bench.path, index: 0)
        let first = try ReaderSession(port: SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker))
        _ = try first.connect()
        let release = try await firmware.fleet.release(try #require(firmware.fleet.listings.first))
        var second = false
        let stopped = FirmwareUpdater(session: first).update(to: release.ugif, progress: { second = second || $0.secondImage },
                                                             shouldCancel: { second })
        #expect(stopped.result == .cancelled)
        #expect(grokker.softwareType == .loader)
        first.close()
        let box = UnitBox(grokker)
        let unit = FleetDevice(name: "sim:0") {
            SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: box.unit)
        }
        let report = try await runner(bench, try testProfile(), firmware, recorder: try TestLedger()).run([unit])
        let steps = report.devices.first?.steps.map { "\($0.step) \($0.result) \($0.code)" } ?? []
        #expect(report.outcome == .succeeded, "\(steps)")
        // The repair came first: nothing else can be done by a loader.
        #expect(report.devices[0].steps.map(\.step).prefix(4) == [.connect, .identify, .firmware, .reconnect], "\(steps)")
        #expect(grokker.softwareType == .application)
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
        #expect(try bench.state(0).provisioningStatus == .complete)
    }

    @Test("verify changes nothing: the device state is the same before and after, and mismatches fail")
    func verifyChangesNothing() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_005)
        try bench.prepare(1, serial: 30_000_006)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile()
        let recorder = try TestLedger()
        _ = try await runner(bench, profile, firmware, recorder: recorder).run([bench.device(0)])

        let before = try [bench.state(0), bench.state(1)]
        let flash = FileManager.default.contents(atPath: bench.path + "/sim-0/flash.bin")
        let stepsBefore = try recorder.snapshot.steps.count
        let report = try await runner(bench, profile, firmware, mode: .verify, recorder: recorder).run([bench.device(0), bench.device(1)])
        #expect(try [bench.state(0), bench.state(1)] == before)
        #expect(FileManager.default.contents(atPath: bench.path + "/sim-0/flash.bin") == flash)
        // The provisioned one passes every check, with a smoke test.
        #expect(report.devices[0].outcome == .done)
        for step in [FleetStep.provision, .region, .smokeTest, .firmware] { #expect(report.devices[0].step(step)?.code == "step_verified") }
        // The out-of-the-box one fails verification (every mismatch: see "verify reports every difference").
        #expect(report.devices[1].outcome == .failed)
        #expect(report.devices[1].step(.provision)?.code == "fleet_verify_mismatch")
        // Only the verify run's steps were added to the ledger, none of them a change.
        let added = try recorder.snapshot.steps.dropFirst(stepsBefore)
        #expect(added.allSatisfy { $0.runID == report.runID })
    }

    @Test("a run cancelled after some steps and re-run converges, with no step done twice", arguments: [3, 8, 11, 13])
    func interruptAndResume(after steps: Int) async throws {
        let bench = FleetBench()
        for i in 0..<2 { try bench.prepare(i, serial: 60_000_000 + UInt32(i)) }
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile()
        let cancel = CancelSwitch()
        let recorder = try TestLedger(afterStep: { count in if count >= steps { cancel.cancel() } })
        let first = try await runner(bench, profile, firmware, recorder: recorder, cancellation: cancel).run([bench.device(0), bench.device(1)])
        #expect(first.outcome == .interrupted)
        let second = try await runner(bench, profile, firmware, recorder: recorder).run([bench.device(0), bench.device(1)])
        #expect(second.outcome == .succeeded)
        for i in 0..<2 {
            let state = try bench.state(i)
            #expect(state.firmwareVersion == FirmwareFixture.v180 && state.region?.number == 1 && state.provisioningStatus == .complete)
        }
        let done = try recorder.snapshot.steps.filter { $0.result == .done && !everyRunSteps.contains($0.step) }
        var seen = Set<String>()
        for step in done {
            #expect(seen.insert("\(step.serial) \(step.step)").inserted, "\(step.serial) \(step.step) done twice")
        }
        // Every change the workflow makes, and both smoke tests, done exactly once per device
        // (a reconnect only follows a flash in the same run: a re-run connects afresh anyway).
        let required: [FleetStep] = [.provision, .region, .smokeTest, .firmware, .finalSmokeTest]
        for serial in ["60000000", "60000001"] {
            for step in required { #expect(seen.contains("\(serial) \(step)"), "\(serial) \(step) never done") }
        }
        if seen.count < 10 {
            for r in try recorder.snapshot.steps { print(steps, r.runID.prefix(4), r.serial, r.step.rawValue, r.result.rawValue, r.code, r.detail.prefix(120)) }
        }
    }

    /// CI once saw `interruptAndResume(after: 13)` fail this way, by timing: the run was stopped
    /// while the updater waited for the unit to come back on the new image, so the update was
    /// made but its step ended interrupted. The re-run tested the unit again before the update
    /// step (firmware "changed elsewhere") and recorded no update at all.
    @Test("a run stopped after the new image started: the re-run records the update as that run's, once, and tests the unit once after it")
    func stoppedWhileTheNewImageStarts() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 60_000_010)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile()
        let cancel = CancelSwitch()
        let recorder = try TestLedger()
        // A unit this station knows (its setting stored: connected without AutoConfig). With
        // AutoConfig's echoes at the first connection the same stop is reported
        // fleet_interrupted, not fleet_update_unfinished: not explained yet (issue 22 notes).
        try recorder.recordLinkSetting(LinkSettingRecord(subject: .serial("60000020"), samplesPerBit: 8, sampleRate: 44_100,
                                                         reason: .autoconfig, station: "", recordedAt: Date()))
        let watched = FleetDevice(name: "sim:0") {
            let unit = try EmulatedGrokker(benchDirectory: bench.path, index: 0)
            let peer = BootWatcher(unit) { cancel.cancel() }
            return SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: peer)
        }
        let first = try await runner(bench, profile, firmware, recorder: recorder, cancellation: cancel).run([watched])
        #expect(first.outcome == .interrupted)
        #expect(first.devices[0].step(.firmware)?.code == "fleet_interrupted", "\(first.devices[0].steps.map(\.code))")
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180, "the update was made before the stop")

        let second = try await runner(bench, profile, firmware, recorder: recorder).run([bench.device(0)])
        #expect(second.outcome == .succeeded)
        #expect(second.devices[0].step(.smokeTest)?.code == "step_already_satisfied", "no test before an update already made")
        #expect(second.devices[0].step(.firmware)?.code == "step_already_satisfied")
        #expect(second.devices[0].step(.finalSmokeTest)?.result == .done, "the update still gets its smoke test")
        let done = try recorder.snapshot.steps.filter { $0.result == .done && !everyRunSteps.contains($0.step) }
        for step: FleetStep in [.provision, .region, .smokeTest, .firmware, .finalSmokeTest] {
            #expect(done.filter { $0.step == step }.count == 1, "\(step): \(done.map { "\($0.step) \($0.code)" })")
        }
        let update = try #require(done.first { $0.step == .firmware })
        #expect(update.runID == first.runID && update.code == "step_completed_by_interrupted_run")
    }

    @Test("a run stopped during the reader image's upload: the unit is in its loader, and the summary, the step's code and info say the update is not finished (no downgrade to the loader's version); a re-run finishes it")
    func stoppedInTheLoader() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 60_000_020)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile()
        let cancel = CancelSwitch()
        let recorder = try TestLedger()
        try recorder.recordLinkSetting(LinkSettingRecord(subject: .serial("60000020"), samplesPerBit: 8, sampleRate: 44_100,
                                                         reason: .autoconfig, station: "", recordedAt: Date()))
        let watched = FleetDevice(name: "sim:0") {
            let unit = try EmulatedGrokker(benchDirectory: bench.path, index: 0)
            return SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: LoaderWatcher(unit) { cancel.cancel() })
        }
        let first = try await runner(bench, profile, firmware, recorder: recorder, cancellation: cancel).run([watched])
        #expect(first.outcome == .interrupted)
        let device = first.devices[0]
        #expect(device.inLoader && device.firmwareAfter == nil, "\(device.firmwareBefore ?? "-") -> \(device.firmwareAfter ?? "-")")
        #expect(device.firmwareBefore == "1.7.3")
        #expect(device.step(.firmware)?.code == "fleet_update_unfinished", "\(device.steps.map(\.code))")
        #expect(device.code == "fleet_update_unfinished")
        let recorded = try #require(try recorder.snapshot.steps.last { $0.step == .firmware })
        #expect(recorded.code == "fleet_update_unfinished" && device.step(.firmware)?.firmwareAfter == nil)
        // Interrupted, not failed: the unit is not broken, and the same command finishes it.
        #expect(recorded.result == .interrupted && device.step(.firmware)?.result == .interrupted)
        #expect(device.outcome == .interrupted)
        let info = try #require(InfoJob(access: DeviceJobTests.access(bench)).query(.emulated(index: 0)).identity)
        #expect(info.inLoader)

        let second = try await runner(bench, profile, firmware, recorder: recorder).run([bench.device(0)])
        #expect(second.outcome == .succeeded && !second.devices[0].inLoader)
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
        let after = try #require(InfoJob(access: DeviceJobTests.access(bench)).query(.emulated(index: 0)).identity)
        #expect(!after.inLoader)
    }

    @Test("a Grokker locked by another run is refused and left alone")
    func locked() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_007)
        let held = try #require(try DeviceLock.acquire(directory: bench.lockDirectory, serial: "30000007"))
        let report = try await runner(bench, try testProfile(), nil, recorder: try TestLedger()).run([bench.device(0)])
        #expect(report.devices[0].step(.identify)?.code == "fleet_device_locked")
        #expect(report.devices[0].outcome == .refused)
        #expect(try bench.state(0).provisioningStatus == ProvisioningStatus.none)
        held.unlock()
        #expect(try DeviceLock.acquire(directory: bench.lockDirectory, serial: "30000007") != nil)
    }

    @Test("a Grokker whose port another run holds is not even opened: refused, unchanged, nothing recorded")
    func portLocked() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_017)
        let before = try bench.state(0)
        let device = bench.device(0)
        let key = try #require(device.portKey)
        let held = try #require(try DeviceLock.acquire(directory: bench.lockDirectory, port: key))
        let recorder = try TestLedger()
        let report = try await runner(bench, try testProfile(), nil, recorder: recorder).run([device])
        #expect(report.devices[0].step(.connect)?.code == "fleet_port_locked")
        #expect(report.devices[0].outcome == .refused && report.devices[0].serial == nil)
        #expect(report.devices[0].steps.count == 1, "nothing after the refused connect")
        #expect(try bench.state(0) == before)
        let snapshot = try recorder.snapshot
        #expect(snapshot.devices.isEmpty && snapshot.steps.isEmpty)
        held.unlock()
        #expect(try DeviceLock.acquire(directory: bench.lockDirectory, port: key) != nil)
    }

    @Test("two runs started together on the same fresh Grokkers: each change is made once, every done is true")
    func twoRunsOnTheSameGrokkers() async throws {
        for trial in 0..<3 {
            let bench = FleetBench()
            // Fresh units: no state yet, only the scene, so the runs race to create them too.
            for i in 0..<2 {
                let unit = DeviceStateStore.deviceDirectory(in: bench.path, index: i)
                try FileManager.default.createDirectory(atPath: unit, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: repositoryRoot + "/profiles/scenes/demo.json", toPath: unit + "/scene.json")
            }
            let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
            let profile = try testProfile()
            let recorder = try TestLedger()
            let devices = (0..<2).map { bench.device($0) }
            async let first = runner(bench, profile, firmware, recorder: recorder).run(devices)
            async let second = runner(bench, profile, firmware, recorder: recorder).run(devices)
            let reports = try await [first, second]
            for i in 0..<2 {
                let state = try bench.state(i)
                let serial = String(format: "%08u", state.serialNumber)
                let done = try recorder.snapshot.steps.filter { $0.serial == serial && $0.result == .done }
                for step: FleetStep in [.provision, .region, .firmware] {
                    #expect(done.filter { $0.step == step }.count == 1, "trial \(trial) \(serial) \(step)")
                }
                // Whoever says done about this Grokker is right about it.
                for report in reports where report.devices[i].outcome == .done {
                    #expect(report.devices[i].serial == serial)
                    #expect(state.region?.number == 1 && state.provisioningStatus == .complete)
                    #expect(state.firmwareVersion == FirmwareFixture.v180)
                }
                #expect(reports.filter { $0.devices[i].outcome == .done }.count >= 1)
            }
            let recorded = try recorder.snapshot.devices
            #expect(Set(recorded.keys) == Set((0..<2).map { String(format: "%08u", try! bench.state($0).serialNumber) }))
        }
    }

    @Test("the event stream emits every step with stable codes, as JSON lines, and passes decisions through")
    func eventStream() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_008, battery: 10, revision: 6)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile(minimumBattery: 30, revision: 6)
        let lines = Mutex<[String]>([])
        let delegate = EventStreamDelegate(decider: PolicyDelegate(profile: profile, mode: .provision)) { event in
            lines.withLock { $0.append(event.jsonLine()) }
        }
        _ = try await runner(bench, profile, firmware, recorder: try TestLedger(), delegate: delegate).run([bench.device(0)])
        let events = try lines.withLock { $0 }.map { try JSONDecoder().decode(FleetEvent.self, from: Data($0.utf8)) }
        #expect(events.first?.event == "device_started" && events.last?.event == "device_finished")
        #expect(events.filter { $0.event == "step_finished" }.map { $0.data["step"]?.string ?? "" } == FleetStep.allCases.map(\.rawValue))
        let offered = try #require(events.first { $0.event == "firmware_update_offered" })
        #expect(offered.data["decision"] == "postpone" && offered.data["reason"] == "fleet_battery_low")
        // Counts and yes/no keep their JSON types through the line and back.
        #expect(offered.data["battery_percent"] == 10)
        #expect(events.first { $0.event == "microphone_permission" }?.data["granted"] == true)
        #expect(events.filter { $0.event == "step_finished" }.allSatisfy { $0.data["duration_s"]?.number != nil })
        #expect(offered.arguments == ["sim:0", "10", "30"])
        // The profile names the region: it is set without a question.
        #expect(events.contains { $0.event == "region_set" && $0.data["region"] == "FCC (US), IC (Canada)" })
        #expect(!events.contains { $0.event == "region_confirm" })
        #expect(events.allSatisfy { $0.device == "sim:0" })
    }
}

/// Hands one powered emulated Grokker to the run's device thread (one user at a time).
/// An emulated Grokker that calls `booted` once, the first time it runs its application
/// again after running its loader (an update's new image has started), and then holds that
/// transfer past a stop's grace.
final class BootWatcher: CablePeer, @unchecked Sendable {
    let unit: EmulatedGrokker
    let booted: () -> Void
    private var sawLoader = false
    private var fired = false

    init(_ unit: EmulatedGrokker, booted: @escaping () -> Void) {
        self.unit = unit
        self.booted = booted
    }

    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        unit.process(input: input, output: output)
        if unit.softwareType == .loader { sawLoader = true }
        if sawLoader, !fired, unit.softwareType == .application {
            fired = true
            booted()
            // A machine busy elsewhere: this transfer takes longer than a stop's grace, so the
            // stop interrupts it (the updater is waiting for the unit's answer on the new image).
            Thread.sleep(forTimeInterval: WallClockBound.cancelGraceSeconds + 0.2)
        }
    }
}

/// Passes the cable's samples to `unit` and calls `entered` once the unit runs its loader
/// (the loader image is in and the reader image's upload is about to begin).
final class LoaderWatcher: CablePeer, @unchecked Sendable {
    let unit: EmulatedGrokker
    let entered: () -> Void
    private var fired = false

    init(_ unit: EmulatedGrokker, entered: @escaping () -> Void) {
        self.unit = unit
        self.entered = entered
    }

    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        unit.process(input: input, output: output)
        if !fired, unit.softwareType == .loader {
            fired = true
            entered()
        }
    }
}

final class UnitBox: @unchecked Sendable {
    let unit: EmulatedGrokker
    init(_ unit: EmulatedGrokker) { self.unit = unit }
}

@Suite("The README's main job")
struct MainJobTests {
    @Test("profiles/bench-us.json provisions four out-of-the-box Grokkers from the shipped demo channel (a file:// TUF repository): region, 1.7.3 -> 1.8.0, smoke tests")
    func benchUSFromTheDemoChannel() async throws {
        let bench = FleetBench()
        for i in 0..<4 { try bench.prepare(i, serial: 80_000_000 + UInt32(i)) }
        let profile = try Profile.load(path: repositoryRoot + "/profiles/bench-us.json")
        let policy = try #require(profile.firmware)
        let station = StationRepository(stateDirectory: bench.path + "/tuf-state",
                                        trustedRootFile: repositoryRoot + "/firmware/demo-channel/root.json",
                                        repositoryURL: "file://" + repositoryRoot + "/firmware/demo-channel", fetcher: LocalFileFetcher())
        let firmware = try await FleetFirmware.load(FirmwareChannel(repository: station, name: policy.channel), prefetch: policy)
        #expect(firmware.listings.map(\.metadata.version) == [FirmwareFixture.v180])
        let recorder = try TestLedger()
        let report = try await FleetRunner(profile: profile, firmware: firmware, delegate: PolicyDelegate(profile: profile, mode: .provision),
                                           recorder: recorder, options: bench.options(.provision))
            .run((0..<4).map { bench.device($0) })
        for device in report.devices {
            #expect(device.outcome == .done, "\(device.steps.map { "\($0.step) \($0.result) \($0.code) \($0.detail)" })")
            #expect(device.firmwareBefore == "1.7.3" && device.firmwareAfter == "1.8.0")
            #expect(device.regionAfter == "FCC (US), IC (Canada)")
        }
        for i in 0..<4 {
            let state = try bench.state(i)
            #expect(state.firmwareVersion == FirmwareFixture.v180 && state.region?.number == 1 && state.provisioningStatus == .complete)
        }
        let smokeTests = try recorder.snapshot.smokeTests
        #expect(smokeTests.count == 8 && smokeTests.allSatisfy(\.passed))
        #expect(report.outcome == .succeeded)
    }
}
