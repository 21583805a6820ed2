import GrokBasics

/// A JSON value as TUF metadata needs it: integers kept exact, objects that cannot hold a
/// key twice, and an encoder for OLPC canonical JSON (what is signed).
public indirect enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    /// An integer that fits in 64 signed bits.
    case integer(Int64)
    /// A non-negative integer above `Int64.max` (up to `UInt64.max`).
    case unsignedInteger(UInt64)
    /// Any other number (a fraction or an exponent), kept as its source text. Canonical
    /// JSON refuses it, so it can never be part of what is signed.
    case number(String)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// The object, or `nil`.
    public var object: JSONObject? { if case .object(let o) = self { o } else { nil } }
    /// The string, or `nil`.
    public var string: String? { if case .string(let s) = self { s } else { nil } }
    /// The array, or `nil`.
    public var array: [JSON]? { if case .array(let a) = self { a } else { nil } }
    /// The boolean, or `nil`.
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// The integer when it fits `Int64`, or `nil`.
    public var int64: Int64? { if case .integer(let i) = self { i } else { nil } }
}

/// A JSON object: members in source order, each key once (compared byte for byte).
public struct JSONObject: Sendable, Equatable {
    /// The members in the order they were given.
    public private(set) var members: [(key: String, value: JSON)]
    private var index: [[UInt8]: Int]

    /// An empty object.
    public init() {
        members = []
        index = [:]
    }

    /// An object from `members`; `nil` when a key occurs twice.
    public init?(_ members: [(String, JSON)]) {
        self.init()
        for (key, value) in members {
            guard !contains(key) else { return nil }
            self[key] = value
        }
    }

    /// Whether `key` is a member.
    public func contains(_ key: String) -> Bool { index[Array(key.utf8)] != nil }

    /// The member `key`; setting `nil` removes it, setting a value adds or replaces it.
    public subscript(key: String) -> JSON? {
        get { index[Array(key.utf8)].map { members[$0].value } }
        set {
            let bytes = Array(key.utf8)
            if let at = index[bytes] {
                if let newValue {
                    members[at].value = newValue
                } else {
                    members.remove(at: at)
                    index = [:]
                    for (i, m) in members.enumerated() { index[Array(m.key.utf8)] = i }
                }
            } else if let newValue {
                index[bytes] = members.count
                members.append((key, newValue))
            }
        }
    }

    /// The keys in source order.
    public var keys: [String] { members.map(\.key) }
    /// How many members.
    public var count: Int { members.count }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.count == b.count else { return false }
        for (key, value) in a.members where b[key] != value { return false }
        return true
    }
}

/// Limits on untrusted JSON, checked while parsing.
public struct JSONLimits: Sendable {
    /// The most bytes a document may have.
    public var maxBytes: Int
    /// The deepest nesting of arrays and objects.
    public var maxDepth: Int
    /// The longest string, in bytes of UTF-8.
    public var maxStringBytes: Int

    public init(maxBytes: Int = 16 << 20, maxDepth: Int = 64, maxStringBytes: Int = 1 << 20) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
        self.maxStringBytes = maxStringBytes
    }
}

/// A strict RFC 8259 parser: one value with optional whitespace around it, UTF-8 only,
/// no duplicate object keys at any depth, no lone surrogates, integers exact, and the sizes
/// in ``JSONLimits`` enforced.
public struct JSONParser {
    private let bytes: [UInt8]
    private let limits: JSONLimits
    private var at = 0

    /// Parses `bytes` as one JSON document.
    public static func parse(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) throws(TUFError) -> JSON {
        guard bytes.count <= limits.maxBytes else {
            throw .json(detail: ErrorDetail("document_too_large", [String(bytes.count), String(limits.maxBytes)]), offset: limits.maxBytes)
        }
        var parser = JSONParser(bytes: bytes, limits: limits)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.at == bytes.count else { throw parser.fail("trailing_bytes") }
        return value
    }

