import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// customCommandToTag and changePower while an inventory runs.
@Suite("Custom tag commands and power")
struct CustomCommandTests {
    @Test("the emulated tag answers get-temperature and read-USER; wrong lengths, short timeouts and unknown commands fail")
    func custom() throws {
        let rig = try TagAccessTests.scanning()
        let tag0 = TagAccessTests.epc(rig, 0)
        func ask(_ command: [UInt8], bits: Int, header: Int, timeout: Int = 5000) throws -> UgiCustomCommandResult {
            try rig.session.customCommandToTag(tag0, command: command, commandBits: bits, responseBitLengthNoHeaderBit: 0,
                                               responseBitLengthWithHeaderBit: header, receiveTimeoutUsec: timeout)
        }
        let temperature = try ask([0xE0, 0x01], bits: 16, header: 49)
        #expect(temperature.status == .ok)
        #expect(temperature.bits == 16)
        let tenths = Int(Int16(bitPattern: UInt16(temperature.data[0]) << 8 | UInt16(temperature.data[1])))
        #expect((210...250).contains(tenths))
        // The same tag gives the same temperature; the reply is 1 + 16 + 32 bits long.
        #expect(try ask([0xE0, 0x01], bits: 16, header: 49) == temperature)
        #expect(try ask([0xE0, 0x01], bits: 16, header: 50).status == .generalError)
        // T1 plus 49 Miller-4 bits at 250 kHz is about 1 ms: 500 µs is too short to hear it.
        #expect(try ask([0xE0, 0x01], bits: 16, header: 49, timeout: 500).status == .tagNotFound)
        #expect(try ask([0xE0, 0x7F], bits: 16, header: 49).status == .tagNotFound)

        // Read USER words 1 and 2 the custom way, and compare with readTag (a tag with USER memory).
        let bench = TempBench()
        let store = try DeviceStateStore.openOrCreate(directory: bench.path, index: 0)
        let user: [UInt8] = (0..<16).map { UInt8($0 * 17) }
        let sensor = RFScene.Tag(name: "sensor", epc: [0x30, 0x74, 0x25, 0x7B, 0xF7, 0x19, 0x4E, 0x40, 0, 0, 0, 7], user: user,
                                 placement: .distance(meters: 1))
        let grokker = try EmulatedGrokker(handler: GrokkerCommandHandler(store: store), scene: RFScene(tags: [sensor]))
        let session = ReaderSession(port: SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker))
        try session.connect()
        try session.setRegion("fcc")
        try session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters)
        let tag = try UgiEpc(bytes: sensor.epc)
        func send(_ command: [UInt8], bits: Int, header: Int) throws -> UgiCustomCommandResult {
            try session.customCommandToTag(tag, command: command, commandBits: bits, responseBitLengthNoHeaderBit: 0,
                                           responseBitLengthWithHeaderBit: header, receiveTimeoutUsec: 5000)
        }
        let read = try send([0xE0, 0x02, 0x01, 0x02], bits: 32, header: 1 + 32 + 32)
        #expect(read.status == .ok)
        #expect(read.bits == 32)
        #expect(read.data == Array(user[2..<6]))
        let plain = try session.readTag(tag, bank: .user, offset: 2, maxBytes: 4)
        #expect(plain.status == .ok)
        #expect(read.data == plain.data)
        #expect(try send([0xE0, 0x02, 0x07, 0x02], bits: 32, header: 65).status == .memoryOverrun)
        #expect(try send([0xE0, 0x02, 0x00, 0x09], bits: 32, header: 1 + 144 + 32).status == .generalError)
        // A tag without USER memory overruns at once.
        #expect(try rig.session.customCommandToTag(TagAccessTests.epc(rig, 0), command: [0xE0, 0x02, 0, 1], commandBits: 32,
                                                   responseBitLengthNoHeaderBit: 0, responseBitLengthWithHeaderBit: 49,
                                                   receiveTimeoutUsec: 5000).status == .memoryOverrun)
        // An EPC nobody has: TAG_NOT_FOUND.
        let nobody = try UgiEpc(hex: "E2000000000000000000BEEF")
        #expect(try rig.session.customCommandToTag(nobody, command: [0xE0, 0x01], commandBits: 16, responseBitLengthNoHeaderBit: 0,
                                                   responseBitLengthWithHeaderBit: 49, receiveTimeoutUsec: 5000).status == .tagNotFound)
        // Bad lengths are refused before anything is sent.
        #expect(throws: ReaderError.self) {
            try rig.session.customCommandToTag(tag0, command: [0xE0], commandBits: 16, responseBitLengthNoHeaderBit: 0,
                                               responseBitLengthWithHeaderBit: 49, receiveTimeoutUsec: 5000)
        }
        #expect(throws: ReaderError.self) {
            try rig.session.customCommandToTag(tag0, command: [0xE0, 0x01], commandBits: 16, responseBitLengthNoHeaderBit: 48,
                                               responseBitLengthWithHeaderBit: 49, receiveTimeoutUsec: 5000)
        }
    }

    @Test("lowering the power loses the far tags, raising it brings them back")
    func changePower() throws {
        let rig = try TagAccessTests.scanning()
        let full = try TagAccessTests.seen(rig)
        #expect(full.count >= 20)
        #expect(try rig.session.changePower(initial: 10, min: 10, max: 10) == .ok)
        #expect(rig.session.inventory?.initialPowerTenthsDBm == 100)
        let low = try TagAccessTests.seen(rig)
        #expect(!low.isEmpty)
        #expect(low.isSubset(of: full))
        #expect(low.count < full.count - 5)
        // The near tags are the ones kept.
        let nearest = TagAccessTests.epc(rig, 0)
        let farthest = TagAccessTests.epc(rig, 23)
        #expect(low.contains(nearest) && !low.contains(farthest) && full.contains(farthest))
        #expect(try rig.session.changePower(initial: 30, min: 30, max: 30) == .ok)
        let back = try TagAccessTests.seen(rig)
        #expect(back.contains(farthest))
        #expect(back.count >= full.count - 1)
        // Out of range and out of order are refused on both sides.
        #expect(throws: ReaderError.self) { try rig.session.changePower(initial: 40, min: 10, max: 40) }
        #expect(throws: ReaderError.self) { try rig.session.changePower(initial: 5, min: 10, max: 20) }
        #expect(try rig.session.call(.changePower(PowerRange(initialTenthsDBm: 350, minTenthsDBm: 0, maxTenthsDBm: 350)))
            == .powerChanged(.generalError))
        try rig.session.stopInventory()
        #expect(try rig.session.call(.changePower(PowerRange(fixed: 200))) == .powerChanged(.inventoryStopped))
    }
}
