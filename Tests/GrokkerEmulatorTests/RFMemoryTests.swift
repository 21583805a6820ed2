import GrokProtocol
import Testing

@testable import GrokkerEmulator

/// Tag memory, the StoredCRC, the Lock payload and tag access with the vendor's results.
@Suite struct RFMemoryTests {
    /// A real tag's ACK reply: PC 3000, EPC E200 4216 CB60 6015 0095 1ED6, CRC-16 B91F.
    static let vectorEPC: [UInt8] = [0xE2, 0x00, 0x42, 0x16, 0xCB, 0x60, 0x60, 0x15, 0x00, 0x95, 0x1E, 0xD6]

    @Test func crc16MatchesKnownVectors() {
        #expect(Gen2CRC16.checksum(Array("123456789".utf8)) == 0xD64E)
        #expect(Gen2CRC16.checksum([0x30, 0x00] + Self.vectorEPC) == 0xB91F)
        // A receiver running the register over data and CRC finds the Gen2 residue.
        #expect(Gen2CRC16.register([0x30, 0x00] + Self.vectorEPC + [0xB9, 0x1F]) == Gen2CRC16.residue)
    }

    @Test func epcBankLayout() {
        let memory = TagMemory(epc: Self.vectorEPC, tid: [0xE280, 0x1160])
        #expect(memory.pc == 0x3000)
        #expect(memory.storedCRC == 0xB91F)
        #expect(memory.epc == Self.vectorEPC)
        #expect(memory.epcBank.count == 2 + 8)  // room for 128 bits by default
        #expect(memory.words(of: .reserved) == [0, 0, 0, 0])
        let withUser = TagMemory(epc: Self.vectorEPC, tid: [0xE280, 0x1160], user: [1, 2], accessPassword: 0x1234_5678, killPassword: 0x9ABC_DEF0)
        #expect(withUser.pc == 0x3400)  // UMI
        #expect(withUser.reserved == [0x9ABC, 0xDEF0, 0x1234, 0x5678])
        #expect(withUser.accessPassword == 0x1234_5678 && withUser.killPassword == 0x9ABC_DEF0)
    }

    @Test func lockPayloadBitPositions() {
        let fields = Gen2LockField.allCases
        #expect(fields.map(\.maskOffset) == [18, 16, 14, 12, 10])
        #expect(fields.map(\.actionOffset) == [8, 6, 4, 2, 0])
        let payload = Gen2LockPayload(setting: [.user: .permanentlyNotWritable, .accessPassword: .writeRestricted])
        #expect(payload.rawValue == (3 << 10 | 3 << 0) | (3 << 16 | 2 << 6))
        #expect(payload.mask(for: .user) == 3 && payload.action(for: .user) == .permanentlyNotWritable)
        #expect(payload.mask(for: .epc) == 0)
        #expect(Gen2LockPayload(rawValue: 0xFFFF_FFFF).rawValue == 0xF_FFFF)
        // Mask 2 ("writable") changes only the pwd-write bit.
        let partial = Gen2LockPayload(rawValue: 2 << 14 | 3 << 4)
        #expect(Gen2LockState().applying(partial)?.epc == .writeRestricted)
    }

    // MARK: Access

    static let epcA: [UInt8] = RFFixtures.epc(1)
    static let epcB: [UInt8] = RFFixtures.epc(2)
    static let far: [UInt8] = RFFixtures.epc(3)

    /// Tag A open; tag B with passwords and a write-restricted USER; a far tag out of range.
    static func field() -> RFField {
        let scene = RFScene(tags: [
            RFScene.Tag(epc: epcA, user: [0, 0, 0, 0], placement: .distance(meters: 1)),
            RFScene.Tag(
                epc: epcB, user: [0x11, 0x11, 0x22, 0x22], accessPassword: 0xA5A5_A5A5, killPassword: 0x0BAD_F00D,
                lock: Gen2LockState(accessPassword: .writeRestricted, user: .writeRestricted), placement: .distance(meters: 2)),
            RFScene.Tag(epc: far, placement: .distance(meters: 40)),
        ])
        var field = RFField(scene: scene)
        field.setCarrier(RFCarrier(powerDBm: 30, frequencyMHz: 915), at: 0)
        return field
    }

