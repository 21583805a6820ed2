import Foundation
import GrokCrypto
import GrokTUF
import GrokTestSupport

/// `{...}` from pairs (keys must differ).
func obj(_ pairs: (String, JSON)...) -> JSON { .object(JSONObject(pairs)!) }

func json(_ text: String) throws -> JSON { try JSONParser.parse(Array(text.utf8)) }

/// A fresh temporary directory, left for the system to clean (repositories, servers and
/// clients outlive the test's scope).
func temporaryDirectory(_ label: String) -> String {
    TemporaryDirectory("groktuf-\(label)", removedWhenReleased: false).path
}

/// The day the tests live on: 2026-12-01T00:00:00Z.
let testNow = UTCTime(iso8601: "2026-12-01T00:00:00Z")!
let future = "2030-01-01T00:00:00Z"

/// A TUF repository on disk, written by our signer, served with file:// URLs. Each role's
/// keys, threshold, version and expiry can be changed and republished, as an attacker or
/// a repository owner would.
final class TestRepository {
    let directory: String
    var metadataDirectory: String { directory + "/metadata" }
    var targetsDirectory: String { directory + "/targets" }
    var metadataURL: String { "file://" + metadataDirectory }
    var targetsURL: String { "file://" + targetsDirectory }

    var keys: [String: [TUFSigningKey]] = [:]
    /// Who signs each role (by default all its keys).
    var signers: [String: [TUFSigningKey]] = [:]
    var thresholds: [String: Int] = ["root": 1, "timestamp": 1, "snapshot": 1, "targets": 1]
    var versions: [String: UInt64] = ["root": 1, "timestamp": 1, "snapshot": 1, "targets": 1]
    var expires: [String: String] = [:]
    var consistentSnapshot = false
    var targets: [String: [UInt8]] = [:]

    struct Delegation {
        var name: String
        var delegator: String
        var keys: [TUFSigningKey]
        var threshold = 1
        var paths: [String]?
        var hashPrefixes: [String]?
        var terminating = false
        var targets: [String: [UInt8]] = [:]
        var version: UInt64 = 1
    }
    var delegations: [Delegation] = []

    init(label: String = "repo") throws {
        directory = temporaryDirectory(label)
        try FileManager.default.createDirectory(atPath: metadataDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: targetsDirectory, withIntermediateDirectories: true)
        for role in ["root", "timestamp", "snapshot", "targets"] {
            keys[role] = [try TUFSigningKey.ed25519()]
        }
    }

    func signersFor(_ role: String) -> [TUFSigningKey] { signers[role] ?? keys[role] ?? [] }

    func rootSigned() -> JSONObject {
        var keyObjects: [(String, JSON)] = []
        var seen = Set<String>()
        var roles: [(String, JSON)] = []
        for role in ["root", "timestamp", "snapshot", "targets"] {
            for key in keys[role]! where !seen.contains(key.keyID) {
                seen.insert(key.keyID)
                keyObjects.append((key.keyID, .object(key.publicKeyJSON)))
            }
            roles.append((role, obj(("keyids", .array(keys[role]!.map { .string($0.keyID) })),
                                   ("threshold", .integer(Int64(thresholds[role]!))))))
        }
        return JSONObject([
            ("_type", .string("root")), ("spec_version", .string("1.0.31")), ("version", .integer(Int64(versions["root"]!))),
            ("expires", .string(expires["root"] ?? future)), ("consistent_snapshot", .bool(consistentSnapshot)),
            ("keys", .object(JSONObject(keyObjects)!)), ("roles", .object(JSONObject(roles)!)),
        ])!
    }

