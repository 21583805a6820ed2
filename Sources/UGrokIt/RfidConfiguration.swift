// The RFID configuration of an inventory: every field of the vendor's UgiRfidConfiguration,
// its limits, its validation and the six preset inventory types. The reasons for each
// limit and preset value are in docs/inventory.md.

import GrokProtocol

/// A tag memory bank (EPC Gen2). Vendor: `UgiMemoryBank` (`UGI_MEMORY_BANK_*`); the same type
/// the command protocol carries.
public typealias UgiMemoryBank = MemoryBank

/// The sounds the Grokker makes while an inventory finds tags. Vendor: `UgiSoundTypes`
/// (`UGI_INVENTORY_SOUNDS_*`); the raw values are the vendor's.
public enum UgiSoundType: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// No sound. Vendor: `UGI_INVENTORY_SOUNDS_NONE`.
    case none = 0
    /// Geiger-counter clicks, faster the more (and the closer) tags are found. Vendor:
    /// `UGI_INVENTORY_SOUNDS_GEIGER_COUNTER`.
    case geigerCounter = 1
    /// The found-item sound once when a tag is first found. Vendor: `UGI_INVENTORY_SOUNDS_FIRST_FIND`.
    case firstFind = 2
    /// The found-item sound on each first find, and the found-last sound when the last of
    /// the EPCs searched for is found. Vendor: `UGI_INVENTORY_SOUNDS_FIRST_FIND_AND_LAST`.
    case firstFindAndLast = 6

    /// The vendor's constant suffix, e.g. `GEIGER_COUNTER`.
    public var description: String {
        switch self {
        case .none: "NONE"
        case .geigerCounter: "GEIGER_COUNTER"
        case .firstFind: "FIRST_FIND"
        case .firstFindAndLast: "FIRST_FIND_AND_LAST"
        }
    }
}

/// How a single-find inventory (``UgiRfidConfiguration/singleFindMode``) uses power: the
/// vendor SDK 1.15's `UgiSingleFindRampPowerMode`, with its values (NO_RAMP 0, SLOW 1,
/// MEDIUM 2, FAST 3). The protocol this host speaks (reader protocol 20) has no field for a
/// ramp or its speed: every ramp starts the inventory at
/// ``UgiRfidConfiguration/minPowerLevel`` and the reader's adaptive power climbs towards
/// ``UgiRfidConfiguration/maxPowerLevel`` at its own pace, so SLOW, MEDIUM and FAST send
/// the same bytes (docs/inventory.md).
public enum UgiSingleFindRampPowerMode: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Search at ``UgiRfidConfiguration/initialPowerLevel`` only (NO_RAMP).
    case noRamp = 0
    /// Ramp power up from the minimum, so the tag found is the nearest one (SLOW).
    case slow = 1
    /// MEDIUM: as ``slow`` on this protocol.
    case medium = 2
    /// FAST: as ``slow`` on this protocol.
    case fast = 3

    /// Whether the inventory starts at the minimum power.
    public var ramps: Bool { self != .noRamp }

    /// The vendor's name (`NO_RAMP`, `SLOW`, `MEDIUM`, `FAST`).
    public var description: String {
        switch self {
        case .noRamp: "NO_RAMP"
        case .slow: "SLOW"
        case .medium: "MEDIUM"
        case .fast: "FAST"
        }
    }
}

