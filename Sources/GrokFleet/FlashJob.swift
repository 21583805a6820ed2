import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokProtocol
import UGrokIt

/// Updates the firmware of any number of Grokkers at once (`grokctl firmware flash`): per
/// device, connect, choose the image (``FirmwareChoice``, the choice a fleet run makes
/// too), load it (from the channel, verified, downloaded once; or the image given), update
/// it with the vendor's procedure (``FirmwareUpdater``: the loader image when the unit runs
/// its application, then the reader image, each followed by the reset and reconnection, the
/// last one checked to run the new version), and report. Each device has a thread of its
/// own (the fleet's fan-out); what happens is told as ``FlashEvent``s, and the run ends in
/// a ``FlashReport``. The job takes no port lock of its own: each device's
/// ``FleetDevice/openPort`` opens its port as the caller wants it (the command line's takes
/// the port's lock, as every device command does).
public struct FlashJob: Sendable {
    /// Where the image comes from.
    public enum Source: Sendable {
        /// A channel's listings (read and checked before any device, ``prepare(_:wanted:)``)
        /// and what is wanted of them.
        case channel(FleetFirmware, FirmwareWanted)
        /// An image from a file, shown as `name` (made by ``preparePackage(_:file:shownAs:fileName:channel:allowUnlisted:)``,
        /// which refuses what it cannot vouch for); `listedAs`: the channel's target it is,
        /// `nil` when none vouches for it (flashed on the technician's word, `--allow-unlisted`).
        case package(name: String, UgifImage, listedAs: String? = nil)
    }

    public let source: Source
    /// The updater's options: allowing a downgrade or the same version, the lowest battery.
    public var options: FirmwareUpdateOptions
    public var readerOptions: ReaderOptions
    /// The station's remembered link settings: each unit is updated at its stored setting,
    /// AutoConfig choosing one first where none is known (``LinkSetup``). `nil`: nothing remembered.
    public var linkSettings: LinkSettingFile? = nil
    /// Where each unit's reader-image upload is noted, so that a re-run after a stop resumes
    /// it at the unit's last 4 KiB instead of its first byte (``UploadJournalFile``); `nil`:
    /// every upload starts at its first byte.
    public var journal: (any UploadJournal)?

    public init(source: Source, options: FirmwareUpdateOptions = .init(), readerOptions: ReaderOptions = .init()) {
        self.source = source
        self.options = options
        self.readerOptions = readerOptions
    }

    /// Reads `channel`'s listings and checks what can be known before any device: that the
    /// channel lists the name or the version wanted. Errors of the channel are thrown as they
    /// come (TUF, firmware).
    /// - Throws: ``FirmwareError/updateNotListed(channel:name:)`` for a name it does not list,
    ///   ``FirmwareVersionNotListed`` for a version.
    public static func prepare(_ channel: FirmwareChannel, wanted: FirmwareWanted) async throws -> Source {
        let listings = try await channel.listings()
        let firmware = FleetFirmware(channel: channel.name, listings: listings) { listing in
            try await channel.target(named: listing.path)
        }
        if let missing = notListed(wanted, channel: channel.name, in: listings) { throw missing }
        return .channel(firmware, wanted)
    }

    /// Reads a local image for `--package`, before any device is opened: parsed and checked
    /// as far as the format allows (``FirmwareVerification``); with `channel`, found by its
    /// SHA-256 (a copy of a listed image that differs from it is refused as damaged). An image
    /// no trusted channel lists is taken only with `allowUnlisted`: a `.ugif` carries no
    /// checksum, so nothing else says it is intact.
    /// - Throws: the verification's errors; ``FlashPackageUnlisted`` for an image nothing
    ///   vouches for without `allowUnlisted`.
    public static func preparePackage(_ bytes: [UInt8], file: String, shownAs: String, fileName: String?,
                                      channel: FirmwareChannel?, allowUnlisted: Bool) async throws -> Source {
        let verified = try await FirmwareVerification.verify(bytes, file: file, shownAs: shownAs, fileName: fileName, channel: channel)
        if verified.listedAs == nil, !allowUnlisted {
            throw FlashPackageUnlisted(file: shownAs, channel: verified.channel)
        }
        let name = fileName.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? shownAs
        return .package(name: name, verified.image, listedAs: verified.listedAs)
    }

