import GrokFirmware
import GrokProtocol

/// A region of the world a Grokker can be set to, as the vendor library names and numbers
/// them. Which regions a particular Grokker may choose comes from its regional catalogue;
/// this is the full list the names come from.
public struct UgiRegion: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The vendor's English name, e.g. `"FCC (US), IC (Canada)"`: what a Grokker stores
    /// and reports (vendor `regionName`) and what `setRegion` takes.
    public let name: String
    /// The position in the vendor's list, 1...22.
    public let number: Int
    /// Our stable, lower-case identifier, e.g. `fcc`, `etsi`, `japan_unlicensed`: for
    /// `--json`, file names and message-catalog keys (`region.<code>`), since the names are
    /// English prose.
    public let code: String

    public var description: String { name }

    /// The setting a Grokker stores and reports for this region.
    public var setting: RegionSetting { RegionSetting(name: name, number: UInt16(number)) }

    /// The region a Grokker's setting names, if it is one of the vendor's list (name and
    /// number must both match).
    public init?(_ setting: RegionSetting) {
        guard let region = RegionNames.all.first(where: { $0.number == Int(setting.number) && $0.name == setting.name })
        else { return nil }
        self = region
    }

    init(name: String, number: Int, code: String) {
        self.name = name
        self.number = number
        self.code = code
    }
}

/// The vendor's 22 regions, in the vendor library's order. Vendor: `Ugi.getRegionNames`
/// (which returns the names a particular Grokker is approved for; this is the whole list).
public enum RegionNames {
    /// Every region, numbers 1...22 in order: the SDK's view of `RegionCatalog`, the one
    /// table host and emulated Grokker share.
    public static let all: [UgiRegion] = RegionCatalog.all.map {
        UgiRegion(name: $0.name, number: Int($0.number), code: $0.code)
    }

    /// The vendor's names in order, as `getRegionNames` gives them.
    public static var names: [String] { all.map(\.name) }

    /// The region with this vendor name (exact, as the Grokker stores it, or ignoring case).
    public static func region(named name: String) -> UgiRegion? {
        all.first { $0.name == name } ?? all.first { $0.name.lowercased() == name.lowercased() }
    }

    /// The region with this stable code, e.g. `"etsi"`.
    public static func region(code: String) -> UgiRegion? {
        all.first { $0.code == code }
    }

    /// The region with this number, 1...22.
    public static func region(number: Int) -> UgiRegion? {
        all.indices.contains(number - 1) ? all[number - 1] : nil
    }
}

/// The regions one Grokker may choose, from the signed region catalogue, and which of them
/// it is set to (vendor `getRegionNames`: "the list this Grokker is approved for, with the
/// selected index").
public struct RegionChoices: Sendable, Hashable {
    /// The regions, in the vendor's order.
    public let regions: [UgiRegion]
    /// Their regulatory values, in the same order.
    public let entries: [RegionEntry]
    /// The index in ``regions`` of the region the Grokker is set to; `nil` when it is set to
    /// none, or to one it may no longer choose.
    public let selected: Int?

    /// The vendor's names, as `getRegionNames` gives them.
    public var names: [String] { regions.map(\.name) }

    /// The choices `catalogue` gives a reader of `reader`'s hardware revision and serial
    /// number.
    public init(catalogue: RegionCatalogue, reader: ReaderInfo) {
        let allowed = catalogue.regions(hardwareRevision: reader.hardwareRevision, serial: reader.serialNumber)
        entries = allowed
        regions = allowed.compactMap { UgiRegion($0.setting) }
        selected = reader.region.flatMap { current in allowed.firstIndex { $0.number == current.number && $0.name == current.name } }
    }

    /// Whether the Grokker may be set to `region`.
    public func allows(_ region: UgiRegion) -> Bool { regions.contains(region) }
}
