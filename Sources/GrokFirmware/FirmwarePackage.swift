import Foundation
import GrokCrypto
import GrokProtocol

/// An inclusive range of firmware versions, `min` through `max`. JSON:
/// `{"min": "1.0.0", "max": "1.7.65535"}`.
public struct VersionRange: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The lowest version in the range.
    public let min: FirmwareVersion
    /// The highest version in the range.
    public let max: FirmwareVersion

    /// A range; throws when `min` is above `max`.
    public init(min: FirmwareVersion, max: FirmwareVersion) throws(FirmwareError) {
        guard min <= max else {
            throw .invalidInput(file: "<range>", detail: "version range \(min) - \(max) runs backwards")
        }
        self.min = min
        self.max = max
    }

    /// Whether `version` lies in the range.
    public func contains(_ version: FirmwareVersion) -> Bool { min <= version && version <= max }

    /// `min-max`, for example `1.0.0-1.7.65535`.
    public var description: String { "\(min)-\(max)" }

    enum CodingKeys: String, CodingKey { case min, max }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let low = try container.decode(FirmwareVersion.self, forKey: .min)
        let high = try container.decode(FirmwareVersion.self, forKey: .max)
        guard low <= high else {
            throw DecodingError.dataCorruptedError(forKey: .max, in: container, debugDescription: "range \(low) - \(high) runs backwards")
        }
        min = low
        max = high
    }
}

/// Which part of the device's flash a segment goes to.
public enum SegmentKind: UInt8, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The loader: the part that flashes the application (vendor "loader" image).
    case loader = 1
    /// The application: the reader firmware (vendor "reader" image).
    case application = 2

    public var description: String {
        switch self {
        case .loader: "loader"
        case .application: "application"
        }
    }
}

/// One segment of a package: its kind, load address and bytes; the CRC-32 is computed.
public struct FirmwareSegment: Sendable, Hashable {
    /// The kind.
    public let kind: SegmentKind
    /// The flash address of the first byte.
    public let address: UInt32
    /// The bytes.
    public let bytes: [UInt8]
    /// The CRC-32 (IEEE) of ``bytes``, as the device checks it.
    public let crc32: UInt32

    /// A segment; throws when it is empty, longer than ``FirmwarePackage/maxSegmentLength``
    /// or runs past the 4 GiB address space.
    public init(kind: SegmentKind, address: UInt32, bytes: [UInt8]) throws(FirmwareError) {
        guard !bytes.isEmpty, bytes.count <= FirmwarePackage.maxSegmentLength,
              UInt64(address) + UInt64(bytes.count) <= 1 << 32
        else {
            throw .invalidInput(file: "<segment>", detail: "the \(kind) segment must hold 1 to \(FirmwarePackage.maxSegmentLength) bytes within the 4 GiB address space")
        }
        self.kind = kind
        self.address = address
        self.bytes = bytes
        crc32 = CRC32.checksum(bytes)
    }

    /// The address one past the last byte.
    public var end: UInt64 { UInt64(address) + UInt64(bytes.count) }
}

/// What a package or an update entry says it is and where it fits: the fields the
/// compatibility check and the binding of an image to its metadata compare.
public struct FirmwareDescriptor: Sendable, Hashable {
    /// The hardware it is built for.
    public var hardwareType: HardwareType
    /// The hardware revisions it fits, ascending, no duplicates.
    public var hardwareRevisions: [UInt8]
    /// Its version.
    public var version: FirmwareVersion
    /// Its build date (whole seconds, UTC).
    public var buildDate: Date
    /// The reader protocol version the firmware implements.
    public var readerProtocolVersion: UInt16
    /// The firmware versions it may be applied on.
    public var appliesTo: [VersionRange]

