import Foundation
import GrokAudio
import GrokBasics
import GrokTestSupport
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Synchronization
import Testing
import UGrokIt

@Suite("Link recovery (the vendor host's reset and reconnect)")
struct LinkRecoveryTests {
    /// The cable goes dead both ways at `deadFrom` seconds of audio, for `seconds`.
    static func deadCable(from deadFrom: Double, for seconds: Double) -> CableConfiguration {
        CableConfiguration.symmetric(.deaf(from: deadFrom, for: seconds))
    }

    /// Connects, sets a Geiger sound (sent again after a reset), and lets the audio clock
    /// reach `second` so the next request is on the line when the cable dies.
    static func connected(_ rig: Rig, idleUntil second: Double) throws {
        try rig.session.connect()
        try rig.session.setGeigerCounterSound(UgiGeigerCounterSound(frequency: 1000, clickDurationMsec: 20, clickRate: 2.5,
                                                                     maxClicksPerSecond: 10, historyDepthMsec: 300))
        let now = Double(rig.session.link.now) / Double(rig.session.link.sampleRate)
        #expect(now < second, "connected at \(now) s, after the cable was due to die")
        try rig.session.idle(forAtMost: second - now)
    }

    @Test("a cable dead for longer than a request's 8 tries, then back: the request completes after one link reset, counted")
    func deadCableComesBack() throws {
        // 22 s dead: longer than the 8 tries take with the vendor's timing (19.4 s).
        let rig = try Rig(Self.deadCable(from: 2.0, for: 22))
        var recoveries: [LinkRecoveryEvent] = []
        rig.session.linkRecoveryListeners = [{ recoveries.append($0) }]
        try Self.connected(rig, idleUntil: 1.99)
        let sentBefore = rig.session.linkStatistics.packetsSent
        let battery = try rig.session.batteryInfo()
        #expect(battery.percentRemaining == 100)
        #expect(rig.session.linkRecoveries == 1 && rig.session.linkRecoveriesFailed == 0)
        let command = "\(VendorOpcode.getBatteryLevel)"
        #expect(recoveries == [.started(command: command), .reconnected(command: command)])
        // It waited the dead span out (audio time), then: GetBatteryLevel, the new
        // connection's GetVersion, the Geiger sound sent again, GetBatteryLevel again.
        #expect(rig.session.elapsedMilliseconds > 24_000)
        #expect(rig.session.linkStatistics.packetsSent - sentBefore == 4)
        let diagnostics = try rig.session.diagnostics()
        #expect(diagnostics.linkRecoveries == 1 && diagnostics.linkRecoveriesFailed == 0)
    }

