/// The transmit half of the modem: FM0 (bi-phase space) line code.
///
/// Every bit starts with a level change; a 0 changes level again at mid-bit, a 1 does not.
/// The code is DC-free, carries a transition per bit for clock recovery, and is decided by
/// comparing the two halves of a bit with each other, so it does not care about polarity.
/// Half-bits of fractional length (3 samples per bit, or any mode at 48 kHz) are rendered by
/// area sampling: each output sample is the mean of the waveform over its interval.
struct FM0Modulator {
    /// The 32-bit attached sync marker (CCSDS ASM), sent MSB first after the preamble.
    static let syncWord: UInt32 = 0x1ACF_FC1D

    var amplitude: Float
    private var level: Float

    init(amplitude: Float) {
        self.amplitude = amplitude
        self.level = amplitude
    }

    /// Renders `preambleBits` ones, the sync word, `bytes` (MSB first) and two tail bits into
    /// `out` (replacing its contents). Returns the sample index where each byte of `bytes`
    /// starts, offset by `out`'s start, for the benchmark's damage hook.
    @discardableResult
    mutating func render(bytes: [UInt8], preambleBits: Int, samplesPerBit spb: Double, into out: inout [Float]) -> Double {
        let totalBits = preambleBits + 32 + bytes.count * 8 + 2
        let length = Int((Double(totalBits) * spb).rounded(.up)) + 1
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: repeatElement(0, count: length))
        let half = spb / 2
        var t = 0.0
        var payloadStart = 0.0
        out.withUnsafeMutableBufferPointer { acc in
            func chip(_ value: Float, from t0: Double, to t1: Double) {
                let i0 = Int(t0), i1 = Int(t1)
                if i0 == i1 {
                    acc[i0] += value * Float(t1 - t0)
                    return
                }
                acc[i0] += value * Float(Double(i0 + 1) - t0)
                var i = i0 + 1
                while i < i1 { acc[i] += value; i += 1 }
                if i1 < acc.count { acc[i1] += value * Float(t1 - Double(i1)) }
            }
            func bit(_ one: Bool) {
                level = -level
                chip(level, from: t, to: t + half)
                if !one { level = -level }
                chip(level, from: t + half, to: t + spb)
                t += spb
            }
            for _ in 0..<preambleBits { bit(true) }
            var shiftReg = FM0Modulator.syncWord
            for _ in 0..<32 { bit(shiftReg & 0x8000_0000 != 0); shiftReg <<= 1 }
            payloadStart = t
            for byte in bytes {
                var b = byte
                for _ in 0..<8 { bit(b & 0x80 != 0); b <<= 1 }
            }
            bit(true)
            bit(true)
        }
        out.removeLast(out.count - Int(t.rounded(.up)))
        return payloadStart
    }

    /// Airtime in samples of a frame of `frameBytes` bytes (header, payload and CRC).
    static func airtime(frameBytes: Int, preambleBits: Int, samplesPerBit spb: Double) -> Int {
        Int((Double(preambleBits + 32 + frameBytes * 8 + 2) * spb).rounded(.up))
    }
}