/// The predefined inventory types. Vendor: `UgiInventoryTypes` (`UGI_INVENTORY_TYPE_*`);
/// the raw values are the vendor's.
public enum UgiInventoryType: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Locate a tag at a distance. Vendor: `UGI_INVENTORY_TYPE_LOCATE_DISTANCE`.
    case locateDistance = 1
    /// Count tags at short range, especially many close together. Vendor:
    /// `UGI_INVENTORY_TYPE_INVENTORY_SHORT_RANGE`.
    case inventoryShortRange = 2
    /// Count tags at a distance. Vendor: `UGI_INVENTORY_TYPE_INVENTORY_DISTANCE`.
    case inventoryDistance = 3
    /// Locate a tag at short range. Vendor: `UGI_INVENTORY_TYPE_LOCATE_SHORT_RANGE`.
    case locateShortRange = 4
    /// Locate a tag at very short range. Vendor: `UGI_INVENTORY_TYPE_LOCATE_VERY_SHORT_RANGE`.
    case locateVeryShortRange = 5
    /// Find one tag, the nearest, ramping power up. Vendor: `UGI_INVENTORY_TYPE_SINGLE_FIND`
    /// (SDK 1.8+).
    case singleFind = 6

    /// The English name. Vendor: `UgiRfidConfiguration.nameForInventoryType`.
    public var name: String {
        switch self {
        case .locateDistance: "Locate at a distance"
        case .inventoryShortRange: "Inventory at short range"
        case .inventoryDistance: "Inventory at a distance"
        case .locateShortRange: "Locate at short range"
        case .locateVeryShortRange: "Locate at very short range"
        case .singleFind: "Single find"
        }
    }

    /// The vendor's constant suffix, e.g. `LOCATE_DISTANCE`.
    public var vendorName: String {
        switch self {
        case .locateDistance: "LOCATE_DISTANCE"
        case .inventoryShortRange: "INVENTORY_SHORT_RANGE"
        case .inventoryDistance: "INVENTORY_DISTANCE"
        case .locateShortRange: "LOCATE_SHORT_RANGE"
        case .locateVeryShortRange: "LOCATE_VERY_SHORT_RANGE"
        case .singleFind: "SINGLE_FIND"
        }
    }

    /// Stable lower-case identifier for the command line, `--json` and message-catalog keys
    /// (`inventory_type.<code>`), e.g. `locate_distance`.
    public var code: String { vendorName.lowercased() }

    /// The type with this code, vendor name (either case) or number.
    public init?(code text: String) {
        let wanted = text.lowercased()
        guard let match = Self.allCases.first(where: { $0.code == wanted || String($0.rawValue) == wanted })
        else { return nil }
        self = match
    }

    /// How many inventory types there are. Vendor: `UgiRfidConfiguration.numInventoryTypes`.
    public static var numInventoryTypes: Int { allCases.count }

    public var description: String { name }
}

/// How the Grokker runs an inventory: power, Q, session, what to read with each find, the
/// SELECT filter, what to report, sounds and the tag history. Vendor: `UgiRfidConfiguration`
/// (every property, under the vendor's names).
///
/// Start from a preset and change what you need, then check it:
/// ```swift
/// var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
/// configuration.maxTidBytes = 12
/// try configuration.validate()
/// ```
/// The limits are static constants (``minAllowablePowerLevel`` ...); docs/inventory.md
/// gives the reason for each, and for every preset value.
public struct UgiRfidConfiguration: Sendable, Equatable, Codable {
    // MARK: Power and Q

    /// Power the inventory starts at, dBm. With ``minPowerLevel`` < ``maxPowerLevel`` the
    /// reader varies power within that range. Vendor: `initialPowerLevel`.
    public var initialPowerLevel: Double = 30
    /// Lowest power the reader may use, dBm. Vendor: `minPowerLevel`.
    public var minPowerLevel: Double = 30
    /// Highest power the reader may use, dBm. Vendor: `maxPowerLevel`.
    public var maxPowerLevel: Double = 30
    /// Q the inventory starts at (2^Q slots per round). With ``minQValue`` < ``maxQValue``
    /// Q adapts to the number of tags in range. Vendor: `initialQValue`.
    public var initialQValue: Int = 4
    /// Lowest Q. Vendor: `minQValue`.
    public var minQValue: Int = 2
    /// Highest Q. Vendor: `maxQValue`.
    public var maxQValue: Int = 12
    /// The Gen2 session, 0...3: how long a tag stays quiet after it was inventoried.
    /// Vendor: `session`.
    public var session: Int = 1
    /// Rounds in a row with no finds after which the reader switches the inventoried flag
    /// it targets (A/B); 0 never switches. Vendor: `roundsWithNoFindsToToggleAB`.
    public var roundsWithNoFindsToToggleAB: Int = 0
    /// Receive sensitivity for inventory, dBm: replies weaker than this are ignored.
    /// ``minAllowableSensitivity`` (-85) is the most sensitive. Vendor: `sensitivity`.
    public var sensitivity: Int = -80
    /// Power for writing tags, dBm. Vendor: `powerLevelWrite`.
    public var powerLevelWrite: Double = 30
    /// Receive sensitivity for writing tags, dBm. Vendor: `sensitivityWrite`.
    public var sensitivityWrite: Int = -80
    /// Whether to apply ``listenBeforeTalk`` (where the region allows changing it).
    /// Vendor: `setListenBeforeTalk`.
    public var setListenBeforeTalk: Bool = false
    /// Listen before talk on or off; used only with ``setListenBeforeTalk``. Vendor:
    /// `listenBeforeTalk`.
    public var listenBeforeTalk: Bool = false
    /// Most inventory rounds per second; 0 is no limit. Vendor: `maxRoundsPerSecond`.
    public var maxRoundsPerSecond: Int = 0

