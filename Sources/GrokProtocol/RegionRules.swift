/// What a radiated-power limit is measured against: a half-wave dipole (ERP) or an
/// isotropic antenna (EIRP). EIRP = ERP + 2.15 dB.
public enum PowerReference: String, Sendable, Hashable, Codable, CaseIterable {
    /// Effective radiated power (ETSI, CEPT and most of Asia write limits this way).
    case erp
    /// Equivalent isotropically radiated power (FCC, ACMA, Anatel write limits this way).
    case eirp

    /// dB to add to a value in this reference to get EIRP.
    public var toEIRPDB: Double { self == .erp ? 2.15 : 0 }
}

/// A frequency range a region permits, inclusive, in kHz.
public struct FrequencyBand: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The lower edge, kHz.
    public var lowKHz: Int
    /// The upper edge, kHz.
    public var highKHz: Int

    /// Creates a band.
    public init(lowKHz: Int, highKHz: Int) {
        self.lowKHz = lowKHz
        self.highKHz = highKHz
    }

    /// Whether `kHz` lies inside the band (edges included).
    public func contains(_ kHz: Int) -> Bool { lowKHz <= kHz && kHz <= highKHz }

    public var description: String { "\(RegionEntry.mhz(lowKHz))-\(RegionEntry.mhz(highKHz)) MHz" }

    enum CodingKeys: String, CodingKey {
        case lowKHz = "low_khz"
        case highKHz = "high_khz"
    }
}

/// A region's listen-before-talk rule (vendor: LBT default, override allowed, listen time
/// ms, threshold).
public struct ListenBeforeTalk: Sendable, Hashable, Codable {
    /// The reader listens before it transmits unless told otherwise.
    public var enabledByDefault: Bool
    /// A configuration may turn listening on or off (vendor `setListenBeforeTalk`).
    public var overrideAllowed: Bool
    /// How long the reader listens on a channel before it transmits, ms (0 when the region
    /// has no listen-before-talk at all).
    public var listenMilliseconds: Int
    /// A channel is busy when the power heard on it is at or above this, dBm.
    public var thresholdDBm: Int

    /// Creates a rule.
    public init(enabledByDefault: Bool, overrideAllowed: Bool, listenMilliseconds: Int, thresholdDBm: Int) {
        self.enabledByDefault = enabledByDefault
        self.overrideAllowed = overrideAllowed
        self.listenMilliseconds = listenMilliseconds
        self.thresholdDBm = thresholdDBm
    }

    /// No listen-before-talk, and none may be asked for.
    public static let none = ListenBeforeTalk(enabledByDefault: false, overrideAllowed: false, listenMilliseconds: 0, thresholdDBm: 0)

    /// Whether the reader listens, given what a configuration asked (`nil`: nothing asked).
    /// A request the region does not allow to override is ignored.
    public func isOn(requested: Bool?) -> Bool {
        guard let requested, overrideAllowed else { return enabledByDefault }
        return requested
    }

    enum CodingKeys: String, CodingKey {
        case enabledByDefault = "default"
        case overrideAllowed = "override_allowed"
        case listenMilliseconds = "listen_ms"
        case thresholdDBm = "threshold_dbm"
    }
}

/// One region's regulatory values, as a Grokker's firmware applies them (vendor region
/// entry: name, region number, revision, band, channel frequencies, max time per
/// frequency, min ms per inventory round, listen-before-talk, max power). The values and
/// their sources are in docs/regions.md.
public struct RegionEntry: Sendable, Hashable, Codable {
    /// 1...22, the vendor's number.
    public var number: UInt16
    /// The vendor's name.
    public var name: String
    /// Our stable code (``VendorRegion/code``).
    public var code: String
    /// The revision of this entry: 0 is the vendor's built-in entry, ours start at 1 and are
    /// raised whenever a value changes (it travels as byte 1 of the vendor entry).
    public var revision: Int
    /// The frequency ranges the regulation permits; every channel lies in one of them.
    public var bands: [FrequencyBand]
    /// Hop channel centre frequencies, kHz, ascending.
    public var channelsKHz: [Int]
    /// The longest the reader stays on one frequency before it hops, ms.
    public var maxDwellMilliseconds: Int
    /// The shortest period of an inventory round, ms: a shorter round is padded.
    public var minRoundMilliseconds: Int
    /// Listen-before-talk.
    public var listenBeforeTalk: ListenBeforeTalk
    /// The radiated-power limit, dBm, in ``powerReference``.
    public var maxPowerDBm: Double
    /// Whether ``maxPowerDBm`` is ERP or EIRP, as the regulation writes it.
    public var powerReference: PowerReference
    /// The regulation the values come from (short citation; docs/regions.md has more).
    public var source: String

