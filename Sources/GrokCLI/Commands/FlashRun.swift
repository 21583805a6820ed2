import GrokBasics
import Foundation
import GrokCommandLine
import GrokFirmware
import GrokFleet
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
    /// Bytes of the reader image not sent again: an earlier, stopped upload had written them.
    let resumedFromByte: Int
    /// The vendor's result code (0, SUCCESS).
    let result: Int
    let resultName: String

    enum CodingKeys: String, CodingKey {
        case event, device, name, from, to, seconds, bytes, chunks, result
        case resumedChunks = "resumed_chunks"
        case resumedFromByte = "resumed_from_byte"
        case chunkBytes = "chunk_bytes"
        case resultName = "result_name"
    }
}

struct FlashSkippedEvent: Encodable {
    let event = "flash_skipped"
    let device: String
    let running: String
    /// `up_to_date` (the channel has nothing newer) or `runs_target` (it runs the version asked for).
    let reason: String
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
    /// Devices whose update Ctrl-C (SIGINT, SIGQUIT, SIGTERM) stopped (vendor result CANCELLED).
    let cancelled: Int
    /// `done`, `failed` or `cancelled` (exit 0, 1, 130).
    let outcome: String
}

// MARK: Work

/// What the job's thread tells the printing thread.
enum FlashFeed: Sendable {
    case event(FlashEvent)
    case finished(FlashReport)
}

/// `grokctl firmware flash`: the flash job (GrokFleet's ``FlashJob``) over every device
/// given, with its image from the TUF channel or the local `.ugif` given with `--package`.
/// Live bars on a terminal, plain lines otherwise, events under `--json`. SIGINT cancels
/// before the next packet (vendor result CANCELLED). Exit 0 only when every device ended on
/// its target, 130 when Ctrl-C stopped it.
func runFirmwareFlash(_ command: FirmwareFlashCommand, _ context: CommandContext) throws -> ExitCode {
    // The channel's listings, read once and checked before any device.
    func channel(_ wanted: FirmwareWanted) throws -> FlashJob.Source {
        let channel = try command.firmware.openStation()
        return try Blocking.run { try await FlashJob.prepare(channel, wanted: wanted) }
    }
    let source: FlashJob.Source
    switch command.target {
    case .package(let input):
        // Read as `firmware verify` reads it: once, at its size, at most a .ugif's limit; checked
        // (and, with --repository, found in the channel by its SHA-256) before any device.
        let name = input.name(context.localizer)
        let bytes = try input.readAll(limit: UgifImage.maxFileBytes, localizer: context.localizer)
        let station = try command.firmware.openStationIfGiven()
        source = try Blocking.run {
            try await FlashJob.preparePackage(bytes, file: input.argument, shownAs: name, fileName: input.fileName, channel: station,
                                              allowUnlisted: command.allowUnlisted)
        }
        if case .package(_, _, nil) = source { context.console.warn(.flashUnlistedWarning, name) }
    case .best: source = try channel(.latest)
    case .name(let name): source = try channel(.named(name))
    case .version(let version): source = try channel(.version(version))
    }
    // A person at a terminal confirms before any unit is touched (as fwupdmgr asks).
    guard FlashConfirmation(command: command, context: context).confirmed(source) else {
        context.console.say(.flashNotConfirmed, to: .standardError)
        return .failure
    }
    var options = FirmwareUpdateOptions()
    options.allowDowngrade = command.allowDowngrade
    options.allowSameVersion = command.allowSameVersion
    options.minimumBatteryPercent = command.minimumBattery
    var configured = FlashJob(source: source, options: options, readerOptions: FirmwareDevices.readerOptions(context))
    // Stopped uploads are noted in the station's state directory, so a re-run resumes them.
    if let state = StationPaths.stateDirectory(explicit: command.firmware.stateDirectory, environment: context.environment) {
        configured.journal = UploadJournalFile(directory: state + "/uploads")
    }
    let ports = FirmwareDevices.portContext(context)
    configured.linkSettings = ports.linkSettings
    let job = configured
    let devices = command.devices.map { spec in
        // The port's lock is taken as every device command takes it (waiting a bounded time).
        FleetDevice(name: spec.description, portKey: DevicePorts.portKey(spec, context: ports), cardModel: soundCardModel(spec, sysfs: ports.sysfs)) {
            try DevicePorts.open(spec, context: ports)
        }
    }
    let feed = EventQueue<FlashFeed>()
    let stop = StopSignals.install()
    defer { stop.restore() }
    let cancel = CancelFlag()
    let stopRequested: @Sendable () -> Bool = { cancel.isSet }

    let worker = Thread {
        let report = job.runBlocking(devices, shouldCancel: stopRequested) { feed.post(.event($0)) }
        feed.post(.finished(report))
    }
    worker.stackSize = 1 << 20
    worker.start()

    let presenter = FlashPresenter(devices: command.devices.map(\.description), context: context)
    var report: FlashReport?
    while report == nil {
        for item in feed.take() {
            if stop.requested { cancel.set() }
            switch item {
            case .finished(let done): report = done
            case .event(.started(let row, let name, let from, let to, let bytes)):
                presenter.started(row: row, name: name, from: from, to: to, bytes: bytes)
            case .event(.progress(let row, let phase, let done, let total)):
                presenter.progress(row: row, phase: phase, done: done, total: total)
            case .event(.finished(let row, let outcome)):
                presenter.finished(row: row, outcome)
            }
        }
        if stop.requested { cancel.set() }
    }
    if stop.requested { cancel.set() }
    return presenter.summary(report!, stopped: cancel.isSet)
}

