import Glibc
import GrokBasics
import GrokCrypto

/// A TUF repository being edited by its owner (the publisher side of issue 11): the
/// metadata of every role as it stands, each with the signatures collected so far, and the
/// target files. `grokctl repo` is a thin command line over it.
///
/// Layout of the working directory (never served as is: ``publish(to:now:)`` writes what a
/// web server serves):
///
/// - `repository.json`: the expiry of each role (seconds from signing) and the versions last
///   published, so edits after a publish raise the version once.
/// - `metadata/root.json`, `targets.json`, `CHANNEL.json`, `snapshot.json`, `timestamp.json`:
///   the staged files (`signed` and the signatures so far).
/// - `metadata/N.root.json`: every earlier root, kept for the chain a station walks.
/// - `targets/PATH`: the target files, by target path.
///
/// Channels are delegated targets roles, one per channel, each trusted only for the paths
/// `CHANNEL/*` and terminating: a leaked development key cannot sign a release package, and
/// a channel's keys rotate in `targets.json` without a new root.
///
/// Not `Sendable`: one process edits a repository at a time (a lock file guards it).
public final class TUFRepository {
    public let directory: String
    private var metadataStore: FileStore { FileStore(directory: directory + "/metadata") }
    private var settings: JSONObject

    /// Expiries of the fleet owner's guide (docs/firmware-format.md).
    public static let defaultExpiry: [String: Int64] = [
        "root": 365 * 86_400, "targets": 90 * 86_400, "snapshot": 7 * 86_400, "timestamp": 86_400,
    ]
    public static let defaultChannelExpiry: Int64 = 90 * 86_400
    static let specVersion = "1.0.31"
    static let maxFile = 16 << 20

    /// Public keys and threshold of one role.
    public struct RoleKeySet {
        public var keys: [(json: JSONObject, keyID: String)]
        public var threshold: Int
        public init(keys: [(json: JSONObject, keyID: String)], threshold: Int) {
            self.keys = keys
            self.threshold = threshold
        }
    }

    /// Opens the repository made by ``create(at:root:timestamp:snapshot:targets:channels:expiry:now:)``.
    public init(directory: String) throws(TUFError) {
        self.directory = directory
        guard let bytes = try FileStore(directory: directory).read("repository.json", limit: 1 << 20),
              let object = try JSONParser.parse(bytes).object
        else { throw .publisher(detail: ErrorDetail("not_a_repository", [directory])) }
        settings = object
    }

    /// Makes a new repository: root version 1 with these keys, an empty targets role that
    /// delegates `CHANNEL/*` to each channel's keys, and each channel empty. Nothing is
    /// signed yet: each key holder then runs ``sign(role:with:)``.
    @discardableResult
    public static func create(
        at directory: String, root: RoleKeySet, timestamp: RoleKeySet, snapshot: RoleKeySet, targets: RoleKeySet,
        channels: [(name: String, keys: RoleKeySet)], expiry: [String: Int64] = [:], now: UTCTime
    ) throws(TUFError) -> TUFRepository {
        var st = stat()
        if lstat(directory + "/repository.json", &st) == 0 { throw .publisher(detail: ErrorDetail("repository_exists", [directory])) }
        for set in [root, timestamp, snapshot, targets] + channels.map(\.keys) {
            try check(set)
        }
        for channel in channels {
            guard isChannelName(channel.name) else {
                throw .publisher(detail: ErrorDetail("bad_channel_name", [channel.name]))
            }
        }
        guard Set(channels.map(\.name)).count == channels.count else { throw .publisher(detail: ErrorDetail("channel_twice")) }
        var expiries: [(String, JSON)] = []
        for role in ["root", "timestamp", "snapshot", "targets"] + channels.map(\.name) {
            let seconds = expiry[role] ?? defaultExpiry[role] ?? defaultChannelExpiry
            guard seconds > 0 else { throw .publisher(detail: ErrorDetail("expiry_not_positive", [role])) }
            expiries.append((role, .integer(seconds)))
        }
        let config = JSONObject([
            ("expiry_seconds", .object(JSONObject(expiries)!)),
            ("channels", .array(channels.map { .string($0.name) })),
            ("published", .object(JSONObject())),
        ])!
        try FileStore(directory: directory).write("repository.json", JSONWriter.encode(.object(config), indent: 1))
        let repository = try TUFRepository(directory: directory)
        let rootSigned = makeRoot(version: 1, expires: now.adding(repository.expiry("root")),
                                  roles: ["root": root, "timestamp": timestamp, "snapshot": snapshot, "targets": targets])
        try repository.stage("root", rootSigned)
        var delegations: [(String, RoleKeySet)] = []
        for channel in channels {
            delegations.append((channel.name, channel.keys))
            try repository.stage(channel.name, makeTargets(version: 1, expires: now.adding(repository.expiry(channel.name)),
                                                          targets: JSONObject(), delegations: nil))
        }
        try repository.stage("targets", makeTargets(version: 1, expires: now.adding(repository.expiry("targets")),
                                                    targets: JSONObject(), delegations: delegations))
        return repository
    }

