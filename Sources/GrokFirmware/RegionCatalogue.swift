import Foundation
import GrokBasics
import GrokProtocol

/// Which regions a set of Grokkers may choose: units of the listed hardware revisions
/// (and, when `serials` is given, only those serial numbers) may choose the listed region
/// codes. JSON: `{"hardware_revisions": [3], "serials": {"ranges": [{"from": 10000000,
/// "through": 49999999}]}, "regions": ["fcc", "etsi"]}`.
public struct RegionEligibility: Sendable, Hashable, Codable {
    /// The hardware revisions the rule is for.
    public var hardwareRevisions: [UInt8]
    /// The serial numbers it is for; `nil`: every serial number.
    public var serials: Cohort?
    /// Region codes (``VendorRegion/code``) they may choose.
    public var regions: [String]

    /// Creates a rule.
    public init(hardwareRevisions: [UInt8], serials: Cohort? = nil, regions: [String]) {
        self.hardwareRevisions = hardwareRevisions
        self.serials = serials
        self.regions = regions
    }

    /// Whether the rule is for a unit of `hardwareRevision` with serial number `serial`.
    public func applies(hardwareRevision: UInt8, serial: UInt32) -> Bool {
        hardwareRevisions.contains(hardwareRevision) && (serials?.contains(serial) ?? true)
    }

    enum CodingKeys: String, CodingKey {
        case serials, regions
        case hardwareRevisions = "hardware_revisions"
    }
}

/// The signed region catalogue (the payload of `regions.json`): every region's regulatory
/// values and which regions each hardware revision and serial range may choose. Signed,
/// listed as a target of the TUF repository and verified by TUF and by its own rules (docs/regions.md):
///
/// ```json
/// {"type": "grokctl-region-catalogue", "version": 3, "expires": "2026-01-01T00:00:00Z",
///  "regions": [{"number": 1, "name": "FCC (US), IC (Canada)", "code": "fcc", ...}],
///  "eligibility": [{"hardware_revisions": [3], "regions": ["fcc", "etsi"]}]}
/// ```
public struct RegionCatalogue: Sendable, Hashable, Codable {
    /// The `type` every region catalogue carries.
    public static let typeMarker = "grokctl-region-catalogue"
    /// The name it is served and cached as.
    public static let name = "regions"

    /// Always ``typeMarker``.
    public var type: String
    /// Raised by the publisher on every change, never lowered.
    public var version: UInt64
    /// When it stops being trusted (whole seconds, UTC; ISO 8601 in JSON).
    public var expires: Date
    /// The regions' values, in the vendor's order.
    public var regions: [RegionEntry]
    /// Who may choose which regions.
    public var eligibility: [RegionEligibility]

    /// Creates a catalogue (``RegionPublisher/catalogue(version:expires:eligibility:regions:)``
    /// checks it).
    public init(version: UInt64, expires: Date, regions: [RegionEntry], eligibility: [RegionEligibility]) {
        type = Self.typeMarker
        self.version = version
        self.expires = Date(timeIntervalSince1970: expires.timeIntervalSince1970.rounded(.down))
        self.regions = regions.sorted { $0.number < $1.number }
        self.eligibility = eligibility
    }

    /// The entry of the region `setting` names, if the catalogue lists it.
    public func entry(for setting: RegionSetting) -> RegionEntry? {
        regions.first { $0.number == setting.number && $0.name == setting.name }
    }

    /// The regions a unit of `hardwareRevision` with serial number `serial` may choose, in
    /// the vendor's order (vendor `getRegionNames`, "loaded from the update server").
    public func regions(hardwareRevision: UInt8, serial: UInt32) -> [RegionEntry] {
        let codes = Set(eligibility.filter { $0.applies(hardwareRevision: hardwareRevision, serial: serial) }.flatMap(\.regions))
        return regions.filter { codes.contains($0.code) }
    }