    /// Signs and writes root version `versions["root"]` as `N.root.json`; returns its bytes.
    @discardableResult
    func publishRoot(extraSigners: [TUFSigningKey] = []) throws -> [UInt8] {
        let bytes = try signMetadata(rootSigned(), with: signersFor("root") + extraSigners)
        try write("\(versions["root"]!).root.json", bytes)
        return bytes
    }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: metadataDirectory + "/" + name))
    }

    func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: metadataDirectory + "/" + name)))
    }

    func targetsSigned(_ files: [String: [UInt8]], version: UInt64, expires: String, children: [Delegation]) -> JSONObject {
        var entries: [(String, JSON)] = []
        for (path, bytes) in files.sorted(by: { $0.key < $1.key }) {
            entries.append((path, obj(("length", .integer(Int64(bytes.count))),
                                      ("hashes", obj(("sha256", .string(SHA256.hash(bytes).hex)))))))
        }
        var pairs: [(String, JSON)] = [
            ("_type", .string("targets")), ("spec_version", .string("1.0.31")), ("version", .integer(Int64(version))),
            ("expires", .string(expires)), ("targets", .object(JSONObject(entries)!)),
        ]
        if !children.isEmpty {
            var keyObjects: [(String, JSON)] = []
            var seen = Set<String>()
            var roles: [JSON] = []
            for child in children {
                for key in child.keys where !seen.contains(key.keyID) {
                    seen.insert(key.keyID)
                    keyObjects.append((key.keyID, .object(key.publicKeyJSON)))
                }
                var role: [(String, JSON)] = [
                    ("name", .string(child.name)), ("keyids", .array(child.keys.map { .string($0.keyID) })),
                    ("threshold", .integer(Int64(child.threshold))), ("terminating", .bool(child.terminating)),
                ]
                if let paths = child.paths { role.append(("paths", .array(paths.map { .string($0) }))) }
                if let prefixes = child.hashPrefixes { role.append(("path_hash_prefixes", .array(prefixes.map { .string($0) }))) }
                roles.append(.object(JSONObject(role)!))
            }
            pairs.append(("delegations", obj(("keys", .object(JSONObject(keyObjects)!)), ("roles", .array(roles)))))
        }
        return JSONObject(pairs)!
    }

    /// Writes targets (and delegated targets), snapshot and timestamp, and the target files.
    func publish(snapshotHashes: Bool = true) throws {
        var meta: [(String, JSON)] = []
        func add(_ name: String, _ bytes: [UInt8], version: UInt64) throws {
            meta.append(("\(name).json", obj(("version", .integer(Int64(version))))))
            try write("\(name).json", bytes)
            if consistentSnapshot { try write("\(version).\(name).json", bytes) }
        }
        let top = try signMetadata(
            targetsSigned(targets, version: versions["targets"]!, expires: expires["targets"] ?? future,
                          children: delegations.filter { $0.delegator == "targets" }),
            with: signersFor("targets"))
        try add("targets", top, version: versions["targets"]!)
        for d in delegations {
            let bytes = try signMetadata(
                targetsSigned(d.targets, version: d.version, expires: future, children: delegations.filter { $0.delegator == d.name }),
                with: d.keys)
            try add(d.name, bytes, version: d.version)
        }
        let snapshot = try signMetadata(JSONObject([
            ("_type", .string("snapshot")), ("spec_version", .string("1.0.31")), ("version", .integer(Int64(versions["snapshot"]!))),
            ("expires", .string(expires["snapshot"] ?? future)), ("meta", .object(JSONObject(meta)!)),
        ])!, with: signersFor("snapshot"))
        try write("snapshot.json", snapshot)
        if consistentSnapshot { try write("\(versions["snapshot"]!).snapshot.json", snapshot) }
        var info: [(String, JSON)] = [("version", .integer(Int64(versions["snapshot"]!)))]
        if snapshotHashes {
            info.append(("length", .integer(Int64(snapshot.count))))
            info.append(("hashes", obj(("sha256", .string(SHA256.hash(snapshot).hex)))))
        }
        try publishTimestamp(info: JSONObject(info)!)
        for (path, bytes) in targets.merging(delegations.flatMap { $0.targets }, uniquingKeysWith: { a, _ in a }) {
            var name = path
            if consistentSnapshot {
                let parts = path.split(separator: "/", omittingEmptySubsequences: false)
                name = (parts.dropLast() + ["\(SHA256.hash(bytes).hex).\(parts.last!)"]).joined(separator: "/")
            }
            let file = targetsDirectory + "/" + name
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
        }
    }

    func publishTimestamp(info: JSONObject? = nil, version: UInt64? = nil) throws {
        let snapshotInfo = info ?? obj(("version", .integer(Int64(versions["snapshot"]!)))).object!
        let timestamp = try signMetadata(JSONObject([
            ("_type", .string("timestamp")), ("spec_version", .string("1.0.31")),
            ("version", version.map { $0 > UInt64(Int64.max) ? .unsignedInteger($0) : .integer(Int64($0)) } ?? .integer(Int64(versions["timestamp"]!))),
            ("expires", .string(expires["timestamp"] ?? future)), ("meta", obj(("snapshot.json", .object(snapshotInfo)))),
        ])!, with: signersFor("timestamp"))
        try write("timestamp.json", timestamp)
    }

    /// A client directory initialised with root version 1 (publish it first).
    func newClient() throws -> String {
        let client = temporaryDirectory("client")
        try Updater.initialize(metadataDirectory: client + "/metadata", trustedRoot: try read("1.root.json"))
        return client
    }

    func updater(_ client: String, now: UTCTime = testNow, configuration: UpdaterConfiguration = UpdaterConfiguration()) throws -> Updater {
        try Updater(
            metadataDirectory: client + "/metadata", metadataBaseURL: metadataURL, targetBaseURL: targetsURL,
            fetcher: LocalFileFetcher(), clock: { now }, configuration: configuration)
    }

    /// Runs one refresh as a new client process would.
    func refresh(_ client: String, now: UTCTime = testNow) async throws {
        try await updater(client, now: now).refresh()
    }
}

/// The version of `role` in the client's trusted store, or nil.
func trustedVersion(_ client: String, _ role: String) -> UInt64? {
    guard let data = FileManager.default.contents(atPath: client + "/metadata/\(role).json"),
          let top = try? JSONParser.parse(Array(data)).object, let signed = top["signed"]?.object else { return nil }
    switch signed["version"] {
    case .integer(let i): return UInt64(i)
    case .unsignedInteger(let u): return u
    default: return nil
    }
}