    /// Creates a descriptor; revisions are sorted and deduplicated, the date is cut to whole seconds.
    public init(hardwareType: HardwareType, hardwareRevisions: [UInt8], version: FirmwareVersion, buildDate: Date,
                readerProtocolVersion: UInt16, appliesTo: [VersionRange]) {
        self.hardwareType = hardwareType
        self.hardwareRevisions = Array(Set(hardwareRevisions)).sorted()
        self.version = version
        self.buildDate = Date(timeIntervalSince1970: buildDate.timeIntervalSince1970.rounded(.down))
        self.readerProtocolVersion = readerProtocolVersion
        self.appliesTo = appliesTo
    }

    /// Seconds since 1970 of the build date.
    var buildSeconds: Int64 { Int64(buildDate.timeIntervalSince1970.rounded(.down)) }
}

/// A firmware package (`.grokfw`): a header saying what the firmware is and where it fits,
/// the loader and application segments, and a SHA-256 over everything. The byte layout is
/// in docs/firmware-format.md; ``parse(_:file:)`` checks every length, value, CRC and the
/// hash, and refuses trailing bytes.
public struct FirmwarePackage: Sendable, Hashable {
    /// The first 8 bytes of every package: `\x89GRKFW\r\n` (a non-ASCII first byte and a
    /// CR LF catch text-mode transfers).
    public static let magic: [UInt8] = [0x89, 0x47, 0x52, 0x4B, 0x46, 0x57, 0x0D, 0x0A]
    /// The format version this build writes and reads.
    public static let formatVersion: UInt16 = 1
    /// The longest segment (16 MiB).
    public static let maxSegmentLength = 16 * 1024 * 1024
    /// The most hardware revisions one package lists.
    public static let maxRevisions = 64
    /// The most applies-to ranges one package lists.
    public static let maxRanges = 32

    /// What the package is and where it fits.
    public let descriptor: FirmwareDescriptor
    /// The loader segment, when the package carries one.
    public let loader: FirmwareSegment?
    /// The application segment.
    public let application: FirmwareSegment
    /// The SHA-256 of the whole package file (what channel metadata lists).
    public let sha256: SHA256Digest
    /// The package's size in bytes.
    public let size: Int

    /// A package; throws when a field is out of the format's range (no revisions, unknown
    /// hardware, no applies-to range, overlapping segments, ...).
    public init(descriptor: FirmwareDescriptor, loader: FirmwareSegment?, application: FirmwareSegment) throws(FirmwareError) {
        let file = "<new package>"
        try Self.validate(descriptor, file: file)
        guard application.kind == .application else {
            throw .packageInvalidField(file: file, field: "application.kind", expected: "application", found: "\(application.kind)")
        }
        if let loader {
            guard loader.kind == .loader else {
                throw .packageInvalidField(file: file, field: "loader.kind", expected: "loader", found: "\(loader.kind)")
            }
            guard loader.end <= UInt64(application.address) || application.end <= UInt64(loader.address) else {
                throw .packageInvalidField(file: file, field: "segments", expected: "loader and application at separate addresses", found: "overlapping")
            }
        }
        self.descriptor = descriptor
        self.loader = loader
        self.application = application
        let bytes = Self.encode(descriptor, loader, application)
        sha256 = SHA256.hash(bytes)
        size = bytes.count
    }

    /// The package's bytes.
    public func encoded() -> [UInt8] { Self.encode(descriptor, loader, application) }

    /// The segments in file order (loader first).
    public var segments: [FirmwareSegment] { (loader.map { [$0] } ?? []) + [application] }

    // MARK: Reading

