#if canImport(Glibc)
import Glibc
#endif
import GrokBasics
import GrokAudio
import GrokLink

/// A device-side vendor modem behind the simulated cable; echoes every byte it receives when
/// `echo` is set.
final class VendorDevicePeer: CablePeer {
    let modem: VendorModem
    var echo: Bool
    init(sampleRate: Int, echo: Bool = true, configuration: VendorModem.Configuration = .init()) throws {
        modem = try VendorModem(role: .device, sampleRate: sampleRate, configuration: configuration)
        self.echo = echo
        try modem.start()
    }
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        modem.process(input: input, output: output)
        let r = modem.takeReceived()
        if echo, !r.isEmpty { modem.send(r) }
    }
}

/// Host modem + simulated cable + a device peer, pumped in fixed blocks.
final class VendorBench {
    let host: VendorModem
    let device: VendorDevicePeer
    let cable: SimulatedCablePort
    let block: Int
    private var out: [Float]
    private var inp: [Float]
    /// Every byte the host received, in order.
    var hostReceived: [UInt8] = []

    init(sampleRate: Int = 44_100, cable configuration: CableConfiguration = .clean, block: Int = 256,
         host hostConfiguration: VendorModem.Configuration = .init()) throws {
        host = try VendorModem(role: .host, sampleRate: sampleRate, configuration: hostConfiguration)
        device = try VendorDevicePeer(sampleRate: sampleRate)
        cable = SimulatedCablePort(name: "vendor", sampleRate: sampleRate, configuration: configuration, peer: device)
        self.block = block
        out = [Float](repeating: 0, count: block)
        inp = [Float](repeating: 0, count: block)
    }

    /// One block through the cable and the host.
    func pump() throws {
        try out.withUnsafeBufferPointer { o in try inp.withUnsafeMutableBufferPointer { try cable.transfer(output: o, input: $0) } }
        inp.withUnsafeBufferPointer { i in out.withUnsafeMutableBufferPointer { host.process(input: i, output: $0) } }
        hostReceived += host.takeReceived()
    }

    /// Pumps until `done` or `seconds` of audio have passed; returns whether `done` held.
    @discardableResult
    func run(seconds: Double, until done: () -> Bool) throws -> Bool {
        let limit = host.now + Int64(seconds * Double(host.sampleRate))
        while host.now < limit {
            if done() { return true }
            try pump()
        }
        return done()
    }

    /// Opens the host at `samplesPerBit` and waits for both ends to connect.
    func connect(samplesPerBit: Int, seconds: Double = 3) throws -> Bool {
        try host.open(samplesPerBit: samplesPerBit)
        return try run(seconds: seconds) { host.isConnected && device.modem.isConnected }
    }

    struct RoundTrips {
        var delivered = 0
        var lost = 0
        /// Attempts whose echo came back complete but different.
        var corruptedAttempts = 0
        /// Attempts whose echo came back short.
        var shortAttempts = 0
        var attempts = 0
        var reconnects = 0
    }

    /// `count` round trips of `size`-byte blocks through the echoing device. A block whose echo
    /// is not exactly right is sent again (up to `tries` times) after the line has been quiet:
    /// what the packet layer above does with its crc8 and retries.
    func roundTrips(_ count: Int, size: Int, tries: Int = 5, seed: UInt64 = 1) throws -> RoundTrips {
        var result = RoundTrips()
        var rng = SplitMix64(seed: seed)
        let spb = host.samplesPerBit
        let byteTime = Double(10 * spb) / Double(host.sampleRate)
        for _ in 0..<count {
            let data = (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            var ok = false
            for _ in 0..<tries {
                if !host.isConnected {
                    result.reconnects += 1
                    _ = try run(seconds: 5) { host.isConnected && device.modem.isConnected }
                }
                result.attempts += 1
                hostReceived.removeAll()
                host.send(data)
                // The echo's last byte arrives about two block times plus a few bytes later.
                try run(seconds: 2 * Double(size) * byteTime + 0.05 + 8 * byteTime) { hostReceived.count >= size }
                if hostReceived.count == size && hostReceived == data {
                    ok = true
                    break
                }
                if hostReceived.count >= size { result.corruptedAttempts += 1 } else { result.shortAttempts += 1 }
                // Let the line go quiet before trying again.
                try run(seconds: 4 * Double(size) * byteTime + 0.05) { false }
            }
            if ok { result.delivered += 1 } else { result.lost += 1 }
        }
        return result
    }
}

/// Feeds a host modem a signal and plays its output nowhere; returns whether it ever connected.
func hostConnects(on signal: (Int) -> Float, seconds: Double, sampleRate: Int = 44_100, samplesPerBit: Int = 12) throws -> (connected: Bool, host: VendorModem) {
    let host = try VendorModem(role: .host, sampleRate: sampleRate)
    try host.open(samplesPerBit: samplesPerBit)
    var input = [Float](repeating: 0, count: 512)
    var output = [Float](repeating: 0, count: 512)
    var t = 0
    var connected = false
    while Double(t) < seconds * Double(sampleRate) {
        for i in 0..<512 { input[i] = signal(t + i) }
        input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { host.process(input: i, output: $0) } }
        if host.isConnected { connected = true }
        t += 512
    }
    return (connected, host)
}
