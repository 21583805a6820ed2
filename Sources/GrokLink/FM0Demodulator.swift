/// The peer's clock relative to ours, measured over whole good frames: the samples between
/// the end of the sync word and the end of the frame, divided by the nominal length of the
/// bits in between. The bit clock's timing error at either end is a fraction of a sample
/// whatever the frame's length, so a measurement's variance falls with the square of its
/// length: each is weighed by its length squared, and the sum of weights is capped at one
/// second of audio squared so that slow drift is followed. Carried across mode changes.
struct SkewEstimate {
    var factor = 1.0
    var weight = 0.0

    mutating func add(elapsed: Double, nominal: Double) {
        guard nominal > 0, elapsed > 0 else { return }
        let w = elapsed * elapsed
        weight = min(weight + w, 44_100.0 * 44_100.0)
        factor += (elapsed / nominal - factor) * w / weight
    }
}

/// What the receive half of the modem found.
enum DemodEvent {
    /// A frame whose header and CRC check. `quality` is the mean decision margin of its bits
    /// (1 = perfect), `end` the sample time its last bit ended.
    case frame(Frame, quality: Double, end: Int64)
    /// A sync word followed by a header whose CRC-8 failed.
    case badHeader(end: Int64)
    /// A frame whose header checked and whose CRC-32C did not.
    case badCRC(type: FrameType, seq: UInt8, end: Int64)
}

/// The receive half of the modem: DC blocking, integrate-and-dump over half-bits at
/// fractional positions, a bit clock that tracks the sender's clock, sync-word search and
/// byte assembly into a ``FrameDecoder``.
///
/// Integrals at fractional times come from a running sum: S(t) = sum of samples before t,
/// linearly interpolated, so the integral over any interval costs two look-ups. Per sample
/// the work is one DC-blocker step and one addition; per bit, a handful of look-ups.
///
/// Clock recovery: FM0 always changes level at a bit boundary and never in the quarter-bits
/// around it, so the integral over [tb - T/4, tb + T/4) is 2·p·A·ε when the true boundary is
/// ε samples after the estimate tb (p the polarity before it, A the amplitude). That error
/// feeds a proportional-integral loop on phase and period; the period's ratio to nominal is
/// the clock-skew factor.
final class FM0Demodulator {
    static let maxSyncErrors = 1

    let nominalT: Double
    private(set) var period: Double
    private var nextBoundary: Double
    private var amplitude = 0.0
    private var lastHalf = 0.0

    // DC blocker y[n] = x[n] - x[n-1] + a·y[n-1].
    private var dcA: Float
    private var dcX: Float = 0
    private var dcY: Float = 0

    // Running sums: sums[i] = S(base + i).
    private var sums: UnsafeMutablePointer<Double>
    private var capacity: Int
    private var count = 1
    private var base: Int64 = 0

    // Framing.
    private var shift: UInt32 = 0
    private var inFrame = false
    private var bitInByte = 0
    private var byte: UInt8 = 0
    private var decoder = FrameDecoder()
    private var frameQuality = 0.0
    private var frameBits = 0
    private var frameAmplitude = 0.0
    private var weakBits = 0

    /// Smoothed decision margin of recent bits: near 1 with a clean signal, about 0.6 on noise,
    /// 0 in silence.
    private(set) var signalQuality = 0.0
    /// Bits decided since creation.
    private(set) var bitsDecided: Int64 = 0

    init(samplesPerBit: Double, sampleRate: Int, startTime: Int64, skew: SkewEstimate = SkewEstimate()) {
        nominalT = samplesPerBit
        period = samplesPerBit * skew.factor
        self.skew = skew
        base = startTime
        nextBoundary = Double(startTime) + samplesPerBit
        // DC blocker corner at 1/60 of the bit rate: settles in a few ms, droops a 1 by < 10 %.
        let corner = Double(sampleRate) / samplesPerBit / 60
        dcA = Float(1 - 2 * Double.pi * corner / Double(sampleRate))
        capacity = 8192
        sums = .allocate(capacity: capacity)
        sums[0] = 0
    }

    deinit { sums.deallocate() }

    /// Skew of the sender's clock relative to ours (1 = none; 1.0005 = its bits are 500 ppm
    /// longer than nominal in our samples). Before the first good frame, the bit clock's
    /// period; see ``SkewEstimate``.
    var skewFactor: Double { skew.weight > 0 ? skew.factor : period / nominalT }
    private(set) var skew: SkewEstimate
    private var frameStart = 0.0

    /// Whether a frame is being received right now.
    var receiving: Bool { inFrame }