    /// Why `listings` cannot answer `wanted` whatever the unit: no listing of that name or version.
    static func notListed(_ wanted: FirmwareWanted, channel: String, in listings: [FirmwareListing]) -> (any CodedError)? {
        switch wanted {
        case .named(let name):
            listings.contains { $0.name == name || $0.path == name } ? nil : FirmwareError.updateNotListed(channel: channel, name: name)
        case .version(let version):
            listings.contains { $0.metadata.version == version } ? nil : FirmwareVersionNotListed(channel: channel, version: "\(version)")
        case .latest, .package:
            nil
        }
    }

    /// The choice for `unit`: ``FirmwareChoice/choose(_:listings:unit:allowDowngrade:allowSameVersion:)``
    /// with this job's target and flags.
    public func choose(for unit: FirmwareUnit) -> FirmwareChoice {
        switch source {
        case .channel(let firmware, let wanted):
            FirmwareChoice.choose(wanted, listings: firmware.listings, unit: unit, allowDowngrade: options.allowDowngrade,
                                  allowSameVersion: options.allowSameVersion)
        case .package(_, let image, _):
            FirmwareChoice.choose(.package(image), listings: [], unit: unit, allowDowngrade: options.allowDowngrade,
                                  allowSameVersion: options.allowSameVersion)
        }
    }

    /// Flashes every device on threads of their own (the sessions block on audio), without
    /// holding a thread of the cooperative pool (a download from the channel needs one); see
    /// ``runBlocking(_:shouldCancel:events:)``.
    public func run(_ devices: [FleetDevice], shouldCancel: @escaping @Sendable () -> Bool = { false },
                    events: @escaping @Sendable (FlashEvent) -> Void = { _ in }) async -> FlashReport {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: runBlocking(devices, shouldCancel: shouldCancel, events: events))
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Flashes every device (blocking the calling thread, never one of the cooperative pool),
    /// each on a thread of its own.
    /// `shouldCancel` is asked before a device connects and before every packet of an
    /// update (then the update ends CANCELLED, and a re-run resumes it); `events` is called
    /// from the devices' threads.
    public func runBlocking(_ devices: [FleetDevice], shouldCancel: @escaping @Sendable () -> Bool = { false },
                            events: @escaping @Sendable (FlashEvent) -> Void = { _ in }) -> FlashReport {
        let indexed = Array(devices.enumerated())
        let outcomes = FleetRunner.each(indexed, concurrency: nil) { index, device in
            let outcome = flash(device, index: index, shouldCancel: shouldCancel, events: events)
            events(.finished(device: index, outcome))
            return outcome
        }
        return FlashReport(outcomes: outcomes)
    }

