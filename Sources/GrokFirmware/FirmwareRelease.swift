import Foundation
import GrokBasics
import GrokCrypto
import GrokProtocol
import GrokTUF

// One image format (the vendor's `.ugif`) and one channel (a TUF repository), issue 10
// item 3 and issue 11. What the `.ugif` itself does not say (board revisions, the versions
// it may be installed over, the build date, the reader protocol, release notes, which
// serial numbers it targets) is in the signed `custom` object of its TUF target; its length
// and SHA-256 are the target's own `length` and `hashes`, which every download is checked
// against before anything here reads a byte.

/// The `custom` object of a firmware target (`"kind": "firmware"`), as `grokctl firmware
/// pack` writes it and `grokctl repo add --custom FILE` lists it:
///
/// ```json
/// {"kind": "firmware", "version": "1.8.0", "hardware_type": 5, "hardware_revisions": [3],
///  "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}], "build_date": "2026-11-01T12:00:00Z",
///  "reader_protocol": 20, "notes": {"en": "...", "de": "..."}, "serials": {"ranges": [...]}}
/// ```
///
/// `serials` is optional (absent: every serial number); `notes` needs `en`.
public struct FirmwareReleaseMetadata: Sendable, Hashable, Codable {
    /// `custom.kind` of a firmware target.
    public static let kind = "firmware"
    /// `custom.kind` of a region catalogue target.
    public static let regionCatalogueKind = "region-catalogue"

    /// The application's version; must equal the `.ugif` header's.
    public var version: FirmwareVersion
    /// The hardware kind; must be the `.ugif`'s `READER_HARDWARE_TYPE` (5 is `GR-1`).
    public var hardwareType: HardwareType
    /// Board revisions it fits, strictly ascending, 1 to 64 of them.
    public var hardwareRevisions: [UInt8]
    /// Running versions it may be installed over, 1 to 32 ranges.
    public var appliesTo: [VersionRange]
    /// When it was built.
    public var buildDate: Date
    /// The reader protocol it speaks (the vendor's is 20).
    public var readerProtocol: UInt16
    /// Release notes by language code; `en` is required.
    public var notes: [String: String]
    /// The serial numbers it targets; `nil` for every device.
    public var serials: Cohort?

    public init(version: FirmwareVersion, hardwareType: HardwareType, hardwareRevisions: [UInt8], appliesTo: [VersionRange],
                buildDate: Date, readerProtocol: UInt16, notes: [String: String], serials: Cohort? = nil) {
        self.version = version
        self.hardwareType = hardwareType
        self.hardwareRevisions = hardwareRevisions
        self.appliesTo = appliesTo
        self.buildDate = buildDate
        self.readerProtocol = readerProtocol
        self.notes = notes
        self.serials = serials
    }

    /// What it says the firmware is and where it fits (for ``Compatibility``).
    public var descriptor: FirmwareDescriptor {
        FirmwareDescriptor(hardwareType: hardwareType, hardwareRevisions: hardwareRevisions, version: version,
                           buildDate: buildDate, readerProtocolVersion: readerProtocol, appliesTo: appliesTo)
    }

    /// The rules a signed description must keep (`file` names it in errors).
    public func validate(file: String) throws(FirmwareError) {
        func bad(_ field: String, _ code: String, _ values: [String] = []) -> FirmwareError {
            .metadataMalformed(file: file, field: field, detail: ErrorDetail(code, values))
        }
        guard hardwareType != .unknown else { throw bad("hardware_type", "unknown_hardware_type", [String(HardwareType.grokker1.rawValue)]) }
        guard (1...64).contains(hardwareRevisions.count) else { throw bad("hardware_revisions", "revision_count", ["1", "64"]) }
        guard zip(hardwareRevisions, hardwareRevisions.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw bad("hardware_revisions", "not_ascending")
        }
        guard (1...32).contains(appliesTo.count) else { throw bad("applies_to", "range_count", ["1", "32"]) }
        guard let english = notes["en"], !english.isEmpty else { throw bad("notes", "no_english_notes") }
    }

    /// The description as a target's `custom` object (with `"kind": "firmware"`).
    public func custom() -> JSON {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings, numbers, arrays and objects only: encoding and parsing cannot fail.
        var object = (try! JSONParser.parse(Array(try! encoder.encode(self)))).object!
        object["kind"] = .string(Self.kind)
        return .object(object)
    }

    /// The description a target lists, or `nil` when the target is not firmware. A firmware
    /// target whose custom object breaks the rules is an error naming the target.
    public static func of(_ target: TargetInfo) throws(FirmwareError) -> FirmwareReleaseMetadata? {
        guard let custom = target.custom?.object, custom["kind"]?.string == kind else { return nil }
        return try decode(JSONWriter.encode(.object(custom)), file: target.path)
    }

