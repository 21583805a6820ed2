import Foundation
import Testing

@testable import GrokAudio

/// Signal helpers for the cable, impairment and resampler tests.
enum CableSignals {
    static func tone(
        frequency: Double, amplitude: Double, count: Int, sampleRate: Int, start: Int = 0, phase: Double = 0
    ) -> [Float] {
        let omega = 2 * Double.pi * frequency / Double(sampleRate)
        return (0..<count).map { Float(amplitude * sin(omega * Double(start + $0) + phase)) }
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot()
    }

    static func decibels(_ ratio: Double) -> Double {
        20 * log10(ratio)
    }

    /// The frequency of a tone in cycles per sample, from its first and last upward zero
    /// crossings (interpolated linearly).
    static func frequency(_ samples: [Float]) -> Double {
        var crossings: [Double] = []
        for i in 1..<samples.count where samples[i - 1] < 0 && samples[i] >= 0 {
            let a = Double(samples[i - 1])
            let b = Double(samples[i])
            crossings.append(Double(i - 1) + a / (a - b))
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) / (last - first)
    }
}

/// An emulated device for tests: records what it hears and answers with an echo, silence
/// or a constant.
final class CableTestPeer: CablePeer {
    enum Reply {
        case echo
        case constant(Float)
    }

    var reply: Reply
    var heard: [Float] = []
    var record: Bool
    var blockSizes: [Int] = []

    init(reply: Reply = .echo, record: Bool = true) {
        self.reply = reply
        self.record = record
    }

    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        if record {
            heard.append(contentsOf: input)
            blockSizes.append(input.count)
        }
        switch reply {
        case .echo:
            for i in input.indices { output[i] = input[i] }
        case .constant(let value):
            for i in output.indices { output[i] = value }
        }
    }
}

@Suite("SimulatedCable")
struct CableTests {
    let rate = 44100

    /// Transfers `output` in blocks of `block` samples and returns what the host heard.
    private func run(_ port: SimulatedCablePort, _ output: [Float], block: Int = 441) throws -> [Float] {
        var input = [Float](repeating: 0, count: output.count)
        try output.withUnsafeBufferPointer { out in
            try input.withUnsafeMutableBufferPointer { into in
                var start = 0
                while start < out.count {
                    let end = min(start + block, out.count)
                    try port.transfer(
                        output: UnsafeBufferPointer(rebasing: out[start..<end]),
                        input: UnsafeMutableBufferPointer(rebasing: into[start..<end]))
                    start = end
                }
            }
        }
        return input
    }

    @Test("a clean cable with matched clocks is a perfect wire")
    func cleanIsExact() throws {
        let peer = CableTestPeer()
        let port = SimulatedCablePort(name: "sim:1", sampleRate: rate, configuration: .clean, peer: peer)
        let signal = CableSignals.tone(frequency: 1500, amplitude: 0.7, count: 10_000, sampleRate: rate)
        let heard = try run(port, signal, block: 333)
        #expect(peer.heard == signal)
        #expect(heard == signal)
        #expect(port.deviceSamples == 10_000)
        #expect(port.hostSamples == 10_000)
        #expect(port.jackPlugged == true)
        #expect(port.name == "sim:1" && port.sampleRate == rate)
    }

    @Test("each direction's impairments apply to that direction only")
    func directions() throws {
        let configuration = CableConfiguration(
            hostToDevice: Impairments(gainDB: -6.020599913), deviceToHost: .inverted)
        let peer = CableTestPeer(reply: .constant(0.25))
        let port = SimulatedCablePort(name: "sim:1", sampleRate: rate, configuration: configuration, peer: peer)
        let heard = try run(port, [Float](repeating: 0.5, count: 1000))
        #expect(peer.heard.allSatisfy { abs($0 - 0.25) < 1e-6 })
        #expect(heard.allSatisfy { $0 == -0.25 })
    }