/// `firmware flash`'s question before it starts: which units, which image, "Continue? [Y/n]".
/// Asked only when standard input and output are a terminal, without `--yes` and `--json`;
/// a bad answer is asked again (three times), the end of input is "no".
struct FlashConfirmation {
    let command: FirmwareFlashCommand
    let context: CommandContext
    var input: any LineSource = StandardInputLines()

    /// Whether to go on: `true` without a person to ask.
    func confirmed(_ source: FlashJob.Source) -> Bool {
        let console = context.console
        guard !command.confirmed, !console.isJSON, isatty(STDIN_FILENO) == 1, console.isTerminal(.standardOutput) else { return true }
        let localizer = context.localizer
        let image: String
        switch (source, command.target) {
        case (.package(let name, _, _), _): image = name
        case (_, .name(let name)): image = name
        case (_, .version(let version)): image = localizer.text(.flashConfirmVersion, version.description)
        default: image = localizer.text(.flashConfirmBest)
        }
        let devices = command.devices.map(\.description)
        console.print(localizer.text(.flashConfirm, String(devices.count), image, devices.joined(separator: ", ")))
        for _ in 0..<3 {
            console.write(localizer.text(.flashConfirmPrompt) + " ")
            guard let line = input.readLine() else {
                console.print("")
                return false
            }
            if let answer = TerminalDelegate.yesNo(line.trimmingCharacters(in: .whitespaces), defaultAnswer: true, localizer: localizer) {
                return answer
            }
            console.print(localizer.text(.promptInvalid))
        }
        return false
    }
}

/// How `firmware flash` ends when Ctrl-C stopped it: 130, as the fleet commands.
enum FlashExit {
    static let cancelled = ExitStatus(130, meaning: .manExitFlashCancelled)
}

/// Set once SIGINT arrives; read by every device's `shouldCancel`.
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) || StopSignals.flagIsSet }
}

/// Prints a flash as it goes: bars on a terminal, lines otherwise, events with `--json`.
/// Runs on the command's thread.
final class FlashPresenter {
    private let devices: [String]
    private let console: Console
    private let localizer: Localizer
    private let board: ProgressBoard?
    private var lastPhase: [FlashPhase?]
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

    func started(row: Int, name: String, from: String, to: String, bytes: Int) {
        if console.isJSON {
            console.json(FlashStartedEvent(device: devices[row], name: name, from: from, to: to, bytes: bytes))
        } else if board == nil {
            console.say(.flashStarted, devices[row], name, from, to, String(bytes))
        }
    }

