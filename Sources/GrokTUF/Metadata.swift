import GrokBasics
import GrokCrypto

/// The four top-level roles.
public enum TopLevelRole: String, Sendable, CaseIterable {
    case root, timestamp, snapshot, targets
}

/// The major specification version this client implements (1.0.x; any 1.x is accepted).
public let supportedSpecMajor = "1"

// MARK: Reading fields

extension JSONObject {
    func required(_ key: String, _ role: String) throws(TUFError) -> JSON {
        guard let value = self[key] else { throw .metadata(role: role, detail: ErrorDetail("missing_field", [key])) }
        return value
    }

    func string(_ key: String, _ role: String) throws(TUFError) -> String {
        guard let s = try required(key, role).string else { throw .metadata(role: role, detail: ErrorDetail("not_string", [key])) }
        return s
    }

    func object(_ key: String, _ role: String) throws(TUFError) -> JSONObject {
        guard let o = try required(key, role).object else { throw .metadata(role: role, detail: ErrorDetail("not_object", [key])) }
        return o
    }

    func array(_ key: String, _ role: String) throws(TUFError) -> [JSON] {
        guard let a = try required(key, role).array else { throw .metadata(role: role, detail: ErrorDetail("not_array", [key])) }
        return a
    }

    func bool(_ key: String, _ role: String) throws(TUFError) -> Bool {
        guard let b = try required(key, role).bool else { throw .metadata(role: role, detail: ErrorDetail("not_bool", [key])) }
        return b
    }

    /// A positive integer (versions, thresholds, lengths may be 0 where `allowZero`).
    func count(_ key: String, _ role: String, allowZero: Bool = false) throws(TUFError) -> UInt64 {
        let value: UInt64
        switch try required(key, role) {
        case .integer(let i) where i >= 0: value = UInt64(i)
        case .unsignedInteger(let u): value = u
        default: throw .metadata(role: role, detail: ErrorDetail("not_count", [key]))
        }
        guard allowZero || value > 0 else { throw .metadata(role: role, detail: ErrorDetail("below_one", [key])) }
        return value
    }

    func stringList(_ key: String, _ role: String, unique: Bool = true) throws(TUFError) -> [String] {
        var out: [String] = []
        for item in try array(key, role) {
            guard let s = item.string else { throw .metadata(role: role, detail: ErrorDetail("not_string_list", [key])) }
            if unique, out.contains(s) { throw .metadata(role: role, detail: ErrorDetail("listed_twice", [key, s])) }
            out.append(s)
        }
        return out
    }
}

// MARK: Time

/// A UTC instant in whole seconds since 1970, as TUF's `expires` (`YYYY-MM-DDTHH:MM:SSZ`).
public struct UTCTime: Sendable, Comparable, Hashable, CustomStringConvertible {
    public var secondsSince1970: Int64

    public init(secondsSince1970: Int64) { self.secondsSince1970 = secondsSince1970 }

    /// Parses exactly `YYYY-MM-DDTHH:MM:SSZ`; `nil` for anything else.
    public init?(iso8601 text: String) {
        let b = Array(text.utf8)
        guard b.count == 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x5A else { return nil }
        func num(_ r: Range<Int>) -> Int64? {
            var v: Int64 = 0
            for i in r {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int64(b[i] - 0x30)
            }
            return v
        }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13), let mi = num(14..<16),
              let s = num(17..<19), (1...12).contains(mo), d >= 1, d <= Self.daysIn(month: mo, year: y), h < 24, mi < 60, s < 60
        else { return nil }
        secondsSince1970 = Self.days(year: y, month: mo, day: d) * 86400 + h * 3600 + mi * 60 + s
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date (Howard Hinnant's days_from_civil).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    public var description: String {
        let z = secondsSince1970 / 86400 + 719468
        let rem = secondsSince1970 % 86400
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let year = String(y)
        return "\(String(repeating: "0", count: max(0, 4 - year.count)))\(year)-\(two(m))-\(two(d))T\(two(rem / 3600)):\(two(rem / 60 % 60)):\(two(rem % 60))Z"
    }

