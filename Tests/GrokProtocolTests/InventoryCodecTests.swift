import GrokAudio
@testable import GrokProtocol
import Testing

@Suite("Inventory codec")
struct InventoryCodecTests {
    static func parameters() -> InventoryParameters {
        var p = InventoryParameters()
        p.initialPowerTenthsDBm = 250
        p.minPowerTenthsDBm = 200
        p.maxPowerTenthsDBm = 300
        p.initialQ = 5
        p.minQ = 2
        p.maxQ = 9
        p.session = 1
        p.tidBytes = 12
        p.selectBank = 1
        p.selectBitOffset = 32
        p.selectBitLength = 12
        p.selectMask = [0x30, 0x70]
        p.reportSubsequentFinds = false
        return p
    }

    static func reports() -> [TagReport] {
        [TagReport(epc: Array(repeating: 0xAB, count: 12), pc: 0x3000, rssiITenthsDBm: -612, rssiQTenthsDBm: -655,
                   frequencyKHz: 902_750, milliseconds: 1234, tid: [0xE2, 0x80, 0x11, 0x05]),
         TagReport(epc: [1, 2, 3, 4], pc: 0x1000, rssiITenthsDBm: -700, rssiQTenthsDBm: -701, frequencyKHz: 865_700,
                   milliseconds: 0, user: [9, 9])]
    }

    @Test("start and stop inventory round-trip")
    func commands() throws {
        for command in [Command.startInventory(Self.parameters()), .startInventory(InventoryParameters()), .stopInventory] {
            let message = RequestMessage(id: 7, command: command)
            #expect(try RequestMessage.decode(message.encode()) == message)
        }
        for opcode in [Opcode.startInventory, .stopInventory] {
            let response = ResponseMessage(id: 7, response: .done(opcode))
            #expect(try ResponseMessage.decode(response.encode()) == response)
        }
    }

    @Test("tag reports and stop events round-trip; every prefix fails cleanly")
    func events() throws {
        let events: [InventoryEvent] = [.tagReports(Self.reports()), .tagReports([]), .stopped(.regionNotSet), .stopped(.lostConnection),
                                       .status(rounds: 0), .status(rounds: 123_456)]
        for event in events {
            let bytes = event.encode()
            #expect(try InventoryEvent.decode(bytes) == event)
            for cut in 0..<bytes.count {
                #expect(throws: ProtocolError.self) { try InventoryEvent.decode(bytes[0..<cut]) }
            }
        }
        // An announcement is not an inventory event, and vice versa.
        #expect(throws: ProtocolError.self) { try InventoryEvent.decode(Announcement(info: Samples.grokker).encode()) }
        #expect(throws: ProtocolError.self) { try Announcement.decode(InventoryEvent.stopped(.ok).encode()) }
    }

    @Test("bad values are refused, garbage never traps")
    func badValues() throws {
        var p = Self.parameters()
        p.session = 4
        #expect(throws: ProtocolError.self) { try RequestMessage.decode(RequestMessage(id: 1, command: .startInventory(p)).encode()) }
        p = Self.parameters()
        p.selectBitLength = 17
        #expect(throws: ProtocolError.self) { try RequestMessage.decode(RequestMessage(id: 1, command: .startInventory(p)).encode()) }
        var rng = SeededGenerator(seed: 77)
        let valid = InventoryEvent.tagReports(Self.reports()).encode()
        for _ in 0..<3000 {
            var bytes = valid
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                bytes[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            }
            _ = try? InventoryEvent.decode(bytes)
            _ = try? RequestMessage.decode(bytes)
        }
    }
}

@Suite("Tag access codec")
struct TagAccessCodecTests {
    static let operations: [TagOperation] = [
        .read(bank: .tid, wordPointer: 0, wordCount: 6, password: 0),
        .write(bank: .user, wordPointer: 4, words: [0xABCD, 0x0102], password: 0x1234_5678),
        .programEPC(newEPC: Array(repeating: 0x30, count: 12), password: 0),
        .setAccessPassword(0xDEAD_BEEF, password: 1), .setKillPassword(7, password: 0),
        .lock(payload: 0x0_C030, password: 9), .kill(killPassword: 0xDEAD),
    ]

