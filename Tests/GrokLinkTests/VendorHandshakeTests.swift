#if canImport(Glibc)
import Glibc
#endif
import GrokBasics
import GrokAudio
import GrokLink
import Testing

@Suite("Vendor modem handshake")
struct VendorHandshakeTests {
    @Test("host and device connect over the simulated cable at every setting, 44.1 and 48 kHz, in under 0.8 s of audio",
          arguments: [44_100, 48_000], VendorModemSetting.supportedSamplesPerBit)
    func connects(rate: Int, spb: Int) throws {
        let bench = try VendorBench(sampleRate: rate)
        #expect(try bench.connect(samplesPerBit: spb))
        #expect(bench.host.state == .connected(samplesPerBit: spb))
        #expect(bench.device.modem.state == .connected(samplesPerBit: spb))
        let samples = try #require(bench.host.statistics.lastHandshakeSamples)
        // Request 3 windows, answer 10 ignored + 2, idle 4: 19 windows at least.
        #expect(samples >= 19 * 1260)
        #expect(Double(samples) / Double(rate) < 0.8)
        #expect(bench.host.statistics.handshakes == 1)
        // And bytes flow both ways.
        let r = try bench.roundTrips(5, size: 8)
        #expect(r.delivered == 5 && r.attempts == 5)
    }

