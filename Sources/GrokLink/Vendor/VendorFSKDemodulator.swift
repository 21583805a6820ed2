// The host-side receiver for the vendor's FSK: decimated, so that it costs a small fraction
// of a sample's worth of work per sample, and still better than the vendor's sign counting.
//
// Design (docs/vendor-protocol.md, section 3.4, with the figures in docs/benchmarks.md):
// 1. The input is kept in a short history; nothing runs per sample but the copy into it.
// 2. A tone measurement is a least-squares fit of both tones (cosine and sine of each) to
//    the one-bit window ending at a chosen sample, taken only where a decision needs it:
//    four dot products of the window with precomputed "dual" vectors (the inverse Gram
//    matrix of the four basis functions over that window, already multiplied into them; one
//    set per phase of the tone pattern). The two tones are not orthogonal over one bit (at
//    12 samples per bit a "0" tone leaks 22 % into a plain "1" correlator); the fit removes
//    the leak, so a bit's absent tone measures about zero even when the band limit has
//    attenuated the present one by 11 dB.
// 3. DC is the mean of the last few whole blocks of one bit (a span that holds whole periods
//    of both tones), subtracted through the duals' sums: offsets and AC coupling cost nothing.
// 4. Each amplitude is divided by a learned level for its tone, giving a soft decision d in
//    -1...1 that ignores gain and polarity.
// 5. Idle line: measurements every half bit. Once the receiver is armed (the line has idled)
//    only the "1" tone is measured there (two dot products): a "1" under 0.3 of its level is
//    idle. A start bit holds the "1" for a whole bit, so some half-bit point sees at least
//    three quarters of it. Where the "1" is present the full fit runs; where d turns positive
//    the samples since the previous point are measured one by one for the exact 0 -> 1
//    crossing, which lies half a bit before the start bit's end. Every byte is re-timed on its
//    own start edge (the fractional crossing), so clock offset and drift never accumulate.
// 6. The ten bits are read at their ends (two measurements, interpolated); a stop bit that is
//    not a 0 drops the byte (framing error), a byte with a bit whose tones sum under 0.4 of
//    the learned levels is dropped (erasure), and after losing sync the line must idle ten
//    bits before a start counts.
// Every decision is taken at an absolute sample, so any chunking gives the same bytes.

/// Decodes UART bytes from the vendor's FSK at one setting. Pure and incremental: the same
/// samples in any chunking give the same bytes at the same times.
public struct VendorFSKDemodulator: Sendable {
    /// One decoded byte and the sample at which its stop bit ended.
    public struct Byte: Sendable, Equatable {
        public var value: UInt8
        public var end: Int64
    }

    public let setting: VendorModemSetting
    /// Samples consumed so far.
    public private(set) var now: Int64 = 0
    /// Bytes dropped because their stop bit was not a 0.
    public private(set) var framingErrors = 0
    /// Start edges that did not hold up as a start bit.
    public private(set) var falseStarts = 0
    /// The end of the last byte decoded, or `nil`.
    public private(set) var lastByteEnd: Int64?
    /// Bytes dropped because a bit was too weak to trust (a dropout or a cut).
    public private(set) var erasures = 0
    /// Measurements taken so far: full fits and the idle gate's half-bit residuals.
    public private(set) var measurements = 0
    /// Half bits the idle gate passed over without a full fit.
    public private(set) var gatedHalfBits = 0

    /// The soft decision at the last full measurement: +1 a clean "1" bit just ended, -1 a "0".
    public var softDecision: Double { previousD }
    /// The "0" tone's amplitude at the last full measurement relative to its learned level.
    public private(set) var zeroShare = 0.0

    private let spb: Int
    /// The window length, `spb` rounded up to whole SIMD vectors (the duals are 0 in front).
    private let windowLength: Int
    private let patternLength: Int
    /// Per phase of the pattern, 4 duals of `windowLength` (one-cos, one-sin, zero-cos, zero-sin).
    private let duals: [Float]
    /// Per phase, the sum of each dual (for the DC correction).
    private let dualSums: [Float]
    private let stride: Int
    /// Blocks of one bit in the DC span.
    private let dcBlocks: Int
    /// Samples kept behind the next measurement.
    private let keep: Int

