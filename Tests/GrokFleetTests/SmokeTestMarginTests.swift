import Foundation
import GrokAudio
import GrokFleet
import GrokProtocol
import GrokTestSupport
import GrokkerEmulator
import Testing
import UGrokIt

/// The shipped profiles' smoke-test thresholds against the emulated field's spread: each
/// profile's smoke test, on an emulated unit as `--device sim:N` makes it (the default bench
/// scene, the unit's clock error) in the profile's region, a fresh test and a re-run, must
/// read at least twice the profile's `min_reads_per_second`, so a threshold is never crossed
/// by chance (docs/profiles.md, "Thresholds with margin", has the figures).
/// `GROKCTL_SMOKE_SEEDS=N` measures N serial numbers (the field's seed), three tests each.
@Suite("Smoke-test thresholds have margin")
struct SmokeTestMarginTests {
    static let seeds = Int(ProcessInfo.processInfo.environment["GROKCTL_SMOKE_SEEDS"] ?? "") ?? 1
    /// Tests in a row per seed: a fresh one and re-runs (three when measuring, two in the suite).
    static let seedsRuns = ProcessInfo.processInfo.environment["GROKCTL_SMOKE_SEEDS"] == nil ? 2 : 3

    /// Reads per second of `profile`'s smoke test on a unit with serial `serial`, run `runs`
    /// times in a row on one connection (a re-run finds the tags still quiet from the last).
    static func readsPerSecond(_ profile: Profile, serial: UInt32, runs: Int) throws -> [Double] {
        let bench = TemporaryDirectory("smoke-margin")
        let store = try DeviceStateStore.openOrCreate(directory: bench.path, index: 0)
        let region = profile.region?.set ?? profile.region!.allowed[0]
        try store.update {
            $0.serialNumber = serial
            $0.region = region.setting
            $0.provisioning.userHasSetRegion = true
        }
        // As `--device sim:N` opens it (DevicePorts): the default bench scene, the unit's clock error.
        let grokker = try EmulatedGrokker(store: store, sampleRate: 44_100, bench: RFScene.defaultBench(seed:))
        var cable = CableConfiguration.clean
        cable.deviceClockPPM += grokker.clockErrorPPM
        let session = try ReaderSession(port: SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: cable, peer: grokker))
        try session.connect()
        return try (0..<runs).map { _ in try SmokeTest.run(try #require(profile.smokeTest), on: session).readsPerSecond }
    }

    @Test("each shipped profile's min_reads_per_second is at most half what its smoke test reads on the emulated demo scene, for every seed tried",
          arguments: ["bench-us", "verify-us", "rollout-eu-night"])
    func thresholdsHaveMargin(name: String) throws {
        let profile = try Profile.load(path: repositoryRoot + "/profiles/\(name).json")
        let minimum = try #require(profile.smokeTest).minReadsPerSecond
        var rates: [Double] = []
        for index in 0..<Self.seeds {
            rates += try Self.readsPerSecond(profile, serial: 10_000_000 + UInt32(index) * 7_919_371, runs: Self.seedsRuns)
        }
        let sorted = rates.sorted()
        print("\(name): reads/s over \(rates.count) tests: min \(sorted.first!) median \(sorted[sorted.count / 2]) max \(sorted.last!); threshold \(minimum)")
        #expect(sorted.first! >= 2 * minimum, "\(name): \(sorted)")
    }
}
