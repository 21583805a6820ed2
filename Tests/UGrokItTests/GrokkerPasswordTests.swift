import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// Grokker passwords have no wire form in the vendor protocol (SDK 1.7.16): the calls stay,
/// a connected Grokker has no password, and setting or authenticating is refused clearly.
@Suite("Grokker password")
struct GrokkerPasswordTests {
    @Test("not connected: NOT_CONNECTED, nothing sent")
    func notConnected() throws {
        let rig = try Rig()
        #expect(try rig.session.setGrokkerPassword(old: "", new: "secret") == .notConnected)
        #expect(try rig.session.authenticateGrokker("secret") == .notConnected)
        #expect(try rig.session.grokkerAuthenticationStatus() == .notConnected)
    }

    @Test("connected: NO_PASSWORD_SET, and setting or authenticating is NOT_SUPPORTED with nothing sent")
    func connected() throws {
        let rig = try Rig()
        try rig.session.connect()
        let sent = rig.session.linkStatistics.packetsSent
        #expect(try rig.session.grokkerAuthenticationStatus() == .noPasswordSet)
        #expect(throws: ReaderError.notSupported(port: "sim:0", feature: "setGrokkerPassword")) {
            try rig.session.setGrokkerPassword(old: "", new: "secret")
        }
        #expect(throws: ReaderError.notSupported(port: "sim:0", feature: "authenticateGrokker")) {
            try rig.session.authenticateGrokker("secret")
        }
        #expect(rig.session.linkStatistics.packetsSent == sent)
        #expect(ReaderError.notSupported(port: "sim:0", feature: "setGrokkerPassword").code == "reader_not_supported")
    }
}
