import Foundation
import GrokBasics
import GrokProtocol

// What a firmware release says it is and where it fits (the TUF target's custom data,
// ``FirmwareReleaseMetadata``), and the device sets it can be limited to. These outlived
// the `.grokfw` package and the envelope channel they were first written for.

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
            throw .invalidInput(file: "<range>", detail: ErrorDetail("range_backwards", ["\(min)", "\(max)"]))
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

/// What a release says it is and where it fits: the fields the compatibility check compares.
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
}

/// A named set of devices an update can target: single serial numbers and inclusive serial
/// ranges (a firmware target's `serials`, a region eligibility's `serials`).
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