    @Test("the host at 48 kHz announces its rate with 958 Hz and the reader answers 2666.66 Hz before the answer tone")
    func rateAnnouncement() throws {
        let bench = try VendorBench(sampleRate: 48_000)
        #expect(try bench.connect(samplesPerBit: 12))
        let states = bench.host.drainEvents().compactMap { event -> VendorModemState? in
            if case .stateChanged(_, let to, _) = event { return to }
            return nil
        }
        #expect(states == [.awaitingRequest, .announcingRate, .proposing(samplesPerBit: 12), .confirming(samplesPerBit: 12),
                           .connected(samplesPerBit: 12)])
    }

    @Test("the non-symmetric handshake adds 400 Hz from the host and 3675 Hz from the reader")
    func nonSymmetric() throws {
        var c = VendorModem.Configuration()
        c.sendNonSymmetric = true
        let bench = try VendorBench(host: c)
        #expect(try bench.connect(samplesPerBit: 24))
        let states = bench.host.drainEvents().compactMap { event -> VendorModemState? in
            if case .stateChanged(_, let to, _) = event { return to }
            return nil
        }
        #expect(states.contains(.announcingNonSymmetric))
        #expect(bench.host.isConnected)
    }

    @Test("the host's handshake follows the vendor's phases at exact window boundaries (time in samples)")
    func phaseTimes() throws {
        let bench = try VendorBench(block: 1260)
        #expect(try bench.connect(samplesPerBit: 12))
        let times = bench.host.drainEvents().compactMap { event -> Int64? in
            if case .stateChanged(_, _, let at) = event { return at }
            return nil
        }
        // Opened at 0; every later change lands on a 1260-sample window boundary.
        #expect(times.first == 0)
        #expect(times.allSatisfy { $0 % 1260 == 0 })
        // Proposing -> confirming takes the 10 ignored windows plus the two "found low" ones.
        #expect(times[2] - times[1] == 12 * 1260)
        // Confirming -> connected: four windows.
        #expect(times[3] - times[2] == 4 * 1260)
    }

    @Test("a host fed the same samples in any chunking plays the same samples, changes state at the same samples and receives the same bytes (drip-feed)")
    func dripFeed() throws {
        // Record what a host hears from an echoing device over a noisy cable, with bytes sent.
        let bench = try VendorBench(cable: .symmetric(.noisy(snrDB: 20)))
        try bench.host.open(samplesPerBit: 10)
        var heard: [Float] = []
        var input = [Float](repeating: 0, count: 256)
        var output = input
        let sendAt = 256 * 172
        let data: [UInt8] = Array(0..<40)
        while heard.count < 2 * 44_100 {
            if heard.count == sendAt { bench.host.send(data) }
            try output.withUnsafeBufferPointer { o in try input.withUnsafeMutableBufferPointer { try bench.cable.transfer(output: o, input: $0) } }
            input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { bench.host.process(input: i, output: $0) } }
            heard += input
        }
        #expect(bench.host.takeReceived() == data, "\(bench.host.state) \(bench.device.modem.state) \(bench.host.statistics)")
        func replay(_ chunk: (inout SplitMix64) -> Int) throws -> ([Float], [VendorModemEvent], [UInt8]) {
            let host = try VendorModem(role: .host, sampleRate: 44_100)
            try host.open(samplesPerBit: 10)
            var played = [Float](repeating: 0, count: heard.count)
            var received: [UInt8] = []
            var rng = SplitMix64(seed: 3)
            var i = 0
            while i < heard.count {
                if i == sendAt { host.send(data) }
                var n = Swift.min(chunk(&rng), heard.count - i)
                if i < sendAt { n = Swift.min(n, sendAt - i) }
                heard.withUnsafeBufferPointer { h in
                    played.withUnsafeMutableBufferPointer { p in
                        host.process(input: UnsafeBufferPointer(rebasing: h[i..<(i + n)]),
                                     output: UnsafeMutableBufferPointer(rebasing: p[i..<(i + n)]))
                    }
                }
                received += host.takeReceived()
                i += n
            }
            return (played, host.drainEvents(), received)
        }
        let whole = try replay { _ in Int.max / 2 }
        #expect(whole.2 == data)
        #expect(whole.1.contains { if case .stateChanged(_, .connected, _) = $0 { true } else { false } })
        let one = try replay { _ in 1 }
        #expect(one.0 == whole.0 && one.1 == whole.1 && one.2 == whole.2)
        let random = try replay { Int($0.next() % 2000) + 1 }
        #expect(random.0 == whole.0 && random.1 == whole.1 && random.2 == whole.2)
    }

    @Test("connected, a device that stops drops the host back to the handshake within six windows; a restart reconnects")
    func carrierLoss() throws {
        let bench = try VendorBench()
        #expect(try bench.connect(samplesPerBit: 12))
        _ = bench.host.drainEvents()
        let stopped = bench.host.now
        bench.device.modem.stop()
        #expect(try bench.run(seconds: 1) { bench.host.state == .awaitingRequest })
        #expect(bench.host.now - stopped <= 7 * 1260)
        #expect(bench.host.statistics.carrierLosses == 1)
        #expect(bench.host.drainEvents().contains { if case .carrierLost = $0 { true } else { false } })
        try bench.device.modem.start()
        #expect(try bench.run(seconds: 2) { bench.host.isConnected && bench.device.modem.isConnected })
        #expect(bench.host.statistics.handshakes == 2)
    }

    @Test("unplugged while connected, both ends drop to the handshake")
    func unplugged() throws {
        let bench = try VendorBench()
        #expect(try bench.connect(samplesPerBit: 12))
        bench.cable.plugged = false
        #expect(try bench.run(seconds: 1) { bench.host.state == .awaitingRequest && bench.device.modem.state == .requesting })
        bench.cable.plugged = true
        #expect(try bench.run(seconds: 2) { bench.host.isConnected && bench.device.modem.isConnected })
    }

    @Test("a reader that requests but never moves to the idle tone makes the host give up after 10 + 80 windows, and listen again")
    func giveUp() throws {
        let request = { (t: Int) -> Float in Float(sin(2 * Double.pi * 3150 * Double(t) / 44_100)) }
        let host = try VendorModem(role: .host, sampleRate: 44_100)
        try host.open(samplesPerBit: 12)
        var input = [Float](repeating: 0, count: 1260)
        var output = input
        var t = 0
        var gaveUpAt: Int64?
        var proposedAt: Int64?
        while t < 44_100 * 4 && gaveUpAt == nil {
            for i in 0..<1260 { input[i] = request(t + i) }
            input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { host.process(input: i, output: $0) } }
            for e in host.drainEvents() {
                if case .stateChanged(_, .proposing, let at) = e { proposedAt = at }
                if case .handshakeGaveUp(.proposing, let at) = e { gaveUpAt = at }
            }
            t += 1260
        }
        let p = try #require(proposedAt)
        let g = try #require(gaveUpAt)
        #expect(p == 3 * 1260)
        #expect(g - p == 90 * 1260)
        #expect(host.state == .awaitingRequest)
        #expect(host.statistics.handshakeGiveUps == 1)
    }

    @Test("the host stays silent until it hears the request, and a device is refused open() and a host start()")
    func roles() throws {
        let host = try VendorModem(role: .host, sampleRate: 44_100)
        #expect(throws: VendorModemError.wrongRole(operation: "start")) { try host.start() }
        #expect(throws: VendorModemError.unsupportedSetting(samplesPerBit: 14, sampleRate: 44_100)) { try host.open(samplesPerBit: 14) }
        try host.open()
        let input = [Float](repeating: 0, count: 4410)
        var output = [Float](repeating: 1, count: 4410)
        input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { host.process(input: i, output: $0) } }
        #expect(output.allSatisfy { $0 == 0 })
        let device = try VendorModem(role: .device, sampleRate: 44_100)
        #expect(throws: VendorModemError.wrongRole(operation: "open")) { try device.open() }
        host.send([1, 2, 3])
        #expect(host.statistics.bytesDroppedNotConnected == 3)
    }
}

@Suite("Vendor modem error rule")
struct VendorModemErrorRuleTests {
    @Test("more than four errors reported within about a second of good windows drop the link; four do not")
    func tooManyErrors() throws {
        let bench = try VendorBench()
        #expect(try bench.connect(samplesPerBit: 12))
        for _ in 0..<4 { bench.host.countError() }
        try bench.run(seconds: 1.2) { false }
        #expect(bench.host.isConnected)
        for _ in 0..<5 { bench.host.countError() }
        #expect(try bench.run(seconds: 1.2) { !bench.host.isConnected })
        #expect(bench.host.statistics.errorDrops == 1)
        #expect(bench.host.drainEvents().contains { if case .tooManyErrors(5, _) = $0 { true } else { false } })
        #expect(try bench.run(seconds: 2) { bench.host.isConnected })
    }
}
