import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// customCommandToTag and changePower while an inventory runs, as vendor tag accesses.
@Suite("Custom tag commands and power")
struct CustomCommandTests {
    @Test("a custom command goes to the reader during the inventory and its result comes back")
    func custom() throws {
        let rig = try TagAccessTests.scanning()
        let tag0 = TagAccessTests.epc(rig, 0)
        // The emulated reader does not carry custom commands out (the request's field order is
        // only inferred): it answers GENERAL_ERROR, which arrives as such.
        let answer = try rig.session.customCommandToTag(tag0, command: [0xE0, 0x01], commandBits: 16, responseBitLengthNoHeaderBit: 0,
                                                       responseBitLengthWithHeaderBit: 49, receiveTimeoutUsec: 5000)
        #expect(answer.status == .generalError && answer.data.isEmpty)
        #expect(rig.session.inventoryRunning)
        try rig.session.stopInventory()
    }

    @Test("lengths the vendor request cannot carry are refused before anything is sent")
    func refused() throws {
        let rig = try TagAccessTests.scanning()
        let tag0 = TagAccessTests.epc(rig, 0)
        let answered = rig.session.inventory!.packetsAnswered
        #expect(throws: ReaderError.self) {
            try rig.session.customCommandToTag(tag0, command: [0xE0], commandBits: 16, responseBitLengthNoHeaderBit: 0,
                                               responseBitLengthWithHeaderBit: 49, receiveTimeoutUsec: 5000)
        }
        #expect(throws: ReaderError.self) {
            try rig.session.customCommandToTag(tag0, command: [0xE0, 0x01], commandBits: 16, responseBitLengthNoHeaderBit: 8,
                                               responseBitLengthWithHeaderBit: 49, receiveTimeoutUsec: 5000)
        }
        #expect(throws: ReaderError.self) {
            try rig.session.customCommandToTag(tag0, command: [0xE0, 0x01], commandBits: 16, responseBitLengthNoHeaderBit: 0,
                                               responseBitLengthWithHeaderBit: 300, receiveTimeoutUsec: 5000)
        }
        #expect(rig.session.inventory!.accessInFlight == nil)
        _ = answered
        try rig.session.stopInventory()
    }

    @Test("changePower is sent in the next answer; out of range or out of order is refused, and it needs an inventory")
    func changePower() throws {
        let rig = try TagAccessTests.scanning()
        #expect(try rig.session.changePower(initial: 20, min: 15, max: 25) == .ok)
        try rig.session.collect(forAtMost: 0.5)
        #expect(rig.session.inventoryRunning)
        #expect(!rig.session.takeReports().isEmpty)
        #expect(throws: ReaderError.self) { try rig.session.changePower(initial: 40, min: 10, max: 40) }
        #expect(throws: ReaderError.self) { try rig.session.changePower(initial: 5, min: 10, max: 20) }
        try rig.session.stopInventory()
        #expect(throws: ReaderError.noInventoryRunning(port: "sim:0")) { try rig.session.changePower(initial: 20, min: 20, max: 20) }
    }
}
