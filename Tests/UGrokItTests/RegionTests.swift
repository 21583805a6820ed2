import Foundation
import GrokProtocol
import Testing
import UGrokIt

@Suite("Regions")
struct RegionTests {
    /// The vendor library's list, in its order.
    static let vendorNames = [
        "FCC (US), IC (Canada)", "ETSI (EU)", "Taiwan (indoor)", "Taiwan (outdoor)", "China", "Japan (unlicensed)",
        "Japan (licensed)", "Australia", "Brazil", "Hong Kong", "Indonesia", "Israel", "South Korea", "Latvia",
        "Malaysia", "New Zealand", "Peru", "Russian Federation", "South Africa", "ETSI high", "India", "Singapore",
    ]

    /// A GetVersion answer of board `revision` with region index `index` and device flags `flags`.
    static func version(revision: UInt8, index: UInt8, flags: UInt8) -> VendorReaderVersion {
        VendorReaderVersion(protocolVersion: 20, hardwareType: 5, hardwareRevision: revision, firmwareMajor: 1, firmwareMinor: 7,
                            firmwareBuild: 3, antennaType: 2, maxPowerByte: 250, minusMaxSensitivity: 85, volumeLevels: 4,
                            deviceFlags: flags, softwareType: 0, maxProgramBytes: 248, provisioningStatus: 1, internalId: 1,
                            serialNumber: 1234, initStatus: 1, maxTones: 8, regionIndex: index)
    }

    @Test("the region is GetVersion's index only when its user-has-set-region flag is on, on every board revision",
          arguments: [UInt8(3), 5, 6])
    func regionExactlyAsGetVersionSays(revision: UInt8) throws {
        // Out of the box: index 0 (FCC) with the flag off is no region.
        let fresh = ReaderSession.readerInfo(Self.version(revision: revision, index: 0, flags: 0), enforceRegion: true)
        #expect(fresh.region == nil && !fresh.regionSet && fresh.regionName == nil)
        #expect(fresh.userMustSetRegion == (revision > 5))
        #expect(fresh.description.hasSuffix("region not set"))
        // Set: the flag on, the index names it (ours = index + 1).
        let set = ReaderSession.readerInfo(Self.version(revision: revision, index: 1, flags: 0x80), enforceRegion: true)
        #expect(set.region == RegionSetting(name: "ETSI (EU)", number: 2) && set.regionSet && !set.userMustSetRegion)
        let fcc = ReaderSession.readerInfo(Self.version(revision: revision, index: 0, flags: 0x80), enforceRegion: true)
        #expect(fcc.regionName == "FCC (US), IC (Canada)")
    }

    @Test func theVendorsTwentyTwoRegionsInTheVendorsOrder() {
        #expect(RegionNames.all.count == 22)
        #expect(RegionNames.names == Self.vendorNames)
        #expect(RegionNames.all.map(\.number) == Array(1...22))
        #expect(RegionNames.all.map(\.description) == Self.vendorNames)
    }

    @Test func codesAreStableUniqueAndMachineFriendly() {
        let codes = RegionNames.all.map(\.code)
        #expect(Set(codes).count == 22)
        for code in codes {
            #expect(!code.isEmpty && code.allSatisfy { ("a"..."z").contains($0) || $0 == "_" }, "\(code)")
        }
        // The codes the CLI, --json and the message catalog rely on.
        #expect(codes == [
            "fcc", "etsi", "taiwan_indoor", "taiwan_outdoor", "china", "japan_unlicensed", "japan_licensed", "australia",
            "brazil", "hong_kong", "indonesia", "israel", "south_korea", "latvia", "malaysia", "new_zealand", "peru",
            "russia", "south_africa", "etsi_high", "india", "singapore",
        ])
    }

    @Test func lookUpByNameCodeOrNumber() throws {
        let etsi = try #require(RegionNames.region(named: "ETSI (EU)"))
        #expect(etsi.number == 2)
        #expect(etsi.code == "etsi")
        #expect(RegionNames.region(named: "etsi (eu)") == etsi)
        #expect(RegionNames.region(named: "ETSI") == nil)
        #expect(RegionNames.region(code: "etsi") == etsi)
        #expect(RegionNames.region(code: "ETSI") == nil)
        #expect(RegionNames.region(number: 2) == etsi)
        #expect(RegionNames.region(number: 1)?.code == "fcc")
        #expect(RegionNames.region(number: 22)?.name == "Singapore")
        #expect(RegionNames.region(number: 0) == nil)
        #expect(RegionNames.region(number: 23) == nil)
    }

    @Test func regionsMatchTheSettingAGrokkerReports() {
        for region in RegionNames.all {
            #expect(region.setting == RegionSetting(name: region.name, number: UInt16(region.number)))
            #expect(UgiRegion(region.setting) == region)
        }
        #expect(UgiRegion(RegionSetting(name: "ETSI (EU)", number: 1)) == nil)
        #expect(UgiRegion(RegionSetting(name: "Atlantis", number: 23)) == nil)
    }

    @Test func regionsRoundTripThroughJSON() throws {
        let data = try JSONEncoder().encode(RegionNames.all)
        #expect(try JSONDecoder().decode([UgiRegion].self, from: data) == RegionNames.all)
    }
}
