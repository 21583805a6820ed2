import Foundation
import GrokCrypto
import GrokProtocol

/// A named set of devices an update can target: single serial numbers and inclusive serial
/// ranges. Defined once in the metadata's `cohorts` and referred to by name from entries.
/// JSON: `{"serials": [1001, 1002], "ranges": [{"from": 20000, "through": 20999}]}`.
public struct Cohort: Sendable, Hashable, Codable {
    /// An inclusive range of serial numbers.
    public struct SerialRange: Sendable, Hashable, Codable {
        /// The first serial number in the range.
        public var from: UInt32
        /// The last serial number in the range.
        public var through: UInt32

        /// Creates a range.
        public init(from: UInt32, through: UInt32) {
            self.from = from
            self.through = through
        }
    }

    /// Serial numbers in the cohort.
    public var serials: [UInt32]
    /// Serial ranges in the cohort.
    public var ranges: [SerialRange]

    /// Creates a cohort.
    public init(serials: [UInt32] = [], ranges: [SerialRange] = []) {
        self.serials = serials
        self.ranges = ranges
    }

    /// Whether `serial` belongs to the cohort.
    public func contains(_ serial: UInt32) -> Bool {
        serials.contains(serial) || ranges.contains { $0.from <= serial && serial <= $0.through }
    }

    enum CodingKeys: String, CodingKey { case serials, ranges }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serials = try container.decodeIfPresent([UInt32].self, forKey: .serials) ?? []
        ranges = try container.decodeIfPresent([SerialRange].self, forKey: .ranges) ?? []
    }
}

/// Which devices an update is for: listed serial numbers and members of named cohorts. An
/// entry without targeting is for every device it is compatible with.
/// JSON: `{"serials": [12345], "cohorts": ["pilot"]}`.
public struct Targeting: Sendable, Hashable, Codable {
    /// Serial numbers targeted directly.
    public var serials: [UInt32]
    /// Names of cohorts (defined in the metadata's `cohorts`) targeted.
    public var cohorts: [String]

    /// Creates targeting.
    public init(serials: [UInt32] = [], cohorts: [String] = []) {
        self.serials = serials
        self.cohorts = cohorts
    }

    enum CodingKeys: String, CodingKey { case serials, cohorts }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serials = try container.decodeIfPresent([UInt32].self, forKey: .serials) ?? []
        cohorts = try container.decodeIfPresent([String].self, forKey: .cohorts) ?? []
    }
}

/// One update a channel lists: what the image is, where it fits, its file on the server,
/// size and SHA-256, notes, and optional targeting.
public struct UpdateEntry: Sendable, Hashable, Codable {
    /// The update's name, unique within the channel (vendor `name`).
    public var name: String
    /// The image's path on the server, relative to the channel's directory.
    public var file: String
    /// The firmware version.
    public var version: FirmwareVersion
    /// The build date (whole seconds, UTC; ISO 8601 in JSON).
    public var buildDate: Date
    /// The reader protocol the firmware implements (vendor `protocol`).
    public var readerProtocolVersion: UInt16
    /// The hardware it is for.
    public var hardwareType: HardwareType
    /// The hardware revisions it fits.
    public var hardwareRevisions: [UInt8]
    /// The firmware versions it may be applied on (vendor `compatibility`).
    public var appliesTo: [VersionRange]
    /// The image's size in bytes.
    public var size: Int
    /// The image's SHA-256.
    public var sha256: SHA256Digest
    /// Release notes by language code (`en` required; `es`, `fr`, `de` as given).
    public var notes: [String: String]
    /// The devices it is for; `nil` for all compatible devices.
    public var targets: Targeting?

    /// Creates an entry.
    public init(name: String, file: String, descriptor: FirmwareDescriptor, size: Int, sha256: SHA256Digest,
                notes: [String: String], targets: Targeting? = nil) {
        self.name = name
        self.file = file
        version = descriptor.version
        buildDate = descriptor.buildDate
        readerProtocolVersion = descriptor.readerProtocolVersion
        hardwareType = descriptor.hardwareType
        hardwareRevisions = descriptor.hardwareRevisions
        appliesTo = descriptor.appliesTo
        self.size = size
        self.sha256 = sha256
        self.notes = notes
        self.targets = targets
    }

    /// What the entry says the image is and where it fits.
    public var descriptor: FirmwareDescriptor {
        FirmwareDescriptor(hardwareType: hardwareType, hardwareRevisions: hardwareRevisions, version: version,
                           buildDate: buildDate, readerProtocolVersion: readerProtocolVersion, appliesTo: appliesTo)
    }

    /// The notes in `language`, else in English.
    public func notes(in language: String) -> String {
        notes[language] ?? notes["en"] ?? ""
    }