    // MARK: Reading

    /// The channel (delegated role) names.
    public var channels: [String] { settings["channels"]?.array?.compactMap(\.string) ?? [] }

    func expiry(_ role: String) -> Int64 { settings["expiry_seconds"]?.object?[role]?.int64 ?? Self.defaultChannelExpiry }

    func publishedVersion(_ role: String) -> UInt64 {
        settings["published"]?.object?[role]?.int64.map { UInt64($0) } ?? 0
    }

    /// The staged `signed` object of `role` and its signatures.
    public func staged(_ role: String) throws(TUFError) -> (signed: JSONObject, signatures: [JSON])? {
        guard let bytes = try metadataStore.read(fileName(role), limit: Self.maxFile) else { return nil }
        guard let top = try JSONParser.parse(bytes).object, let signed = top["signed"]?.object,
              let signatures = top["signatures"]?.array
        else { throw .publisher(detail: ErrorDetail("metadata_damaged", ["metadata/" + fileName(role)])) }
        return (signed, signatures)
    }

    func requireStaged(_ role: String) throws(TUFError) -> (signed: JSONObject, signatures: [JSON]) {
        guard let s = try staged(role) else {
            throw .publisher(detail: ErrorDetail("no_such_role", [role, (["root", "targets"] + channels + ["snapshot", "timestamp"]).joined(separator: ", ")]))
        }
        return s
    }

    func stagedBytes(_ role: String) throws(TUFError) -> [UInt8] {
        guard let bytes = try metadataStore.read(fileName(role), limit: Self.maxFile) else {
            throw .publisher(detail: ErrorDetail("role_without_metadata", [role]))
        }
        return bytes
    }

    func fileName(_ role: String) -> String { percentEncode(role) + ".json" }

    /// The current root as the client reads it (signatures need not be complete).
    public func rootMetadata() throws(TUFError) -> RootMetadata { try RootMetadata(try stagedBytes("root")) }

    func version(of signed: JSONObject) -> UInt64 {
        if case .integer(let v)? = signed["version"] { return UInt64(max(v, 0)) }
        if case .unsignedInteger(let v)? = signed["version"] { return v }
        return 0
    }

    /// Roles whose staged metadata does not yet carry its threshold of valid signatures, with
    /// how many it has and needs.
    public func missingSignatures() throws(TUFError) -> [(role: String, valid: Int, threshold: Int)] {
        var out: [(String, Int, Int)] = []
        for role in ["root", "targets"] + channels + ["snapshot", "timestamp"] {
            guard try staged(role) != nil else {
                out.append((role, 0, 1))
                continue
            }
            do { try verifyStaged(role) } catch {
                if case .threshold(_, let valid, let threshold) = error { out.append((role, valid, threshold)) } else { throw error }
            }
        }
        return out
    }

    /// Checks `role`'s staged file against the keys that authorise it (root: its own and the
    /// previous root's thresholds).
    func verifyStaged(_ role: String) throws(TUFError) {
        let root = try rootMetadata()
        switch role {
        case "root":
            try root.verify(root.envelope, as: .root)
            if root.version > 1 {
                guard let previous = try metadataStore.read("\(root.version - 1).root.json", limit: Self.maxFile) else {
                    throw .publisher(detail: ErrorDetail("file_missing", ["metadata/\(root.version - 1).root.json"]))
                }
                try RootMetadata(previous).verify(root.envelope, as: .root)
            }
        case "timestamp": try root.verify(TimestampMetadata(try stagedBytes(role)).envelope, as: .timestamp)
        case "snapshot": try root.verify(SnapshotMetadata(try stagedBytes(role)).envelope, as: .snapshot)
        case "targets": try root.verify(TargetsMetadata(try stagedBytes(role), role: role).envelope, as: .targets)
        default:
            let targets = try TargetsMetadata(try stagedBytes("targets"), role: "targets")
            let metadata = try TargetsMetadata(try stagedBytes(role), role: role)
            try targets.verify(metadata.envelope, asDelegated: role)
        }
    }