    // History.
    private var history: [Float] = []
    private var historyBase: Int64 = 0
    // DC.
    private var blockSums: [Float]
    private var blocksSummed: Int64 = 0
    private var dcCachedFor: Int64 = -1
    private var dcValidFrom: Int64 = 0
    private var dcValidTo: Int64 = 0
    // The pattern phase of the last measurement (so that the next needs no division).
    private var phaseT: Int64 = 0
    private var phaseR = 0
    private var dc: Float = 0

    // Levels.
    private var oneLevel = 1.0
    private var zeroLevel = 1.0
    private var levelsLearned = false
    private var zeroPrimed = false
    // Decisions.
    private var nextT: Int64
    private var previousD = 0.0
    private var previousKnown = false
    private var armed = false
    private var inByte = false
    private var nextBitTime = 0.0
    private var bitIndex = 0
    private var word: UInt16 = 0
    private var idleRun = 0
    private var idleNeeded: Int
    private var sinceLearn = 0
    /// Grid points up to here are measured in full (the gate stays open around anything but idle).
    private var fullUntil: Int64 = -1
    /// The last grid point measured in full.
    private var lastFull: Int64 = -1
    /// 2 cos of the "0" tone's angular step: x[n] - c x[n-1] + x[n-2] is 0 for the idle tone.
    private let predictor: Float
    /// The residual energy of half a bit of the "1" tone at the learned level, per unit level².
    private let oneResidualPerLevel: Double
    private var gateEnergy: Float {
        Float(Self.gateShare * Self.gateShare * oneResidualPerLevel * oneLevel * oneLevel)
    }
    private var weakest = Double.infinity

    /// A bit whose tone amplitudes (each relative to its learned level) sum to less than this
    /// is not trusted, and its byte is dropped.
    static let minimumStrength = 0.4
    /// On an armed idle line, half a bit whose predictor residual is under that of this share
    /// of the "1" tone's level (an energy under its square) is idle.
    static let gateShare = 0.5
    /// On an armed idle line the "0" level is re-learned every this many bits.
    static let gatedLearnBits = 16

    public init(setting: VendorModemSetting) {
        self.setting = setting
        let n = setting.samplesPerBit
        spb = n
        let lw = (n + 3) / 4 * 4
        windowLength = lw
        stride = Swift.max(1, n / 2)
        func table(_ halfPeriod: Int, _ f: (Double) -> Double) -> [Double] {
            (0..<(2 * halfPeriod)).map { f(Double.pi * Double($0) / Double(halfPeriod)) }
        }
        let oneCos = table(setting.oneHalfPeriod, vendorCos)
        let oneSin = table(setting.oneHalfPeriod, vendorSin)
        let zeroCos = table(setting.zeroHalfPeriod, vendorCos)
        let zeroSin = table(setting.zeroHalfPeriod, vendorSin)
        let l = Self.lcm(oneCos.count, zeroCos.count)
        patternLength = l
        var d = [Float](repeating: 0, count: l * 4 * lw)
        var sums = [Float](repeating: 0, count: l * 4)
        for r in 0..<l {
            // The window ending at a sample of phase r covers phases r-n+1 ... r; sample j of
            // the window (0 = oldest) sits at padded index lw - n + j.
            var basis = [[Double]](repeating: [Double](repeating: 0, count: n), count: 4)
            for j in 0..<n {
                let k = ((r - (n - 1) + j) % l + l) % l
                basis[0][j] = oneCos[k % oneCos.count]
                basis[1][j] = oneSin[k % oneSin.count]
                basis[2][j] = zeroCos[k % zeroCos.count]
                basis[3][j] = zeroSin[k % zeroSin.count]
            }
            var g = [Double](repeating: 0, count: 16)
            for u in 0..<4 { for v in 0..<4 { for j in 0..<n { g[4 * u + v] += basis[u][j] * basis[v][j] } } }
            let inv = Self.invert4(g)
            for k in 0..<4 {
                var sum = 0.0
                for j in 0..<n {
                    var w = 0.0
                    for m in 0..<4 { w += inv[4 * k + m] * basis[m][j] }
                    d[(r * 4 + k) * lw + (lw - n) + j] = Float(w)
                    sum += w
                }
                sums[r * 4 + k] = Float(sum)
            }
        }
        duals = d
        dualSums = sums
        // The DC span: whole blocks of one bit holding whole patterns, at least four bits.
        var g = l, h = n
        while h != 0 { (g, h) = (h, g % h) }
        let unit = l / g
        dcBlocks = unit * ((4 + unit - 1) / unit)
        blockSums = [Float](repeating: 0, count: dcBlocks)
        keep = lw + (dcBlocks + 3) * n + stride
        nextT = Int64(lw - 1)
        idleNeeded = 10 * n
        let w0 = 2 * Double.pi * setting.zeroTone.hz / Double(setting.sampleRate)
        let w1 = 2 * Double.pi * setting.oneTone.hz / Double(setting.sampleRate)
        predictor = Float(2 * vendorCos(w0))
        // x = A cos(w1 n + phi) leaves a residual of amplitude A |2 cos w1 - 2 cos w0|.
        let step = 2 * vendorCos(w1) - 2 * vendorCos(w0)
        oneResidualPerLevel = Double(Swift.max(1, n / 2)) * step * step / 2
    }