    /// Parses and checks a package.
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - file: the name used in errors.
    public static func parse(_ bytes: [UInt8], file: String = "<package>") throws(FirmwareError) -> FirmwarePackage {
        var reader = PackageReader(bytes: bytes, file: file)
        guard try reader.take(8, "magic") == magic[...] else { throw .packageBadMagic(file: file) }
        let format = try reader.u16("format version")
        guard format == formatVersion else { throw .packageUnsupportedFormat(file: file, found: Int(format)) }
        let typeRaw = try reader.u8("hardware type")
        guard let type = HardwareType(rawValue: typeRaw), type != .unknown else {
            throw .packageInvalidField(file: file, field: "hardware type", expected: "a known hardware type (5 = GROKKER_1)", found: String(typeRaw))
        }
        let revisionCount = Int(try reader.u8("hardware revision count"))
        guard (1...maxRevisions).contains(revisionCount) else {
            throw .packageInvalidField(file: file, field: "hardware revision count", expected: "1-\(maxRevisions)", found: String(revisionCount))
        }
        let revisions = Array(try reader.take(revisionCount, "hardware revisions"))
        guard zip(revisions, revisions.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw .packageInvalidField(file: file, field: "hardware revisions", expected: "ascending without repeats", found: revisions.map(String.init).joined(separator: ","))
        }
        let version = try reader.version("firmware version")
        let date = try reader.i64("build date")
        guard date >= 0 && date < 253_402_300_800 else {
            throw .packageInvalidField(file: file, field: "build date", expected: "seconds since 1970 before year 10000", found: String(date))
        }
        let readerProtocol = try reader.u16("reader protocol version")
        let rangeCount = Int(try reader.u8("applies-to range count"))
        guard (1...maxRanges).contains(rangeCount) else {
            throw .packageInvalidField(file: file, field: "applies-to range count", expected: "1-\(maxRanges)", found: String(rangeCount))
        }
        var ranges: [VersionRange] = []
        for index in 0..<rangeCount {
            let low = try reader.version("applies-to range \(index + 1) min")
            let high = try reader.version("applies-to range \(index + 1) max")
            guard low <= high else {
                throw .packageInvalidField(file: file, field: "applies-to range \(index + 1)", expected: "min <= max", found: "\(low)-\(high)")
            }
            ranges.append(try VersionRange(min: low, max: high))
        }
        let segmentCount = Int(try reader.u8("segment count"))
        guard (1...2).contains(segmentCount) else {
            throw .packageInvalidField(file: file, field: "segment count", expected: "1 or 2", found: String(segmentCount))
        }
        var table: [(kind: SegmentKind, address: UInt32, length: Int, crc: UInt32)] = []
        for index in 0..<segmentCount {
            let name = "segment \(index + 1)"
            let kindRaw = try reader.u8(name + " kind")
            let expectedKind: SegmentKind = segmentCount == 2 && index == 0 ? .loader : .application
            guard kindRaw == expectedKind.rawValue else {
                throw .packageInvalidField(file: file, field: name + " kind", expected: "\(expectedKind.rawValue) (\(expectedKind))", found: String(kindRaw))
            }
            let address = try reader.u32(name + " address")
            let length = Int(try reader.u32(name + " length"))
            guard length >= 1, length <= maxSegmentLength, UInt64(address) + UInt64(length) <= 1 << 32 else {
                throw .packageInvalidField(file: file, field: name + " length", expected: "1-\(maxSegmentLength) bytes within 4 GiB", found: String(length))
            }
            table.append((expectedKind, address, length, try reader.u32(name + " CRC-32")))
        }
        if table.count == 2 {
            let (a, b) = (table[0], table[1])
            guard UInt64(a.address) + UInt64(a.length) <= UInt64(b.address) || UInt64(b.address) + UInt64(b.length) <= UInt64(a.address) else {
                throw .packageInvalidField(file: file, field: "segments", expected: "loader and application at separate addresses", found: "overlapping")
            }
        }
        var contents: [[UInt8]] = []
        for entry in table { contents.append(Array(try reader.take(entry.length, "\(entry.kind) segment bytes"))) }
        let hashed = reader.offset
        let recorded = Array(try reader.take(32, "SHA-256"))
        guard reader.remaining == 0 else { throw .packageTrailingBytes(file: file, count: reader.remaining) }
        let actual = SHA256.hash(bytes[0..<hashed])
        guard actual.bytes == recorded else {
            throw .packageHashMismatch(file: file, expected: Hex.encode(recorded), found: actual.hex)
        }
        var segments: [FirmwareSegment] = []
        for (entry, content) in zip(table, contents) {
            let segment = try FirmwareSegment(kind: entry.kind, address: entry.address, bytes: content)
            guard segment.crc32 == entry.crc else {
                throw .packageSegmentCRC(file: file, segment: "\(entry.kind)", expected: crcText(entry.crc), found: crcText(segment.crc32))
            }
            segments.append(segment)
        }
        let descriptor = FirmwareDescriptor(
            hardwareType: type, hardwareRevisions: revisions, version: version,
            buildDate: Date(timeIntervalSince1970: TimeInterval(date)), readerProtocolVersion: readerProtocol, appliesTo: ranges)
        return try FirmwarePackage(descriptor: descriptor, loader: segments.count == 2 ? segments[0] : nil, application: segments.last!)
    }

