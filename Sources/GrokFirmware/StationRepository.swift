import Foundation
import Glibc
import GrokBasics
import GrokCrypto
import GrokTUF

// Firmware and region catalogues as targets of a TUF repository (issue 11), on a station.
//
// Errors: ``TUFError`` for everything TUF (fetch, signatures, versions, the state
// directory), ``FirmwareError`` for a target whose custom data is not a valid description.

/// Where a station keeps what it trusts. Never relative to the current directory: a USB
/// stick's folder must not be able to supply its own trust root.
public enum StationPaths {
    /// Where a configuration directory came from.
    public enum ConfigOrigin: String, Sendable, Equatable {
        /// `$XDG_CONFIG_HOME/grokctl`.
        case xdg
        /// `$HOME/.config/grokctl`, the XDG fallback.
        case home
        /// `/etc/grokctl`.
        case system
    }

    /// grokctl's configuration directories, the per-user one first (`$XDG_CONFIG_HOME/grokctl`,
    /// else `$HOME/.config/grokctl`; relative values are ignored, as the XDG specification
    /// says), then the system's (`/etc/grokctl`). Every file looked up in the configuration
    /// (root.json, station.json, profiles) is looked up here, in this order: the user's
    /// overrides the system's.
    public static func configDirectories(_ environment: [String: String]) -> [(path: String, origin: ConfigOrigin)] {
        var directories: [(path: String, origin: ConfigOrigin)] = []
        if let config = absolute(environment["XDG_CONFIG_HOME"]) {
            directories.append((config + "/grokctl", .xdg))
        } else if let home = absolute(environment["HOME"]) {
            directories.append((home + "/.config/grokctl", .home))
        }
        directories.append(("/etc/grokctl", .system))
        return directories
    }

    /// The file holding the first root a station trusts: `explicit` (`--trusted-root FILE`)
    /// if given, else the first that exists of `root.json` in ``configDirectories(_:)``.
    public static func trustedRoot(explicit: String?, environment: [String: String],
                                   exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> String? {
        if let explicit { return explicit }
        return configDirectories(environment).map { $0.path + "/root.json" }.first(where: exists)
    }

    /// Where trusted metadata (the rollback state) and verified images live: `explicit` if
    /// given; for root, `/var/lib/grokctl`; else `$XDG_STATE_HOME/grokctl` (or
    /// `$HOME/.local/state/grokctl`). `nil` when no absolute location is known.
    public static func stateDirectory(explicit: String?, environment: [String: String], isRoot: Bool = geteuid() == 0) -> String? {
        if let explicit { return explicit }
        if isRoot { return "/var/lib/grokctl" }
        if let state = absolute(environment["XDG_STATE_HOME"]) { return state + "/grokctl" }
        if let home = absolute(environment["HOME"]) { return home + "/.local/state/grokctl" }
        return nil
    }

    /// The per-user trust root path `trustedRoot(explicit:environment:)` looks at first, if any.
    public static func configHomeRoot(_ environment: [String: String]) -> String? {
        configDirectories(environment).first { $0.origin != .system }.map { $0.path + "/root.json" }
    }

    static func absolute(_ value: String?) -> String? {
        guard let value, value.hasPrefix("/") else { return nil }
        return value
    }
}

/// The `custom.kind` values of targets, and the custom object of a region catalogue. A
/// firmware target's custom object is ``FirmwareReleaseMetadata``.
public enum FirmwareTarget {
    /// `custom.kind` of a firmware (`.ugif`) target.
    public static let firmwareKind = FirmwareReleaseMetadata.kind
    /// `custom.kind` of a region catalogue target.
    public static let regionCatalogueKind = FirmwareReleaseMetadata.regionCatalogueKind

    /// The custom object of a region catalogue target: its kind and the catalogue's version.
    public static func custom(for catalogue: RegionCatalogue) -> JSON {
        .object(JSONObject([("kind", .string(regionCatalogueKind)), ("version", .integer(Int64(catalogue.version)))])!)
    }
}

/// What one successful ``StationRepository/update(channels:download:)`` trusted.
public struct StationUpdate: Sendable {
    /// Trusted version of each role.
    public let versions: [String: UInt64]
    /// Each channel's firmware targets (paths `CHANNEL/NAME`), as listed.
    public let updates: [String: [FirmwareListing]]
    /// Every target of each channel.
    public let targets: [String: [TargetInfo]]
    /// The local file of each downloaded target path.
    public let files: [String: String]
}

/// A station's TUF client for the firmware repository: the state directory holds the
/// trusted metadata under non-versioned names (`metadata/root.json`, `timestamp.json`, ...)
/// and verified images by hash (`images/SHA256`).
///
/// An update runs under an exclusive lock (`lock`), on a private copy of the trusted
/// metadata. A refresh (or a channel listing) that fails commits nothing. Once the refresh
/// and the listings succeeded, their verified metadata is committed even when a requested
/// download then fails (TUF's client workflow persists every role it verified before any
/// target is fetched, so that a station cannot later be rolled back below it); a failed
/// download adds no image. Two concurrent updates cannot lower what the other accepted. Symbolic links, files
/// of another owner and files the client did not make are refused in the state directory.
public struct StationRepository: Sendable {
    public let stateDirectory: String
    public let trustedRootFile: String
    public let metadataURL: String
    public let targetsURL: String
    let fetcher: any TUFFetching
    let clock: UTCClock

