import GrokAudio
@testable import GrokLink
import Testing

/// Two engines wired back to back, sample for sample, with a one-block delay each way.
final class DirectPair {
    let host: LinkEngine
    let device: LinkEngine
    var toDevice: [Float]
    var toHost: [Float]
    let block: Int
    var echo = true

    init(block: Int = 256, host hostConfig: LinkConfiguration = LinkConfiguration(),
         device deviceConfig: LinkConfiguration = LinkConfiguration()) {
        host = LinkEngine(role: .host, sampleRate: 44_100, configuration: hostConfig)
        device = LinkEngine(role: .device, sampleRate: 44_100, configuration: deviceConfig)
        toDevice = [Float](repeating: 0, count: block)
        toHost = [Float](repeating: 0, count: block)
        self.block = block
    }

    func step() {
        var hostOut = [Float](repeating: 0, count: block)
        var devOut = [Float](repeating: 0, count: block)
        toHost.withUnsafeBufferPointer { inp in hostOut.withUnsafeMutableBufferPointer { host.process(input: inp, output: $0) } }
        toDevice.withUnsafeBufferPointer { inp in devOut.withUnsafeMutableBufferPointer { device.process(input: inp, output: $0) } }
        toDevice = hostOut
        toHost = devOut
        if echo { while let m = device.receive() { try? device.send(m) } }
    }

    /// Steps until `condition` or `limit` samples; returns samples used.
    @discardableResult
    func run(maxSamples: Int, until condition: () -> Bool) -> Int {
        var used = 0
        while used < maxSamples && !condition() {
            step()
            used += block
        }
        return used
    }
}

@Suite("Link pair")
struct PairTests {
    @Test("handshake completes and the greeting arrives")
    func handshake() {
        let pair = DirectPair()
        pair.device.greeting = Array(repeating: 0x42, count: 48)
        pair.host.connect()
        var greeting: [UInt8]?
        let used = pair.run(maxSamples: 44_100) {
            greeting = greeting ?? pair.host.receive()
            return greeting != nil
        }
        #expect(greeting == Array(repeating: 0x42, count: 48))
        #expect(pair.host.state == .connected)
        print("handshake samples", used, "ms", Double(used) / 44.1)
    }

    @Test("mode upgrade on a clean line reaches the top of the ladder")
    func upgrade() {
        let pair = DirectPair()
        pair.host.connect()
        pair.run(maxSamples: 44_100 * 3) { pair.host.state == .connected && !pair.host.negotiating && pair.host.mode != .base }
        print("mode", pair.host.mode, pair.device.mode, pair.host.drainEvents())
        #expect(pair.host.mode == LinkMode.ladder.last)
        #expect(pair.device.mode == pair.host.mode)
    }

    @Test("messages echo back intact")
    func echo() {
        let pair = DirectPair()
        pair.host.connect()
        pair.run(maxSamples: 44_100 * 3) { pair.host.state == .connected && !pair.host.negotiating }
        var rng = SplitMix64(seed: 7)
        var sent: [[UInt8]] = []
        for i in 0..<20 {
            let m = (0..<(1 + i * 37)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            sent.append(m)
            try? pair.host.send(m)
        }
        var got: [[UInt8]] = []
        pair.run(maxSamples: 44_100 * 30) {
            while let m = pair.host.receive() { got.append(m) }
            return got.count == sent.count
        }
        #expect(got == sent)
        print(pair.host.statistics)
    }
}

@Suite("Link goodput probe")
struct GoodputProbe {
    @Test("bulk goodput", arguments: [0.0, 0.01])
    func bulk(damage: Double) {
        var hc = LinkConfiguration()
        hc.frameDamageProbability = damage
        let pair = DirectPair(host: hc)
        pair.echo = false
        pair.host.connect()
        pair.run(maxSamples: 44_100 * 3) { pair.host.state == .connected && !pair.host.negotiating }
        let start = pair.host.now
        let total = 200_000
        let msg = [UInt8](repeating: 0xA5, count: 20_000)
        for _ in 0..<(total / msg.count) { try? pair.host.send(msg) }
        var got = 0
        pair.run(maxSamples: 44_100 * 600) {
            while let m = pair.device.receive() { got += m.count }
            return got >= total
        }
        let seconds = Double(pair.host.now - start) / 44_100
        let ratio = Double(total * 8) / (pair.host.mode.bitRate * seconds)
        print("damage", damage, "mode", pair.host.mode, "ratio", ratio, pair.host.statistics, pair.device.statistics)
    }
}
