// Our receiver for the vendor's FSK: better than the vendor's sign counting.
//
// Design (measured in notes/modem.md):
// 1. A DC blocker (first-order high-pass at 20 Hz) removes offsets.
// 2. Four sliding correlators, one bit long (cosine and sine of each tone; exact tables;
//    running sums in Double), and a least-squares fit of both tones to the bit that ends at
//    every sample: the correlations times the inverse Gram matrix of the four basis
//    functions over that window (precomputed for every phase of the pattern). The two tones
//    are not orthogonal over one bit (at 12 samples per bit a "0" tone leaks 22 % into the
//    "1" correlator); the fit removes the leak, so a bit's absent tone measures about zero
//    even when the band limit has attenuated the present one by 11 dB.
// 3. Each amplitude is divided by a learned level for its tone (band limits and AC coupling
//    attenuate the tones differently), giving a soft decision d in -1...1 per sample that
//    ignores gain and polarity.
// 4. A start bit is the 0 -> 1 edge after idle: d crosses zero when the sliding window is half
//    in the start bit, so the bit's end lies half a bit later. Every byte is re-timed on its
//    own start edge (the fractional crossing), so clock offset and drift never accumulate.
// 5. The ten bits are read at their ends (interpolated between samples); a stop bit that is
//    not a 0 drops the byte (framing error) and the search restarts.

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

    private let spb: Int
    // DC blocker.
    private let dcPole: Double
    private var dcX = 0.0
    private var dcY = 0.0
    // Correlators: tables of cos/sin over one period of each tone, ring of the last spb terms.
    private let oneCos: [Double]
    private let oneSin: [Double]
    private let zeroCos: [Double]
    private let zeroSin: [Double]
    private var onePhase = 0
    private var zeroPhase = 0
    private var ring: [Double]  // 4 × spb: one re, one im, zero re, zero im
    private var ringPos = 0
    private var oneRe = 0.0, oneIm = 0.0, zeroRe = 0.0, zeroIm = 0.0
    private var filled = 0
    /// Inverse Gram matrices (row-major 4 × 4) for each phase of the pattern.
    private let inverseGram: [Double]
    private let patternLength: Int
    private var patternPhase = 0
    // Levels.
    private var oneLevel = 1.0
    private var zeroLevel = 1.0
    private var levelsLearned = false
    /// Whether the "0" level has been measured once.
    private var zeroPrimed = false
    // Decisions.
    private var previousD = 0.0
    private var armed = false
    private var inByte = false
    private var nextBitTime = 0.0  // absolute fractional sample of the next bit's end
    private var bitIndex = 0
    private var word: UInt16 = 0
    private var idleRun = 0
    /// Idle samples needed before a start edge counts: half a bit after a good byte, ten bits
    /// (more than any run of zeros inside back-to-back bytes) after losing sync.
    private var idleNeeded: Int
    /// The weakest bit of the byte being read, relative to the learned levels.
    private var weakest = Double.infinity

    public init(setting: VendorModemSetting) {
        self.setting = setting
        spb = setting.samplesPerBit
        dcPole = 1 - 2 * Double.pi * 20 / Double(setting.sampleRate)
        func table(_ halfPeriod: Int, _ f: (Double) -> Double) -> [Double] {
            (0..<(2 * halfPeriod)).map { f(Double.pi * Double($0) / Double(halfPeriod)) }
        }
        oneCos = table(setting.oneHalfPeriod, vendorCos)
        oneSin = table(setting.oneHalfPeriod, vendorSin)
        zeroCos = table(setting.zeroHalfPeriod, vendorCos)
        zeroSin = table(setting.zeroHalfPeriod, vendorSin)
        ring = Array(repeating: 0, count: 4 * setting.samplesPerBit)
        let l = Self.lcm(oneCos.count, zeroCos.count)
        patternLength = l
        var inverses: [Double] = []
        inverses.reserveCapacity(16 * l)
        let n = setting.samplesPerBit
        for r in 0..<l {
            // The window ending at a sample whose phase is r covers phases r-n+1 ... r.
            var g = [Double](repeating: 0, count: 16)
            for j in 0..<n {
                let k = ((r - j) % l + l) % l
                let b = [oneCos[k % oneCos.count], oneSin[k % oneSin.count],
                         zeroCos[k % zeroCos.count], zeroSin[k % zeroSin.count]]
                for u in 0..<4 { for v in 0..<4 { g[4 * u + v] += b[u] * b[v] } }
            }
            inverses.append(contentsOf: Self.invert4(g))
        }
        inverseGram = inverses
        idleNeeded = 10 * setting.samplesPerBit
    }

    /// Bytes dropped because a bit was too weak to trust (a dropout or a cut).
    public private(set) var erasures = 0

    /// The soft decision at the last sample: +1 a clean "1" bit just ended, -1 a "0".
    public var softDecision: Double { previousD }
    /// The "0" tone's amplitude at the last sample relative to its learned level.
    public private(set) var zeroShare = 0.0

    /// Consumes `input`, appending every byte completed in it to `bytes`.
    public mutating func process(_ input: UnsafeBufferPointer<Float>, into bytes: inout [Byte]) {
        // The ring is moved out for the loop (no copy: it is unique), so the loop works on
        // raw pointers without uniqueness or bounds checks.
        var ringStorage = ring
        ring = []
        defer { ring = ringStorage }
        ringStorage.withUnsafeMutableBufferPointer { ringBuffer in
            oneCos.withUnsafeBufferPointer { oc in
                oneSin.withUnsafeBufferPointer { os in
                    zeroCos.withUnsafeBufferPointer { zc in
                        zeroSin.withUnsafeBufferPointer { zs in
                            inverseGram.withUnsafeBufferPointer { g in
                                let p = Pointers(ring: ringBuffer.baseAddress!, oneCos: oc.baseAddress!, oneSin: os.baseAddress!,
                                                 zeroCos: zc.baseAddress!, zeroSin: zs.baseAddress!, gram: g.baseAddress!,
                                                 onePeriod: oc.count, zeroPeriod: zc.count)
                                for x in input { step(Double(x), p, &bytes) }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The tables and the ring, as raw pointers for the per-sample loop.
    private struct Pointers {
        let ring: UnsafeMutablePointer<Double>
        let oneCos: UnsafePointer<Double>
        let oneSin: UnsafePointer<Double>
        let zeroCos: UnsafePointer<Double>
        let zeroSin: UnsafePointer<Double>
        let gram: UnsafePointer<Double>
        let onePeriod: Int
        let zeroPeriod: Int
    }

    @inline(__always)
    private mutating func step(_ x: Double, _ p: Pointers, _ bytes: inout [Byte]) {
        let ring = p.ring
        // 1. DC blocker.
        let y = x - dcX + dcPole * dcY
        dcX = x
        dcY = y
        // 2. Correlators.
        let oc = y * p.oneCos[onePhase], os = y * p.oneSin[onePhase]
        let zc = y * p.zeroCos[zeroPhase], zs = y * p.zeroSin[zeroPhase]
        onePhase += 1
        if onePhase == p.onePeriod { onePhase = 0 }
        zeroPhase += 1
        if zeroPhase == p.zeroPeriod { zeroPhase = 0 }
        let base = 4 * ringPos
        oneRe += oc - ring[base]
        oneIm += os - ring[base + 1]
        zeroRe += zc - ring[base + 2]
        zeroIm += zs - ring[base + 3]
        ring[base] = oc
        ring[base + 1] = os
        ring[base + 2] = zc
        ring[base + 3] = zs
        ringPos += 1
        if ringPos == spb {
            ringPos = 0
            // Re-sum once a bit so rounding never accumulates.
            if (now / Int64(spb)) % 4096 == 0 { resum(ring) }
        }
        if filled < spb { filled += 1 }
        let t = now
        now += 1
        // 3. Soft decision.
        let m = 16 * patternPhase
        patternPhase += 1
        if patternPhase == patternLength { patternPhase = 0 }
        let g = p.gram
        let c0 = g[m] * oneRe + g[m + 1] * oneIm + g[m + 2] * zeroRe + g[m + 3] * zeroIm
        let c1 = g[m + 4] * oneRe + g[m + 5] * oneIm + g[m + 6] * zeroRe + g[m + 7] * zeroIm
        let c2 = g[m + 8] * oneRe + g[m + 9] * oneIm + g[m + 10] * zeroRe + g[m + 11] * zeroIm
        let c3 = g[m + 12] * oneRe + g[m + 13] * oneIm + g[m + 14] * zeroRe + g[m + 15] * zeroIm
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
        defer { previousD = d }
        zeroShare = u0
        guard filled == spb else { return }
        // 4./5. Bytes.
        if inByte {
            let target = nextBitTime
            if Double(t) >= target {
                // Interpolate between t - 1 and t.
                let frac = target - Double(t - 1)
                let value = previousD + (d - previousD) * Swift.max(0, Swift.min(1, frac))
                let strength = a1 / oneLevel + a0 / zeroLevel
                weakest = Swift.min(weakest, strength)
                readBit(value, a1: a1, a0: a0, at: t, &bytes)
            }
            return
        }
        // Idle: the line sits on the "0" tone. Before any level is known, that is the "0"
        // tone clearly above the "1" (raw amplitudes; the fit has removed the leak).
        let idle = zeroPrimed ? d < -0.3 : (a0 > 4 * a1 && a0 > 1e-6)
        if idle {
            idleRun += 1
            if idleRun >= idleNeeded { armed = true }
            if idleRun % spb == 0 || !zeroPrimed { learnZero(a0) }
        } else {
            idleRun = 0
        }
        if armed && d > 0 && previousD <= 0 {
            let crossing = Double(t - 1) + previousD / (previousD - d)
            inByte = true
            armed = false
            bitIndex = 0
            word = 0
            weakest = .infinity
            nextBitTime = crossing + Double(spb) / 2
            if Double(t) >= nextBitTime {  // only when spb is tiny
                readBit(d, a1: a1, a0: a0, at: t, &bytes)
            }
        }
    }

    private mutating func readBit(_ value: Double, a1: Double, a0: Double, at t: Int64, _ bytes: inout [Byte]) {
        let one = value > 0
        if bitIndex == 0 && !one {
            falseStarts += 1
            loseSync()
            return
        }
        if bitIndex >= 1 && bitIndex <= 8 {
            word = word << 1 | (one ? 1 : 0)
        }
        let trusted = !levelsLearned || weakest >= Self.minimumStrength
        if trusted { if one { learnOne(a1) } else { learnZero(a0) } }
        bitIndex += 1
        nextBitTime += Double(spb)
        if bitIndex == 10 {
            inByte = false
            if one {
                framingErrors += 1
                loseSync()
            } else if !trusted {
                erasures += 1
                loseSync()
            } else {
                bytes.append(Byte(value: UInt8(truncatingIfNeeded: word), end: t))
                lastByteEnd = t
                armed = true
                idleRun = spb
                idleNeeded = spb / 2
            }
        }
    }

    /// A bit whose tone amplitudes (each relative to its learned level) sum to less than this
    /// is not trusted, and its byte is dropped.
    static let minimumStrength = 0.4

    private mutating func loseSync() {
        inByte = false
        armed = false
        idleRun = 0
        idleNeeded = 10 * spb
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

    private mutating func learnZero(_ a0: Double) {
        guard a0 > 1e-9 else { return }
        if !zeroPrimed {
            zeroLevel = a0
            zeroPrimed = true
        }
        zeroLevel += 0.125 * (a0 - zeroLevel)
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

    private mutating func resum(_ ring: UnsafeMutablePointer<Double>) {
        var r1 = 0.0, i1 = 0.0, r0 = 0.0, i0 = 0.0
        for k in 0..<spb {
            r1 += ring[4 * k]
            i1 += ring[4 * k + 1]
            r0 += ring[4 * k + 2]
            i0 += ring[4 * k + 3]
        }
        oneRe = r1
        oneIm = i1
        zeroRe = r0
        zeroIm = i0
    }
}
