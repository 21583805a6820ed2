/// One of the regions of the world a Grokker can be set to, as the vendor numbered them.
///
/// The names and their order are the vendor library's (`getRegionNames`); the `code` is
/// ours: stable, lower-case, for `--json`, file names and message-catalog keys
/// (`region.<code>`), since the names are English prose.
public struct VendorRegion: Sendable, Hashable, Codable {
    /// 1...22, the position in the vendor's list.
    public let number: UInt16
    /// The vendor's name, e.g. "FCC (US) / IC (Canada)".
    public let name: String
    /// Stable identifier, e.g. `fcc`.
    public let code: String

    /// The setting a Grokker stores and reports for this region.
    public var setting: RegionSetting { RegionSetting(name: name, number: number) }
}

/// The vendor's 22 regions, shared by host and Grokker: the host offers them by name, the
/// Grokker checks a requested region against them before it stores it. (Which of them a
/// particular unit may choose, and each region's channels and power limit, come with the
/// signed regional catalogue.)
public enum RegionCatalog {
    public static let all: [VendorRegion] = [
        ("FCC (US) / IC (Canada)", "fcc"), ("ETSI (EU)", "etsi"), ("Taiwan (indoor)", "taiwan_indoor"),
        ("Taiwan (outdoor)", "taiwan_outdoor"), ("China", "china"), ("Japan (unlicensed)", "japan_unlicensed"),
        ("Japan (licensed)", "japan_licensed"), ("Australia", "australia"), ("Brazil", "brazil"),
        ("Hong Kong", "hong_kong"), ("Indonesia", "indonesia"), ("Israel", "israel"), ("South Korea", "south_korea"),
        ("Latvia", "latvia"), ("Malaysia", "malaysia"), ("New Zealand", "new_zealand"), ("Peru", "peru"),
        ("Russian Federation", "russia"), ("South Africa", "south_africa"), ("ETSI high", "etsi_high"),
        ("India", "india"), ("Singapore", "singapore"),
    ].enumerated().map { VendorRegion(number: UInt16($0.offset + 1), name: $0.element.0, code: $0.element.1) }

    /// The region with this vendor name, stable code or number (as text), ignoring case.
    public static func find(_ text: String) -> VendorRegion? {
        let wanted = text.lowercased()
        return all.first { $0.name.lowercased() == wanted || $0.code == wanted || String($0.number) == wanted }
    }

    /// The vendor region with this number (1...22).
    public static func named(number: UInt16) -> VendorRegion? {
        (1...all.count).contains(Int(number)) ? all[Int(number) - 1] : nil
    }

    /// The region a stored setting names, if the setting is one of the catalogue's.
    public static func find(_ setting: RegionSetting) -> VendorRegion? {
        all.first { $0.number == setting.number && $0.name == setting.name }
    }
}
