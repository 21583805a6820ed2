import GrokBasics
import GrokTUF
import Testing

@Suite("Strict JSON and OLPC canonical JSON")
struct JSONTests {
    @Test("A key given twice is refused at the top level and at any depth", arguments: [
        #"{"sha256": "aa", "sha256": "bb"}"#,
        #"{"signed": {"targets": {"a": {"hashes": {"sha256": "1", "sha256": "2"}}}}}"#,
        #"[{"x": 1}, {"y": 1, "y": 1}]"#,
    ])
    func duplicateKeys(text: String) {
        #expect(throws: TUFError.self) { try json(text) }
    }

    @Test("Keys that differ only in Unicode normalization are different keys, compared byte for byte")
    func normalizationIsNotEquality() throws {
        // "é" precomposed and "e" + combining acute: Swift's == says equal, JSON does not.
        let value = try json("{\"\u{E9}\": 1, \"e\u{301}\": 2}")
        #expect(value.object?.count == 2)
    }

    @Test("Integers are exact over the whole 64-bit range; a larger one is refused")
    func integers() throws {
        #expect(try json("9223372036854775807") == .integer(Int64.max))
        #expect(try json("-9223372036854775808") == .integer(Int64.min))
        #expect(try json("18446744073709551615") == .unsignedInteger(UInt64.max))
        #expect(throws: TUFError.self) { try json("18446744073709551616") }
        #expect(try json("1.5e3") == .number("1.5e3"))
        #expect(throws: TUFError.self) { try json("01") }
        #expect(throws: TUFError.self) { try json("-") }
    }

    @Test("Depth and size limits are enforced while parsing")
    func limits() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: TUFError.self) { try JSONParser.parse(Array(deep.utf8)) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect((try? JSONParser.parse(Array(ok.utf8))) != nil)
        #expect(throws: TUFError.self) { try JSONParser.parse(Array("[1,2,3]".utf8), limits: JSONLimits(maxBytes: 6)) }
    }

    @Test("Strings: escapes and surrogate pairs decode; lone surrogates, raw control characters and bad UTF-8 are refused")
    func strings() throws {
        #expect(try json(#""a\"b\\c\/\n\u00e9\ud83d\ude00""#) == .string("a\"b\\c/\n\u{E9}\u{1F600}"))
        #expect(throws: TUFError.self) { try json(#""\ud83d""#) }
        #expect(throws: TUFError.self) { try json(#""\ude00x""#) }
        #expect(throws: TUFError.self) { try JSONParser.parse([0x22, 0x0A, 0x22]) }
        #expect(throws: TUFError.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: TUFError.self) { try json(#""\x""#) }
    }

    @Test("Trailing bytes, trailing commas and bare words are refused", arguments: ["{} {}", "[1,]", #"{"a":1,}"#, "nul", "tru e", ""])
    func malformed(text: String) {
        #expect(throws: TUFError.self) { try json(text) }
    }

    @Test("Canonical JSON: keys sorted by code point, no whitespace, only quote and backslash escaped, UTF-8 as is")
    func canonical() throws {
        let value = try json(#"{"b": [1, -2, true, null], "a": "x\"y\\z\n\u00e9", "Z": {}, "\u00e9": 0, "aa": false}"#)
        let expected = "{\"Z\":{},\"a\":\"x\\\"y\\\\z\n\u{E9}\",\"aa\":false,\"b\":[1,-2,true,null],\"\u{E9}\":0}"
        #expect(try CanonicalJSON.encode(value, role: "root") == Array(expected.utf8))
    }

    @Test("Canonical JSON refuses a number that is not an integer")
    func canonicalRefusesFloats() throws {
        #expect(throws: TUFError.metadata(role: "snapshot", detail: ErrorDetail("not_integer", ["1.5"]))) {
            try CanonicalJSON.encode(try json(#"{"x": 1.5}"#), role: "snapshot")
        }
    }

    @Test("Written JSON parses back to the same value")
    func writerRoundTrip() throws {
        let value = try json(#"{"a": ["\u0001\t", 18446744073709551615, -1, {"b": null}], "c": "\u00e9\""}"#)
        #expect(try JSONParser.parse(JSONWriter.encode(value, indent: 2)) == value)
        #expect(try JSONParser.parse(JSONWriter.encode(value)) == value)
    }
}
