import Foundation
import GrokCommandLine
import GrokFleet
import Synchronization

/// The first line of `grokctl emulate --json`, printed once the host has opened both paths
/// and the Grokker is serving: which Grokker serves which paths.
struct EmulateStartEvent: Encodable, Sendable {
    var event = "start"
    var serial: String
    var firmware: String
    var region: String?
    var stateDirectory: String
    var input: String
    var output: String
    var sampleRate: Int
    /// Where `--record-audio` records the session (complete once the emulator ends).
    var recording: String?

    enum CodingKeys: String, CodingKey {
        case event, serial, firmware, region, input, output, recording
        case stateDirectory = "state_directory"
        case sampleRate = "sample_rate"
    }
}

/// The last line of `grokctl emulate --json`: why it stopped and what went over the link.
struct EmulateEndEvent: Encodable, Sendable {
    var event = "end"
    /// `host_closed` (the host went away) or `signal` (SIGINT, SIGQUIT or SIGTERM).
    var reason: String
    var audioSeconds: Double
    var packetsSent: Int
    var packetsReceived: Int
    var bytesSent: Int
    var bytesReceived: Int
    var handshakes: Int
    /// Seconds the unit detected the host (its input above its threshold).
    var detectedSeconds: Double
    /// Samples the unit's input clipped.
    var clippedSamples: Int64
    /// The loudest sample at the unit's input (1: the host's full scale).
    var inputPeak: Double
    var recording: String?

    enum CodingKeys: String, CodingKey {
        case event, reason, handshakes, recording
        case detectedSeconds = "input_detected_s"
        case clippedSamples = "input_clipped_samples"
        case inputPeak = "input_peak"
        case audioSeconds = "audio_s"
        case packetsSent = "packets_sent"
        case packetsReceived = "packets_received"
        case bytesSent = "bytes_sent"
        case bytesReceived = "bytes_received"
    }
}

/// `grokctl emulate`: one emulated Grokker (GrokFleet's ``EmulatorJob``) over raw s16le
/// mono PCM (FIFOs, files or standard input and output, `-`) or on sound devices, until the
/// host goes away or SIGINT/SIGQUIT/SIGTERM arrives. Exit 0 either way. With `-` as the output, every message goes to
/// standard error and the JSON start/end lines are not printed (standard output carries the audio).
func runEmulate(_ command: EmulateCommand, _ context: CommandContext) throws -> ExitCode {
    let console = context.console
    let localizer = context.localizer
    let job = try EmulatorJob(stateDirectory: command.stateDirectory, sampleRate: command.sampleRate)
    let audioOnStdout = command.outputPath == "-"
    let messages: Console.Stream = audioOnStdout ? .standardError : .standardOutput

    // Opening a FIFO blocks until the host opens the other end; until the port is open,
    // SIGINT and SIGTERM keep their default effect (end the process).
    console.say(.emulateWaiting, command.inputPath, command.outputPath, to: .standardError)
    let recording = try job.open(command.ends, recordAudio: context.globals.recordAudio, alsaConfig: context.globals.alsaConfig)

    // From here on SIGINT/SIGQUIT/SIGTERM ask the loop to stop; the start line tells a script (or
    // a test) that the Grokker is serving and a signal will end it cleanly.
    let stop = StopSignals.install()
    let unit = job.unit
    if console.isJSON, !audioOnStdout {
        console.json(EmulateStartEvent(
            serial: unit.serial, firmware: unit.firmware, region: unit.region, stateDirectory: unit.stateDirectory,
            input: command.inputPath, output: command.outputPath, sampleRate: command.sampleRate, recording: recording))
    } else {
        console.say(.emulateStarted, unit.serial, unit.firmware, unit.region ?? localizer.text(.infoRegionNotSet),
                    String(command.sampleRate), to: messages)
    }
    let ending: EmulatorJob.Ending
    do {
        ending = try job.serve { stop.requested }
        stop.restore()
    } catch {
        stop.restore()
        throw error
    }

    if let path = ending.recordingPath, let problem = ending.recordingError {
        console.warn(.emulateRecordingFailed, path, localizer.message(for: problem))
    }
    if console.isJSON, !audioOnStdout {
        console.json(EmulateEndEvent(
            reason: ending.reason.rawValue, audioSeconds: (ending.audioSeconds * 1000).rounded() / 1000,
            packetsSent: ending.packetsSent, packetsReceived: ending.packetsReceived,
            bytesSent: ending.bytesSent, bytesReceived: ending.bytesReceived, handshakes: ending.handshakes,
            detectedSeconds: (ending.detectedSeconds * 1000).rounded() / 1000, clippedSamples: ending.clippedSamples,
            inputPeak: (Double(ending.loudestInput) * 10000).rounded() / 10000,
            recording: ending.recordingError == nil ? ending.recordingPath : nil))
    } else {
        console.say(ending.reason == .signal ? .emulateStoppedSignal : .emulateStoppedHostClosed,
                    String(format: "%.1f", ending.audioSeconds), String(ending.packetsSent),
                    String(ending.packetsReceived), to: messages)
    }
    return .success
}

