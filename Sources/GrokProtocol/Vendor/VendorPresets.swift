/// The vendor's inventory types (`UgiInventoryTypes`), the keys of its preset table.
public enum VendorInventoryType: Int, Sendable, Hashable, CaseIterable {
    case locateDistance = 1
    case inventoryShortRange = 2
    case inventoryDistance = 3
    case locateShortRange = 4
    case locateVeryShortRange = 5

    /// The library's names (`RfidConfigurationGetInventoryTypeName`, table at 0x29a80; entry 0
    /// is "Manual Configuration", anything above 5 "Invalid").
    public var vendorName: String {
        switch self {
        case .locateDistance: "Locate Distance"
        case .inventoryShortRange: "Inventory Short Range"
        case .inventoryDistance: "Inventory Distance"
        case .locateShortRange: "Locate Short Range"
        case .locateVeryShortRange: "Locate Very Short Range"
        }
    }
}

/// The vendor's `UgiRfidConfiguration`, field for field, with the library's defaults.
public struct VendorRfidConfiguration: Sendable, Hashable {
    public var initialPowerLevel: Double
    public var minPowerLevel: Double
    public var maxPowerLevel: Double
    public var initialQValue: Int
    public var minQValue: Int
    public var maxQValue: Int
    public var session: Int
    public var roundsWithNoFindsToToggleAB: Int
    public var sensitivity: Int
    public var powerLevelWrite: Double
    public var sensitivityWrite: Int
    public var setListenBeforeTalk = false
    public var listenBeforeTalk = false
    public var maxRoundsPerSecond = 0
    public var minTidBytes = 0
    public var maxTidBytes = 0
    public var minUserBytes = 0
    public var maxUserBytes = 0
    public var minReservedBytes = 0
    public var maxReservedBytes = 0
    public var selectMask: [UInt8] = []
    /// 0: `selectMask.count * 8`.
    public var selectMaskBitLength = 0
    public var selectOffset = 0
    public var selectBank = VendorMemoryBank.epc
    public var continual = true
    public var reportRssi = false
    public var detailedPerReadData = false
    public var detailedPerReadNumReads = 0
    public var detailedPerReadMemoryBank1 = VendorMemoryBank.user
    public var detailedPerReadWordOffset1 = 0
    public var detailedPerReadMemoryBank2 = VendorMemoryBank.user
    public var detailedPerReadWordOffset2 = 0
    public var reportSubsequentFinds: Bool
    /// 0 none, 1 Geiger counter, 2 first find, 6 first find and last.
    public var soundType: Int
    public var volume = 1.0
    /// Host-side only (tag history), never sent.
    public var historyIntervalMSec = 500
    public var historyDepth = 20

    public init(initialPowerLevel: Double, minPowerLevel: Double, maxPowerLevel: Double, initialQValue: Int, minQValue: Int,
                maxQValue: Int, session: Int, roundsWithNoFindsToToggleAB: Int, sensitivity: Int, powerLevelWrite: Double,
                sensitivityWrite: Int, reportSubsequentFinds: Bool, soundType: Int) {
        self.initialPowerLevel = initialPowerLevel
        self.minPowerLevel = minPowerLevel
        self.maxPowerLevel = maxPowerLevel
        self.initialQValue = initialQValue
        self.minQValue = minQValue
        self.maxQValue = maxQValue
        self.session = session
        self.roundsWithNoFindsToToggleAB = roundsWithNoFindsToToggleAB
        self.sensitivity = sensitivity
        self.powerLevelWrite = powerLevelWrite
        self.sensitivityWrite = sensitivityWrite
        self.reportSubsequentFinds = reportSubsequentFinds
        self.soundType = soundType
    }

    /// The preset for `type` (`RfidConfigurationGetInventoryDefaults`, 0x11bc0).
    public static func preset(_ type: VendorInventoryType) -> VendorRfidConfiguration {
        VendorRfidPresets.configuration(type)
    }

