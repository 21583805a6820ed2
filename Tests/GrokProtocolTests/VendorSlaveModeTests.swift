import GrokTestSupport
import Testing
@testable import GrokProtocol

@Suite("Vendor command layer: slave mode")
struct VendorSlaveModeTests {
    private let epc = hex("3034 1234 5678 9abc def0 1122")
    private let tid = hex("e280 1160 2000 0000 0000 0001")

    @Test("The seen first read 00 01 01 01 5a 0c <EPC> 0c <TID> decodes with subsequent finds, RSSI and TID on")
    func seenFirstRead() throws {
        let context = VendorSlaveContext(reportSubsequentFinds: true, reportRssi: true, readsTid: true)
        let payload = hex("00 01 01 01 5a 0c") + epc + hex("0c") + tid
        let packet = try VendorReaderPacket(opcode: 0x01, payload: payload, context: context)
        #expect(packet == .firstRead(flags: 0, rounds: 1,
                                     records: [VendorTagRecord(id: 1, numFinds: 1, rssi: 0x5a, epc: epc, tid: tid)], fixed96: false))
        #expect(try packet.encode(context: context) == payload)
    }

    @Test("Without subsequent finds the first read has no rounds byte and no id/finds per record")
    func plainFirstRead() throws {
        let context = VendorSlaveContext()
        let payload = hex("01 0c") + epc + hex("04 01020304")
        let packet = try VendorReaderPacket(opcode: 0x01, payload: payload, context: context)
        guard case .firstRead(let flags, let rounds, let records, _) = packet else { Issue.record("not a first read"); return }
        #expect(flags == 1 && rounds == nil && records.map(\.epc) == [epc, hex("01020304")])
    }

    @Test("Opcode 02 records carry a 12-byte EPC without a length byte")
    func fixedEpc() throws {
        let context = VendorSlaveContext(reportRssi: true)
        let payload = hex("00 33") + epc + hex("44") + epc
        let packet = try VendorReaderPacket(opcode: 0x02, payload: payload, context: context)
        #expect(packet.opcode == .firstRead96)
        #expect(try packet.encode(context: context) == payload)
        let bad = VendorReaderPacket.firstRead(flags: 0, rounds: nil, records: [VendorTagRecord(rssi: 1, epc: hex("01020304"))], fixed96: true)
        #expect(throws: VendorCommandError.self) { try bad.encode(context: context) }
    }

    @Test("Detailed per-read data: count, ms ago, channel index, RSSI nibbles and the two words")
    func perReadData() throws {
        let context = VendorSlaveContext(reportSubsequentFinds: true, detailedPerReadData: true, perReadWords: true)
        let records = [VendorSubsequentRecord(id: 5, numFinds: 2, perReads: [VendorPerRead(msAgo: 0x0a01, channelIndex: 2, rssi: 0x34, words: (0x1234, 0x5678))]),
                       VendorSubsequentRecord(id: 9, numFinds: 1, perReads: [])]
        let built = VendorReaderPacket.subsequentRead(rounds: 7, records: records)
        let bytes = try built.encode(context: context)
        #expect(bytes == hex("07 05 02 01 010a 02 34 3412 7856 09 01 00"))
        #expect(try VendorReaderPacket(opcode: 0x03, payload: bytes, context: context) == built)
        var tooMany = records
        tooMany[0].perReads = Array(repeating: VendorPerRead(msAgo: 0, channelIndex: 0, rssi: 0, words: (0, 0)), count: 63)
        #expect(throws: VendorCommandError.self) { try VendorReaderPacket.subsequentRead(rounds: 0, records: tooMany).encode(context: context) }
        #expect(throws: VendorCommandError.self) {
            try VendorReaderPacket(opcode: 0x03, payload: hex("00 01 01 3f"), context: context)
        }
    }

    @Test("Completed is exactly [result][u16]; ping exactly [rounds]; tag access [result][epcLen][EPC][data]")
    func shortPackets() throws {
        let context = VendorSlaveContext()
        #expect(try VendorReaderPacket(opcode: 0x00, payload: hex("00 3412"), context: context) == .completed(result: 0, value: 0x1234))
        #expect(throws: VendorCommandError.self) { try VendorReaderPacket(opcode: 0x00, payload: hex("00 34"), context: context) }
        #expect(throws: VendorCommandError.self) { try VendorReaderPacket(opcode: 0x00, payload: hex("00 3412 00"), context: context) }
        #expect(try VendorReaderPacket(opcode: 0x05, payload: hex("09"), context: context) == .ping(rounds: 9))
        #expect(throws: VendorCommandError.self) { try VendorReaderPacket(opcode: 0x05, payload: hex("09 00"), context: context) }
        let access = try VendorReaderPacket(opcode: 0x06, payload: hex("00 0c") + epc + hex("beef"), context: context)
        #expect(access == .tagAccessResult(result: VendorTagAccessResult.ok.rawValue, epc: epc, data: hex("beef")))
        #expect(throws: VendorCommandError.self) { try VendorReaderPacket(opcode: 0x06, payload: hex("00 03 010203"), context: context) }
        #expect(throws: VendorCommandError.unknownValue(field: "readerPacket.opcode", value: 4)) {
            try VendorReaderPacket(opcode: 0x04, payload: [], context: context)
        }
        #expect(VendorTagAccessResult.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5])
    }

    @Test("The host's answer to one first-read record it acknowledges is 78 01 02 e3: code 0 with mask 02")
    func acknowledgementMask() throws {
        let mask = try VendorAckMask.encode(flagged: [true], anyBit0: false)
        #expect(mask == [0x02])
        let answer = VendorSlaveAnswer.ack(mask: mask)
        #expect(answer.code == 0)
        #expect(try answer.encodeData() == [0x02])
        #expect(VendorAckMask.byteCount(records: 8) == 1 && VendorAckMask.byteCount(records: 9) == 2)
        #expect(try VendorAckMask.encode(flagged: [false, true, false, false, false, false, false, true], anyBit0: true) == [0x05])
        #expect(try VendorAckMask.encode(flagged: Array(repeating: true, count: 9), anyBit0: false) == [0xfe, 0x03])
        #expect(VendorSlaveAnswer.stop(mask: []).code == 1 && VendorSlaveAnswer.nack.code == 7)
    }

    @Test("Piggybacked tag accesses have their answer ids and layouts")
    func tagAccessRequests() throws {
        let read = VendorTagAccessRequest.read(epc: epc, bank: .user, wordOffset: 2, maxBytes: 8, minBytes: 4)
        #expect(read.answerCode == 6)
        let readAnswer = VendorSlaveAnswer.access(mask: [0x02], read)
        let readData = try readAnswer.encodeData()
        #expect(readData == hex("02 00 0c") + epc + hex("03 0200 08 04"))
        #expect(try VendorSlaveAnswer(code: 6, data: readData, maskBytes: 1) == readAnswer)

        let write = VendorTagAccessRequest.write(epc: epc, password: 0x1234_5678, bank: .epc, wordOffset: 2, data: hex("aabb"))
        #expect(try VendorSlaveAnswer.access(mask: [], write).encodeData() == hex("0c") + epc + hex("78563412 01 0200 02 aabb"))
        let program = VendorTagAccessRequest.programEpc(epc: epc, password: 0, newEpc: hex("01020304"))
        #expect(program.answerCode == 4)
        #expect(try VendorSlaveAnswer.access(mask: [], program).encodeData() == hex("0c") + epc + hex("00000000 01020304"))
        let lock = VendorTagAccessRequest.lock(epc: epc, password: 1, maskAndAction: 0x000c_0008)
        #expect(lock.answerCode == 2)
        #expect(try VendorSlaveAnswer.access(mask: [], lock).encodeData() == hex("0c") + epc + hex("01000000 08000c00"))
        let power = VendorTagAccessRequest.changePower(initial: 0xdc, min: 0xb4, max: 0xfa)
        #expect(try VendorSlaveAnswer.access(mask: [], power).encodeData() == hex("02 dc b4 fa"))
        let custom = VendorTagAccessRequest.custom(epc: epc, receiveTimeout: 1000, commandBits: 12, responseBitsNoHeader: 16,
                                                   responseBitsWithHeader: 33, command: hex("e0 10"))
        let customData = try VendorSlaveAnswer.access(mask: [], custom).encodeData()
        #expect(customData == hex("01 0c") + epc + hex("e803 0c00 10 21 e010"))
        #expect(try VendorSlaveAnswer(code: 6, data: customData, maskBytes: 0) == .access(mask: [], custom))
        #expect(try VendorSlaveAnswer.pause(ms: 700).encodeData() == hex("bc 02"))
        #expect(throws: VendorCommandError.self) { try VendorSlaveAnswer(code: 6, data: hex("03 00"), maskBytes: 0) }
        #expect(throws: VendorCommandError.self) {
            try VendorSlaveAnswer.access(mask: [], .custom(epc: epc, receiveTimeout: 0, commandBits: 9, responseBitsNoHeader: 0,
                                                          responseBitsWithHeader: 0, command: [1])).encodeData()
        }
    }

    @Test("A record's optional fields must match what the inventory asked for")
    func contextMismatch() {
        let context = VendorSlaveContext(reportRssi: true)
        let noRssi = VendorReaderPacket.firstRead(flags: 0, rounds: nil, records: [VendorTagRecord(epc: hex("01020304"))], fixed96: false)
        #expect(throws: VendorCommandError.self) { try noRssi.encode(context: context) }
        let empty = VendorReaderPacket.firstRead(flags: 0, rounds: nil, records: [], fixed96: false)
        #expect(throws: VendorCommandError.self) { try empty.encode(context: context) }
        #expect(throws: VendorCommandError.self) { try VendorReaderPacket(opcode: 0x01, payload: hex("00"), context: context) }
    }

    @Test("The slave context follows the inventory start")
    func contextFromStart() throws {
        var configuration = VendorRfidConfiguration.preset(.locateDistance)
        configuration.maxTidBytes = 12
        configuration.reportRssi = true
        let context = VendorSlaveContext(try configuration.inventoryStart(volumeLevels: 8))
        #expect(context == VendorSlaveContext(reportSubsequentFinds: true, reportRssi: true, readsTid: true))
    }
}
