import Foundation
@testable import GrokFleet
import GrokFirmware
import GrokLedger
import GrokkerEmulator
import GrokProtocol
import PostgresTestSupport
import Synchronization
import Testing

/// A watching station (`provision --watch`) on the emulated bench, its ports emptied first,
/// Grokkers plugged in and pulled out as a technician does (issue 26).
@Suite("Watching the bench", .serialized)
struct WatchTests {
    /// The session on its own thread, its events handed to `script` there; returns the summary
    /// and every event.
    final class Station: @unchecked Sendable {
        let bench: FleetBench
        let ports: Bench
        let recorder: TestLedger
        let cancel = CancelSwitch()
        let session: WatchSession
        let statusFile: String

        init(_ bench: FleetBench, firmware: FirmwareFixture?,
             decider: (Profile) -> any ConfigurationDelegate = { PolicyDelegate(profile: $0, mode: .provision) },
             ledger: (any LedgerStore)? = nil, adjust: (inout Profile) -> Void = { _ in }) throws {
            self.bench = bench
            ports = Bench(directory: bench.path)
            recorder = try TestLedger(ledger)
            var profile = try testProfile()
            profile.smokeTest?.duration = 1
            adjust(&profile)
            var options = bench.options(.provision, cancellation: cancel)
            options.uploadJournal = UploadJournalFile(directory: bench.path + "/uploads")
            statusFile = WatchStatus.path(stateDirectory: bench.path + "/state")
            session = WatchSession(profile: profile, firmware: firmware?.fleet, decider: decider(profile),
                                   recorder: recorder, options: options, source: BenchWatchSource(bench: ports),
                                   ports: DevicePortContext(bench: ports, lockDirectory: bench.lockDirectory),
                                   pollInterval: 0.05, statusFile: statusFile)
        }

