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
            smokeTests.append(SmokeTestReport(step: step, measurement: measurement))
            let expected = policy.referenceTags.map(\.description)
            let missing = Set(measurement.missingTags)
            let record = SmokeTestRecord(
                run: ledger.run, serial: serial, afterStep: step.rawValue, startedAt: runner.options.clock(),
                durationMilliseconds: Int64((measurement.duration * 1000).rounded()), expectedTags: expected,
                foundTags: expected.filter { !missing.contains($0) }, readsPerSecond: measurement.readsPerSecond,
                minRSSI: measurement.weakestReferenceRSSI ?? measurement.strongestRSSI, passed: measurement.passed)
            do {
                try ledger.store.recordSmokeTest(record)
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
