/// One of the regions of the world a Grokker can be set to, as the vendor numbered them.
///
/// The names, spelled exactly as the vendor spells them, and their order are the vendor
/// library's built-in region table (22 entries, index 0-21; docs/regions.md). Our `number`
/// is the vendor index + 1 (1-22), everywhere: the wire carries ``vendorIndex``. The `code`
/// is ours: stable, lower-case, for `--json`, file names and message-catalog keys
/// (`region.<code>`), since the names are English prose.
public struct VendorRegion: Sendable, Hashable, Codable {
    /// 1...22, the position in the vendor's list (vendor index + 1).
    public let number: UInt16
    /// The vendor's name, e.g. "FCC (US), IC (Canada)".
    public let name: String
    /// Stable identifier, e.g. `fcc`.
    public let code: String

    /// The setting a Grokker stores and reports for this region.
    public var setting: RegionSetting { RegionSetting(name: name, number: number) }

    /// The vendor's index, 0...21: byte 0 of its region entry and GetVersion byte 30.
    public var vendorIndex: UInt8 { UInt8(number - 1) }
}

/// Which region values a host sends with SetRegion: ours (``RegionCatalog``, by the rules
/// docs/regions.md cites; the default) or the vendor's own table, byte for byte
/// (``VendorRegionTable``, the values the real firmware was tested with).
public enum RegionTableChoice: String, Sendable, Hashable, Codable, CaseIterable {
    /// ``RegionCatalog``'s entries (with a signed catalogue's values where it has others).
    case ours
    /// ``VendorRegionTable``'s entries, as the vendor's library sends them.
    case vendor
}

/// The vendor's 22 regions, shared by host and Grokker: the host offers them by name, the
/// Grokker checks a requested region against them before it stores it. (Which of them a
/// particular unit may choose, and each region's channels and power limit, come with the
/// signed regional catalogue.)
public enum RegionCatalog {
    public static let all: [VendorRegion] = [
        ("FCC (US), IC (Canada)", "fcc"), ("ETSI (EU)", "etsi"), ("Taiwan (indoor)", "taiwan_indoor"),
        ("Taiwan (outdoor)", "taiwan_outdoor"), ("China", "china"), ("Japan (unlicensed)", "japan_unlicensed"),
        ("Japan (licensed)", "japan_licensed"), ("Australia", "australia"), ("Brazil", "brazil"),
        ("Hong Kong", "hong_kong"), ("Indonesia", "indonesia"), ("Israel", "israel"), ("South Korea", "south_korea"),
        ("Latvia", "latvia"), ("Malaysia", "malaysia"), ("New Zealand", "new_zealand"), ("Peru", "peru"),
        ("Russian Federation", "russia"), ("South Africa", "south_africa"), ("ETSI high", "etsi_high"),
        ("India", "india"), ("Singapore", "singapore"),
    ].enumerated().map { VendorRegion(number: UInt16($0.offset + 1), name: $0.element.0, code: $0.element.1) }

    /// Names this build once used for a region, still accepted by ``find(_:)`` (profiles and
    /// ledgers written before the names followed the vendor's spelling).
    public static let formerNames: [String: String] = ["fcc (us) / ic (canada)": "fcc"]

    /// The region with this vendor name (or a former name), stable code or number (as text),
    /// ignoring case.
    public static func find(_ text: String) -> VendorRegion? {
        let wanted = text.lowercased()
        let code = formerNames[wanted] ?? wanted
        return all.first { $0.name.lowercased() == wanted || $0.code == code || String($0.number) == wanted }
    }

    /// The region with this vendor index (0...21).
    public static func named(vendorIndex: UInt8) -> VendorRegion? { named(number: UInt16(vendorIndex) + 1) }

    /// The vendor region with this number (1...22).
    public static func named(number: UInt16) -> VendorRegion? {
        (1...all.count).contains(Int(number)) ? all[Int(number) - 1] : nil
    }