        func run(_ script: @escaping (WatchSession.Event) throws -> Void) async throws -> WatchSummary {
            let session = self.session
            nonisolated(unsafe) let script = script
            // A session that never ends fails the test instead of hanging it.
            let cancel = self.cancel
            // (Generous: on a loaded machine running the whole suite these sessions have
            // taken 3 minutes of wall clock; a limit that fires is a failure, not a hang.)
            DispatchQueue.global().asyncAfter(deadline: .now() + 600) { cancel.cancel() }
            let result: Result<WatchSummary, any Error> = await withCheckedContinuation { continuation in
                let thread = Thread {
                    continuation.resume(returning: Result { () throws -> WatchSummary in
                        var failure: (any Error)?
                        let summary = try session.run { event in
                            guard failure == nil else { return }
                            do { try script(event) } catch {
                                failure = error
                                self.cancel.cancel()
                            }
                        }
                        if let failure { throw failure }
                        return summary
                    })
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
            return try result.get()
        }
    }

    /// The melodies emulated Grokker `unit` was asked to play, in order (its `sounds.log`).
    static func heard(_ bench: FleetBench, _ unit: Int) -> [[SoundTone]] {
        PlayedSounds.read(directory: DeviceStateStore.deviceDirectory(in: bench.path, index: unit))
    }

    @Test("8 Grokkers plugged one after another (some twice, one pulled out mid-update and plugged into another port): each provisioned once, every step recorded, the update resumed, the sounds in the right order")
    func eightPlugged() async throws {
        let bench = FleetBench()
        for unit in 0..<8 { try bench.prepare(unit, serial: 81_000_000 + UInt32(unit)) }
        // An application of 6 KiB: an upload pulled out past its first 4 KiB sector resumes there.
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache", versions: [FirmwareFixture.v180], applicationBytes: 6144)
        let station = try Station(bench, firmware: firmware)
        for port in 0...10 { try station.ports.unplug(port: port) }

        // What the technician does after each Grokker is finished: (unplug, then plug unit -> port).
        var plan: [(unplug: Int?, unit: Int, port: Int)] = [
            (nil, 2, 2), (nil, 3, 3), (0, 0, 4), (nil, 4, 5), (nil, 5, 6), (nil, 6, 7), (nil, 7, 8), (2, 2, 10)]
        var pulled = false
        var finished: [(port: String, serial: String?, result: WatchResult)] = []
        var plugged: [String] = []
        var sent9: [Int] = []
        try station.ports.plug(port: 0, unit: 0)
        try station.ports.plug(port: 1, unit: 1)
        let summary = try await station.run { event in
            switch event {
            case .grokkerPlugged(let port, _):
                plugged.append(port)
            case .fleet(let event):
                // Where the reader image's upload started on the port it was plugged back into.
                // The update's progress on the port it was plugged back into (in its loader:
                // only the reader image goes, from the first byte or where it stopped).
                if event.device == "sim:9", event.event == "firmware_progress", let done = event.data["done"]?.integer { sent9.append(done) }
                // Unit 1 pulled out in the middle of its reader image's upload.
                if !pulled, event.device == "sim:1", event.event == "firmware_progress", event.data["image"] == "reader",
                   (event.data["done"]?.integer ?? 0) >= 256 + 4096 + 512 {
                    pulled = true
                    try station.ports.unplug(port: 1)
                }
            case .deviceFinished(let port, let report, let result):
                finished.append((port, report.serial, result))
                if port == "sim:1", result == .interrupted {
                    try station.ports.plug(port: 9, unit: 1)  // another port
                } else if !plan.isEmpty {
                    let next = plan.removeFirst()
                    if let unplug = next.unplug { try station.ports.unplug(port: unplug) }
                    try station.ports.plug(port: next.port, unit: next.unit)
                } else if finished.count >= 11 {
                    station.cancel.cancel()
                }
            case .portEmptied, .portAdded, .portRemoved, .status:
                break
            }
        }
        #expect(pulled)
        // The update pulled out mid-way went on from the station's upload journal on the other port.
        // Its first 4 KiB sector was not sent again: the upload went on at 4096 of 6144.
        #expect(sent9.first == 0 && sent9.dropFirst().first == 4096 && sent9.last == 6144, "\(sent9)")
        let lines = finished.map { "\($0.port) \($0.serial ?? "-") \($0.result)" }
        // 8 provisioned, unit 1 once interrupted first, units 0 and 2 once more, already done.
        #expect(finished.count == 11, "\(lines)")
        #expect(finished.filter { $0.result == .provisioned }.count == 8, "\(lines)")
        #expect(Set(finished.filter { $0.result == .provisioned }.compactMap(\.serial)).count == 8, "\(lines)")
        #expect(finished.filter { $0.result == .alreadyDone }.map(\.serial) == ["81000000", "81000002"], "\(lines)")
        #expect(finished.filter { $0.result == .interrupted }.map(\.port) == ["sim:1"], "\(lines)")
        #expect(finished.contains { $0.port == "sim:9" && $0.serial == "81000001" && $0.result == .provisioned }, "\(lines)")
        #expect(summary.tally.provisioned == 8 && summary.tally.alreadyDone == 0 && summary.tally.interrupted == 0 && summary.tally.failed == 0)
        #expect(summary.outcome == .succeeded)
        #expect(plugged.filter { $0 == "sim:2" }.count == 1 && plugged.contains("sim:10"))
        for unit in 0..<8 {
            let state = try bench.state(unit)
            #expect(state.firmwareVersion == FirmwareFixture.v180, "unit \(unit)")
            #expect(state.region?.number == 1 && state.provisioningStatus == .complete, "unit \(unit)")
        }
        // One ledger run; each change made exactly once per Grokker; the pulled-out step interrupted.
        let ledger = try station.recorder.snapshot
        #expect(Set(ledger.steps.map(\.runID)).count == 1)
        for unit in 0..<8 {
            let serial = "8100000\(unit)"
            let steps = ledger.steps.filter { $0.serial == serial }
            for step in [FleetStep.provision, .region, .firmware] {
                #expect(steps.filter { $0.step == step && $0.result == .done }.count == 1, "\(serial) \(step)")
            }
            // Units 0 and 2 came twice; unit 1's interrupted turn ended at its step (no record, as a stop).
            #expect(steps.filter { $0.step == .record }.count == (unit == 0 || unit == 2 ? 2 : 1), "\(serial)")
        }
        let pulledOut = ledger.steps.filter { $0.serial == "81000001" && $0.result == .interrupted }
        #expect(pulledOut.map(\.step) == [.firmware] && pulledOut.first?.code == "fleet_unplugged", "\(pulledOut)")
        #expect(ledger.lastOutcome == .succeeded)
        let status = try #require(try WatchStatus.read(path: station.statusFile))
        #expect(!status.running && status.tally == summary.tally)
        // A Grokker already done is left alone (the default): its second turn ran no smoke test.
        for unit in 0..<8 {
            let smokeTests = ledger.steps.filter { $0.serial == "8100000\(unit)" && [.smokeTest, .finalSmokeTest].contains($0.step) && $0.result == .done }
            #expect(smokeTests.count == 2, "unit \(unit): \(smokeTests.map { "\($0.step) \($0.code)" })")
        }

        // The sounds each unit played, in order, as the profile's cues say (the options play them).
        #expect(!station.session.runner.options.quietReaders)
        let cues = station.session.runner.profile.cues.melodies
        let recognised = try #require(cues[.recognised]), done = try #require(cues[.done])
        let alreadyDone = try #require(cues[.alreadyDone])
        #expect(Set([recognised, done, alreadyDone]).count == 3)
        for unit in [3, 4, 5, 6, 7] { #expect(Self.heard(bench, unit) == [recognised, done], "unit \(unit)") }
        // Plugged twice: done, then greeted as already done (nothing changed on its second turn).
        for unit in [0, 2] { #expect(Self.heard(bench, unit) == [recognised, done, recognised, alreadyDone], "unit \(unit)") }
        // Pulled out mid-update: recognised, nothing at the pull (it is gone); on the other port it
        // answered from its loader, which has no sounds (no recognised), and sounded done once its
        // update was finished and it answered from the new application.
        #expect(Self.heard(bench, 1) == [recognised, done], "unit 1")
    }

    @Test("a Grokker already done: left alone by default (greeted, no smoke test); verified when the profile says station.already_done: verify (its checks and smoke test recorded, greeted)",
          arguments: [Profile.StationConfig.AlreadyDone.leave, .verify])
    func alreadyDone(_ choice: Profile.StationConfig.AlreadyDone) async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 85_000_000)
        let station = try Station(bench, firmware: nil, adjust: { profile in
            profile.firmware = nil
            profile.station = Profile.StationConfig(alreadyDone: choice)
        })
        // Provisioned before the session by a run into the same ledger: already done.
        let profile = station.session.runner.profile
        let before = try await FleetRunner(profile: profile, firmware: nil, delegate: PolicyDelegate(profile: profile, mode: .provision),
                                           recorder: station.recorder, options: bench.options(.provision)).run([bench.device(0)])
        #expect(before.devices[0].outcome == .done, "\(before.devices[0].steps.map { "\($0.step) \($0.result) \($0.code) \($0.detail)" })")
        var finished: [WatchResult] = []
        let summary = try await station.run { event in
            guard case .deviceFinished(_, _, let result) = event else { return }
            finished.append(result)
            station.cancel.cancel()
        }
        let ledger = try station.recorder.snapshot
        let turn = ledger.steps.filter { $0.runID == summary.runID }
        let lines = turn.map { "\($0.step) \($0.result) \($0.code)" }
        #expect(summary.outcome == .succeeded)
        switch choice {
        case .leave:
            #expect(finished == [.alreadyDone])
            #expect(summary.tally.alreadyDone == 1 && summary.tally.verified == 0)
            #expect(!turn.contains { $0.step == .smokeTest && $0.result == .done }, "\(lines)")
            #expect(turn.filter { $0.result == .done }.map(\.step) == [.connect, .identify, .record], "\(lines)")
        case .verify:
            #expect(finished == [.verified])
            #expect(summary.tally.verified == 1 && summary.tally.alreadyDone == 0)
            // verify's checks: provisioning and region as the profile says, the smoke test run.
            for step in [FleetStep.provision, .region, .smokeTest] {
                let checked = turn.contains { (recorded: RecordedStep) in recorded.step == step && recorded.result == .done && recorded.code == "step_verified" }
                #expect(checked, "\(step): \(lines)")
            }
            #expect(ledger.smokeTests.count == 2)
        }
        // Nothing changed: the unit is as the first run left it.
        #expect(try bench.state(0).provisioningStatus == .complete)
        let cues = profile.cues.melodies
        #expect(Self.heard(bench, 0) == [cues[.recognised], cues[.done], cues[.recognised], cues[.alreadyDone]])
    }

    @Test("a verified unit's checks are not work done: a later turn's history has its smoke test, not its step_verified firmware as a change")
    func verifiedChecksAreNoChange() throws {
        let ledger = try TestLedger()
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let run = try ledger.beginRun(RunStart(kind: .provision, profileName: "test", profileSHA256: String(repeating: "ab", count: 32),
                                               station: "test", operatorName: "tester", startedAt: start, key: "verified-turn"))
        for (index, (step, code)) in [("region", "step_verified"), ("smoke_test", "step_verified"), ("firmware", "step_verified")].enumerated() {
            try ledger.recordStep(StepRecord(run: run, serial: "85000001", step: step, startedAt: start.addingTimeInterval(Double(index)),
                                             endedAt: start.addingTimeInterval(Double(index) + 0.5), result: .done, code: code))
        }
        let history = try DeviceWorker.completedSteps(serial: "85000001", in: ledger)
        // Counted as a change after the smoke test, the firmware check would owe a final smoke
        // test on the next turn, which would then not be "already done".
        #expect(history.map(\.step) == [.smokeTest], "\(history.map(\.step))")
    }

    /// What a run on another thread ended with.
    final class Ended: @unchecked Sendable {
        // Written before `signal`, read after `wait`.
        var report: Result<FleetReport, FleetError>?
        let semaphore = DispatchSemaphore(value: 0)
    }

    @Test("a station on the shared PostgreSQL ledger beside a normal run on other ports: both recorded at once, each step in its own run, both seen by the ledger's queries")
    func sharedLedgerBesideARun() async throws {
        let cluster = PostgresCluster.shared
        let uri = cluster.uri(try cluster.newDatabase("watch"))
        let quick = { (profile: inout Profile) in
            profile.firmware = nil
            // (0.3 s has missed a reference tag: the 1 s the other watch tests take.)
            profile.smokeTest?.duration = 1
        }
        let bench = FleetBench()
        try bench.prepare(0, serial: 86_000_000)
        let station = try Station(bench, firmware: nil, ledger: try PostgresLedger.open(uri, station: "bench-watch"), adjust: quick)
        // The normal run: another bench (other ports), through its own connection, as another station's.
        let other = FleetBench()
        for unit in 0..<2 { try other.prepare(unit, serial: 86_000_100 + UInt32(unit)) }
        var profile = try testProfile()
        quick(&profile)
        let runner = FleetRunner(profile: profile, firmware: nil, delegate: PolicyDelegate(profile: profile, mode: .provision),
                                 recorder: try PostgresLedger.open(uri, station: "bench-run"), options: other.options(.provision))
        let devices = [other.device(0), other.device(1)]
        let ended = Ended()
        var started = false
        var watched: [DeviceReport] = []
        let summary = try await station.run { event in
            switch event {
            case .fleet(let event) where event.event == "step_started" && !started:
                // The run starts while the station works its Grokker; the station stops once both ended.
                started = true
                let thread = Thread {
                    ended.report = Result { () throws(FleetError) in try runner.runBlocking(devices) }
                    ended.semaphore.signal()
                }
                thread.stackSize = 1 << 20
                thread.start()
            case .deviceFinished(_, let report, _):
                watched.append(report)
                ended.semaphore.wait()
                station.cancel.cancel()
            default:
                break
            }
        }
        let run = try #require(ended.report).get()
        #expect(watched.map(\.outcome) == [.done] && run.devices.map(\.outcome) == [.done, .done])
        #expect(summary.outcome == .succeeded && run.outcome == .succeeded)
        #expect(summary.runID != run.runID)
        // The read side sees both runs, each with exactly its own Grokkers' steps, every one.
        let query = try LedgerQuery(location: uri)
        #expect(Set(try query.overview(limit: 10).runs.map(\.key)) == [summary.runID, run.runID])
        func recorded(_ key: String) throws -> [String] {
            try query.run(key: key).steps.compactMap { item in
                guard case .step(let name, let result, _, _) = item.event else { return nil }
                return "\(item.serial) \(name) \(result)"
            }.sorted()
        }
        func reported(_ reports: [DeviceReport]) -> [String] {
            reports.flatMap { report in report.steps.map { "\(report.serial ?? "-") \($0.step.rawValue) \($0.result.rawValue)" } }.sorted()
        }
        #expect(try recorded(summary.runID) == reported(watched))
        #expect(try recorded(run.runID) == reported(run.devices))
        #expect(reported(watched).contains("86000000 smoke_test done") && reported(run.devices).contains("86000101 region done"))
    }

    /// The profile's policy, but the first worker of `sim:0` holds on after its update failed
    /// until `release` is signalled (the Grokker stays locked by serial meanwhile).
    struct HoldingDelegate: ConfigurationDelegate {
        let policy: PolicyDelegate
        let release = DispatchSemaphore(value: 0)
        func firmwarePolicy(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision {
            policy.firmwarePolicy(context, offer: offer)
        }
        func afterFirmwareUpdate(_ context: FleetDeviceContext, updated: Bool) {
            if context.device == "sim:0", !updated { _ = release.wait(timeout: .now() + 300) }
        }
    }

    @Test("a Grokker moved to another port at once, while its first worker still holds it, is worked there once that worker ended")
    func movedAtOnce() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 84_000_000)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache", versions: [FirmwareFixture.v180], applicationBytes: 512)
        let holding = Mutex<HoldingDelegate?>(nil)
        let station = try Station(bench, firmware: firmware) { profile in
            let delegate = HoldingDelegate(policy: PolicyDelegate(profile: profile, mode: .provision))
            holding.withLock { $0 = delegate }
            return delegate
        }
        try station.ports.unplug(port: 1)
        var moved = false
        var finished: [String] = []
        let summary = try await station.run { event in
            switch event {
            case .fleet(let event) where event.event == "firmware_update_started" && !moved:
                moved = true
                try station.ports.unplug(port: 0)
                try station.ports.plug(port: 1, unit: 0)
            case .deviceFinished(let port, let report, let result):
                finished.append("\(port) \(result) \(report.code ?? "")")
                // The new port's worker was refused while the first held the Grokker: let it go.
                if port == "sim:1", report.code == "fleet_device_locked" { holding.withLock { $0 }?.release.signal() }
                if result == .provisioned { station.cancel.cancel() }
            default:
                break
            }
        }
        #expect(moved)
        // Refused on the new port while the first worker held it, tried again once that one ended.
        #expect(finished == ["sim:1 incomplete fleet_device_locked", "sim:0 interrupted fleet_unplugged", "sim:1 provisioned "],
                "\(finished)")
        #expect(summary.tally.provisioned == 1 && summary.tally.interrupted == 0 && summary.outcome == .succeeded)
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
    }