    /// The inventory start the vendor host sends for this configuration to a reader with
    /// `volumeLevels` volume levels (GetVersion byte 11), following `CommandInventory`
    /// (0x14890). Refuses what the vendor's limits refuse (``VendorRfidLimits``); like the
    /// library, it lowers a minimum bank byte count above its maximum to the maximum.
    /// `tags` is which tags the app asked for, decided as `InventoryStart` (0x17f70-0x181e8)
    /// decides: a list of EPCs goes to the reader when there is no select mask and it fits
    /// in ``VendorInventoryStart/maxEPCListBytes``; otherwise (and for a list to ignore) the
    /// host filters and flag bit 7 is clear.
    public func inventoryStart(volumeLevels: UInt8, tags: VendorTagInclusion = .all) throws(VendorCommandError) -> VendorInventoryStart {
        try VendorRfidLimits.validate(self)
        let level = volume == 0 ? 0 : try VendorUnits.volumeLevel(volume: volume, levels: volumeLevels)
        let words: (first: VendorWordLocation, second: VendorWordLocation)?
        switch detailedPerReadNumReads {
        case 0: words = nil
        case 1:
            let first = try VendorWordLocation(bank: detailedPerReadMemoryBank1, wordOffset: UInt8(detailedPerReadWordOffset1))
            words = (first, first)
        default:
            words = (try VendorWordLocation(bank: detailedPerReadMemoryBank1, wordOffset: UInt8(detailedPerReadWordOffset1)),
                     try VendorWordLocation(bank: detailedPerReadMemoryBank2, wordOffset: UInt8(detailedPerReadWordOffset2)))
        }
        let bitLength = selectMaskBitLength != 0 ? selectMaskBitLength : selectMask.count * 8
        var select: VendorSelect?
        if bitLength > 0 {
            let needed = (bitLength + 7) / 8
            guard selectMask.count >= needed else {
                throw .inconsistent(field: "selectMask bytes for selectMaskBitLength", declared: needed, actual: selectMask.count)
            }
            select = try VendorSelect(bitLength: UInt16(bitLength), bitOffset: UInt16(selectOffset), bank: selectBank,
                                      mask: Array(selectMask.prefix(needed)))
        }
        var flag7 = true
        var epcs: [[UInt8]] = []
        switch tags {
        case .all: break
        case .ignoring: flag7 = false
        case .only(let wanted):
            if select == nil, VendorInventoryStart.listBytes(wanted) <= VendorInventoryStart.maxEPCListBytes {
                epcs = wanted
            } else {
                flag7 = false
            }
        }
        let radio = VendorRadioSettings(
            initialQ: UInt8(initialQValue), initialPower: try VendorUnits.powerByte(dBm: initialPowerLevel, field: "initialPowerLevel"),
            minusSensitivity: UInt8(-sensitivity), session: UInt8(session),
            writePower: try VendorUnits.powerByte(dBm: powerLevelWrite, field: "powerLevelWrite"),
            minusWriteSensitivity: UInt8(-sensitivityWrite), minQ: UInt8(minQValue), maxQ: UInt8(maxQValue),
            roundsToToggleAB: UInt8(roundsWithNoFindsToToggleAB),
            minPower: try VendorUnits.powerByte(dBm: minPowerLevel, field: "minPowerLevel"),
            maxPower: try VendorUnits.powerByte(dBm: maxPowerLevel, field: "maxPowerLevel"))
        return VendorInventoryStart(
            soundType: volume == 0 ? 0 : UInt8(soundType), reportRssi: reportRssi, continual: continual,
            reportSubsequentFinds: reportSubsequentFinds, flag7: flag7, volumeLevel: level,
            maxRoundsPerSecond: UInt8(maxRoundsPerSecond), maxTidBytes: UInt8(maxTidBytes), maxUserBytes: UInt8(maxUserBytes),
            maxReservedBytes: UInt8(maxReservedBytes), minTidBytes: UInt8(Swift.min(minTidBytes, maxTidBytes)),
            minUserBytes: UInt8(Swift.min(minUserBytes, maxUserBytes)),
            minReservedBytes: UInt8(Swift.min(minReservedBytes, maxReservedBytes)), detailedPerReadData: detailedPerReadData,
            setListenBeforeTalk: setListenBeforeTalk, listenBeforeTalk: listenBeforeTalk, radio: radio, perReadWords: words,
            select: select, epcs: epcs)
    }
}

/// Which tags an app's inventory is about, as the vendor host's `InventoryStart` is told:
/// every tag, only these EPCs (`startInventory...withEpcs:`), or all but these
/// (`startInventoryIgnoringEpcs`).
public enum VendorTagInclusion: Sendable, Hashable {
    case all
    case only([[UInt8]])
    case ignoring([[UInt8]])
}

/// The vendor's `rfidConfigurations` table (x86_64 data at 0x2a180, five rows of 64 bytes:
/// doubles initial/min/max power at +0/+8/+16, ints initial/min/max Q, session, A/B toggle rounds
/// and sensitivity at +24...+44, double write power at +48, int write sensitivity at +56), with
/// each type's report-subsequent-finds byte and sound type from the name table at 0x29a80.
/// Facts, restated.
public enum VendorRfidPresets {
    public static func configuration(_ type: VendorInventoryType) -> VendorRfidConfiguration {
        switch type {
        case .locateDistance:
            row(27, 23, 30, q: (4, 2, 7), session: 0, toggle: 0, locate: true)
        case .inventoryShortRange:
            row(21, 17, 24, q: (3, 2, 7), session: 1, toggle: 10, locate: false)
        case .inventoryDistance:
            row(27, 23, 29, q: (3, 2, 7), session: 1, toggle: 10, locate: false)
        case .locateShortRange:
            row(21, 17, 24, q: (4, 2, 7), session: 0, toggle: 0, locate: true)
        case .locateVeryShortRange:
            row(9, 5, 12, q: (4, 2, 7), session: 0, toggle: 0, locate: true)
        }
    }