    /// One device: connect, choose, load, update.
    func flash(_ device: FleetDevice, index: Int, shouldCancel: @escaping @Sendable () -> Bool,
               events: @Sendable (FlashEvent) -> Void) -> FlashOutcome {
        if shouldCancel() { return .failed(FlashFailure.cancelledBeforeStart(device: device.name)) }
        var session: ReaderSession?
        defer { session?.close() }
        do {
            let opened = try ReaderSession(port: try device.openPort(), options: readerOptions)
            session = opened
            try LinkSetup.connect(opened, cardModel: device.cardModel, remembering: linkSettings)
            guard let version = opened.version else { throw ReaderError.cannotGetInfo(port: opened.port.name) }
            let unit = FirmwareUnit(version)
            let running = UgifVersion(running: version).description
            let name: String
            let image: UgifImage
            switch choose(for: unit) {
            case .send(.listing(let listing), _):
                guard case .channel(let firmware, _) = source else { preconditionFailure("a listing is chosen from a channel only") }
                name = listing.name
                image = try firmware.releaseBlocking(listing).ugif
            case .send(.package(let file), _):
                guard case .package(let shown, _, _) = source else { preconditionFailure("a package is chosen from a file only") }
                name = shown
                image = file
            case .upToDate:
                return .skipped(running: running, reason: .upToDate)
            case .runsTarget:
                // The version asked for (a file's, or one named) is what it runs: nothing to
                // do, as when the channel has nothing newer (`--allow-same-version` sends it).
                return .skipped(running: running, reason: .runsTarget)
            case .downgradeRefused(let candidate):
                throw FlashFailure.refused(device: device.name, result: .incompatibleVersion, running: running,
                                           image: "\(candidate.version)", unit: version, options: options)
            case .incompatible(.listing(let listing), let compatibility):
                throw UpdateNotForDevice(device: device.name, name: listing.name, compatibility: compatibility)
            case .incompatible(.package(let file), _):
                throw FlashFailure.refused(device: device.name, result: .incompatibleHardware, running: running,
                                           image: file.version.description, imageHardware: file.hardwareTypeName, unit: version,
                                           options: options)
            case .notListed:
                // Checked before any device (prepare); a channel source only.
                guard case .channel(let firmware, let wanted) = source,
                      let missing = Self.notListed(wanted, channel: firmware.channel, in: firmware.listings) else {
                    preconditionFailure("only a name or version a channel does not list is not listed")
                }
                throw missing
            }
            var unitOptions = options
            // The choice was made: the updater sends what it was given (its own check agrees).
            unitOptions.allowDowngrade = true
            unitOptions.allowSameVersion = true
            if opened.info?.hasBattery == true, let battery = try? opened.batteryInfo() {
                unitOptions.batteryPercent = Int(battery.percentRemaining)
            }
            let twoImages = image.loader != nil && !unit.inLoader
            let bytes = image.reader.bytes.count + (twoImages ? image.loader?.bytes.count ?? 0 : 0)
            events(.started(device: index, name: name, from: running, to: image.version.description, bytes: bytes))
            let report = FirmwareUpdater(session: opened, options: unitOptions, journal: journal).update(
                to: image,
                progress: { progress in
                    let phase: FlashPhase = twoImages && !progress.secondImage ? .loader : .reader
                    events(.progress(device: index, phase: phase, done: progress.done, total: progress.total))
                },
                shouldCancel: shouldCancel)
            if report.result == .protocolFailure, let back = report.finalVersion, back.software == .application,
               UgifVersion(running: back) != image.version {
                // The unit took the image and runs what it holds, which is not the version the
                // file says: the same file would do the same again.
                throw FlashWrongVersion(device: device.name, running: UgifVersion(running: back).description,
                                        image: image.version.description)
            }
            guard report.result == .success else {
                throw FlashFailure(device: device.name, result: report.result, detail: report.detail, running: running,
                                   image: image.version.description, imageHardware: image.hardwareTypeName,
                                   unitHardware: version.hardwareTypeName, battery: unitOptions.batteryPercent, options: unitOptions)
            }
            let now = report.finalVersion.map {
                UgifVersion(running: $0).description
            }
            return .done(name: name, from: running, to: now ?? "?", bytes: bytes, report: report)
        } catch {
            return .failed(error)
        }
    }
}

/// Which image a flash progress is about: the loader image goes first when the unit runs its
/// application and the `.ugif` has one; then the reader image.
public enum FlashPhase: String, Sendable, Hashable {
    case loader, reader
}

/// What a flash tells as it goes; `device` is the index in the devices given.
public enum FlashEvent: Sendable {
    /// The update of a device begins: the image's name, the version it ran and the image's,
    /// the bytes to send (the loader image when it goes, and the reader image).
    case started(device: Int, name: String, from: String, to: String, bytes: Int)
    /// Bytes acknowledged of the bytes to send, after every chunk.
    case progress(device: Int, phase: FlashPhase, done: Int, total: Int)
    /// A device's flash ended.
    case finished(device: Int, FlashOutcome)
}