    @Test("a stop during two updates ends both interrupted; the summary says so")
    func stopDuringTwoUpdates() async throws {
        let bench = FleetBench()
        for unit in 0..<2 { try bench.prepare(unit, serial: 82_000_000 + UInt32(unit)) }
        // An update long enough that both are still under way when the second one starts.
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache", versions: [FirmwareFixture.v180], applicationBytes: 32768)
        let station = try Station(bench, firmware: firmware)
        var uploading: Set<String> = []
        var running: WatchStatus?
        let summary = try await station.run { event in
            if case .status(let status) = event, status.ports.count == 2 { running = status }
            guard case .fleet(let event) = event, event.event == "firmware_progress" else { return }
            uploading.insert(event.device)
            if uploading.count == 2 { station.cancel.cancel() }
        }
        #expect(uploading == ["sim:0", "sim:1"])
        #expect(summary.tally.interrupted == 2 && summary.tally.provisioned == 0)
        #expect(summary.outcome == .interrupted)
        let ledger = try station.recorder.snapshot
        #expect(ledger.steps.filter { $0.step == .firmware }.map(\.result) == [.interrupted, .interrupted])
        #expect(ledger.lastOutcome == .interrupted)
        let seen = try #require(running)
        #expect(seen.pid == Int(getpid()) && seen.ports.map(\.port) == ["sim:0", "sim:1"])
        let left = try #require(try WatchStatus.read(path: station.statusFile))
        #expect(!left.state().processIsThere && left.tally.interrupted == 2)
    }
}

@Suite("The bench as a watched hub")
struct BenchWatchSourceTests {
    @Test("a fresh bench's ports hold nothing; a Grokker plugged into another port is there before it has state; its own port once it has")
    func whatPortsHold() throws {
        let bench = FleetBench()
        let ports = Bench(directory: bench.path)
        let source = BenchWatchSource(bench: ports)
        func held() throws -> [String: String] {
            Dictionary(uniqueKeysWithValues: try source.scan(busy: []).compactMap { port in port.holds.map { (port.spec.description, $0) } })
        }
        #expect(try held().isEmpty)
        try ports.unplug(port: 0)
        try ports.unplug(port: 1)
        try ports.plug(port: 1, unit: 0)
        #expect(try held() == ["sim:1": "unit 0"])
        try bench.prepare(2, serial: 83_000_002)
        #expect(try held() == ["sim:1": "unit 0", "sim:2": "unit 2"])
    }
}
