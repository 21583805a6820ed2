// Errors of the SDK's value types: EPCs that cannot be parsed and RFID configurations a
// Grokker would refuse. Like every error of the package they carry a stable `code` (for
// `--json` and the message catalog, `error.<code>`) and the `arguments` a localized
// message fills in, in order.

/// An EPC that cannot be made from the given hex string or bytes (vendor:
/// `UgiEpc.epcFromString`, `UgiEpc.epcFromBytes`, which return nil instead).
public enum EpcError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The hex string was empty.
    case empty
    /// The hex string has a character that is not a hex digit; `offset` counts characters from 0.
    case invalidCharacter(hex: String, character: String, offset: Int)
    /// The hex string has an odd number of digits, so it is not whole bytes.
    case oddLength(hex: String, digits: Int)
    /// Fewer than ``UgiEpc/minByteCount`` bytes.
    case tooShort(epc: String, bytes: Int)
    /// More than ``UgiEpc/maxByteCount`` bytes.
    case tooLong(epc: String, bytes: Int)

    /// A stable identifier for machines and for the message catalog.
    public var code: String {
        switch self {
        case .empty: "epc_empty"
        case .invalidCharacter: "epc_invalid_character"
        case .oddLength: "epc_odd_length"
        case .tooShort: "epc_too_short"
        case .tooLong: "epc_too_long"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .empty: []
        case .invalidCharacter(let hex, let character, let offset): [hex, character, String(offset + 1)]
        case .oddLength(let hex, let digits): [hex, String(digits)]
        case .tooShort(let epc, let bytes), .tooLong(let epc, let bytes): [epc, String(bytes)]
        }
    }

    public var description: String {
        let accepted = "an EPC has \(UgiEpc.minByteCount) to \(UgiEpc.maxByteCount) bytes "
            + "(\(UgiEpc.minByteCount * 2) to \(UgiEpc.maxByteCount * 2) hex digits; "
            + "\(UgiEpc.standardByteCount * 2) for the standard 96-bit EPC)"
        switch self {
        case .empty:
            return "the EPC is empty; \(accepted), for example 3074257BF7194E4000001A85."
        case .invalidCharacter(let hex, let character, let offset):
            return "EPC '\(hex)' has '\(character)' at position \(offset + 1), which is not a hex digit; "
                + "use only 0-9 and A-F (either case), without spaces, dashes or a 0x prefix."
        case .oddLength(let hex, let digits):
            return "EPC '\(hex)' has \(digits) hex digits, an odd number; an EPC is whole bytes of two "
                + "hex digits each: look for a missing or extra digit."
        case .tooShort(let epc, let bytes):
            return "EPC '\(epc)' is \(bytes) byte\(bytes == 1 ? "" : "s") long, too short; \(accepted)."
        case .tooLong(let epc, let bytes):
            return "EPC '\(epc)' is \(bytes) bytes long, too long; \(accepted)."
        }
    }

    /// The input as an error shows it: at most 64 characters, so a runaway input cannot
    /// flood a terminal or a log.
    static func shown(_ text: some StringProtocol) -> String {
        text.count <= 64 ? String(text) : String(text.prefix(61)) + "..."
    }
}

/// An RFID configuration a Grokker would refuse (``UgiRfidConfiguration/validate()``). Field
/// names are the vendor's property names (`minPowerLevel`, `maxQValue`, ...); values are
/// shown as they were set, ranges in the field's unit.
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A field lies outside what the reader accepts, `minimum...maximum` inclusive.
    case outOfRange(field: String, value: String, minimum: String, maximum: String, unit: String)
    /// Two fields that must be ordered are not: `field` (`value`) must not exceed
    /// `limitField` (`limit`), e.g. `minPowerLevel` must not exceed `initialPowerLevel`.
    case misordered(field: String, value: String, limitField: String, limit: String)
    /// A field is set to something that only makes sense with another setting,
    /// described in `requirement` (e.g. `listenBeforeTalk` needs `setListenBeforeTalk`).
    case requires(field: String, value: String, requirement: String)

    /// A stable identifier for machines and for the message catalog.
    public var code: String {
        switch self {
        case .outOfRange: "configuration_out_of_range"
        case .misordered: "configuration_misordered"
        case .requires: "configuration_requires"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .outOfRange(let field, let value, let minimum, let maximum, let unit): [field, value, minimum, maximum, unit]
        case .misordered(let field, let value, let limitField, let limit): [field, value, limitField, limit]
        case .requires(let field, let value, let requirement): [field, value, requirement]
        }
    }

    /// The field at fault (for a misordered pair, the first of the two).
    public var field: String {
        switch self {
        case .outOfRange(let field, _, _, _, _), .misordered(let field, _, _, _), .requires(let field, _, _): field
        }
    }

    public var description: String {
        switch self {
        case .outOfRange(let field, let value, let minimum, let maximum, let unit):
            let u = unit.isEmpty ? "" : " " + unit
            return "RFID configuration \(field) is \(value)\(u), outside the allowed \(minimum) to \(maximum)\(u); "
                + "set it within that range."
        case .misordered(let field, let value, let limitField, let limit):
            return "RFID configuration \(field) (\(value)) is greater than \(limitField) (\(limit)); "
                + "\(field) must not exceed \(limitField): lower one or raise the other."
        case .requires(let field, let value, let requirement):
            return "RFID configuration \(field) is \(value), but \(requirement)."
        }
    }
}
