import GrokkerEmulator
import GrokProtocol
import Testing
import UGrokIt

/// A region with an allocation per hardware band is set in the allocation the unit's radio
/// tunes; listening is switched only where the region allows; the vendor's table on request.
@Suite("Regions on the unit's hardware band")
struct RegionBandTests {
    /// A unit out of the box whose radio tunes only `band`.
    static func rig(_ band: VendorFrequencyBand) throws -> Rig {
        let rig = try Rig()
        try rig.grokker.store.update { $0.hardwareBand = band }
        return rig
    }

    @Test("a 900 MHz unit can be set for Russia: it gets the 916-921 MHz allocation and hops on its channels")
    func russiaOnA900MHzUnit() throws {
        let rig = try Self.rig(.band900)
        try rig.session.connect()
        let info = try rig.session.setRegion("russia")
        #expect(info.region?.name == "Russian Federation")
        let upper = try #require(RegionCatalog.entry(number: 18, band: .band900))
        #expect(rig.session.sentRegionEntry?.band == .band900)
        #expect(Set(rig.session.regionChannelsKHz) == Set(upper.channelsKHz))
        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        configuration.detailedPerReadData = true
        configuration.detailedPerReadNumReads = 1
        try rig.session.startInventory(configuration)
        try rig.session.collect(forAtMost: 1)
        try rig.session.stopInventory()
        let heard = Set(rig.session.takeReports().map { Int($0.frequencyKHz) })
        #expect(!heard.isEmpty && heard.isSubset(of: Set(upper.channelsKHz)), "\(heard.sorted())")
    }

    @Test("an 860 MHz unit gets Russia's 866-868 MHz allocation, and refuses FCC with the band error")
    func an860MHzUnit() throws {
        let rig = try Self.rig(.band860)
        try rig.session.connect()
        try rig.session.setRegion("russia")
        #expect(rig.session.sentRegionEntry?.band == .band860)
        #expect(Set(rig.session.regionChannelsKHz) == [866_300, 866_900, 867_500])
        #expect(throws: ReaderError.regionNotForHardware(port: "sim:0", region: "FCC (US), IC (Canada)",
                                                         allocations: "902.75-927.25 MHz")) {
            try rig.session.setRegion("fcc")
        }
    }

    @Test("setListenBeforeTalk: refused where the rule keeps listening on, naming the rule; taken where the region allows it")
    func listenBeforeTalkOverride() throws {
        let rig = try Rig()
        try rig.connectWithRegion("japan_unlicensed")
        var off = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        off.setListenBeforeTalk = true
        off.listenBeforeTalk = false
        let rule = try #require(RegionCatalog.entry(number: 6)).source
        #expect(rule.contains("ARIB STD-T107"))
        #expect(throws: ReaderError.listenBeforeTalkNotAllowed(port: "sim:0", region: "Japan (unlicensed)", on: false, rule: rule)) {
            try rig.session.startInventory(off)
        }
        try rig.session.setRegion("fcc")
        var on = off
        on.listenBeforeTalk = true
        try rig.session.startInventory(on)
        try rig.session.stopInventory()
    }

    @Test("with the vendor's table, SetRegion carries the vendor's entry byte for byte")
    func vendorTable() throws {
        let rig = try Self.rig(.band900)
        try rig.session.connect()
        try rig.session.setRegion("russia", table: .vendor)
        #expect(rig.session.sentRegionEntry == VendorRegionTable.entries[17])
        #expect(rig.grokker.store.state.regionTable?.encode().prefix(119) == VendorRegionTable.entries[17].encode().prefix(119))
    }
}