    public static func < (a: UTCTime, b: UTCTime) -> Bool { a.secondsSince1970 < b.secondsSince1970 }
}

// MARK: Keys

/// A public key as TUF metadata lists it, with the verifier its type and scheme name.
/// Unknown types and schemes are kept (they may be used by other clients) but verify nothing.
public struct TUFKey: Sendable {
    public enum Verifier: Sendable {
        case ed25519(Ed25519PublicKey)
        case ecdsaP256(ECDSAP256PublicKey)
        case rsaPSS(RSAPSSPublicKey)
        case unsupported
    }

    public let keyType: String
    public let scheme: String
    /// The key object exactly as listed (the key id is the SHA-256 of its canonical form).
    public let json: JSONObject
    public let verifier: Verifier

    /// Reads a key object; throws when a supported type holds a bad or weak key.
    public init(json: JSONObject, role: String) throws(TUFError) {
        keyType = try json.string("keytype", role)
        scheme = try json.string("scheme", role)
        let keyval = try json.object("keyval", role)
        self.json = json
        switch (keyType, scheme) {
        case ("ed25519", "ed25519"):
            let text = try keyval.string("public", role)
            guard text.utf8.count == 64, let raw = Hex.decode(text) else {
                throw .metadata(role: role, detail: ErrorDetail("ed25519_key_hex"))
            }
            do { verifier = .ed25519(try Ed25519PublicKey(rawRepresentation: raw)) } catch {
                throw .metadata(role: role, detail: .nesting("key_refused", ["ed25519"], error))
            }
        case ("ecdsa", "ecdsa-sha2-nistp256"), ("ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256"):
            let pem = try keyval.string("public", role)
            do { verifier = .ecdsaP256(try ECDSAP256PublicKey(pem: pem)) } catch {
                throw .metadata(role: role, detail: .nesting("key_refused", ["ecdsa"], error))
            }
        case ("rsa", "rsassa-pss-sha256"):
            let pem = try keyval.string("public", role)
            do { verifier = .rsaPSS(try RSAPSSPublicKey(pem: pem)) } catch {
                throw .metadata(role: role, detail: .nesting("key_refused", ["rsa"], error))
            }
        default:
            verifier = .unsupported
        }
    }

    /// The key id the specification defines: hex SHA-256 of the canonical JSON of the key.
    public var computedKeyID: String {
        (try? CanonicalJSON.encode(.object(json), role: "root")).map { SHA256.hash($0).hex } ?? ""
    }

    /// The key material itself (type and public bytes): two key ids for the same key have the
    /// same material, so a threshold counts them once. `nil` for unsupported types.
    public var material: [UInt8]? {
        switch verifier {
        case .ed25519(let key): [1] + key.rawRepresentation
        case .ecdsaP256(let key): [2] + key.derRepresentation
        case .rsaPSS(let key): [3] + key.derRepresentation
        case .unsupported: nil
        }
    }

    /// Whether `signature` is this key's valid signature of `message`.
    public func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        switch verifier {
        case .ed25519(let key): key.isValidSignature(signature, for: message)
        case .ecdsaP256(let key): key.isValidSignature(signature, for: message)
        case .rsaPSS(let key): key.isValidSignature(signature, for: message)
        case .unsupported: false
        }
    }
}

/// A role's authorised keys and how many of them must sign.
public struct RoleKeys: Sendable, Equatable {
    public let keyIDs: [String]
    public let threshold: Int

    /// A role of `threshold` among `keyIDs`.
    public init(keyIDs: [String], threshold: Int) {
        self.keyIDs = keyIDs
        self.threshold = threshold
    }

    init(json: JSONObject, role: String) throws(TUFError) {
        keyIDs = try json.stringList("keyids", role)
        let t = try json.count("threshold", role)
        guard t <= UInt64(Int32.max) else { throw .metadata(role: role, detail: ErrorDetail("threshold_too_large", [String(t)])) }
        threshold = Int(t)
    }
}

// MARK: The envelope

