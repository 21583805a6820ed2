import DeviceTestSupport
import Foundation
import GrokAudio
import GrokFleet
import GrokTestSupport
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

    @Test("with --keep-levels a sink at 5 % stays at 5 %, and the failed handshake names 'Master' as the control to raise")
    func keptLowLevelIsNamed() throws {
        try server.setSinkVolume(5)
        let port = try DevicePorts.open(.alsa(name: "pulse"), context: context(keepLevels: true))
        defer { port.close() }
        #expect(try server.sinkVolume() == 5)
        let session = try ReaderSession(port: port)
        let error = #expect(throws: ReaderError.self) { _ = try session.connect(handshakeTimeout: 0.3) }
        guard case .levelTooLow(let name, let shortfall)? = error else {
            Issue.record("expected levelTooLow, got \(String(describing: error))")
            return
        }
        #expect(name == "alsa:pulse")
        #expect(shortfall.control == "Master" && shortfall.side == "playback" && shortfall.percent == 5 && !shortfall.muted)
        #expect(error?.code == "reader_playback_level_low")
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
}
