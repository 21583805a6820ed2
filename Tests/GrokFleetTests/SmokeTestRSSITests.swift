import Foundation
import GrokAudio
import GrokBasics
import GrokFleet
import GrokProtocol
import GrokTestSupport
import GrokkerEmulator
import Testing
import UGrokIt

/// The smoke test's `min_rssi_dbm` judged in dBm: the reader is asked for RSSI and a field
/// too weak fails, with its figures in dBm.
@Suite("Smoke test RSSI")
struct SmokeTestRSSITests {
    /// A connected session to a unit (region FCC) with one tag at `meters`.
    static func session(_ bench: TemporaryDirectory, tagAt meters: Double) throws -> (ReaderSession, UgiEpc) {
        let store = try DeviceStateStore.openOrCreate(directory: bench.path, index: 0)
        try store.update { $0.region = RegionCatalog.find("fcc")!.setting; $0.provisioning.userHasSetRegion = true }
        let epc: [UInt8] = [0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7]
        let grokker = try EmulatedGrokker(store: store, scene: RFScene(tags: [RFScene.Tag(epc: epc, placement: .distance(meters: meters))]))
        let session = try ReaderSession(port: SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker))
        try session.connect()
        return (session, try UgiEpc(bytes: epc))
    }

    @Test("a reference tag at 5 m (about -70 dBm by the link budget) fails min_rssi_dbm -60 and passes -80; the figures are dBm")
    func tooWeakFails() throws {
        let bench = TemporaryDirectory("smoke-rssi")
        let (session, epc) = try Self.session(bench, tagAt: 5)
        let strict = Profile.SmokeTestPolicy(referenceTags: [epc], inventoryType: .inventoryDistance, duration: 1,
                                             minReadsPerSecond: 0.5, minRSSI: -60)
        let weak = try SmokeTest.run(strict, on: session)
        #expect(!weak.passed && weak.reasons == ["rssi"], "\(weak.reasons)")
        let figure = try #require(weak.weakestReferenceRSSI)
        #expect(figure < -60 && figure >= -80, "\(figure) dBm")
        #expect(weak.detail.contains("weakest reference tag \(NumberText.plain(figure)) dBm"), "\(weak.detail)")
        var lenient = strict
        lenient.minRSSI = -80
        let fine = try SmokeTest.run(lenient, on: session)
        #expect(fine.passed, "\(fine.reasons)")
    }

    @Test("reads that carry no RSSI cannot show min_rssi_dbm was reached: the test fails on rssi")
    func readsWithoutRSSIFail() throws {
        let epc: [UInt8] = [0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7]
        let reads = (0..<10).map { n in
            TagReport(epc: epc, pc: 0x3000, rssiITenthsDBm: nil, rssiQTenthsDBm: nil, frequencyKHz: 915_000, milliseconds: UInt32(n * 100))
        }
        let policy = Profile.SmokeTestPolicy(referenceTags: [try UgiEpc(bytes: epc)], duration: 1, minReadsPerSecond: 1, minRSSI: -70)
        let judged = SmokeTest.judge(policy, reports: reads, duration: 1)
        #expect(!judged.passed && judged.reasons == ["rssi"])
        #expect(judged.weakestReferenceRSSI == nil && judged.strongestRSSI == nil)
        var anyTag = policy
        anyTag.referenceTags = []
        #expect(SmokeTest.judge(anyTag, reports: reads, duration: 1).reasons == ["rssi"])
        anyTag.minRSSI = nil
        #expect(SmokeTest.judge(anyTag, reports: reads, duration: 1).passed)
    }
}