/// One signature: the key id and the signature bytes (hex in the file).
public struct TUFSignature: Sendable, Equatable {
    public let keyID: String
    public let bytes: [UInt8]
}

/// A signed metadata file: `signed` (whose canonical JSON the signatures cover) and
/// `signatures`, with each key id at most once.
public struct SignedMetadata: Sendable {
    /// The file's bytes as received.
    public let raw: [UInt8]
    /// The `signed` object.
    public let signed: JSONObject
    /// Canonical JSON of `signed`: the bytes the signatures are over.
    public let canonicalSigned: [UInt8]
    public let signatures: [TUFSignature]
    /// `_type`.
    public let type: String
    public let version: UInt64
    public let expires: UTCTime
    public let specVersion: String

    /// Parses `raw` (strict JSON) as metadata whose `_type` must be `expectedType`.
    public init(raw: [UInt8], expectedType: String, role: String, limits: JSONLimits = JSONLimits()) throws(TUFError) {
        self.raw = raw
        guard let top = try JSONParser.parse(raw, limits: limits).object else {
            throw .metadata(role: role, detail: ErrorDetail("not_json_object"))
        }
        signed = try top.object("signed", role)
        var sigs: [TUFSignature] = []
        for item in try top.array("signatures", role) {
            guard let o = item.object else { throw .metadata(role: role, detail: ErrorDetail("signature_not_object")) }
            let keyID = try o.string("keyid", role)
            let hex = try o.string("sig", role)
            guard let bytes = Hex.decode(hex) else { throw .metadata(role: role, detail: ErrorDetail("signature_not_hex")) }
            guard !sigs.contains(where: { $0.keyID == keyID }) else {
                throw .metadata(role: role, detail: ErrorDetail("key_signs_twice", [keyID]))
            }
            sigs.append(TUFSignature(keyID: keyID, bytes: bytes))
        }
        signatures = sigs
        canonicalSigned = try CanonicalJSON.encode(.object(signed), role: role)
        type = try signed.string("_type", role)
        guard type == expectedType else {
            throw .metadata(role: role, detail: ErrorDetail("wrong_type", [type, expectedType]))
        }
        specVersion = try signed.string("spec_version", role)
        let parts = specVersion.split(separator: ".", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
            throw .metadata(role: role, detail: ErrorDetail("bad_spec_version", [specVersion]))
        }
        guard parts[0] == supportedSpecMajor else {
            throw .metadata(role: role, detail: ErrorDetail("unsupported_spec_version", [specVersion, "1.0"]))
        }
        version = try signed.count("version", role)
        let expiresText = try signed.string("expires", role)
        guard let expires = UTCTime(iso8601: expiresText) else {
            throw .metadata(role: role, detail: ErrorDetail("bad_expires", [expiresText]))
        }
        self.expires = expires
    }

    /// Whether the metadata has expired at `now` (expired when `now` ≥ `expires`).
    public func isExpired(at now: UTCTime) -> Bool { now >= expires }

    /// Checks that `threshold` distinct authorised keys from `keys` signed this metadata.
    /// Distinct means distinct key ids and distinct key material: one key listed under two
    /// ids counts once.
    public func verify(role: String, keys: [String: TUFKey], authorised: RoleKeys) throws(TUFError) {
        var valid = 0
        var seen: Set<[UInt8]> = []
        for keyID in authorised.keyIDs {
            guard let key = keys[keyID], let material = key.material, !seen.contains(material),
                  let signature = signatures.first(where: { $0.keyID == keyID })
            else { continue }
            if key.verifies(signature.bytes, of: canonicalSigned) {
                valid += 1
                seen.insert(material)
            }
        }
        guard valid >= authorised.threshold else { throw .threshold(role: role, valid: valid, threshold: authorised.threshold) }
    }
}

/// Reads a `keys` object: key id to key.
func readKeys(_ json: JSONObject, role: String) throws(TUFError) -> [String: TUFKey] {
    var keys: [String: TUFKey] = [:]
    for (keyID, value) in json.members {
        guard let o = value.object else { throw .metadata(role: role, detail: ErrorDetail("key_not_object", [keyID])) }
        keys[keyID] = try TUFKey(json: o, role: role)
    }
    return keys
}

