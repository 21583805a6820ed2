import Glibc
import GrokBasics

/// Limits and choices of the client workflow. The defaults are the specification's
/// suggestions as python-tuf applies them.
public struct UpdaterConfiguration: Sendable {
    /// Most new root versions fetched in one refresh.
    public var maxRootRotations = 256
    /// Most targets roles visited while looking up one target.
    public var maxDelegations = 32
    /// Download limits for metadata whose length no trusted file gives.
    public var rootMaxLength = 512_000
    public var timestampMaxLength = 16_384
    public var snapshotMaxLength = 2_000_000
    public var targetsMaxLength = 5_000_000
    /// Whether target files are fetched as `HASH.NAME` when the root asks for consistent
    /// snapshots.
    public var prefixTargetsWithHash = true

    public init() {}
}

/// The current time, injected so tests choose it.
public typealias UTCClock = @Sendable () -> UTCTime

/// The system clock.
public let systemUTCClock: UTCClock = { UTCTime(secondsSince1970: Int64(time(nil))) }

/// A TUF client (specification 1.0, section 5): keeps trusted metadata in a directory,
/// refreshes it from a repository, finds and downloads verified targets.
///
/// Trusted files are stored under non-versioned names (`root.json`, `timestamp.json`, a
/// delegated role as its percent-encoded name `.json`), each written by temporary file and
/// rename only once it verified. One updater serves one refresh and then any number of
/// lookups, as python-tuf's `Updater` does.
public actor Updater {
    private let store: FileStore
    private let metadataBaseURL: String
    private let targetBaseURL: String?
    private let fetcher: any TUFFetching
    private let clock: UTCClock
    private let configuration: UpdaterConfiguration

    private var root: RootMetadata
    private var timestamp: TimestampMetadata?
    private var snapshot: SnapshotMetadata?
    /// Trusted targets roles by name, with the delegators each was verified through.
    private var targets: [String: (metadata: TargetsMetadata, verifiedBy: Set<String>)] = [:]
    private var refreshed = false

    /// Writes `rootBytes` as the trusted root of a new client in `metadataDirectory`
    /// (checked to be a self-signed root first).
    public static func initialize(metadataDirectory: String, trustedRoot rootBytes: [UInt8]) throws(TUFError) {
        try checkRoot(rootBytes)
        try FileStore(directory: metadataDirectory).write("root.json", rootBytes)
    }

    /// Checks that `rootBytes` is a root signed by its own keys (what a client can start from).
    public static func checkRoot(_ rootBytes: [UInt8]) throws(TUFError) {
        let root = try RootMetadata(rootBytes)
        try root.verify(root.envelope, as: .root)
    }

    /// A client over the trusted metadata in `metadataDirectory` (which must hold a
    /// `root.json`: see ``initialize(metadataDirectory:trustedRoot:)``).
    public init(
        metadataDirectory: String, metadataBaseURL: String, targetBaseURL: String? = nil,
        fetcher: any TUFFetching, clock: @escaping UTCClock = systemUTCClock,
        configuration: UpdaterConfiguration = UpdaterConfiguration()
    ) throws(TUFError) {
        store = FileStore(directory: metadataDirectory)
        self.metadataBaseURL = metadataBaseURL.hasSuffix("/") ? metadataBaseURL : metadataBaseURL + "/"
        self.targetBaseURL = targetBaseURL.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        self.fetcher = fetcher
        self.clock = clock
        self.configuration = configuration
        guard let bytes = try store.read("root.json", limit: configuration.rootMaxLength) else {
            throw .storage(path: store.path("root.json"), detail: ErrorDetail("no_trusted_root"))
        }
        let root = try RootMetadata(bytes)
        try root.verify(root.envelope, as: .root)
        self.root = root
    }

    // MARK: Refresh (5.3 to 5.6)

    /// Updates root, timestamp, snapshot and top-level targets, in that order.
    public func refresh() async throws(TUFError) {
        guard !refreshed else { throw .workflow(detail: ErrorDetail("refresh_twice")) }
        refreshed = true
        try await loadRoot()
        try await loadTimestamp()
        try await loadSnapshot()
        _ = try await loadTargets("targets", delegator: "root")
    }

    /// The trusted version of each role this updater holds.
    public var trustedVersions: [String: UInt64] {
        var out: [String: UInt64] = ["root": root.version]
        if let timestamp { out["timestamp"] = timestamp.version }
        if let snapshot { out["snapshot"] = snapshot.version }
        for (name, entry) in targets { out[name] = entry.metadata.version }
        return out
    }

    private func loadRoot() async throws(TUFError) {
        let original = root
        let first = root.version + 1
        for version in first..<(first + UInt64(configuration.maxRootRotations)) {
            let url = metadataBaseURL + "\(version).root.json"
            guard case .bytes(let bytes) = try await fetcher.fetch(url, maxLength: configuration.rootMaxLength) else { break }
            try updateRoot(bytes)
            try store.write("root.json", bytes)
        }
        // 5.3.10: the final root must not have expired.
        if root.envelope.isExpired(at: clock()) {
            throw .expired(role: "root", expires: root.envelope.expires.description)
        }
        // 5.3.11: fast-forward attack recovery. When the timestamp or snapshot keys changed,
        // the trusted timestamp and snapshot (whose versions an attacker may have pushed up)
        // are dropped; when the targets keys changed, so is the trusted targets.
        func keyIDs(_ r: RootMetadata, _ role: TopLevelRole) -> Set<String> { Set(r.roles[role]!.keyIDs) }
        if keyIDs(original, .timestamp) != keyIDs(root, .timestamp) || keyIDs(original, .snapshot) != keyIDs(root, .snapshot) {
            try store.remove("timestamp.json")
            try store.remove("snapshot.json")
        }
        if keyIDs(original, .targets) != keyIDs(root, .targets) {
            try store.remove("targets.json")
        }
    }

    /// 5.3.4 to 5.3.7: signed by the trusted root's threshold and by its own, version N+1.
    private func updateRoot(_ bytes: [UInt8]) throws(TUFError) {
        let new = try RootMetadata(bytes)
        try root.verify(new.envelope, as: .root)
        guard new.version == root.version + 1 else {
            throw .versionMismatch(role: "root", expected: root.version + 1, found: new.version)
        }
        try new.verify(new.envelope, as: .root)
        root = new
    }

    private func loadTimestamp() async throws(TUFError) {
        if let local = try? store.read("timestamp.json", limit: configuration.timestampMaxLength) {
            // A local file that does not verify is ignored (it may be signed by rotated keys).
            _ = try? updateTimestamp(local)
        }
        let url = metadataBaseURL + "timestamp.json"
        let bytes = try await fetchRequired(url, maxLength: configuration.timestampMaxLength)
        guard try updateTimestamp(bytes) else { return }
        try store.write("timestamp.json", bytes)
    }

    /// 5.4: returns false when the offered timestamp is the trusted version (nothing new).
    private func updateTimestamp(_ bytes: [UInt8]) throws(TUFError) -> Bool {
        guard snapshot == nil else { throw .workflow(detail: ErrorDetail("timestamp_after_snapshot")) }
        if root.envelope.isExpired(at: clock()) { throw .expired(role: "root", expires: root.envelope.expires.description) }
        let new = try TimestampMetadata(bytes)
        try root.verify(new.envelope, as: .timestamp)
        if let trusted = timestamp {
            if new.version < trusted.version { throw .rollback(role: "timestamp", trusted: trusted.version, offered: new.version) }
            if new.version == trusted.version { return false }
            if new.snapshot.version < trusted.snapshot.version {
                throw .rollback(role: "snapshot", trusted: trusted.snapshot.version, offered: new.snapshot.version)
            }
        }
        // Kept even if expired: its versions still guard against rollback.
        timestamp = new
        try checkFinalTimestamp()
        return true
    }

    private func checkFinalTimestamp() throws(TUFError) {
        guard let timestamp else { throw .workflow(detail: ErrorDetail("no_trusted_timestamp")) }
        if timestamp.envelope.isExpired(at: clock()) {
            throw .expired(role: "timestamp", expires: timestamp.envelope.expires.description)
        }
    }

    private func loadSnapshot() async throws(TUFError) {
        if let local = try? store.read("snapshot.json", limit: configuration.snapshotMaxLength) {
            do {
                try updateSnapshot(local, local: true)
                return
            } catch {}
        }
        guard let info = timestamp?.snapshot else { throw .workflow(detail: ErrorDetail("no_trusted_timestamp")) }
        let name = root.consistentSnapshot ? "\(info.version).snapshot.json" : "snapshot.json"
        let bytes = try await fetchRequired(metadataBaseURL + name, maxLength: info.length.map { Int(clamping: $0) } ?? configuration.snapshotMaxLength)
        try updateSnapshot(bytes, local: false)
        try store.write("snapshot.json", bytes)
    }

    /// 5.5. A local snapshot was checked against the timestamp that listed it, so its hashes
    /// are not checked again (the timestamp may have moved on).
    private func updateSnapshot(_ bytes: [UInt8], local: Bool) throws(TUFError) {
        guard let timestamp else { throw .workflow(detail: ErrorDetail("no_trusted_timestamp")) }
        guard targets.isEmpty else { throw .workflow(detail: ErrorDetail("snapshot_after_targets")) }
        try checkFinalTimestamp()
        if !local {
            try checkLengthAndHashes(bytes, length: timestamp.snapshot.length, hashes: timestamp.snapshot.hashes, what: "snapshot.json")
        }
        let new = try SnapshotMetadata(bytes)
        try root.verify(new.envelope, as: .snapshot)
        if let trusted = snapshot {
            for (name, info) in trusted.meta {
                guard let offered = new.meta[name] else {
                    throw .metadata(role: "snapshot", detail: ErrorDetail("snapshot_drops", [name]))
                }
                if offered.version < info.version {
                    throw .rollback(role: String(name.dropLast(5)), trusted: info.version, offered: offered.version)
                }
            }
        }
        snapshot = new
        try checkFinalSnapshot()
    }

    private func checkFinalSnapshot() throws(TUFError) {
        guard let snapshot, let timestamp else { throw .workflow(detail: ErrorDetail("no_trusted_snapshot")) }
        if snapshot.envelope.isExpired(at: clock()) {
            throw .expired(role: "snapshot", expires: snapshot.envelope.expires.description)
        }
        guard snapshot.version == timestamp.snapshot.version else {
            throw .versionMismatch(role: "snapshot", expected: timestamp.snapshot.version, found: snapshot.version)
        }
    }

    /// 5.6 and 5.7.2: the targets role `name`, verified against `delegator` (root for the
    /// top-level targets). A role already trusted is verified again when reached through a
    /// delegator it was not verified through: trust never carries over from another path.
    private func loadTargets(_ name: String, delegator: String) async throws(TUFError) -> TargetsMetadata {
        if let cached = targets[name] {
            if cached.verifiedBy.contains(delegator) { return cached.metadata }
            try verifyTargets(cached.metadata, name: name, delegator: delegator)
            targets[name]!.verifiedBy.insert(delegator)
            return cached.metadata
        }
        let file = percentEncode(name) + ".json"
        if let local = try? store.read(file, limit: configuration.targetsMaxLength),
           let trusted = try? updateTargets(local, name: name, delegator: delegator) {
            return trusted
        }
        guard let info = snapshot?.meta[name + ".json"] else {
            throw .metadata(role: "snapshot", detail: ErrorDetail("snapshot_lacks", [name + ".json"]))
        }
        let remote = root.consistentSnapshot ? "\(info.version).\(file)" : file
        let bytes = try await fetchRequired(metadataBaseURL + remote, maxLength: info.length.map { Int(clamping: $0) } ?? configuration.targetsMaxLength)
        let trusted = try updateTargets(bytes, name: name, delegator: delegator)
        try store.write(file, bytes)
        return trusted
    }

    private func updateTargets(_ bytes: [UInt8], name: String, delegator: String) throws(TUFError) -> TargetsMetadata {
        guard let snapshot else { throw .workflow(detail: ErrorDetail("no_trusted_snapshot")) }
        try checkFinalSnapshot()
        guard let info = snapshot.meta[name + ".json"] else {
            throw .metadata(role: "snapshot", detail: ErrorDetail("snapshot_lacks", [name + ".json"]))
        }
        try checkLengthAndHashes(bytes, length: info.length, hashes: info.hashes, what: "\(name).json")
        let new = try TargetsMetadata(bytes, role: name)
        try verifyTargets(new, name: name, delegator: delegator)
        guard new.version == info.version else { throw .versionMismatch(role: name, expected: info.version, found: new.version) }
        if new.envelope.isExpired(at: clock()) { throw .expired(role: name, expires: new.envelope.expires.description) }
        targets[name] = (new, [delegator])
        return new
    }

    private func verifyTargets(_ metadata: TargetsMetadata, name: String, delegator: String) throws(TUFError) {
        if delegator == "root" {
            try root.verify(metadata.envelope, as: .targets)
        } else {
            guard let parent = targets[delegator]?.metadata else { throw .workflow(detail: ErrorDetail("delegator_untrusted", [delegator])) }
            try parent.verify(metadata.envelope, asDelegated: name)
        }
    }

    private func fetchRequired(_ url: String, maxLength: Int) async throws(TUFError) -> [UInt8] {
        switch try await fetcher.fetch(url, maxLength: maxLength) {
        case .bytes(let bytes): return bytes
        case .notFound: throw .notFound(url: url)
        }
    }

    // MARK: Targets (5.7)

    /// The trusted description of `path`, found by the pre-order depth-first walk of the
    /// delegation graph; `nil` when no role on the way lists it. Refreshes first if needed.
    public func targetInfo(_ path: String) async throws(TUFError) -> TargetInfo? {
        if targets["targets"] == nil { try await refresh() }
        var toVisit: [(name: String, delegator: String)] = [("targets", "root")]
        var visited: Set<String> = []
        var budget = configuration.maxDelegations
        while budget > 0, let (name, delegator) = toVisit.popLast() {
            if visited.contains(name) { continue }
            let role = try await loadTargets(name, delegator: delegator)
            if let info = role.targets[path] { return info }
            visited.insert(name)
            budget -= 1
            var children: [(String, String)] = []
            for delegation in role.delegations where delegation.covers(path) {
                children.append((delegation.name, name))
                if delegation.terminating {
                    toVisit.removeAll()
                    break
                }
            }
            toVisit.append(contentsOf: children.reversed())
        }
        return nil
    }

    /// Every target the delegated role `name` (delegated by the top-level targets role, as
    /// a channel is) lists and is authoritative for: a path its delegation covers, and that
    /// the delegation walk resolves to this very entry (so a higher-priority role wins, as
    /// for ``targetInfo(_:)``). Sorted by path.
    public func delegatedTargets(_ name: String) async throws(TUFError) -> [TargetInfo] {
        if targets["targets"] == nil { try await refresh() }
        guard let top = targets["targets"]?.metadata, let delegation = top.delegations.first(where: { $0.name == name }) else {
            throw .unknownTarget(target: name + "/")
        }
        let role = try await loadTargets(name, delegator: "targets")
        var out: [TargetInfo] = []
        for path in role.targets.keys.sorted() where delegation.covers(path) {
            if let found = try await targetInfo(path), found == role.targets[path] { out.append(found) }
        }
        return out
    }

    /// The local file name a target is stored under in a target directory.
    public nonisolated func localName(of path: String) -> String { percentEncode(path) }

    /// The bytes of `target` if `directory` already holds a verified copy.
    public func cachedTarget(_ target: TargetInfo, in directory: String) -> [UInt8]? {
        let store = FileStore(directory: directory)
        guard let bytes = try? store.read(localName(of: target.path), limit: Int(clamping: target.length)),
              (try? target.check(bytes)) != nil
        else { return nil }
        return bytes
    }

    /// Downloads `target`, checks its length and hashes, and stores it in `directory`
    /// (temporary file and rename); returns its bytes. Nothing is written if it fails.
    @discardableResult
    public func download(_ target: TargetInfo, to directory: String) async throws(TUFError) -> [UInt8] {
        guard let base = targetBaseURL else { throw .workflow(detail: ErrorDetail("no_target_base_url")) }
        var remote = target.path
        if root.consistentSnapshot, configuration.prefixTargetsWithHash, let digest = target.hashes[target.firstHashAlgorithm] {
            if let slash = remote.lastIndex(of: "/") {
                remote = String(remote[...slash]) + digest + "." + String(remote[remote.index(after: slash)...])
            } else {
                remote = digest + "." + remote
            }
        }
        let bytes = try await fetchRequired(base + remote, maxLength: Int(clamping: target.length))
        try target.check(bytes)
        try FileStore(directory: directory).write(localName(of: target.path), bytes)
        return bytes
    }
}
