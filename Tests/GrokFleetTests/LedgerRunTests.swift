import Foundation
import GrokBasics
import GrokAudio
import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Synchronization
import Testing
import UGrokIt

@Suite("Fleet runs on the SQLite ledger")
struct LedgerRunTests {
    @Test("sixteen Grokkers, runs stopped at random moments and re-run: all end correct, no step done twice, nothing missing from the ledger")
    func sixteenInterrupted() async throws {
        let bench = FleetBench()
        let count = 16
        for i in 0..<count { try bench.prepare(i, serial: 70_000_000 + UInt32(i)) }
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile()
        let ledger = try Ledger.open(path: bench.path + "/ledger.sqlite")
        var random = SplitMix64(seed: 16)
        var stops = 0
        var outcome: GrokFleet.RunOutcome = .interrupted
        var runs = 0
        while outcome != .succeeded, runs < 8 {
            runs += 1
            let cancel = CancelSwitch()
            // The first three runs stop somewhere in the first 60 recorded steps; then one runs through.
            let limit = runs <= 3 ? 1 + Int(random.next() % 60) : Int.max
            let runner = FleetRunner(
                profile: profile, firmware: firmware.fleet, delegate: PolicyDelegate(profile: profile, mode: .provision),
                // The ledger, the run stopped once `limit` steps have been recorded.
                recorder: try TestLedger(ledger, afterStep: { count in if count >= limit { cancel.cancel() } }),
                options: bench.options(.provision, cancellation: cancel))
            let report = try await runner.run((0..<count).map { bench.device($0) })
            outcome = report.outcome
            if outcome == .interrupted { stops += 1 }
        }
        #expect(outcome == .succeeded)
        #expect(stops >= 1)
        for i in 0..<count {
            let state = try bench.state(i)
            #expect(state.firmwareVersion == FirmwareFixture.v180 && state.region?.number == 1 && state.provisioningStatus == .complete,
                    "sim:\(i)")
        }
        // The ledger: every run finished, every device there, every change done exactly once.
        #expect(try ledger.runs().count == runs)
        #expect(try ledger.runs().allSatisfy { $0.endedAt != nil })
        #expect(try ledger.devices().count == count)
        let required = ["provision", "region", "smoke_test", "firmware", "final_smoke_test"]
        for i in 0..<count {
            let serial = String(70_000_000 + i)
            let done = try ledger.steps(serial: serial).filter { $0.result == .done }.map(\.step)
            for step in required {
                #expect(done.filter { $0 == step }.count == 1, "\(serial) \(step): \(done)")
            }
            #expect(try ledger.smokeTests(serial: serial).contains { $0.passed && $0.afterStep == "final_smoke_test" })
        }
    }
}

@Suite("Intents on the SQLite ledger")
struct IntentTests {
    @Test("a change whose record failed is found made by the next run and recorded once, as the first run's")
    func changeWithoutRecordGetsOneAuthor() async throws {
        for step: FleetStep in [.provision, .region, .firmware] {
            let bench = FleetBench()
            try bench.prepare(0, serial: 71_000_000)
            let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
            let profile = try testProfile()
            let ledger = try Ledger.open(path: bench.path + "/ledger.sqlite")
            func run(_ recorder: any LedgerStore) async throws -> FleetReport {
                try await FleetRunner(profile: profile, firmware: firmware.fleet, delegate: PolicyDelegate(profile: profile, mode: .provision),
                                      recorder: recorder, options: bench.options(.provision)).run([bench.device(0)])
            }
            // The step's record fails (the disk filled right after the change was made).
            let first = try await run(TestLedger(ledger, refuseStep: { record in
                record.step == step.rawValue && record.result == .done ? .diskFull(path: "/l.sqlite") : nil
            }))
            #expect(first.devices[0].step(step)?.code == "fleet_recorder_failed", "\(step)")
            let open = try ledger.intents(serial: "71000000", openOnly: true)
            #expect(open.map(\.step) == [step.rawValue], "\(step): the intent stays open")
            let second = try await run(ledger)
            #expect(second.outcome == .succeeded, "\(step): \(second.devices[0].steps.map { "\($0.step) \($0.code)" })")
            let runs = try ledger.runs().map(\.id).sorted()
            for name in ["provision", "region", "firmware"] {
                let done = try ledger.steps(serial: "71000000").filter { $0.step == name && $0.result == .done }
                #expect(done.count == 1, "\(step): \(name) has \(done.count) authors")
                if name == step.rawValue {
                    #expect(done.first?.run == runs.first, "\(step): authored by the run that made it")
                    #expect(done.first?.code == "step_completed_by_interrupted_run")
                }
            }
            let intents = try ledger.intents(serial: "71000000")
            #expect(intents.allSatisfy { $0.outcome == .done }, "\(step): \(intents)")
            #expect(intents.first { $0.step == step.rawValue }?.resolvedBy == runs.last)
            if step == .firmware {
                #expect(second.devices[0].step(.finalSmokeTest)?.result == .done, "the change still gets its smoke test")
                // Not a second one before it: the update is known as the first run's before the smoke test is decided.
                #expect(second.devices[0].step(.smokeTest)?.code == "step_already_satisfied")
            }
        }
    }
}

@Suite("USB ports in the ledger and the report")
struct USBPathRecordTests {
    @Test("a Grokker on a USB sound card: every step the run records, and its report, name the card's USB port beside the serial; one not on USB names none")
    func stepsNameTheUSBPort() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 72_000_000)
        try bench.prepare(1, serial: 72_000_001)
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile()
        let ledger = try Ledger.open(path: bench.path + "/ledger.sqlite")
        var onUSB = bench.device(0)
        onUSB.usbPath = "1-1.4"
        let report = try await FleetRunner(profile: profile, firmware: firmware.fleet, delegate: PolicyDelegate(profile: profile, mode: .verify),
                                           recorder: ledger, options: bench.options(.verify)).run([onUSB, bench.device(1)])
        #expect(report.devices.map(\.usbPath) == ["1-1.4", nil])
        let usb = try ledger.steps(serial: "72000000")
        #expect(!usb.isEmpty && usb.allSatisfy { $0.usbPath == "1-1.4" }, "\(usb.map { "\($0.step) \(String(describing: $0.usbPath))" })")
        let other = try ledger.steps(serial: "72000001")
        #expect(!other.isEmpty && other.allSatisfy { $0.usbPath == nil })
    }
}
