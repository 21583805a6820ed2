import GrokBasics
import Foundation
import GrokAudio
import GrokFleet
import GrokCrypto
import GrokFirmware
import GrokProtocol
import Synchronization
import UGrokIt

// MARK: Events (`--json`: one object per line)

struct FlashStartedEvent: Encodable {
    let event = "flash_started"
    let device: String
    let name: String
    let from: String
    let to: String
    /// Image bytes to send: the loader image (when the unit runs its application and the
    /// `.ugif` has one) and the reader image.
    let bytes: Int
}

struct FlashProgressEvent: Encodable {
    let event = "flash_progress"
    let device: String
    /// `loader` while the loader image goes, `reader` for the reader image.
    let phase: String
    let done: Int
    let total: Int
}

struct FlashDoneEvent: Encodable {
    let event = "flash_done"
    let device: String
    let name: String
    let from: String
    let to: String
    /// Seconds of audio the update took (both images and the reconnections).
    let seconds: Double
    /// Image bytes sent (the loader image when it went, and the reader image).
    let bytes: Int
    let chunks: Int
    /// Bytes per chunk.
    let chunkBytes: Int
    let resumedChunks: Int
    /// The vendor's result code (0, SUCCESS).
    let result: Int
    let resultName: String

    enum CodingKeys: String, CodingKey {
        case event, device, name, from, to, seconds, bytes, chunks, result
        case resumedChunks = "resumed_chunks"
        case chunkBytes = "chunk_bytes"
        case resultName = "result_name"
    }
}

struct FlashSkippedEvent: Encodable {
    let event = "flash_skipped"
    let device: String
    let running: String
    let reason = "up_to_date"
}

struct FlashFailedEvent: Encodable {
    let event = "flash_failed"
    let device: String
    let code: String
    let message: String
    /// The vendor's `UGI_FIRMWARE_UPDATE_*` result, when the updater gave one.
    let result: Int?
    let resultName: String?

    enum CodingKeys: String, CodingKey {
        case event, device, code, message, result
        case resultName = "result_name"
    }
}

struct FlashSummaryEvent: Encodable {
    let event = "flash_summary"
    let devices: Int
    let updated: Int
    let skipped: Int
    let failed: Int
    /// Devices whose update Ctrl-C (SIGINT, SIGTERM) stopped (vendor result CANCELLED).
    let cancelled: Int
    /// `done`, `failed` or `cancelled` (exit 0, 1, 130).
    let outcome: String
}

// MARK: Work

/// How one device's flash ended.
enum FlashOutcome: Sendable {
    case done(name: String, from: String, bytes: Int, report: FirmwareUpdateReport)
    case skipped(running: String)
    case failed(any Error)
}

/// What worker threads tell the printing thread.
enum FlashEvent: Sendable {
    case started(row: Int, name: String, from: String, to: String, bytes: Int, twoImages: Bool)
    case progress(row: Int, FirmwareUpdateProgress)
    case finished(row: Int, FlashOutcome)
    case allFinished
}

/// The chosen update is not for this device (the channel judges it INVALID or
/// INCOMPATIBLE: hardware, revision, applies-to, protocol or targeting).
struct UpdateNotForDevice: CodedError {
    let device: String
    let name: String
    let compatibility: FirmwareCompatibility
    var code: String { "flash_not_for_device" }
    var arguments: [String] { [device, name, compatibility.vendorName] }
    var description: String { Localizer.english.message(for: self) }
}

/// The updater's result was not SUCCESS: the vendor's code, and what the message needs.
struct FlashFailure: CodedError {
    let device: String
    let report: FirmwareUpdateReport
    /// The version the unit ran and the image's, the image's hardware and the unit's.
    let running: String
    let image: String
    let imageHardware: String
    let unitHardware: String
    let battery: Int?
    let options: FirmwareUpdateOptions