    @Test("every operation and every result round-trips; bad values are refused")
    func roundTrip() throws {
        for operation in Self.operations {
            let message = RequestMessage(id: 3, command: .tagAccess(epc: [0x30, 0x74, 0x25, 0x7B], operation))
            #expect(try RequestMessage.decode(message.encode()) == message)
        }
        for status in TagAccessStatus.allCases {
            let response = ResponseMessage(id: 3, response: .tagAccess(status, words: status == .ok ? [1, 2, 3] : []))
            #expect(try ResponseMessage.decode(response.encode()) == response)
        }
        // A bank number that is not Gen2's: header (10), EPC length and 4 bytes, operation, bank.
        var badBank = RequestMessage(id: 1, command: .tagAccess(epc: [1, 2, 3, 4], .read(bank: .tid, wordPointer: 0, wordCount: 1, password: 0))).encode()
        #expect(badBank[16] == MemoryBank.tid.rawValue)
        badBank[16] = 9
        #expect(throws: ProtocolError.self) { try RequestMessage.decode(badBank) }
        let badLock = RequestMessage(id: 1, command: .tagAccess(epc: [1, 2, 3, 4], .lock(payload: 1 << 20, password: 0)))
        #expect(throws: ProtocolError.self) { try RequestMessage.decode(badLock.encode()) }
    }
}

@Suite("Battery codec")
struct BatteryCodecTests {
    @Test("battery request and answer round-trip; a percentage over 100 is refused")
    func roundTrip() throws {
        let request = RequestMessage(id: 4, command: .getBattery)
        #expect(try RequestMessage.decode(request.encode()) == request)
        let info = BatteryInfo(canScan: true, externalPowerIsConnected: true, isCharging: false, minutesRemaining: 200,
                               percentRemaining: 83, millivolts: 4047)
        let response = ResponseMessage(id: 4, response: .battery(info))
        #expect(try ResponseMessage.decode(response.encode()) == response)
        var bad = response.encode()
        bad[bad.count - 3] = 101
        #expect(throws: ProtocolError.self) { try ResponseMessage.decode(bad) }
    }
}

@Suite("Diagnostics codec")
struct DiagnosticsCodecTests {
    @Test("diagnostics request and answer round-trip")
    func roundTrip() throws {
        for reset in [false, true] {
            let request = RequestMessage(id: 5, command: .getDiagnostics(reset: reset))
            #expect(try RequestMessage.decode(request.encode()) == request)
        }
        var counters = ReaderCounters()
        counters.inventoryRounds = 123
        counters.tagFinds = .max
        counters.uniqueTags = 24
        counters.forgotten = 7
        counters.forgottenNotAcknowledged = 3
        counters.forgottenNotSent = 2
        let response = ResponseMessage(id: 5, response: .diagnostics(counters))
        #expect(try ResponseMessage.decode(response.encode()) == response)
        // Status, then eleven u32 counters in the documented order.
        let payload = Array(response.encode()[MessageHeader.size...])
        #expect(payload.count == 1 + 11 * 4)
        #expect(Array(payload[29..<45]) == [24, 0, 0, 0, 7, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0])
    }

    @Test("the inventory status event's bytes")
    func statusBytes() {
        #expect(InventoryEvent.status(rounds: 0x0102_0304).encode() == [1, 0, 3, 0, 3, 1, 0, 0, 4, 0, 4, 3, 2, 1])
    }
}

@Suite("Sound codec")
struct SoundCodecTests {
    @Test("sound commands' bytes")
    func bytes() {
        let geiger = RequestMessage(id: 1, command: .setGeigerSound(.standard)).encode()
        #expect(Array(geiger[MessageHeader.size...]) == [0xB8, 0x0B, 2, 0, 0xE8, 0x03, 40, 0, 0xF4, 0x01])
        let found = FoundSounds(foundItem: [SoundTone(frequencyHz: 2700, durationMs: 60)], foundLast: [])
        let sounds = RequestMessage(id: 1, command: .setFoundSounds(found)).encode()
        #expect(Array(sounds[MessageHeader.size...]) == [1, 0x8C, 0x0A, 60, 0, 0])
        #expect(RequestMessage(id: 1, command: .playSound(.foundLast)).encode() == [1, 0, 1, 0, 3, 7, 1, 0, 1, 0, 2])
    }

    @Test("an unknown sound and too many reader EPCs are refused")
    func refused() throws {
        var bytes = RequestMessage(id: 1, command: .playSound(.foundItem)).encode()
        bytes[bytes.count - 1] = 9
        #expect(throws: ProtocolError.self) { try RequestMessage.decode(bytes) }
        var p = InventoryParameters()
        p.soundType = 6
        p.volume = 77
        p.epcs = [[1, 2, 3, 4], [5, 6, 7, 8, 9, 10]]
        let request = RequestMessage(id: 2, command: .startInventory(p))
        #expect(try RequestMessage.decode(request.encode()) == request)
        var wrong = request.encode()
        wrong[wrong.count - 13] = 9   // the EPC count
        #expect(throws: ProtocolError.self) { try RequestMessage.decode(wrong) }
    }
}
