import Foundation
import GrokBasics
import GrokAudio
import GrokTestSupport
import GrokkerEmulator
import GrokProtocol
import Synchronization
import Testing
import UGrokIt

/// The vendor items UGrokIt once lacked (docs/vendor-api.md): their values and behaviour.
@Suite("Vendor surface")
struct VendorSurfaceTests {
    @Test("the UGI_ACCESS_* constants have the header's values and build the Gen2 lock payload")
    func lockConstants() {
        #expect([UGI_ACCESS_KILL_PASSWORD_MASK_BIT_OFFSET, UGI_ACCESS_ACCESS_PASSWORD_MASK_BIT_OFFSET, UGI_ACCESS_EPC_MASK_BIT_OFFSET,
                 UGI_ACCESS_TID_MASK_BIT_OFFSET, UGI_ACCESS_USER_MASK_BIT_OFFSET] == [18, 16, 14, 12, 10])
        #expect([UGI_ACCESS_KILL_PASSWORD_ACTION_BIT_OFFSET, UGI_ACCESS_ACCESS_PASSWORD_ACTION_BIT_OFFSET, UGI_ACCESS_EPC_ACTION_BIT_OFFSET,
                 UGI_ACCESS_TID_ACTION_BIT_OFFSET, UGI_ACCESS_USER_ACTION_BIT_OFFSET] == [8, 6, 4, 2, 0])
        #expect([UGI_ACCESS_MASK_CHANGE_NONE, UGI_ACCESS_MASK_CHANGE_PERMALOCK, UGI_ACCESS_MASK_CHANGE_WRITABLE,
                 UGI_ACCESS_MASK_CHANGE_WRITABLE_AND_PERMALOCK] == [0, 1, 2, 3])
        #expect([UGI_ACCESS_ACTION_WRITABLE, UGI_ACCESS_ACTION_PERMANENTLY_WRITABLE, UGI_ACCESS_ACTION_WRITE_RESTRICTED,
                 UGI_ACCESS_ACTION_PERMANENTLY_NOT_WRITABLE] == [0, 1, 2, 3])
        #expect(UGI_NO_PASSWORD == 0)
        // The vendor's way and the builder agree: lock the EPC bank behind the password.
        let vendor = UGI_ACCESS_MASK_CHANGE_WRITABLE << UGI_ACCESS_EPC_MASK_BIT_OFFSET
            | UGI_ACCESS_ACTION_WRITE_RESTRICTED << UGI_ACCESS_EPC_ACTION_BIT_OFFSET
        let built = UgiLockUnlockMaskAndAction(rawValue: 0).setting(.epc, mask: .writable, action: .writeRestricted)
        #expect(built.rawValue == vendor)
        #expect(built.rawValue == 0x0_8020)
        // Setting a field again replaces its bits; other fields stay.
        let both = built.setting(.user, mask: .writableAndPermalock, action: .permanentlyNotWritable)
            .setting(.epc, mask: .permalock, action: .permanentlyWritable)
        #expect(both.mask(for: .epc) == 1 && both.action(for: .epc) == .permanentlyWritable)
        #expect(both == Gen2LockPayload(rawValue: 1 << 14 | 1 << 4).setting(.user, mask: .writableAndPermalock, action: .permanentlyNotWritable))
        #expect(both.setting(.user, mask: .writableAndPermalock, action: .permanentlyNotWritable).rawValue
            & (0xF << 10 | 3) == Gen2LockPayload(setting: [.user: .permanentlyNotWritable]).rawValue)
    }

    @Test("UgiUtil: upper-case hex out, either case in, nil for what is not hex")
    func util() {
        #expect(UgiUtil.dataToString([0x30, 0x0a, 0xff]) == "300AFF")
        #expect(UgiUtil.bytesToString([1, 2, 3, 4], length: 2) == "0102")
        #expect(UgiUtil.bytesToString([1, 2], length: 9) == "0102")
        #expect(UgiUtil.stringToData("300aFF") == [0x30, 0x0a, 0xff])
        #expect(UgiUtil.stringToData("300") == nil)
        #expect(UgiUtil.stringToData("zz") == nil)
        var buffer: [UInt8] = [9, 9, 9]
        #expect(UgiUtil.stringToBytes("A1B2C3", toBuffer: &buffer, bufferSize: 2) == 2)
        #expect(buffer == [0xa1, 0xb2])
        #expect(UgiUtil.stringToBytes("nope", toBuffer: &buffer, bufferSize: 8) == 0)
        #expect(buffer.isEmpty)
    }

    @Test("the 1.15 ramp modes: NO_RAMP starts at the initial power; SLOW, MEDIUM and FAST at the minimum, alike")
    func rampModes() throws {
        var c = UgiRfidConfiguration.config(inventoryType: .singleFind)
        #expect(UgiSingleFindRampPowerMode.allCases.map(\.rawValue) == [0, 1, 2, 3])
        #expect(UgiSingleFindRampPowerMode.allCases.map(\.description) == ["NO_RAMP", "SLOW", "MEDIUM", "FAST"])
        var starts: [UgiSingleFindRampPowerMode: VendorInventoryStart] = [:]
        for mode in UgiSingleFindRampPowerMode.allCases {
            c.singleFindRampPowerMode = mode
            starts[mode] = try c.vendorInventoryStart(volumeLevels: 4)
        }
        #expect(starts[.slow] == starts[.medium] && starts[.slow] == starts[.fast])
        #expect(starts[.slow]?.radio.initialPower == (try VendorUnits.powerByte(dBm: c.minPowerLevel, field: "min")))
        c.initialPowerLevel = 20
        c.singleFindRampPowerMode = .noRamp
        #expect(try c.vendorInventoryStart(volumeLevels: 4).radio.initialPower == (try VendorUnits.powerByte(dBm: 20, field: "initial")))
    }

    /// A reader on an emulated Grokker behind a cable that can be unplugged.
    static func rig(_ bench: TemporaryDirectory, logger: UgiLogger = UgiLogger()) throws -> (Reader, SimulatedCablePort) {
        let store = try DeviceStateStore.openOrCreate(directory: bench.path, index: 0)
        try store.update { $0.region = RegionCatalog.find("fcc")!.setting; $0.provisioning.userHasSetRegion = true }
        let cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: try EmulatedGrokker(store: store))
        let box = QueueBox(cable)
        var options = ReaderOptions()
        options.logger = logger
        return (Reader(name: "sim:0", options: options) { box.value }, cable)
    }

    static func connected(_ reader: Reader) -> DispatchSemaphore {
        let connected = DispatchSemaphore(value: 0)
        reader.addConnectionStateListener { if $0 == .connected { connected.signal() } }
        return connected
    }

    @Test("a sound set before the connection goes to the Grokker when it connects, and again after every reconnection")
    func soundsRemembered() async throws {
        let bench = TemporaryDirectory("ugrokit")
        let log = CollectingLogDestination()
        let (reader, cable) = try Self.rig(bench, logger: UgiLogger(categories: .command, destination: log))
        let geiger = UgiGeigerCounterSound(frequency: 2500, clickDurationMsec: 4, clickRate: 1.5, maxClicksPerSecond: 40, historyDepthMsec: 600)
        #expect(!reader.inOpenConnection)
        try await reader.setGeigerCounterSound(geiger)  // not open: remembered, nothing sent
        #expect(reader.geigerCounterSound == geiger)
        let connected = Self.connected(reader)
        reader.openConnection()
        defer { reader.closeConnection() }
        #expect(reader.inOpenConnection)
        #expect(connected.wait(timeout: .now() + 60) == .success)
        func sets() -> Int { log.records.filter { $0.message == "-> \(VendorOpcode.setConfiguration)" }.count }
        #expect(sets() == 1)
        cable.plugged = false
        #expect(ReaderTests.eventually { reader.connectionState != .connected })
        cable.plugged = true
        #expect(connected.wait(timeout: .now() + 60) == .success)
        #expect(sets() == 2)
        // Set while connected: sent at once.
        let tones = [UgiTone(frequencyHz: 1800, durationMs: 30)]
        try await reader.setFoundLastItemSound(tones)
        #expect(sets() == 3)
        #expect(reader.foundLastItemSound == tones && reader.foundItemSound == nil)
        reader.closeConnection()
        #expect(!reader.inOpenConnection)
    }

    /// Counts what the vendor-style delegate is asked and told.
    final class FilteringDelegate: UgiInventoryDelegate, @unchecked Sendable {
        let lock = NSLock()
        var lowLevel: Set<UgiEpc> = []
        var filterAsked = 0
        var found: [UgiTag] = []
        let rejectAll: Bool
        init(rejectAll: Bool) { self.rejectAll = rejectAll }
        func inventoryFilterLowLevel(_ epc: UgiEpc) -> Bool { lock.withLock { lowLevel.insert(epc) }; return rejectAll }
        func inventoryFilter(_ epc: UgiEpc) -> Bool { lock.withLock { filterAsked += 1 }; return false }
        func inventoryTagFound(_ tag: UgiTag, withDetailedPerReadData data: [UgiDetailedPerReadData]?) { lock.withLock { found.append(tag) } }
    }

    @Test("inventoryFilterLowLevel is asked first and drops a tag entirely; RESERVED bytes asked for reach UgiTag")
    func lowLevelFilterAndReserved() throws {
        let bench = TemporaryDirectory("ugrokit")
        let (reader, _) = try Self.rig(bench)
        reader.openConnection()
        defer { reader.closeConnection() }
        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        let rejecting = FilteringDelegate(rejectAll: true)
        let first = try reader.startInventory(rejecting, withConfiguration: configuration)
        #expect(ReaderTests.eventually { rejecting.lock.withLock { rejecting.lowLevel.count } == 24 })
        rejecting.lock.withLock {
            #expect(rejecting.filterAsked == 0)
            #expect(rejecting.found.isEmpty)
        }
        #expect(first.tags.isEmpty)
        configuration.minReservedBytes = 8
        configuration.maxReservedBytes = 8
        let keeping = FilteringDelegate(rejectAll: false)
        let second = try reader.startInventory(keeping, withConfiguration: configuration)
        #expect(ReaderTests.eventually { keeping.lock.withLock { keeping.found.count } == 24 })
        keeping.lock.withLock {
            #expect(keeping.filterAsked == 24)
            #expect(keeping.found.allSatisfy { $0.reservedMemory.count == 8 })
            #expect(keeping.found.allSatisfy { $0.readState.tagEpc == $0.epc })
        }
        let stopped = DispatchSemaphore(value: 0)
        second.stopInventory { stopped.signal() }
        #expect(stopped.wait(timeout: .now() + 60) == .success)
    }
}

@Suite("Localized region names")
struct LocalizedRegionNameTests {
    @Test("a region's name in each language, as grokctl's catalogs write it; found by vendor name, code or number")
    func names() {
        #expect(Ugi.localizedRegionNameForName("FCC (US), IC (Canada)", language: "de") == "FCC (USA), IC (Kanada)")
        #expect(Ugi.localizedRegionNameForName("etsi", language: "fr") == "ETSI (UE)")
        #expect(Ugi.localizedRegionNameForName("18", language: "es") == "Federación de Rusia")
        #expect(Ugi.localizedRegionNameForName("Japan (unlicensed)", language: "en") == "Japan (unlicensed)")
        #expect(Ugi.localizedRegionNameForName("Japan (unlicensed)", language: "xx") == "Japan (unlicensed)")
        #expect(Ugi.localizedRegionNameForName("Atlantis", language: "de") == "Atlantis")
        // Every region has a name in every catalog.
        for language in ["en", "es", "fr", "de"] {
            for region in RegionNames.all {
                #expect(MessageCatalog.regionNames[language]?[region.code] != nil, "\(language): \(region.code)")
            }
        }
    }
}