    @Test("a cable dead for good: reader_timeout after one bounded reset, and the message says a reset was tried")
    func deadCableForGood() throws {
        var options = ReaderOptions()
        options.linkRecoverySeconds = 3
        let rig = try Rig(Self.deadCable(from: 2.0, for: .infinity), options: options)
        try Self.connected(rig, idleUntil: 1.99)
        #expect {
            try rig.session.batteryInfo()
        } throws: { error in
            guard let error = error as? ReaderError, case .timeout(_, let command, _, let recovery) = error else { return false }
            return command == "\(VendorOpcode.getBatteryLevel)" && recovery.code == "reset_failed" && error.code == "reader_timeout"
                && error.description.contains("the link was reset and the Grokker did not connect again")
        }
        #expect(rig.session.linkRecoveries == 1 && rig.session.linkRecoveriesFailed == 1)
        // Bounded: the carrier's loss, the reset's quiet and the 3 s handshake, not the
        // vendor's endless one.
        #expect(rig.session.elapsedMilliseconds < 2_000 + 3_500 + 1_000)
        #expect(rig.session.connectionState != .connected)
    }

    @Test("what a reset may do per request: idempotent ones go again, a counter reset is reported, firmware is the updater's, and the allowance ends it")
    func decisions() throws {
        let battery = VendorRequest.getBatteryLevel
        #expect(LinkRecoveryDecision.decide(battery, retries: true, nested: false, used: 0, allowed: 3) == .reset(repeat: true))
        #expect(LinkRecoveryDecision.decide(.getDiagnostics(reset: false), retries: true, nested: false, used: 0, allowed: 3)
            == .reset(repeat: true))
        #expect(LinkRecoveryDecision.decide(.getDiagnostics(reset: true), retries: true, nested: false, used: 0, allowed: 3)
            == .reset(repeat: false))
        #expect(LinkRecoveryDecision.decide(.programReader(try VendorProgramReader(address: 0x1000)), retries: true,
                                            nested: false, used: 0, allowed: 3) == .report(reason: "no_reset"))
        #expect(LinkRecoveryDecision.decide(battery, retries: false, nested: false, used: 0, allowed: 3) == .report(reason: "no_reset"))
        #expect(LinkRecoveryDecision.decide(battery, retries: true, nested: true, used: 0, allowed: 3) == .report(reason: "no_reset"))
        #expect(LinkRecoveryDecision.decide(battery, retries: true, nested: false, plugged: false, used: 0, allowed: 3)
            == .report(reason: "no_reset"))
        #expect(LinkRecoveryDecision.decide(battery, retries: true, nested: false, used: 3, allowed: 3) == .report(reason: "resets_used_up"))
    }

    @Test("a deaf span silences the line for exactly its samples, then lets it through again")
    func deafSpan() throws {
        let rate = 44_100.0
        let cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100,
                                       configuration: .symmetric(.deaf(from: 300 / rate, for: 200 / rate)), peer: SteadyPeer())
        var heard: [Float] = []
        let output = [Float](repeating: 0, count: 256)
        var input = [Float](repeating: 0, count: 256)
        for _ in 0..<4 {
            try output.withUnsafeBufferPointer { out in
                try input.withUnsafeMutableBufferPointer { try cable.transfer(output: out, input: $0) }
            }
            heard += input
        }
        #expect(heard[0..<300].allSatisfy { $0 == 0.5 })
        #expect(heard[300..<500].allSatisfy { $0 == 0 })
        #expect(heard[500...].allSatisfy { $0 == 0.5 })
    }
}

/// A device that plays a steady 0.5 whatever it hears.
final class SteadyPeer: CablePeer {
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        for i in output.indices { output[i] = 0.5 }
    }
}

@Suite("Reader not open")
struct ReaderNotOpenTests {
    /// Asks `reader` for its battery on another task and waits at most 2 s of wall time
    /// for the answer, sleeping (not blocking a thread) in between: nil when none came.
    static func batteryWithin2Seconds(_ reader: Reader) async throws -> Result<BatteryInfo, ReaderError>? {
        let box = Mutex<Result<BatteryInfo, ReaderError>?>(nil)
        Task {
            let result: Result<BatteryInfo, ReaderError>
            do throws(ReaderError) { result = .success(try await reader.batteryInfo()) } catch { result = .failure(error) }
            box.withLock { $0 = result }
        }
        for _ in 0..<200 {
            if let result = box.withLock({ $0 }) { return result }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    @Test("a request to a reader never opened, or closed, fails at once with reader_not_open")
    func notOpenFailsAtOnce() async throws {
        let reader = Reader(name: "sim:7") {
            SimulatedCablePort(name: "sim:7", sampleRate: 44_100, configuration: .clean, peer: SilentPeer())
        }
        #expect(try await Self.batteryWithin2Seconds(reader) == .failure(.notOpen(port: "sim:7")))
        #expect(ReaderError.notOpen(port: "sim:7").code == "reader_not_open")
        reader.openConnection()
        reader.closeConnection()
        #expect(try await Self.batteryWithin2Seconds(reader) == .failure(.notOpen(port: "sim:7")))
    }
}