    @Test func readWholeBanksAndRanges() {
        var field = Self.field()
        let bank = field.read(epc: Self.epcA, bank: .epc, wordPointer: 0, wordCount: 0, at: 1)
        #expect(bank.result == .ok)
        #expect(bank.words == field.tags[0].memory.epcBank)
        #expect(bank.words[0] == Gen2CRC16.checksum(words: bank.words[1..<8]))
        #expect(field.read(epc: Self.epcA, bank: .tid, wordPointer: 0, wordCount: 2, at: 1).words == [0xE280, 0x1160])
        #expect(field.read(epc: Self.epcA, bank: .user, wordPointer: 1, wordCount: 2, at: 1).result == .memoryOverrun)
        #expect(field.read(epc: Self.epcA, bank: .user, wordPointer: 2, wordCount: 0, at: 1).result == .memoryOverrun)
        #expect(field.read(epc: Self.epcA, bank: .user, wordPointer: 0, wordCount: 3, at: 1).result == .memoryOverrun)
        #expect(field.read(epc: Self.epcA, bank: .user, wordPointer: 0, wordCount: 2, at: 1).result == .ok)
    }

    @Test func programEPCUpdatesPCAndCRCAndIsFoundAgain() {
        var field = Self.field()
        #expect(field.programEPC(epc: Self.epcA, newEPC: Self.vectorEPC, at: 1) == .ok)
        let memory = field.tags[0].memory
        #expect(memory.epc == Self.vectorEPC)
        #expect(memory.pc == 0x3400)  // length 6 words, UMI kept
        #expect(memory.storedCRC == Gen2CRC16.checksum(words: [0x3400] + TagMemory.words(fromBytes: Self.vectorEPC)))
        #expect(field.read(epc: Self.epcA, bank: .epc, wordPointer: 0, wordCount: 0, at: 1).result == .tagNotFound)

        // A shorter EPC changes the length bits and the CRC covers only the new length.
        let short: [UInt8] = [0xE2, 0x00, 0x42, 0x16]
        #expect(field.programEPC(epc: Self.vectorEPC, newEPC: short, at: 1) == .ok)
        #expect(field.tags[0].memory.pc >> 11 == 2)
        #expect(field.tags[0].memory.storedCRC == Gen2CRC16.checksum([0x14, 0x00] + short))

        // The PC-only CRC vector, then back to 96 bits: the vector's CRC with UMI cleared.
        #expect(field.write(epc: short, bank: .epc, wordPointer: 1, words: [0x3000] + TagMemory.words(fromBytes: Self.vectorEPC), at: 1) == .ok)
        #expect(field.tags[0].memory.storedCRC == 0xB91F)

        var inventory = Gen2Inventory(configuration: RFFixtures.configuration(toggleAfter: 1))
        var epcs: Set<[UInt8]> = []
        inventory.run(in: &field, from: 2, maxRounds: 10) { round in
            epcs.formUnion(round.reads.map(\.epc))
            return true
        }
        #expect(epcs == [Self.vectorEPC, Self.epcB])

        // Too long for the bank (8 words of room), or not whole words.
        #expect(field.programEPC(epc: Self.vectorEPC, newEPC: [UInt8](repeating: 0x11, count: 18), at: 3) == .memoryOverrun)
        #expect(field.programEPC(epc: Self.vectorEPC, newEPC: [UInt8](repeating: 0x11, count: 16), at: 3) == .ok)
        #expect(field.programEPC(epc: [UInt8](repeating: 0x11, count: 16), newEPC: [1, 2, 3], at: 3) == .generalError)
        // The StoredCRC itself is not writable; a PC longer than the bank is an overrun.
        #expect(field.write(epc: [UInt8](repeating: 0x11, count: 16), bank: .epc, wordPointer: 0, words: [0], at: 3) == .generalError)
        #expect(field.write(epc: [UInt8](repeating: 0x11, count: 16), bank: .epc, wordPointer: 1, words: [9 << 11], at: 3) == .memoryOverrun)
    }

