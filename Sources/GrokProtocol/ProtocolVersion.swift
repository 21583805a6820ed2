/// The version of the command protocol, carried in every message header.
///
/// A receiver compares the header's version with its own ``current``:
/// - **Different major** (newer or older): the message is not decoded. A Grokker answers a
///   request with ``StatusCode/unsupportedVersion`` (using its own version in the reply
///   header); a host reports ``ProtocolError/unsupportedVersion(received:supported:)``.
///   The 10-byte header layout is frozen across all majors so either side can always read
///   enough of a message to answer it.
/// - **Same major, newer minor**: the message is decoded. A newer minor may only *add*:
///   new opcodes (answered with ``StatusCode/unsupportedOpcode``), new status codes
///   (decoded as ``StatusCode/unrecognized(_:)``), new flag bits (ignored) and new fields
///   appended at the end of a payload (ignored).
/// - **Same major, same or older minor**: the message is decoded strictly; bytes left over
///   after the last known field are an error (``ProtocolError/trailingBytes(count:)``).
public struct ProtocolVersion: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Incompatible changes bump the major.
    public var major: UInt8
    /// Compatible additions bump the minor.
    public var minor: UInt8

    /// Creates a version.
    public init(major: UInt8, minor: UInt8) {
        self.major = major
        self.minor = minor
    }

    /// The version this build speaks: 1.0.
    public static let current = ProtocolVersion(major: 1, minor: 0)

    public static func < (lhs: ProtocolVersion, rhs: ProtocolVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }

    /// `major.minor`, for example `1.0`.
    public var description: String { "\(major).\(minor)" }
}