    static let metadataNames: Set<String> = ["root.json", "timestamp.json", "snapshot.json", "targets.json"]

    public init(stateDirectory: String, trustedRootFile: String, repositoryURL: String, fetcher: any TUFFetching,
                clock: @escaping UTCClock = systemUTCClock) {
        self.stateDirectory = stateDirectory
        self.trustedRootFile = trustedRootFile
        let base = repositoryURL.hasSuffix("/") ? String(repositoryURL.dropLast()) : repositoryURL
        metadataURL = base + "/metadata"
        targetsURL = base + "/targets"
        self.fetcher = fetcher
        self.clock = clock
    }

    var metadataDirectory: String { stateDirectory + "/metadata" }
    var imagesDirectory: String { stateDirectory + "/images" }

    /// The verified image file of a target, named by its SHA-256.
    public func imagePath(_ target: TargetInfo) -> String? {
        target.hashes["sha256"].map { imagesDirectory + "/" + $0.lowercased() }
    }

    /// Refreshes the trusted metadata, lists `channels`, downloads the targets `download`
    /// (verified, into `images/`). Nothing is committed when the refresh or a listing fails;
    /// when a download fails, the verified metadata is committed and no image is.
    public func update(channels: [String], download: [String] = []) async throws -> StationUpdate {
        try Self.checkDirectory(stateDirectory, create: true)
        let lock = try await Self.lock(stateDirectory + "/lock")
        defer { close(lock) }
        try Self.checkDirectory(metadataDirectory, create: true)
        try Self.checkDirectory(imagesDirectory, create: true)
        let staging = try Self.makeStaging(in: stateDirectory)
        defer { Self.removeTree(staging) }
        // The trusted copy: the committed metadata, or the first root.
        let committed = FileStore(directory: metadataDirectory)
        let copy = FileStore(directory: staging + "/metadata")
        // Top-level roles, and channel roles (a channel name: lower-case letters, digits, '-'),
        // whichever channels an earlier update listed.
        let names = try Self.checkedEntries(metadataDirectory) { name in
            Self.metadataNames.contains(name) || (name.hasSuffix(".json") && Self.isChannelFileName(String(name.dropLast(5))))
        }
        for name in names {
            if let bytes = try committed.read(name, limit: 16 << 20) { try copy.write(name, bytes) }
        }
        if !names.contains("root.json") {
            try seed(copy, replacing: nil)
        } else if let cached = try? copy.read("root.json", limit: Self.rootLimit), (try? Updater.checkRoot(cached ?? [])) != nil {
            // The cached root is whole: the chain goes on from it.
        } else {
            // A cached root that is no root any more (emptied, cut short, edited) is replaced
            // by the station's trust root, and the chain walked again from there, as a new
            // station's is; the trusted timestamp, snapshot and targets kept still guard their
            // versions against rollback.
            try seed(copy, replacing: committed.path("root.json"))
        }
        let updater = try Updater(metadataDirectory: copy.directory, metadataBaseURL: metadataURL, targetBaseURL: targetsURL,
                                  fetcher: fetcher, clock: clock)
        try await updater.refresh()
        var updates: [String: [FirmwareListing]] = [:]
        var listed: [String: [TargetInfo]] = [:]
        for channel in channels {
            let targets = try await updater.delegatedTargets(channel)
            listed[channel] = targets
            updates[channel] = try FirmwareChannel.listings(targets)
        }
        var files: [String: String] = [:]
        var fetched: [(String, String)] = []
        do {
            for path in download {
                guard let info = try await updater.targetInfo(path), let digest = info.hashes["sha256"]?.lowercased() else {
                    throw TUFError.unknownTarget(target: path)
                }
                let final = imagesDirectory + "/" + digest
                let existing = (try? FileStore(directory: imagesDirectory).read(digest, limit: Int(clamping: info.length))) ?? nil
                if existing.map({ (try? info.check($0)) != nil }) != true {
                    let bytes = try await updater.download(info, to: staging + "/targets")
                    try FileStore(directory: staging + "/images").write(digest, bytes)
                    fetched.append((digest, final))
                }
                files[path] = final
            }
        } catch {
            // TUF's client workflow persists each role once verified (spec 5.3-5.6), before any
            // target is fetched (5.7): the refresh's metadata is committed, no image is.
            try Self.commitMetadata(from: copy, into: committed, previous: names, metadataDirectory: metadataDirectory)
            throw error
        }
        let versions = await updater.trustedVersions
        // Commit: images first (content-addressed, harmless alone), then the metadata.
        for (digest, final) in fetched {
            guard rename(staging + "/images/" + digest, final) == 0 else {
                throw TUFError.storage(path: final, detail: .system(errno))
            }
        }
        try Self.commitMetadata(from: copy, into: committed, previous: names, metadataDirectory: metadataDirectory)
        return StationUpdate(versions: versions, updates: updates, targets: listed, files: files)
    }

