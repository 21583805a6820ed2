import Foundation
import GrokAudio
import GrokTestSupport
import GrokkerEmulator
import GrokProtocol
import Testing
import UGrokIt

/// RSSI end to end: the emulated Grokker sends its link budget's figure on the vendor's
/// 4-bit I/Q scale when asked, the host turns it into dBm, and nothing when not asked.
@Suite("RSSI")
struct RSSITests {
    static let near: [UInt8] = [0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    static let far: [UInt8] = [0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]

    /// A unit with region FCC and two tags, at 0.3 m and at 5 m.
    static func session(_ bench: TemporaryDirectory) throws -> (EmulatedGrokker, ReaderSession) {
        let store = try DeviceStateStore.openOrCreate(directory: bench.path, index: 0)
        try store.update { $0.region = RegionCatalog.find("fcc")!.setting; $0.provisioning.userHasSetRegion = true }
        let scene = RFScene(tags: [
            RFScene.Tag(epc: near, placement: .distance(meters: 0.3)),
            RFScene.Tag(epc: far, placement: .distance(meters: 5)),
        ])
        let grokker = try EmulatedGrokker(store: store, scene: scene)
        let session = try ReaderSession(port: SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker))
        try session.connect()
        return (grokker, session)
    }

    static func inventory(_ session: ReaderSession, reportRssi: Bool) throws -> (reports: [TagReport], tags: [UgiTag]) {
        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        configuration.reportRssi = reportRssi
        try configuration.validate()
        try session.startInventory(configuration)
        try session.collect(forAtMost: 1)
        try session.stopInventory()
        let reports = session.takeReports()
        let tracker = InventoryTracker(start: Date(timeIntervalSince1970: 0), configuration: configuration)
        for report in reports { tracker.take(report) }
        return (reports, tracker.tags)
    }

    @Test("asked for RSSI, a tag at 0.3 m reads stronger than one at 5 m, each in dBm within the emulator's link budget")
    func nearIsStrongerInDBm() throws {
        let bench = TemporaryDirectory("rssi")
        let (grokker, session) = try Self.session(bench)
        let (reports, tags) = try Self.inventory(session, reportRssi: true)
        let scene = grokker.field.scene
        // The reply's power by the link budget, over the FCC band (902-928 MHz) and the
        // preset's power range (23-29 dBm);
        // the stronger of I and Q is within 3.01 dB of it; the scale's levels are 4 dB wide
        // and the host reports a level's lower edge; the top level is -30 dBm and up.
        func expectWithinBudget(_ dBm: Double?, meters: Double, _ what: String) {
            func budget(_ powerDBm: Double, _ mhz: Double) -> Double {
                RFLinkBudget.rssi(readerPowerDBm: powerDBm, antennaGainDBi: scene.antennaGainDBi,
                                  pathLossDB: RFLinkBudget.freeSpacePathLoss(meters: meters, frequencyMHz: mhz),
                                  backscatterLossDB: scene.backscatterLossDB)
            }
            guard let dBm else { Issue.record("\(what): no RSSI"); return }
            let top = VendorRSSI.ceilingDBm
            #expect(dBm <= min(top, budget(29, 902)), "\(what): \(dBm) dBm")
            #expect(dBm >= min(top, budget(23, 928) - 3.02) - VendorRSSI.stepDB, "\(what): \(dBm) dBm")
        }
        let nearReads = reports.filter { $0.epc == Self.near }
        let farReads = reports.filter { $0.epc == Self.far }
        #expect(!nearReads.isEmpty && !farReads.isEmpty)
        for read in nearReads { expectWithinBudget(read.rssiDBm, meters: 0.3, "0.3 m") }
        for read in farReads { expectWithinBudget(read.rssiDBm, meters: 5, "5 m") }
        let nearTag = try #require(tags.first { $0.epc.bytes == Self.near })
        let farTag = try #require(tags.first { $0.epc.bytes == Self.far })
        let nearDBm = try #require(nearTag.readState.mostRecentRssi)
        let farDBm = try #require(farTag.readState.mostRecentRssi)
        #expect(nearDBm > farDBm + 20, "0.3 m \(nearDBm) dBm, 5 m \(farDBm) dBm")
        // dBm, not the wire's 0-15 levels.
        #expect(farDBm < -50)
    }

    @Test("not asked for RSSI, the reader sends none and the host reports none (nil), never a filled-in figure")
    func notAskedIsNil() throws {
        let bench = TemporaryDirectory("rssi")
        let (_, session) = try Self.session(bench)
        let (reports, tags) = try Self.inventory(session, reportRssi: false)
        #expect(!reports.isEmpty && tags.count == 2)
        #expect(reports.allSatisfy { $0.rssiITenthsDBm == nil && $0.rssiQTenthsDBm == nil && $0.rssiDBm == nil })
        #expect(tags.allSatisfy { $0.readState.mostRecentRssi == nil && $0.readState.mostRecentRssiI == nil })
    }

    @Test("the wire scale: level n is [-90 + 4n, -86 + 4n) dBm, clamped at 0 and 15; the host gives the lower edge")
    func scale() {
        #expect(VendorRSSI.level(dBm: -90) == 0)
        #expect(VendorRSSI.level(dBm: -86.01) == 0)
        #expect(VendorRSSI.level(dBm: -86) == 1)
        #expect(VendorRSSI.level(dBm: -120) == 0)
        #expect(VendorRSSI.level(dBm: -30) == 15)
        #expect(VendorRSSI.level(dBm: 0) == 15)
        #expect(VendorRSSI.dBm(level: 0) == -90 && VendorRSSI.dBm(level: 15) == -30)
        let byte = VendorRSSI.byte(iDBm: -61, qDBm: -75.5)
        #expect(byte == 0x73)
        #expect(VendorRSSI.dBm(byte: byte) == (i: -62, q: -78))
        // Every level's lower edge decodes to itself.
        for level in UInt8(0)...15 { #expect(VendorRSSI.level(dBm: VendorRSSI.dBm(level: level)) == level) }
    }
}
