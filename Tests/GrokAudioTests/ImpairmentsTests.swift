import GrokBasics
import Foundation
import Testing

@testable import GrokAudio

@Suite("Impairments")
struct ImpairmentsTests {
    let rate = 44100

    /// Runs `samples` through a chain for `impairments`, in blocks of 1000.
    private func apply(_ impairments: Impairments, to samples: [Float], seed: UInt64 = 1) -> [Float] {
        var chain = ImpairmentChain(impairments, sampleRate: rate, seed: seed, stream: 1)
        var result = samples
        result.withUnsafeMutableBufferPointer { buffer in
            var start = 0
            while start < buffer.count {
                let end = min(start + 1000, buffer.count)
                chain.process(UnsafeMutableBufferPointer(rebasing: buffer[start..<end]))
                start = end
            }
        }
        return result
    }

    /// The gain in dB of `impairments` for a steady tone, measured over the last half second
    /// of one second (after filters settle).
    private func toneGainDB(_ impairments: Impairments, frequency: Double) -> Double {
        let input = CableSignals.tone(frequency: frequency, amplitude: 0.5, count: rate, sampleRate: rate)
        let output = apply(impairments, to: input)
        let tail = rate / 2..<rate
        return CableSignals.decibels(CableSignals.rms(output[tail]) / CableSignals.rms(input[tail]))
    }

    @Test("the default value changes nothing")
    func cleanIsIdentity() {
        let input = CableSignals.tone(frequency: 1234, amplitude: 0.8, count: 5000, sampleRate: rate)
        #expect(Impairments().isClean)
        #expect(ImpairmentChain(.clean, sampleRate: rate, seed: 1, stream: 1).isIdentity)
        #expect(apply(.clean, to: input) == input)
    }

    @Test("gain scales the RMS", arguments: [-20.0, -6, 0.5, 6])
    func gain(db: Double) {
        #expect(abs(toneGainDB(Impairments(gainDB: db), frequency: 1000) - db) < 0.01)
    }

    @Test("inverted polarity negates every sample")
    func polarity() {
        let input = CableSignals.tone(frequency: 700, amplitude: 0.6, count: 3000, sampleRate: rate)
        let output = apply(.inverted, to: input)
        #expect(output == input.map { -$0 })
    }

    @Test("DC offset shifts the mean", arguments: [0.2, -0.05])
    func dcOffset(offset: Double) {
        // Whole periods of a 1 kHz tone (441 samples = 10 periods) have zero mean.
        let input = CableSignals.tone(frequency: 1000, amplitude: 0.5, count: 44100, sampleRate: rate)
        let output = apply(Impairments(dcOffset: offset), to: input)
        let mean = output.reduce(0.0) { $0 + Double($1) } / Double(output.count)
        #expect(abs(mean - offset) < 1e-4)
    }

    @Test("stages run in the documented order: polarity, gain, then DC offset")
    func stageOrder() {
        let input: [Float] = [0.5, -0.25, 0]
        let output = apply(Impairments(gainDB: -6.020599913, dcOffset: 0.1, invertPolarity: true), to: input)
        // -x/2 + 0.1: the offset is neither inverted nor scaled.
        let expected: [Float] = [-0.15, 0.225, 0.1]
        for (o, e) in zip(output, expected) {
            #expect(abs(o - e) < 1e-6)
        }
    }

    @Test("white noise at the requested SNR on a steady tone", arguments: [0.0, 10, 20, 30, 40])
    func signalToNoise(snr: Double) {
        let input = CableSignals.tone(frequency: 1000, amplitude: 0.5, count: rate, sampleRate: rate)
        let output = apply(.noisy(snrDB: snr), to: input)
        let noise = zip(output, input).map { $0 - $1 }
        let measured = CableSignals.decibels(CableSignals.rms(input[...]) / CableSignals.rms(noise[...]))
        #expect(abs(measured - snr) < 0.5, "measured SNR \(measured) dB")
    }

    @Test("noise continues through silence at the level last tracked")
    func noiseDuringSilence() {
        let snr = 20.0
        let tone = CableSignals.tone(frequency: 1000, amplitude: 0.3, count: rate / 2, sampleRate: rate)
        let input = tone + [Float](repeating: 0, count: rate / 2)
        let output = apply(.noisy(snrDB: snr), to: input)
        let silenceNoise = CableSignals.rms(output[(rate / 2)...])
        let expected = CableSignals.rms(tone[...]) / pow(10, snr / 20)
        #expect(abs(CableSignals.decibels(silenceNoise / expected)) < 0.5)
    }

    @Test("before any sound the noise uses the initial reference level")
    func noiseBeforeAnySound() {
        let output = apply(.noisy(snrDB: 30), to: [Float](repeating: 0, count: rate / 4))
        let expected = Impairments.initialReferenceRMS / pow(10, 30.0 / 20)
        #expect(abs(CableSignals.decibels(CableSignals.rms(output[...]) / expected)) < 0.5)
    }

    @Test("high-pass: 10 Hz is attenuated against 1 kHz")
    func highPass() {
        let impairments = Impairments(highPassHz: 100)
        let low = toneGainDB(impairments, frequency: 10)
        let pass = toneGainDB(impairments, frequency: 1000)
        let corner = toneGainDB(impairments, frequency: 100)
        #expect(abs(pass) < 0.1)
        #expect(pass - low > 19)  // first order: -20 dB a decade below the corner
        #expect(abs(corner + 3.01) < 0.1)
    }

    @Test("low-pass at 4 kHz: flat at 1 kHz, at least 20 dB down at 8 kHz")
    func lowPass() {
        let impairments = Impairments(lowPassHz: 4000)
        #expect(abs(toneGainDB(impairments, frequency: 1000)) < 0.5)
        #expect(toneGainDB(impairments, frequency: 8000) < -20)
        #expect(abs(toneGainDB(impairments, frequency: 4000) + 3.01) < 0.1)
    }