    static func crcText(_ crc: UInt32) -> String { FirmwareError.hex32(crc) }

    static func validate(_ d: FirmwareDescriptor, file: String) throws(FirmwareError) {
        guard d.hardwareType != .unknown else {
            throw .packageInvalidField(file: file, field: "hardware type", expected: "a known hardware type", found: "unknown")
        }
        guard (1...maxRevisions).contains(d.hardwareRevisions.count) else {
            throw .packageInvalidField(file: file, field: "hardware revision count", expected: "1-\(maxRevisions)", found: String(d.hardwareRevisions.count))
        }
        guard (1...maxRanges).contains(d.appliesTo.count) else {
            throw .packageInvalidField(file: file, field: "applies-to range count", expected: "1-\(maxRanges)", found: String(d.appliesTo.count))
        }
        guard d.buildSeconds >= 0 && d.buildSeconds < 253_402_300_800 else {
            throw .packageInvalidField(file: file, field: "build date", expected: "1970-9999", found: String(d.buildSeconds))
        }
    }

    // MARK: Writing

    private static func encode(_ d: FirmwareDescriptor, _ loader: FirmwareSegment?, _ application: FirmwareSegment) -> [UInt8] {
        var out = magic
        func u16(_ v: UInt16) { out += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((v >> UInt32(shift)) & 0xFF)) } }
        func version(_ v: FirmwareVersion) { out += [v.major, v.minor]; u16(v.build) }
        u16(formatVersion)
        out.append(d.hardwareType.rawValue)
        out.append(UInt8(d.hardwareRevisions.count))
        out += d.hardwareRevisions
        version(d.version)
        let date = UInt64(bitPattern: d.buildSeconds)
        u32(UInt32(date & 0xFFFF_FFFF))
        u32(UInt32(date >> 32))
        u16(d.readerProtocolVersion)
        out.append(UInt8(d.appliesTo.count))
        for range in d.appliesTo {
            version(range.min)
            version(range.max)
        }
        let segments = (loader.map { [$0] } ?? []) + [application]
        out.append(UInt8(segments.count))
        for segment in segments {
            out.append(segment.kind.rawValue)
            u32(segment.address)
            u32(UInt32(segment.bytes.count))
            u32(segment.crc32)
        }
        for segment in segments { out += segment.bytes }
        out += SHA256.hash(out).bytes
        return out
    }
}

/// Reads little-endian fields, every length checked against what is left.
struct PackageReader {
    let bytes: [UInt8]
    let file: String
    var offset = 0

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int, _ field: String) throws(FirmwareError) -> ArraySlice<UInt8> {
        guard count <= remaining else {
            throw .packageTruncated(file: file, field: field, needed: count, available: remaining)
        }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    mutating func u8(_ field: String) throws(FirmwareError) -> UInt8 { try take(1, field).first! }

    mutating func u16(_ field: String) throws(FirmwareError) -> UInt16 {
        let b = try take(2, field)
        return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8
    }

    mutating func u32(_ field: String) throws(FirmwareError) -> UInt32 {
        try take(4, field).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    mutating func i64(_ field: String) throws(FirmwareError) -> Int64 {
        Int64(bitPattern: try take(8, field).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    mutating func version(_ field: String) throws(FirmwareError) -> FirmwareVersion {
        let b = try take(4, field)
        let s = b.startIndex
        return FirmwareVersion(major: b[s], minor: b[s + 1], build: UInt16(b[s + 2]) | UInt16(b[s + 3]) << 8)
    }
}