    /// Every row shares sensitivity -85 dB, write power 24 dBm and write sensitivity -60 dB;
    /// locate types report subsequent finds with the Geiger-counter sound, inventory types
    /// play the first-find sound.
    private static func row(_ initial: Double, _ minimum: Double, _ maximum: Double, q: (Int, Int, Int), session: Int,
                            toggle: Int, locate: Bool) -> VendorRfidConfiguration {
        VendorRfidConfiguration(initialPowerLevel: initial, minPowerLevel: minimum, maxPowerLevel: maximum, initialQValue: q.0,
                                minQValue: q.1, maxQValue: q.2, session: session, roundsWithNoFindsToToggleAB: toggle,
                                sensitivity: -85, powerLevelWrite: 24, sensitivityWrite: -60,
                                reportSubsequentFinds: locate, soundType: locate ? 1 : 2)
    }
}

/// The vendor's limits (`RfidConfigurationGetLimits` 0x11d50 and `GetInventoryLimits` 0x11d80).
public enum VendorRfidLimits {
    public static let powerDBm: ClosedRange<Double> = 5...30
    public static let qValue: ClosedRange<Int> = 2...12
    public static let roundsWithNoFindsToToggleAB: ClosedRange<Int> = 0...250
    public static let memoryBankBytes: ClosedRange<Int> = 0...208
    /// What the one-byte fields can carry (not vendor limits, wire limits).
    public static let session: ClosedRange<Int> = 0...3
    public static let sensitivity: ClosedRange<Int> = -255...0
    public static let detailedPerReadNumReads: ClosedRange<Int> = 0...2
    public static let wordOffset: ClosedRange<Int> = 0...63

    /// Throws the first limit `configuration` breaks.
    public static func validate(_ c: VendorRfidConfiguration) throws(VendorCommandError) {
        for (name, value) in [("initialPowerLevel", c.initialPowerLevel), ("minPowerLevel", c.minPowerLevel),
                              ("maxPowerLevel", c.maxPowerLevel), ("powerLevelWrite", c.powerLevelWrite)] {
            guard powerDBm.contains(value) else {
                throw .outOfRange(field: name, value: String(value), allowed: "5...30 dBm")
            }
        }
        for (name, value) in [("initialQValue", c.initialQValue), ("minQValue", c.minQValue), ("maxQValue", c.maxQValue)] {
            try checkRange(name, value, qValue)
        }
        try checkRange("roundsWithNoFindsToToggleAB", c.roundsWithNoFindsToToggleAB, roundsWithNoFindsToToggleAB)
        for (name, value) in [("minTidBytes", c.minTidBytes), ("maxTidBytes", c.maxTidBytes), ("minUserBytes", c.minUserBytes),
                              ("maxUserBytes", c.maxUserBytes), ("minReservedBytes", c.minReservedBytes),
                              ("maxReservedBytes", c.maxReservedBytes)] {
            try checkRange(name, value, memoryBankBytes)
        }
        try checkRange("session", c.session, session)
        try checkRange("sensitivity", c.sensitivity, sensitivity)
        try checkRange("sensitivityWrite", c.sensitivityWrite, sensitivity)
        try checkRange("maxRoundsPerSecond", c.maxRoundsPerSecond, 0...255)
        try checkRange("soundType", c.soundType, 0...7)
        try checkRange("detailedPerReadNumReads", c.detailedPerReadNumReads, detailedPerReadNumReads)
        try checkRange("detailedPerReadWordOffset1", c.detailedPerReadWordOffset1, wordOffset)
        try checkRange("detailedPerReadWordOffset2", c.detailedPerReadWordOffset2, wordOffset)
        try checkRange("selectMaskBitLength", c.selectMaskBitLength, 0...(VendorSelect.maxMaskBytes * 8))
        guard c.selectMask.count <= VendorSelect.maxMaskBytes else {
            throw .tooLong(field: "selectMask", length: c.selectMask.count, limit: VendorSelect.maxMaskBytes)
        }
        try checkRange("selectOffset", c.selectOffset, 0...Int(UInt16.max))
        guard c.volume.isFinite, (0...1).contains(c.volume) else {
            throw .outOfRange(field: "volume", value: String(c.volume), allowed: "0...1")
        }
    }
}
