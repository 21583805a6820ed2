import GrokProtocol

// How a `UgiRfidConfiguration` reaches the reader on the vendor protocol: every field goes
// into the vendor's inventory-start struct (`VendorInventoryStart`, built the way the vendor
// library's `CommandInventory` builds it), is used by the host itself, or is refused with an
// error that names it. Nothing is dropped silently.

/// Where each field of ``UgiRfidConfiguration`` goes on the vendor protocol.
public enum VendorFieldRoute: String, Sendable, Hashable, CaseIterable {
    /// Into the inventory-start struct the reader receives.
    case wire
    /// Used by the host (the tag history, single find), never sent, as in the vendor's SDK.
    case host
    /// Cannot be carried: refused unless it has its neutral value.
    case refused
}

extension UgiRfidConfiguration {
    /// Every field and its route, in declaration order (what ``vendorConfiguration()``
    /// does with it).
    public static let vendorFieldRoutes: [(field: String, route: VendorFieldRoute)] = [
        ("initialPowerLevel", .wire), ("minPowerLevel", .wire), ("maxPowerLevel", .wire), ("initialQValue", .wire),
        ("minQValue", .wire), ("maxQValue", .wire), ("session", .wire), ("roundsWithNoFindsToToggleAB", .wire),
        ("sensitivity", .wire), ("powerLevelWrite", .wire), ("sensitivityWrite", .wire), ("setListenBeforeTalk", .wire),
        ("listenBeforeTalk", .wire), ("maxRoundsPerSecond", .wire), ("minTidBytes", .wire), ("maxTidBytes", .wire),
        ("minUserBytes", .wire), ("maxUserBytes", .wire), ("minReservedBytes", .wire), ("maxReservedBytes", .wire),
        ("selectMask", .wire), ("selectMaskBitLength", .wire), ("selectOffset", .wire), ("selectBank", .wire),
        ("continual", .wire), ("reportRssi", .wire), ("detailedPerReadData", .wire), ("detailedPerReadNumReads", .wire),
        ("detailedPerReadMemoryBank1", .wire), ("detailedPerReadWordOffset1", .wire),
        ("detailedPerReadMemoryBank2", .wire), ("detailedPerReadWordOffset2", .wire), ("reportSubsequentFinds", .wire),
        ("forceTari25", .refused), ("delayAfterSelect", .refused), ("singleFindMode", .host),
        ("singleFindContinueInventory", .host), ("singleFindRampPowerMode", .wire), ("soundType", .wire),
        ("volume", .wire), ("historyIntervalMSec", .host), ("historyDepth", .host),
    ]

    /// The vendor library's own configuration struct for this configuration.
    ///
    /// - `forceTari25` and `delayAfterSelect` (firmware 1.10.4+) have no place in the
    ///   inventory struct of the vendor protocol we speak (SDK 1.7.16, reader protocol 20):
    ///   `true` is refused, never dropped.
    /// - a ramping `singleFindRampPowerMode` (SLOW, MEDIUM, FAST) starts the inventory at
    ///   `minPowerLevel` (the reader's adaptive power then climbs towards `maxPowerLevel`):
    ///   the initial power byte carries it; reader protocol 20 has no field for the speed.
    /// - `singleFindMode`/`singleFindContinueInventory` and the history are the host's.
    /// - Throws: ``ReaderError/invalidArgument(field:value:allowed:)`` for a field the
    ///   configuration's own ``validate()`` refuses or the wire cannot carry.
    public func vendorConfiguration() throws(ReaderError) -> VendorRfidConfiguration {
        if let first = validationErrors.first {
            throw .invalidArgument(field: first.field, value: first.arguments[1], allowed: first.description)
        }
        if forceTari25 {
            throw .invalidArgument(field: "forceTari25", value: "true",
                                   allowed: "false: the vendor protocol's inventory struct (reader protocol 20) has no Tari field")
        }
        if delayAfterSelect {
            throw .invalidArgument(field: "delayAfterSelect", value: "true",
                                   allowed: "false: the vendor protocol's inventory struct (reader protocol 20) has no delay-after-select field")
        }
        let initial = singleFindMode && singleFindRampPowerMode.ramps ? minPowerLevel : initialPowerLevel
        var v = VendorRfidConfiguration(
            initialPowerLevel: initial, minPowerLevel: minPowerLevel, maxPowerLevel: maxPowerLevel,
            initialQValue: initialQValue, minQValue: minQValue, maxQValue: maxQValue, session: session,
            roundsWithNoFindsToToggleAB: roundsWithNoFindsToToggleAB, sensitivity: sensitivity,
            powerLevelWrite: powerLevelWrite, sensitivityWrite: sensitivityWrite,
            reportSubsequentFinds: reportSubsequentFinds, soundType: soundType.rawValue)
        v.setListenBeforeTalk = setListenBeforeTalk
        v.listenBeforeTalk = listenBeforeTalk
        v.maxRoundsPerSecond = maxRoundsPerSecond
        v.minTidBytes = minTidBytes
        v.maxTidBytes = maxTidBytes
        v.minUserBytes = minUserBytes
        v.maxUserBytes = maxUserBytes
        v.minReservedBytes = minReservedBytes
        v.maxReservedBytes = maxReservedBytes
        v.selectMask = selectMask ?? []
        v.selectMaskBitLength = selectMaskBitLength
        v.selectOffset = selectOffset
        v.selectBank = VendorMemoryBank(selectBank)
        v.continual = continual
        v.reportRssi = reportRssi
        v.detailedPerReadData = detailedPerReadData
        v.detailedPerReadNumReads = detailedPerReadNumReads
        v.detailedPerReadMemoryBank1 = VendorMemoryBank(detailedPerReadMemoryBank1)
        v.detailedPerReadWordOffset1 = detailedPerReadWordOffset1
        v.detailedPerReadMemoryBank2 = VendorMemoryBank(detailedPerReadMemoryBank2)
        v.detailedPerReadWordOffset2 = detailedPerReadWordOffset2
        v.volume = volume
        v.historyIntervalMSec = historyIntervalMSec
        v.historyDepth = historyDepth
        return v
    }