    /// The payload bytes: pretty JSON with sorted keys.
    public func payload() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Strings, numbers, booleans, arrays and objects only: this cannot fail.
        return Array(try! encoder.encode(self)) + [0x0A]
    }

    /// Decodes and checks a payload: type, JSON shape, then every region against the
    /// firmware's own limits (``RegionEntry/validate(within:)``), numbers listed once, and
    /// eligibility naming only listed regions.
    public static func decode(_ payload: [UInt8], file: String) throws(FirmwareError) -> RegionCatalogue {
        struct Marker: Decodable { var type: String? }
        if let marker = try? JSONDecoder().decode(Marker.self, from: Data(payload)), marker.type != typeMarker {
            throw .typeMismatch(file: file, expected: typeMarker, found: marker.type ?? "(none)")
        }
        let catalogue: RegionCatalogue
        do {
            catalogue = try JSONDecoder().decode(RegionCatalogue.self, from: Data(payload))
        } catch {
            let (field, detail) = describe(error)
            throw .metadataMalformed(file: file, field: field, detail: detail)
        }
        try catalogue.validate(file: file)
        return catalogue
    }

    func validate(file: String) throws(FirmwareError) {
        func bad(_ field: String, _ code: String, _ values: [String] = []) -> FirmwareError {
            .metadataMalformed(file: file, field: field, detail: ErrorDetail(code, values))
        }
        guard type == Self.typeMarker else { throw .typeMismatch(file: file, expected: Self.typeMarker, found: type) }
        guard !regions.isEmpty else { throw bad("regions", "no_regions") }
        var numbers = Set<UInt16>()
        for (index, entry) in regions.enumerated() {
            guard numbers.insert(entry.number).inserted else { throw bad("regions[\(index)].number", "region_twice", [String(entry.number)]) }
            // The firmware's allocation for the band the entry's channels need (Russia has
            // one per hardware band), else its first, whose bands then name what is wrong.
            guard let limit = RegionCatalog.entry(number: entry.number, band: entry.hardwareBand)
                ?? RegionCatalog.entry(number: entry.number) else {
                throw .regionInvalid(file: file, region: entry.name, field: "number", expected: "1-\(RegionCatalog.entries.count)",
                                     found: String(entry.number))
            }
            do {
                try entry.validate(within: limit)
            } catch {
                throw .regionInvalid(file: file, region: error.region, field: error.field, expected: error.expected, found: error.found)
            }
        }
        let codes = Set(regions.map(\.code))
        for (index, rule) in eligibility.enumerated() {
            guard !rule.hardwareRevisions.isEmpty else { throw bad("eligibility[\(index)].hardware_revisions", "no_revisions") }
            for code in rule.regions where !codes.contains(code) {
                throw bad("eligibility[\(index)].regions", "region_not_listed", [code])
            }
        }
    }

    enum CodingKeys: String, CodingKey { case type, version, expires, regions, eligibility }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(String.self, forKey: .type)
        version = try c.decode(UInt64.self, forKey: .version)
        let text = try c.decode(String.self, forKey: .expires)
        guard let date = UTCTime.date(text) else {
            throw DecodingDetail.error(forKey: CodingKeys.expires, in: c, ErrorDetail("not_utc_time", [text]))
        }
        expires = date
        regions = try c.decode([RegionEntry].self, forKey: .regions)
        eligibility = try c.decode([RegionEligibility].self, forKey: .eligibility)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(version, forKey: .version)
        try c.encode(UTCTime.format(expires), forKey: .expires)
        try c.encode(regions, forKey: .regions)
        try c.encode(eligibility, forKey: .eligibility)
    }
}

/// The library half of making the region catalogue (`grokctl region catalogue make`, see
/// docs/regions.md): the payload from the firmware's table, checked. It is published as a
/// target of the TUF repository (`grokctl repo add`), which signs it.
public enum RegionPublisher {
    /// Every hardware revision of every serial number may choose every region.
    public static func everywhere(hardwareRevisions: [UInt8]) -> [RegionEligibility] {
        [RegionEligibility(hardwareRevisions: hardwareRevisions, regions: RegionCatalog.entries.map(\.code))]
    }

    /// A checked catalogue of `regions` (by default the firmware's own table for all 22
    /// regions) with `eligibility`.
    public static func catalogue(version: UInt64, expires: Date, eligibility: [RegionEligibility],
                                 regions: [RegionEntry] = RegionCatalog.entries) throws(FirmwareError) -> RegionCatalogue {
        let catalogue = RegionCatalogue(version: version, expires: expires, regions: regions, eligibility: eligibility)
        return try RegionCatalogue.decode(catalogue.payload(), file: "<region catalogue>")
    }
}

/// What is wrong with a decoded value, said as a code: carried as a `DecodingError`'s
/// underlying error so ``describe(_:)`` finds it again (never the error's English
/// `debugDescription`).
struct DecodingDetail: Error {
    let detail: ErrorDetail

    /// The `DecodingError` for `key` of `container` whose detail is `detail`.
    static func error<Key: CodingKey>(forKey key: Key, in container: KeyedDecodingContainer<Key>, _ detail: ErrorDetail) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: container.codingPath + [key], debugDescription: detail.description,
                                             underlyingError: DecodingDetail(detail: detail)))
    }
}

/// Where a JSON decoding error is (a key path, `$` for the top level) and what is wrong
/// there (a code under `firmware.detail`), for error messages.
func describe(_ error: any Error) -> (field: String, detail: ErrorDetail) {
    func path(_ keys: [any CodingKey]) -> String {
        let text = keys.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
        return text.hasPrefix(".") ? String(text.dropFirst()) : (text.isEmpty ? "$" : text)
    }
    guard let decoding = error as? DecodingError else { return ("$", ErrorDetail("not_json")) }
    switch decoding {
    case .keyNotFound(let key, let context):
        return (path(context.codingPath + [key]), ErrorDetail("missing"))
    case .typeMismatch(let type, let context):
        return (path(context.codingPath), ErrorDetail("wrong_type", [jsonKind(type)]))
    case .valueNotFound(let type, let context):
        return (path(context.codingPath), ErrorDetail("null_value", [jsonKind(type)]))
    case .dataCorrupted(let context):
        if let coded = context.underlyingError as? DecodingDetail { return (path(context.codingPath), coded.detail) }
        return (path(context.codingPath), ErrorDetail(context.codingPath.isEmpty ? "not_json" : "invalid_value"))
    @unknown default:
        return ("$", ErrorDetail("not_json"))
    }
}

/// The JSON kind a Swift type decodes from (`string`, `number`, `object`...): a name that
/// reads the same in every language.
func jsonKind(_ type: Any.Type) -> String {
    switch type {
    case is String.Type: "string"
    case is Bool.Type: "boolean"
    case is any BinaryInteger.Type, is any BinaryFloatingPoint.Type: "number"
    case is [Any].Type: "array"
    case is [String: Any].Type: "object"
    default: String(describing: type)
    }
}