    /// Consumes `input`, appending every byte completed in it to `bytes`.
    public mutating func process(_ input: UnsafeBufferPointer<Float>, into bytes: inout [Byte]) {
        var h = history
        history = []
        h.append(contentsOf: input)
        now += Int64(input.count)
        h.withUnsafeBufferPointer { hp in
            duals.withUnsafeBufferPointer { dp in
                dualSums.withUnsafeBufferPointer { sp in
                    let p = Pointers(history: hp.baseAddress!, base: historyBase, duals: dp.baseAddress!, sums: sp.baseAddress!)
                    while nextT < now {
                        if inByte { readBit(p, &bytes) } else { scan(p, &bytes) }
                    }
                }
            }
        }
        // Drop what no future measurement can reach (amortised: at most half the buffer).
        let drop = Int(nextT - Int64(keep) - historyBase)
        if drop > 0 && drop >= h.count / 2 {
            let k = Swift.min(drop, h.count)
            h.removeFirst(k)
            historyBase += Int64(k)
        }
        history = h
    }

    private struct Pointers {
        let history: UnsafePointer<Float>
        let base: Int64
        let duals: UnsafePointer<Float>
        let sums: UnsafePointer<Float>
    }

    private struct Measurement {
        var d: Double
        var a1: Double
        var a0: Double
    }

    // MARK: Measurements

    /// The DC estimate for a window ending at t: the mean of the last whole blocks by then.
    @inline(__always)
    private mutating func dcEstimate(_ t: Int64, _ p: Pointers) -> Float {
        // The estimate holds for every t in dcValid (one block): no division on the way.
        if t >= dcValidFrom && t < dcValidTo { return dc }
        let complete = (t + 1) / Int64(spb)
        dcValidFrom = complete * Int64(spb) - 1
        dcValidTo = dcValidFrom + Int64(spb)
        if complete == dcCachedFor { return dc }
        let k = Int64(dcBlocks)
        var b = Swift.max(blocksSummed, complete - k)
        while b < complete {
            let start = p.history + Int(b * Int64(spb) - p.base)
            var acc = SIMD4<Float>()
            var j = 0
            while j + 4 <= spb {
                acc += UnsafeRawPointer(start + j).loadUnaligned(as: SIMD4<Float>.self)
                j += 4
            }
            var s = acc.sum()
            while j < spb { s += start[j]; j += 1 }
            blockSums[Int(b % k)] = s
            b += 1
        }
        blocksSummed = complete
        let count = Int(Swift.min(complete, k))
        var total: Float = 0
        // The ring holds blocks 0..<count until it is full, then the last k in some order.
        for i in 0..<count { total += blockSums[i] }
        dc = count > 0 ? total / Float(count * spb) : 0
        dcCachedFor = complete
        return dc
    }

