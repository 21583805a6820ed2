import Foundation
import GrokBasics
import GrokTUF

/// What a profile's value must be, said as data: a code under `profile.rule` in the
/// catalogs and its values, so a profile error reads whole in the user's language.
enum ProfileRule {
    static let object = ErrorDetail("object")
    static let bool = ErrorDetail("bool")
    static let string = ErrorDetail("string")
    static let nonEmptyString = ErrorDetail("non_empty_string")
    static let profileName = ErrorDetail("profile_name")
    static let listOfObjects = ErrorDetail("list_of_objects")
    static let ledgerAddress = ErrorDetail("ledger_address")
    static let region = ErrorDetail("region")
    static let regionSetOrAllowed = ErrorDetail("region_set_or_allowed")
    static let channelName = ErrorDetail("channel_name")
    static let firmwareTarget = ErrorDetail("firmware_target")
    static let timeZone = ErrorDetail("time_zone")
    static let day = ErrorDetail("day")
    static let clock = ErrorDetail("clock")
    static let windows = ErrorDetail("windows")
    static let rolloutID = ErrorDetail("rollout_id")
    static let epc = ErrorDetail("epc")

    enum Unit: String { case none = "", seconds, dBm = "dbm" }

    static func numberRange(_ range: ClosedRange<Double>, unit: Unit = .none) -> ErrorDetail {
        ErrorDetail(unit == .none ? "number_range" : "number_range_" + unit.rawValue,
                    [FleetError.number(range.lowerBound), FleetError.number(range.upperBound)])
    }
    static func wholeNumberRange(_ range: ClosedRange<Int>) -> ErrorDetail {
        ErrorDetail("whole_number_range", [String(range.lowerBound), String(range.upperBound)])
    }
    static func wholeNumberFrom(_ lower: Int) -> ErrorDetail { ErrorDetail("whole_number_from", [String(lower)]) }
    static func oneOf(_ values: [String]) -> ErrorDetail { ErrorDetail("one_of", [values.joined(separator: ", ")]) }
    static func oneOfAllowed(_ values: [String]) -> ErrorDetail { ErrorDetail("one_of_allowed", [values.joined(separator: ", ")]) }
    static func format(_ number: Int) -> ErrorDetail { ErrorDetail("format", [String(number)]) }
    static func stationName(maxLength: Int) -> ErrorDetail { ErrorDetail("station_name", [String(maxLength)]) }
    static func moreThanStall(_ seconds: Double) -> ErrorDetail { ErrorDetail("more_than_stall", [FleetError.number(seconds)]) }
    static func atLeastStep(_ seconds: Double) -> ErrorDetail { ErrorDetail("at_least_step", [FleetError.number(seconds)]) }
    static func otherThanStart(_ start: String) -> ErrorDetail { ErrorDetail("other_than_start", [start]) }
    static func cue(maxTones: Int) -> ErrorDetail { ErrorDetail("cue", [String(maxTones)]) }
    static func cueLength(_ milliseconds: Int) -> ErrorDetail { ErrorDetail("cue_length", [String(milliseconds)]) }
    static func toneFrequency(_ range: ClosedRange<UInt16>) -> ErrorDetail {
        ErrorDetail("tone_frequency", [String(range.lowerBound), String(range.upperBound)])
    }
    static func windowDevices(after: Int, upTo upper: Int) -> ErrorDetail { ErrorDetail("window_devices", [String(after), String(upper)]) }
    /// A list whose every item is `item` (`nonEmpty`: with at least one).
    static func list(of item: ErrorDetail, nonEmpty: Bool) -> ErrorDetail {
        ErrorDetail(nonEmpty ? "non_empty_list" : "list", item.flattened)
    }
}

/// A JSON value as the profile reader sees it: booleans and numbers kept apart, so `true`
/// is never taken for 1.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value the strict parser read (which has already refused a key given twice).
    init(_ json: JSON) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .integer(let value): self = .number(Double(value))
        case .unsignedInteger(let value): self = .number(Double(value))
        // The parser checked the number's grammar, so it converts (a huge one to infinity,
        // which every range check refuses).
        case .number(let text): self = .number(Double(text) ?? .nan)
        case .string(let value): self = .string(value)
        case .array(let items): self = .array(items.map(JSONValue.init))
        case .object(let object):
            self = .object(Dictionary(uniqueKeysWithValues: object.members.map { ($0.key, JSONValue($0.value)) }))
        }
    }

    /// How the value is named in an error: as JSON writes it, the same in every language
    /// (`null`, `true`, `3`, `"mars"`; a list `[…]` and an object `{…}` without their contents).
    var found: String {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .number(let value): FleetError.number(value)
        case .string(let value): "\"\(value)\""
        case .array: "[…]"
        case .object: "{…}"
        }
    }
}

