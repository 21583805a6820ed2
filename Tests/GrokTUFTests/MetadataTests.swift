import GrokCrypto
import GrokTUF
import Testing

@Suite("TUF metadata: time, path patterns, keys, signatures")
struct MetadataTests {
    @Test("expires is exactly YYYY-MM-DDTHH:MM:SSZ and round-trips", arguments: [
        "1970-01-01T00:00:00Z", "2000-02-29T12:34:56Z", "2026-12-01T00:00:00Z", "2999-12-31T23:59:59Z",
    ])
    func utcRoundTrip(text: String) throws {
        let time = try #require(UTCTime(iso8601: text))
        #expect(time.description == text)
    }

    @Test("Times that are not valid or not in UTC are refused", arguments: [
        "2026-12-01T00:00:00", "2026-12-01T00:00:00+00:00", "2026-02-30T00:00:00Z", "2100-02-29T00:00:00Z",
        "2026-12-01 00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T00:00:00.5Z",
    ])
    func utcRefused(text: String) {
        #expect(UTCTime(iso8601: text) == nil)
    }

    @Test("The epoch second count is the one Python's calendar.timegm gives")
    func utcSeconds() {
        #expect(UTCTime(iso8601: "2026-12-01T00:00:00Z")?.secondsSince1970 == 1_796_083_200)
        #expect(UTCTime(iso8601: "1970-01-02T00:00:01Z")?.secondsSince1970 == 86401)
    }

    @Test("Path patterns match part by part as python-tuf does: * and ? never cross a /", arguments: [
        ("*", "file.txt", true), ("*", "dir/file.txt", false), ("dir/*", "dir/file.txt", true),
        ("dir/*.tgz", "dir/a.tgz", true), ("dir/*.tgz", "dir/a.zip", false), ("*/*", "a/b", true),
        ("a/?.bin", "a/x.bin", true), ("a/?.bin", "a/xy.bin", false), ("[ab]*", "beta", true), ("[!ab]*", "beta", false),
        ("team-a/*", "team-b/x", false), ("firmware/1.*/image", "firmware/1.9/image", true), ("", "", true),
        ("a[", "a[", true), ("*.json", ".json", true),
    ])
    func pathPatterns(pattern: String, target: String, expected: Bool) {
        #expect(pathMatches(pattern: pattern, target: target) == expected)
    }

