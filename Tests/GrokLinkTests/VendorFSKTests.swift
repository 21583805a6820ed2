#if canImport(Glibc)
import Glibc
#endif
import GrokBasics
import GrokAudio
import GrokLink
import Testing

/// Renders `count` samples from a modulator.
func render(_ modulator: inout VendorFSKModulator, _ count: Int) -> [Float] {
    var out = [Float](repeating: 0, count: count)
    out.withUnsafeMutableBufferPointer { modulator.render(into: $0) }
    return out
}

/// Sign changes in `samples[range]`, counting from the sample before the range (the vendor's measure).
func signChanges(_ samples: [Float], _ range: Range<Int>) -> Int {
    var n = 0
    for i in range where i > 0 && (samples[i] >= 0) != (samples[i - 1] >= 0) { n += 1 }
    return n
}

@Suite("Vendor FSK")
struct VendorFSKTests {
    @Test("UART framing is bit-exact: start 1, eight data bits MSB first, stop 0, no gap, idling on the 0 tone",
          arguments: [8, 12, 72])
    func framing(spb: Int) throws {
        let s = try VendorModemSetting(samplesPerBit: spb, sampleRate: 44_100)
        var m = VendorFSKModulator()
        m.setCarrier(.data(s))
        let bytes: [UInt8] = [0x00, 0x55, 0xaa, 0xff, 0x00, 0x01, 0x80, 0x7e]
        let lead = 4 * spb
        var samples = render(&m, lead)
        m.enqueue(bytes)
        #expect(m.isSending)
        samples += render(&m, bytes.count * 10 * spb + 4 * spb)
        #expect(!m.isSending)
        #expect(m.bytesSent == bytes.count)
        var expected: [Bool] = []
        for b in bytes {
            expected.append(true)
            for k in (0..<8).reversed() { expected.append(b >> k & 1 == 1) }
            expected.append(false)
        }
        expected += [false, false, false]
        for (i, one) in expected.enumerated() {
            let start = lead + i * spb
            let n = signChanges(samples, start..<(start + spb))
            // A bit of b (or c) half cycles shows b (or c) sign changes, give or take the
            // change that lands on its edge.
            let want = one ? s.signChangesPerOne : s.signChangesPerZero
            #expect(abs(n - want) <= 1, "bit \(i) of \(spb) spb: \(n) sign changes, want \(want)")
        }
    }

    @Test("the waveform is the vendor's: a 25-bit phase that adds the tone's increment, then reads entry phase >> 16 of trunc(32767 sin(2πi/512))")
    func waveform() throws {
        let s = try VendorModemSetting(samplesPerBit: 12, sampleRate: 44_100)
        var m = VendorFSKModulator(amplitude: 0.5)
        m.setCarrier(.data(s))
        m.enqueue([0xa5])
        let samples = render(&m, 200)
        var phase: UInt32 = 0
        let bits: [Bool] = [true, true, false, true, false, false, true, false, true, false]
        for k in 0..<200 {
            let bit = k / 12
            let inc = bit < 10 && bits[bit] ? s.oneTone.phaseIncrement : s.zeroTone.phaseIncrement
            phase = (phase + inc) % (1 << 25)
            let entry = Int(32767 * sin(2 * Double.pi * Double(phase >> 16) / 512))
            #expect(samples[k] == Float(entry) / 32767 * 0.5)
        }
    }

    @Test("the phase is continuous at every bit edge: no step larger than the fastest tone's")
    func phaseContinuity() throws {
        let s = try VendorModemSetting(samplesPerBit: 8, sampleRate: 44_100)
        var m = VendorFSKModulator()
        m.setCarrier(.data(s))
        m.enqueue((0..<64).map { UInt8($0 * 37 & 0xff) })
        let samples = render(&m, 64 * 80 + 100)
        let maxStep = 2 * sin(Double.pi * s.oneTone.hz / 44_100) + 1e-3
        for k in 1..<samples.count {
            #expect(Double(abs(samples[k] - samples[k - 1])) <= maxStep)
        }
        #expect(samples.map { abs($0) }.max()! > 0.99)
    }

    @Test("the demodulator decodes what the modulator sends at every setting and both rates",
          arguments: [44_100, 48_000])
    func roundTrip(rate: Int) throws {
        for s in VendorModemSetting.all(sampleRate: rate) {
            var m = VendorFSKModulator()
            m.setCarrier(.data(s))
            var rng = SplitMix64(seed: UInt64(s.samplesPerBit))
            let bytes = (0..<200).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            var samples = render(&m, 20 * s.samplesPerBit)
            m.enqueue(bytes)
            samples += render(&m, bytes.count * s.samplesPerByte + 10 * s.samplesPerBit)
            var d = VendorFSKDemodulator(setting: s)
            var out: [VendorFSKDemodulator.Byte] = []
            samples.withUnsafeBufferPointer { d.process($0, into: &out) }
            #expect(out.map(\.value) == bytes, "\(s)")
            #expect(d.framingErrors == 0 && d.erasures == 0)
        }
    }

    @Test("the demodulator gives the same bytes at the same samples fed one sample at a time, all at once, or in random chunks")
    func dripFeed() throws {
        let s = try VendorModemSetting(samplesPerBit: 10, sampleRate: 44_100)
        var m = VendorFSKModulator()
        m.setCarrier(.data(s))
        var samples = render(&m, 300)
        var rng = SplitMix64(seed: 9)
        for _ in 0..<30 {
            m.enqueue((0..<Int(rng.next() % 5)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            samples += render(&m, Int(rng.next() % 400))
        }
        // Some noise, so the decisions are not trivially clean.
        var noise = SplitMix64(seed: 10)
        for i in samples.indices { samples[i] += Float(Double(noise.next() % 2001) / 1000 - 1) * 0.05 }
        func decode(_ chunks: (inout SplitMix64) -> Int) -> [VendorFSKDemodulator.Byte] {
            var d = VendorFSKDemodulator(setting: s)
            var out: [VendorFSKDemodulator.Byte] = []
            var r = SplitMix64(seed: 11)
            var i = 0
            samples.withUnsafeBufferPointer { p in
                while i < p.count {
                    let n = Swift.min(chunks(&r), p.count - i)
                    d.process(UnsafeBufferPointer(rebasing: p[i..<(i + n)]), into: &out)
                    i += n
                }
            }
            return out
        }
        let whole = decode { _ in Int.max / 2 }
        #expect(whole.count > 30)
        #expect(decode { _ in 1 } == whole)
        #expect(decode { Int($0.next() % 700) + 1 } == whole)
    }
}