    /// Creates an entry (check it with ``validate()``).
    public init(number: UInt16, name: String, code: String, revision: Int, bands: [FrequencyBand], channelsKHz: [Int],
                maxDwellMilliseconds: Int, minRoundMilliseconds: Int, listenBeforeTalk: ListenBeforeTalk,
                maxPowerDBm: Double, powerReference: PowerReference, source: String) {
        self.number = number
        self.name = name
        self.code = code
        self.revision = revision
        self.bands = bands
        self.channelsKHz = channelsKHz
        self.maxDwellMilliseconds = maxDwellMilliseconds
        self.minRoundMilliseconds = minRoundMilliseconds
        self.listenBeforeTalk = listenBeforeTalk
        self.maxPowerDBm = maxPowerDBm
        self.powerReference = powerReference
        self.source = source
    }

    /// The limit as EIRP, dBm.
    public var maxEIRPDBm: Double { maxPowerDBm + powerReference.toEIRPDB }

    /// The most power a reader may feed an antenna of `antennaGainDBi` in this region, dBm.
    public func maxConductedPowerDBm(antennaGainDBi: Double) -> Double { maxEIRPDBm - antennaGainDBi }

    /// The hop channels in MHz.
    public var channelsMHz: [Double] { channelsKHz.map { Double($0) / 1000 } }

    /// The setting a Grokker stores for this region.
    public var setting: RegionSetting { RegionSetting(name: name, number: number) }

    /// The strongest limit any UHF RFID regulation grants: 4 W ERP (ETSI EN 302 208's upper
    /// band), 38.15 dBm EIRP. An entry claiming more is wrong.
    public static let highestEIRPDBm = 36.0 + 2.15
    /// UHF RFID lives in 840-960 MHz.
    public static let uhfRange = FrequencyBand(lowKHz: 840_000, highKHz: 960_000)

    /// Checks the rules JSON cannot say: the vendor's name and code for the number, bands
    /// inside 840-960 MHz, 1 to 50 channels, each a multiple of 50 kHz (what SetRegion can
    /// carry), unique, ascending and each inside a band, dwell > 0,
    /// 0 ≤ min round ≤ dwell, listen-before-talk fields consistent, power positive and
    /// within ``highestEIRPDBm``.
    /// - Throws: ``RegionEntryError`` naming the region, the field, what was expected and
    ///   what was found.
    public func validate() throws(RegionEntryError) {
        func bad(_ field: String, _ expected: String, _ found: String) -> RegionEntryError {
            RegionEntryError(region: name.isEmpty ? "#\(number)" : name, field: field, expected: expected, found: found)
        }
        guard let vendor = RegionCatalog.named(number: number) else {
            throw bad("number", "1 to \(RegionCatalog.all.count)", String(number))
        }
        guard name == vendor.name else { throw bad("name", "'\(vendor.name)' (region \(number))", "'\(name)'") }
        guard code == vendor.code else { throw bad("code", "'\(vendor.code)'", "'\(code)'") }
        guard revision >= 0 else { throw bad("revision", "0 (the vendor's own entry) or more", String(revision)) }
        guard !bands.isEmpty else { throw bad("bands", "at least one band", "none") }
        for (i, band) in bands.enumerated() {
            guard band.lowKHz < band.highKHz, Self.uhfRange.contains(band.lowKHz), Self.uhfRange.contains(band.highKHz) else {
                throw bad("bands[\(i)]", "a range inside \(Self.uhfRange) with low < high", band.description)
            }
        }
        guard !channelsKHz.isEmpty else { throw bad("channels_khz", "at least one channel", "none") }
        guard channelsKHz.count <= VendorRegionEntry.maxChannels else {
            throw bad("channels_khz", "at most \(VendorRegionEntry.maxChannels) channels (what SetRegion carries)", String(channelsKHz.count))
        }
        for (i, channel) in channelsKHz.enumerated() {
            guard bands.contains(where: { $0.contains(channel) }) else {
                throw bad("channels_khz[\(i)]", "a frequency inside " + bands.map(\.description).joined(separator: " or "),
                          Self.mhz(channel) + " MHz")
            }
            guard channel % VendorRegionEntry.channelUnitKHz == 0 else {
                throw bad("channels_khz[\(i)]", "a multiple of \(VendorRegionEntry.channelUnitKHz) kHz (the Grokker's tuning step)",
                          Self.mhz(channel) + " MHz")
            }
            if i > 0, channel <= channelsKHz[i - 1] {
                throw bad("channels_khz[\(i)]", "above the previous channel (\(Self.mhz(channelsKHz[i - 1])) MHz)", Self.mhz(channel) + " MHz")
            }
        }
        guard maxDwellMilliseconds > 0 else { throw bad("max_dwell_ms", "more than 0", String(maxDwellMilliseconds)) }
        guard minRoundMilliseconds >= 0, minRoundMilliseconds <= maxDwellMilliseconds else {
            throw bad("min_round_ms", "0 to the dwell time (\(maxDwellMilliseconds))", String(minRoundMilliseconds))
        }
        let lbt = listenBeforeTalk
        if lbt.enabledByDefault || lbt.overrideAllowed {
            guard lbt.listenMilliseconds > 0, lbt.listenMilliseconds < maxDwellMilliseconds else {
                throw bad("listen_before_talk.listen_ms", "1 to \(maxDwellMilliseconds - 1) (listening can be switched on)",
                          String(lbt.listenMilliseconds))
            }
            guard (-110 ... -30).contains(lbt.thresholdDBm) else {
                throw bad("listen_before_talk.threshold_dbm", "-110 to -30", String(lbt.thresholdDBm))
            }
        } else {
            guard lbt.listenMilliseconds == 0 else {
                throw bad("listen_before_talk.listen_ms", "0 (listening is off and may not be switched on)", String(lbt.listenMilliseconds))
            }
        }
        guard maxPowerDBm.isFinite, maxPowerDBm > 0, maxEIRPDBm <= Self.highestEIRPDBm + 1e-9 else {
            throw bad("max_power_dbm", "more than 0 and at most \(Self.highestEIRPDBm) dBm EIRP",
                      "\(maxPowerDBm) dBm \(powerReference.rawValue.uppercased())")
        }
    }