    @Test("A signature from one key counts once, however often the role lists or the file repeats it")
    func thresholdCountsDistinctKeys() throws {
        let key = try TUFSigningKey.ed25519()
        let signed = JSONObject([("_type", .string("timestamp"))])!
        let bytes = try signMetadata(signed, with: [key])
        var top = try #require(try JSONParser.parse(bytes).object)
        let sig = try #require(top["signatures"]?.array?.first)
        top["signatures"] = .array([sig, sig])
        // The same key id signing twice is refused outright.
        #expect(throws: TUFError.self) {
            try SignedMetadata(raw: JSONWriter.encode(.object(top)), expectedType: "timestamp", role: "timestamp")
        }
    }

    @Test("spec_version: any 1.x is read, another major or a malformed version is refused", arguments: [
        ("1.0.31", true), ("1.0", true), ("1.99.0", true), ("2.0.0", false), ("1", false), ("1.0.x", false), ("v1.0.0", false),
    ])
    func specVersion(version: String, accepted: Bool) throws {
        let key = try TUFSigningKey.ed25519()
        let signed = JSONObject([
            ("_type", .string("timestamp")), ("spec_version", .string(version)), ("version", .integer(1)),
            ("expires", .string(future)), ("meta", obj(("snapshot.json", obj(("version", .integer(1)))))),
        ])!
        let bytes = try signMetadata(signed, with: [key])
        #expect(((try? TimestampMetadata(bytes)) != nil) == accepted)
    }

    @Test("Each key type verifies its own signature over canonical JSON and refuses a changed message")
    func keyTypes() throws {
        for key in [try TUFSigningKey.ed25519(), try TUFSigningKey.ecdsaP256(), try TUFSigningKey.rsaPSS(bits: 2048)] {
            let parsed = try TUFKey(json: key.publicKeyJSON, role: "root")
            let message = Array("{\"a\":1}".utf8)
            let signature = try key.sign(message, role: "root")
            #expect(parsed.verifies(signature, of: message))
            #expect(!parsed.verifies(signature, of: Array("{\"a\":2}".utf8)))
            #expect(parsed.computedKeyID == key.keyID)
        }
    }

    @Test("A small-order Ed25519 key in metadata is refused when the metadata is read")
    func smallOrderKeyInMetadata() throws {
        let identity = "01" + String(repeating: "00", count: 31)
        let keyJSON = try #require(try json(#"{"keytype":"ed25519","scheme":"ed25519","keyval":{"public":"\#(identity)"}}"#).object)
        #expect(throws: TUFError.self) { try TUFKey(json: keyJSON, role: "root") }
    }

    @Test("Unknown key types are kept but verify nothing")
    func unknownKeyType() throws {
        let keyJSON = try #require(try json(#"{"keytype":"sphincs","scheme":"sphincs-x","keyval":{"public":"00"}}"#).object)
        let key = try TUFKey(json: keyJSON, role: "root")
        #expect(!key.verifies([0], of: [0]))
    }

    @Test("A target lists length and hashes; every listed hash must match and an unknown algorithm fails")
    func targetHashes() throws {
        let data = Array("firmware".utf8)
        let sha256 = SHA256.hash(data).hex, sha512 = Hex.encode(SHA512.hash(data))
        let targets = try #require(try json("""
            {"_type": "targets", "spec_version": "1.0.31", "version": 1, "expires": "\(future)", "targets": {
              "good": {"length": 8, "hashes": {"sha256": "\(sha256)", "sha512": "\(sha512)"}, "custom": {"version": "1.9.9"}},
              "unknown": {"length": 8, "hashes": {"md5": "00"}},
              "short": {"length": 7, "hashes": {"sha256": "\(sha256)"}}}}
            """).object)
        let metadata = try TargetsMetadata(try signMetadata(targets, with: [try TUFSigningKey.ed25519()]), role: "targets")
        let good = try #require(metadata.targets["good"])
        try good.check(data)
        #expect(good.custom == obj(("version", .string("1.9.9"))))
        #expect(throws: TUFError.self) { try good.check(Array("firmwarE".utf8)) }
        #expect(throws: TUFError.self) { try metadata.targets["unknown"]!.check(data) }
        #expect(throws: TUFError.self) { try metadata.targets["short"]!.check(data) }
    }

    @Test("One key listed under two key ids counts once towards a threshold")
    func sameKeyTwoIDs() throws {
        let key = try TUFSigningKey.ed25519()
        let parsed = try TUFKey(json: key.publicKeyJSON, role: "root")
        let signed = JSONObject([
            ("_type", .string("timestamp")), ("spec_version", .string("1.0.31")), ("version", .integer(1)),
            ("expires", .string(future)), ("meta", obj(("snapshot.json", obj(("version", .integer(1)))))),
        ])!
        let message = try CanonicalJSON.encode(.object(signed), role: "timestamp")
        let signature = Hex.encode(try key.sign(message, role: "timestamp"))
        let bytes = JSONWriter.encode(obj(
            ("signed", .object(signed)),
            ("signatures", .array([obj(("keyid", .string("id-one")), ("sig", .string(signature))),
                                   obj(("keyid", .string("id-two")), ("sig", .string(signature)))]))))
        let metadata = try SignedMetadata(raw: bytes, expectedType: "timestamp", role: "timestamp")
        let keys = ["id-one": parsed, "id-two": parsed]
        try metadata.verify(role: "timestamp", keys: keys, authorised: RoleKeys(keyIDs: ["id-one", "id-two"], threshold: 1))
        #expect(throws: TUFError.threshold(role: "timestamp", valid: 1, threshold: 2)) {
            try metadata.verify(role: "timestamp", keys: keys, authorised: RoleKeys(keyIDs: ["id-one", "id-two"], threshold: 2))
        }
    }
}
