#if canImport(Glibc)
import Glibc
#endif
import GrokAudio
@testable import GrokLink
import Testing

/// Audio that is not a Grokker: what a jack hears when something else is plugged in.
enum NotAGrokker: String, CaseIterable, Sendable {
    case whiteNoise, silence, music

    /// Fills `block` with the next stretch of this audio.
    static func generator(_ kind: NotAGrokker, seed: UInt64, rate: Double = 44_100) -> (inout [Float]) -> Void {
        var rng = SplitMix64(seed: seed)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
        func gaussian() -> Double { sqrt(-2 * log(max(uniform(), 1e-300))) * cos(2 * .pi * uniform()) }
        switch kind {
        case .silence:
            return { block in for i in block.indices { block[i] = 0 } }
        case .whiteNoise:
            return { block in for i in block.indices { block[i] = Float(0.2 * gaussian()) } }
        case .music:
            // Chords from a pentatonic scale with harmonics and vibrato, a new chord every
            // quarter second, and a noisy drum hit on each beat.
            let scale = [0, 2, 4, 7, 9].map { 220 * pow(2, Double($0) / 12) }
            var n = 0
            var notes: [Double] = []
            var phases = [Double](repeating: 0, count: 3)
            return { block in
                for i in block.indices {
                    if n % Int(rate / 4) == 0 {
                        notes = (0..<3).map { _ in scale[Int(rng.next() % 5)] * Double(1 << (rng.next() % 3)) }
                    }
                    let t = Double(n) / rate
                    var v = 0.0
                    for k in 0..<3 {
                        phases[k] += 2 * .pi * notes[k] * (1 + 0.004 * sin(2 * .pi * 5 * t)) / rate
                        v += 0.12 * sin(phases[k]) + 0.05 * sin(2 * phases[k]) + 0.03 * sin(3 * phases[k])
                    }
                    let beat = Double(n % Int(rate / 2)) / rate
                    v += 0.3 * exp(-beat * 40) * gaussian()
                    block[i] = Float(v)
                    n += 1
                }
            }
        }
    }
}

@Suite("Noise immunity")
struct NoiseImmunityTests {
    /// Minutes of audio per case; ten by default (the acceptance figure). Release builds run
    /// this in about a second per case.
    static let minutes = Double(Environment.value("GROK_NOISE_MINUTES") ?? "") ?? 10

    @Test("noise, silence and music never connect or deliver a message",
          arguments: NotAGrokker.allCases, [LinkRole.host, .device])
    func neverConnects(kind: NotAGrokker, role: LinkRole) {
        let engine = LinkEngine(role: role, sampleRate: 44_100)
        if role == .host { engine.connect() }
        let fill = NotAGrokker.generator(kind, seed: 42)
        var block = [Float](repeating: 0, count: 4096)
        var out = [Float](repeating: 0, count: 4096)
        let total = Int(Self.minutes * 60 * 44_100)
        var done = 0
        var connected = false
        var messages = 0
        while done < total {
            fill(&block)
            block.withUnsafeBufferPointer { i in out.withUnsafeMutableBufferPointer { engine.process(input: i, output: $0) } }
            if engine.state == .connected { connected = true }
            while engine.receive() != nil { messages += 1 }
            done += block.count
        }
        #expect(!connected)
        #expect(messages == 0)
        #expect(engine.statistics.packetsReceived == 0)
        #expect(!engine.hearsSignal)
    }
}