    var code: String {
        switch report.result {
        case .success: "flash_protocol_failure"
        case .crcMismatch: "flash_crc_mismatch"
        case .noFile: "flash_no_file"
        case .badFile: "flash_bad_file"
        case .incompatibleHardware: "flash_incompatible_hardware"
        case .incompatibleVersion: running == image ? "flash_same_version_not_allowed" : "flash_downgrade_not_allowed"
        case .protocolFailure: "flash_protocol_failure"
        case .cantReconnect: "flash_cant_reconnect"
        case .cancelled: "flash_update_cancelled"
        case .batteryTooLow: "flash_battery_too_low"
        }
    }

    var arguments: [String] {
        switch report.result {
        case .incompatibleHardware: [device, imageHardware, unitHardware]
        case .incompatibleVersion: running == image ? [device, running] : [device, running, image]
        case .cantReconnect: [device, String(format: "%.0f", options.reconnectTimeoutSeconds)]
        case .cancelled: [device]
        case .batteryTooLow: [device, String(battery ?? 0), String(options.minimumBatteryPercent)]
        default: [device, report.detail.isEmpty ? report.result.vendorName : report.detail]
        }
    }

    var description: String { Localizer.english.message(for: self) }
}

/// Where `firmware flash` takes its image from.
enum FlashSource: Sendable {
    /// The TUF channel, with its listings read once before any device.
    case channel(FirmwareChannel, [FirmwareListing])
    /// A local `.ugif` file the technician named (`--package FILE`).
    case file(name: String, UgifImage)
}

/// Loads verified releases one at a time (a download into the state directory must not
/// run twice at once); TUF checks each against the signed metadata.
final class ReleaseLoader: Sendable {
    private let channel: FirmwareChannel
    private let lock = Mutex(())

    init(channel: FirmwareChannel) { self.channel = channel }

    func load(_ path: String) throws -> FirmwareRelease {
        try lock.withLock { _ in
            let channel = self.channel
            return try Blocking.run { try await channel.target(named: path) }
        }
    }
}

/// `grokctl firmware flash`: every device at once (a thread each): connect, choose the
/// image (from the TUF channel, or the local `.ugif` given with `--package`), update with
/// the vendor's procedure (loader image, then reader image). Live bars on a terminal, plain
/// lines otherwise, events under `--json`. SIGINT cancels before the next packet (vendor
/// result CANCELLED). Exit 0 only when every device ended on its target.
func runFirmwareFlash(_ command: FirmwareFlashCommand, _ context: CommandContext) throws -> ExitCode {
    let source: FlashSource
    if case .package(let input) = command.target {
        if command.firmware.repositoryURL != nil {
            throw CLIError.conflictingOptions(FirmwareFlashCommand.package.spelling, FirmwareOptions.repository.spelling)
        }
        // Read as `firmware verify` reads it: once, at its size, at most a .ugif's limit.
        let name = input.name(context.localizer)
        let bytes = try input.readAll(limit: UgifImage.maxFileBytes, localizer: context.localizer)
        let shown = input.isStandardInput ? name : (name as NSString).lastPathComponent
        source = .file(name: shown, try parseUgif(bytes, input: input, name: name))
    } else {
        let channel = try command.firmware.openStation()
        let listings = try Blocking.run { try await channel.listings() }
        // What can be checked before any device: the named update, the version.
        switch command.target {
        case .name(let name):
            guard listings.contains(where: { $0.name == name || $0.path == name }) else {
                throw FirmwareError.updateNotListed(channel: channel.name, name: name)
            }
        case .version(let version):
            guard listings.contains(where: { $0.metadata.version == version }) else {
                throw CLIError.versionNotListed(channel: channel.name, version: version.description)
            }
        case .best, .package: break
        }
        source = .channel(channel, listings)
    }
    var loader: ReleaseLoader?
    if case .channel(let channel, _) = source { loader = ReleaseLoader(channel: channel) }
    let releases = loader
    var options = FirmwareUpdateOptions()
    options.allowDowngrade = command.allowDowngrade
    options.allowSameVersion = command.allowSameVersion
    options.minimumBatteryPercent = command.minimumBattery
    let updateOptions = options
    let target = command.target
    let ports = FirmwareDevices.portContext(context)
    let readerOptions = FirmwareDevices.readerOptions(context)
    let events = EventQueue<FlashEvent>()
    let stop = StopSignals.install()
    defer { stop.restore() }
    let cancel = CancelFlag()
    let stopRequested: @Sendable () -> Bool = { cancel.isSet }
    let rows = Dictionary(uniqueKeysWithValues: command.devices.enumerated().map { ($1, $0) })

    let worker = Thread {
        _ = DeviceThreads.each(command.devices) { spec in
            let row = rows[spec]!
            let outcome = flashOne(spec, row: row, target: target, source: source, releases: releases, options: updateOptions,
                                   ports: ports, readerOptions: readerOptions, events: events, shouldCancel: stopRequested)
            events.post(.finished(row: row, outcome))
            return true
        }
        events.post(.allFinished)
    }
    worker.stackSize = 1 << 20
    worker.start()

    let presenter = FlashPresenter(devices: command.devices.map(\.description), context: context)
    var outcomes = [FlashOutcome?](repeating: nil, count: command.devices.count)
    var finished = false
    while !finished {
        for event in events.take() {
            if stop.requested { cancel.set() }
            switch event {
            case .allFinished: finished = true
            case .finished(let row, let outcome):
                outcomes[row] = outcome
                presenter.finished(row: row, outcome)
            case .started(let row, let name, let from, let to, let bytes, let twoImages):
                presenter.started(row: row, name: name, from: from, to: to, bytes: bytes, twoImages: twoImages)
            case .progress(let row, let progress):
                presenter.progress(row: row, progress)
            }
        }
        if stop.requested { cancel.set() }
    }
    if stop.requested { cancel.set() }
    return presenter.summary(outcomes.compactMap { $0 }, stopped: cancel.isSet)
}