// MARK: Roles

/// Root metadata: the keys and thresholds of the top-level roles.
public struct RootMetadata: Sendable {
    public let envelope: SignedMetadata
    public let keys: [String: TUFKey]
    public let roles: [TopLevelRole: RoleKeys]
    public let consistentSnapshot: Bool

    public init(_ raw: [UInt8]) throws(TUFError) {
        envelope = try SignedMetadata(raw: raw, expectedType: "root", role: "root")
        let signed = envelope.signed
        keys = try readKeys(try signed.object("keys", "root"), role: "root")
        let rolesJSON = try signed.object("roles", "root")
        var roles: [TopLevelRole: RoleKeys] = [:]
        for role in TopLevelRole.allCases {
            roles[role] = try RoleKeys(json: try rolesJSON.object(role.rawValue, "root"), role: "root")
        }
        self.roles = roles
        consistentSnapshot = signed["consistent_snapshot"].flatMap(\.bool) ?? false
        if let value = signed["consistent_snapshot"], value.bool == nil {
            throw .metadata(role: "root", detail: ErrorDetail("not_bool", ["consistent_snapshot"]))
        }
    }

    public var version: UInt64 { envelope.version }

    /// Verifies that `metadata` for top-level `role` is signed by this root's threshold.
    public func verify(_ metadata: SignedMetadata, as role: TopLevelRole) throws(TUFError) {
        try metadata.verify(role: role.rawValue, keys: keys, authorised: roles[role]!)
    }
}

/// What trusted metadata says about another metadata file.
public struct MetaFileInfo: Sendable, Equatable {
    public let version: UInt64
    public let length: UInt64?
    public let hashes: [String: String]?

    init(json: JSONObject, role: String) throws(TUFError) {
        version = try json.count("version", role)
        length = json.contains("length") ? try json.count("length", role, allowZero: true) : nil
        hashes = json.contains("hashes") ? try readHashes(try json.object("hashes", role), role: role) : nil
    }
}

func readHashes(_ json: JSONObject, role: String) throws(TUFError) -> [String: String] {
    var out: [String: String] = [:]
    for (name, value) in json.members {
        guard let s = value.string else { throw .metadata(role: role, detail: ErrorDetail("hash_not_string", [name])) }
        out[name] = s
    }
    guard !out.isEmpty else { throw .metadata(role: role, detail: ErrorDetail("no_hashes")) }
    return out
}

/// Checks `data` against a length and hashes from trusted metadata. Every listed hash must
/// match; an algorithm this client does not know fails.
func checkLengthAndHashes(_ data: [UInt8], length: UInt64?, hashes: [String: String]?, what: String) throws(TUFError) {
    if let length, UInt64(data.count) != length {
        throw .lengthOrHash(what: what, detail: ErrorDetail("wrong_length", [String(data.count), String(length)]))
    }
    for (algorithm, expected) in (hashes ?? [:]).sorted(by: { $0.key < $1.key }) {
        let actual: String
        switch algorithm {
        case "sha256": actual = SHA256.hash(data).hex
        case "sha512": actual = Hex.encode(SHA512.hash(data))
        default: throw .lengthOrHash(what: what, detail: ErrorDetail("unsupported_hash", [algorithm]))
        }
        guard actual == expected.lowercased() else {
            throw .lengthOrHash(what: what, detail: ErrorDetail("wrong_hash", [algorithm, actual, expected]))
        }
    }
}

/// Timestamp metadata: the current snapshot's version (and maybe length and hashes).
public struct TimestampMetadata: Sendable {
    public let envelope: SignedMetadata
    public let snapshot: MetaFileInfo

    public init(_ raw: [UInt8]) throws(TUFError) {
        envelope = try SignedMetadata(raw: raw, expectedType: "timestamp", role: "timestamp")
        let meta = try envelope.signed.object("meta", "timestamp")
        guard meta.count == 1, let info = meta["snapshot.json"]?.object else {
            throw .metadata(role: "timestamp", detail: ErrorDetail("timestamp_meta"))
        }
        snapshot = try MetaFileInfo(json: info, role: "timestamp")
    }

