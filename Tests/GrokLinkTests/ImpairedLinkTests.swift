#if canImport(Glibc)
import Glibc
#endif
import GrokAudio
@testable import GrokLink
import Testing

/// A device-side engine that echoes every message, behind a simulated cable.
final class EchoDevice: CablePeer {
    let engine: LinkEngine
    init(sampleRate: Int = 44_100, configuration: LinkConfiguration = LinkConfiguration()) {
        engine = LinkEngine(role: .device, sampleRate: sampleRate, configuration: configuration)
    }
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        engine.process(input: input, output: output)
        while let m = engine.receive() { try? engine.send(m) }
    }
}

/// Host engine + simulated cable + echoing device.
struct CableBench {
    let device: EchoDevice
    let cable: SimulatedCablePort
    let driver: LinkDriver<LinkEngine>
    var host: LinkEngine { driver.engine }

    init(_ configuration: CableConfiguration, block: Int = 256, host hostConfig: LinkConfiguration = LinkConfiguration()) {
        device = EchoDevice()
        cable = SimulatedCablePort(name: "test", sampleRate: 44_100, configuration: configuration, peer: device)
        driver = LinkDriver(port: cable, engine: LinkEngine(role: .host, sampleRate: 44_100, configuration: hostConfig),
                            blockSize: block)
    }

    /// Connects and waits for mode negotiation to settle.
    func connect() throws -> Bool {
        host.connect()
        return try driver.run(forAtMost: 10) { host.state == .connected && !host.negotiating }
    }

    /// `count` request/response round trips of identify-sized messages; returns (ok, wrong, lost).
    func roundTrips(_ count: Int, seed: UInt64) throws -> (ok: Int, wrong: Int, lost: Int) {
        var rng = SplitMix64(seed: seed)
        var ok = 0, wrong = 0, lost = 0
        for i in 0..<count {
            let request = (0..<12).map { _ in UInt8(truncatingIfNeeded: rng.next()) } + [UInt8(truncatingIfNeeded: i)]
            guard host.state == .connected else {
                _ = try driver.run(forAtMost: 10) { host.state == .connected && !host.negotiating }
                lost += 1
                continue
            }
            do { try host.send(request) } catch { lost += 1; continue }
            var reply: [UInt8]?
            _ = try driver.run(forAtMost: 10) {
                reply = host.receive()
                return reply != nil || host.state != .connected
            }
            if reply == nil { lost += 1 } else if reply == request { ok += 1 } else { wrong += 1 }
        }
        return (ok, wrong, lost)
    }
}

@Suite("Impaired link")
struct ImpairedLinkTests {
    static let conditions: [(String, CableConfiguration)] = [
        ("snr15", .symmetric(.noisy(snrDB: 15))),
        ("gain-20", .symmetric(.quiet)),
        ("dc", .symmetric(.dcOffset)),
        ("inverted", .symmetric(.inverted)),
        ("phone", .symmetric(.phoneInput)),
        ("clock+500", CableConfiguration(deviceClockPPM: 500, deviceClockDriftPPM: 50)),
        ("clock-500", CableConfiguration(deviceClockPPM: -500, deviceClockDriftPPM: 50)),
        ("dropouts", .symmetric(.dropouts)),
    ]

    @Test("round trips survive each impairment", arguments: 0..<8)
    func survive(index: Int) throws {
        let (name, configuration) = Self.conditions[index]
        let bench = CableBench(configuration)
        #expect(try bench.connect())
        let n = Int(Environment.value("GROK_ROUNDTRIPS") ?? "") ?? 100
        let result = try bench.roundTrips(n, seed: UInt64(index))
        print(name, bench.host.mode, result, bench.host.statistics, bench.device.engine.statistics)
        #expect(result.ok == n)
    }
}

enum Environment {
    static func value(_ name: String) -> String? {
        guard let p = getenv(name) else { return nil }
        return String(cString: p)
    }
}

@Suite("Link fallback")
struct LinkFallbackTests {
    @Test("frames that are never received whole drop the link back to handshaking (repeated errors)")
    func repeatedErrors() throws {
        // Every DATA frame the host sends arrives damaged (the benchmark's damage hook at
        // 100 %): the device NACKs each one, so the host keeps hearing valid frames while its
        // message never gets through.
        var configuration = LinkConfiguration()
        configuration.frameDamageProbability = 1
        let bench = CableBench(.clean, host: configuration)
        #expect(try bench.connect())
        _ = bench.host.drainEvents()
        try bench.host.send([1, 2, 3])
        #expect(try bench.driver.run(forAtMost: 30) { bench.host.state != .connected })
        #expect(bench.host.state == .connecting)
        let events = bench.host.drainEvents()
        #expect(events.contains(.connectionLost(.repeatedErrors, failedMessages: 1)), "\(events)")
        #expect(bench.host.statistics.retries > LinkConfiguration().maxRetries)
        #expect(bench.host.statistics.sendFailures == 1)
        #expect(bench.device.engine.statistics.crcMismatches > LinkConfiguration().maxRetries)
        #expect(bench.host.mode == .base)
        // And it comes back by itself.
        #expect(try bench.driver.run(forAtMost: 5) { bench.host.state == .connected })
    }

    @Test("silence drops the link back to handshaking (loss of signal)")
    func lossOfSignal() throws {
        let bench = CableBench(.clean)
        #expect(try bench.connect())
        _ = bench.host.drainEvents()
        bench.cable.plugged = false
        #expect(try bench.driver.run(forAtMost: 5) { bench.host.state != .connected })
        #expect(bench.host.drainEvents().contains(.connectionLost(.lossOfSignal, failedMessages: 0)))
        // The device forgets its session too, a little later.
        _ = try bench.driver.run(forAtMost: 5) { bench.device.engine.state == .notConnected }
        #expect(bench.device.engine.state == .notConnected)
    }
}