    @Test("a DC input is blocked by AC coupling")
    func acCouplingBlocksDC() {
        let output = apply(.phoneInput, to: [Float](repeating: 0.5, count: rate / 2))
        #expect(output.suffix(100).allSatisfy { abs($0) < 1e-4 })
    }

    /// The runs of exact zeros in `samples` that lie wholly inside it: (start, length).
    private func zeroRuns(_ samples: [Float]) -> [(start: Int, length: Int)] {
        var runs: [(Int, Int)] = []
        var start: Int?
        for (i, x) in samples.enumerated() {
            if x == 0 {
                if start == nil { start = i }
            } else if let s = start {
                if s > 0 { runs.append((s, i - s)) }
                start = nil
            }
        }
        return runs
    }

    @Test("dropouts: zero runs of the set length at the set period", arguments: [(10.0, 1.0), (3.0, 0.25)])
    func dropouts(milliseconds: Double, everySeconds: Double) {
        let input = [Float](repeating: 0.5, count: Int(3.5 * Double(rate)))
        let output = apply(Impairments(dropoutMs: milliseconds, dropoutEverySeconds: everySeconds), to: input)
        let runs = zeroRuns(output)
        let length = Int((milliseconds * Double(rate) / 1000).rounded())
        let period = Int((everySeconds * Double(rate)).rounded())
        #expect(runs.count >= Int(3.5 / everySeconds) - 1)
        #expect(runs.allSatisfy { $0.length == length })
        for (a, b) in zip(runs, runs.dropFirst()) {
            #expect(b.start - a.start == period)
        }
        // Everything outside the dropouts is untouched.
        #expect(output.filter { $0 != 0 }.allSatisfy { $0 == 0.5 })
    }

    @Test("the dropout phase depends on the seed")
    func dropoutPhase() {
        let input = [Float](repeating: 0.5, count: rate)
        let impairments = Impairments.dropouts
        let a = apply(impairments, to: input, seed: 1).firstIndex(of: 0)
        let b = apply(impairments, to: input, seed: 2).firstIndex(of: 0)
        let c = apply(impairments, to: input, seed: 1).firstIndex(of: 0)
        #expect(a != b)
        #expect(a == c)
    }

    @Test("presets describe the conditions they are named for")
    func presets() {
        #expect(Impairments.clean == Impairments())
        #expect(Impairments.noisy(snrDB: 12).snrDB == 12)
        #expect(Impairments.quiet.gainDB == -20)
        #expect(Impairments.dcOffset.dcOffset == 0.2)
        #expect(Impairments.inverted.invertPolarity)
        #expect(Impairments.phoneInput.highPassHz == 100 && Impairments.phoneInput.lowPassHz == 4000)
        #expect(Impairments.dropouts.dropoutMs == 10 && Impairments.dropouts.dropoutEverySeconds == 1)
        for preset in [Impairments.quiet, .dcOffset, .inverted, .phoneInput, .dropouts, .noisy(snrDB: 20)] {
            #expect(!preset.isClean)
        }
    }

    @Test("JSON round trip; missing keys mean not impaired")
    func codable() throws {
        let value = Impairments(gainDB: -3, snrDB: 15, dcOffset: 0.1, invertPolarity: true,
                                highPassHz: 80, lowPassHz: 3500, dropoutMs: 5, dropoutEverySeconds: 2)
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(Impairments.self, from: data) == value)
        #expect(try JSONDecoder().decode(Impairments.self, from: Data("{}".utf8)) == .clean)
        let partial = try JSONDecoder().decode(Impairments.self, from: Data(#"{"snrDB": 20}"#.utf8))
        #expect(partial == .noisy(snrDB: 20))
    }

    // MARK: The noise generator

    @Test("SplitMix64 and xoshiro256** match their reference outputs")
    func generatorReferenceVectors() {
        var mixer = SplitMix64(seed: 1_234_567)
        #expect([mixer.next(), mixer.next(), mixer.next()]
            == [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423])
        var generator = Xoshiro256StarStar(state: (1, 2, 3, 4))
        #expect([generator.next(), generator.next(), generator.next(), generator.next()]
            == [11520, 0, 1_509_978_240, 1_215_971_899_390_074_240])
    }

    @Test("the Gaussian source has the moments and tails of a standard normal")
    func gaussianDistribution() {
        var source = GaussianSource(seed: 42, stream: 0)
        let count = 400_000
        var values = [Float](repeating: 0, count: count)
        values.withUnsafeMutableBufferPointer { source.fill($0) }
        let mean = values.reduce(0.0) { $0 + Double($1) } / Double(count)
        let variance = values.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(count)
        let fourth = values.reduce(0.0) { $0 + pow(Double($1) - mean, 4) } / Double(count)
        #expect(abs(mean) < 0.01)
        #expect(abs(variance - 1) < 0.01)
        #expect(abs(fourth / (variance * variance) - 3) < 0.05)  // kurtosis of a normal
        // Fractions beyond 1, 2, 3 and 3.5 sigma (the last exercises the ziggurat's tail).
        let expected: [(Float, Double)] = [(1, 0.317311), (2, 0.045500), (3, 0.002700), (3.5, 0.000465)]
        for (k, p) in expected {
            let fraction = Double(values.count { abs($0) > k }) / Double(count)
            let sigma = (p * (1 - p) / Double(count)).squareRoot()
            #expect(abs(fraction - p) < 5 * sigma, "beyond \(k): \(fraction), expected \(p)")
        }
    }
}