    /// The largest root file read.
    static let rootLimit = 512_000

    /// Writes the trust root (``trustedRootFile``) into `copy` as its root.
    /// - Parameter damaged: The cached root it replaces, if any (for the error when it cannot).
    /// - Throws: ``TUFError/storage(path:detail:)`` naming the trust root file
    ///   (`no_trusted_root`) when there was none before, else naming the damaged cached root
    ///   and the trust root that cannot replace it (`cached_root_damaged`).
    func seed(_ copy: FileStore, replacing damaged: String?) throws(TUFError) {
        let bytes = FileManager.default.contents(atPath: trustedRootFile).flatMap { $0.count <= Self.rootLimit ? Array($0) : nil }
        if let damaged, bytes.map({ (try? Updater.checkRoot($0)) != nil }) != true {
            throw TUFError.storage(path: damaged, detail: ErrorDetail("cached_root_damaged", [trustedRootFile]))
        }
        guard let bytes else { throw TUFError.storage(path: trustedRootFile, detail: ErrorDetail("no_trusted_root")) }
        try Updater.initialize(metadataDirectory: copy.directory, trustedRoot: bytes)
    }

    /// Moves the verified metadata of `copy` into the committed set (rename per file), removes
    /// what the refresh deleted (fast-forward recovery) of the `previous` names, and syncs the
    /// directory.
    static func commitMetadata(from copy: FileStore, into committed: FileStore, previous names: [String],
                               metadataDirectory: String) throws {
        let kept = try checkedEntries(copy.directory) { _ in true }.filter { $0.hasSuffix(".json") }
        for name in kept {
            guard rename(copy.directory + "/" + name, metadataDirectory + "/" + name) == 0 else {
                throw TUFError.storage(path: metadataDirectory + "/" + name, detail: .system(errno))
            }
        }
        for name in names where !kept.contains(name) { try committed.remove(name) }
        let directory = open(metadataDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 { fsync(directory); close(directory) }
    }

    static func isChannelFileName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
    }

    // MARK: The state directory

    /// Refuses a path that is a symbolic link, not a directory, or owned by another user;
    /// creates it (0700) when missing and `create`.
    static func checkDirectory(_ path: String, create: Bool) throws(TUFError) {
        var st = stat()
        if lstat(path, &st) != 0 {
            guard errno == ENOENT, create else { throw .storage(path: path, detail: .system(errno)) }
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw .storage(path: path, detail: ErrorDetail("cannot_create_directory"))
            }
            return
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw .storage(path: path, detail: ErrorDetail("not_directory")) }
        guard st.st_uid == geteuid() else { throw .storage(path: path, detail: ErrorDetail("owned_by_other_user")) }
    }

    /// The names in `directory`, each checked: a regular file of ours that `allowed`
    /// accepts. Anything else (a link, a directory, a file someone else put there) is an
    /// error: this client did not make it.
    static func checkedEntries(_ directory: String, allowed: (String) -> Bool) throws(TUFError) -> [String] {
        guard let handle = opendir(directory) else { throw .storage(path: directory, detail: .system(errno)) }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            var st = stat()
            let path = directory + "/" + name
            guard lstat(path, &st) == 0 else { throw .storage(path: path, detail: .system(errno)) }
            guard (st.st_mode & S_IFMT) == S_IFREG else { throw .storage(path: path, detail: ErrorDetail("not_regular_file")) }
            guard st.st_uid == geteuid() else { throw .storage(path: path, detail: ErrorDetail("owned_by_other_user")) }
            guard allowed(name) else { throw .storage(path: path, detail: ErrorDetail("foreign_file")) }
            names.append(name)
        }
        return names.sorted()
    }

    static func makeStaging(in directory: String) throws(TUFError) -> String {
        var template = Array((directory + "/.staging-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw .storage(path: directory, detail: .system(errno))
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// An exclusive `flock` on `path`, waited for without blocking a thread of the pool.
    static func lock(_ path: String) async throws -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TUFError.storage(path: path, detail: errno == ELOOP ? ErrorDetail("symbolic_link") : .system(errno)) }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(fd)
                throw TUFError.storage(path: path, detail: .system(errno))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return fd
    }
}