    /// `t` modulo the pattern length, stepped from the last measurement's (they are close).
    @inline(__always)
    private mutating func phase(_ t: Int64) -> Int {
        let delta = t - phaseT
        var r: Int
        if delta >= 0 && delta < Int64(patternLength) {
            r = phaseR + Int(delta)
            if r >= patternLength { r -= patternLength }
        } else if delta < 0 && delta > -Int64(patternLength) {
            r = phaseR + Int(delta)
            if r < 0 { r += patternLength }
        } else {
            r = Int(t % Int64(patternLength))
        }
        phaseT = t
        phaseR = r
        return r
    }

    /// The energy of the "0" tone's predictor residual over the half bit ending at g: about 0
    /// on an idle line whatever its gain, phase, DC or clock error; a "1" leaves its energy.
    @inline(__always)
    private mutating func residualEnergy(_ g: Int64, _ p: Pointers) -> Float {
        measurements += 1
        let c = predictor
        let bias = dcEstimate(g, p) * (2 - c)
        let x = p.history + Int(g - Int64(stride) + 1 - p.base)
        var e0: Float = 0, e1: Float = 0
        var i = 0
        while i + 1 < stride {
            let r0 = x[i] - c * x[i - 1] + x[i - 2] - bias
            let r1 = x[i + 1] - c * x[i] + x[i - 1] - bias
            e0 += r0 * r0
            e1 += r1 * r1
            i += 2
        }
        if i < stride {
            let r = x[i] - c * x[i - 1] + x[i - 2] - bias
            e0 += r * r
        }
        return e0 + e1
    }

    /// The square of the "1" tone's fitted amplitude over the window ending at t.
    @inline(__always)
    private mutating func oneAmplitudeSquared(_ t: Int64, _ p: Pointers) -> Double {
        measurements += 1
        let dcv = dcEstimate(t, p)
        let lw = windowLength
        let x = p.history + Int(t - Int64(lw - 1) - p.base)
        let r = phase(t)
        let w = p.duals + r * 4 * lw
        var a0 = SIMD4<Float>(), a1 = SIMD4<Float>()
        var j = 0
        while j < lw {
            let v = UnsafeRawPointer(x + j).loadUnaligned(as: SIMD4<Float>.self)
            a0 += v * UnsafeRawPointer(w + j).loadUnaligned(as: SIMD4<Float>.self)
            a1 += v * UnsafeRawPointer(w + lw + j).loadUnaligned(as: SIMD4<Float>.self)
            j += 4
        }
        let c0 = Double(a0.sum() - dcv * p.sums[4 * r])
        let c1 = Double(a1.sum() - dcv * p.sums[4 * r + 1])
        return c0 * c0 + c1 * c1
    }