    /// Feeds samples that start at sample time `base + count - 1`, appending what was found to `events`.
    func process(_ input: UnsafeBufferPointer<Float>, events: inout [DemodEvent]) {
        reserve(input.count)
        var x1 = dcX, y1 = dcY
        let a = dcA
        var s = sums[count - 1]
        let p = sums + count
        for i in 0..<input.count {
            let x = input[i]
            let y = x - x1 + a * y1
            x1 = x
            y1 = y
            s += Double(y)
            p[i] = s
        }
        dcX = x1
        dcY = y1
        count += input.count
        decodeBits(events: &events)
        compact()
    }

    private func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let newCapacity = max(capacity * 2, count + extra + 1024)
        let bigger = UnsafeMutablePointer<Double>.allocate(capacity: newCapacity)
        bigger.update(from: sums, count: count)
        sums.deallocate()
        sums = bigger
        capacity = newCapacity
    }

    /// Drops samples that no future bit can need.
    private func compact() {
        let keepFrom = Int64((nextBoundary - period).rounded(.down)) - 2
        let drop = Int(keepFrom - base)
        guard drop > 4096 else { return }
        (sums).update(from: sums + drop, count: count - drop)
        count -= drop
        base += Int64(drop)
    }

    @inline(__always)
    private func integral(_ t: Double) -> Double {
        let local = t - Double(base)
        let i = Int(local)
        let f = local - Double(i)
        let a = sums[i]
        return a + f * (sums[i + 1] - a)
    }

    private func decodeBits(events: inout [DemodEvent]) {
        let end = Double(base) + Double(count - 2)
        while nextBoundary + period * 1.25 < end {
            var tb = nextBoundary
            var T = period
            // Timing error from the window around the boundary.
            if amplitude > 1e-6 {
                let ic = integral(tb + T * 0.25) - integral(tb - T * 0.25)
                var e = ic / (2 * amplitude * (lastHalf >= 0 ? 1 : -1))
                let limit = T * 0.25
                e = min(max(e, -limit), limit)
                tb += (inFrame ? 0.12 : 0.45) * e
                if inFrame {
                    T += 0.002 * e
                    T = min(max(T, nominalT * 0.99), nominalT * 1.01)
                }
            }
            let s0 = integral(tb), s1 = integral(tb + T * 0.5), s2 = integral(tb + T)
            let h1 = s1 - s0, h2 = s2 - s1
            let level = (abs(h1) + abs(h2)) / T
            amplitude += 0.2 * (level - amplitude)
            let energy = h1 * h1 + h2 * h2
            let margin = energy > 0 ? 2 * h1 * h2 / energy : 0
            signalQuality += 0.05 * (abs(margin) - signalQuality)
            lastHalf = h2
            nextBoundary = tb + T
            period = T
            bitsDecided += 1
            handleBit(h1 * h2 > 0 ? 1 : 0, margin: abs(margin), level: level,
                      at: Int64(nextBoundary.rounded()), events: &events)
        }
    }

    private func handleBit(_ bit: UInt32, margin: Double, level: Double, at time: Int64,
                                    events: inout [DemodEvent]) {
        if !inFrame {
            shift = shift << 1 | bit
            if (shift ^ FM0Modulator.syncWord).nonzeroBitCount <= FM0Demodulator.maxSyncErrors {
                inFrame = true
                bitInByte = 0
                byte = 0
                decoder.reset()
                frameQuality = 0
                frameBits = 0
                frameAmplitude = amplitude
                weakBits = 0
                frameStart = nextBoundary
            }
            return
        }
        frameQuality += margin
        frameBits += 1
        // Loss of signal inside a frame: give up rather than wait for bytes of silence.
        weakBits = level < frameAmplitude * 0.2 ? weakBits + 1 : 0
        if weakBits >= 6 {
            endFrame()
            events.append(.badHeader(end: time))
            return
        }
        byte = byte << 1 | UInt8(bit)
        bitInByte += 1
        guard bitInByte == 8 else { return }
        bitInByte = 0
        switch decoder.feed(byte) {
        case .needMore:
            return
        case .frame(let frame):
            events.append(.frame(frame, quality: frameQuality / Double(max(frameBits, 1)), end: time))
            skew.add(elapsed: nextBoundary - frameStart, nominal: Double(frameBits) * nominalT)
        case .badHeader:
            events.append(.badHeader(end: time))
        case .badCRC(let type, let seq, _):
            events.append(.badCRC(type: type, seq: seq, end: time))
        }
        endFrame()
    }

    private func endFrame() {
        inFrame = false
        shift = 0
        decoder.reset()
    }
}
