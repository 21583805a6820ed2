import GrokCrypto
import GrokFirmware
import GrokNet
import GrokProtocol

/// Where a firmware channel lives: the root of an update server's tree (any static HTTPS
/// host, or a `file://` directory such as a USB stick), laid out as
/// `<root>/<channel>/channel.json` with the images beside it (docs/firmware-format.md).
public struct FirmwareServer: Sendable, Hashable {
    /// `https://...`, `http://...` or `file:///...`, without a trailing slash.
    public let root: String

    /// A server at `root`; a trailing slash is dropped.
    public init(root: String) {
        var root = root
        while root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    /// The URL of `channel`'s signed metadata.
    public func metadataURL(channel: String) -> String { "\(root)/\(channel)/channel.json" }

    /// The URL of the signed region catalogue: `<root>/regions.json`.
    public var regionsURL: String { "\(root)/regions.json" }

    /// The URL of an image `channel` lists as `file`.
    public func imageURL(channel: String, file: String) -> String { "\(root)/\(channel)/\(file)" }
}

/// How a channel reload went.
public enum ChannelReload: Sendable, Hashable {
    /// New metadata arrived, verified and was stored: its version.
    case updated(version: UInt64)
    /// The server said the cached copy is current (conditional request); it was verified again.
    case unchanged(version: UInt64)
}

/// Firmware channels for the SDK (vendor `loadUpdatesFromChannel`, `loadUpdate`,
/// `forceFirmwareChannelReload`, `firmwareCheckCompatibility`): signed metadata and images
/// fetched through an ``HTTPFetching`` backend into a verified ``FirmwareCache``. Nothing
/// reaches the cache unverified, and a failed fetch leaves it as it was; with unexpired
/// metadata in the cache everything but reloading works offline.
public struct FirmwareChannels: Sendable {
    public let cache: FirmwareCache
    public let fetcher: any HTTPFetching
    /// Trust, timeouts, retries; the size caps come from the metadata.
    public var transfer: TransferOptions

    public init(cache: FirmwareCache, fetcher: any HTTPFetching = CurlFetcher(), transfer: TransferOptions = TransferOptions()) {
        self.cache = cache
        self.fetcher = fetcher
        self.transfer = transfer
    }

    /// Fetches `channel`'s metadata from `server` (conditionally, when a copy is cached),
    /// verifies it and stores it.
    @discardableResult
    public func reload(_ channel: String, from server: FirmwareServer) async throws -> ChannelReload {
        let url = server.metadataURL(channel: channel)
        let cached = cache.validators(channel: channel)
        let hasCopy = (try? cache.channel(channel)) != nil
        let validators = hasCopy && cached?.source == url ? Validators(etag: cached?.etag, lastModified: cached?.lastModified) : nil
        var options = transfer
        options.sizeCap = Int64(ChannelMetadata.maxEnvelopeSize)
        switch try await fetcher.fetch(url, ifChanged: validators, options: options) {
        case .notModified:
            return .unchanged(version: try cache.channel(channel).metadata.version)
        case .fetched(let document):
            let kept = MetadataValidators(etag: document.validators.etag, lastModified: document.validators.lastModified, source: url)
            let verified = try cache.store(metadata: document.body, channel: channel, source: url, validators: kept)
            return .updated(version: verified.metadata.version)
        }
    }

    /// Fetches the signed region catalogue from `server` (conditionally, when a copy is
    /// cached), verifies it like channel metadata (signatures k of n, expiry, rollback) and
    /// stores it as `regions.json` in the cache. A failed fetch leaves the cache as it was.
    @discardableResult
    public func reloadRegions(from server: FirmwareServer) async throws -> ChannelReload {
        let url = server.regionsURL
        let cached = cache.regionValidators()
        let hasCopy = (try? cache.regions()) != nil
        let validators = hasCopy && cached?.source == url ? Validators(etag: cached?.etag, lastModified: cached?.lastModified) : nil
        var options = transfer
        options.sizeCap = Int64(ChannelMetadata.maxEnvelopeSize)
        switch try await fetcher.fetch(url, ifChanged: validators, options: options) {
        case .notModified:
            return .unchanged(version: try cache.regions().document.version)
        case .fetched(let document):
            let kept = MetadataValidators(etag: document.validators.etag, lastModified: document.validators.lastModified, source: url)
            let verified = try cache.storeRegions(document.body, source: url, validators: kept)
            return .updated(version: verified.document.version)
        }
    }

    /// The verified region catalogue in the cache (works offline).
    public func regionCatalogue() throws(FirmwareError) -> RegionCatalogue {
        try cache.regions().document
    }

