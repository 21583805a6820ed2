import GrokTestSupport
import Testing
@testable import GrokProtocol

@Suite("Vendor command layer: the rfidConfigurations presets")
struct VendorPresetTests {
    @Test("Locate Distance is the reference's row: 27/23/30 dBm, Q 4/2/7, session 0, no A/B toggle, -85 dB, write 24 dBm at -60 dB")
    func locateDistance() {
        let preset = VendorRfidConfiguration.preset(.locateDistance)
        #expect((preset.initialPowerLevel, preset.minPowerLevel, preset.maxPowerLevel) == (27, 23, 30))
        #expect((preset.initialQValue, preset.minQValue, preset.maxQValue) == (4, 2, 7))
        #expect(preset.session == 0 && preset.roundsWithNoFindsToToggleAB == 0)
        #expect(preset.sensitivity == -85 && preset.powerLevelWrite == 24 && preset.sensitivityWrite == -60)
        #expect(!preset.reportRssi && preset.reportSubsequentFinds && preset.soundType == 1 && preset.continual)
        #expect(preset.volume == 1 && preset.historyIntervalMSec == 500 && preset.historyDepth == 20)
        #expect(preset.selectBank == .epc && preset.detailedPerReadMemoryBank1 == .user)
    }

    @Test("The five presets and their wire bytes", arguments: [
        (VendorInventoryType.locateDistance, "b1 16 08 00 00 00 00 00 00 00 00 04 dc 55 00 be 3c 02 07 00 b4 fa"),
        (.inventoryShortRange, "92 16 08 00 00 00 00 00 00 00 00 03 a0 55 01 be 3c 02 07 0a 78 be"),
        (.inventoryDistance, "92 16 08 00 00 00 00 00 00 00 00 03 dc 55 01 be 3c 02 07 0a b4 f0"),
        (.locateShortRange, "b1 16 08 00 00 00 00 00 00 00 00 04 a0 55 00 be 3c 02 07 00 78 be"),
        (.locateVeryShortRange, "b1 16 08 00 00 00 00 00 00 00 00 04 28 55 00 be 3c 02 07 00 00 46"),
    ])
    func presetBytes(type: VendorInventoryType, expected: String) throws {
        let start = try VendorRfidConfiguration.preset(type).inventoryStart(volumeLevels: 8)
        #expect(try start.encode(form: .full) == hex(expected))
    }

    @Test("The preset names are the library's")
    func names() {
        #expect(VendorInventoryType.allCases.map(\.vendorName) == ["Locate Distance", "Inventory Short Range", "Inventory Distance",
                                                                   "Locate Short Range", "Locate Very Short Range"])
        #expect(VendorInventoryType.allCases.map(\.rawValue) == [1, 2, 3, 4, 5])
    }

    @Test("The volume level is trunc(levels x volume + 0.5)")
    func volumeLevels() throws {
        #expect(try VendorUnits.volumeLevel(volume: 0.5, levels: 7) == 4)
        #expect(try VendorUnits.volumeLevel(volume: 0.25, levels: 8) == 2)
        #expect(try VendorUnits.volumeLevel(volume: 0.3, levels: 8) == 2)
        #expect(throws: VendorCommandError.self) { try VendorUnits.volumeLevel(volume: -0.1, levels: 8) }
    }

    @Test("Power bytes truncate (dBm - 5) x 10 like the library")
    func powerBytes() throws {
        #expect(try VendorUnits.powerByte(dBm: 27, field: "p") == 220)
        #expect(try VendorUnits.powerByte(dBm: 5, field: "p") == 0)
        #expect(try VendorUnits.powerByte(dBm: 23.39, field: "p") == 183)
        #expect(VendorUnits.dBm(powerByte: 250) == 30)
        #expect(throws: VendorCommandError.self) { try VendorUnits.powerByte(dBm: 4.99, field: "p") }
    }
}