/// How one device's flash ended.
public enum FlashOutcome: Sendable {
    /// Updated: the image's name, the version it ran and runs now, the bytes sent, the updater's report.
    case done(name: String, from: String, to: String, bytes: Int, report: FirmwareUpdateReport)
    /// Already up to date, nothing sent: it runs `running`, and `reason` says why that is enough.
    case skipped(running: String, reason: FlashSkipReason)
    case failed(any Error)

    /// `flash_done`, `flash_up_to_date`, or the failure's code.
    public var code: String {
        switch self {
        case .done: "flash_done"
        case .skipped: "flash_up_to_date"
        case .failed(let error): (error as? any CodedError)?.code ?? "flash_failed"
        }
    }

    /// The vendor's `UGI_FIRMWARE_UPDATE_*` result of a failure, when there is one.
    public var vendorResult: FirmwareUpdateResult? {
        guard case .failed(let error) = self else { return nil }
        if let error = error as? FlashFailure { return error.result }
        if error is UpdateNotForDevice { return .incompatibleHardware }
        return nil
    }

    /// Whether the update was stopped by a cancellation (vendor result CANCELLED).
    public var wasCancelled: Bool { vendorResult == .cancelled }
}

/// Why a unit is already up to date (its `--json` code).
public enum FlashSkipReason: String, Sendable, Hashable {
    /// The channel has nothing newer the unit may take (no target given).
    case upToDate = "up_to_date"
    /// The unit runs the version asked for (a file's, a version or a name given), and the
    /// same version was not asked for again.
    case runsTarget = "runs_target"
}

/// How a flash ended, device by device in the order given.
public struct FlashReport: Sendable {
    public let outcomes: [FlashOutcome]

    /// How the whole flash ended.
    public enum Outcome: String, Sendable {
        /// Every device ended on its target (updated or already there).
        case done
        /// At least one device failed.
        case failed
        /// Stopped by a cancellation with work left undone.
        case cancelled
    }

    public var updated: Int { outcomes.count { if case .done = $0 { true } else { false } } }
    public var skipped: Int { outcomes.count { if case .skipped = $0 { true } else { false } } }
    public var cancelled: Int { outcomes.count(where: \.wasCancelled) }
    public var failed: Int { outcomes.count { if case .failed = $0 { !$0.wasCancelled } else { false } } }

    /// `stopped`: a cancellation was asked for (some devices may have ended anyway).
    public func outcome(stopped: Bool) -> Outcome {
        if cancelled > 0 || (stopped && updated + skipped < outcomes.count) { return .cancelled }
        return failed == 0 ? .done : .failed
    }
}

/// The chosen update is not for this device (the channel judges it INVALID or
/// INCOMPATIBLE: hardware, revision, applies-to, protocol or targeting).
public struct UpdateNotForDevice: CodedError {
    public let device: String
    public let name: String
    public let compatibility: FirmwareCompatibility

    public init(device: String, name: String, compatibility: FirmwareCompatibility) {
        self.device = device
        self.name = name
        self.compatibility = compatibility
    }

    public var code: String { "flash_not_for_device" }
    public var arguments: [String] { [device, name, compatibility.vendorName] }
    public var description: String { englishMessage }
}

/// A local image (`--package`) that no trusted channel lists, given without `--allow-unlisted`:
/// refused before any device is opened. `channel`: the channel asked (`nil`: none was).
public struct FlashPackageUnlisted: CodedError {
    public let file: String
    public let channel: String?

    public init(file: String, channel: String?) {
        self.file = file
        self.channel = channel
    }

    public var code: String { channel == nil ? "flash_package_not_vouched" : "flash_package_not_listed" }
    public var arguments: [String] { channel.map { [file, $0] } ?? [file] }
    public var description: String { englishMessage }
}

