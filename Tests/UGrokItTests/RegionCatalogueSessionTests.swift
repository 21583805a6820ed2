import Foundation
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokNet
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

@Suite("Regions from the signed catalogue")
struct RegionCatalogueSessionTests {
    /// This unit's revision and serial: FCC and ETSI (the catalogue a station gets from the
    /// TUF channel, verified there; see GrokFirmwareTests StationRepositoryTests).
    static func catalogue(serial: UInt32, version: UInt64 = 1) throws -> RegionCatalogue {
        try RegionPublisher.catalogue(
            version: version, expires: Date().addingTimeInterval(30 * 86_400),
            eligibility: [RegionEligibility(hardwareRevisions: [3], serials: Cohort(serials: [serial]), regions: ["fcc", "etsi"])])
    }

    @Test("getRegionNames lists what this unit may choose from the catalogue; setRegion refuses the rest")
    func catalogueDrivesTheChoices() throws {
        let rig = try Rig()
        let info = try rig.session.connect()
        let catalogue = try Self.catalogue(serial: info.serialNumber)

        let choices = RegionChoices(catalogue: catalogue, reader: info)
        // Out of the box no region is set (GetVersion's flag is off): none is selected, though
        // the vendor's getRegionNames would select index 0 (FCC) on a revision that does not
        // require one.
        #expect(choices.names == ["FCC (US), IC (Canada)", "ETSI (EU)"] && choices.selected == nil)
        #expect(choices.entries.map(\.channelsKHz.count) == [50, 4])
        #expect(rig.session.regionNames(catalogue: catalogue).names == choices.names)

        let sent = rig.session.linkStatistics.packetsSent
        #expect(throws: ReaderError.regionNotApproved(port: "sim:0", region: "China")) {
            try rig.session.setRegion("china", catalogue: catalogue)
        }
        #expect(rig.session.linkStatistics.packetsSent == sent)
        let fresh = try rig.session.setRegion("etsi", catalogue: catalogue)
        #expect(fresh.region?.number == 2)
        #expect(rig.session.regionNames(catalogue: catalogue).selected == 1)
        // Another unit (another serial) gets none of the listed rules' regions.
        var other = info
        other.serialNumber &+= 1
        #expect(RegionChoices(catalogue: catalogue, reader: other).names.isEmpty)
    }

    @Test("a reader protocol older than 19 cannot set a region: refused before anything is sent")
    func oldFirmware() throws {
        var version = try VendorReaderVersion(decoding: hexBytes("061405000601080001fa550480004001112233445566778887d61200000800"))
        version.protocolVersion = 18
        let device = try ScriptedGrokker(packets: [.response(ResponsePacket(id: 0, data: try version.encode()))])
        let session = try ReaderSession(port: SimulatedCablePort(name: "old", sampleRate: 44_100, configuration: .clean, peer: device))
        try session.connect()
        let firmware = "\(version.firmwareMajor).\(version.firmwareMinor).\(version.firmwareBuild)"
        let sent = session.linkStatistics.packetsSent
        #expect(throws: ReaderError.firmwareDoesNotSupportSetRegion(port: "old", firmware: firmware)) { try session.setRegion("fcc") }
        #expect(session.linkStatistics.packetsSent == sent)
    }

    /// The catalogue's FCC entry made different from the built-in one: ten channels, a longer
    /// dwell, revision 1.
    static func changedFCC() throws -> (RegionCatalogue, RegionEntry) {
        var fcc = try #require(RegionCatalog.entry(number: 1))
        fcc.channelsKHz = Array(fcc.channelsKHz.sorted().prefix(10))
        fcc.revision = 1
        fcc.maxDwellMilliseconds = 300
        let regions = RegionCatalog.entries.map { $0.number == 1 ? fcc : $0 }
        let catalogue = try RegionPublisher.catalogue(version: 2, expires: Date().addingTimeInterval(86_400),
                                                      eligibility: RegionPublisher.everywhere(hardwareRevisions: [1, 2, 3, 4, 5, 6]),
                                                      regions: regions)
        return (catalogue, fcc)
    }

    @Test("when the catalogue's entry differs from the built-in one, SetRegion carries the catalogue's values, power capped")
    func catalogueValuesAreSent() throws {
        let (catalogue, fcc) = try Self.changedFCC()
        let setting = RegionCatalog.find("fcc")!.setting
        let sent = try ReaderSession.setRegionEntry(setting, catalogue: catalogue)
        #expect(sent == (try VendorRegionEntry(fcc)))
        #expect(sent.revision == 1 && sent.maxMillisecondsPerChannel == 300)
        #expect(Set(sent.channelsKHz) == Set(fcc.channelsKHz))
        #expect(sent.maxPowerDBm <= VendorRegionEntry.hardwareMaxPowerDBm)
        #expect(sent.maxPowerDBm <= fcc.maxConductedPowerDBm(antennaGainDBi: 0))
        // The same values as the built-in entry, or no catalogue: the built-in entry.
        let builtIn = try VendorRegionEntry(RegionCatalog.entry(number: 1)!)
        #expect(try ReaderSession.setRegionEntry(setting, catalogue: nil) == builtIn)
        let plain = try RegionPublisher.catalogue(version: 1, expires: Date().addingTimeInterval(86_400),
                                                  eligibility: RegionPublisher.everywhere(hardwareRevisions: [3]))
        #expect(try ReaderSession.setRegionEntry(setting, catalogue: plain) == builtIn)

        // End to end: the Grokker hops on the catalogue's ten channels only.
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("fcc", catalogue: catalogue)
        #expect(Set(rig.session.regionChannelsKHz) == Set(fcc.channelsKHz))
        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        configuration.detailedPerReadData = true
        configuration.detailedPerReadNumReads = 1
        // Every find, not only the first: the carrier stays 300 ms on a channel, so the first
        // finds all come from one.
        configuration.reportSubsequentFinds = true
        try rig.session.startInventory(configuration)
        try rig.session.collect(forAtMost: 2)
        try rig.session.stopInventory()
        let heard = Set(rig.session.takeReports().map { Int($0.frequencyKHz) })
        #expect(heard.count > 1, "\(heard)")
        #expect(heard.isSubset(of: Set(fcc.channelsKHz)), "\(heard)")
    }

    @Test("a catalogue entry with channels outside the region's band cannot even be published")
    func otherBandRefused() throws {
        var fcc = try #require(RegionCatalog.entry(number: 1))
        fcc.channelsKHz = try #require(RegionCatalog.entry(number: 2)).channelsKHz
        fcc.revision = 1
        let regions = RegionCatalog.entries.map { $0.number == 1 ? fcc : $0 }
        #expect(throws: FirmwareError.self) {
            try RegionPublisher.catalogue(version: 2, expires: Date().addingTimeInterval(86_400),
                                          eligibility: RegionPublisher.everywhere(hardwareRevisions: [3]), regions: regions)
        }
    }
}