    /// The full fit over the window ending at t.
    @inline(__always)
    private mutating func measure(_ t: Int64, _ p: Pointers) -> Measurement {
        measurements += 1
        let dcv = dcEstimate(t, p)
        let lw = windowLength
        let x = p.history + Int(t - Int64(lw - 1) - p.base)
        let r = phase(t)
        let w = p.duals + r * 4 * lw
        var s0 = SIMD4<Float>(), s1 = SIMD4<Float>(), s2 = SIMD4<Float>(), s3 = SIMD4<Float>()
        var j = 0
        while j < lw {
            let v = UnsafeRawPointer(x + j).loadUnaligned(as: SIMD4<Float>.self)
            s0 += v * UnsafeRawPointer(w + j).loadUnaligned(as: SIMD4<Float>.self)
            s1 += v * UnsafeRawPointer(w + lw + j).loadUnaligned(as: SIMD4<Float>.self)
            s2 += v * UnsafeRawPointer(w + 2 * lw + j).loadUnaligned(as: SIMD4<Float>.self)
            s3 += v * UnsafeRawPointer(w + 3 * lw + j).loadUnaligned(as: SIMD4<Float>.self)
            j += 4
        }
        let c0 = Double(s0.sum() - dcv * p.sums[4 * r])
        let c1 = Double(s1.sum() - dcv * p.sums[4 * r + 1])
        let c2 = Double(s2.sum() - dcv * p.sums[4 * r + 2])
        let c3 = Double(s3.sum() - dcv * p.sums[4 * r + 3])
        let a1 = (c0 * c0 + c1 * c1).squareRoot()
        let a0 = (c2 * c2 + c3 * c3).squareRoot()
        let u1 = a1 / oneLevel
        let u0 = a0 / zeroLevel
        let total = u1 + u0
        // Until a "1" has been seen its level is unknown (a band limit may have cut it by
        // 11 dB), so the first start bit is found by the "0" tone going away alone.
        let d = levelsLearned
            ? (total > 1e-12 ? (u1 - u0) / total : 0)
            : Swift.max(-1, Swift.min(1, 1 - 2 * u0))
        zeroShare = u0
        return Measurement(d: d, a1: a1, a0: a0)
    }

    // MARK: Decisions

    /// A measurement point on a line between bytes (every half bit).
    private mutating func scan(_ p: Pointers, _ bytes: inout [Byte]) {
        var g = nextT
        nextT = g + Int64(stride)
        if armed && levelsLearned && zeroPrimed && g > fullUntil {
            // The idle line, half bit by half bit, in a tight loop until something else shows.
            let threshold = gateEnergy
            let learnEvery = Self.gatedLearnBits * spb
            var point = g
            while true {
                if residualEnergy(point, p) >= threshold { break }
                gatedHalfBits += 1
                previousKnown = false
                sinceLearn += stride
                if sinceLearn >= learnEvery {
                    sinceLearn = 0
                    let m = measure(point, p)
                    if m.d < -0.3 { learnZero(m.a0, rate: 0.5) }
                    previousD = m.d
                    previousKnown = true
                }
                point += Int64(stride)
                if point >= now {
                    nextT = point
                    return
                }
            }
            g = point
            nextT = g + Int64(stride)
            // Something other than the "0" tone: measure from the point before (the start
            // bit may have begun in the quiet half bit before this one).
            fullUntil = g + Int64(stride)
            if g - Int64(stride) > lastFull {
                nextT = g - Int64(stride)
                return
            }
        }
        let m = measure(g, p)
        lastFull = g
        if m.d >= -0.3 { fullUntil = Swift.max(fullUntil, g + Int64(stride)) }
        if armed && m.d > 0 && !(previousKnown && previousD > 0) {
            // The exact crossing lies in (g - stride, g]: measure it sample by sample.
            var tp = g - Int64(stride)
            if tp >= Int64(windowLength - 1) {
                var dp = previousKnown ? previousD : measure(tp, p).d
                if dp <= 0 {
                    while tp < g {
                        let t = tp + 1
                        let mt = t == g ? m : measure(t, p)
                        if mt.d > 0 {
                            startByte(crossing: Double(t - 1) + dp / (dp - mt.d), at: t)
                            previousD = mt.d
                            return
                        }
                        dp = mt.d
                        tp = t
                    }
                }
            }
        }
        // Idle: the line sits on the "0" tone. Before any level is known, that is the "0"
        // tone clearly above the "1" (raw amplitudes; the fit has removed the leak).
        let idle = zeroPrimed ? m.d < -0.3 : (m.a0 > 4 * m.a1 && m.a0 > 1e-6)
        if idle {
            idleRun += stride
            if idleRun >= idleNeeded { armed = true }
            sinceLearn += stride
            if sinceLearn >= spb || !zeroPrimed {
                sinceLearn = 0
                learnZero(m.a0, rate: 0.125)
            }
        } else {
            idleRun = 0
        }
        previousD = m.d
        previousKnown = true
    }

