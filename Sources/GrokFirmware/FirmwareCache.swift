import Foundation
import GrokCrypto

/// Validators the network layer keeps with a channel's metadata for conditional requests.
public struct MetadataValidators: Sendable, Hashable, Codable {
    /// The `ETag` the server sent.
    public var etag: String?
    /// The `Last-Modified` the server sent.
    public var lastModified: String?
    /// Where the metadata came from (URL or path).
    public var source: String?

    /// Creates validators.
    public init(etag: String? = nil, lastModified: String? = nil, source: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.source = source
    }

    enum CodingKeys: String, CodingKey {
        case etag, source
        case lastModified = "last_modified"
    }
}

/// An update as the cache lists it.
public struct AvailableUpdate: Sendable, Hashable {
    /// The entry in the verified metadata.
    public var entry: UpdateEntry
    /// How it relates to the device, when one was given.
    public var compatibility: FirmwareCompatibility?
    /// Whether its verified image is in the cache.
    public var cached: Bool
}

/// What ``FirmwareCache/verify()`` found about one file.
public struct CacheFileReport: Sendable, Hashable {
    /// The verdict.
    public enum Status: String, Sendable, Hashable {
        /// Verified: a metadata file whose signatures, threshold and expiry check; an image
        /// whose SHA-256 matches its name and that current metadata lists; a partial
        /// download of a listed image.
        case ok
        /// Fails its check: an image whose bytes no longer hash to its name, metadata whose
        /// signatures no longer verify, an unreadable state file.
        case corrupt
        /// Intact metadata that has expired (kept: it still records what was accepted).
        case expired
        /// Not needed: an image or partial download no current verified metadata lists, a
        /// stray temp file, an unknown file.
        case orphan
    }

    /// The path, relative to the cache directory.
    public var path: String
    /// The verdict.
    public var status: Status
    /// Why, for people.
    public var detail: String
}

/// The firmware cache: verified channel metadata, verified images content-addressed by
/// SHA-256, the rollback state, and partial downloads. Layout (see docs/firmware-format.md):
///
/// ```
/// <directory>/state.json                          highest accepted metadata version per channel (and per document)
/// <directory>/regions.json                        the signed region catalogue, as received (docs/regions.md)
/// <directory>/metadata/<channel>.json             the signed envelope, as received
/// <directory>/metadata/<channel>.validators.json  ETag / Last-Modified for conditional requests
/// <directory>/images/<sha256>.grokfw              verified images
/// <directory>/downloads/<sha256>.partial          downloads in progress (resumable)
/// ```
///
/// Nothing enters the cache before it verifies, and every file is written by temp file,
/// fsync and rename. Not safe for two processes writing the same cache at once.
public struct FirmwareCache: Sendable {
    /// The cache's directory.
    public let directory: String
    /// Checks metadata (trusted keys, threshold, clock).
    public let verifier: MetadataVerifier

    /// A cache in `directory` (created with its subdirectories if missing).
    public init(directory: String, verifier: MetadataVerifier) throws(FirmwareError) {
        self.directory = directory
        self.verifier = verifier
        for sub in ["metadata", "images", "downloads"] { try Files.makeDirectories(directory + "/" + sub) }
    }

    // MARK: Paths

    var statePath: String { directory + "/state.json" }

    /// Where the signed envelope of `channel` is kept.
    public func metadataPath(channel: String) -> String { directory + "/metadata/\(channel).json" }

    func validatorsPath(channel: String) -> String { directory + "/metadata/\(channel).validators.json" }

    /// Where the verified image with digest `sha256` is kept.
    public func imagePath(_ sha256: SHA256Digest) -> String { directory + "/images/\(sha256.hex).grokfw" }

    /// Where the network layer should download `entry`'s image (same file system as the
    /// images, so the verified file is renamed, not copied; resumable by HTTP Range).
    public func partialPath(for entry: UpdateEntry) -> String { directory + "/downloads/\(entry.sha256.hex).partial" }

    // MARK: Rollback state

    private struct State: Codable {
        var channels: [String: AcceptedVersion]
        /// Other signed documents (the region catalogue), by name; absent in older caches.
        var documents: [String: AcceptedVersion]?
    }

    private func loadState() throws(FirmwareError) -> State {
        guard let bytes = try Files.load(statePath, limit: 1 << 20, tooLarge: { .invalidInput(file: statePath, detail: "\($0) bytes is too large for a state file") })
        else { return State(channels: [:], documents: nil) }
        do {
            return try JSONDecoder().decode(State.self, from: Data(bytes))
        } catch {
            // Never start over silently: that would let old metadata back in (rollback).
            throw .invalidInput(file: statePath, detail: "not a valid firmware cache state file (\(describe(error).field) \(describe(error).detail)); restore it from a backup or remove it only if you trust every server")
        }
    }

