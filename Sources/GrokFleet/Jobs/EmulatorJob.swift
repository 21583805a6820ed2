import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol

/// `grokctl emulate`: one emulated Grokker (``EmulatedGrokker``) speaking the vendor's own
/// audio protocol over raw s16le mono PCM (FIFOs, files, or standard input and output as
/// `-`), paced by the host's stream, until the host goes away or the caller says stop.
///
/// Three steps, so the caller can speak between them: ``init(stateDirectory:sampleRate:)``
/// opens (or makes) the unit; ``open(input:output:recordAudio:)`` opens the paths (a FIFO
/// blocks until the host opens the other end); ``serve(shouldStop:)`` runs it and tells how
/// it ended. Not thread-safe: one thread drives it.
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

    /// Opens the two paths (blocking until a host opens a FIFO's other end) and, with
    /// `recordAudio`, a recording of the session in that directory; returns its path.
    @discardableResult
    public func open(input: String, output: String, recordAudio: String?) throws -> String? {
        let pipe = try RawPipePort(inputPath: Self.path(input, output: false), outputPath: Self.path(output, output: true),
                                   sampleRate: sampleRate)
        port = pipe
        guard let recordAudio else { return nil }
        do {
            let recorder = try RecordingPort(wrapping: pipe, directory: recordAudio)
            recording = recorder
            port = recorder
            return recorder.recordingPath
        } catch {
            pipe.close()
            port = nil
            throw error
        }
    }

    /// Serves the host until it goes away or `shouldStop()` says so (looked at every block),
    /// then closes the paths.
    /// - Throws: ``AudioError`` when a path fails other than by closing.
    public func serve(shouldStop: () -> Bool) throws(AudioError) -> Ending {
        guard let port else { preconditionFailure("serve(shouldStop:) comes after open(input:output:recordAudio:)") }
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
        return Ending(reason: reason, audioSeconds: seconds,
                      packetsSent: link.packets.statistics.packetsSent, packetsReceived: link.packets.statistics.packetsReceived,
                      bytesSent: link.modem.statistics.bytesSent, bytesReceived: link.modem.statistics.bytesReceived,
                      handshakes: link.modem.statistics.handshakes, recordingPath: recording?.recordingPath,
                      recordingError: recording?.recordingError)
    }
}