    /// Decodes and checks a description (the custom object's JSON text).
    public static func decode(_ bytes: [UInt8], file: String) throws(FirmwareError) -> FirmwareReleaseMetadata {
        let metadata: FirmwareReleaseMetadata
        do {
            metadata = try JSONDecoder().decode(FirmwareReleaseMetadata.self, from: Data(bytes))
        } catch {
            let (field, detail) = describe(error)
            throw .metadataMalformed(file: file, field: field, detail: detail)
        }
        try metadata.validate(file: file)
        return metadata
    }

    enum CodingKeys: String, CodingKey {
        case version, notes, serials
        case buildDate = "build_date"
        case readerProtocol = "reader_protocol"
        case hardwareType = "hardware_type"
        case hardwareRevisions = "hardware_revisions"
        case appliesTo = "applies_to"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(FirmwareVersion.self, forKey: .version)
        let dateText = try c.decode(String.self, forKey: .buildDate)
        guard let date = UTCTime.date(dateText) else {
            throw DecodingDetail.error(forKey: CodingKeys.buildDate, in: c, ErrorDetail("not_utc_time", [dateText]))
        }
        buildDate = date
        readerProtocol = try c.decode(UInt16.self, forKey: .readerProtocol)
        // A hardware type this build does not know is unknown: refused by `validate`.
        hardwareType = HardwareType(rawValue: try c.decode(UInt8.self, forKey: .hardwareType)) ?? .unknown
        hardwareRevisions = try c.decode([UInt8].self, forKey: .hardwareRevisions)
        appliesTo = try c.decode([VersionRange].self, forKey: .appliesTo)
        notes = try c.decode([String: String].self, forKey: .notes)
        serials = try c.decodeIfPresent(Cohort.self, forKey: .serials)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(UTCTime.format(buildDate), forKey: .buildDate)
        try c.encode(readerProtocol, forKey: .readerProtocol)
        try c.encode(hardwareType.rawValue, forKey: .hardwareType)
        try c.encode(hardwareRevisions, forKey: .hardwareRevisions)
        try c.encode(appliesTo, forKey: .appliesTo)
        try c.encode(notes, forKey: .notes)
        try c.encodeIfPresent(serials, forKey: .serials)
    }
}

/// A firmware target a channel lists, before its image is downloaded: the target path
/// (`CHANNEL/NAME`), its signed length and SHA-256, and its description.
public struct FirmwareListing: Sendable, Hashable {
    /// The target path, `release/GR-1_1-8-0_demo.ugif`.
    public let path: String
    /// The target name within its channel (the file name).
    public var name: String { path.split(separator: "/").last.map(String.init) ?? path }
    /// The image's length in bytes (signed, checked on download).
    public let length: Int
    /// The image's SHA-256 (signed, checked on download).
    public let sha256: SHA256Digest
    /// What the target's custom object says.
    public let metadata: FirmwareReleaseMetadata

    /// A listing of `bytes` as target `path` (what a publisher checks before adding it).
    public init(path: String, bytes: [UInt8], metadata: FirmwareReleaseMetadata) {
        self.path = path
        length = bytes.count
        sha256 = SHA256.hash(bytes)
        self.metadata = metadata
    }

    /// The listing of `target`, `nil` when it is not firmware.
    public init?(_ target: TargetInfo) throws(FirmwareError) {
        guard let metadata = try FirmwareReleaseMetadata.of(target) else { return nil }
        guard let hex = target.hashes["sha256"], let digest = SHA256Digest(hex: hex), let length = Int(exactly: target.length) else {
            throw .metadataMalformed(file: target.path, field: "hashes", detail: ErrorDetail("no_sha256"))
        }
        path = target.path
        self.length = length
        sha256 = digest
        self.metadata = metadata
    }

    /// How this firmware relates to `device` (hardware, revision, applies-to ranges, reader
    /// protocol, targeted serials), then downgrade / same / upgrade.
    public func compatibility(with device: DeviceIdentity,
                              hostProtocols: ClosedRange<UInt16> = Compatibility.hostReaderProtocols) -> FirmwareCompatibility {
        let result = Compatibility.check(metadata.descriptor, against: device, hostProtocols: hostProtocols)
        if result != .invalid, let serials = metadata.serials, !serials.contains(device.serialNumber) { return .incompatible }
        return result
    }
}