    @Test("the device takes in N × (1 + ppm) samples per N host samples", arguments: [500.0, -500, 100, -37])
    func clockOffset(ppm: Double) throws {
        let peer = CableTestPeer(reply: .echo)
        let port = SimulatedCablePort(
            name: "sim:1", sampleRate: rate, configuration: CableConfiguration(deviceClockPPM: ppm), peer: peer)
        // Irregular block sizes, one second of host audio in all.
        let sizes = [441, 1, 0, 1000, 7, 2048]
        var total = 0
        var index = 0
        let zeros = [Float](repeating: 0, count: 4096)
        var heard = [Float](repeating: 0, count: 4096)
        while total < rate {
            let n = min(sizes[index % sizes.count], rate - total)
            index += 1
            let before = port.deviceSamples
            try zeros.withUnsafeBufferPointer { out in
                try heard.withUnsafeMutableBufferPointer { into in
                    try port.transfer(
                        output: UnsafeBufferPointer(rebasing: out[0..<n]),
                        input: UnsafeMutableBufferPointer(rebasing: into[0..<n]))
                }
            }
            total += n
            let m = Double(port.deviceSamples - before)
            #expect(abs(m - Double(n) * (1 + ppm * 1e-6)) <= 1)
        }
        let expected = Double(rate) * (1 + ppm * 1e-6)
        #expect(abs(Double(port.deviceSamples) - expected) <= 2)
        #expect(peer.heard.count == Int(port.deviceSamples))
        #expect(port.hostSamples == Int64(rate))
    }

    @Test("a tone arrives at the device shifted by the clock error", arguments: [500.0, -500])
    func toneShift(ppm: Double) throws {
        let peer = CableTestPeer(reply: .echo)
        let port = SimulatedCablePort(
            name: "sim:1", sampleRate: rate, configuration: CableConfiguration(deviceClockPPM: ppm), peer: peer)
        let frequency = 3000.0
        _ = try run(port, CableSignals.tone(frequency: frequency, amplitude: 0.5, count: rate, sampleRate: rate))
        // Skip the resampler's start-up (the first samples come from silence).
        let measured = CableSignals.frequency(Array(peer.heard.dropFirst(64))) * Double(rate)
        let shiftPPM = (measured / frequency - 1) * 1e6
        let expectedPPM = (1 / (1 + ppm * 1e-6) - 1) * 1e6
        #expect(abs(shiftPPM - expectedPPM) < 2, "shift \(shiftPPM) ppm")
    }

    @Test("with drift the device's sample count follows the integral of the ppm curve")
    func drift() throws {
        let ppm = 100.0
        let driftPPM = 300.0
        let period = 2.0
        let configuration = CableConfiguration(
            deviceClockPPM: ppm, deviceClockDriftPPM: driftPPM, driftPeriodSeconds: period)
        let port = SimulatedCablePort(
            name: "sim:1", sampleRate: rate, configuration: configuration, peer: CableTestPeer(record: false))
        let block = 441
        let zeros = [Float](repeating: 0, count: block)
        var heard = [Float](repeating: 0, count: block)
        // Integrate rate × (1 + ppm(t)) numerically, independently of the cable's closed form.
        var integral = 0.0
        var largestWander = 0.0
        for _ in 0..<(4 * rate / block) {
            let start = Double(port.hostSamples)
            for k in 0..<block {
                let t = (start + Double(k) + 0.5) / Double(rate)
                integral += 1 + (ppm + driftPPM * sin(2 * Double.pi * t / period)) * 1e-6
            }
            try zeros.withUnsafeBufferPointer { out in
                try heard.withUnsafeMutableBufferPointer { into in try port.transfer(output: out, input: into) }
            }
            #expect(abs(Double(port.deviceSamples) - integral) <= 1.01)
            let constantRate = Double(port.hostSamples) * (1 + ppm * 1e-6)
            largestWander = max(largestWander, abs(Double(port.deviceSamples) - constantRate))
        }
        // The wander adds up to 2 × 300e-6 × 2 s × 44100 / 2π ≈ 8.4 samples.
        #expect(largestWander > 7)
    }

