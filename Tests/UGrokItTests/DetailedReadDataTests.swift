import Foundation
import GrokAudio
import GrokTestSupport
import GrokkerEmulator
import GrokProtocol
import Testing
import UGrokIt

@Suite("Detailed per-read data words")
struct DetailedReadDataTests {
    @Test("readData1 and readData2 are the words asked for, read from each tag's memory")
    func words() throws {
        let bench = TemporaryDirectory("ugrokit")
        let store = try DeviceStateStore.openOrCreate(directory: bench.path, index: 0)
        try store.update { $0.region = RegionCatalog.find("fcc")!.setting; $0.provisioning.userHasSetRegion = true }
        let scene = RFScene(tags: [
            RFScene.Tag(epc: [0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], user: [0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC],
                        placement: .distance(meters: 1)),
            RFScene.Tag(epc: [0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], user: [0xCA, 0xFE], placement: .distance(meters: 1.5)),
        ])
        let grokker = try EmulatedGrokker(store: store, scene: scene)
        let session = try ReaderSession(port: SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker))
        try session.connect()

        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        configuration.detailedPerReadData = true
        configuration.detailedPerReadNumReads = 2
        configuration.detailedPerReadMemoryBank1 = .user
        configuration.detailedPerReadWordOffset1 = 2
        configuration.detailedPerReadMemoryBank2 = .epc
        configuration.detailedPerReadWordOffset2 = 1   // the PC
        try configuration.validate()
        try session.startInventory(configuration)
        try session.collect(forAtMost: 1)
        try session.stopInventory()
        let reports = session.takeReports()
        let tracker = InventoryTracker(start: Date(timeIntervalSince1970: 0), configuration: configuration)
        for report in reports { tracker.take(report) }
        var details: [UInt8: UgiDetailedPerReadData] = [:]
        for case .found(let tag, let data) in tracker.drainEvents() { details[tag.epc.bytes[11]] = data.first }
        #expect(!reports.isEmpty && details.count == 2)
        // Tag 1: USER word 2 is 9ABC; its PC says 6 words.
        let pc = grokker.field.tags[0].memory.pc
        #expect(details[1]?.readData1 == 0x9ABC)
        #expect(details[1]?.readData2 == pc)
        // Tag 2 has one USER word: word 2 is past the end; the record has room for both words
        // and the emulated reader sends 0 there, and for the word after it.
        #expect(details[2]?.readData1 == 0 && details[2]?.readData2 == 0)
        #expect(reports.allSatisfy { $0.epc.last == 1 ? $0.readData == [0x9ABC, pc] : $0.readData == [0, 0] }, "\(reports.map(\.readData))")

        // Without detailed data nothing is read.
        configuration.detailedPerReadData = false
        configuration.detailedPerReadNumReads = 0
        #expect(try !configuration.vendorConfiguration().detailedPerReadData)
    }
}