/// How `firmware flash` ends when Ctrl-C stopped it: 130, as the fleet commands.
enum FlashExit {
    static let cancelled = ExitCode(rawValue: 130)
}

/// Set once SIGINT arrives; read by every device's `shouldCancel`.
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) || StopSignals.flagIsSet }
}

/// A reader's firmware version as the vendor writes it (MAJOR.MINOR.BUILD).
private func versionText(_ version: VendorReaderVersion) -> String {
    UgifVersion(major: version.firmwareMajor, minor: version.firmwareMinor, build: version.firmwareBuild).description
}

/// One device: connect, choose, load, update.
private func flashOne(
    _ spec: DeviceSpec, row: Int, target: FirmwareFlashCommand.Target, source: FlashSource, releases: ReleaseLoader?,
    options: FirmwareUpdateOptions, ports: DevicePortContext, readerOptions: ReaderOptions,
    events: EventQueue<FlashEvent>, shouldCancel: @escaping @Sendable () -> Bool
) -> FlashOutcome {
    var session: ReaderSession?
    defer { session?.close() }
    do {
        let opened = try ReaderSession(port: try DevicePorts.open(spec, context: ports), options: readerOptions)
        session = opened
        try opened.connect()
        guard let version = opened.version else { throw ReaderError.cannotGetInfo(port: opened.port.name) }
        let running = versionText(version)
        let name: String
        let image: UgifImage
        switch source {
        case .file(let file, let ugif):
            name = file
            image = ugif
        case .channel(_, let listings):
            let device = DeviceIdentity(version)
            // A unit found in its loader runs no application: any image for it repairs it.
            let inLoader = version.software == .loader
            let downgrade = options.allowDowngrade || inLoader
            let same = options.allowSameVersion || inLoader
            let chosen: FirmwareListing
            switch target {
            case .best:
                guard let best = listings.first(where: {
                    $0.compatibility(with: device).mayApply(allowDowngrade: downgrade, allowSameVersion: same)
                }) else {
                    return .skipped(running: running)
                }
                chosen = best
            case .version(let wanted):
                let candidates = listings.filter { $0.metadata.version == wanted }
                chosen = candidates.first {
                    $0.compatibility(with: device).mayApply(allowDowngrade: downgrade, allowSameVersion: same)
                } ?? candidates.first {
                    let judged = $0.compatibility(with: device)
                    return judged != .invalid && judged != .incompatible
                } ?? candidates[0]
            case .name(let wanted):
                chosen = listings.first { $0.name == wanted || $0.path == wanted }!
            case .package:
                preconditionFailure("a package file is a file source")
            }
            // Downgrade and same version are the updater's to refuse (the vendor's
            // INCOMPATIBLE_VERSION); the channel alone knows about revisions and targeting.
            let judged = chosen.compatibility(with: device)
            if judged == .invalid || judged == .incompatible {
                throw UpdateNotForDevice(device: spec.description, name: chosen.name, compatibility: judged)
            }
            name = chosen.name
            image = try releases!.load(chosen.path).ugif
        }
        var unitOptions = options
        if opened.info?.hasBattery == true, let battery = try? opened.batteryInfo() {
            unitOptions.batteryPercent = Int(battery.percentRemaining)
        }
        let twoImages = image.loader != nil && version.software != .loader
        let bytes = image.reader.bytes.count + (twoImages ? image.loader?.bytes.count ?? 0 : 0)
        events.post(.started(row: row, name: name, from: running, to: image.version.description, bytes: bytes,
                             twoImages: twoImages))
        let report = FirmwareUpdater(session: opened, options: unitOptions).update(
            to: image, progress: { events.post(.progress(row: row, $0)) }, shouldCancel: shouldCancel)
        guard report.result == .success else {
            throw FlashFailure(device: spec.description, report: report, running: running, image: image.version.description,
                               imageHardware: image.hardwareTypeName, unitHardware: version.hardwareTypeName,
                               battery: unitOptions.batteryPercent, options: unitOptions)
        }
        return .done(name: name, from: running, bytes: bytes, report: report)
    } catch {
        return .failed(error)
    }
}