    private mutating func startByte(crossing: Double, at t: Int64) {
        inByte = true
        armed = false
        bitIndex = 0
        word = 0
        weakest = .infinity
        nextBitTime = crossing + Double(spb) / 2
        nextT = Swift.max(t, Int64(nextBitTime.rounded(.up)))
    }

    /// Reads the bit ending at `nextBitTime` (measured at the samples either side).
    private mutating func readBit(_ p: Pointers, _ bytes: inout [Byte]) {
        let t = nextT
        let before = measure(t - 1, p)
        let m = measure(t, p)
        let frac = nextBitTime - Double(t - 1)
        let value = before.d + (m.d - before.d) * Swift.max(0, Swift.min(1, frac))
        weakest = Swift.min(weakest, m.a1 / oneLevel + m.a0 / zeroLevel)
        previousD = m.d
        previousKnown = true
        let one = value > 0
        if bitIndex == 0 && !one {
            falseStarts += 1
            loseSync(at: t)
            return
        }
        if bitIndex >= 1 && bitIndex <= 8 {
            word = word << 1 | (one ? 1 : 0)
        }
        let trusted = !levelsLearned || weakest >= Self.minimumStrength
        if trusted { if one { learnOne(m.a1) } else { learnZero(m.a0, rate: 0.125) } }
        bitIndex += 1
        nextBitTime += Double(spb)
        nextT = Int64(nextBitTime.rounded(.up))
        guard bitIndex == 10 else { return }
        inByte = false
        nextT = t + Int64(stride)
        if one {
            framingErrors += 1
            loseSync(at: t)
        } else if !trusted {
            erasures += 1
            loseSync(at: t)
        } else {
            bytes.append(Byte(value: UInt8(truncatingIfNeeded: word), end: t))
            lastByteEnd = t
            armed = true
            idleRun = spb
            idleNeeded = spb / 2
            sinceLearn = 0
        }
    }

    private mutating func loseSync(at t: Int64) {
        inByte = false
        armed = false
        idleRun = 0
        idleNeeded = 10 * spb
        nextT = t + Int64(stride)
    }

    private mutating func learnOne(_ a1: Double) {
        guard a1 > 1e-9 else { return }
        if !levelsLearned {
            oneLevel = a1
            levelsLearned = true
        } else {
            oneLevel += 0.125 * (a1 - oneLevel)
        }
    }

    private mutating func learnZero(_ a0: Double, rate: Double) {
        guard a0 > 1e-9 else { return }
        if !zeroPrimed {
            zeroLevel = a0
            zeroPrimed = true
        }
        zeroLevel += rate * (a0 - zeroLevel)
        if !levelsLearned { oneLevel = zeroLevel }
    }

    private static func lcm(_ a: Int, _ b: Int) -> Int {
        var x = a, y = b
        while y != 0 { (x, y) = (y, x % y) }
        return a / x * b
    }

    /// Inverts a 4 × 4 matrix (row-major) by Gauss-Jordan elimination with partial pivoting;
    /// a singular matrix gives its pseudo-solution on the pivots found.
    private static func invert4(_ matrix: [Double]) -> [Double] {
        var a = matrix
        var inv = [Double](repeating: 0, count: 16)
        for i in 0..<4 { inv[5 * i] = 1 }
        for col in 0..<4 {
            var pivot = col
            for row in col..<4 where abs(a[4 * row + col]) > abs(a[4 * pivot + col]) { pivot = row }
            if pivot != col {
                for k in 0..<4 {
                    a.swapAt(4 * col + k, 4 * pivot + k)
                    inv.swapAt(4 * col + k, 4 * pivot + k)
                }
            }
            let p = a[4 * col + col]
            guard abs(p) > 1e-12 else { continue }
            for k in 0..<4 {
                a[4 * col + k] /= p
                inv[4 * col + k] /= p
            }
            for row in 0..<4 where row != col {
                let f = a[4 * row + col]
                if f == 0 { continue }
                for k in 0..<4 {
                    a[4 * row + k] -= f * a[4 * col + k]
                    inv[4 * row + k] -= f * inv[4 * col + k]
                }
            }
        }
        return inv
    }

}
