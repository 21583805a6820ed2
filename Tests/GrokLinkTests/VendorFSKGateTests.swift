import GrokLink
import Testing

/// The decimated receiver's idle gate: it must never cost a start bit, and on an idle line it
/// must skip the full fit (counted, not timed).
@Suite("Vendor FSK receiver gate")
struct VendorFSKGateTests {
    func decode(_ s: VendorModemSetting, _ samples: [Float]) -> (bytes: [UInt8], demodulator: VendorFSKDemodulator) {
        var d = VendorFSKDemodulator(setting: s)
        var out: [VendorFSKDemodulator.Byte] = []
        samples.withUnsafeBufferPointer { d.process($0, into: &out) }
        return (out.map(\.value), d)
    }

    @Test("after a long idle line, a byte is found at every offset of its start bit against the half-bit grid, at every setting",
          arguments: [44_100, 48_000])
    func everyOffset(rate: Int) {
        for s in VendorModemSetting.all(sampleRate: rate) {
            // One byte first so that both levels are learned and the gate is in use, then a
            // long idle, then a byte whose start bit is followed by zeros (the shortest "1").
            for offset in 0..<s.samplesPerBit {
                var m = VendorFSKModulator()
                m.setCarrier(.data(s))
                var samples = render(&m, 20 * s.samplesPerBit)
                m.enqueue([0xa5])
                samples += render(&m, s.samplesPerByte + 200 * s.samplesPerBit + offset)
                m.enqueue([0x00, 0x7f, 0x01])
                samples += render(&m, 3 * s.samplesPerByte + 20 * s.samplesPerBit)
                let (bytes, d) = decode(s, samples)
                #expect(bytes == [0xa5, 0x00, 0x7f, 0x01], "\(s) offset \(offset)")
                #expect(d.gatedHalfBits > 300, "\(s): the gate was in use")
            }
        }
    }

    @Test("the gate holds under DC, low gain and inverted polarity", arguments: [8, 12, 36, 72])
    func impairments(spb: Int) throws {
        for (gain, dc) in [(Float(1), Float(0.2)), (0.1, 0), (-1, 0), (-0.1, -0.05)] {
            let s = try VendorModemSetting(samplesPerBit: spb, sampleRate: 44_100)
            for offset in [0, spb / 4, spb / 2, spb - 1] {
                var m = VendorFSKModulator()
                m.setCarrier(.data(s))
                var samples = render(&m, 20 * spb)
                m.enqueue([0x3c])
                samples += render(&m, s.samplesPerByte + 300 * spb + offset)
                m.enqueue([0x00, 0xff])
                samples += render(&m, 2 * s.samplesPerByte + 20 * spb)
                let (bytes, d) = decode(s, samples.map { $0 * gain + dc })
                #expect(bytes == [0x3c, 0x00, 0xff], "\(spb) spb gain \(gain) dc \(dc) offset \(offset)")
                // The idle line is passed over without full fits: almost every half bit gated.
                #expect(Double(d.gatedHalfBits) > 0.9 * Double(300 * 2), "\(spb) spb gain \(gain) dc \(dc)")
            }
        }
    }

    @Test("on an idle line the receiver takes a full fit for under one half bit in ten")
    func idleIsCheap() throws {
        let s = try VendorModemSetting(samplesPerBit: 12, sampleRate: 44_100)
        var m = VendorFSKModulator()
        m.setCarrier(.data(s))
        var samples = render(&m, 20 * 12)
        m.enqueue([0x42])
        samples += render(&m, s.samplesPerByte + 20_000 * 12)
        let (bytes, d) = decode(s, samples)
        #expect(bytes == [0x42])
        let halfBits = samples.count / 6
        #expect(d.gatedHalfBits > halfBits * 9 / 10)
        #expect(d.measurements - d.gatedHalfBits < halfBits / 10)
    }
}
