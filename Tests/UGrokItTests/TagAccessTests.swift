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
        try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance))
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
        // The new EPC is a new tag to the inventory: its first read reports it.
        #expect(try Self.seen(rig).contains(new))
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

    @Test("the kill password is a RESERVED write; killTag is not on the vendor wire and sends nothing")
    func killPassword() throws {
        let rig = try Self.scanning()
        let tag = Self.epc(rig, 3)
        #expect(try rig.session.setTagKillPassword(tag, to: 0xDEAD_BEEF) == .ok)
        let reserved = try rig.session.readTag(tag, bank: .reserved, offset: 0, maxBytes: 4)
        #expect(reserved.status == .ok && reserved.data == [0xDE, 0xAD, 0xBE, 0xEF])
        let sent = rig.session.inventory?.packetsAnswered
        #expect(throws: ReaderError.notSupported(port: "sim:0", feature: "killTag")) { try rig.session.killTag(tag, killPassword: 0xDEAD_BEEF) }
        #expect(rig.session.inventory?.accessInFlight == nil)
        _ = sent
        #expect(rig.session.inventoryRunning)
    }

    @Test("tag access needs a running inventory, and whole words; nothing is sent otherwise")
    func refusedBeforeSending() throws {
        let rig = try Rig()
        try rig.session.connect()
        let tag = try UgiEpc(hex: "3074257BF7194E4000001A85")
        let sent = rig.session.linkStatistics.packetsSent
        #expect(throws: ReaderError.noInventoryRunning(port: "sim:0")) { try rig.session.writeTag(tag, bank: .user, offset: 0, data: [1, 2]) }
        #expect(throws: ReaderError.oddTagMemoryBytes(field: "offset", value: 3)) {
            try rig.session.readTag(tag, bank: .user, offset: 3, maxBytes: 2)
        }
        #expect(throws: ReaderError.notSupported(port: "sim:0", feature: "readTag with an access password")) {
            try rig.session.readTag(tag, bank: .user, offset: 0, maxBytes: 2, password: 5)
        }
        #expect(rig.session.linkStatistics.packetsSent == sent)
    }
}

@Suite("Battery")
struct BatteryTests {
    @Test("battery info is the reader's level read through the vendor's battery curve; not while it scans")
    func battery() throws {
        let rig = try Rig()
        try rig.grokker.store.update { $0.batteryPercent = 40 }
        try rig.session.connect()
        let info = try rig.session.batteryInfo()
        let version = try #require(rig.session.version)
        let expected = rig.grokker.battery(rig.grokker.store.state)
            .info(readerProtocol: version.protocolVersion, hardwareRevision: version.hardwareRevision, capacityMinutes: 140)
        #expect(Int(info.percentRemaining) == expected.percentRemaining)
        #expect(Int(info.minutesRemaining) == expected.minutesRemaining)
        #expect(info.canScan && !info.isCharging && !info.externalPowerIsConnected)
        #expect(info.millivolts == 3660)
        try rig.session.setRegion("fcc")
        try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance))
        #expect(throws: ReaderError.inventoryRunning(port: "sim:0")) { try rig.session.batteryInfo() }
        try rig.session.stopInventory()
        #expect(try rig.session.batteryInfo() == info)
    }
}

@Suite("Diagnostics")
struct DiagnosticsTests {
    @Test("the reader's counters (GetDiagnostics) and the host's; reset zeroes the reader's")
    func counters() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance))
        try rig.session.collect(forAtMost: 1)
        try rig.session.stopInventory()
        let reports = rig.session.takeReports().count
        let first = try rig.session.diagnostics(reset: true)
        let reader = try #require(first.reader)
        #expect(first.rawInventoryRounds > 0)
        #expect(first.rawTagFinds >= reports && reports > 0)
        #expect(first.packetsReceived > 0 && reader.packetsReceived > 0)
        let second = try rig.session.diagnostics()
        #expect(second.rawInventoryRounds == 0)
        #expect(second.rawTagFinds == 0)
        #expect(second.packetsSent > first.packetsSent)
    }

    @Test("GetTemperature answers the reader's reading")
    func temperature() throws {
        let rig = try Rig()
        try rig.session.connect()
        #expect(try rig.session.temperature()?.degreesC == 25)
    }
}