    /// Checks that this entry is no looser than `limit`, the firmware's own entry for the
    /// region: every channel inside its bands, dwell, listen-before-talk and power no
    /// more permissive.
    public func validate(within limit: RegionEntry) throws(RegionEntryError) {
        try validate()
        func bad(_ field: String, _ expected: String, _ found: String) -> RegionEntryError {
            RegionEntryError(region: name, field: field, expected: expected, found: found)
        }
        for (i, channel) in channelsKHz.enumerated() where !limit.bands.contains(where: { $0.contains(channel) }) {
            throw bad("channels_khz[\(i)]", "inside " + limit.bands.map(\.description).joined(separator: " or "), Self.mhz(channel) + " MHz")
        }
        guard maxDwellMilliseconds <= limit.maxDwellMilliseconds else {
            throw bad("max_dwell_ms", "at most \(limit.maxDwellMilliseconds)", String(maxDwellMilliseconds))
        }
        guard maxEIRPDBm <= limit.maxEIRPDBm + 1e-9 else {
            throw bad("max_power_dbm", "at most \(limit.maxPowerDBm) dBm \(limit.powerReference.rawValue.uppercased())",
                      "\(maxPowerDBm) dBm \(powerReference.rawValue.uppercased())")
        }
        if limit.listenBeforeTalk.enabledByDefault && !limit.listenBeforeTalk.overrideAllowed {
            guard listenBeforeTalk.enabledByDefault, !listenBeforeTalk.overrideAllowed,
                listenBeforeTalk.listenMilliseconds >= limit.listenBeforeTalk.listenMilliseconds
            else {
                throw bad("listen_before_talk", "always on, listening at least \(limit.listenBeforeTalk.listenMilliseconds) ms",
                          "default \(listenBeforeTalk.enabledByDefault), override \(listenBeforeTalk.overrideAllowed), \(listenBeforeTalk.listenMilliseconds) ms")
            }
        }
    }

    /// `low-high MHz` of a channel list (`866.3-867.5 MHz`), or `none` when empty.
    public static func mhzRange(_ channelsKHz: [Int]) -> String {
        guard let low = channelsKHz.min(), let high = channelsKHz.max() else { return "none" }
        return "\(mhz(low))-\(mhz(high)) MHz"
    }

