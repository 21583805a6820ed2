/// One value of a ``FleetEvent``'s `data`, encoded as the JSON value it is: a code or a
/// name as a string, a count as an integer, seconds or a threshold as a number (a plain
/// JSON number, never localized), a yes/no as a boolean. Literals build it, so a producer
/// writes `["done": 4096, "granted": true, "step": "firmware"]`.
public enum EventValue: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case number(Double)
    case bool(Bool)

    /// The text of a string value (`nil` for any other kind).
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value of an integer (`nil` for any other kind, a number with a fraction too).
    public var integer: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The value of a number or an integer (`nil` for a string or a boolean).
    public var number: Double? {
        switch self {
        case .number(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// The value of a boolean (`nil` for any other kind).
    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// Seconds (or any measured figure) to the millisecond, the precision the events carry.
    public static func seconds(_ value: Double) -> EventValue {
        .number(value.isFinite ? (value * 1000).rounded() / 1000 : 0)
    }
}

extension EventValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // A boolean first (JSON true is never a number here), then a whole number, then any number.
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        // A number that is not finite has no JSON form: it is carried as 0 (none is produced).
        case .number(let value): try container.encode(value.isFinite ? value : 0)
        case .bool(let value): try container.encode(value)
        }
    }
}

extension EventValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension EventValue: CustomStringConvertible {
    /// The value as plain text (a number in the machine form `1.234`).
    public var description: String {
        switch self {
        case .string(let value): value
        case .integer(let value): String(value)
        case .number(let value): String(value)
        case .bool(let value): String(value)
        }
    }
}
