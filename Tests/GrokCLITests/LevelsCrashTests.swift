import DeviceTestSupport
import Foundation
import GrokTestSupport
import Testing

/// A grokctl killed with its levels raised (issue 22, item 1): the restore record it wrote
/// before changing anything lets the next grokctl put the levels back. Its own PulseAudio
/// (not the shared one: the spawned grokctl reaches it through PULSE_SERVER).
@Suite("Levels after a crash (grokctl)")
struct LevelsCrashTests {
    @Test("kill -9 of grokctl mid-session leaves the sink raised; the next grokctl puts it back at 30 % and says so with --restore-levels")
    func killedSessionIsRestoredAtNextStart() throws {
        let server = try PulseServer()
        defer { server.stop() }
        let home = TemporaryDirectory("grok-levels-cli")
        var environment = PulseServer.environment(directory: server.directory)
        environment["PULSE_SERVER"] = server.address
        environment["XDG_STATE_HOME"] = home.path + "/state"
        environment["GROKCTL_BENCH"] = home.path + "/bench"
        environment["PATH"] = "/usr/bin:/bin"
        try server.setSinkVolume(30)

        let session = Process()
        session.executableURL = try grokctlExecutable()
        session.arguments = ["info", "--device", "alsa:pulse"]
        session.environment = environment
        session.standardOutput = FileHandle.nullDevice
        session.standardError = FileHandle.nullDevice
        session.standardInput = FileHandle.nullDevice
        try session.run()
        let deadline = Date().addingTimeInterval(10)
        while (try server.sinkVolume()) != 100, session.isRunning, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(try server.sinkVolume() == 100)
        kill(session.processIdentifier, SIGKILL)
        session.waitUntilExit()
        #expect(try server.sinkVolume() == 100, "nothing put the levels back yet")

        let listing = try runBinary(["--json", "devices", "--restore-levels"], environment: environment)
        #expect(listing.status == 0, "\(listing.standardError)")
        #expect(try server.sinkVolume() == 30)
        let document = try JSONSerialization.jsonObject(with: Data(listing.standardOutput.utf8)) as? [String: Any]
        #expect(document?["restored"] as? [String] == ["pulse"])
        let pulse = (document?["devices"] as? [[String: Any]])?.first { $0["device"] as? String == "alsa:pulse" }
        let master = (pulse?["levels"] as? [[String: Any]])?.first { $0["control"] as? String == "Master" }
        #expect(master?["playback_percent"] as? Int == 30)
    }
}