/// A verified firmware release: the `.ugif` image downloaded through TUF (length and
/// SHA-256 as signed), parsed, and agreeing with its signed description. What the fleet
/// engine flashes and judges against a reader.
public struct FirmwareRelease: Sendable, Hashable {
    /// The target path, `release/GR-1_1-8-0_demo.ugif`.
    public let path: String
    /// The parsed image (loader and application sections).
    public let ugif: UgifImage
    /// The image file's bytes, exactly as signed.
    public let bytes: [UInt8]
    /// The application's version (the `.ugif` header's, equal to the description's).
    public let version: FirmwareVersion
    /// SHA-256 of the `.ugif` file.
    public let sha256: SHA256Digest
    /// Length of the `.ugif` file in bytes.
    public let length: Int
    public let hardwareType: HardwareType
    public let hardwareRevisions: [UInt8]
    public let appliesTo: [VersionRange]
    public let buildDate: Date
    public let readerProtocol: UInt16
    /// Release notes by language (`en` always present).
    public let notes: [String: String]
    /// Targeted serial numbers, `nil` for all.
    public let serials: Cohort?

    /// The release in `bytes`, the image of `listing`: the bytes must have the listing's
    /// length and SHA-256 (they do when they came through ``StationRepository``; checked
    /// again here), parse as a `.ugif` named by the target's file name, and agree with the
    /// description on version and hardware type.
    public init(listing: FirmwareListing, bytes: [UInt8]) throws(FirmwareError) {
        guard bytes.count == listing.length else {
            throw .imageSizeMismatch(file: listing.path, expected: listing.length, found: bytes.count)
        }
        let digest = SHA256.hash(bytes)
        guard digest == listing.sha256 else {
            throw .imageHashMismatch(file: listing.path, expected: listing.sha256.hex, found: digest.hex)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .invalidInput(file: listing.path, detail: ErrorDetail("not_utf8"))
        }
        let image: UgifImage
        do throws(UgifError) { image = try UgifImage.parse(text, fileName: listing.name) } catch {
            throw .invalidInput(file: listing.path, detail: .ugif(error))
        }
        let metadata = listing.metadata
        let headerVersion = FirmwareVersion(major: image.version.major, minor: image.version.minor, build: UInt16(image.version.build))
        guard headerVersion == metadata.version else {
            throw .imageHeaderMismatch(file: listing.path, field: "version", expected: metadata.version.description,
                                       found: headerVersion.description)
        }
        let typeName = FirmwareRelease.hardwareTypeName(metadata.hardwareType)
        guard image.hardwareTypeName == typeName else {
            throw .imageHeaderMismatch(file: listing.path, field: "READER_HARDWARE_TYPE", expected: typeName, found: image.hardwareTypeName)
        }
        path = listing.path
        ugif = image
        self.bytes = bytes
        version = headerVersion
        sha256 = digest
        length = bytes.count
        hardwareType = metadata.hardwareType
        hardwareRevisions = metadata.hardwareRevisions
        appliesTo = metadata.appliesTo
        buildDate = metadata.buildDate
        readerProtocol = metadata.readerProtocol
        notes = metadata.notes
        serials = metadata.serials
    }

    /// Checks `bytes` as the release `path` described by `metadata` before it is published:
    /// a `.ugif` named as the vendor names them, agreeing with the description.
    public static func check(_ bytes: [UInt8], path: String, metadata: FirmwareReleaseMetadata) throws(FirmwareError) -> FirmwareRelease {
        try metadata.validate(file: path)
        return try FirmwareRelease(listing: FirmwareListing(path: path, bytes: bytes, metadata: metadata), bytes: bytes)
    }

    /// The description it was verified against.
    public var metadata: FirmwareReleaseMetadata {
        FirmwareReleaseMetadata(version: version, hardwareType: hardwareType, hardwareRevisions: hardwareRevisions,
                                appliesTo: appliesTo, buildDate: buildDate, readerProtocol: readerProtocol, notes: notes,
                                serials: serials)
    }

    /// The notes in `language`, else in English.
    public func notes(in language: String) -> String { notes[language] ?? notes["en"] ?? "" }

    /// How this release relates to `device`: ``FirmwareListing/compatibility(with:hostProtocols:)``.
    public func compatibility(with device: DeviceIdentity,
                              hostProtocols: ClosedRange<UInt16> = Compatibility.hostReaderProtocols) -> FirmwareCompatibility {
        let result = Compatibility.check(metadata.descriptor, against: device, hostProtocols: hostProtocols)
        if result != .invalid, let serials, !serials.contains(device.serialNumber) { return .incompatible }
        return result
    }

