/// A firmware (or loader) version, `major.minor.build`, as the vendor SDK reports it
/// (`firmwareVersionMajor`, `firmwareVersionMinor`, `firmwareVersionBuild`).
///
/// Ordered by major, then minor, then build. Encoded in JSON as the string `"1.7.3"`.
public struct FirmwareVersion: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var major: UInt8
    public var minor: UInt8
    public var build: UInt16

    /// Creates a version.
    public init(major: UInt8, minor: UInt8, build: UInt16) {
        self.major = major
        self.minor = minor
        self.build = build
    }

    /// Parses `major.minor.build` (for example `1.7.3`); `nil` if it is not exactly three
    /// decimal numbers within range.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            parts.allSatisfy({ !$0.isEmpty && $0.count <= 5 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let major = UInt8(parts[0]), let minor = UInt8(parts[1]), let build = UInt16(parts[2])
        else { return nil }
        self.init(major: major, minor: minor, build: build)
    }

    public static func < (lhs: FirmwareVersion, rhs: FirmwareVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.build) < (rhs.major, rhs.minor, rhs.build)
    }

    /// `major.minor.build`, for example `1.7.3`.
    public var description: String { "\(major).\(minor).\(build)" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let version = FirmwareVersion(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not a version of the form major.minor.build")
        }
        self = version
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

}

/// The kind of reader hardware (vendor `UgiReaderHardwareType`).
///
/// Values this build does not know (a newer hardware type) decode as ``unknown``.
public enum HardwareType: UInt8, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Vendor `UGI_READER_HARDWARE_UNKNOWN` (0).
    case unknown = 0
    /// Vendor `UGI_READER_HARDWARE_GROKKER_1` (5): the Grokker.
    case grokker1 = 5

    /// The vendor's constant name: `UNKNOWN`, `GROKKER_1`.
    public var vendorName: String {
        switch self {
        case .unknown: "UNKNOWN"
        case .grokker1: "GROKKER_1"
        }
    }

    /// The name a person reads (vendor `readerHardwareTypeName`).
    public var description: String {
        switch self {
        case .unknown: "Unknown"
        case .grokker1: "Grokker 1"
        }
    }
}

/// The region a Grokker is set to: the name from the approved region list (for example
/// `FCC (US), IC (Canada)`) and the region's number.
public struct RegionSetting: Sendable, Hashable, Codable {
    /// The region's name (at most ``WireLimits/maxStringBytes`` UTF-8 bytes on the wire).
    public var name: String
    /// The region's number in the region table.
    public var number: UInt16

    /// Creates a region setting.
    public init(name: String, number: UInt16) {
        self.name = name
        self.number = number
    }
}