    @Test("60 s round trip at +500 ppm with 50 ppm drift: a constant delay, no slips")
    func boundedRoundTrip() throws {
        let configuration = CableConfiguration(
            deviceClockPPM: 500, deviceClockDriftPPM: 50, driftPeriodSeconds: 7)
        let port = SimulatedCablePort(
            name: "sim:1", sampleRate: rate, configuration: configuration, peer: CableTestPeer(record: false))
        let frequency = 1000.0
        let amplitude = 0.5
        // The echo comes back 2 × 8 samples late (less a few thousandths of a sample from
        // the clock ratio); a slip or a growing FIFO would show as a phase error.
        let delay = 2 * Double(SimulatedCablePort.resamplerDelay)
        let sizes = [4410, 44100, 2205, 17, 9999]
        let maxBlock = sizes.max()!
        let omega = 2 * Double.pi * frequency / Double(rate)
        var output = [Float](repeating: 0, count: maxBlock)
        var input = [Float](repeating: 0, count: maxBlock)
        var worst: Float = 0
        var index = 0
        while port.hostSamples < Int64(60 * rate) {
            let n = min(sizes[index % sizes.count], 60 * rate - Int(port.hostSamples))
            index += 1
            let start = Double(port.hostSamples)
            for j in 0..<n { output[j] = Float(amplitude * sin(omega * (start + Double(j)))) }
            try output.withUnsafeBufferPointer { out in
                try input.withUnsafeMutableBufferPointer { into in
                    try port.transfer(
                        output: UnsafeBufferPointer(rebasing: out[0..<n]),
                        input: UnsafeMutableBufferPointer(rebasing: into[0..<n]))
                }
            }
            for j in 0..<n where start + Double(j) > 64 {
                let expected = Float(amplitude * sin(omega * (start + Double(j) - delay)))
                worst = max(worst, abs(input[j] - expected))
            }
        }
        #expect(port.hostSamples == Int64(60 * rate))
        #expect(worst < 2e-3, "largest deviation \(worst)")
        let expectedDevice = 60.0 * Double(rate) * (1 + 500e-6)
        #expect(abs(Double(port.deviceSamples) - expectedDevice) < 60)  // plus the wander
    }

    @Test("the resampled path keeps a band-limited signal to -80 dB", arguments: [500.0, -500])
    func resampledFidelity(ppm: Double) throws {
        let peer = CableTestPeer(reply: .echo)
        let port = SimulatedCablePort(
            name: "sim:1", sampleRate: rate, configuration: CableConfiguration(deviceClockPPM: ppm), peer: peer)
        // Tones as a modem at 12 and 3 samples per bit would produce.
        let components: [(frequency: Double, amplitude: Double)] = [(1837.5, 0.3), (7350, 0.3), (13000, 0.2)]
        func signal(at t: Double) -> Double {
            components.reduce(0) { $0 + $1.amplitude * sin(2 * Double.pi * $1.frequency * t / Double(self.rate)) }
        }
        let count = rate / 4
        _ = try run(port, (0..<count).map { Float(signal(at: Double($0))) }, block: 512)
        // Device sample k sits at host time k / (1 + ppm) and carries the host's signal
        // from 8 samples earlier.
        let delay = Double(SimulatedCablePort.resamplerDelay)
        var errorSquares = 0.0
        var signalSquares = 0.0
        for k in 100..<(peer.heard.count - 100) {
            let exact = signal(at: Double(k) / (1 + ppm * 1e-6) - delay)
            errorSquares += (Double(peer.heard[k]) - exact) * (Double(peer.heard[k]) - exact)
            signalSquares += exact * exact
        }
        let errorDB = 10 * log10(errorSquares / signalSquares)
        #expect(errorDB < -80, "error \(errorDB) dB")
    }