    static func mhz(_ kHz: Int) -> String {
        let whole = kHz / 1000
        var fraction = String(kHz % 1000)
        while fraction.count < 3 { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? String(whole) : "\(whole).\(fraction)"
    }

    enum CodingKeys: String, CodingKey {
        case number, name, code, revision, bands, source
        case channelsKHz = "channels_khz"
        case maxDwellMilliseconds = "max_dwell_ms"
        case minRoundMilliseconds = "min_round_ms"
        case listenBeforeTalk = "listen_before_talk"
        case maxPowerDBm = "max_power_dbm"
        case powerReference = "power_reference"
    }
}

/// A region entry that breaks a rule: which region, which field, what was expected and
/// what was found. `code` is stable for `--json` and the message catalog.
public struct RegionEntryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The region's name (or `#number` when it has none).
    public var region: String
    /// The field, as named in the catalogue's JSON (`channels_khz[3]`).
    public var field: String
    /// What the rule wants.
    public var expected: String
    /// What the entry holds.
    public var found: String

    /// Creates an error.
    public init(region: String, field: String, expected: String, found: String) {
        self.region = region
        self.field = field
        self.expected = expected
        self.found = found
    }

    /// `region_entry_invalid`.
    public var code: String { "region_entry_invalid" }
    /// Region, field, expected, found.
    public var arguments: [String] { [region, field, expected, found] }

    public var description: String {
        "region '\(region)': \(field) should be \(expected), found \(found)"
    }
}

/// Whether a Grokker lets its user choose a region, and whether it insists on one, decided
/// exactly as the vendor host library decides it from the unit's GetVersion answer
/// (libugrokitapi `CommandReaderFirmwareAllowsSetRegion`, `CommandReaderHardwareRequiresSetRegion`,
/// `CommandUserCanSetRegion`, `CommandUserMustSetRegion`; the Java `Ugi.getUserCanSetRegion` /
/// `getUserMustSetRegion` only call these). Pure: the inputs are what the unit reported plus
/// the host's own enforcement setting; docs/regions.md has the evidence.
public struct RegionSettingRules: Sendable, Hashable {
    /// The reader protocol version the unit reported (GetVersion bytes 0-1, decoded).
    public var readerProtocolVersion: Int
    /// The hardware revision the unit reported (GetVersion byte 4).
    public var hardwareRevision: UInt8
    /// The software the unit runs (GetVersion byte 13): 0 its application, 1 its loader.
    public var softwareType: UInt8
    /// The unit's device flags (GetVersion byte 12); bit 7: the user has set the region.
    public var deviceFlags: UInt8
    /// The host's region enforcement (vendor `CommandSetEnforceRegionSetting`; on unless the
    /// application turns it off).
    public var enforceRegion: Bool

    /// The first reader protocol whose firmware takes SetRegion (the vendor tests "not below 19").
    public static let firstReaderProtocolWithSetRegion = 19
    /// Hardware revisions above this one must have their region set (the vendor tests "> 5").
    public static let lastHardwareRevisionWithoutRequiredRegion: UInt8 = 5
    /// Device flag bit 7: the user has set the region (set by provisioning 0x04 sub-op 03).
    public static let userHasSetRegionFlag: UInt8 = 0x80

    /// Creates the rules for one unit's answer; enforcement defaults to on, as in the vendor host.
    public init(readerProtocolVersion: Int, hardwareRevision: UInt8, softwareType: UInt8, deviceFlags: UInt8,
                enforceRegion: Bool = true) {
        self.readerProtocolVersion = readerProtocolVersion
        self.hardwareRevision = hardwareRevision
        self.softwareType = softwareType
        self.deviceFlags = deviceFlags
        self.enforceRegion = enforceRegion
    }

    /// The unit's firmware takes SetRegion: reader protocol 19 or later.
    public var firmwareAllowsSetRegion: Bool { readerProtocolVersion >= Self.firstReaderProtocolWithSetRegion }
    /// The unit's hardware must have a region: hardware revision above 5.
    public var hardwareRequiresSetRegion: Bool { hardwareRevision > Self.lastHardwareRevisionWithoutRequiredRegion }
    /// The unit says its user has set the region (device flags bit 7).
    public var userHasSetRegion: Bool { deviceFlags & Self.userHasSetRegionFlag != 0 }
    /// The user may choose a region: the unit runs its application (software type 0) and its
    /// firmware takes SetRegion. When false the vendor host tells its delegate
    /// `notifyFirmwareDoesNotSupportSetRegion` instead of offering regions.
    public var userCanSetRegion: Bool { softwareType == 0 && firmwareAllowsSetRegion }
    /// The user must choose a region before anything else (the vendor host then skips its
    /// automatic firmware check and asks for a region): the user can set one, the hardware
    /// requires one, the user has not set one yet, and the host enforces regions.
    public var userMustSetRegion: Bool { userCanSetRegion && hardwareRequiresSetRegion && !userHasSetRegion && enforceRegion }
}
