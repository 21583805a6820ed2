import GrokAudio
import GrokBasics
import GrokkerEmulator
import GrokLink
import GrokProtocol

/// `grokctl emulate`: one emulated Grokker (``EmulatedGrokker``) speaking the vendor's own
/// audio protocol over raw s16le mono PCM (FIFOs, files, or standard input and output as
/// `-`) or on sound devices (an ALSA device it captures from and one it plays to, such as a
/// sound server's `pulse` devices), paced by the stream it hears, until the host goes away
/// or the caller says stop.
///
/// Three steps, so the caller can speak between them: ``init(stateDirectory:sampleRate:)``
/// opens (or makes) the unit; ``open(_:recordAudio:alsaConfig:sysfs:)`` opens its ends (a
/// FIFO blocks until the host opens the other end); ``serve(shouldStop:)`` runs it and tells
/// how it ended. It never touches a sound card's mixer: it is the unit, and the levels are
/// the host's to set (docs/bench.md). Not thread-safe: one thread drives it.
public final class EmulatorJob {
    /// Who the unit is, as it starts serving.
    public struct Unit: Sendable, Hashable {
        /// The 8-digit serial number.
        public var serial: String
        public var firmware: String
        /// The vendor's name of its region; `nil` when none is set.
        public var region: String?
        public var stateDirectory: String
    }

    /// Where the unit hears the host and where it answers.
    public enum Ends: Sendable, Hashable {
        /// Raw s16le mono PCM read from `input` and written to `output` (FIFOs or files; `-`
        /// for standard input or output).
        case files(input: String, output: String)
        /// Sound devices: the unit captures from `input` and plays to `output` (each
        /// ``DeviceSpec/alsa(name:)`` or ``DeviceSpec/usb(path:)``; the same device for both
        /// is one full-duplex card).
        case sound(input: DeviceSpec, output: DeviceSpec)

        /// The ends as given to `--input` and `--output`: `alsa:NAME` and `usb:PATH` name
        /// sound devices (as `--device` does), anything else a file, a FIFO or `-`.
        /// - Throws: ``FleetError/invalidDevice(_:)`` for a sound device named wrong;
        ///   ``FleetError/emulatorEndsMixed(input:output:)`` for a sound device on one end and
        ///   a file on the other.
        public static func parse(input: String, output: String) throws(FleetError) -> Ends {
            func sound(_ text: String) -> Bool { text.hasPrefix("alsa:") || text.hasPrefix("usb:") }
            switch (sound(input), sound(output)) {
            case (false, false):
                return .files(input: input, output: output)
            case (true, true):
                guard let captured = try DeviceSpec.parse(input).first, let played = try DeviceSpec.parse(output).first else {
                    throw .invalidDevice(input)
                }
                return .sound(input: captured, output: played)
            default:
                throw .emulatorEndsMixed(input: input, output: output)
            }
        }
    }

    /// Why ``serve(shouldStop:)`` returned.
    public enum StopReason: String, Sendable, Hashable {
        /// The host closed its end.
        case hostClosed = "host_closed"
        /// The caller asked (a stop signal).
        case signal
    }

    /// How the serving ended, and what went over the link.
    public struct Ending: Sendable {
        public var reason: StopReason
        /// Seconds of audio on the unit's clock.
        public var audioSeconds: Double
        /// Seconds of it during which the unit detected the host (its input above its
        /// threshold, ``AnalogueInput``): 0 when the host was never loud enough.
        public var detectedSeconds: Double
        /// Samples the unit's input clipped (the host too hot).
        public var clippedSamples: Int64
        /// The loudest sample that reached the unit's input (1: the host's full scale).
        public var loudestInput: Float
        public var packetsSent: Int
        public var packetsReceived: Int
        public var bytesSent: Int
        public var bytesReceived: Int
        public var handshakes: Int
        /// Where the session was recorded (`--record-audio`), when it was.
        public var recordingPath: String?
        /// Why the recording is incomplete, when it is (the session went on without it).
        public var recordingError: AudioError?
    }

    public let sampleRate: Int
    private let store: DeviceStateStore
    private let grokker: EmulatedGrokker
    private var port: (any AudioPort)?
    private var recording: RecordingPort?

    /// Opens the unit whose state is in `stateDirectory`, making one out of the box there
    /// when there is none.
    public init(stateDirectory: String, sampleRate: Int) throws {
        var random = SystemRandomNumberGenerator()
        store = try DeviceStateStore.openOrCreate(deviceDirectory: stateDirectory, using: &random)
        grokker = try EmulatedGrokker(store: store, sampleRate: sampleRate, bench: RFScene.defaultBench(seed:))
        self.sampleRate = sampleRate
    }

    /// Who the unit is now.
    public var unit: Unit {
        let state = store.state
        return Unit(serial: ReaderInfo.formatSerialNumber(state.serialNumber), firmware: state.firmwareVersion.description,
                    region: state.region?.name, stateDirectory: store.deviceDirectory)
    }

