import GrokBasics

/// Everything that can be wrong with a vendor-protocol payload (a region entry, a SetRegion
/// payload). Decoders throw these and never trap. `code` is stable for `--json` output and for the
/// localized catalog (`error.protocol.<code>`).
public enum ProtocolError: Error, Sendable, CodedError, Equatable {
    /// The payload ended before `field` was complete.
    case truncated(field: String, needed: Int, available: Int)
    /// A string field is not valid UTF-8.
    case invalidUTF8(field: String)
    /// A field holds a value outside its range.
    case invalidValue(field: String, value: Int)
    /// Bytes are left over after the last field of a payload of this build's minor version.
    case trailingBytes(count: Int)

    /// A stable identifier for machines and for the message catalog.
    public var code: String {
        switch self {
        case .truncated: "protocol_truncated"
        case .invalidUTF8: "protocol_invalid_utf8"
        case .invalidValue: "protocol_invalid_value"
        case .trailingBytes: "protocol_trailing_bytes"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .truncated(let field, let needed, let available): [field, String(needed), String(available)]
        case .invalidUTF8(let field): [field]
        case .invalidValue(let field, let value): [field, String(value)]
        case .trailingBytes(let count): [String(count)]
        }
    }


    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }
}