    /// The region a stored setting names, if the setting is one of the catalogue's (a former
    /// name of the same number counts).
    public static func find(_ setting: RegionSetting) -> VendorRegion? {
        all.first {
            $0.number == setting.number && ($0.name == setting.name || formerNames[setting.name.lowercased()] == $0.code)
        }
    }

    // MARK: Regulatory values

    /// The regulatory values of the region a setting names (channels, dwell, round, LBT,
    /// power), as a Grokker's firmware applies them; `nil` for a setting that is not one
    /// of the 22. The antenna-tuning and inventory code read the channel plan from here:
    /// `RegionCatalog.entry(for: setting)?.channelsKHz`.
    public static func entry(for setting: RegionSetting) -> RegionEntry? {
        find(setting).map { entries[Int($0.number) - 1] }
    }

    /// The regulatory values of region `number` (1...22): its first allocation (``entries``).
    public static func entry(number: UInt16) -> RegionEntry? {
        (1...entries.count).contains(Int(number)) ? entries[Int(number) - 1] : nil
    }

    /// Every allocation of region `number`, one per hardware band that can serve it, the
    /// first one (``entries``) first: Russia has one for the 860 MHz hardware (866-868 MHz)
    /// and one for the 900 MHz hardware (916-921 MHz); every other region has one. Empty for
    /// a number outside 1...22.
    public static func allocations(number: UInt16) -> [RegionEntry] {
        guard let first = entry(number: number) else { return [] }
        return [first] + otherBandEntries.filter { $0.number == number }
    }

    /// The allocation of region `number` that a unit of hardware `band` can tune; `nil` when
    /// the region has none for that band.
    public static func entry(number: UInt16, band: VendorFrequencyBand) -> RegionEntry? {
        allocations(number: number).first { $0.hardwareBand == band }
    }

    /// The allocations beyond a region's first, each for the other hardware band
    /// (docs/regions.md, "Russia").
    public static let otherBandEntries: [RegionEntry] = {
        let russia = all[17]
        precondition(russia.code == "russia")
        // 916-921 MHz: SCRF (GKRCh) decision 11-11-01-3 of 10 March 2011 allocated the band
        // to RFID; the vendor's entry for the 900 MHz hardware: its ten channels, 400 ms, its
        // 27 dBm (the 2011 decision's own power limit is not confirmed here, so the vendor's
        // lower value is kept, as EIRP: 27 dBm conducted with a 0 dBi antenna).
        return [RegionEntry(
            number: russia.number, name: russia.name, code: russia.code, revision: 1,
            bands: [FrequencyBand(lowKHz: 916_000, highKHz: 921_000)],
            channelsKHz: (0..<10).map { 916_250 + 500 * $0 }, maxDwellMilliseconds: 400, minRoundMilliseconds: 10,
            listenBeforeTalk: vendorListenBeforeTalk, maxPowerDBm: 27, powerReference: .eirp,
            source: "SCRF (GKRCh) decision 11-11-01-3 of 10 March 2011, RFID at 916-921 MHz (the vendor's channels and power)")]
    }()

    /// Listening as the vendor's table offers it where no rule asks for it: off by default,
    /// a configuration may switch it on (vendor `setListenBeforeTalk`), 5 ms at -80 dBm.
    /// Where the rule is frequency hopping, listening and skipping a busy channel is allowed
    /// (47 CFR 15.247(h) expressly permits a hopping system that recognises other users and
    /// avoids occupied channels; no rule we cite forbids it).
    public static let vendorListenBeforeTalk = ListenBeforeTalk(
        enabledByDefault: false, overrideAllowed: true, listenMilliseconds: 5, thresholdDBm: -80)

    /// The lowest application firmware that implements setRegion in the emulated Grokker's
    /// own command set. (The vendor's rule is by reader protocol, 19 or later:
    /// ``RegionSettingRules/firmwareAllowsSetRegion``.) Older firmware answers
    /// (vendor "firmware does not support set region").
    public static let minimumFirmwareForSetRegion = FirmwareVersion(major: 1, minor: 5, build: 0)

