import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokLedger
import GrokLink
import GrokProtocol
import UGrokIt

// The smoke tests: an inventory against the profile's reference tags.
extension DeviceWorker {
    func smokeTest(_ step: FleetStep) throws(Stop) -> Result {
        guard let policy = profile.smokeTest else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        if let known = Self.result(of: decider.smokeTest(step, facts(info))) { return known }
        var attempt = 0
        while true {
            attempt += 1
            let measurement: SmokeTestMeasurement
            do {
                measurement = try SmokeTest.run(policy, on: session)
            } catch {
                if attempt <= profile.retries.smokeTest {
                    if session.connectionState != .connected, let fresh = try? connectWithRetries() { context.info = fresh }
                    continue
                }
                return readerFailure(step, error)
            }
            let record = SmokeTestRecord(
                runID: runID, serial: serial, device: device.name, step: step, passed: measurement.passed,
                reasons: measurement.reasons, inventoryType: policy.inventoryType.code, duration: measurement.duration,
                reads: measurement.reads, readsPerSecond: measurement.readsPerSecond, uniqueTags: measurement.uniqueTags,
                expectedTags: policy.referenceTags.map(\.description), missingTags: measurement.missingTags,
                strongestRSSI: measurement.strongestRSSI, weakestReferenceRSSI: measurement.weakestReferenceRSSI,
                firmware: "\(info.firmwareVersion)", region: regionText, time: runner.options.clock())
            smokeTests.append(record)
            do {
                try runner.recorder.recordSmokeTest(record)
            } catch {
                return .failing(.failed, .recorderFailed(operation: "record_smoke_test", subject: serial, error: error))
            }
            if measurement.passed { return .done(mode == .verify ? "step_verified" : "step_smoke_test_passed", measurement.detail) }
            if attempt > profile.retries.smokeTest {
                return .failing(.failed, .smokeTestFailed(device: device.name, measurement: measurement))
            }
        }
    }
}
