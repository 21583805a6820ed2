/// Everything that can be wrong with a vendor command-layer payload (the bytes between a
/// vendor packet's length byte and its crc8). Every decoder in `Vendor/` throws only this and
/// never traps; every encoder refuses a value the vendor host would never put on the wire (or
/// that the field cannot carry) with it. `code` is stable for `--json` output and the
/// localized catalog (`error.vendor.<code>`); `arguments` fill the message in order.
public enum VendorCommandError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The payload ended before `field` was complete.
    case truncated(field: String, needed: Int, available: Int)
    /// Bytes are left after the last field of `message`.
    case trailingBytes(message: String, count: Int)
    /// `field` holds `value`, which is outside `allowed` (a human-readable range such as `5...30`).
    case outOfRange(field: String, value: String, allowed: String)
    /// `field` has a value the vendor protocol gives no meaning to (an unknown opcode, sub-op, kind).
    case unknownValue(field: String, value: Int)
    /// `field` is `length` bytes long but the wire carries at most `limit`.
    case tooLong(field: String, length: Int, limit: Int)
    /// Two fields disagree (for example a declared length and the bytes that follow).
    case inconsistent(field: String, declared: Int, actual: Int)

    /// A stable identifier for machines and for the message catalog.
    public var code: String {
        switch self {
        case .truncated: "vendor_truncated"
        case .trailingBytes: "vendor_trailing_bytes"
        case .outOfRange: "vendor_out_of_range"
        case .unknownValue: "vendor_unknown_value"
        case .tooLong: "vendor_too_long"
        case .inconsistent: "vendor_inconsistent"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .truncated(let field, let needed, let available): [field, String(needed), String(available)]
        case .trailingBytes(let message, let count): [message, String(count)]
        case .outOfRange(let field, let value, let allowed): [field, value, allowed]
        case .unknownValue(let field, let value): [field, String(value)]
        case .tooLong(let field, let length, let limit): [field, String(length), String(limit)]
        case .inconsistent(let field, let declared, let actual): [field, String(declared), String(actual)]
        }
    }

    private static let peerHint = "the Grokker or host speaks a vendor protocol variant this build does not know; capture the packet and report it"

    public var description: String {
        switch self {
        case .truncated(let field, let needed, let available):
            "vendor payload ended inside \(field) (needed \(needed) bytes, \(available) left); \(Self.peerHint)."
        case .trailingBytes(let message, let count):
            "\(count) unexpected bytes after the end of \(message); \(Self.peerHint)."
        case .outOfRange(let field, let value, let allowed):
            "\(field) is \(value) but must be within \(allowed); choose a value in that range."
        case .unknownValue(let field, let value):
            "\(field) has the value \(value), which the vendor protocol does not define; \(Self.peerHint)."
        case .tooLong(let field, let length, let limit):
            "\(field) is \(length) bytes long but at most \(limit) fit; shorten it."
        case .inconsistent(let field, let declared, let actual):
            "\(field) declares \(declared) but \(actual) was found; \(Self.peerHint)."
        }
    }
}
