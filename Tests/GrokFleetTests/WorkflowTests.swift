import Foundation
import GrokAudio
import GrokFleet
import GrokkerEmulator
import GrokProtocol
import Testing
import UGrokIt

@Suite("Fleet workflow")
struct WorkflowTests {
    @Test("one out-of-the-box Grokker is provisioned, set to FCC, flashed and smoke-tested; a re-run does nothing")
    func provisionOne() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 10_000_001)
        let firmware = try FirmwareFixture(directory: bench.path + "/cache")
        let profile = try testProfile()
        let recorder = InMemoryRunRecorder()
        let runner = FleetRunner(profile: profile, channels: firmware.channels, delegate: PolicyDelegate(profile: profile, mode: .provision),
                                 recorder: recorder, options: bench.options(.provision))
        let report = try await runner.run([bench.device(0)])
        for step in report.devices[0].steps { print(step.step.rawValue, step.result.rawValue, step.code, step.detail) }
        #expect(report.outcome == .success)
        let state = try bench.state(0)
        #expect(state.firmwareVersion == FirmwareFixture.v180)
        #expect(state.region?.number == 1)
        #expect(state.antennaType == 2)
        #expect(state.provisioningStatus == .complete)
    }
}