    func progress(row: Int, phase: FlashPhase, done: Int, total: Int) {
        let phaseChanged = lastPhase[row] != phase
        lastPhase[row] = phase
        let phaseText = localizer.text(phase == .loader ? .phaseLoader : .phaseUploading)
        if let board {
            board.update(row: row, phase: phaseText, done: done, total: total)
            return
        }
        // Plain lines and events: each image, and its upload in steps (5 % in JSON, 25 % in text).
        let steps = console.isJSON ? 20 : 4
        let step = total > 0 ? done * steps / total : 0
        if phaseChanged { lastStep[row] = -1 }
        guard step != lastStep[row] else { return }
        lastStep[row] = step
        if console.isJSON {
            console.json(FlashProgressEvent(device: devices[row], phase: phase.rawValue, done: done, total: total))
        } else {
            let percent = total > 0 ? done * 100 / total : 0
            console.say(.flashProgressLine, devices[row], phaseText, String(percent), String(done), String(total))
        }
    }

    func finished(row: Int, _ outcome: FlashOutcome) {
        let device = devices[row]
        switch outcome {
        case .done(let name, let from, let to, let bytes, let report):
            board?.finish(row: row, message: localizer.text(.progressDone))
            if console.isJSON {
                console.json(FlashDoneEvent(
                    device: device, name: name, from: from, to: to, seconds: (report.audioSeconds * 1000).rounded() / 1000,
                    bytes: bytes, chunks: report.chunks, chunkBytes: report.chunkBytes, resumedChunks: report.resumedChunks,
                    resumedFromByte: report.resumedFromByte, result: report.result.rawValue, resultName: report.result.vendorName))
            } else {
                console.print(localizer.text(.flashDone, device, from, to, String(format: "%.1f", report.audioSeconds),
                                             String(bytes)))
            }
        case .skipped(let running, let reason):
            board?.finish(row: row, message: localizer.text(.progressDone))
            if console.isJSON {
                console.json(FlashSkippedEvent(device: device, running: running, reason: reason.rawValue))
            } else {
                let key: MessageKey = switch reason {
                case .upToDate: .flashUpToDate
                case .runsTarget: .flashRunsTarget
                }
                console.print(localizer.text(key, device, running))
            }
        case .failed(let error):
            board?.finish(row: row, message: localizer.text(outcome.wasCancelled ? .progressCancelled : .progressFailed))
            if console.isJSON {
                let result = outcome.vendorResult
                console.json(FlashFailedEvent(device: device, code: Localizer.code(for: error),
                                              message: Localizer.english.message(for: error), result: result?.rawValue,
                                              resultName: result?.vendorName))
            } else {
                console.print(localizer.text(.flashFailed, device, localizer.message(for: error, about: device)))
            }
        }
    }

    /// The summary line (or event) and the exit code: 130 when Ctrl-C stopped the run
    /// (`stopped`) and something was left undone, else 0 only when every device ended on its target.
    func summary(_ report: FlashReport, stopped: Bool = false) -> ExitCode {
        let outcome = report.outcome(stopped: stopped)
        let (updated, skipped, failed, cancelled) = (report.updated, report.skipped, report.failed, report.cancelled)
        let count = report.outcomes.count
        // Ctrl-C echoes `^C` on the terminal's current line, below the bars: cleared.
        if board != nil, stopped { FileDescriptorSink.standardError.write("\r\u{1B}[2K") }
        if console.isJSON {
            console.json(FlashSummaryEvent(devices: count, updated: updated, skipped: skipped, failed: failed,
                                           cancelled: cancelled, outcome: outcome.rawValue))
        } else if outcome == .cancelled {
            console.say(.flashCancelledSummary, String(updated), String(skipped), String(failed), String(cancelled), String(count))
        } else {
            console.say(.flashSummary, String(updated), String(skipped), String(failed), String(count))
        }
        switch outcome {
        case .cancelled: return FlashExit.cancelled.code
        case .done: return count == devices.count ? .success : .failure
        case .failed: return .failure
        }
    }
}

@available(*, unavailable) extension FlashPresenter: Sendable {}