/// Prints a flash as it goes: bars on a terminal, lines otherwise, events with `--json`.
/// Runs on the command's thread.
final class FlashPresenter {
    private let devices: [String]
    private let console: Console
    private let localizer: Localizer
    private let board: ProgressBoard?
    private var twoImages: [Bool]
    private var lastPhase: [String?]
    private var lastStep: [Int]

    init(devices: [String], context: CommandContext) {
        self.devices = devices
        console = context.console
        localizer = context.localizer
        let bars = !console.isJSON && !console.isQuiet && console.isTerminal(.standardError)
        board = bars ? ProgressBoard(labels: devices, phase: context.localizer.text(.phaseConnecting), localizer: context.localizer) : nil
        twoImages = Array(repeating: false, count: devices.count)
        lastPhase = Array(repeating: nil, count: devices.count)
        lastStep = Array(repeating: -1, count: devices.count)
    }

    func started(row: Int, name: String, from: String, to: String, bytes: Int, twoImages: Bool) {
        self.twoImages[row] = twoImages
        if console.isJSON {
            console.json(FlashStartedEvent(device: devices[row], name: name, from: from, to: to, bytes: bytes))
        } else if board == nil {
            console.say(.flashStarted, devices[row], name, from, to, String(bytes))
        }
    }

    /// `loader` while the loader image goes (the first of two), else `reader`.
    private func phase(row: Int, _ progress: FirmwareUpdateProgress) -> String {
        twoImages[row] && !progress.secondImage ? "loader" : "reader"
    }

    func progress(row: Int, _ progress: FirmwareUpdateProgress) {
        let phase = phase(row: row, progress)
        let phaseChanged = lastPhase[row] != phase
        lastPhase[row] = phase
        let phaseText = localizer.text(phase == "loader" ? .phaseLoader : .phaseUploading)
        if let board {
            board.update(row: row, phase: phaseText, done: progress.done, total: progress.total)
            return
        }
        // Plain lines and events: each image, and its upload in steps (5 % in JSON, 25 % in text).
        let steps = console.isJSON ? 20 : 4
        let step = progress.total > 0 ? progress.done * steps / progress.total : 0
        if phaseChanged { lastStep[row] = -1 }
        guard step != lastStep[row] else { return }
        lastStep[row] = step
        if console.isJSON {
            console.json(FlashProgressEvent(device: devices[row], phase: phase, done: progress.done, total: progress.total))
        } else {
            let percent = progress.total > 0 ? progress.done * 100 / progress.total : 0
            console.say(.flashProgressLine, devices[row], phaseText, String(percent), String(progress.done), String(progress.total))
        }
    }