    // MARK: Editing

    /// Writes `signed` as `role`'s staged metadata with `signatures`.
    func stage(_ role: String, _ signed: JSONObject, signatures: [JSON] = []) throws(TUFError) {
        let top = JSONObject([("signatures", .array(signatures)), ("signed", .object(signed))])!
        try metadataStore.write(fileName(role), JSONWriter.encode(.object(top), indent: 1))
    }

    /// Replaces `role`'s content: the version goes up once after each publish, the expiry
    /// restarts from `now`, the signatures are dropped (they were over the old content).
    func edit(_ role: String, now: UTCTime, _ change: (inout JSONObject) throws(TUFError) -> Void) throws(TUFError) {
        var signed = try requireStaged(role).signed
        try change(&signed)
        let current = version(of: signed)
        let published = publishedVersion(role)
        signed["version"] = .integer(Int64(current <= published ? published + 1 : current))
        signed["expires"] = .string(now.adding(expiry(role)).description)
        try stage(role, signed)
    }

    /// Adds (or replaces) the target `channel/name` with `bytes` and `custom`, in `channel`.
    /// Returns the target path.
    @discardableResult
    public func addTarget(channel: String, name: String, bytes: [UInt8], custom: JSON?, now: UTCTime) throws(TUFError) -> String {
        guard channels.contains(channel) else {
            throw .publisher(detail: ErrorDetail("no_channel", [channel, channels.joined(separator: ", ")]))
        }
        guard !name.isEmpty, !name.contains("/"), name != ".", name != "..", !name.hasPrefix(".") else {
            throw .publisher(detail: ErrorDetail("bad_target_name", [name]))
        }
        let path = channel + "/" + name
        var entry: [(String, JSON)] = [
            ("length", .integer(Int64(bytes.count))),
            ("hashes", .object(JSONObject([("sha256", .string(SHA256.hash(bytes).hex))])!)),
        ]
        if let custom { entry.append(("custom", custom)) }
        try FileStore(directory: directory + "/targets/" + channel).write(name, bytes)
        try edit(channel, now: now) { signed throws(TUFError) in
            var targets = signed["targets"]?.object ?? JSONObject()
            targets[path] = .object(JSONObject(entry)!)
            signed["targets"] = .object(targets)
        }
        return path
    }

    /// Removes the target `path` from its channel.
    public func removeTarget(_ path: String, now: UTCTime) throws(TUFError) {
        guard let channel = path.split(separator: "/").first.map(String.init), channels.contains(channel),
              try requireStaged(channel).signed["targets"]?.object?.contains(path) == true
        else { throw .publisher(detail: ErrorDetail("no_target", [path])) }
        try edit(channel, now: now) { signed throws(TUFError) in
            var targets = signed["targets"]?.object ?? JSONObject()
            targets[path] = nil
            signed["targets"] = .object(targets)
        }
    }

    /// Adds `key`'s signature to `role`'s staged metadata (replacing an older one of the same
    /// key). The key must be one the role's delegator lists for it (for root: the new root's
    /// or, after a rotation, the previous root's root keys).
    public func sign(role: String, with key: TUFSigningKey) throws(TUFError) {
        let (signed, signatures) = try requireStaged(role)
        guard try authorisedKeyIDs(role).contains(key.keyID) else {
            throw .publisher(detail: ErrorDetail("key_not_of_role", [key.keyID, role]))
        }
        let signature = try key.sign(try CanonicalJSON.encode(.object(signed), role: role), role: role)
        var kept = signatures.filter { $0.object?["keyid"]?.string != key.keyID }
        kept.append(.object(JSONObject([("keyid", .string(key.keyID)), ("sig", .string(GrokCrypto.Hex.encode(signature)))])!))
        try stage(role, signed, signatures: kept)
    }