    @Test func passwordsAndWriteLocks() {
        var field = Self.field()
        // Wrong password, whatever the operation.
        #expect(field.write(epc: Self.epcB, bank: .epc, wordPointer: 2, words: [1], password: 0x1111_1111, at: 1) == .wrongPassword)
        #expect(field.read(epc: Self.epcB, bank: .tid, wordPointer: 0, wordCount: 1, password: 0xA5A5_A5A4, at: 1).result == .wrongPassword)
        // The write-restricted USER bank needs the password; the open EPC bank does not.
        #expect(field.write(epc: Self.epcB, bank: .user, wordPointer: 0, words: [0xBEEF], at: 1) == .passwordRequired)
        #expect(field.tags[1].memory.user == [0x1111, 0x2222])
        #expect(field.write(epc: Self.epcB, bank: .user, wordPointer: 0, words: [0xBEEF], password: 0xA5A5_A5A5, at: 1) == .ok)
        #expect(field.tags[1].memory.user == [0xBEEF, 0x2222])
        // A read-locked access password cannot be read without it; the kill password can.
        #expect(field.read(epc: Self.epcB, bank: .reserved, wordPointer: 2, wordCount: 2, at: 1).result == .passwordRequired)
        #expect(field.read(epc: Self.epcB, bank: .reserved, wordPointer: 0, wordCount: 2, at: 1).words == [0x0BAD, 0xF00D])
        #expect(
            field.read(epc: Self.epcB, bank: .reserved, wordPointer: 0, wordCount: 0, password: 0xA5A5_A5A5, at: 1).words
                == [0x0BAD, 0xF00D, 0xA5A5, 0xA5A5])
        // The TID is permalocked at the factory: no password helps.
        #expect(field.write(epc: Self.epcA, bank: .tid, wordPointer: 0, words: [0], at: 1) == .generalError)
        // Changing passwords.
        #expect(field.setAccessPassword(epc: Self.epcB, newPassword: 0x0102_0304, at: 1) == .passwordRequired)
        #expect(field.setAccessPassword(epc: Self.epcB, newPassword: 0x0102_0304, password: 0xA5A5_A5A5, at: 1) == .ok)
        #expect(field.tags[1].memory.accessPassword == 0x0102_0304)
        #expect(field.setKillPassword(epc: Self.epcA, newPassword: 0x7777_7777, at: 1) == .ok)
        #expect(field.tags[0].memory.killPassword == 0x7777_7777)
        // Lock needs the secured state.
        let lockEPC = Gen2LockPayload(setting: [.epc: .writeRestricted])
        #expect(field.lock(epc: Self.epcB, payload: lockEPC, at: 1) == .passwordRequired)
        #expect(field.lock(epc: Self.epcB, payload: lockEPC, password: 0x0102_0304, at: 1) == .ok)
        #expect(field.write(epc: Self.epcB, bank: .epc, wordPointer: 2, words: [1], at: 1) == .passwordRequired)
        // A tag without an access password is always secured: restricted means nothing.
        #expect(field.lock(epc: Self.epcA, payload: Gen2LockPayload(setting: [.user: .writeRestricted]), at: 1) == .ok)
        #expect(field.write(epc: Self.epcA, bank: .user, wordPointer: 0, words: [1], at: 1) == .ok)
    }

    @Test func permalockCannotBeUndone() {
        var field = Self.field()
        let permalock = Gen2LockPayload(setting: [.user: .permanentlyNotWritable])
        #expect(field.lock(epc: Self.epcA, payload: permalock, at: 1) == .ok)
        #expect(field.write(epc: Self.epcA, bank: .user, wordPointer: 0, words: [1], at: 1) == .generalError)
        // Same mask, unlocking action: refused, nothing changes.
        let unlock = Gen2LockPayload(setting: [.user: .writable])
        #expect(field.lock(epc: Self.epcA, payload: unlock, at: 1) == .generalError)
        #expect(field.tags[0].memory.locks.user == .permanentlyNotWritable)
        // Only the pwd-write bit (mask 2): still refused.
        #expect(field.lock(epc: Self.epcA, payload: Gen2LockPayload(rawValue: 2 << 10), at: 1) == .generalError)
        // Reasserting the permalock is accepted and changes nothing; other fields still lock.
        let again = Gen2LockPayload(setting: [.user: .permanentlyNotWritable, .epc: .permanentlyWritable])
        #expect(field.lock(epc: Self.epcA, payload: again, at: 1) == .ok)
        #expect(field.tags[0].memory.locks.epc == .permanentlyWritable)
        #expect(field.lock(epc: Self.epcA, payload: Gen2LockPayload(setting: [.epc: .writeRestricted]), at: 1) == .generalError)
        #expect(field.write(epc: Self.epcA, bank: .epc, wordPointer: 7, words: [1], at: 1) == .ok)
    }

    @Test func writingPastTheEndOverruns() {
        var field = Self.field()
        #expect(field.write(epc: Self.epcA, bank: .user, wordPointer: 1, words: [1, 2], at: 1) == .memoryOverrun)
        #expect(field.write(epc: Self.epcA, bank: .user, wordPointer: 0, words: [1, 2], at: 1) == .ok)
        #expect(field.write(epc: Self.epcA, bank: .reserved, wordPointer: 3, words: [1, 2], at: 1) == .memoryOverrun)
        #expect(field.write(epc: Self.epcA, bank: .epc, wordPointer: 9, words: [1, 2], at: 1) == .memoryOverrun)
        #expect(field.write(epc: Self.epcA, bank: .user, wordPointer: -1, words: [1], at: 1) == .memoryOverrun)
    }

    @Test func aKilledTagNeverAnswersAgain() {
        var field = Self.field()
        #expect(field.kill(epc: Self.epcB, killPassword: 0, at: 1) == .passwordRequired)
        #expect(field.kill(epc: Self.epcB, killPassword: 0x0BAD_F00E, at: 1) == .wrongPassword)
        #expect(field.kill(epc: Self.epcA, killPassword: 0x1234_5678, at: 1) == .wrongPassword)  // kill password 0: unkillable
        #expect(field.kill(epc: Self.epcB, killPassword: 0x0BAD_F00D, at: 1) == .ok)
        #expect(field.tags[1].isKilled)
        #expect(field.read(epc: Self.epcB, bank: .epc, wordPointer: 0, wordCount: 0, at: 1).result == .tagNotFound)
        // Power cycles and full power change nothing.
        field.setCarrier(nil, at: 2)
        var inventory = Gen2Inventory(configuration: RFFixtures.configuration(toggleAfter: 1))
        var found: Set<Int> = []
        inventory.run(in: &field, from: 10, maxRounds: 20) { round in
            found.formUnion(round.reads.map(\.tagIndex))
            return true
        }
        #expect(found == [0])
        #expect(field.kill(epc: Self.epcB, killPassword: 0x0BAD_F00D, at: 20) == .tagNotFound)
    }

    @Test func tagsOutOfRangeOrWithTheCarrierOffAreNotFound() {
        var field = Self.field()
        #expect(field.read(epc: Self.far, bank: .epc, wordPointer: 0, wordCount: 0, at: 1).result == .tagNotFound)
        #expect(field.write(epc: Self.far, bank: .epc, wordPointer: 2, words: [1], at: 1) == .tagNotFound)
        #expect(field.programEPC(epc: Self.far, newEPC: Self.epcA, at: 1) == .tagNotFound)
        #expect(field.kill(epc: Self.far, killPassword: 1, at: 1) == .tagNotFound)
        #expect(field.read(epc: [1, 2, 3, 4], bank: .epc, wordPointer: 0, wordCount: 0, at: 1).result == .tagNotFound)
        // Lower the power until tag B (2 m) drops out but tag A (1 m) stays.
        field.setCarrier(RFCarrier(powerDBm: 16, frequencyMHz: 915), at: 2)
        #expect(field.read(epc: Self.epcA, bank: .tid, wordPointer: 0, wordCount: 1, at: 2).result == .ok)
        #expect(field.read(epc: Self.epcB, bank: .tid, wordPointer: 0, wordCount: 1, at: 2).result == .tagNotFound)
        field.setCarrier(nil, at: 3)
        #expect(field.read(epc: Self.epcA, bank: .tid, wordPointer: 0, wordCount: 1, at: 3).result == .tagNotFound)
    }

    @Test func resultCodesHaveTheVendorValues() {
        #expect(TagAccessResult.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5, 6, 7])
        #expect(TagAccessResult.memoryOverrun.description == "MEMORY_OVERRUN")
        #expect(Gen2Bank.allCases.map(\.rawValue) == [0, 1, 2, 3])
        #expect(Gen2LockAction.allCases.map(\.rawValue) == [0, 1, 2, 3])
    }
}
