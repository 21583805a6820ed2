import Foundation
import GrokBasics
import GrokCrypto
import GrokFirmware
import GrokProtocol
import UGrokIt

/// A station's questions to its firmware channel (`firmware list`, `check`, `download`):
/// each refreshes the trusted metadata through TUF first, then asks the devices what they
/// run (each on a thread of its own, never one of the cooperative pool's) and judges every
/// listing with ``FirmwareChoice``, the decision a fleet run and `firmware flash` make.
/// Errors of the channel are thrown as they come (TUF, firmware); a device that cannot be
/// read is a per-device failure in the result.
public struct FirmwareQuery: Sendable {
    public let channel: FirmwareChannel
    /// How each device's session is set up.
    public var readerOptions: ReaderOptions
    /// The station's remembered link settings: each device is reached at its stored setting,
    /// AutoConfig choosing one where none is known (``LinkSetup``). `nil`: nothing remembered.
    public var linkSettings: LinkSettingFile?

    public init(channel: FirmwareChannel, readerOptions: ReaderOptions = ReaderOptions(), linkSettings: LinkSettingFile? = nil) {
        self.channel = channel
        self.readerOptions = readerOptions
        self.linkSettings = linkSettings
    }

    /// The repository as a person names it (its metadata URL without `/metadata`).
    public var repositoryURL: String { channel.repository.metadataURL.replacingOccurrences(of: "/metadata", with: "") }

    // MARK: list

    /// `firmware list`: the channel's firmware, newest version first, with what the cache
    /// holds of each and how each device given relates to it.
    public func list(_ devices: [FleetDevice] = []) async throws -> FirmwareList {
        let name = channel.name
        let update = try await channel.repository.update(channels: [name])
        let listings = (update.updates[name] ?? []).sorted { ($0.metadata.version, $0.path) > ($1.metadata.version, $1.path) }
        let identified = await Self.identify(devices, readerOptions: readerOptions, linkSettings: linkSettings)
        let units = identified.compactMap { try? $0.result.get() }
        let rows = listings.map { listing in
            FirmwareList.Row(listing: listing, cache: cacheState(listing),
                             compatibility: units.map { FirmwareChoice.judge(.listing(listing), for: $0.unit) })
        }
        return FirmwareList(timestampVersion: update.versions["timestamp"] ?? 0, rows: rows,
                            devices: identified.filter { (try? $0.result.get()) != nil }.map(\.device),
                            failures: identified.compactMap { id in
                                if case .failure(let error) = id.result { return DeviceFailure(device: id.device, error: error) }
                                return nil
                            })
    }

    // MARK: check

    /// `firmware check`: per device, what runs and the newest listing it may take.
    public func check(_ devices: [FleetDevice]) async throws -> [FirmwareCheck] {
        let listings = try await channel.listings()
        return await Self.identify(devices, readerOptions: readerOptions, linkSettings: linkSettings).map { id in
            FirmwareCheck(device: id.device, result: id.result.map { found in
                let update: FirmwareCheck.Update?
                if case .send(.listing(let listing), let compatibility) = Self.decide(found.unit, listings: listings) {
                    update = .init(name: listing.name, version: listing.metadata.version, compatibility: compatibility,
                                   cached: cacheState(listing) == .held)
                } else {
                    update = nil
                }
                return FirmwareCheck.Unit(serial: found.info.serialNumberText, running: found.info.firmwareVersion, update: update)
            })
        }
    }

    /// What `firmware check` offers `unit`: the choice for the newest listing it may take,
    /// neither a downgrade nor the version it runs (``FirmwareChoice/choose(_:listings:unit:allowDowngrade:allowSameVersion:)``).
    public static func decide(_ unit: FirmwareUnit, listings: [FirmwareListing]) -> FirmwareChoice {
        FirmwareChoice.choose(.latest, listings: listings, unit: unit, allowDowngrade: false, allowSameVersion: false)
    }

    // MARK: download

    /// `firmware download`: the listings to fetch, newest first: the one named (by its name
    /// or path), or all (`nil`).
    /// - Throws: ``FirmwareError/updateNotListed(channel:name:)`` for a name not listed.
    public func listings(named wanted: String?) async throws -> [FirmwareListing] {
        let listings = try await channel.listings()
        guard let wanted else { return listings }
        let found = listings.filter { $0.name == wanted || $0.path == wanted }
        if found.isEmpty { throw FirmwareError.updateNotListed(channel: channel.name, name: wanted) }
        return found
    }

    /// Fetches `listing`'s image through TUF (length and SHA-256 as signed), parsed as a
    /// `.ugif` and checked against its description, into the state directory's
    /// `images/SHA256`; nothing is fetched when a verified copy is held.
    public func download(_ listing: FirmwareListing) async throws -> FirmwareDownload {
        let held = cacheState(listing) == .held
        let release = try await channel.target(named: listing.path)
        return FirmwareDownload(channel: channel.name, name: listing.name, version: release.version, size: release.length,
                                sha256: release.sha256.hex, alreadyCached: held, path: imagePath(release.sha256))
    }

