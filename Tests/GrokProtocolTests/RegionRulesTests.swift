import GrokProtocol
import Testing

@Suite("Region rules")
struct RegionRulesTests {
    @Test("all 22 vendor regions have regulatory values that pass validation, in the vendor's order")
    func everyRegionIsValid() throws {
        #expect(RegionCatalog.entries.count == 22)
        for (index, entry) in RegionCatalog.entries.enumerated() {
            #expect(entry.number == UInt16(index + 1))
            #expect(entry.setting == RegionCatalog.all[index].setting)
            #expect(RegionCatalog.entry(for: entry.setting) == entry)
            #expect(throws: Never.self) { try entry.validate() }
            #expect(Set(entry.channelsKHz).count == entry.channelsKHz.count, "\(entry.code)")
        }
        #expect(RegionCatalog.entry(for: RegionSetting(name: "ETSI (EU)", number: 1)) == nil)
        #expect(RegionCatalog.entry(number: 0) == nil && RegionCatalog.entry(number: 23) == nil)
    }

    @Test("FCC: 50 channels 902.75-927.25 MHz every 500 kHz, 400 ms, 4 W EIRP; ETSI: four channels at 2 W ERP")
    func theBigTwo() throws {
        let fcc = try #require(RegionCatalog.entry(number: 1))
        #expect(fcc.channelsKHz == (0..<50).map { 902_750 + 500 * $0 })
        #expect(fcc.maxDwellMilliseconds == 400)
        #expect(fcc.maxEIRPDBm == 36 && fcc.powerReference == .eirp)
        // Off unless a configuration switches it on (47 CFR 15.247(h) permits avoiding occupied channels).
        #expect(!fcc.listenBeforeTalk.isOn(requested: nil) && fcc.listenBeforeTalk.isOn(requested: true))
        let etsi = try #require(RegionCatalog.entry(number: 2))
        #expect(etsi.channelsKHz == [865_700, 866_300, 866_900, 867_500])
        #expect(etsi.maxPowerDBm == 33 && etsi.powerReference == .erp)
        #expect(abs(etsi.maxEIRPDBm - 35.15) < 1e-9)
        let high = try #require(RegionCatalog.find("etsi_high").flatMap { RegionCatalog.entry(for: $0.setting) })
        #expect(high.channelsKHz == [916_300, 917_500, 918_700] && high.maxPowerDBm == 36)
        // Japan (unlicensed) must listen; a configuration cannot switch it off.
        let japan = try #require(RegionCatalog.entry(number: 6))
        #expect(japan.listenBeforeTalk.isOn(requested: false) && japan.listenBeforeTalk.isOn(requested: nil))
        // Japan (licensed): off by default, may be switched on.
        let licensed = try #require(RegionCatalog.entry(number: 7))
        #expect(!licensed.listenBeforeTalk.isOn(requested: nil) && licensed.listenBeforeTalk.isOn(requested: true))
    }

    static func broken(_ change: (inout RegionEntry) -> Void) -> RegionEntry {
        var entry = RegionCatalog.entries[1]
        change(&entry)
        return entry
    }

    @Test("a bad entry is refused with the region, the field, what was expected and what was found")
    func badEntries() {
        let cases: [(RegionEntry, String, String)] = [
            (Self.broken { $0.channelsKHz[2] = 869_000 }, "channels_khz[2]", "869 MHz"),
            (Self.broken { $0.channelsKHz = [866_300, 865_700] }, "channels_khz[1]", "865.7 MHz"),
            (Self.broken { $0.channelsKHz = [] }, "channels_khz", "none"),
            (Self.broken { $0.channelsKHz = [865_725, 866_300] }, "channels_khz[0]", "865.725 MHz"),
            (Self.broken { $0.channelsKHz = (0..<51).map { 865_000 + 50 * $0 } }, "channels_khz", "51"),
            (Self.broken { $0.maxPowerDBm = 37 }, "max_power_dbm", "37.0 dBm ERP"),
            (Self.broken { $0.maxPowerDBm = 0 }, "max_power_dbm", "0.0 dBm ERP"),
            (Self.broken { $0.maxDwellMilliseconds = 0 }, "max_dwell_ms", "0"),
            (Self.broken { $0.minRoundMilliseconds = 5000 }, "min_round_ms", "5000"),
            (Self.broken { $0.listenBeforeTalk.listenMilliseconds = 0 }, "listen_before_talk.listen_ms", "0"),
            (Self.broken { $0.listenBeforeTalk.thresholdDBm = 5 }, "listen_before_talk.threshold_dbm", "5"),
            (Self.broken { $0.listenBeforeTalk = ListenBeforeTalk(enabledByDefault: false, overrideAllowed: false, listenMilliseconds: 5, thresholdDBm: -96) },
             "listen_before_talk.listen_ms", "5"),
            (Self.broken { $0.bands = [FrequencyBand(lowKHz: 868_000, highKHz: 865_000)] }, "bands[0]", "868-865 MHz"),
            (Self.broken { $0.name = "Europe" }, "name", "'Europe'"),
            (Self.broken { $0.number = 40 }, "number", "40"),
        ]
        for (entry, field, found) in cases {
            do {
                try entry.validate()
                Issue.record("accepted a bad \(field)")
            } catch {
                #expect(error.field == field)
                #expect(error.found == found, "\(field): \(error.found)")
                #expect(!error.expected.isEmpty)
                #expect(error.region == entry.name || error.region == "#\(entry.number)")
                #expect(error.description.contains(field) && error.code == "region_entry_invalid")
            }
        }
    }

