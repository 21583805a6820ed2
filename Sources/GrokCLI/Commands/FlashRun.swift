import Foundation
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
    let bytes: Int
}

struct FlashProgressEvent: Encodable {
    let event = "flash_progress"
    let device: String
    let phase: String
    let done: Int
    let total: Int
    let canCancel: Bool

    enum CodingKeys: String, CodingKey {
        case event, device, phase, done, total
        case canCancel = "can_cancel"
    }
}

struct FlashDoneEvent: Encodable {
    let event = "flash_done"
    let device: String
    let name: String
    let from: String
    let to: String
    /// Seconds of audio the update took (verify and confirmation included).
    let seconds: Double
    /// Image bytes sent (those the device already held were not).
    let bytes: Int
    let encodedBytes: Int
    let encoding: String
    let resumedFrom: Int
    let alreadyInstalled: Bool

    enum CodingKeys: String, CodingKey {
        case event, device, name, from, to, seconds, bytes, encoding
        case encodedBytes = "encoded_bytes"
        case resumedFrom = "resumed_from"
        case alreadyInstalled = "already_installed"
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
}

struct FlashSummaryEvent: Encodable {
    let event = "flash_summary"
    let devices: Int
    let updated: Int
    let skipped: Int
    let failed: Int
}

// MARK: Work

/// How one device's flash ended.
enum FlashOutcome: Sendable {
    case done(name: String, report: FirmwareUpdateReport)
    case skipped(running: FirmwareVersion)
    case failed(any Error)
}

/// What worker threads tell the printing thread.
enum FlashEvent: Sendable {
    case started(row: Int, name: String, from: FirmwareVersion, to: FirmwareVersion, bytes: Int)
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

/// Loads packages one at a time (a download into the cache must not run twice at once),
/// each verified against the channel on every use.
final class PackageLoader: Sendable {
    private let channels: FirmwareChannels
    private let channel: String
    private let server: FirmwareServer?
    private let lock = Mutex(())

    init(channels: FirmwareChannels, channel: String, server: FirmwareServer?) {
        self.channels = channels
        self.channel = channel
        self.server = server
    }

    func load(_ name: String) throws -> FirmwarePackage {
        try lock.withLock { _ in
            let (channels, channel, server) = (self.channels, self.channel, self.server)
            return try Blocking.run { try await channels.load(name, channel: channel, from: server) }
        }
    }
}

/// `grokctl firmware flash`: every device at once (a thread each): connect, choose the
/// update, check, upload, verify, switch, confirm. Live bars on a terminal, plain lines
/// otherwise, events under `--json`. SIGINT cancels between blocks (the device keeps its
/// old image). Exit 0 only when every device ended on its target.
func runFirmwareFlash(_ command: FirmwareFlashCommand, _ context: CommandContext) throws -> ExitCode {
    let channels = try command.firmware.openChannels()
    if let server = command.firmware.server {
        let channel = command.firmware.channel
        _ = try Blocking.run { try await channels.reload(channel, from: server) }
    }
    let channel = command.firmware.channel
    let verified = try channels.cache.channel(channel)

    // What can be checked before any device: the named update, the version, the package.
    var fixedName: String?
    switch command.target {
    case .best: break
    case .name(let name): fixedName = try verified.entry(named: name).name
    case .version(let version):
        guard verified.metadata.updates.contains(where: { $0.version == version }) else {
            throw CLIError.versionNotListed(channel: channel, version: version.description)
        }
    case .package(let file):
        let bytes = try FirmwarePublisher.readInput(file, limit: 64 << 20)
        let package = try FirmwarePackage.parse(bytes, file: file)
        guard let entry = verified.metadata.updates.first(where: { $0.sha256 == package.sha256 }) else {
            throw CLIError.packageNotListed(file: file, channel: channel)
        }
        _ = try verified.bind(image: bytes, to: entry.name, file: file)
        // Put it in the cache (verified again there) so every device reads the same bytes.
        let partial = channels.cache.partialPath(for: entry)
        try FirmwarePublisher.write(bytes, to: partial)
        _ = try channels.cache.addImage(partialFile: partial, name: entry.name, in: verified)
        fixedName = entry.name
    }

    let targetName = fixedName
    let loader = PackageLoader(channels: channels, channel: channel, server: command.firmware.server)
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
            let outcome = flashOne(spec, row: row, target: target, fixedName: targetName, verified: verified,
                                   channels: channels, loader: loader, options: updateOptions, ports: ports,
                                   readerOptions: readerOptions, events: events, shouldCancel: stopRequested)
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
            case .started(let row, let name, let from, let to, let bytes):
                presenter.started(row: row, name: name, from: from, to: to, bytes: bytes)
            case .progress(let row, let progress):
                presenter.progress(row: row, progress)
            }
        }
        if stop.requested { cancel.set() }
    }
    return presenter.summary(outcomes.compactMap { $0 })
}