    /// How this release relates to a reader by its GetVersion answer.
    public func compatibility(with reader: VendorReaderVersion,
                              hostProtocols: ClosedRange<UInt16> = Compatibility.hostReaderProtocols) -> FirmwareCompatibility {
        compatibility(with: DeviceIdentity(reader), hostProtocols: hostProtocols)
    }

    /// The vendor library's name of a hardware type (the `.ugif` `READER_HARDWARE_TYPE`).
    public static func hardwareTypeName(_ type: HardwareType) -> String {
        switch type {
        case .grokker1: "GR-1"
        case .unknown: "Illegal Device #"
        }
    }
}

extension DeviceIdentity {
    /// The identity in a reader's GetVersion answer (vendor stack). A hardware type this
    /// build does not know is ``HardwareType/unknown`` (then every firmware is INVALID for it).
    public init(_ reader: VendorReaderVersion) {
        let type = reader.hardwareType <= UInt16(UInt8.max) ? HardwareType(rawValue: UInt8(reader.hardwareType)) ?? .unknown : .unknown
        self.init(hardwareType: type, hardwareRevision: reader.hardwareRevision,
                  firmwareVersion: FirmwareVersion(major: reader.firmwareMajor, minor: reader.firmwareMinor, build: UInt16(reader.firmwareBuild)),
                  readerProtocolVersion: UInt16(clamping: reader.protocolVersion), serialNumber: reader.serialNumber)
    }
}

/// One channel of a station's TUF repository: its firmware listings, verified releases and
/// (when it lists one) the region catalogue. Every call refreshes the trusted metadata
/// through ``StationRepository`` (one locked, all-or-nothing update); nothing is read that
/// TUF did not verify.
public struct FirmwareChannel: Sendable {
    public let repository: StationRepository
    /// The channel name (`release`, `development`): its targets are `NAME/...`.
    public let name: String

    public init(repository: StationRepository, name: String) {
        self.repository = repository
        self.name = name
    }

    /// Refreshes and lists the channel's firmware targets, newest version first.
    public func listings() async throws -> [FirmwareListing] {
        let update = try await repository.update(channels: [name])
        return try Self.listings(update.targets[name] ?? [])
    }

    static func listings(_ targets: [TargetInfo]) throws(FirmwareError) -> [FirmwareListing] {
        var out: [FirmwareListing] = []
        for target in targets {
            if let listing = try FirmwareListing(target) { out.append(listing) }
        }
        return out.sorted { ($0.metadata.version, $0.path) > ($1.metadata.version, $1.path) }
    }

    /// The verified release `name` (a target name of this channel, or a full path):
    /// refreshed, downloaded unless the state directory already holds the verified image,
    /// parsed and checked. Throws ``FirmwareError/updateNotListed(channel:name:)`` when the
    /// channel lists no such firmware.
    public func target(named target: String) async throws -> FirmwareRelease {
        let path = target.hasPrefix(name + "/") ? target : name + "/" + target
        let update = try await repository.update(channels: [name])
        guard let listing = try Self.listings(update.targets[name] ?? []).first(where: { $0.path == path }) else {
            throw FirmwareError.updateNotListed(channel: name, name: target)
        }
        let downloaded = try await repository.update(channels: [name], download: [path])
        guard let file = downloaded.files[path], let data = FileManager.default.contents(atPath: file) else {
            throw FirmwareError.imageNotCached(name: path, sha256: listing.sha256.hex)
        }
        return try FirmwareRelease(listing: listing, bytes: Array(data))
    }

    /// The region catalogue this channel lists (the target whose custom kind is
    /// `region-catalogue`; the newest catalogue version when there are several), verified
    /// by TUF and by the catalogue's own rules.
    public func regionCatalogue() async throws -> RegionCatalogue {
        let update = try await repository.update(channels: [name])
        let catalogues = (update.targets[name] ?? []).filter {
            $0.custom?.object?["kind"]?.string == FirmwareReleaseMetadata.regionCatalogueKind
        }
        guard let target = catalogues.max(by: {
            ($0.custom?.object?["version"]?.int64 ?? 0, $0.path) < ($1.custom?.object?["version"]?.int64 ?? 0, $1.path)
        }) else {
            throw FirmwareError.updateNotListed(channel: name, name: "region catalogue")
        }
        let downloaded = try await repository.update(channels: [name], download: [target.path])
        guard let file = downloaded.files[target.path], let data = FileManager.default.contents(atPath: file) else {
            throw FirmwareError.imageNotCached(name: target.path, sha256: target.hashes["sha256"] ?? "")
        }
        return try RegionCatalogue.decode(Array(data), file: target.path)
    }
}
