import DeviceTestSupport
import Foundation
import GrokAudio
import GrokFleet
import GrokProtocol
import GrokTestSupport
import Synchronization
import Testing
import UGrokIt

/// The cards' mixer levels through a real sound server (issue 22, item 1): a throwaway
/// PulseAudio (``PulseServer``) whose default sink and source ALSA's `pulse` PCM and mixer
/// reach. Serialized: the tests share the server's default sink.
@Suite("Card levels through PulseAudio", .serialized)
struct CardLevelsTests {
    let server = PulseServer.shared
    let state = TemporaryDirectory("grok-levels")
    var levels: String { state.path + "/levels" }

    func context(keepLevels: Bool = false) -> DevicePortContext {
        DevicePortContext(bench: Bench(directory: state.path + "/bench"), lockDirectory: state.path + "/locks",
                          levelsDirectory: levels, keepLevels: keepLevels)
    }

    @Test("a host sink at 30 % is at full for the session, unmuted, and back at 30 % (and muted) afterwards")
    func sinkIsRaisedAndRestored() throws {
        try server.setSinkVolume(30)
        try server.pactl(["set-sink-mute", "host_out", "1"])
        let port = try DevicePorts.open(.alsa(name: "pulse"), context: context())
        #expect(try server.sinkVolume() == 100)
        #expect(try server.sinkMuted() == false)
        // Intent before change: the record of what to put back is on disk while the levels are raised.
        #expect(CardLevels.records(directory: levels).first?.saved.controls.first { $0.name == "Master" }?.playbackPercent == 30)
        port.close()
        #expect(try server.sinkVolume() == 30)
        #expect(try server.sinkMuted() == true)
        #expect(CardLevels.records(directory: levels).isEmpty)
        try server.pactl(["set-sink-mute", "host_out", "0"])
    }

    @Test("two Grokkers on one card share one save: the first to close leaves the levels raised, the last puts them back")
    func sessionsOnOneCardShareASave() throws {
        try server.setSinkVolume(30)
        let first = try DevicePorts.openUnlocked(.alsa(name: "pulse"), context: context())
        let second = try DevicePorts.openUnlocked(.alsa(name: "pulse"), context: context())
        #expect(CardLevels.records(directory: levels).count == 1)
        first.close()
        #expect(try server.sinkVolume() == 100)
        second.close()
        #expect(try server.sinkVolume() == 30)
    }

    @Test("an emulated unit on the server's devices does not hear a host whose sink is kept at 5 % (-78 dBFS): the handshake fails naming 'Master' at 5 %")
    func keptLowLevelIsNamed() throws {
        try server.setSinkVolume(5)
        let unit = try UnitOnSoundServer(stateDirectory: state.path + "/unit")
        let port = try DevicePorts.open(.alsa(name: "pulse"), context: context(keepLevels: true))
        #expect(try server.sinkVolume() == 5)
        let session = try ReaderSession(port: port)
        // 1 s of audio: long enough for a handshake the unit hears (the next test's handshake
        // and GetVersion take under 0.9 s of audio through the server).
        let error = #expect(throws: ReaderError.self) { _ = try session.connect(handshakeTimeout: 1) }
        // The host's stream runs on (silence) while the server delivers what it played last
        // (a loaded machine's server can be late by more than a few blocks).
        try session.rest(forAtMost: 1)
        let ending = try unit.stop()
        port.close()
        guard case .levelTooLow(let name, let shortfall)? = error else {
            Issue.record("expected levelTooLow, got \(String(describing: error))")
            return
        }
        #expect(name == "alsa:pulse")
        #expect(shortfall.control == "Master" && shortfall.side == "playback" && shortfall.percent == 5 && !shortfall.muted)
        #expect(error?.code == "reader_playback_level_low")
        // Because the unit did not hear the host: its input never reached its threshold.
        #expect(ending.detectedSeconds == 0 && ending.handshakes == 0, "\(ending)")
        // What reached it stayed under the threshold (at -78 dBFS the server's 16-bit monitor
        // may round the host's tones to nothing, or deliver them after the unit stopped: CI
        // saw both, so only the upper bound is asserted).
        #expect(ending.loudestInput < 0.01, "the host's tones stayed under the threshold: \(ending)")
    }

    @Test("without --keep-levels the same host at 5 % is raised to full for the session: the unit hears it and answers, and 5 % is back afterwards")
    func raisedLevelIsHeard() throws {
        try server.setSinkVolume(5)
        let unit = try UnitOnSoundServer(stateDirectory: state.path + "/unit")
        let port = try DevicePorts.open(.alsa(name: "pulse"), context: context())
        let session = try ReaderSession(port: port)
        let info = try session.connect(handshakeTimeout: 3)
        port.close()
        let ending = try unit.stop()
        #expect(info.serialNumberText == ending.serial)
        #expect(ending.handshakes == 1 && ending.detectedSeconds > 0)
        #expect(try server.sinkVolume() == 5)
    }