    func authorisedKeyIDs(_ role: String) throws(TUFError) -> Set<String> {
        let root = try rootMetadata()
        switch role {
        case "root":
            var ids = Set(root.roles[.root]!.keyIDs)
            if root.version > 1, let previous = try metadataStore.read("\(root.version - 1).root.json", limit: Self.maxFile) {
                ids.formUnion(try RootMetadata(previous).roles[.root]!.keyIDs)
            }
            return ids
        case "timestamp": return Set(root.roles[.timestamp]!.keyIDs)
        case "snapshot": return Set(root.roles[.snapshot]!.keyIDs)
        case "targets": return Set(root.roles[.targets]!.keyIDs)
        default:
            let targets = try TargetsMetadata(try stagedBytes("targets"), role: "targets")
            guard let delegated = targets.delegations.first(where: { $0.name == role }) else {
                throw .publisher(detail: ErrorDetail("no_role", [role]))
            }
            return Set(delegated.keys.keyIDs)
        }
    }

    /// Replaces `role`'s keys and threshold. A top-level role makes a new root version
    /// (the current root must be fully signed: it is kept as `N.root.json`, and the new one
    /// needs both the old and the new root threshold); a channel makes a new targets
    /// version. After a leak, rotate the leaked key out and publish: stations drop trusted
    /// timestamp/snapshot/targets metadata signed by rotated keys (fast-forward recovery).
    public func rotate(role: String, to keys: RoleKeySet, now: UTCTime) throws(TUFError) {
        try Self.check(keys)
        if let top = TopLevelRole(rawValue: role) {
            try verifyStaged("root")
            let current = try rootMetadata()
            try metadataStore.write("\(current.version).root.json", try stagedBytes("root"))
            var roles: [String: RoleKeySet] = [:]
            for r in TopLevelRole.allCases {
                if r == top { roles[r.rawValue] = keys; continue }
                let ids = current.roles[r]!.keyIDs
                roles[r.rawValue] = RoleKeySet(keys: ids.map { (current.keys[$0]!.json, $0) }, threshold: current.roles[r]!.threshold)
            }
            let next = Self.makeRoot(version: current.version + 1, expires: now.adding(expiry("root")), roles: roles,
                                     consistentSnapshot: current.consistentSnapshot)
            try stage("root", next)
            // Files signed by a role whose keys changed must be signed again.
            if top != .root, try staged(role) != nil { try edit(role, now: now) { _ throws(TUFError) in } }
        } else {
            guard channels.contains(role) else { throw .publisher(detail: ErrorDetail("no_role", [role])) }
            try edit("targets", now: now) { signed throws(TUFError) in
                guard var delegations = signed["delegations"]?.object, var keyObjects = delegations["keys"]?.object,
                      var roles = delegations["roles"]?.array
                else { throw .publisher(detail: ErrorDetail("no_delegations")) }
                for (json, id) in keys.keys { keyObjects[id] = .object(json) }
                for i in roles.indices {
                    guard var o = roles[i].object, o["name"]?.string == role else { continue }
                    o["keyids"] = .array(keys.keys.map { .string($0.keyID) })
                    o["threshold"] = .integer(Int64(keys.threshold))
                    roles[i] = .object(o)
                }
                // Keys no role uses any more are dropped.
                let used = Set(roles.flatMap { $0.object?["keyids"]?.array?.compactMap(\.string) ?? [] })
                for id in keyObjects.keys where !used.contains(id) { keyObjects[id] = nil }
                delegations["keys"] = .object(keyObjects)
                delegations["roles"] = .array(roles)
                signed["delegations"] = .object(delegations)
            }
            try edit(role, now: now) { _ throws(TUFError) in }
        }
    }

