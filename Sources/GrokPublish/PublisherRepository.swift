import Foundation
import GrokBasics
import GrokFirmware
import GrokTUF

/// The fleet owner's TUF repository of firmware and region catalogues, as its publisher works
/// on it (`grokctl repo`, docs/firmware-format.md): made, its targets added and described,
/// signed by each key holder in turn, timestamped from a timer, rotated after a leak,
/// published to a directory a static web server serves. Keys are read from PEM files (a
/// private key signs; a public or a private key names a role's key).
///
/// Every call throws the repository's own errors (``TUFError``, and ``FirmwareError`` for a
/// firmware target that is not what its description says) for the caller to show.
public struct PublisherRepository {
    /// The repository's working directory (`--repo`).
    public let directory: String
    let repository: TUFRepository

    /// The repository made in `directory` before.
    /// - Throws: ``TUFError`` when `directory` holds no repository.
    public init(directory: String) throws {
        self.directory = directory
        repository = try TUFRepository(directory: directory)
    }

    private init(_ repository: TUFRepository) {
        directory = repository.directory
        self.repository = repository
    }

    /// The public keys of one role and how many of them must sign: files each holding a
    /// public or a private PEM key.
    public struct RoleKeys: Sendable {
        public var files: [String]
        public var threshold: Int

        public init(files: [String], threshold: Int = 1) {
            self.files = files
            self.threshold = threshold
        }

        func keySet() throws -> TUFRepository.RoleKeySet {
            TUFRepository.RoleKeySet(keys: try files.map { try TUFSigningKey.publicKey(pem: PublisherKeys.read($0)) },
                                     threshold: threshold)
        }
    }

    /// Makes a new repository in `directory`: root, targets, snapshot and timestamp with
    /// their keys, one delegated role per channel, `expiry` seconds per role where the
    /// defaults do not suit.
    public static func create(at directory: String, root: RoleKeys, timestamp: RoleKeys, snapshot: RoleKeys, targets: RoleKeys,
                              channels: [(name: String, keys: RoleKeys)], expiry: [String: Int64],
                              now: UTCTime = systemUTCClock()) throws -> PublisherRepository {
        PublisherRepository(try TUFRepository.create(
            at: directory, root: root.keySet(), timestamp: timestamp.keySet(), snapshot: snapshot.keySet(),
            targets: targets.keySet(), channels: try channels.map { (name: $0.name, keys: try $0.keys.keySet()) },
            expiry: expiry, now: now))
    }

    /// Adds `file` to `channel` as `name` (its file name when `nil`) and returns its path in
    /// the repository. Its custom object is the JSON object in `customFile`; a firmware
    /// description there (`"kind": "firmware"`) is amended by `notes` (language to text) and
    /// `serials` (the cohort it targets), and the `.ugif` must be what it says (version,
    /// hardware type) before anyone signs it. Without `customFile`, a region catalogue
    /// carries its own version, and a `.ugif` is refused (it needs its description).
    public func add(_ file: String, channel: String, name: String? = nil, customFile: String? = nil,
                    notes: [String: String] = [:], serials: [UInt32] = [], now: UTCTime = systemUTCClock()) throws -> String {
        let bytes = try PublisherKeys.contents(file)
        var custom: JSON?
        if let customFile {
            custom = try JSONParser.parse(try PublisherKeys.contents(customFile))
            guard custom?.object != nil else { throw TUFError.publisher(detail: ErrorDetail("not_json_object_file", [customFile])) }
        }
        let targetName = name ?? URL(fileURLWithPath: file).lastPathComponent
        if let object = custom?.object, object["kind"]?.string == FirmwareTarget.firmwareKind {
            var metadata = try FirmwareReleaseMetadata.decode(JSONWriter.encode(.object(object)), file: customFile ?? file)
            for (language, text) in notes { metadata.notes[language] = text }
            if !serials.isEmpty { metadata.serials = Cohort(serials: serials) }
            _ = try FirmwareRelease.check(bytes, path: channel + "/" + targetName, metadata: metadata)
            custom = metadata.custom()
        } else if custom == nil {
            if let catalogue = try? RegionCatalogue.decode(bytes, file: file) {
                custom = FirmwareTarget.custom(for: catalogue)
            } else if targetName.hasSuffix(".ugif") {
                throw FirmwareError.invalidInput(file: file, detail: ErrorDetail("needs_custom"))
            }
        }
        return try repository.addTarget(channel: channel, name: targetName, bytes: bytes, custom: custom, now: now)
    }