/// SIGINT, SIGQUIT and SIGTERM as a request to stop, for as long as the emulator serves.
///
/// The handlers only set an atomic flag (async-signal-safe) and reset themselves
/// (`SA_RESETHAND`), so a second Ctrl-C ends the process the default way even when the
/// host has stalled and no block arrives to notice the first. ``restore()`` puts the
/// previous handlers back.
final class StopSignals {
    private static let flag = Atomic<Bool>(false)
    /// The signal that asked first (0: none yet), for the message a run ends with.
    private static let first = Atomic<Int32>(0)
    /// Set once the work is done and only the ending is left (closing the ledger, writing
    /// the report): from then on a stop signal is noted and nothing else, so a second one
    /// (a SIGHUP while the report is written) cannot kill the process half-way.
    private static let absorbing = Atomic<Bool>(false)
    private let signals: [Int32]
    private var previous: [sigaction]
    private var previousMask: sigset_t?

    /// What a fleet run takes as a request to stop (docs/fleet.md, "Signals"): SIGINT,
    /// SIGQUIT (Ctrl-\\), SIGTERM and SIGHUP (a second one ends the process the default way);
    /// SIGPIPE (stdout or stderr closed under us, `| head`) and SIGXFSZ (a file over the size
    /// limit), which come back with every failed write, so they stay caught and the write
    /// just fails. SIGQUIT is caught explicitly because a shell starts background jobs with it
    /// ignored, and an ignored Ctrl-\\ would let the run go on and exit 0.
    static let fleetSignals = [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ]

    /// From now on, stop signals are only noted (see ``absorbing``); the handlers stay
    /// installed until the process exits.
    static func absorbFromNowOn() {
        absorbing.store(true, ordering: .relaxed)
    }

    private init(signals: [Int32], previous: [sigaction], previousMask: sigset_t) {
        self.signals = signals
        self.previous = previous
        self.previousMask = previousMask
    }

    /// The first stop signal that arrived since ``install(_:)``, if any.
    static var firstSignal: Int32? {
        let value = first.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// Whether a stop signal has arrived since ``install()``.
    var requested: Bool { Self.flag.load(ordering: .relaxed) }

    /// The same, for threads that do not hold the instance (it is not `Sendable`).
    static var flagIsSet: Bool { flag.load(ordering: .relaxed) }

    /// Installs the handlers, clears the flag, and unblocks the two signals on this thread
    /// (a parent may have started us with them blocked: Foundation's `Process` does).
    static func install(_ signals: [Int32] = [SIGINT, SIGQUIT, SIGTERM]) -> StopSignals {
        flag.store(false, ordering: .relaxed)
        first.store(0, ordering: .relaxed)
        absorbing.store(false, ordering: .relaxed)
        var saved: [sigaction] = []
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let again = StopSignals.flag.load(ordering: .relaxed)
                _ = StopSignals.first.compareExchange(expected: 0, desired: number, ordering: .relaxed)
                StopSignals.flag.store(true, ordering: .relaxed)
                // A second SIGINT/SIGQUIT/SIGTERM/SIGHUP while the work goes on ends the process the
                // default way (the way out of a stop that does not come); SIGPIPE and SIGXFSZ
                // recur on every failed write and must not; nothing does once only the
                // ending is left. (signal() and raise() are async-signal-safe.)
                let repeats = number == SIGPIPE || number == SIGXFSZ
                if again, !repeats, !StopSignals.absorbing.load(ordering: .relaxed) {
                    Glibc.signal(number, SIG_DFL)
                    raise(number)
                }
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            var old = sigaction()
            sigaction(signal, &action, &old)
            saved.append(old)
            sigaddset(&set, signal)
        }
        var mask = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &set, &mask)
        return StopSignals(signals: signals, previous: saved, previousMask: mask)
    }

    /// Puts back the handlers and the signal mask that were there before ``install()``
    /// (once; later calls do nothing).
    func restore() {
        guard var mask = previousMask else { return }
        for (signal, old) in zip(signals, previous) {
            var old = old
            sigaction(signal, &old, nil)
        }
        pthread_sigmask(SIG_SETMASK, &mask, nil)
        previous = []
        previousMask = nil
    }
}

@available(*, unavailable) extension StopSignals: Sendable {}
