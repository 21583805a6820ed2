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
            for listing in firmware.listings(targetedBy: policy) { _ = try await firmware.release(listing) }
        }
        return firmware
    }

    /// The listings `policy` may target, which a run fetches before any device starts: for a
    /// version, the listings of that version; for `latest`, those of the newest version.
    public func listings(targetedBy policy: Profile.FirmwarePolicy) -> [FirmwareListing] {
        switch policy.target {
        case .version(let version): listings.filter { $0.metadata.version == version }
        case .latest: listings.filter { $0.metadata.version == listings.first?.metadata.version }
        }
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

/// A profile's firmware section for one reader, in the fleet's terms: the choice itself is
/// ``FirmwareChoice/choose(_:listings:unit:allowDowngrade:allowSameVersion:)``, the one
/// every command asks (`firmware flash` too); this says what each of its answers means to a
/// provision, rollout or verification run.
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

    static func resolve(_ policy: Profile.FirmwarePolicy, listings: [FirmwareListing], info: ReaderInfo,
                        inLoader: Bool, device: String = "") -> Resolution {
        let running = info.firmwareVersion
        let wanted: FirmwareWanted
        switch policy.target {
        case .latest: wanted = .latest
        case .version(let version): wanted = .version(version)
        }
        let choice = FirmwareChoice.choose(wanted, listings: listings, unit: FirmwareUnit(info, inLoader: inLoader),
                                           allowDowngrade: policy.allowDowngrade, allowSameVersion: policy.allowSameVersion)
        switch choice {
        case .send(.listing(let listing), let compatibility):
            return .install(listing, compatibility)
        case .upToDate:
            return .satisfied(detail: "nothing newer than \(running) in channel \(policy.channel)")
        case .runsTarget(let version):
            return .satisfied(detail: "runs \(version)")
        case .downgradeRefused(let candidate):
            return .refused(.downgradeNotAllowed(device: device, running: "\(running)", target: "\(candidate.version)"))
        case .notListed, .incompatible, .send(.package, _):
            return .refused(.firmwareNotAvailable(device: device, channel: policy.channel, version: policy.target.description))
        }
    }
}