    /// A configuration with every impairment switched on.
    private func everything(seed: UInt64) -> CableConfiguration {
        let impaired = Impairments(
            gainDB: -3, snrDB: 25, dcOffset: 0.05, invertPolarity: true, highPassHz: 100, lowPassHz: 4000,
            dropoutMs: 10, dropoutEverySeconds: 0.5)
        return CableConfiguration(
            hostToDevice: impaired, deviceToHost: impaired, deviceClockPPM: 300, deviceClockDriftPPM: 40,
            driftPeriodSeconds: 3, seed: seed)
    }

    @Test("the same seed reproduces every sample; another seed changes the noise")
    func seeds() throws {
        let signal = CableSignals.tone(frequency: 1200, amplitude: 0.5, count: rate / 2, sampleRate: rate)
        func runOnce(seed: UInt64) throws -> (host: [Float], device: [Float]) {
            let peer = CableTestPeer(reply: .echo)
            let port = SimulatedCablePort(name: "sim:1", sampleRate: rate, configuration: everything(seed: seed), peer: peer)
            let host = try run(port, signal, block: 300)
            return (host, peer.heard)
        }
        let a = try runOnce(seed: 7)
        let b = try runOnce(seed: 7)
        let c = try runOnce(seed: 8)
        #expect(a.host == b.host)
        #expect(a.device == b.device)
        #expect(a.host != c.host)
        #expect(a.device != c.device)
    }

    @Test("unplugged: the host hears exact zeros, the device runs on zeros")
    func unplug() throws {
        let configuration = CableConfiguration(
            hostToDevice: .noisy(snrDB: 20), deviceToHost: Impairments(snrDB: 20, dcOffset: 0.2), deviceClockPPM: 200)
        let peer = CableTestPeer(reply: .constant(0.5))
        let port = SimulatedCablePort(name: "sim:1", sampleRate: rate, configuration: configuration, peer: peer)
        let signal = CableSignals.tone(frequency: 1000, amplitude: 0.5, count: 4410, sampleRate: rate)
        _ = try run(port, signal)
        port.plugged = false
        #expect(port.jackPlugged == false)
        #expect(port.plugged == false)
        let heardBefore = peer.heard.count
        let deviceBefore = port.deviceSamples
        let heard = try run(port, signal)
        #expect(heard.allSatisfy { $0 == 0 })
        #expect(port.deviceSamples > deviceBefore + 4000)
        #expect(peer.heard[heardBefore...].allSatisfy { $0 == 0 })
        port.plugged = true
        #expect(port.jackPlugged == true)
        let back = try run(port, signal)
        #expect(CableSignals.rms(back[1000...]) > 0.4)
    }

    @Test("a closed port refuses transfers")
    func closed() throws {
        let port = SimulatedCablePort(name: "sim:3", sampleRate: rate, configuration: .clean, peer: CableTestPeer())
        port.close()
        let output = [Float](repeating: 0, count: 10)
        var input = [Float](repeating: 0, count: 10)
        #expect(throws: AudioError.closed(port: "sim:3")) {
            try output.withUnsafeBufferPointer { out in
                try input.withUnsafeMutableBufferPointer { into in try port.transfer(output: out, input: into) }
            }
        }
    }

    @Test("configuration JSON round trip; missing keys take the defaults")
    func configurationCodable() throws {
        let value = everything(seed: 99)
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(CableConfiguration.self, from: data) == value)
        #expect(try JSONDecoder().decode(CableConfiguration.self, from: Data("{}".utf8)) == .clean)
        let partial = try JSONDecoder().decode(
            CableConfiguration.self, from: Data(#"{"deviceClockPPM": -250, "deviceToHost": {"gainDB": -20}}"#.utf8))
        #expect(partial == CableConfiguration(deviceToHost: .quiet, deviceClockPPM: -250))
    }
}