    /// Signs `role`'s staged metadata with each private key in `keyFiles` (each key holder in turn).
    public func sign(role: String, keyFiles: [String]) throws {
        for file in keyFiles { try repository.sign(role: role, with: PublisherKeys.signingKey(file)) }
    }

    /// The online step a timer runs (daily at least, as the timestamp expires after a day):
    /// a new snapshot when anything changed (signed with `snapshotKeyFiles`) and a new
    /// timestamp; published to `output` when given.
    public func timestamp(keyFiles: [String], snapshotKeyFiles: [String], publishTo output: String? = nil,
                          now: UTCTime = systemUTCClock()) throws {
        try repository.timestamp(with: keyFiles.map(PublisherKeys.signingKey), snapshotKeys: snapshotKeyFiles.map(PublisherKeys.signingKey),
                                 now: now)
        if let output { _ = try repository.publish(to: output, now: now) }
    }

    /// Replaces `role`'s keys (after a leak), staging new metadata for the holders to sign.
    public func rotate(role: String, to keys: RoleKeys, now: UTCTime = systemUTCClock()) throws {
        try repository.rotate(role: role, to: keys.keySet(), now: now)
    }

    /// Writes what a static web server serves into `output`; returns the files written.
    public func publish(to output: String, now: UTCTime = systemUTCClock()) throws -> [String] {
        try repository.publish(to: output, now: now)
    }

    /// Each role's version, expiry and signatures, in the order a person reads them: root,
    /// targets, the channels, snapshot, timestamp.
    public func status() throws -> RepositoryStatus {
        let missing = try repository.missingSignatures()
        var roles: [RepositoryStatus.Role] = []
        for name in ["root", "targets"] + repository.channels + ["snapshot", "timestamp"] {
            let staged = try repository.staged(name)
            let lacking = missing.first { $0.role == name }
            roles.append(RepositoryStatus.Role(
                role: name, version: staged?.signed["version"]?.int64.map { UInt64($0) }, expires: staged?.signed["expires"]?.string,
                signed: lacking == nil, signatures: lacking?.valid ?? (staged?.signatures.count ?? 0), threshold: lacking?.threshold ?? 1))
        }
        return RepositoryStatus(roles: roles)
    }
}

/// Each role's state in a repository; the `--json` form of every `repo` command but publish.
public struct RepositoryStatus: Encodable, Sendable, Hashable {
    public struct Role: Encodable, Sendable, Hashable {
        public let role: String
        /// The staged metadata's version (`nil`: none staged).
        public let version: UInt64?
        /// `2026-01-31T12:00:00Z`.
        public let expires: String?
        /// Whether enough keys signed it.
        public let signed: Bool
        public let signatures: Int
        public let threshold: Int
    }

    public let roles: [Role]
}

/// Key and input files of the publisher, read at a bounded size.
enum PublisherKeys {
    /// The most a key file or a description may hold.
    static let keyLimit = 1 << 16

    /// The text of a key file (at most 64 KiB).
    static func read(_ file: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: file), data.count <= keyLimit else {
            throw TUFError.publisher(detail: ErrorDetail("unreadable_file", [file]))
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Every byte of `file` (a target or its description).
    static func contents(_ file: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: file) else { throw TUFError.publisher(detail: ErrorDetail("unreadable_file", [file])) }
        return Array(data)
    }

    /// A private key file (for signing).
    static func signingKey(_ file: String) throws -> TUFSigningKey { try TUFSigningKey.load(pem: read(file)) }
}
