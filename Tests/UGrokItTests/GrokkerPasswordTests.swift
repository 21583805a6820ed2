import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// The Grokker password: kept hashed on the unit, required per link session, rate-limited.
@Suite("Grokker password")
struct GrokkerPasswordTests {
    /// A new host session (a reconnect) to the same emulated Grokker.
    static func reconnect(_ grokker: EmulatedGrokker, index: Int = 0) throws -> ReaderSession {
        let cable = SimulatedCablePort(name: "sim:\(index)", sampleRate: 44_100, configuration: .clean, peer: grokker)
        // The Grokker forgets the old link session after 3 s without a frame, then answers.
        var options = ReaderOptions()
        options.handshakeTimeout = 8
        let session = ReaderSession(port: cable, options: options)
        try session.connect()
        return session
    }

    static func stateJSON(_ grokker: EmulatedGrokker) throws -> String {
        try String(contentsOfFile: grokker.handler.store.stateFile, encoding: .utf8)
    }

    @Test("set, reconnect refused, authenticate, wrong password locked out, change, persist, clear")
    func lifecycle() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("etsi")
        #expect(try rig.session.grokkerAuthenticationStatus() == .noPasswordSet)
        #expect(try rig.session.authenticateGrokker("s3cret") == .noPasswordSet)
        #expect(try rig.session.setGrokkerPassword(old: "guess", new: "s3cret") == .noPasswordSet)
        #expect(try rig.session.setGrokkerPassword(old: "", new: "s3cret") == .success)
        // Kept as a salted hash, in a state file an older build refuses rather than misreads.
        let json = try Self.stateJSON(rig.grokker)
        #expect(!json.contains("s3cret"))
        #expect(json.contains("\"sha256\""))
        #expect(json.contains("\"format\" : 2"))
        // The connection that set it goes on.
        #expect(try rig.session.grokkerAuthenticationStatus() == .success)
        _ = try rig.session.batteryInfo()

        // A reconnect must authenticate: only identify, echo and the password calls pass.
        let second = try Self.reconnect(rig.grokker)
        #expect(try second.grokkerAuthenticationStatus() == .notAuthenticated)
        #expect(try second.identify().serialNumber == rig.grokker.handler.store.state.serialNumber)
        #expect(try second.call(.echo([1, 2, 3])) == .echo([1, 2, 3]))
        #expect(throws: ReaderError.authenticationRequired(port: "sim:0")) { try second.batteryInfo() }
        #expect(throws: ReaderError.authenticationRequired(port: "sim:0")) { try second.setRegion("fcc") }
        #expect(throws: ReaderError.authenticationRequired(port: "sim:0")) { try second.antennaTuning() }
        #expect(throws: ReaderError.authenticationRequired(port: "sim:0")) {
            try second.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters)
        }
        // Tag access answers the vendor's REQUIRES_AUTHENTICATION.
        let epc = rig.grokker.field.tags[0].epc
        #expect(try second.call(.tagAccess(epc: epc, .read(bank: .epc, wordPointer: 0, wordCount: 2, password: 0)))
            == .tagAccess(.requiresAuthentication, words: []))

        // A wrong password locks attempts out for 0.25 s of the Grokker's clock: even the
        // right one is refused then.
        #expect(try second.authenticateGrokker("wrong") == .wrongPassword)
        #expect(try second.authenticateGrokker("s3cret") == .wrongPassword)
        try second.idle(forAtMost: 0.3)
        #expect(try second.authenticateGrokker("s3cret") == .success)
        #expect(try second.grokkerAuthenticationStatus() == .success)
        _ = try second.batteryInfo()

        // Changing it needs the old one.
        #expect(try second.setGrokkerPassword(old: "wrong", new: "n3w") == .wrongPassword)
        try second.idle(forAtMost: 0.3)
        #expect(try second.setGrokkerPassword(old: "s3cret", new: "n3w") == .success)
        second.close()

        // Power cycle: a new EmulatedGrokker on the same directory keeps the new password.
        let reopened = try EmulatedGrokker(benchDirectory: rig.bench.path, index: 0)
        let third = try Self.reconnect(reopened)
        #expect(throws: ReaderError.authenticationRequired(port: "sim:0")) { try third.batteryInfo() }
        #expect(try third.authenticateGrokker("s3cret") == .wrongPassword)
        try third.idle(forAtMost: 0.3)
        #expect(try third.authenticateGrokker("n3w") == .success)
        // Clearing needs the old one too; then nobody needs one.
        #expect(try third.setGrokkerPassword(old: "n3w", new: "") == .success)
        #expect(try third.grokkerAuthenticationStatus() == .noPasswordSet)
        #expect(try Self.stateJSON(reopened).contains("\"format\" : 1"))
        #expect(!(try Self.stateJSON(reopened).contains("sha256")))
        let fourth = try Self.reconnect(reopened)
        _ = try fourth.batteryInfo()
    }

    @Test("the lockout doubles with each wrong password in a row, on the Grokker's clock")
    func lockoutDoubles() throws {
        let rig = try Rig()
        try rig.session.connect()
        #expect(try rig.session.setGrokkerPassword(old: "", new: "pw") == .success)
        let session = try Self.reconnect(rig.grokker)
        #expect(try session.authenticateGrokker("a") == .wrongPassword)   // 1 failure: 0.25 s
        try session.idle(forAtMost: 0.3)
        #expect(try session.authenticateGrokker("b") == .wrongPassword)   // 2 failures: 0.5 s
        try session.idle(forAtMost: 0.3)
        #expect(try session.authenticateGrokker("pw") == .wrongPassword)  // still locked out
        try session.idle(forAtMost: 0.3)
        #expect(try session.authenticateGrokker("pw") == .success)
    }

    @Test("a resumed inventory authenticates again by itself after an unplug")
    func resumeAuthenticates() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        #expect(try rig.session.setGrokkerPassword(old: "", new: "pw") == .success)
        try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters)
        try rig.session.collect(forAtMost: 0.5)
        rig.cable.plugged = false
        try rig.session.collect(forAtMost: 3)
        rig.cable.plugged = true
        try rig.session.collect(forAtMost: 4) { rig.session.inventoryResumptions > 0 }
        #expect(rig.session.inventoryResumptions == 1)
        _ = rig.session.takeReports()
        try rig.session.collect(forAtMost: 1)
        #expect(!rig.session.takeReports().isEmpty)
    }
}