    enum CodingKeys: String, CodingKey {
        case name, file, version, notes, targets, size, sha256
        case buildDate = "build_date"
        case readerProtocolVersion = "reader_protocol"
        case hardwareType = "hardware_type"
        case hardwareRevisions = "hardware_revisions"
        case appliesTo = "applies_to"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        file = try c.decode(String.self, forKey: .file)
        version = try c.decode(FirmwareVersion.self, forKey: .version)
        let dateText = try c.decode(String.self, forKey: .buildDate)
        guard let date = UTCTime.date(dateText) else {
            throw DecodingError.dataCorruptedError(forKey: .buildDate, in: c, debugDescription: "'\(dateText)' is not YYYY-MM-DDTHH:MM:SSZ")
        }
        buildDate = date
        readerProtocolVersion = try c.decode(UInt16.self, forKey: .readerProtocolVersion)
        // A hardware type this build does not know is kept as unknown: such an entry is
        // INVALID for every device, and the rest of the channel stays usable.
        hardwareType = HardwareType(rawValue: try c.decode(UInt8.self, forKey: .hardwareType)) ?? .unknown
        hardwareRevisions = try c.decode([UInt8].self, forKey: .hardwareRevisions)
        appliesTo = try c.decode([VersionRange].self, forKey: .appliesTo)
        size = try c.decode(Int.self, forKey: .size)
        sha256 = try c.decode(SHA256Digest.self, forKey: .sha256)
        notes = try c.decode([String: String].self, forKey: .notes)
        targets = try c.decodeIfPresent(Targeting.self, forKey: .targets)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(file, forKey: .file)
        try c.encode(version, forKey: .version)
        try c.encode(UTCTime.format(buildDate), forKey: .buildDate)
        try c.encode(readerProtocolVersion, forKey: .readerProtocolVersion)
        try c.encode(hardwareType.rawValue, forKey: .hardwareType)
        try c.encode(hardwareRevisions, forKey: .hardwareRevisions)
        try c.encode(appliesTo, forKey: .appliesTo)
        try c.encode(size, forKey: .size)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(notes, forKey: .notes)
        try c.encodeIfPresent(targets, forKey: .targets)
    }
}

/// The metadata of one channel: the signed payload of `channel.json`.
public struct ChannelMetadata: Sendable, Hashable, Codable {
    /// The `type` every channel payload carries.
    public static let typeMarker = "grokctl-firmware-channel"
    /// The largest envelope read (4 MiB): more is not channel metadata.
    public static let maxEnvelopeSize = 4 * 1024 * 1024

    /// Always ``typeMarker``.
    public var type: String
    /// The channel's name: `release`, `development`, ...
    public var channel: String
    /// The metadata version: raised by the publisher on every change, never lowered.
    public var version: UInt64
    /// When the metadata stops being trusted (whole seconds, UTC; ISO 8601 in JSON).
    public var expires: Date
    /// Named device cohorts the entries may target.
    public var cohorts: [String: Cohort]
    /// The updates.
    public var updates: [UpdateEntry]

    /// Creates metadata.
    public init(channel: String, version: UInt64, expires: Date, cohorts: [String: Cohort] = [:], updates: [UpdateEntry]) {
        type = Self.typeMarker
        self.channel = channel
        self.version = version
        self.expires = Date(timeIntervalSince1970: expires.timeIntervalSince1970.rounded(.down))
        self.cohorts = cohorts
        self.updates = updates
    }

    /// The entry named `name`.
    public func entry(named name: String) -> UpdateEntry? { updates.first { $0.name == name } }

    /// Whether `entry` is for the device with serial number `serial` (true when untargeted).
    public func targets(_ entry: UpdateEntry, serial: UInt32) -> Bool {
        guard let targets = entry.targets else { return true }
        return targets.serials.contains(serial) || targets.cohorts.contains { cohorts[$0]?.contains(serial) ?? false }
    }