    /// Every region's regulatory values, in the vendor's order (index = number - 1). The
    /// values and their sources are in docs/regions.md; each entry passes
    /// ``RegionEntry/validate()`` (tested).
    public static let entries: [RegionEntry] = {
        func hop(_ firstKHz: Int, step: Int, count: Int) -> [Int] { (0..<count).map { firstKHz + step * $0 } }
        func band(_ low: Int, _ high: Int) -> FrequencyBand { FrequencyBand(lowKHz: low, highKHz: high) }
        // EN 302 208's four 865-868 MHz channels (2 W ERP).
        let etsiChannels = [865_700, 866_300, 866_900, 867_500]
        // EN 302 208 V1.1 required LBT (5 ms at -96 dBm for 2 W ERP); later versions drop it on
        // the four channels. Kept available as an option, off by default.
        let etsiLBT = ListenBeforeTalk(enabledByDefault: false, overrideAllowed: true, listenMilliseconds: 5, thresholdDBm: -96)
        // ARIB STD-T106/T107 carrier sense: 5 ms at -74 dBm.
        // The licence-free class's channels: the three 1.2 MHz-spaced ones below 920 MHz, then
        // the 200 kHz unit channels 920.4-923.4 MHz (the vendor's 19, ascending).
        // China's 2 W channels are centred on 920.125 + 0.25 N MHz (N = 2...17), 25 kHz off the
        // 50 kHz grid a Grokker tunes in: each is moved 25 kHz towards the middle of 920.5-924.5 MHz,
        // so the 250 kHz channel still lies inside it.
        let chinaChannels = hop(920_625, step: 250, count: 16).map { $0 < 922_500 ? $0 + 25 : $0 - 25 }
        let japanLowPower = [916_800, 918_000, 919_200] + hop(920_400, step: 200, count: 16)
        let hopping = vendorListenBeforeTalk
        let aribLBT = { (on: Bool) in
            ListenBeforeTalk(enabledByDefault: on, overrideAllowed: !on, listenMilliseconds: 5, thresholdDBm: -74)
        }
        let table: [(String, [FrequencyBand], [Int], Int, ListenBeforeTalk, Double, PowerReference, String)] = [
            ("fcc", [band(902_000, 928_000)], hop(902_750, step: 500, count: 50), 400, hopping, 36, .eirp,
             "47 CFR 15.247(a)(1)(i), (b)(2), (b)(4); ISED RSS-247 5.1"),
            ("etsi", [band(865_000, 868_000)], etsiChannels, 4000, etsiLBT, 33, .erp,
             "ETSI EN 302 208 V3.1.1; CEPT ERC/REC 70-03 annex 11"),
            ("taiwan_indoor", [band(922_000, 928_000)], hop(922_250, step: 500, count: 12), 400, hopping, 30, .erp,
             "NCC LP0002 (Taiwan), RFID 922-928 MHz, indoor"),
            ("taiwan_outdoor", [band(922_000, 928_000)], hop(922_250, step: 500, count: 12), 400, hopping, 27, .erp,
             "NCC LP0002 (Taiwan), RFID 922-928 MHz, outdoor"),
            ("china", [band(920_500, 924_500)], chinaChannels, 2000, hopping, 33, .erp,
             "MIIT [2007] No. 205, 920-925 MHz RFID"),
            ("japan_unlicensed", [band(916_700, 923_500)], japanLowPower, 4000,
             aribLBT(true), 13, .eirp, "ARIB STD-T107, specified low-power (licence-free) passive tag class, 916.7-923.5 MHz"),
            ("japan_licensed", [band(916_700, 920_900)], [916_800, 918_000, 919_200, 920_400], 4000,
             aribLBT(false), 36, .eirp, "ARIB STD-T106 (1 W premises / land mobile station, 6 dBi)"),
            ("australia", [band(920_000, 926_000)], hop(920_250, step: 500, count: 12), 400, hopping, 36, .eirp,
             "ACMA Radiocommunications (LIPD) Class Licence 2015, 920-926 MHz"),
            ("brazil", [band(902_000, 907_500), band(915_000, 928_000)],
             hop(902_750, step: 500, count: 10) + hop(915_250, step: 500, count: 26), 400, hopping, 36, .eirp,
             "Anatel Resolution 680/2017 (restricted radiation), 902-907.5 and 915-928 MHz"),
            ("hong_kong", [band(920_000, 925_000)], hop(920_250, step: 500, count: 10), 400, hopping, 36, .eirp,
             "OFCA, RFID at 920-925 MHz"),
            ("indonesia", [band(920_000, 923_000)], hop(920_250, step: 500, count: 6), 400, hopping, 26, .eirp,
             "Kominfo regulation on short-range devices (Permenkominfo), RFID at 920-923 MHz, 26 dBm EIRP"),
            ("israel", [band(915_000, 917_000)], [915_500, 916_000, 916_500], 400, hopping, 33, .erp,
             "Israel Ministry of Communications, 915-917 MHz"),
            ("south_korea", [band(917_000, 920_800)], hop(917_300, step: 600, count: 6), 400, hopping, 36, .eirp,
             "MSIT technical standard for RFID, 917-920.8 MHz"),
            ("latvia", [band(865_000, 868_000)], etsiChannels, 4000, etsiLBT, 33, .erp,
             "ETSI EN 302 208 as implemented by Latvia (CEPT ERC/REC 70-03)"),
            ("malaysia", [band(919_000, 923_000)], hop(919_250, step: 500, count: 8), 400, hopping, 33, .erp,
             "MCMC class assignment, RFID at 919-923 MHz"),
            ("new_zealand", [band(920_000, 928_000)], hop(920_250, step: 500, count: 16), 400, hopping, 36, .eirp,
             "RSM General User Radio Licence for Short Range Devices, 920-928 MHz"),
            ("peru", [band(915_000, 928_000)], hop(915_250, step: 500, count: 26), 400, hopping, 36, .eirp,
             "MTC Peru, 915-928 MHz"),
            ("russia", [band(866_000, 868_000)], [866_300, 866_900, 867_500], 4000, etsiLBT, 33, .erp,
             "SCRF (GKRCh) decision 07-20-03-001 of 2007 as amended by 08-24-01-001 (2008), RFID at 866-868 MHz"),
            ("south_africa", [band(915_400, 919_000)], hop(915_700, step: 600, count: 6), 400, hopping, 36, .eirp,
             "ICASA Radio Frequency Spectrum Regulations, 915.4-919 MHz"),
            ("etsi_high", [band(915_000, 921_000)], [916_300, 917_500, 918_700], 4000, etsiLBT, 36, .erp,
             "ETSI EN 302 208 V3.1.1; Commission Implementing Decision (EU) 2018/1538"),
            ("india", [band(865_000, 868_000)], etsiChannels, 4000, hopping, 36, .erp,
             "India, Use of Low Power Equipment in the Frequency Band 865-868 MHz (Exemption from Licensing Requirement) Rules, 2021"),
            ("singapore", [band(920_000, 925_000)], hop(920_250, step: 500, count: 10), 400, hopping, 33, .erp,
             "IMDA TS SRD, RFID at 920-925 MHz"),
        ]
        // Entries whose values changed since revision 1 (docs/regions.md, the values table and
        // "Differences from the vendor's table").
        let revised: [String: Int] = ["china": 2, "japan_unlicensed": 2, "indonesia": 2, "india": 2]
        return zip(all, table).map { vendor, row in
            precondition(vendor.code == row.0, "region table out of order at \(vendor.code)")
            return RegionEntry(
                number: vendor.number, name: vendor.name, code: vendor.code, revision: revised[vendor.code] ?? 1, bands: row.1, channelsKHz: row.2,
                maxDwellMilliseconds: row.3, minRoundMilliseconds: 10, listenBeforeTalk: row.4, maxPowerDBm: row.5,
                powerReference: row.6, source: row.7)
        }
    }()
}