    /// The regions `reader` may choose by the cached catalogue (its hardware revision and
    /// serial number), and the index of the one it is set to (vendor `getRegionNames`).
    public func regionChoices(for reader: ReaderInfo) throws(FirmwareError) -> RegionChoices {
        RegionChoices(catalogue: try regionCatalogue(), reader: reader)
    }

    /// The updates `channel` lists, judged against `reader` when given. Reads the cache only.
    public func updates(_ channel: String, for reader: ReaderInfo? = nil) throws(FirmwareError) -> [AvailableUpdate] {
        let verified = try cache.channel(channel)
        return cache.updates(in: verified, for: reader.map(DeviceIdentity.init))
    }

    /// The newest update of `channel` that may be applied on `reader` (an upgrade; with
    /// `allowDowngrade` / `allowSameVersion`, those too), or `nil` when there is none.
    public func best(_ channel: String, for reader: ReaderInfo, allowDowngrade: Bool = false,
                     allowSameVersion: Bool = false) throws(FirmwareError) -> AvailableUpdate? {
        try updates(channel, for: reader)
            .filter { $0.compatibility?.mayApply(allowDowngrade: allowDowngrade, allowSameVersion: allowSameVersion) == true }
            .max { $0.entry.version < $1.entry.version }
    }

    /// The package of update `name` in `channel`: from the cache when it is there (verified
    /// again), else downloaded from `server` into the cache first (resuming a partial
    /// download, refusing anything longer than the metadata says).
    /// - Parameter progress: bytes held and total, while downloading.
    public func load(_ name: String, channel: String, from server: FirmwareServer?,
                     progress: (@Sendable (Int64, Int64?) -> Void)? = nil) async throws -> FirmwarePackage {
        let verified = try cache.channel(channel)
        let entry = try verified.entry(named: name)
        do {
            return try cache.image(named: name, in: verified)
        } catch .imageNotCached {
            // Download below.
        }
        guard let server else { throw FirmwareError.imageNotCached(name: name, sha256: entry.sha256.hex) }
        let partial = cache.partialPath(for: entry)
        var options = transfer
        options.expectedSize = Int64(entry.size)
        options.sizeCap = Int64(entry.size)
        _ = try await fetcher.download(server.imageURL(channel: channel, file: entry.file), to: partial,
                                       options: options, progress: progress)
        try cache.addImage(partialFile: partial, name: name, in: verified)
        return try cache.image(named: name, in: verified)
    }
}

// MARK: The TUF channel (the vendor's calls on the one firmware channel)

/// One firmware listing of a channel and how it relates to a reader, when one was given.
public struct ChannelUpdate: Sendable, Hashable {
    public let listing: FirmwareListing
    /// `nil` when no reader was given.
    public let compatibility: FirmwareCompatibility?
}

/// The vendor SDK's firmware-channel calls on the TUF channel (``FirmwareChannel``, a
/// repository made with `grokctl repo`): everything is refreshed and verified by TUF, and an
/// image is a `.ugif` checked against its signed description before it is returned. These
/// replace the envelope-cache ``FirmwareChannels`` above once the fleet uses them.
extension FirmwareChannel {
    /// Vendor `forceFirmwareChannelReload`: refreshes the trusted metadata; the trusted
    /// timestamp version.
    @discardableResult
    public func reload() async throws -> UInt64 {
        try await repository.update(channels: [name]).versions["timestamp"] ?? 0
    }

    /// Vendor `loadUpdatesFromChannel`: the channel's firmware, newest first, each judged
    /// against `reader` (its GetVersion answer) when given.
    public func loadUpdates(for reader: VendorReaderVersion? = nil) async throws -> [ChannelUpdate] {
        let device: DeviceIdentity? = reader.map { DeviceIdentity($0) }
        return try await listings().map { listing in
            ChannelUpdate(listing: listing, compatibility: device.map { listing.compatibility(with: $0) })
        }
    }

    /// Vendor `loadUpdate`: the verified release `name` (downloaded unless already held).
    public func loadUpdate(_ name: String) async throws -> FirmwareRelease {
        try await target(named: name)
    }

    /// Vendor `firmwareCheckCompatibility`: how release `name` relates to `reader`.
    public func checkCompatibility(_ name: String, reader: VendorReaderVersion) async throws -> FirmwareCompatibility {
        let path = name.hasPrefix(self.name + "/") ? name : self.name + "/" + name
        guard let listing = try await listings().first(where: { $0.path == path }) else {
            throw FirmwareError.updateNotListed(channel: self.name, name: name)
        }
        return listing.compatibility(with: DeviceIdentity(reader))
    }
}