    /// The payload bytes: pretty JSON with sorted keys.
    public func payload() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Every field encodes as a string, number, array or object: this cannot fail.
        let data = try! encoder.encode(self)
        return Array(data) + [0x0A]
    }

    /// Decodes and checks a payload: JSON shape, then the rules JSON cannot say (valid
    /// channel name, unique update names, safe relative file names, English notes, known
    /// cohorts, sizes within limits).
    public static func decode(_ payload: [UInt8], file: String) throws(FirmwareError) -> ChannelMetadata {
        // The type first, so a different kind of file gets a type error, not a missing field.
        struct Marker: Decodable { var type: String? }
        if let marker = try? JSONDecoder().decode(Marker.self, from: Data(payload)), marker.type != typeMarker {
            throw .typeMismatch(file: file, expected: typeMarker, found: marker.type ?? "(none)")
        }
        let metadata: ChannelMetadata
        do {
            metadata = try JSONDecoder().decode(ChannelMetadata.self, from: Data(payload))
        } catch {
            let (field, detail) = describe(error)
            throw .metadataMalformed(file: file, field: field, detail: detail)
        }
        try metadata.validate(file: file)
        return metadata
    }

    func validate(file: String) throws(FirmwareError) {
        func bad(_ field: String, _ detail: String) -> FirmwareError { .metadataMalformed(file: file, field: field, detail: detail) }
        guard type == Self.typeMarker else { throw .typeMismatch(file: file, expected: Self.typeMarker, found: type) }
        guard Self.isValidChannelName(channel) else { throw bad("channel", "'\(channel)' is not a channel name") }
        var names = Set<String>()
        for (index, entry) in updates.enumerated() {
            let at = "updates[\(index)]"
            guard !entry.name.isEmpty, entry.name.utf8.count <= 128 else { throw bad(at + ".name", "must be 1 to 128 bytes") }
            guard names.insert(entry.name).inserted else { throw bad(at + ".name", "'\(entry.name)' is listed twice") }
            guard Self.isSafeRelativePath(entry.file) else {
                throw bad(at + ".file", "'\(entry.file)' is not a relative path of letters, digits, '.', '-' and '_'")
            }
            guard entry.size > 0, entry.size <= 64 * 1024 * 1024 else { throw bad(at + ".size", "must be 1 byte to 64 MiB") }
            guard !entry.hardwareRevisions.isEmpty else { throw bad(at + ".hardware_revisions", "lists no revision") }
            guard !entry.appliesTo.isEmpty else { throw bad(at + ".applies_to", "lists no version range") }
            guard entry.notes["en"] != nil else { throw bad(at + ".notes", "has no English (en) notes") }
            for cohort in entry.targets?.cohorts ?? [] where cohorts[cohort] == nil {
                throw bad(at + ".targets.cohorts", "cohort '\(cohort)' is not defined in 'cohorts'")
            }
        }
    }

    /// Whether `name` can be a channel name (and so a directory and file name): 1 to 64 of
    /// `a-z`, `0-9`, `-`, `_`, starting with a letter or digit.
    public static func isValidChannelName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.enumerated().allSatisfy { index, c in
            (0x61...0x7A).contains(c) || (0x30...0x39).contains(c) || (index > 0 && (c == 0x2D || c == 0x5F))
        }
    }

    /// Whether `path` is a safe relative path: components of `A-Z a-z 0-9 . - _`, none
    /// empty, `.` or `..`, at most 200 bytes.
    static func isSafeRelativePath(_ path: String) -> Bool {
        guard !path.isEmpty, path.utf8.count <= 200 else { return false }
        return path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { part in
            !part.isEmpty && part != "." && part != ".." && part.utf8.allSatisfy { c in
                (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c) || c == 0x2E || c == 0x2D || c == 0x5F
            }
        }
    }

    enum CodingKeys: String, CodingKey { case type, channel, version, expires, cohorts, updates }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(String.self, forKey: .type)
        channel = try c.decode(String.self, forKey: .channel)
        version = try c.decode(UInt64.self, forKey: .version)
        let text = try c.decode(String.self, forKey: .expires)
        guard let date = UTCTime.date(text) else {
            throw DecodingError.dataCorruptedError(forKey: .expires, in: c, debugDescription: "'\(text)' is not YYYY-MM-DDTHH:MM:SSZ")
        }
        expires = date
        cohorts = try c.decodeIfPresent([String: Cohort].self, forKey: .cohorts) ?? [:]
        updates = try c.decode([UpdateEntry].self, forKey: .updates)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(channel, forKey: .channel)
        try c.encode(version, forKey: .version)
        try c.encode(UTCTime.format(expires), forKey: .expires)
        if !cohorts.isEmpty { try c.encode(cohorts, forKey: .cohorts) }
        try c.encode(updates, forKey: .updates)
    }
}

/// The field path and a short explanation of a JSON decoding failure.
func describe(_ error: any Error) -> (field: String, detail: String) {
    func path(_ keys: [any CodingKey]) -> String {
        let text = keys.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
        return text.hasPrefix(".") ? String(text.dropFirst()) : (text.isEmpty ? "(top level)" : text)
    }
    guard let decoding = error as? DecodingError else { return ("(top level)", "not valid JSON") }
    switch decoding {
    case .keyNotFound(let key, let context):
        return (path(context.codingPath + [key]), "is missing")
    case .typeMismatch(let type, let context):
        return (path(context.codingPath), "is not a \(type)")
    case .valueNotFound(let type, let context):
        return (path(context.codingPath), "is null, expected a \(type)")
    case .dataCorrupted(let context):
        return (path(context.codingPath), context.codingPath.isEmpty ? "not valid JSON" : context.debugDescription)
    @unknown default:
        return ("(top level)", "not valid")
    }
}