    func finished(row: Int, _ outcome: FlashOutcome) {
        let device = devices[row]
        switch outcome {
        case .done(let name, let from, let bytes, let report):
            let to = report.finalVersion.map(versionOf) ?? "?"
            board?.finish(row: row, message: localizer.text(.progressDone))
            if console.isJSON {
                console.json(FlashDoneEvent(
                    device: device, name: name, from: from, to: to, seconds: (report.audioSeconds * 1000).rounded() / 1000,
                    bytes: bytes, chunks: report.chunks, chunkBytes: report.chunkBytes, resumedChunks: report.resumedChunks,
                    result: report.result.rawValue, resultName: report.result.vendorName))
            } else {
                console.print(localizer.text(.flashDone, device, from, to, String(format: "%.1f", report.audioSeconds),
                                             String(bytes)))
            }
        case .skipped(let running):
            board?.finish(row: row, message: localizer.text(.progressDone))
            if console.isJSON {
                console.json(FlashSkippedEvent(device: device, running: running))
            } else {
                console.print(localizer.text(.flashUpToDate, device, running))
            }
        case .failed(let error):
            board?.finish(row: row, message: localizer.text(Self.wasCancelled(error) ? .progressCancelled : .progressFailed))
            if console.isJSON {
                var result: FirmwareUpdateResult?
                if let error = error as? FlashFailure { result = error.report.result }
                if error is UpdateNotForDevice { result = .incompatibleHardware }
                console.json(FlashFailedEvent(device: device, code: Localizer.code(for: error),
                                              message: Localizer.english.message(for: error), result: result?.rawValue,
                                              resultName: result?.vendorName))
            } else {
                console.print(localizer.text(.flashFailed, device, localizer.message(for: error)))
            }
        }
    }

    private func versionOf(_ version: VendorReaderVersion) -> String {
        UgifVersion(major: version.firmwareMajor, minor: version.firmwareMinor, build: version.firmwareBuild).description
    }

    /// Whether `error` is an update the vendor's procedure ended CANCELLED (Ctrl-C).
    static func wasCancelled(_ error: any Error) -> Bool {
        (error as? FlashFailure)?.report.result == .cancelled
    }

    /// The summary line (or event) and the exit code: 130 when Ctrl-C stopped the run
    /// (`stopped`) and something was left undone, else 0 only when every device ended on its target.
    func summary(_ outcomes: [FlashOutcome], stopped: Bool = false) -> ExitCode {
        var updated = 0, skipped = 0, failed = 0, cancelled = 0
        for outcome in outcomes {
            switch outcome {
            case .done: updated += 1
            case .skipped: skipped += 1
            case .failed(let error): if Self.wasCancelled(error) { cancelled += 1 } else { failed += 1 }
            }
        }
        let interrupted = cancelled > 0 || (stopped && updated + skipped < devices.count)
        // Ctrl-C echoes `^C` on the terminal's current line, below the bars: cleared.
        if board != nil, stopped { FileDescriptorSink.standardError.write("\r\u{1B}[2K") }
        if console.isJSON {
            console.json(FlashSummaryEvent(devices: outcomes.count, updated: updated, skipped: skipped, failed: failed,
                                           cancelled: cancelled,
                                           outcome: interrupted ? "cancelled" : failed == 0 ? "done" : "failed"))
        } else if interrupted {
            console.say(.flashCancelledSummary, String(updated), String(skipped), String(failed), String(cancelled),
                        String(outcomes.count))
        } else {
            console.say(.flashSummary, String(updated), String(skipped), String(failed), String(outcomes.count))
        }
        if interrupted { return FlashExit.cancelled }
        return failed == 0 && outcomes.count == devices.count ? .success : .failure
    }
}

@available(*, unavailable) extension FlashPresenter: Sendable {}