    // MARK: Memory read with each find

    /// Fewest TID bytes to return with each find (set equal to ``maxTidBytes`` if the size
    /// is known). Vendor: `minTidBytes`.
    public var minTidBytes: Int = 0
    /// Most TID bytes to return with each find; 0 does not read TID. Vendor: `maxTidBytes`.
    public var maxTidBytes: Int = 0
    /// Fewest USER bytes to return with each find. Vendor: `minUserBytes`.
    public var minUserBytes: Int = 0
    /// Most USER bytes to return with each find; 0 does not read USER. Vendor: `maxUserBytes`.
    public var maxUserBytes: Int = 0
    /// Fewest RESERVED bytes to return with each find. Vendor: `minReservedBytes`.
    public var minReservedBytes: Int = 0
    /// Most RESERVED bytes to return with each find; 0 does not read RESERVED. Vendor:
    /// `maxReservedBytes`.
    public var maxReservedBytes: Int = 0

    // MARK: SELECT

    /// Mask for a Gen2 SELECT before each round, at most ``maxSelectMaskBytes`` bytes;
    /// `nil` sends no SELECT. Vendor: `selectMask`.
    public var selectMask: [UInt8]? = nil
    /// Mask length in bits; 0 uses the whole mask (`selectMask.count * 8`). Vendor:
    /// `selectMaskBitLength`.
    public var selectMaskBitLength: Int = 0
    /// Bit offset of the mask in ``selectBank`` (the EPC starts at bit 32 of the EPC bank).
    /// Vendor: `selectOffset`.
    public var selectOffset: Int = 0
    /// Memory bank the mask is compared with. Vendor: `selectBank`.
    public var selectBank: UgiMemoryBank = .epc

    // MARK: Reporting

    /// Run until stopped (`true`) or one inventory only. Vendor: `continual`.
    public var continual: Bool = true
    /// Report the RSSI of each find. Vendor: `reportRssi`.
    public var reportRssi: Bool = false
    /// Report detailed data for each read (time, frequency, RSSI, words read). Vendor:
    /// `detailedPerReadData`.
    public var detailedPerReadData: Bool = false
    /// Words to read with every read for the detailed data, 0...2 (needs
    /// ``detailedPerReadData``). Vendor: `detailedPerReadNumReads`.
    public var detailedPerReadNumReads: Int = 0
    /// Memory bank of the first word (USER by default, as the vendor's). Vendor: `detailedPerReadMemoryBank1`.
    public var detailedPerReadMemoryBank1: UgiMemoryBank = .user
    /// Word offset of the first word. Vendor: `detailedPerReadWordOffset1`.
    public var detailedPerReadWordOffset1: Int = 0
    /// Memory bank of the second word (USER by default, as the vendor's). Vendor: `detailedPerReadMemoryBank2`.
    public var detailedPerReadMemoryBank2: UgiMemoryBank = .user
    /// Word offset of the second word. Vendor: `detailedPerReadWordOffset2`.
    public var detailedPerReadWordOffset2: Int = 0
    /// Report finds after the first one. Vendor: `reportSubsequentFinds`.
    public var reportSubsequentFinds: Bool = false
    /// Force a Tari of 25 µs (some sensor tags need it; firmware 1.10.4+). Vendor: `forceTari25`.
    public var forceTari25: Bool = false
    /// Wait 3 ms after SELECT (some sensor tags need it; firmware 1.10.4+). Vendor:
    /// `delayAfterSelect`.
    public var delayAfterSelect: Bool = false

    // MARK: Single find (SDK 1.8+)