    @Test("levels left raised by a process that died (kill -9) are put back by the next start, and their record removed")
    func abandonedRecordIsRestored() throws {
        try server.setSinkVolume(30)
        let saved = try ALSAMixer("pulse").levels()
        // A process that has ended: its pid holds nothing any more.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let record = LevelRecord(saved: saved, device: "pulse", holders: [.init(pid: gone.processIdentifier, token: "dead-1")])
        try FileManager.default.createDirectory(atPath: levels, withIntermediateDirectories: true)
        let encoded = try JSONEncoder().encode(record)
        #expect(FileManager.default.createFile(atPath: levels + "/pulse.json", contents: encoded))
        try server.setSinkVolume(100)

        #expect(CardLevels.restoreAbandoned(directory: levels) == ["pulse"])
        #expect(try server.sinkVolume() == 30)
        #expect(CardLevels.records(directory: levels).isEmpty)
    }

    /// The one control device here that gives events (no sound card, so no real jack): the
    /// server's, whose `Master` follows the default sink. A card's `... Jack` controls come
    /// the same way (snd_ctl_subscribe_events, snd_ctl_read), untried on a card.
    @Test("control events: a change of the sink's volume is heard on the non-blocking control device, by name; it is no jack's")
    func controlEventsAreHeard() throws {
        try server.setSinkVolume(40)
        let events = try #require(ALSAJackEvents(control: "pulse"))
        #expect(events.changed() != nil)
        /// Looks until an event came (the server tells its clients a moment later: up to a
        /// second); its names, and what `changed` said of them.
        func look(_ matching: @escaping (String) -> Bool) -> (names: [String], changed: Bool?) {
            var names: [String] = []
            let deadline = Date().addingTimeInterval(1)
            var changed: Bool? = false
            repeat {
                Thread.sleep(forTimeInterval: 0.02)
                changed = events.changed { names.append($0); return matching($0) }
            } while names.isEmpty && changed != nil && Date() < deadline
            return (names, changed)
        }
        try server.setSinkVolume(60)
        let master = look { $0.hasPrefix("Master") }
        #expect(master.changed == true, "\(master.names)")
        try server.setSinkVolume(30)
        let jack = look { $0.hasSuffix(" Jack") }
        #expect(!jack.names.isEmpty && jack.changed == false, "\(jack.names)")
    }
}

/// An emulated Grokker on the sound server's devices, on a thread of its own, as
/// `grokctl emulate --input alsa:pulse:host_out.monitor --output alsa:pulse:unit_out` runs
/// one: it hears what the host plays to `host_out` and plays to `unit_out`, whose monitor
/// the host records.
final class UnitOnSoundServer: Sendable {
    /// How the unit ended, with its serial.
    struct Ending: Sendable, CustomStringConvertible {
        var serial: String
        var detectedSeconds: Double
        var handshakes: Int
        var loudestInput: Float
        var description: String { "detected \(detectedSeconds) s, \(handshakes) handshakes, loudest \(loudestInput)" }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let stopRequested = Mutex(false)
    private let opened = Mutex<Result<String, any Error>?>(nil)
    private let ended = Mutex<Result<Ending, any Error>?>(nil)

    /// Starts the unit and returns once its devices are open.
    init(stateDirectory: String) throws {
        Thread.detachNewThread { [self] in
            do {
                let job = try EmulatorJob(stateDirectory: stateDirectory, sampleRate: 44_100)
                let ends = try EmulatorJob.Ends.parse(input: "alsa:pulse:host_out.monitor", output: "alsa:pulse:unit_out")
                try job.open(ends, recordAudio: nil)
                let serial = job.unit.serial
                opened.withLock { $0 = .success(serial) }
                let ending = try job.serve { stopRequested.withLock { $0 } }
                ended.withLock {
                    $0 = .success(Ending(serial: serial, detectedSeconds: ending.detectedSeconds, handshakes: ending.handshakes,
                                         loudestInput: ending.loudestInput))
                }
            } catch {
                opened.withLock { if $0 == nil { $0 = .failure(error) } }
                ended.withLock { $0 = .failure(error) }
            }
        }
        let deadline = Date().addingTimeInterval(10)
        while opened.withLock({ $0 }) == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        guard let result = opened.withLock({ $0 }) else { throw Failure(description: "the unit did not open its devices") }
        _ = try result.get()
    }

    /// Stops the unit and tells how it ended.
    func stop() throws -> Ending {
        stopRequested.withLock { $0 = true }
        let deadline = Date().addingTimeInterval(10)
        while ended.withLock({ $0 }) == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        guard let result = ended.withLock({ $0 }) else { throw Failure(description: "the unit did not stop") }
        return try result.get()
    }
}
