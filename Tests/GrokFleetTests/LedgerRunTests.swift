import Foundation
import GrokAudio
import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Synchronization
import Testing
import UGrokIt

/// The ledger-backed recorder, cancelling the run once `limit` steps have been recorded
/// (a run stopped at that moment).
final class StoppingRecorder: GrokFleet.RunRecorder {
    let inner: LedgerRecorder
    let cancel: CancelSwitch
    let limit: Int
    private let count = Mutex(0)

    init(_ inner: LedgerRecorder, cancel: CancelSwitch, after limit: Int) {
        self.inner = inner
        self.cancel = cancel
        self.limit = limit
    }

    func beginRun(_ run: GrokFleet.RunInfo) throws { try inner.beginRun(run) }
    func recordStep(_ step: GrokFleet.StepRecord) throws {
        try inner.recordStep(step)
        if count.withLock({ $0 += 1; return $0 }) >= limit { cancel.cancel() }
    }
    func recordSmokeTest(_ result: GrokFleet.SmokeTestRecord) throws { try inner.recordSmokeTest(result) }
    func upsertDevice(_ device: GrokFleet.DeviceRecord) throws { try inner.upsertDevice(device) }
    func finishRun(_ summary: GrokFleet.RunSummary) throws { try inner.finishRun(summary) }
    func completedSteps(serial: String) throws -> [GrokFleet.StepRecord] { try inner.completedSteps(serial: serial) }
}

@Suite("Fleet runs on the SQLite ledger")
struct LedgerRunTests {
    @Test("sixteen Grokkers, runs stopped at random moments and re-run: all end correct, no step done twice, nothing missing from the ledger")
    func sixteenInterrupted() async throws {
        let bench = FleetBench()
        let count = 16
        for i in 0..<count { try bench.prepare(i, serial: 70_000_000 + UInt32(i)) }
        let firmware = try FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile()
        let ledger = try Ledger.open(path: bench.path + "/ledger.sqlite")
        let recorder = LedgerRecorder(ledger: ledger)
        var random = SplitMix64(seed: 16)
        var stops = 0
        var outcome: GrokFleet.RunOutcome = .interrupted
        var runs = 0
        while outcome != .success, runs < 8 {
            runs += 1
            let cancel = CancelSwitch()
            // The first three runs stop somewhere in the first 60 recorded steps; then one runs through.
            let limit = runs <= 3 ? 1 + Int(random.next() % 60) : Int.max
            let runner = FleetRunner(
                profile: profile, channels: firmware.channels, delegate: PolicyDelegate(profile: profile, mode: .provision),
                recorder: StoppingRecorder(recorder, cancel: cancel, after: limit),
                options: bench.options(.provision, cancellation: cancel))
            let report = try await runner.run((0..<count).map { bench.device($0) })
            outcome = report.outcome
            if outcome == .interrupted { stops += 1 }
        }
        #expect(outcome == .success)
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