    /// Where byte `offset` of `bytes` is as an editor shows it: the line (from 1, after each
    /// line feed) and the column (from 1, counted in characters, so `é` is one column).
    public static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        let end = min(max(offset, 0), bytes.count)
        let lineStart = bytes[..<end].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        let line = 1 + bytes[..<lineStart].count(where: { $0 == 0x0A })
        let column = 1 + String(decoding: bytes[lineStart..<end], as: UTF8.self).count
        return (line, column)
    }

    private init(bytes: [UInt8], limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    private func fail(_ code: String, _ values: [String] = []) -> TUFError { .json(detail: ErrorDetail(code, values), offset: at) }

    private mutating func skipSpace() {
        while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
    }

    private mutating func value(depth: Int) throws(TUFError) -> JSON {
        guard at < bytes.count else { throw fail("ends_before_value") }
        switch bytes[at] {
        case UInt8(ascii: "{"):
            guard depth < limits.maxDepth else { throw fail("too_deep", [String(limits.maxDepth)]) }
            at += 1
            var object = JSONObject()
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(object) }
            while true {
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw fail("key_not_string") }
                let keyAt = at
                let key = try string()
                guard !object.contains(key) else {
                    throw TUFError.json(detail: ErrorDetail("duplicate_key", [key]), offset: keyAt)
                }
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw fail("colon_expected") }
                at += 1
                skipSpace()
                object[key] = try value(depth: depth + 1)
                skipSpace()
                guard at < bytes.count else { throw fail("ends_in_object") }
                if bytes[at] == UInt8(ascii: ",") { at += 1; try noTrailingComma(before: "}"); continue }
                if bytes[at] == UInt8(ascii: "}") { at += 1; return .object(object) }
                throw fail("object_separator_expected")
            }
        case UInt8(ascii: "["):
            guard depth < limits.maxDepth else { throw fail("too_deep", [String(limits.maxDepth)]) }
            at += 1
            var array: [JSON] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(array) }
            while true {
                skipSpace()
                array.append(try value(depth: depth + 1))
                skipSpace()
                guard at < bytes.count else { throw fail("ends_in_array") }
                if bytes[at] == UInt8(ascii: ",") { at += 1; try noTrailingComma(before: "]"); continue }
                if bytes[at] == UInt8(ascii: "]") { at += 1; return .array(array) }
                throw fail("array_separator_expected")
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true"); return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false"); return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number()
        default:
            throw fail("unexpected_byte", ["0x" + String(bytes[at], radix: 16)])
        }
    }

    /// Refuses a comma right before the object's or array's end (`[1, 2,]`), naming it as
    /// such rather than as a missing value; the offset is the comma's.
    private mutating func noTrailingComma(before end: Unicode.Scalar) throws(TUFError) {
        let comma = at - 1
        skipSpace()
        if at < bytes.count, bytes[at] == UInt8(ascii: end) {
            throw TUFError.json(detail: ErrorDetail("trailing_comma", [String(Character(end))]), offset: comma)
        }
    }

    private mutating func literal(_ word: String) throws(TUFError) {
        let w = Array(word.utf8)
        guard at + w.count <= bytes.count, Array(bytes[at..<at + w.count]) == w else { throw fail("unknown_literal") }
        at += w.count
    }

    private mutating func number() throws(TUFError) -> JSON {
        let start = at
        if bytes[at] == UInt8(ascii: "-") { at += 1 }
        guard at < bytes.count, isDigit(bytes[at]) else { throw fail("digit_after_minus") }
        if bytes[at] == UInt8(ascii: "0") {
            at += 1
            if at < bytes.count, isDigit(bytes[at]) { throw fail("leading_zero") }
        } else {
            while at < bytes.count, isDigit(bytes[at]) { at += 1 }
        }
        var integral = true
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            integral = false
            at += 1
            guard at < bytes.count, isDigit(bytes[at]) else { throw fail("digit_after_point") }
            while at < bytes.count, isDigit(bytes[at]) { at += 1 }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            integral = false
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard at < bytes.count, isDigit(bytes[at]) else { throw fail("digit_after_exponent") }
            while at < bytes.count, isDigit(bytes[at]) { at += 1 }
        }
        let text = String(decoding: bytes[start..<at], as: UTF8.self)
        guard at - start <= 400 else { throw TUFError.json(detail: ErrorDetail("long_number", [String(at - start)]), offset: start) }
        if integral {
            if let value = Int64(text) { return .integer(value) }
            if let value = UInt64(text) { return .unsignedInteger(value) }
            throw TUFError.json(detail: ErrorDetail("integer_too_large", [text]), offset: start)
        }
        return .number(text)
    }

    private func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    private mutating func hex4() throws(TUFError) -> UInt32 {
        guard at + 4 <= bytes.count else { throw fail("ends_in_unicode_escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let n = hexNibble(bytes[at]) else { throw fail("unicode_escape_hex") }
            value = value << 4 | UInt32(n)
            at += 1
        }
        return value
    }

    private func hexNibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }

    private mutating func string() throws(TUFError) -> String {
        at += 1  // the opening quote
        var out: [UInt8] = []
        while true {
            guard at < bytes.count else { throw fail("ends_in_string") }
            guard out.count <= limits.maxStringBytes else { throw fail("string_too_long", [String(limits.maxStringBytes)]) }
            let c = bytes[at]
            switch c {
            case UInt8(ascii: "\""):
                at += 1
                // The raw bytes were checked piece by piece; decode once.
                guard let text = String(validating: out, as: UTF8.self) else { throw fail("invalid_utf8") }
                return text
            case UInt8(ascii: "\\"):
                at += 1
                guard at < bytes.count else { throw fail("ends_in_escape") }
                let e = bytes[at]
                at += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard at + 2 <= bytes.count, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else {
                            throw fail("lone_high_surrogate")
                        }
                        at += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("high_surrogate_without_low") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("lone_low_surrogate")
                    }
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default:
                    throw fail("unknown_escape", ["\\" + String(decoding: [e], as: UTF8.self)])
                }
            default:
                guard c >= 0x20 else { throw fail("unescaped_control") }
                out.append(c)
                at += 1
            }
        }
    }
}