    /// Find one tag, then stop (unless ``singleFindContinueInventory``). Vendor: `singleFindMode`.
    public var singleFindMode: Bool = false
    /// After the single find, go on as a normal inventory. Vendor: `singleFindContinueInventory`.
    public var singleFindContinueInventory: Bool = false
    /// How the single find uses power. Vendor: `singleFindRampPowerMode`.
    public var singleFindRampPowerMode: UgiSingleFindRampPowerMode = .noRamp

    // MARK: Sounds and history

    /// Sounds to make when tags are found. Vendor: `soundType`.
    public var soundType: UgiSoundType = .firstFind
    /// Volume, 0...1. Vendor: `volume`.
    public var volume: Double = 1
    /// Length of each history interval, ms (default 500). Vendor: `historyIntervalMSec`.
    public var historyIntervalMSec: Int = 500
    /// Number of history intervals kept (default 20: 10 s at 500 ms). Vendor: `historyDepth`.
    public var historyDepth: Int = 20

    /// A full-power inventory with the vendor's documented defaults (continual, no RSSI,
    /// no SELECT, 500 ms × 20 history), Q 4 adapting within the vendor's limits 2...12,
    /// session 1, no A/B toggling.
    public init() {}
}

// MARK: - Limits

extension UgiRfidConfiguration {
    /// Lowest power, dBm. Vendor: `getMinAllowablePowerLevel` (the library's
    /// `RfidConfigurationGetLimits`: 5.0 dBm, the lowest a power byte `(dBm - 5) * 10` carries).
    public static let minAllowablePowerLevel: Double = 5
    /// Highest power, dBm (1 W, the Grokker's `maxPower`). Vendor: `getMaxAllowablePowerLevel`.
    public static let maxAllowablePowerLevel: Double = 30
    /// Lowest Q. Vendor: `getMinAllowableQValue` (`RfidConfigurationGetLimits`: 2).
    public static let minAllowableQValue = 2
    /// Highest Q. Vendor: `getMaxAllowableQValue` (`RfidConfigurationGetLimits`: 12).
    public static let maxAllowableQValue = 12
    /// Highest ``roundsWithNoFindsToToggleAB``. Vendor: `getMaxAllowableRoundsWithNoFindsToToggleAB`
    /// (`RfidConfigurationGetLimits`: 250).
    public static let maxAllowableRoundsWithNoFindsToToggleAB = 250
    /// Most bytes of one memory bank read with each find. Vendor: `getMaxAllowableMemoryBankBytes`.
    public static let maxAllowableMemoryBankBytes = 208
    /// Longest SELECT mask, bytes. Vendor: `MAX_RFID_CONFIGURATION_MASK_LENGTH_BYTES`.
    public static let maxSelectMaskBytes = 32
    /// Highest SELECT bit offset (a two-byte EBV pointer holds 14 bits).
    public static let maxSelectOffset = 16_383
    /// Sessions: S0...S3.
    public static let allowableSessions = 0...3
    /// Most sensitive receive threshold, dBm: the GR-1's `maxSensitivity` (GetVersion byte
    /// 10 = 85), and the sensitivity of every row of the vendor's preset table.
    public static let minAllowableSensitivity = -85
    /// Least sensitive receive threshold, dBm.
    public static let maxAllowableSensitivity = -30
    /// Highest ``maxRoundsPerSecond`` (0 is no limit).
    public static let maxAllowableRoundsPerSecond = 500
    /// Most words read for detailed per-read data.
    public static let maxDetailedPerReadNumReads = 2
    /// Highest word offset for detailed per-read data (the last word of a 208-byte bank).
    public static var maxDetailedPerReadWordOffset: Int { maxAllowableMemoryBankBytes / 2 - 1 }
    /// Allowed ``historyIntervalMSec``.
    public static let allowableHistoryIntervalMSec = 50...60_000
    /// Allowed ``historyDepth``.
    public static let allowableHistoryDepth = 1...1_000
}

// MARK: - Validation

extension UgiRfidConfiguration {
    /// Checks every field against the limits and the fields against each other.
    /// - Throws: The first of ``validationErrors``, naming the field, its value and what is allowed.
    public func validate() throws(ConfigurationError) {
        if let first = validationErrors.first { throw first }
    }