    /// The online step, run from a timer: a new snapshot when a targets role changed, the
    /// staged snapshot is not validly signed, or it would expire before the new timestamp
    /// (signed by `snapshotKeys`; an error if one is needed and none is given), then a new
    /// timestamp signed by `timestampKeys`.
    public func timestamp(with timestampKeys: [TUFSigningKey], snapshotKeys: [TUFSigningKey], now: UTCTime) throws(TUFError) {
        var meta: [(String, JSON)] = []
        for role in ["targets"] + channels {
            let v = version(of: try requireStaged(role).signed)
            meta.append(("\(role).json", .object(JSONObject([("version", .integer(Int64(v)))])!)))
        }
        let wanted = JSONObject(meta)!
        let timestampExpires = now.adding(expiry("timestamp"))
        var needSnapshot = true
        if let current = try staged("snapshot"), current.signed["meta"]?.object == wanted,
           let expires = current.signed["expires"]?.string.flatMap(UTCTime.init(iso8601:)), expires > timestampExpires,
           (try? verifyStaged("snapshot")) != nil {
            needSnapshot = false
        }
        if needSnapshot {
            guard !snapshotKeys.isEmpty else {
                throw .publisher(detail: ErrorDetail("snapshot_key_needed"))
            }
            let signed = try staged("snapshot")?.signed ?? Self.header("snapshot", version: 0, expires: now)
            try stage("snapshot", signed)
            try edit("snapshot", now: now) { s throws(TUFError) in s["meta"] = .object(wanted) }
            for key in snapshotKeys { try sign(role: "snapshot", with: key) }
            try verifyStaged("snapshot")
        }
        let snapshotBytes = try stagedBytes("snapshot")
        let info = JSONObject([
            ("version", .integer(Int64(version(of: try requireStaged("snapshot").signed)))),
            ("length", .integer(Int64(snapshotBytes.count))),
            ("hashes", .object(JSONObject([("sha256", .string(SHA256.hash(snapshotBytes).hex))])!)),
        ])!
        let signed = try staged("timestamp")?.signed ?? Self.header("timestamp", version: 0, expires: now)
        var next = signed
        next["version"] = .integer(Int64(max(version(of: signed), publishedVersion("timestamp")) + 1))
        next["expires"] = .string(timestampExpires.description)
        next["meta"] = .object(JSONObject([("snapshot.json", .object(info))])!)
        try stage("timestamp", next)
        for key in timestampKeys { try sign(role: "timestamp", with: key) }
        try verifyStaged("timestamp")
    }

    // MARK: Publishing

    /// Writes the repository a static web server serves into `output`: in `metadata/`
    /// every root as `N.root.json`, `V.targets.json`, `V.CHANNEL.json` and `V.snapshot.json`
    /// (consistent snapshots) and `timestamp.json` last; in `targets/` the target files as
    /// `CHANNEL/SHA256.NAME`. Old versions already there are kept (a station mid-update still finds them).
    /// Refused unless every role is signed by its threshold and a client starting from the
    /// first root accepts the result; returns the files written.
    @discardableResult
    public func publish(to output: String, now: UTCTime) throws(TUFError) -> [String] {
        let missing = try missingSignatures()
        if !missing.isEmpty {
            throw .publisher(detail: ErrorDetail("not_signed", [missing.map { "\($0.role) (\($0.valid)/\($0.threshold))" }.joined(separator: ", ")]))
        }
        for role in ["root", "targets"] + channels + ["snapshot", "timestamp"] {
            if let expires = try requireStaged(role).signed["expires"]?.string.flatMap(UTCTime.init(iso8601:)), expires <= now {
                throw .publisher(detail: ErrorDetail("role_expired", [role, "\(expires)"]))
            }
        }
        // The snapshot must list the versions staged now, the timestamp this snapshot.
        let snapshot = try SnapshotMetadata(try stagedBytes("snapshot"))
        for role in ["targets"] + channels {
            let staged = version(of: try requireStaged(role).signed)
            guard snapshot.meta["\(role).json"]?.version == staged else {
                throw .publisher(detail: ErrorDetail("changed_after_snapshot", [role]))
            }
        }
        let timestamp = try TimestampMetadata(try stagedBytes("timestamp"))
        guard timestamp.snapshot.version == snapshot.version else {
            throw .publisher(detail: ErrorDetail("timestamp_stale"))
        }
        try checkLengthAndHashes(try stagedBytes("snapshot"), length: timestamp.snapshot.length, hashes: timestamp.snapshot.hashes,
                                 what: "snapshot.json")

        let root = try rootMetadata()
        var written: [String] = []
        let out = FileStore.published(directory: output + "/metadata")
        var files: [(String, [UInt8])] = []
        for v in 1..<root.version {
            guard let bytes = try metadataStore.read("\(v).root.json", limit: Self.maxFile) else {
                throw .publisher(detail: ErrorDetail("file_missing", ["metadata/\(v).root.json"]))
            }
            files.append(("\(v).root.json", bytes))
        }
        files.append(("\(root.version).root.json", try stagedBytes("root")))
        for role in ["targets"] + channels {
            let bytes = try stagedBytes(role)
            files.append(("\(version(of: try requireStaged(role).signed)).\(fileName(role))", bytes))
            // Target files of this role.
            for (path, info) in try TargetsMetadata(bytes, role: role).targets {
                let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 2, let digest = info.hashes["sha256"],
                      let data = try FileStore(directory: directory + "/targets/" + parts[0]).read(parts[1], limit: Int(clamping: info.length))
                else { throw .publisher(detail: ErrorDetail("target_file_missing", [path])) }
                try info.check(data)
                try FileStore.published(directory: output + "/targets/" + parts[0]).write(digest + "." + parts[1], data)
                written.append("targets/" + parts[0] + "/" + digest + "." + parts[1])
            }
        }
        files.append(("\(snapshot.version).snapshot.json", try stagedBytes("snapshot")))
        for (name, bytes) in files {
            try out.write(name, bytes)
            written.append("metadata/" + name)
        }
        try out.write("timestamp.json", try stagedBytes("timestamp"))
        written.append("metadata/timestamp.json")
        var published = settings["published"]?.object ?? JSONObject()
        for role in ["root", "targets"] + channels + ["snapshot", "timestamp"] {
            published[role] = .integer(Int64(version(of: try requireStaged(role).signed)))
        }
        settings["published"] = .object(published)
        try FileStore(directory: directory).write("repository.json", JSONWriter.encode(.object(settings), indent: 1))
        return written
    }

