import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// Tag access over the audio link against the emulated field, with the vendor's results.
@Suite("Tag access")
struct TagAccessTests {
    /// A connected rig with its region set and an inventory running.
    static func scanning() throws -> Rig {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters)
        return rig
    }

    static func epc(_ rig: Rig, _ i: Int) -> UgiEpc { try! UgiEpc(bytes: rig.grokker.field.tags[i].epc) }

    /// EPCs read in `seconds` from now (reads made before now, still on their way, are
    /// let through and dropped first).
    static func seen(_ rig: Rig, seconds: Double = 1.5) throws -> Set<UgiEpc> {
        try rig.session.collect(forAtMost: 0.5)
        _ = rig.session.takeReports()
        try rig.session.collect(forAtMost: seconds)
        return Set(rig.session.takeReports().compactMap { try? UgiEpc(bytes: $0.epc) })
    }

    @Test("programTag changes the EPC (PC and CRC with it) and the next reads find the new one")
    func program() throws {
        let rig = try Self.scanning()
        let old = Self.epc(rig, 2)
        let new = try UgiEpc(hex: "3074257BF7194E4000C0FFEE")
        #expect(try rig.session.programTag(old, to: new) == .ok)
        let memory = rig.grokker.field.tags[2].memory
        #expect(memory.epc == new.bytes)
        #expect(memory.pc >> 11 == 6)
        #expect(memory.storedCRC == Gen2CRC16.checksum(words: memory.epcBank[1...(1 + memory.epcWordCount)]))
        let seen = try Self.seen(rig)
        #expect(seen.contains(new))
        #expect(!seen.contains(old))
    }

    @Test("read and write USER memory; writing past the bank is MEMORY_OVERRUN")
    func readWrite() throws {
        let rig = try Self.scanning()
        let tag = Self.epc(rig, 0)
        let (status, tid) = try rig.session.readTag(tag, bank: .tid, offset: 0, maxBytes: 4)
        #expect(status == .ok && tid.count == 4 && tid[0] == 0xE2)
        let epcRead = try rig.session.readTag(tag, bank: .epc, offset: 4, maxBytes: 12)
        #expect(epcRead.status == .ok && epcRead.data == tag.bytes)
        #expect(try rig.session.writeTag(tag, bank: .epc, offset: 200, data: [1, 2]) == .memoryOverrun)
        #expect(try rig.session.writeTag(try UgiEpc(hex: "00000000"), bank: .epc, offset: 4, data: [1, 2]) == .tagNotFound)
    }

    @Test("passwords, locks and permalock behave as Gen2 says")
    func locks() throws {
        let rig = try Self.scanning()
        let tag = Self.epc(rig, 1)
        let password: UInt32 = 0x1234_5678
        #expect(try rig.session.setTagAccessPassword(tag, to: password) == .ok)
        // Lock the EPC bank write-restricted: writes now need the password.
        let restrict = Gen2LockPayload(setting: [.epc: .writeRestricted]).rawValue
        #expect(try rig.session.lockUnlockTag(tag, payload: restrict, password: password) == .ok)
        #expect(try rig.session.writeTag(tag, bank: .epc, offset: 14, data: [0xAB, 0xCD]) == .passwordRequired)
        #expect(try rig.session.writeTag(tag, bank: .epc, offset: 14, data: [0xAB, 0xCD], password: 0x0BAD_0BAD) == .wrongPassword)
        // Permalock it not writable: nothing undoes that.
        let permalock = Gen2LockPayload(setting: [.epc: .permanentlyNotWritable]).rawValue
        #expect(try rig.session.lockUnlockTag(tag, payload: permalock, password: password) == .ok)
        let unlock = Gen2LockPayload(setting: [.epc: .writable]).rawValue
        #expect(try rig.session.lockUnlockTag(tag, payload: unlock, password: password) != .ok)
        #expect(try rig.session.writeTag(tag, bank: .epc, offset: 14, data: [0xAB, 0xCD], password: password) != .ok)
    }

    @Test("a killed tag never answers again")
    func kill() throws {
        let rig = try Self.scanning()
        let tag = Self.epc(rig, 3)
        #expect(try rig.session.killTag(tag, killPassword: 0xDEAD) == .wrongPassword)
        #expect(try rig.session.setTagKillPassword(tag, to: 0xDEAD) == .ok)
        #expect(try rig.session.killTag(tag, killPassword: 0xDEAD) == .ok)
        #expect(!(try Self.seen(rig)).contains(tag))
        #expect(try rig.session.readTag(tag, bank: .tid, offset: 0, maxBytes: 4).status == .tagNotFound)
    }

    @Test("tag access needs a running inventory, and whole words; nothing is sent otherwise")
    func refusedBeforeSending() throws {
        let rig = try Rig()
        try rig.session.connect()
        let tag = try UgiEpc(hex: "3074257BF7194E4000001A85")
        let sent = rig.session.engine.statistics.messagesSent
        #expect(throws: ReaderError.noInventoryRunning(port: "sim:0")) { try rig.session.killTag(tag, killPassword: 1) }
        #expect(throws: ReaderError.oddTagMemoryBytes(field: "offset", value: 3)) {
            try rig.session.readTag(tag, bank: .user, offset: 3, maxBytes: 2)
        }
        #expect(rig.session.engine.statistics.messagesSent == sent)
    }
}

@Suite("Battery")
struct BatteryTests {
    @Test("battery info comes from the Grokker, and not while it scans")
    func battery() throws {
        let rig = try Rig()
        try rig.grokker.handler.store.update { $0.batteryPercent = 40 }
        try rig.session.connect()
        let info = try rig.session.batteryInfo()
        #expect(info.percentRemaining == 40)
        #expect(info.canScan && !info.isCharging && !info.externalPowerIsConnected)
        #expect(info.minutesRemaining == 96)
        #expect(abs(info.voltage - 3.66) < 0.001)
        try rig.session.setRegion("fcc")
        try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters)
        #expect(throws: ReaderError.inventoryRunning(port: "sim:0")) { try rig.session.batteryInfo() }
        try rig.session.stopInventory()
        #expect(try rig.session.batteryInfo().percentRemaining == 40)
    }
}

@Suite("Diagnostics")
struct DiagnosticsTests {
    @Test("counters from both sides; reset zeroes them")
    func counters() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters)
        try rig.session.collect(forAtMost: 1)
        try rig.session.stopInventory()
        let reports = rig.session.takeReports().count
        let first = try rig.session.diagnostics(reset: true)
        #expect(first.rawInventoryRounds > 0)
        #expect(first.rawTagFinds >= Int(first.reader.reportsSent))
        #expect(Int(first.reader.reportsSent) >= reports && reports > 0)
        #expect(first.packetsReceived > 0 && first.reader.packetsReceived > 0)
        #expect(abs(first.byteProtocolSkewFactor - 1) < 0.001)
        let second = try rig.session.diagnostics()
        #expect(second.rawInventoryRounds == 0)
        #expect(second.rawTagFinds == 0)
        // Only the last exchange since the reset.
        #expect(second.packetsSent < first.packetsSent)
    }
}