    /// The inventory start (command 0x07) the reader receives for this configuration, for a
    /// reader with `volumeLevels` volume levels (GetVersion byte 11): the bytes the vendor
    /// host sends for the same configuration; with `tags`, the EPC list the vendor host
    /// would send with it (``UgiTagSelection``).
    public func vendorInventoryStart(volumeLevels: UInt8, tags: UgiTagSelection = .all) throws(ReaderError) -> VendorInventoryStart {
        let v = try vendorConfiguration()
        do {
            return try v.inventoryStart(volumeLevels: volumeLevels, tags: tags.vendor)
        } catch {
            throw ReaderError(error)
        }
    }
}

extension VendorMemoryBank {
    /// The vendor protocol's number for an SDK memory bank (the same numbering).
    public init(_ bank: UgiMemoryBank) {
        self = VendorMemoryBank(rawValue: bank.rawValue) ?? .epc
    }
}

extension ReaderError {
    /// A value the vendor protocol's codecs refuse, as the SDK reports it (nothing was sent).
    public init(_ error: VendorCommandError) {
        switch error {
        case .outOfRange(let field, let value, let allowed):
            self = .invalidArgument(field: field, value: value, allowed: allowed)
        case .tooLong(let field, let length, let limit):
            self = .invalidArgument(field: field, value: "\(length) bytes", allowed: "at most \(limit) bytes")
        case .inconsistent(let field, let declared, let actual):
            self = .invalidArgument(field: field, value: String(actual), allowed: String(declared))
        default:
            self = .invalidArgument(field: "vendor command", value: error.description, allowed: "a value the vendor protocol carries")
        }
    }
}

/// Which tags an inventory is about: every tag (vendor `startInventory:withConfiguration:`),
/// only these (`...withEpcs:`) or all but these (`startInventoryIgnoringEpcs`).
///
/// Only these goes to the reader as the vendor's host sends it: the EPCs follow the
/// inventory start, and the reader reports (and sounds for) nothing else, unless the
/// configuration has a select mask or the list passes 226 bytes (seventeen 96-bit EPCs),
/// when the host filters instead, as the vendor's does. The host applies the selection to
/// what arrives in every case (``includes(_:)``).
public enum UgiTagSelection: Sendable, Hashable {
    case all
    case only([UgiEpc])
    case ignoring([UgiEpc])

    /// Whether a tag with this EPC belongs to the inventory.
    public func includes(_ epc: UgiEpc) -> Bool {
        switch self {
        case .all: true
        case .only(let epcs): epcs.contains(epc)
        case .ignoring(let epcs): !epcs.contains(epc)
        }
    }

    /// The vendor host's view of it.
    var vendor: VendorTagInclusion {
        switch self {
        case .all: .all
        case .only(let epcs): .only(epcs.map(\.bytes))
        case .ignoring(let epcs): .ignoring(epcs.map(\.bytes))
        }
    }
}
