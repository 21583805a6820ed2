import GrokBasics
import Foundation
import GrokFirmware
import GrokProtocol
import GrokTUF
import Synchronization

/// What a fleet run knows of its firmware channel (a TUF repository's channel,
/// ``FirmwareChannel``): the verified listings and region catalogue, read once before the
/// devices start, and the verified releases, downloaded once each when a device first
/// needs them (or before the run, see ``load(_:prefetch:)``).
///
/// The channel's API is async; the device workers are plain threads that block on audio.
/// ``release(_:)`` bridges the two: it waits (on a semaphore, no polling) for one task
/// that downloads and verifies the image; devices wanting the same image wait for the
/// same download. Never call it from a task of the cooperative pool.
public final class FleetFirmware: Sendable {
    /// The channel's name (the profile's `firmware.channel`).
    public let channel: String
    /// The channel's firmware listings, newest version first.
    public let listings: [FirmwareListing]
    /// The channel's region catalogue, `nil` when it lists none.
    public let regionCatalogue: RegionCatalogue?
    let fetch: @Sendable (FirmwareListing) async throws -> FirmwareRelease
    let releases = Mutex<[String: FirmwareRelease]>([:])
    /// Held while one image is fetched (devices needing an image wait for it).
    let fetching = NSLock()

    /// A channel's state as given: `fetch` downloads and verifies a listing's image.
    public init(channel: String, listings: [FirmwareListing], regionCatalogue: RegionCatalogue? = nil,
                fetch: @escaping @Sendable (FirmwareListing) async throws -> FirmwareRelease) {
        self.channel = channel
        self.listings = listings
        self.regionCatalogue = regionCatalogue
        self.fetch = fetch
    }

    /// Refreshes `channel` through TUF, reads its listings and region catalogue (absent:
    /// `nil`), and downloads the images `prefetch` may target (so a run can go on offline):
    /// for a version, the listings of that version; for `latest`, those of the newest version.
    /// - Throws: ``FleetError/firmwareCache(channel:cause:)`` with the TUF or firmware error as its cause.
    public static func load(_ channel: FirmwareChannel, prefetch policy: Profile.FirmwarePolicy? = nil) async throws(FleetError) -> FleetFirmware {
        let name = channel.name
        let listings: [FirmwareListing]
        var catalogue: RegionCatalogue?
        do {
            listings = try await channel.listings()
        } catch {
            throw failure(channel: name, error)
        }
        do {
            catalogue = try await channel.regionCatalogue()
        } catch FirmwareError.updateNotListed {
            catalogue = nil
        } catch {
            throw failure(channel: name, error)
        }
        let firmware = FleetFirmware(channel: name, listings: listings, regionCatalogue: catalogue) { listing in
            try await channel.target(named: listing.path)
        }
        if let policy {
            let wanted: [FirmwareListing]
            switch policy.target {
            case .version(let version): wanted = listings.filter { $0.metadata.version == version }
            case .latest: wanted = listings.filter { $0.metadata.version == listings.first?.metadata.version }
            }
            for listing in wanted { _ = try await firmware.release(listing) }
        }
        return firmware
    }

    /// Whether the image of `listing` was downloaded and verified in this run.
    public func isDownloaded(_ listing: FirmwareListing) -> Bool { releases.withLock { $0[listing.path] != nil } }

    /// The verified release of `listing` (downloaded once), for async callers.
    public func release(_ listing: FirmwareListing) async throws(FleetError) -> FirmwareRelease {
        if let known = releases.withLock({ $0[listing.path] }) { return known }
        do {
            let release = try await fetch(listing)
            releases.withLock { $0[listing.path] = release }
            return release
        } catch {
            throw Self.failure(channel: channel, error)
        }
    }

    /// The verified release of `listing`, blocking the calling thread (a device worker's)
    /// until it is downloaded and checked.
    public func releaseBlocking(_ listing: FirmwareListing) throws(FleetError) -> FirmwareRelease {
        fetching.lock()
        defer { fetching.unlock() }
        if let known = releases.withLock({ $0[listing.path] }) { return known }
        let outcome = Mutex<Result<FirmwareRelease, FleetError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let result: Result<FirmwareRelease, FleetError>
            do throws(FleetError) {
                result = .success(try await self.release(listing))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// A TUF or firmware error as the fleet's error for `channel`.
    static func failure(channel: String, _ error: any Error) -> FleetError {
        switch error {
        case let error as FleetError: error
        case let error as any CodedError: .firmwareCache(channel: channel, cause: ErrorCause(error))
        default: .firmwareCache(channel: channel, cause: ErrorCause(code: "fleet_channel_failed", arguments: ["\(error)"]))
        }
    }
}

/// Which release a profile's firmware section means for one reader, judged from the
/// channel's listings and what the reader says about itself (GetVersion). A reader in its
/// loader (software type 1) reports the loader's version, which says nothing about the
/// application: it always needs the target (the update repairs it).
enum FirmwareTargeting {
    enum Resolution {
        /// Nothing to install: the reader runs the target (or nothing newer is offered).
        case satisfied(detail: String)
        /// Install this.
        case install(FirmwareListing, FirmwareCompatibility)
        /// Refused by the profile (downgrade) or not offered.
        case refused(FleetError)

        var listing: FirmwareListing? {
            if case .install(let listing, _) = self { return listing }
            return nil
        }
    }

    /// How `listing` relates to the reader. In the loader the running version means
    /// nothing: the listing is judged on hardware, revision, protocol and serials only (as
    /// if the reader ran the lowest version the listing applies to) and is an upgrade.
    static func compatibility(_ listing: FirmwareListing, info: ReaderInfo, inLoader: Bool) -> FirmwareCompatibility {
        var identity = DeviceIdentity(info)
        guard inLoader else { return listing.compatibility(with: identity) }
        guard let lowest = listing.metadata.appliesTo.map(\.min).min() else { return .invalid }
        identity.firmwareVersion = lowest
        switch listing.compatibility(with: identity) {
        case .invalid: return .invalid
        case .incompatible: return .incompatible
        default: return .upgrade
        }
    }

    static func resolve(_ policy: Profile.FirmwarePolicy, listings: [FirmwareListing], info: ReaderInfo,
                        inLoader: Bool, device: String = "") -> Resolution {
        let running = info.firmwareVersion
        switch policy.target {
        case .latest:
            for listing in listings {  // newest first
                let value = compatibility(listing, info: info, inLoader: inLoader)
                if value.mayApply(allowDowngrade: policy.allowDowngrade, allowSameVersion: policy.allowSameVersion) {
                    return .install(listing, value)
                }
            }
            return .satisfied(detail: "nothing newer than \(running) in channel \(policy.channel)")
        case .version(let version):
            let matching = listings.filter { $0.metadata.version == version }
            let fitting = matching.lazy.map { ($0, compatibility($0, info: info, inLoader: inLoader)) }
                .first { $0.1.mayApply(allowDowngrade: true, allowSameVersion: true) }
            guard let (listing, value) = fitting else {
                if running == version, !inLoader { return .satisfied(detail: "runs \(version)") }
                return .refused(.firmwareNotAvailable(device: device, channel: policy.channel, version: "\(version)"))
            }
            switch value {
            case .downgrade where !policy.allowDowngrade:
                return .refused(.downgradeNotAllowed(device: device, running: "\(running)", target: "\(version)"))
            case .sameVersion where !policy.allowSameVersion:
                return .satisfied(detail: "runs \(version)")
            default:
                return .install(listing, value)
            }
        }
    }
}