    public var version: UInt64 { envelope.version }
}

/// Snapshot metadata: the version of every targets metadata file.
public struct SnapshotMetadata: Sendable {
    public let envelope: SignedMetadata
    public let meta: [String: MetaFileInfo]

    public init(_ raw: [UInt8]) throws(TUFError) {
        envelope = try SignedMetadata(raw: raw, expectedType: "snapshot", role: "snapshot")
        var meta: [String: MetaFileInfo] = [:]
        for (name, value) in try envelope.signed.object("meta", "snapshot").members {
            guard let o = value.object else { throw .metadata(role: "snapshot", detail: ErrorDetail("meta_not_object", [name])) }
            meta[name] = try MetaFileInfo(json: o, role: "snapshot")
        }
        self.meta = meta
    }

    public var version: UInt64 { envelope.version }
}

/// A target file as targets metadata describes it.
public struct TargetInfo: Sendable, Equatable {
    /// The target path (the name clients ask for).
    public let path: String
    public let length: UInt64
    public let hashes: [String: String]
    /// The algorithm listed first (its digest names the file in a consistent snapshot).
    public let firstHashAlgorithm: String
    /// `custom`, as given (firmware packages carry their description here).
    public let custom: JSON?

    /// A target entry of `role`'s metadata (`length`, `hashes`, `custom`).
    public init(path: String, json: JSONObject, role: String) throws(TUFError) {
        self.path = path
        length = try json.count("length", role, allowZero: true)
        let hashesJSON = try json.object("hashes", role)
        hashes = try readHashes(hashesJSON, role: role)
        firstHashAlgorithm = hashesJSON.keys[0]
        custom = json["custom"]
    }

    /// Checks `data` is this target: its length and every hash.
    public func check(_ data: [UInt8]) throws(TUFError) {
        try checkLengthAndHashes(data, length: length, hashes: hashes, what: path)
    }
}

/// A delegation from a targets role to another.
public struct DelegatedRole: Sendable {
    public let name: String
    public let keys: RoleKeys
    public let terminating: Bool
    public let paths: [String]?
    public let pathHashPrefixes: [String]?

    init(json: JSONObject, role: String) throws(TUFError) {
        name = try json.string("name", role)
        keys = try RoleKeys(json: json, role: role)
        terminating = try json.bool("terminating", role)
        paths = json.contains("paths") ? try json.stringList("paths", role, unique: false) : nil
        pathHashPrefixes = json.contains("path_hash_prefixes") ? try json.stringList("path_hash_prefixes", role, unique: false) : nil
        guard (paths == nil) != (pathHashPrefixes == nil) else {
            throw .metadata(role: role, detail: ErrorDetail("delegation_paths", [name]))
        }
    }

    /// Whether this delegation covers `target` (a path pattern or a hash prefix matches).
    public func covers(_ target: String) -> Bool {
        if let paths { return paths.contains { pathMatches(pattern: $0, target: target) } }
        if let prefixes = pathHashPrefixes {
            let hash = SHA256.hash(Array(target.utf8)).hex
            return prefixes.contains { hash.hasPrefix($0) }
        }
        return false
    }
}

/// The spec's path pattern match: shell-style (`*`, `?`, `[...]`), where `*` does not match
/// `/`, and the pattern must have as many `/`-separated parts as the target.
public func pathMatches(pattern: String, target: String) -> Bool {
    let p = pattern.split(separator: "/", omittingEmptySubsequences: false)
    let t = target.split(separator: "/", omittingEmptySubsequences: false)
    guard p.count == t.count else { return false }
    for (a, b) in zip(p, t) where !fnmatch(Array(a.unicodeScalars), Array(b.unicodeScalars)) { return false }
    return true
}