    // MARK: The station's cache

    /// Where the station keeps the verified image of this hash.
    func imagePath(_ sha256: SHA256Digest) -> String { Self.imagePath(sha256, in: channel) }

    static func imagePath(_ sha256: SHA256Digest, in channel: FirmwareChannel) -> String {
        channel.repository.stateDirectory + "/images/" + sha256.hex
    }

    /// What the station's cache holds of `listing`'s image: the image (its length and
    /// SHA-256 as the signed listing says), nothing, or a corrupt file (it would fail at the
    /// firmware step: a download fetches it again).
    public func cacheState(_ listing: FirmwareListing) -> FirmwareCacheState {
        let path = imagePath(listing.sha256)
        guard FileManager.default.fileExists(atPath: path) else { return .absent }
        guard let data = FileManager.default.contents(atPath: path), data.count == listing.length,
              SHA256.hash(Array(data)) == listing.sha256 else { return .corrupt }
        return .held
    }

    // MARK: Devices

    /// A device as it answered: its reader information and the unit the choice judges.
    struct Found: Sendable {
        let info: ReaderInfo
        let unit: FirmwareUnit
    }

    struct Identified: Sendable {
        let device: String
        let result: Result<Found, any Error>
    }

    /// Connects to every device at once (a thread each), reads its identity and hangs up;
    /// the results in the order given.
    static func identify(_ devices: [FleetDevice], readerOptions: ReaderOptions, linkSettings: LinkSettingFile?) async -> [Identified] {
        guard !devices.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: FleetRunner.each(devices, concurrency: nil) { device in
                    Identified(device: device.name, result: Result { try identify(device, readerOptions: readerOptions, linkSettings: linkSettings) })
                })
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    static func identify(_ device: FleetDevice, readerOptions: ReaderOptions, linkSettings: LinkSettingFile?) throws -> Found {
        let session = try ReaderSession(port: try device.openPort(), options: readerOptions)
        defer { session.close() }
        let info = try LinkSetup.connect(session, cardModel: device.cardModel, remembering: linkSettings).info
        return Found(info: info, unit: FirmwareUnit(info, inLoader: session.version?.software == .loader))
    }
}

/// What a station's cache holds of a listing's image; `--json`: `held`, `absent`, `corrupt`.
public enum FirmwareCacheState: String, Sendable, Hashable, Encodable {
    case held, absent, corrupt
}

/// A device that could not be read, and why.
public struct DeviceFailure: Sendable {
    public let device: String
    public let error: any Error
}

/// The channel's firmware as `firmware list` shows it.
public struct FirmwareList: Sendable {
    public struct Row: Sendable {
        public let listing: FirmwareListing
        public let cache: FirmwareCacheState
        /// How each device of ``FirmwareList/devices`` relates to it, in that order.
        public let compatibility: [FirmwareCompatibility]
        /// The image's SHA-256, hex.
        public var sha256: String { listing.sha256.hex }
    }

    /// The timestamp metadata's version the listing was read at.
    public let timestampVersion: UInt64
    /// Newest version first.
    public let rows: [Row]
    /// The devices that answered, in the order given.
    public let devices: [String]
    public let failures: [DeviceFailure]
}

/// One device's answer to `firmware check`.
public struct FirmwareCheck: Sendable {
    public struct Update: Sendable, Hashable {
        public let name: String
        public let version: FirmwareVersion
        public let compatibility: FirmwareCompatibility
        /// Whether the station's cache holds its verified image.
        public let cached: Bool
    }

    public struct Unit: Sendable, Hashable {
        /// Its serial number, 8 digits.
        public let serial: String
        public let running: FirmwareVersion
        /// The newest listing it may take (`nil`: up to date).
        public let update: Update?
    }

    public let device: String
    public let result: Result<Unit, any Error>
}

/// One image `firmware download` made sure of.
public struct FirmwareDownload: Sendable, Hashable {
    public let channel: String
    public let name: String
    public let version: FirmwareVersion
    public let size: Int
    public let sha256: String
    /// Whether its verified image was held before.
    public let alreadyCached: Bool
    /// Where the verified image is.
    public let path: String
}

extension DevicePorts {
    /// `spec` as a device command opens it: under its port's lock, waiting a bounded time
    /// for another grokctl that holds it (``open(_:context:wait:)``).
    public static func lockedDevice(_ spec: DeviceSpec, context: DevicePortContext) -> FleetDevice {
        FleetDevice(name: spec.description, portKey: portKey(spec, context: context), cardModel: soundCardModel(spec, sysfs: context.sysfs),
                    usbPath: usbPath(spec, sysfs: context.sysfs)) { try open(spec, context: context) }
    }
}