    /// Everything wrong with this configuration, in field order; empty when it is valid.
    public var validationErrors: [ConfigurationError] {
        var errors: [ConfigurationError] = []
        func range(_ field: String, _ value: Double, _ limits: ClosedRange<Double>, _ unit: String) {
            if !limits.contains(value) {
                errors.append(.outOfRange(field: field, value: text(value), minimum: text(limits.lowerBound),
                                          maximum: text(limits.upperBound), unit: unit))
            }
        }
        func range(_ field: String, _ value: Int, _ limits: ClosedRange<Int>, _ unit: String = "") {
            if !limits.contains(value) {
                errors.append(.outOfRange(field: field, value: String(value), minimum: String(limits.lowerBound),
                                          maximum: String(limits.upperBound), unit: unit))
            }
        }
        func order(_ field: String, _ value: Double, _ limitField: String, _ limit: Double) {
            if value > limit {
                errors.append(.misordered(field: field, value: text(value), limitField: limitField, limit: text(limit)))
            }
        }
        func requires(_ condition: Bool, _ field: String, _ value: String, _ requirement: String) {
            if !condition { errors.append(.requires(field: field, value: value, requirement: requirement)) }
        }

        let power = Self.minAllowablePowerLevel...Self.maxAllowablePowerLevel
        range("initialPowerLevel", initialPowerLevel, power, "dBm")
        range("minPowerLevel", minPowerLevel, power, "dBm")
        range("maxPowerLevel", maxPowerLevel, power, "dBm")
        order("minPowerLevel", minPowerLevel, "initialPowerLevel", initialPowerLevel)
        order("initialPowerLevel", initialPowerLevel, "maxPowerLevel", maxPowerLevel)

        let q = Self.minAllowableQValue...Self.maxAllowableQValue
        range("initialQValue", initialQValue, q)
        range("minQValue", minQValue, q)
        range("maxQValue", maxQValue, q)
        order("minQValue", Double(minQValue), "initialQValue", Double(initialQValue))
        order("initialQValue", Double(initialQValue), "maxQValue", Double(maxQValue))

        range("session", session, Self.allowableSessions)
        range("roundsWithNoFindsToToggleAB", roundsWithNoFindsToToggleAB, 0...Self.maxAllowableRoundsWithNoFindsToToggleAB, "rounds")
        let sensitivities = Self.minAllowableSensitivity...Self.maxAllowableSensitivity
        range("sensitivity", sensitivity, sensitivities, "dBm")
        range("powerLevelWrite", powerLevelWrite, power, "dBm")
        range("sensitivityWrite", sensitivityWrite, sensitivities, "dBm")
        requires(setListenBeforeTalk || !listenBeforeTalk, "listenBeforeTalk", "true",
                 "setListenBeforeTalk is false, so it would be ignored: set setListenBeforeTalk to true as well")
        range("maxRoundsPerSecond", maxRoundsPerSecond, 0...Self.maxAllowableRoundsPerSecond, "rounds per second")

        let bank = 0...Self.maxAllowableMemoryBankBytes
        for (name, low, high) in [("Tid", minTidBytes, maxTidBytes), ("User", minUserBytes, maxUserBytes),
                                  ("Reserved", minReservedBytes, maxReservedBytes)] {
            range("min\(name)Bytes", low, bank, "bytes")
            range("max\(name)Bytes", high, bank, "bytes")
            order("min\(name)Bytes", Double(low), "max\(name)Bytes", Double(high))
        }

        if let selectMask {
            range("selectMask", selectMask.count, 0...Self.maxSelectMaskBytes, "bytes")
            range("selectMaskBitLength", selectMaskBitLength, 0...(selectMask.count * 8), "bits")
        } else {
            requires(selectMaskBitLength == 0, "selectMaskBitLength", String(selectMaskBitLength),
                     "no selectMask is set: set selectMask, or set selectMaskBitLength to 0")
        }
        range("selectOffset", selectOffset, 0...Self.maxSelectOffset, "bits")

        range("detailedPerReadNumReads", detailedPerReadNumReads, 0...Self.maxDetailedPerReadNumReads, "words")
        requires(detailedPerReadData || detailedPerReadNumReads == 0, "detailedPerReadNumReads",
                 String(detailedPerReadNumReads),
                 "detailedPerReadData is false, so no words would be reported: set detailedPerReadData to true or this to 0")
        range("detailedPerReadWordOffset1", detailedPerReadWordOffset1, 0...Self.maxDetailedPerReadWordOffset, "words")
        range("detailedPerReadWordOffset2", detailedPerReadWordOffset2, 0...Self.maxDetailedPerReadWordOffset, "words")

        requires(singleFindMode || !singleFindContinueInventory, "singleFindContinueInventory", "true",
                 "singleFindMode is false: set singleFindMode to true as well, or this to false")
        requires(singleFindMode || !singleFindRampPowerMode.ramps, "singleFindRampPowerMode",
                 "\(singleFindRampPowerMode)", "singleFindMode is false: set singleFindMode to true as well, or this to NO_RAMP")
        requires(!singleFindRampPowerMode.ramps || minPowerLevel < maxPowerLevel, "singleFindRampPowerMode",
                 "\(singleFindRampPowerMode)",
                 "minPowerLevel and maxPowerLevel are both \(text(maxPowerLevel)) dBm, leaving nothing to ramp over: "
                     + "give a power range or use NO_RAMP")

        range("volume", volume, 0...1, "")
        range("historyIntervalMSec", historyIntervalMSec, Self.allowableHistoryIntervalMSec, "ms")
        range("historyDepth", historyDepth, Self.allowableHistoryDepth, "intervals")
        return errors
    }
}