    private func saveState(_ state: State) throws(FirmwareError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try Files.replace(statePath, with: Array(try! encoder.encode(state)) + [0x0A])
    }

    /// The highest version of the signed document `name` (e.g. `regions`) accepted, if any.
    public func highestAccepted(document name: String) throws(FirmwareError) -> AcceptedVersion? {
        try loadState().documents?[name]
    }

    private func record(_ accepted: AcceptedVersion, document name: String) throws(FirmwareError) {
        var state = try loadState()
        if let known = state.documents?[name], known.version >= accepted.version { return }
        state.documents = (state.documents ?? [:]).merging([name: accepted]) { $1 }
        try saveState(state)
    }

    /// The highest metadata version accepted for `channel`, if any.
    public func highestAccepted(channel: String) throws(FirmwareError) -> AcceptedVersion? {
        try loadState().channels[channel]
    }

    private func record(_ accepted: AcceptedVersion, channel: String) throws(FirmwareError) {
        var state = try loadState()
        if let known = state.channels[channel], known.version >= accepted.version { return }
        state.channels[channel] = accepted
        try saveState(state)
    }

    // MARK: Metadata

    /// Verifies `bytes` as the metadata of `channel` (signatures, threshold, type, channel,
    /// expiry, rollback against the state) and only then stores it with its validators and
    /// raises the channel's highest accepted version. On any error the cache is unchanged.
    /// - Parameter source: the URL or path it came from, for errors.
    @discardableResult
    public func store(metadata bytes: [UInt8], channel: String, source: String,
                      validators: MetadataValidators? = nil) throws(FirmwareError) -> VerifiedChannel {
        let verified = try verifier.verify(bytes, channel: channel, highest: highestAccepted(channel: channel), file: source)
        try Files.replace(metadataPath(channel: channel), with: bytes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let kept = validators ?? MetadataValidators(source: source)
        try Files.replace(validatorsPath(channel: channel), with: Array(try! encoder.encode(kept)) + [0x0A])
        try record(verified.accepted, channel: channel)
        return verified
    }

    /// The cached metadata of `channel`, verified again now (signatures, threshold, expiry,
    /// not older than the highest accepted). Works without any network.
    /// - Throws: ``FirmwareError/noCachedMetadata(channel:)`` when none is cached; the
    ///   verification errors otherwise (an expired cache is refused: freeze).
    public func channel(_ channel: String) throws(FirmwareError) -> VerifiedChannel {
        guard ChannelMetadata.isValidChannelName(channel) else { throw .invalidChannelName(name: channel) }
        let path = metadataPath(channel: channel)
        guard let bytes = try Files.load(path, limit: ChannelMetadata.maxEnvelopeSize, tooLarge: { _ in
            .envelopeMalformed(file: path, detail: "larger than \(ChannelMetadata.maxEnvelopeSize) bytes")
        }) else { throw .noCachedMetadata(channel: channel) }
        let verified = try verifier.verify(bytes, channel: channel, highest: highestAccepted(channel: channel), file: path)
        // A crash between storing metadata and raising the state leaves the state behind; catch up.
        try record(verified.accepted, channel: channel)
        return verified
    }

    // MARK: The region catalogue

    /// Where the signed region catalogue is kept: `regions.json` in the cache directory.
    public var regionsPath: String { directory + "/regions.json" }

    var regionValidatorsPath: String { directory + "/regions.validators.json" }

    /// Verifies `bytes` as the region catalogue (signatures, threshold, type, expiry,
    /// rollback: the same checks as channel metadata) and only then stores it with its
    /// validators and raises its highest accepted version. On any error the cache is
    /// unchanged.
    @discardableResult
    public func storeRegions(_ bytes: [UInt8], source: String,
                             validators: MetadataValidators? = nil) throws(FirmwareError) -> VerifiedDocument<RegionCatalogue> {
        let name = RegionCatalogue.name
        let verified = try verifier.verify(bytes, as: RegionCatalogue.self, name: name,
                                           highest: highestAccepted(document: name), file: source)
        try Files.replace(regionsPath, with: bytes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try Files.replace(regionValidatorsPath, with: Array(try! encoder.encode(validators ?? MetadataValidators(source: source))) + [0x0A])
        try record(verified.accepted, document: name)
        return verified
    }

    /// The cached region catalogue, verified again now. Works without any network.
    /// - Throws: ``FirmwareError/noCachedMetadata(channel:)`` (with `regions`) when none is
    ///   cached; the verification errors otherwise (an expired catalogue is refused).
    public func regions() throws(FirmwareError) -> VerifiedDocument<RegionCatalogue> {
        let path = regionsPath
        guard let bytes = try Files.load(path, limit: ChannelMetadata.maxEnvelopeSize, tooLarge: { _ in
            .envelopeMalformed(file: path, detail: "larger than \(ChannelMetadata.maxEnvelopeSize) bytes")
        }) else { throw .noCachedMetadata(channel: RegionCatalogue.name) }
        let name = RegionCatalogue.name
        let verified = try verifier.verify(bytes, as: RegionCatalogue.self, name: name,
                                           highest: highestAccepted(document: name), file: path)
        try record(verified.accepted, document: name)
        return verified
    }

    /// The validators stored with the region catalogue, if any.
    public func regionValidators() -> MetadataValidators? {
        guard let bytes = try? Files.load(regionValidatorsPath, limit: 1 << 16, tooLarge: { _ in .crypto(detail: "") }) else { return nil }
        return try? JSONDecoder().decode(MetadataValidators.self, from: Data(bytes))
    }

    /// The validators stored with `channel`'s metadata, if any.
    public func validators(channel: String) -> MetadataValidators? {
        guard let bytes = try? Files.load(validatorsPath(channel: channel), limit: 1 << 16, tooLarge: { _ in .crypto(detail: "") }) else { return nil }
        return try? JSONDecoder().decode(MetadataValidators.self, from: Data(bytes))
    }

    /// The updates `channel` lists, with their compatibility with `device` (when given) and
    /// whether each image is cached. Reads only the cache.
    public func updates(in channel: VerifiedChannel, for device: DeviceIdentity? = nil) -> [AvailableUpdate] {
        channel.metadata.updates.map { entry in
            AvailableUpdate(
                entry: entry,
                compatibility: device.map { Compatibility.check(entry, in: channel.metadata, against: $0) },
                cached: Files.exists(imagePath(entry.sha256)))
        }
    }

    // MARK: Images

    /// Verifies a downloaded file against the entry named `name` in `channel` (size first,
    /// without reading a byte more; then SHA-256 and the package header) and moves it into
    /// the cache (fsync, rename). A file that fails is deleted and the cache is unchanged.
    /// - Returns: the cached image's path.
    @discardableResult
    public func addImage(partialFile: String, name: String, in channel: VerifiedChannel) throws(FirmwareError) -> String {
        let entry = try channel.entry(named: name)
        do {
            let bytes = try Files.readExisting(partialFile, limit: entry.size) { found in
                .imageSizeMismatch(file: partialFile, expected: entry.size, found: found)
            }
            _ = try channel.bind(image: bytes, to: name, file: partialFile)
            let destination = imagePath(entry.sha256)
            try Files.moveVerified(partialFile, to: destination, bytes: bytes)
            return destination
        } catch {
            if case .io = error {} else { try? Files.remove(partialFile) }
            throw error
        }
    }

    /// The cached image of the entry named `name` in `channel`, its hash and header verified
    /// again on this read.
    /// - Throws: ``FirmwareError/imageNotCached(name:sha256:)`` when it is not cached; the
    ///   binding errors when the cached file no longer matches.
    public func image(named name: String, in channel: VerifiedChannel) throws(FirmwareError) -> FirmwarePackage {
        let entry = try channel.entry(named: name)
        let path = imagePath(entry.sha256)
        guard let bytes = try Files.load(path, limit: entry.size, tooLarge: { .imageSizeMismatch(file: path, expected: entry.size, found: $0) })
        else { throw .imageNotCached(name: name, sha256: entry.sha256.hex) }
        return try channel.bind(image: bytes, to: name, file: path)
    }

    // MARK: Maintenance

    /// The channels with metadata in the cache.
    public func cachedChannels() -> [String] {
        Files.list(directory + "/metadata").compactMap { name in
            guard name.hasSuffix(".json"), !name.hasSuffix(".validators.json") else { return nil }
            let channel = String(name.dropLast(5))
            return ChannelMetadata.isValidChannelName(channel) ? channel : nil
        }
    }

    /// The verified, unexpired metadata of every cached channel.
    func currentChannels() -> [VerifiedChannel] {
        cachedChannels().compactMap { try? channel($0) }
    }

    /// Checks every file in the cache: metadata verified again, every image hashed again,
    /// partial downloads and stray files classified. Changes nothing.
    public func verify() -> [CacheFileReport] {
        var reports: [CacheFileReport] = []
        let current = currentChannels()
        let listed = Set(current.flatMap { $0.metadata.updates.map(\.sha256) })

        if Files.exists(statePath) {
            do {
                _ = try loadState()
                reports.append(.init(path: "state.json", status: .ok, detail: "highest accepted versions"))
            } catch {
                reports.append(.init(path: "state.json", status: .corrupt, detail: error.description))
            }
        }
        if Files.exists(regionsPath) {
            do {
                let verified = try regions()
                reports.append(.init(path: "regions.json", status: .ok,
                                     detail: "region catalogue version \(verified.document.version), expires \(UTCTime.format(verified.document.expires))"))
            } catch {
                if case .metadataExpired = error {
                    reports.append(.init(path: "regions.json", status: .expired, detail: error.description))
                } else {
                    reports.append(.init(path: "regions.json", status: .corrupt, detail: error.description))
                }
            }
        }
        for name in Files.list(directory + "/metadata") {
            let relative = "metadata/" + name
            if name.hasSuffix(".validators.json") {
                let channel = String(name.dropLast(".validators.json".count))
                let known = Files.exists(metadataPath(channel: channel))
                reports.append(.init(path: relative, status: known ? .ok : .orphan, detail: known ? "validators for conditional requests" : "no metadata for this channel"))
            } else if name.hasSuffix(".json"), ChannelMetadata.isValidChannelName(String(name.dropLast(5))) {
                let channel = String(name.dropLast(5))
                do {
                    let verified = try self.channel(channel)
                    reports.append(.init(path: relative, status: .ok, detail: "version \(verified.metadata.version), expires \(UTCTime.format(verified.metadata.expires))"))
                } catch {
                    if case .metadataExpired = error {
                        reports.append(.init(path: relative, status: .expired, detail: error.description))
                    } else {
                        reports.append(.init(path: relative, status: .corrupt, detail: error.description))
                    }
                }
            } else {
                reports.append(.init(path: relative, status: .orphan, detail: name.contains(".tmp-") ? "stray temp file" : "unknown file"))
            }
        }
        for name in Files.list(directory + "/images") {
            let relative = "images/" + name
            guard name.hasSuffix(".grokfw"), let digest = SHA256Digest(hex: String(name.dropLast(7))) else {
                reports.append(.init(path: relative, status: .orphan, detail: name.contains(".tmp-") ? "stray temp file" : "unknown file"))
                continue
            }
            let path = directory + "/" + relative
            let bytes: [UInt8]
            do {
                bytes = try Files.readExisting(path, limit: 64 * 1024 * 1024) { .imageSizeMismatch(file: path, expected: 64 * 1024 * 1024, found: $0) }
            } catch {
                reports.append(.init(path: relative, status: .corrupt, detail: error.description))
                continue
            }
            let actual = SHA256.hash(bytes)
            if actual != digest {
                reports.append(.init(path: relative, status: .corrupt, detail: "SHA-256 is \(actual.hex), not the \(digest.hex) it is stored as"))
            } else if !listed.contains(digest) {
                reports.append(.init(path: relative, status: .orphan, detail: "no current verified metadata lists it"))
            } else {
                reports.append(.init(path: relative, status: .ok, detail: "\(bytes.count) bytes, SHA-256 verified"))
            }
        }
        for name in Files.list(directory + "/downloads") {
            let relative = "downloads/" + name
            if name.hasSuffix(".partial"), let digest = SHA256Digest(hex: String(name.dropLast(8))), listed.contains(digest) {
                reports.append(.init(path: relative, status: .ok, detail: "partial download of a listed image"))
            } else {
                reports.append(.init(path: relative, status: .orphan, detail: "not a download of a listed image"))
            }
        }
        return reports
    }

    /// Removes what ``verify()`` reports as orphan (images and downloads no current verified
    /// metadata lists, stray temp files, unknown files) and images reported corrupt. Never
    /// removes the state file or a channel's metadata.
    /// - Returns: the removed paths, relative to the cache directory.
    @discardableResult
    public func prune() throws(FirmwareError) -> [String] {
        var removed: [String] = []
        for report in verify() where report.status == .orphan || (report.status == .corrupt && report.path.hasPrefix("images/")) {
            try Files.remove(directory + "/" + report.path)
            removed.append(report.path)
        }
        return removed
    }
}
