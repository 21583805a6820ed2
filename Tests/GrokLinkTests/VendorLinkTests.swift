import GrokAudio
import GrokLink
import Testing

/// A device-side ``VendorLink`` behind the simulated cable that answers every request with
/// its payload reversed (long form), so a test can tell the answer was computed from the
/// request that arrived.
final class ReversingDevice: CablePeer {
    let link: VendorLink
    private(set) var executed = 0
    /// The device's sample clock when each request had arrived whole.
    private(set) var arrivals: [Int64] = []
    init(sampleRate: Int) throws {
        link = try VendorLink(role: .device, sampleRate: sampleRate)
        try link.start()
        link.packets.onRequest = { [unowned self] request in
            executed += 1
            arrivals.append(link.now)
            return VendorReply(ResponsePacket(id: 1, data: request.payload.reversed()))
        }
    }
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        link.process(input: input, output: output)
        _ = link.drainEvents()
    }
}

@Suite("The vendor link: modem and packet layer pumped together over a cable")
struct VendorLinkTests {
    /// Host link + driver over a simulated cable to a reversing device.
    struct Bench {
        let device: ReversingDevice
        let driver: LinkDriver<VendorLink>
        var host: VendorLink { driver.engine }
        init(_ cable: CableConfiguration = .clean, sampleRate: Int = 44_100) throws {
            device = try ReversingDevice(sampleRate: sampleRate)
            let port = SimulatedCablePort(name: "vendor-link", sampleRate: sampleRate, configuration: cable, peer: device)
            driver = LinkDriver(port: port, engine: try VendorLink(role: .host, sampleRate: sampleRate))
        }

        /// Sends one request and pumps until its answer or failure; returns the answer's data.
        func call(_ command: UInt8, _ payload: [UInt8]) throws -> (data: [UInt8]?, events: [VendorLinkEvent]) {
            try host.send(command: command, payload: payload)
            var seen: [VendorLinkEvent] = []
            var answer: [UInt8]?
            var done = false
            _ = try driver.run(forAtMost: 30) {
                for event in host.drainEvents() {
                    seen.append(event)
                    if case .packet(.completed(_, let response)) = event { answer = response.data; done = true }
                    if case .packet(.failed) = event { done = true }
                }
                return done
            }
            return (answer, seen)
        }
    }

    @Test("a host connects to a device and each request gets the answer computed from it")
    func requestsAreAnswered() throws {
        let bench = try Bench()
        try bench.host.open(samplesPerBit: 12)
        #expect(try bench.driver.run(forAtMost: 2) { bench.host.isConnected && bench.device.link.isConnected })
        for n in [1, 7, 100, 250] {
            let payload = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ n) }
            let (answer, _) = try bench.call(0x0c, payload)
            #expect(answer == payload.reversed())
        }
        #expect(bench.device.executed == 4)
        #expect(bench.host.packets.statistics.sendRetries == 0)
    }

    @Test("back to back: the host's next request goes on the air in the block after the one that heard the answer (no block idle in between)")
    func nextRequestFollowsTheAnswer() throws {
        let bench = try Bench()
        try bench.host.open(samplesPerBit: 8)
        #expect(try bench.driver.run(forAtMost: 2) { bench.host.isConnected && bench.device.link.isConnected })
        for _ in 0..<9 { _ = try bench.call(0x0c, [1, 2, 3, 4]) }
        let cycles = zip(bench.device.arrivals.dropFirst(), bench.device.arrivals).map { $0 - $1 }
        // A cycle: the request (7 bytes) and the answer (7 bytes) on the air at 8 spb, 70 bits
        // each, 1120 samples, and what the two ends leave idle: 1792 samples (7 blocks). A
        // request queued between two blocks used to wait out one more (2048): the modem
        // filled the block before the packet layer handed it the request.
        let air = Int64(2 * 7 * 10 * 8)
        #expect(cycles.count == 8 && cycles.allSatisfy { $0 < air + 800 }, "\(cycles)")
    }

    @Test("a host connects at each setting and its requests are answered", arguments: [8, 12, 24, 72])
    func connectsAtEachSetting(spb: Int) throws {
        let bench = try Bench()
        try bench.host.open(samplesPerBit: spb)
        #expect(try bench.driver.run(forAtMost: 2) { bench.host.isConnected })
        #expect(bench.host.samplesPerBit == spb)
        let (answer, _) = try bench.call(0x0c, [1, 2, 3])
        #expect(answer == [3, 2, 1])
    }

    @Test("a request to a device that went silent fails after its tries and the host handshakes again")
    func failedRequestRestartsHandshake() throws {
        let bench = try Bench()
        try bench.host.open(samplesPerBit: 12)
        #expect(try bench.driver.run(forAtMost: 2) { bench.host.isConnected })
        bench.device.link.stop()
        let (answer, events) = try bench.call(0x0c, [9])
        #expect(answer == nil)
        #expect(events.contains { if case .packet(.failed(_, .connectionLost)) = $0 { true } else { false } }
            || events.contains { if case .packet(.failed(_, .retriesExhausted)) = $0 { true } else { false } })
        // The device comes back: the host, listening again, connects to it.
        try bench.device.link.start()
        #expect(try bench.driver.run(forAtMost: 5) { bench.host.isConnected })
        #expect(try bench.call(0x0c, [4, 5]).data == [5, 4])
    }

    @Test("noise at 15 dB SNR and a +500 ppm device clock lose no request")
    func impairedCable() throws {
        var cable = CableConfiguration.clean
        cable.hostToDevice = .noisy(snrDB: 15)
        cable.deviceToHost = .noisy(snrDB: 15)
        cable.deviceClockPPM = 500
        let bench = try Bench(cable)
        try bench.host.open(samplesPerBit: 12)
        #expect(try bench.driver.run(forAtMost: 3) { bench.host.isConnected })
        for i in 0..<20 {
            let payload = (0..<40).map { UInt8(truncatingIfNeeded: $0 ^ i) }
            #expect(try bench.call(0x0c, payload).data == payload.reversed())
        }
        #expect(bench.device.executed == 20)
    }
}
