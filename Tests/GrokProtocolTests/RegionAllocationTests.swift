import Testing

@testable import GrokProtocol

/// Regions with an allocation per hardware band, listening where the vendor offered it, and
/// the vendor's own table as a catalogue a fleet may send (docs/regions.md).
@Suite("Region allocations and the vendor's table")
struct RegionAllocationTests {
    @Test("Russia has an allocation per hardware band: 866-868 MHz for the 860 MHz unit, 916-921 MHz for the 900 MHz unit")
    func russiaPerBand() throws {
        let russia = try #require(RegionCatalog.find("russia"))
        let allocations = RegionCatalog.allocations(number: russia.number)
        #expect(allocations.map(\.hardwareBand) == [.band860, .band900])
        let upper = try #require(RegionCatalog.entry(number: russia.number, band: .band900))
        #expect(upper.channelsKHz == [916_250, 916_750, 917_250, 917_750, 918_250, 918_750, 919_250, 919_750, 920_250, 920_750])
        #expect(RegionCatalog.entry(number: russia.number, band: .band860)?.channelsKHz == [866_300, 866_900, 867_500])
        for entry in allocations { try entry.validate() }
        // Every other region has one allocation; FCC none for the 860 MHz hardware.
        for region in RegionCatalog.all where region.code != "russia" {
            #expect(RegionCatalog.allocations(number: region.number).count == 1, "\(region.code)")
        }
        #expect(RegionCatalog.entry(number: 1, band: .band860) == nil)
        // On the wire the 900 MHz allocation says band 0.
        #expect(try VendorRegionEntry(upper).band == .band900)
    }

    @Test("listen before talk may be switched wherever the vendor offered it and no rule forbids it; only Japan's licence-free class keeps it on")
    func listeningOverride() throws {
        let switchable = RegionCatalog.entries.filter(\.listenBeforeTalk.overrideAllowed).map(\.code)
        #expect(switchable.count == 21)
        let japan = try #require(RegionCatalog.entry(number: 6))
        #expect(japan.listenBeforeTalk.enabledByDefault && !japan.listenBeforeTalk.overrideAllowed)
        #expect(!switchable.contains("japan_unlicensed"))
        // The vendor allowed overriding in every region but Latvia (index 13), where ours
        // follows EN 302 208 V3 (off, switchable).
        let vendorSwitchable = VendorRegionTable.entries.filter(\.listenBeforeTalkOverrideAllowed).count
        #expect(vendorSwitchable == 21)
        let fcc = try #require(RegionCatalog.entry(number: 1)).listenBeforeTalk
        #expect(fcc == ListenBeforeTalk(enabledByDefault: false, overrideAllowed: true, listenMilliseconds: 5, thresholdDBm: -80))
        #expect(fcc.isOn(requested: true) && !fcc.isOn(requested: nil))
    }

    @Test("the vendor table is the library's 22 entries byte for byte, with the library's own CRCs")
    func vendorTableByteForByte() throws {
        #expect(VendorRegionTable.entries.count == vendorRegionTable.count)
        for (index, (entry, row)) in zip(VendorRegionTable.entries, vendorRegionTable).enumerated() {
            #expect(entry.encode() == VendorRegionEntryTests.bytes(row), "\(row.name)")
            #expect(entry.index == UInt8(index) && RegionCatalog.named(vendorIndex: entry.index)?.name == row.name)
            let crc = entry.setRegionPayload().prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            #expect(crc == row.crc, "\(row.name)")
        }
    }
}