/// Reads one JSON object of a profile strictly: every key must be one the schema lists
/// (typos are refused), every value of the type and range the schema gives; each error
/// names the file and the key path (`smoke_test.min_reads_per_second`).
struct ProfileObject {
    let file: String
    let path: String
    let members: [String: JSONValue]

    /// The object at `path` (`""` for the root), checked against the keys allowed there.
    init(_ value: JSONValue, file: String, path: String, allowed: [String]) throws(FleetError) {
        guard case .object(let members) = value else {
            // The whole file: its key path is written as JSON paths write the root.
            throw .profileInvalid(file: file, keyPath: path.isEmpty ? "$" : path, expected: ProfileRule.object, found: value.found)
        }
        for key in members.keys.sorted() where !allowed.contains(key) {
            throw .profileUnknownKey(file: file, keyPath: Self.join(path, key), known: allowed)
        }
        self.file = file
        self.path = path
        self.members = members
    }

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func keyPath(_ key: String) -> String { Self.join(path, key) }

    func has(_ key: String) -> Bool { members[key] != nil }

    func invalid(_ key: String, _ expected: ErrorDetail, _ value: JSONValue) -> FleetError {
        .profileInvalid(file: file, keyPath: keyPath(key), expected: expected, found: value.found)
    }

    func required<T>(_ key: String, _ expected: ErrorDetail, _ read: (String) throws(FleetError) -> T?) throws(FleetError) -> T {
        guard let value = try read(key) else { throw .profileMissingKey(file: file, keyPath: keyPath(key), expected: expected) }
        return value
    }

    func object(_ key: String, allowed: [String]) throws(FleetError) -> ProfileObject? {
        guard let value = members[key] else { return nil }
        return try ProfileObject(value, file: file, path: keyPath(key), allowed: allowed)
    }

    func bool(_ key: String) throws(FleetError) -> Bool? {
        guard let value = members[key] else { return nil }
        guard case .bool(let flag) = value else { throw invalid(key, ProfileRule.bool, value) }
        return flag
    }

    func string(_ key: String, expected: ErrorDetail = ProfileRule.string, check: (String) -> Bool = { !$0.isEmpty }) throws(FleetError) -> String? {
        guard let value = members[key] else { return nil }
        guard case .string(let text) = value, check(text) else { throw invalid(key, expected, value) }
        return text
    }

    func number(_ key: String, in range: ClosedRange<Double>, unit: ProfileRule.Unit = .none) throws(FleetError) -> Double? {
        guard let value = members[key] else { return nil }
        let expected = ProfileRule.numberRange(range, unit: unit)
        guard case .number(let number) = value, number.isFinite, range.contains(number) else { throw invalid(key, expected, value) }
        return number
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(FleetError) -> Int? {
        guard let value = members[key] else { return nil }
        let expected = ProfileRule.wholeNumberRange(range)
        guard case .number(let number) = value, number == number.rounded(), number >= Double(range.lowerBound),
              number <= Double(range.upperBound)
        else { throw invalid(key, expected, value) }
        return Int(number)
    }

    /// An array of strings, each checked by `element` (which returns the parsed value or `nil`).
    func strings<T>(_ key: String, expected: ErrorDetail, allowEmpty: Bool = false,
                    element: (String) -> T?) throws(FleetError) -> [T]? {
        guard let value = members[key] else { return nil }
        guard case .array(let items) = value, allowEmpty || !items.isEmpty else {
            throw invalid(key, ProfileRule.list(of: expected, nonEmpty: !allowEmpty), value)
        }
        var result: [T] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item, let parsed = element(text) else {
                throw .profileInvalid(file: file, keyPath: "\(keyPath(key))[\(index)]", expected: expected, found: item.found)
            }
            result.append(parsed)
        }
        return result
    }

    /// An array of objects, each read by `element` at `key[i]`.
    func objects<T>(_ key: String, allowed: [String], element: (ProfileObject) throws(FleetError) -> T) throws(FleetError) -> [T]? {
        guard let value = members[key] else { return nil }
        guard case .array(let items) = value else { throw invalid(key, ProfileRule.listOfObjects, value) }
        var result: [T] = []
        for (index, item) in items.enumerated() {
            result.append(try element(try ProfileObject(item, file: file, path: "\(keyPath(key))[\(index)]", allowed: allowed)))
        }
        return result
    }
}