/// A number as a person writes it: `30`, `27.5`, `nan`.
private func text(_ value: Double) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value < 0 ? "-infinity" : "infinity" }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
    return String(value)
}

// MARK: - Presets

extension UgiRfidConfiguration {
    /// The configuration for a predefined inventory type; every preset passes
    /// ``validate()``. Types 1-5 are the vendor's own table (`rfidConfigurations` in the
    /// vendor library, restated as ``VendorRfidPresets``): power, Q, session, A/B toggling,
    /// sensitivity -85, write power 24 dBm at -60, subsequent finds and the Geiger-counter
    /// sound for the locate types, the first-find sound for the inventory types, no RSSI.
    /// ``UgiInventoryType/singleFind`` (SDK 1.8+) is not in that table: ours. Vendor:
    /// `UgiRfidConfiguration.configWithInventoryType`.
    public static func config(inventoryType: UgiInventoryType) -> UgiRfidConfiguration {
        var c = UgiRfidConfiguration()
        guard let vendorType = VendorInventoryType(rawValue: inventoryType.rawValue) else {
            // The nearest tag: ramp power up from the minimum until one answers.
            c.setPower(10, 10, 30)
            c.setQ(2, 2, 4)
            c.session = 0
            c.roundsWithNoFindsToToggleAB = 1
            c.reportRssi = true
            c.singleFindMode = true
            c.singleFindRampPowerMode = .slow
            c.singleFindContinueInventory = false
            c.soundType = .firstFind
            return c
        }
        let v = VendorRfidPresets.configuration(vendorType)
        c.setPower(v.initialPowerLevel, v.minPowerLevel, v.maxPowerLevel)
        c.setQ(v.initialQValue, v.minQValue, v.maxQValue)
        c.session = v.session
        c.roundsWithNoFindsToToggleAB = v.roundsWithNoFindsToToggleAB
        c.sensitivity = v.sensitivity
        c.powerLevelWrite = v.powerLevelWrite
        c.sensitivityWrite = v.sensitivityWrite
        c.reportRssi = v.reportRssi
        c.reportSubsequentFinds = v.reportSubsequentFinds
        c.soundType = UgiSoundType(rawValue: v.soundType) ?? .none
        c.volume = v.volume
        c.historyIntervalMSec = v.historyIntervalMSec
        c.historyDepth = v.historyDepth
        return c
    }

    private mutating func setPower(_ initial: Double, _ minimum: Double, _ maximum: Double) {
        (initialPowerLevel, minPowerLevel, maxPowerLevel) = (initial, minimum, maximum)
    }

    private mutating func setQ(_ initial: Int, _ minimum: Int, _ maximum: Int) {
        (initialQValue, minQValue, maxQValue) = (initial, minimum, maximum)
    }
}