    /// `-` for a path: standard input (for the input) or standard output (for the output).
    public static func path(_ path: String, output: Bool) -> String {
        path == "-" ? (output ? "/dev/stdout" : "/dev/stdin") : path
    }

    /// Opens the unit's ends (files: blocking until a host opens a FIFO's other end; sound
    /// devices: at ``sampleRate``, which each must run at natively unless it is named as a
    /// plug device, `plughw:...`) and, with `recordAudio`, a recording of the session in that
    /// directory; returns its path. The sound devices' levels are left as they are.
    /// - Parameters:
    ///   - alsaConfig: an ALSA configuration file read on top of the system's (`--alsa-config`).
    ///   - sysfs: where the kernel's sysfs is, for `usb:` names.
    /// - Throws: ``AudioError`` for a path or device that cannot be opened (naming it), or a
    ///   device that does not run at the rate (`rate_not_native`);
    ///   ``FleetError/usbCardNotFound(path:plugged:)`` for a `usb:` port without a sound card.
    @discardableResult
    public func open(_ ends: Ends, recordAudio: String?, alsaConfig: String? = nil, sysfs: String = "/sys") throws -> String? {
        let opened: any AudioPort
        switch ends {
        case .files(let input, let output):
            opened = try RawPipePort(inputPath: Self.path(input, output: false), outputPath: Self.path(output, output: true),
                                     sampleRate: sampleRate)
        case .sound(let input, let output):
            let capture = try Self.alsaName(input, sysfs: sysfs)
            let playback = try Self.alsaName(output, sysfs: sysfs)
            let plug = ALSAPort.isPlugDevice(capture) || ALSAPort.isPlugDevice(playback)
            if !plug {
                // One device's playback side answers for both (its capture is not opened
                // twice: a file plugin's input FIFO opens with it).
                let asked = capture == playback ? [(playback, false)] : [(playback, false), (capture, true)]
                for (device, isCapture) in asked {
                    let rates = try ALSAPort.nativeRates(device: device, capture: isCapture, configFile: alsaConfig)
                    guard !rates.isEmpty else {
                        throw AudioError.unsupportedFormat(device: device, detail: ErrorDetail("no_native_rate"))
                    }
                    guard rates.contains(sampleRate) else {
                        throw AudioError.unsupportedFormat(
                            device: device, detail: ErrorDetail("rate_not_native", [String(sampleRate), String(rates[0])]))
                    }
                }
            }
            opened = try ALSAPort(playbackDevice: playback, captureDevice: capture, sampleRate: sampleRate,
                                  configFile: alsaConfig, resample: plug)
        }
        port = opened
        guard let recordAudio else { return nil }
        do {
            let recorder = try RecordingPort(wrapping: opened, directory: recordAudio)
            recording = recorder
            port = recorder
            return recorder.recordingPath
        } catch {
            opened.close()
            port = nil
            throw error
        }
    }

    /// The ALSA device name of a sound end: the name itself, or a `usb:` port's card.
    private static func alsaName(_ spec: DeviceSpec, sysfs: String) throws -> String {
        switch spec {
        case .alsa(let name):
            return name
        case .usb(let path):
            guard let card = USBSoundCard.find(path: path, sysfs: sysfs) else {
                throw FleetError.usbCardNotFound(path: path, plugged: USBSoundCard.list(sysfs: sysfs).map { "usb:" + $0.path })
            }
            return "hw:\(card.card),0"
        case .emulated, .pipe:
            preconditionFailure("Ends.parse makes sound ends of alsa: and usb: names only")
        }
    }

    /// Serves the host until it goes away (a file or FIFO end closes; a sound device never
    /// does) or `shouldStop()` says so (looked at every block), then closes the ends.
    /// - Throws: ``AudioError`` when a path fails other than by closing.
    public func serve(shouldStop: () -> Bool) throws(AudioError) -> Ending {
        guard let port else { preconditionFailure("serve(shouldStop:) comes after open(_:recordAudio:alsaConfig:sysfs:)") }
        var failure: AudioError?
        do {
            try DeviceRunner.run(grokker, on: port, shouldStop: shouldStop)
        } catch {
            failure = error
        }
        let reason: StopReason = shouldStop() ? .signal : .hostClosed
        port.close()
        self.port = nil
        if let failure { throw failure }
        let link = grokker.link
        let seconds = Double(grokker.clock) / Double(sampleRate)
        let input = grokker.input
        return Ending(reason: reason, audioSeconds: seconds, detectedSeconds: Double(input.detectedSamples) / Double(sampleRate),
                      clippedSamples: input.clippedSamples, loudestInput: input.loudest,
                      packetsSent: link.packets.statistics.packetsSent, packetsReceived: link.packets.statistics.packetsReceived,
                      bytesSent: link.modem.statistics.bytesSent, bytesReceived: link.modem.statistics.bytesReceived,
                      handshakes: link.modem.statistics.handshakes, recordingPath: recording?.recordingPath,
                      recordingError: recording?.recordingError)
    }
}
