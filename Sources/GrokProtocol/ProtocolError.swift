/// Everything that can be wrong with a command-layer message. Decoders throw these and
/// never trap; a Grokker answers a request that fails to decode with an error response
/// (see ``StatusCode/init(for:)``). `code` is stable for `--json` output and for the
/// localized catalog (`error.protocol.<code>`).
public enum ProtocolError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The message ended before `field` was complete.
    case truncated(field: String, needed: Int, available: Int)
    /// The message is longer than GrokLink carries (``WireLimits/maxMessageBytes``).
    case messageTooLong(length: Int, limit: Int)
    /// The header's payload length disagrees with the bytes actually received.
    case lengthMismatch(declared: Int, actual: Int)
    /// The message was written for a protocol major this build does not speak.
    case unsupportedVersion(received: ProtocolVersion, supported: ProtocolVersion)
    /// The header's kind byte is not request, response or event.
    case unknownKind(UInt8)
    /// A request arrived where a response was expected, or the other way round.
    case unexpectedKind(expected: MessageKind, received: MessageKind)
    /// The opcode is not one this build knows.
    case unknownOpcode(UInt16)
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
        case .messageTooLong: "protocol_message_too_long"
        case .lengthMismatch: "protocol_length_mismatch"
        case .unsupportedVersion: "protocol_unsupported_version"
        case .unknownKind: "protocol_unknown_kind"
        case .unexpectedKind: "protocol_unexpected_kind"
        case .unknownOpcode: "protocol_unknown_opcode"
        case .invalidUTF8: "protocol_invalid_utf8"
        case .invalidValue: "protocol_invalid_value"
        case .trailingBytes: "protocol_trailing_bytes"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .truncated(let field, let needed, let available): [field, String(needed), String(available)]
        case .messageTooLong(let length, let limit): [String(length), String(limit)]
        case .lengthMismatch(let declared, let actual): [String(declared), String(actual)]
        case .unsupportedVersion(let received, let supported): [received.description, supported.description]
        case .unknownKind(let kind): [String(kind)]
        case .unexpectedKind(let expected, let received): [expected.description, received.description]
        case .unknownOpcode(let opcode): [Opcode(rawValue: opcode).description]
        case .invalidUTF8(let field): [field]
        case .invalidValue(let field, let value): [field, String(value)]
        case .trailingBytes(let count): [String(count)]
        }
    }

    private static let peerHint = "check that the Grokker and grokctl are compatible (grokctl info) and retry; report it if it persists"

    public var description: String {
        switch self {
        case .truncated(let field, let needed, let available):
            "message ended inside \(field) (needed \(needed) bytes, \(available) left); \(Self.peerHint)."
        case .messageTooLong(let length, let limit):
            "message of \(length) bytes is longer than the \(limit)-byte limit; send less data per command."
        case .lengthMismatch(let declared, let actual):
            "message header declares a \(declared)-byte payload but \(actual) bytes followed it; \(Self.peerHint)."
        case .unsupportedVersion(let received, let supported):
            "message uses command protocol \(received) but this side speaks \(supported); update grokctl or the Grokker's firmware so their protocol majors match."
        case .unknownKind(let kind):
            "message kind \(kind) is not request (1), response (2) or event (3); \(Self.peerHint)."
        case .unexpectedKind(let expected, let received):
            "expected a \(expected) message but received a \(received); \(Self.peerHint)."
        case .unknownOpcode(let opcode):
            "opcode \(Opcode(rawValue: opcode)) is not known to this side; update grokctl or the Grokker's firmware."
        case .invalidUTF8(let field):
            "\(field) is not valid UTF-8; \(Self.peerHint)."
        case .invalidValue(let field, let value):
            "\(field) has the invalid value \(value); \(Self.peerHint)."
        case .trailingBytes(let count):
            "\(count) unexpected bytes follow the last field of the message; \(Self.peerHint)."
        }
    }
}