/// OLPC canonical JSON, byte for byte what securesystemslib's `encode_canonical` writes:
/// object keys sorted by code point, no whitespace, strings with only `"` and `\` escaped
/// (everything else, control characters included, written as UTF-8), integers only.
public enum CanonicalJSON {
    /// The canonical bytes of `value`; throws for a non-integer number, as an error of the
    /// metadata of `role` (the role whose `signed` object `value` is, or a key's own role).
    public static func encode(_ value: JSON, role: String) throws(TUFError) -> [UInt8] {
        var out: [UInt8] = []
        try write(value, role: role, into: &out)
        return out
    }

    private static func write(_ value: JSON, role: String, into out: inout [UInt8]) throws(TUFError) {
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .integer(let i): out += Array(String(i).utf8)
        case .unsignedInteger(let u): out += Array(String(u).utf8)
        case .number(let text):
            throw .metadata(role: role, detail: ErrorDetail("not_integer", [text]))
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                try write(item, role: role, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            let sorted = object.members.sorted { a, b in a.key.utf8.lexicographicallyPrecedes(b.key.utf8) }
            for (i, member) in sorted.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                try write(member.value, role: role, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        for byte in s.utf8 {
            if byte == 0x22 || byte == 0x5C { out.append(0x5C) }
            out.append(byte)
        }
        out.append(0x22)
    }
}

/// Ordinary JSON output for files we write (metadata a person may read): canonical key
/// order, with the escapes RFC 8259 requires, optionally indented.
public enum JSONWriter {
    /// `value` as UTF-8 JSON text.
    public static func encode(_ value: JSON, indent: Int? = nil) -> [UInt8] {
        var out: [UInt8] = []
        write(value, indent: indent, level: 0, into: &out)
        return out
    }

    private static func newline(_ indent: Int?, _ level: Int, _ out: inout [UInt8]) {
        guard let indent else { return }
        out.append(0x0A)
        out += [UInt8](repeating: 0x20, count: indent * level)
    }

    private static func write(_ value: JSON, indent: Int?, level: Int, into out: inout [UInt8]) {
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .integer(let i): out += Array(String(i).utf8)
        case .unsignedInteger(let u): out += Array(String(u).utf8)
        case .number(let text): out += Array(text.utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent, level + 1, &out)
                write(item, indent: indent, level: level + 1, into: &out)
            }
            if !items.isEmpty { newline(indent, level, &out) }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            let sorted = object.members.sorted { a, b in a.key.utf8.lexicographicallyPrecedes(b.key.utf8) }
            for (i, member) in sorted.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent, level + 1, &out)
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(0x20) }
                write(member.value, indent: indent, level: level + 1, into: &out)
            }
            if !sorted.isEmpty { newline(indent, level, &out) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        for byte in s.utf8 {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }
}
