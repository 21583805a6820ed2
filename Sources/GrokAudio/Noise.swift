// Deterministic pseudo-random numbers for the simulated cable: fast, seedable, and the same
// so that on one platform a seed reproduces a run sample for sample.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GrokBasics

/// xoshiro256** (Blackman and Vigna): the cable's noise and dropout-phase generator.
///
/// Not cryptographic. Each seed and stream gives an independent, reproducible sequence.
struct Xoshiro256StarStar: RandomNumberGenerator {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// - Parameters:
    ///   - seed: The run's seed (``CableConfiguration/seed``).
    ///   - stream: Separates generators that share a seed (one per cable direction).
    init(seed: UInt64, stream: UInt64 = 0) {
        var mixer = SplitMix64(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        s0 = mixer.next()
        s1 = mixer.next()
        s2 = mixer.next()
        s3 = mixer.next()
        if s0 | s1 | s2 | s3 == 0 { s0 = 1 }  // The all-zero state is a fixed point.
    }

    /// Starts from an explicit state (for checking against the reference implementation).
    init(state: (UInt64, UInt64, UInt64, UInt64)) {
        (s0, s1, s2, s3) = state
    }

    @inline(__always)
    mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotateLeft(s3, 45)
        return result
    }

    /// A uniform double in [0, 1) with 53 random bits.
    @inline(__always)
    mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    @inline(__always)
    private func rotateLeft(_ x: UInt64, _ k: UInt64) -> UInt64 {
        (x << k) | (x >> (64 &- k))
    }
}

/// Standard normal deviates by the ziggurat method (Marsaglia and Tsang, 2000, in the
/// ZIGNOR form of Doornik, 2005): 128 layers; about 99 % of deviates cost one random word,
/// one comparison and one multiplication.
struct GaussianSource {
    private var uniform: Xoshiro256StarStar

    init(seed: UInt64, stream: UInt64) {
        uniform = Xoshiro256StarStar(seed: seed, stream: stream)
    }

    /// A uniform double in [0, 1) from the same generator.
    mutating func nextUnit() -> Double {
        uniform.nextUnit()
    }

    /// Fills `buffer` with deviates of mean 0 and standard deviation 1.
    mutating func fill(_ buffer: UnsafeMutableBufferPointer<Float>) {
        var source = self
        Ziggurat.layers.withUnsafeBufferPointer { layers in
            Ziggurat.ratios.withUnsafeBufferPointer { ratios in
                let x = layers.baseAddress!
                let r = ratios.baseAddress!
                for i in buffer.indices {
                    buffer[i] = Float(source.next(x: x, r: r))
                }
            }
        }
        self = source
    }

    /// A deviate, given the tables (``Ziggurat/layers`` and ``Ziggurat/ratios``) so that a
    /// loop can look them up once.
    @inline(__always)
    mutating func next(x: UnsafePointer<Double>, r: UnsafePointer<Double>) -> Double {
        while true {
            let bits = uniform.next()
            // The top 53 bits give u in [-1, 1), the low 7 bits the layer.
            let u = Double(bits >> 11) * 0x1.0p-52 - 1
            let i = Int(truncatingIfNeeded: bits & 0x7F)
            if abs(u) < r[i] { return u * x[i] }
            if i == 0 { return tail(negative: u < 0) }
            let candidate = u * x[i]
            let f0 = exp(-0.5 * (x[i] * x[i] - candidate * candidate))
            let f1 = exp(-0.5 * (x[i + 1] * x[i + 1] - candidate * candidate))
            if f1 + uniform.nextUnit() * (f0 - f1) < 1 { return candidate }
        }
    }

    /// A deviate from the tail beyond ``Ziggurat/edge``.
    private mutating func tail(negative: Bool) -> Double {
        var x: Double
        var y: Double
        repeat {
            x = log(1 - uniform.nextUnit()) / Ziggurat.edge
            y = log(1 - uniform.nextUnit())
        } while -2 * y < x * x
        return negative ? x - Ziggurat.edge : Ziggurat.edge - x
    }
}

/// The ziggurat's tables for the standard normal density.
enum Ziggurat {
    /// Where the base layer's tail starts.
    static let edge = 3.442619855899
    /// The area of each layer.
    static let area = 9.91256303526217e-3
    /// Layer right edges: `layers[0]` is the base's equivalent width, `layers[128]` is 0.
    static let layers: [Double] = {
        var x = [Double](repeating: 0, count: 129)
        var f = exp(-0.5 * edge * edge)
        x[0] = area / f
        x[1] = edge
        for i in 2..<128 {
            x[i] = (-2 * log(area / x[i - 1] + f)).squareRoot()
            f = exp(-0.5 * x[i] * x[i])
        }
        x[128] = 0
        return x
    }()
    /// `layers[i + 1] / layers[i]`: below it a point is inside the density for sure.
    static let ratios: [Double] = (0..<128).map { layers[$0 + 1] / layers[$0] }
}