    // MARK: Building metadata

    static func check(_ set: RoleKeySet) throws(TUFError) {
        guard !set.keys.isEmpty else { throw .publisher(detail: ErrorDetail("no_keys")) }
        guard set.threshold >= 1, set.threshold <= set.keys.count else {
            throw .publisher(detail: ErrorDetail("threshold_unreachable", [String(set.keys.count), String(set.threshold)]))
        }
        guard Set(set.keys.map(\.keyID)).count == set.keys.count else { throw .publisher(detail: ErrorDetail("key_twice")) }
    }

    static func isChannelName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
            && !TopLevelRole.allCases.map(\.rawValue).contains(name)
    }

    static func header(_ type: String, version: UInt64, expires: UTCTime) -> JSONObject {
        JSONObject([
            ("_type", .string(type)), ("spec_version", .string(specVersion)), ("version", .integer(Int64(version))),
            ("expires", .string(expires.description)),
        ])!
    }

    static func makeRoot(version: UInt64, expires: UTCTime, roles: [String: RoleKeySet], consistentSnapshot: Bool = true) -> JSONObject {
        var signed = header("root", version: version, expires: expires)
        signed["consistent_snapshot"] = .bool(consistentSnapshot)
        var keys = JSONObject()
        var roleObjects = JSONObject()
        for name in ["root", "timestamp", "snapshot", "targets"] {
            let set = roles[name]!
            for (json, id) in set.keys { keys[id] = .object(json) }
            roleObjects[name] = .object(JSONObject([
                ("keyids", .array(set.keys.map { .string($0.keyID) })), ("threshold", .integer(Int64(set.threshold))),
            ])!)
        }
        signed["keys"] = .object(keys)
        signed["roles"] = .object(roleObjects)
        return signed
    }

    static func makeTargets(version: UInt64, expires: UTCTime, targets: JSONObject, delegations: [(String, RoleKeySet)]?) -> JSONObject {
        var signed = header("targets", version: version, expires: expires)
        signed["targets"] = .object(targets)
        if let delegations {
            var keys = JSONObject()
            var roles: [JSON] = []
            for (name, set) in delegations {
                for (json, id) in set.keys { keys[id] = .object(json) }
                roles.append(.object(JSONObject([
                    ("name", .string(name)), ("keyids", .array(set.keys.map { .string($0.keyID) })),
                    ("threshold", .integer(Int64(set.threshold))), ("terminating", .bool(true)),
                    ("paths", .array([.string(name + "/*")])),
                ])!))
            }
            signed["delegations"] = .object(JSONObject([("keys", .object(keys)), ("roles", .array(roles))])!)
        }
        return signed
    }
}

@available(*, unavailable)
extension TUFRepository: Sendable {}

extension UTCTime {
    /// This time plus `seconds`.
    public func adding(_ seconds: Int64) -> UTCTime { UTCTime(secondsSince1970: secondsSince1970 + seconds) }
}