    @Test("a catalogue entry may not be looser than the firmware's: more power, longer dwell, a channel off the band")
    func withinTheFirmwaresLimits() throws {
        let limit = RegionCatalog.entries[1]
        var tighter = limit
        tighter.maxPowerDBm = 30
        tighter.channelsKHz = [865_700]
        try tighter.validate(within: limit)
        var louder = limit
        louder.powerReference = .eirp
        louder.maxPowerDBm = 36
        #expect(throws: RegionEntryError.self) { try louder.validate(within: limit) }
        var longer = limit
        longer.maxDwellMilliseconds = 5000
        #expect(throws: RegionEntryError.self) { try longer.validate(within: limit) }
        var offBand = limit
        offBand.bands = [FrequencyBand(lowKHz: 865_000, highKHz: 869_000)]
        offBand.channelsKHz = [865_700, 868_500]
        #expect(throws: RegionEntryError.self) { try offBand.validate(within: limit) }
        // Japan (unlicensed) must keep listening.
        var deaf = RegionCatalog.entries[5]
        deaf.listenBeforeTalk.overrideAllowed = true
        #expect(throws: RegionEntryError.self) { try deaf.validate(within: RegionCatalog.entries[5]) }
    }

    @Test("setting a region needs firmware 1.5.0 or later")
    func setRegionNeedsFirmware150() {
        #expect(RegionCatalog.minimumFirmwareForSetRegion == FirmwareVersion(major: 1, minor: 5, build: 0))
    }
}

@Suite("Set-region rules (as the vendor host decides)")
struct RegionSettingRulesTests {
    typealias Case = (protocolVersion: Int, hardwareRevision: UInt8, softwareType: UInt8, flags: UInt8, enforce: Bool,
                      allows: Bool, requires: Bool, can: Bool, must: Bool)

    /// One row per branch of libugrokitapi's CommandReaderFirmwareAllowsSetRegion (protocol >= 19),
    /// CommandReaderHardwareRequiresSetRegion (revision > 5), CommandUserCanSetRegion (software
    /// type 0 and allowed) and CommandUserMustSetRegion (can, requires, flags bit 7 clear, enforced).
    static let cases: [Case] = [
        (20, 6, 0, 0x00, true, true, true, true, true),      // a new unit, region not yet set
        (19, 6, 0, 0x00, true, true, true, true, true),      // protocol 19 is the first that may
        (18, 6, 0, 0x00, true, false, true, false, false),   // protocol 18 may not: cannot, so need not
        (20, 5, 0, 0x00, true, true, false, true, false),    // revision 5 does not require a region
        (20, 6, 1, 0x00, true, true, true, false, false),    // in its loader: cannot set one
        (20, 6, 2, 0x00, true, true, true, false, false),    // any software type but 0
        (20, 6, 0, 0x80, true, true, true, true, false),     // the user has set the region (bit 7)
        (20, 6, 0, 0x7F, true, true, true, true, true),      // the other flag bits do not count
        (20, 6, 0, 0x00, false, true, true, true, false),    // the host does not enforce regions
        (20, 255, 0, 0x00, true, true, true, true, true),
        (0, 0, 0, 0x00, true, false, false, false, false),
    ]

    @Test("firmware allows, hardware requires, user can, user must: each branch of the vendor's rules", arguments: cases.indices)
    func rules(index: Int) {
        let c = Self.cases[index]
        let rules = RegionSettingRules(readerProtocolVersion: c.protocolVersion, hardwareRevision: c.hardwareRevision,
                                       softwareType: c.softwareType, deviceFlags: c.flags, enforceRegion: c.enforce)
        #expect(rules.firmwareAllowsSetRegion == c.allows)
        #expect(rules.hardwareRequiresSetRegion == c.requires)
        #expect(rules.userCanSetRegion == c.can)
        #expect(rules.userMustSetRegion == c.must)
        #expect(rules.userHasSetRegion == (c.flags & 0x80 != 0))
    }

    @Test("enforcement is on unless the host turns it off, as in the vendor library (its flag starts at 1)")
    func enforcementDefaultsOn() {
        #expect(RegionSettingRules(readerProtocolVersion: 20, hardwareRevision: 6, softwareType: 0, deviceFlags: 0).userMustSetRegion)
    }
}