/// Set once SIGINT arrives; read by every device's `shouldCancel`.
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) || StopSignals.flagIsSet }
}

/// One device: connect, choose, load, update.
private func flashOne(
    _ spec: DeviceSpec, row: Int, target: FirmwareFlashCommand.Target, fixedName: String?, verified: VerifiedChannel,
    channels: FirmwareChannels, loader: PackageLoader, options: FirmwareUpdateOptions, ports: DevicePortContext,
    readerOptions: ReaderOptions, events: EventQueue<FlashEvent>, shouldCancel: @escaping @Sendable () -> Bool
) -> FlashOutcome {
    var session: ReaderSession?
    defer { session?.close() }
    do {
        let opened = ReaderSession(port: try DevicePorts.open(spec, context: ports), options: readerOptions)
        session = opened
        let info = try opened.connect()
        let judged = channels.cache.updates(in: verified, for: DeviceIdentity(info))
        let chosen: AvailableUpdate
        switch target {
        case .best:
            let allowed = judged.filter {
                $0.compatibility?.mayApply(allowDowngrade: options.allowDowngrade, allowSameVersion: options.allowSameVersion) == true
            }
            guard let best = allowed.max(by: { $0.entry.version < $1.entry.version }) else {
                return .skipped(running: info.firmwareVersion)
            }
            chosen = best
        case .version(let version):
            let candidates = judged.filter { $0.entry.version == version }
            chosen = candidates.first {
                $0.compatibility?.mayApply(allowDowngrade: options.allowDowngrade, allowSameVersion: options.allowSameVersion) == true
            } ?? candidates.first { $0.compatibility != .invalid && $0.compatibility != .incompatible } ?? candidates[0]
        case .name, .package:
            chosen = judged.first { $0.entry.name == fixedName }!
        }
        // Downgrade and same-version are the updater's to refuse (with its own errors);
        // the channel alone knows about targeting.
        if let compatibility = chosen.compatibility, compatibility == .invalid || compatibility == .incompatible {
            throw UpdateNotForDevice(device: spec.description, name: chosen.entry.name, compatibility: compatibility)
        }
        let package = try loader.load(chosen.entry.name)
        let image = FirmwareImage(package: package)
        events.post(.started(row: row, name: chosen.entry.name, from: info.firmwareVersion, to: image.descriptor.version,
                             bytes: image.bytes.count))
        let report = try FirmwareUpdater(session: opened, options: options).update(
            to: image, progress: { events.post(.progress(row: row, $0)) }, shouldCancel: shouldCancel)
        return .done(name: chosen.entry.name, report: report)
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
    private var lastPhase: [FirmwareUpdateProgress.Phase?]
    private var lastStep: [Int]

    init(devices: [String], context: CommandContext) {
        self.devices = devices
        console = context.console
        localizer = context.localizer
        let bars = !console.isJSON && !console.isQuiet && console.isTerminal(.standardError)
        board = bars ? ProgressBoard(labels: devices, phase: context.localizer.text(.phaseConnecting), localizer: context.localizer) : nil
        lastPhase = Array(repeating: nil, count: devices.count)
        lastStep = Array(repeating: -1, count: devices.count)
    }

    func started(row: Int, name: String, from: FirmwareVersion, to: FirmwareVersion, bytes: Int) {
        if console.isJSON {
            console.json(FlashStartedEvent(device: devices[row], name: name, from: from.description, to: to.description, bytes: bytes))
        } else if board == nil {
            console.say(.flashStarted, devices[row], name, from.description, to.description, String(bytes))
        }
    }

    func progress(row: Int, _ progress: FirmwareUpdateProgress) {
        let phaseChanged = lastPhase[row] != progress.phase
        lastPhase[row] = progress.phase
        if let board {
            board.update(row: row, phase: phaseName(progress.phase), done: progress.done, total: progress.total)
            return
        }
        // Plain lines and events: each phase, and the upload in steps (5 % in JSON, 25 % in text).
        let steps = console.isJSON ? 20 : 4
        let step = progress.total > 0 ? progress.done * steps / progress.total : 0
        guard phaseChanged || (progress.phase == .uploading && step != lastStep[row]) else { return }
        lastStep[row] = step
        if console.isJSON {
            console.json(FlashProgressEvent(device: devices[row], phase: progress.phase.rawValue, done: progress.done,
                                            total: progress.total, canCancel: progress.canCancel))
        } else {
            let percent = progress.total > 0 ? progress.done * 100 / progress.total : 0
            console.say(.flashProgressLine, devices[row], phaseName(progress.phase), String(percent),
                        String(progress.done), String(progress.total))
        }
    }

    func finished(row: Int, _ outcome: FlashOutcome) {
        let device = devices[row]
        switch outcome {
        case .done(let name, let report):
            let message = report.alreadyInstalled
                ? localizer.text(.flashAlreadyInstalled, device, report.to.description)
                : localizer.text(.flashDone, device, report.from.description, report.to.description,
                                 String(format: "%.1f", report.seconds), String(report.imageBytesSent))
            board?.finish(row: row, message: localizer.text(.progressDone))
            if console.isJSON {
                console.json(FlashDoneEvent(
                    device: device, name: name, from: report.from.description, to: report.to.description,
                    seconds: (report.seconds * 1000).rounded() / 1000, bytes: report.imageBytesSent,
                    encodedBytes: report.encodedBytesSent, encoding: "\(report.encoding)", resumedFrom: report.resumedFrom,
                    alreadyInstalled: report.alreadyInstalled))
            } else {
                console.print(message)
            }
        case .skipped(let running):
            board?.finish(row: row, message: localizer.text(.progressDone))
            if console.isJSON {
                console.json(FlashSkippedEvent(device: device, running: running.description))
            } else {
                console.print(localizer.text(.flashUpToDate, device, running.description))
            }
        case .failed(let error):
            board?.finish(row: row, message: localizer.text(.progressFailed))
            if console.isJSON {
                var result: Int?
                if let error = error as? FirmwareUpdateError { result = error.result.rawValue }
                if error is UpdateNotForDevice { result = FirmwareUpdateResult.incompatibleHardware.rawValue }
                console.json(FlashFailedEvent(device: device, code: Localizer.code(for: error),
                                              message: Localizer.english.message(for: error), result: result))
            } else {
                console.print(localizer.text(.flashFailed, device, localizer.message(for: error)))
            }
        }
    }

    func summary(_ outcomes: [FlashOutcome]) -> ExitCode {
        var updated = 0, skipped = 0, failed = 0
        for outcome in outcomes {
            switch outcome {
            case .done: updated += 1
            case .skipped: skipped += 1
            case .failed: failed += 1
            }
        }
        if console.isJSON {
            console.json(FlashSummaryEvent(devices: outcomes.count, updated: updated, skipped: skipped, failed: failed))
        } else {
            console.say(.flashSummary, String(updated), String(skipped), String(failed), String(outcomes.count))
        }
        return failed == 0 && outcomes.count == devices.count ? .success : .failure
    }

    private func phaseName(_ phase: FirmwareUpdateProgress.Phase) -> String {
        switch phase {
        case .checking: localizer.text(.phaseChecking)
        case .loader: localizer.text(.phaseLoader)
        case .uploading: localizer.text(.phaseUploading)
        case .verifying: localizer.text(.phaseVerifying)
        case .switching: localizer.text(.phaseSwitching)
        case .confirming: localizer.text(.phaseConfirming)
        }
    }
}

@available(*, unavailable) extension FlashPresenter: Sendable {}