/// Python's `fnmatch.fnmatch` (case-sensitive on POSIX) on one path part.
func fnmatch(_ p: [Unicode.Scalar], _ s: [Unicode.Scalar]) -> Bool {
    var pi = 0, si = 0
    var starP = -1, starS = 0
    while si < s.count {
        if pi < p.count {
            switch p[pi] {
            case "*":
                starP = pi; starS = si; pi += 1
                continue
            case "?":
                pi += 1; si += 1
                continue
            case "[":
                if let (matched, next) = matchClass(p, pi, s[si]) {
                    if matched { pi = next; si += 1; continue }
                } else if p[pi] == s[si] {
                    pi += 1; si += 1
                    continue
                }
            default:
                if p[pi] == s[si] { pi += 1; si += 1; continue }
            }
        }
        if starP >= 0 {
            pi = starP + 1; starS += 1; si = starS
            continue
        }
        return false
    }
    while pi < p.count, p[pi] == "*" { pi += 1 }
    return pi == p.count
}

/// A `[...]` class at `p[at]`: whether `c` is in it and where the pattern continues; `nil`
/// when the bracket is not closed (then it is a literal `[`).
private func matchClass(_ p: [Unicode.Scalar], _ at: Int, _ c: Unicode.Scalar) -> (Bool, Int)? {
    var i = at + 1
    var negate = false
    if i < p.count, p[i] == "!" { negate = true; i += 1 }
    var matched = false
    var first = true
    while i < p.count {
        if p[i] == "]", !first { return (matched != negate, i + 1) }
        first = false
        if i + 2 < p.count, p[i + 1] == "-", p[i + 2] != "]" {
            if p[i].value <= c.value, c.value <= p[i + 2].value { matched = true }
            i += 3
        } else {
            if p[i] == c { matched = true }
            i += 1
        }
    }
    return nil
}

/// Targets metadata (top-level or delegated): target files and delegations.
public struct TargetsMetadata: Sendable {
    public let envelope: SignedMetadata
    public let targets: [String: TargetInfo]
    public let delegationKeys: [String: TUFKey]
    /// Delegations in their order of priority.
    public let delegations: [DelegatedRole]

    public init(_ raw: [UInt8], role: String) throws(TUFError) {
        envelope = try SignedMetadata(raw: raw, expectedType: "targets", role: role)
        var targets: [String: TargetInfo] = [:]
        for (path, value) in try envelope.signed.object("targets", role).members {
            guard let o = value.object else { throw .metadata(role: role, detail: ErrorDetail("target_not_object", [path])) }
            targets[path] = try TargetInfo(path: path, json: o, role: role)
        }
        self.targets = targets
        if let d = envelope.signed["delegations"] {
            guard let d = d.object else { throw .metadata(role: role, detail: ErrorDetail("not_object", ["delegations"])) }
            delegationKeys = try readKeys(try d.object("keys", role), role: role)
            var roles: [DelegatedRole] = []
            for item in try d.array("roles", role) {
                guard let o = item.object else { throw .metadata(role: role, detail: ErrorDetail("delegated_role_not_object")) }
                let delegated = try DelegatedRole(json: o, role: role)
                guard !roles.contains(where: { $0.name == delegated.name }) else {
                    throw .metadata(role: role, detail: ErrorDetail("delegated_twice", [delegated.name]))
                }
                guard !TopLevelRole.allCases.map(\.rawValue).contains(delegated.name) else {
                    throw .metadata(role: role, detail: ErrorDetail("reserved_role_name", [delegated.name]))
                }
                roles.append(delegated)
            }
            delegations = roles
        } else {
            delegationKeys = [:]
            delegations = []
        }
    }

    public var version: UInt64 { envelope.version }

    /// Verifies that `metadata` for the delegated role `name` is signed by the threshold
    /// this role gives it.
    public func verify(_ metadata: SignedMetadata, asDelegated name: String) throws(TUFError) {
        guard let role = delegations.first(where: { $0.name == name }) else {
            throw .metadata(role: name, detail: ErrorDetail("not_delegated"))
        }
        try metadata.verify(role: name, keys: delegationKeys, authorised: role.keys)
    }
}