/// After an update the unit runs another version than the image's header says: the image's
/// content is not what its header claims (a damaged or mislabelled file). Running the same
/// command again would write the same file.
public struct FlashWrongVersion: CodedError {
    public let device: String
    /// The version the unit reports now, and the image's header's.
    public let running: String
    public let image: String

    public init(device: String, running: String, image: String) {
        self.device = device
        self.running = running
        self.image = image
    }

    public var code: String { "flash_unit_runs_other_version" }
    public var arguments: [String] { [device, running, image] }
    public var description: String { englishMessage }
}

/// The channel lists no firmware of the version asked for (found before any device).
public struct FirmwareVersionNotListed: CodedError {
    public let channel: String
    public let version: String

    public init(channel: String, version: String) {
        self.channel = channel
        self.version = version
    }

    public var code: String { "firmware_version_not_listed" }
    public var arguments: [String] { [channel, version] }
    public var description: String { englishMessage }
}

/// A flash that did not succeed, by the vendor's update result: refused before anything was
/// sent (the choice, or the updater's own checks), or ended by the updater.
public struct FlashFailure: CodedError {
    public let device: String
    public let result: FirmwareUpdateResult
    /// The updater's detail (English, for logs), empty when none.
    public let detail: String
    /// The version the unit ran and the image's, the image's hardware and the unit's.
    public let running: String
    public let image: String
    public let imageHardware: String
    public let unitHardware: String
    public let battery: Int?
    public let options: FirmwareUpdateOptions

    public init(device: String, result: FirmwareUpdateResult, detail: String = "", running: String, image: String,
                imageHardware: String, unitHardware: String, battery: Int?, options: FirmwareUpdateOptions) {
        self.device = device
        self.result = result
        self.detail = detail
        self.running = running
        self.image = image
        self.imageHardware = imageHardware
        self.unitHardware = unitHardware
        self.battery = battery
        self.options = options
    }

    /// Refused by the choice before anything was sent, with the result the vendor's
    /// procedure gives for it.
    static func refused(device: String, result: FirmwareUpdateResult, running: String, image: String,
                        imageHardware: String? = nil, unit: VendorReaderVersion, options: FirmwareUpdateOptions) -> FlashFailure {
        FlashFailure(device: device, result: result, running: running, image: image,
                     imageHardware: imageHardware ?? unit.hardwareTypeName, unitHardware: unit.hardwareTypeName, battery: nil,
                     options: options)
    }

    /// Cancelled before the device was reached.
    static func cancelledBeforeStart(device: String) -> FlashFailure {
        FlashFailure(device: device, result: .cancelled, running: "", image: "", imageHardware: "", unitHardware: "", battery: nil,
                     options: FirmwareUpdateOptions())
    }

    public var code: String {
        switch result {
        case .success: "flash_protocol_failure"
        case .crcMismatch: "flash_crc_mismatch"
        case .noFile: "flash_no_file"
        case .badFile: "flash_bad_file"
        case .incompatibleHardware: "flash_incompatible_hardware"
        case .incompatibleVersion: "flash_downgrade_not_allowed"
        case .protocolFailure: "flash_protocol_failure"
        case .cantReconnect: "flash_cant_reconnect"
        case .cancelled: "flash_update_cancelled"
        case .batteryTooLow: "flash_battery_too_low"
        }
    }

    public var arguments: [String] {
        switch result {
        case .incompatibleHardware: [device, imageHardware, unitHardware]
        case .incompatibleVersion: [device, running, image]
        case .cantReconnect: [device, String(format: "%.0f", options.reconnectTimeoutSeconds)]
        case .cancelled: [device]
        case .batteryTooLow: [device, String(battery ?? 0), String(options.minimumBatteryPercent)]
        default: [device, detail.isEmpty ? result.vendorName : detail]
        }
    }

    public var description: String { englishMessage }
}
