// Recursive filters for the cable's impairments: AC coupling and a band limit.
// Designed by the bilinear transform with pre-warping, so the -3 dB point lands exactly on
// the requested frequency. State is kept in Double so that low cut-offs stay stable.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Returns `state`, or exactly zero if it is far below audibility.
///
/// Called once per block on every recursive state variable: a decaying filter would
/// otherwise settle into a limit cycle of subnormal numbers, which are very slow on x86.
/// A block may still pass through the subnormal range once while decaying; that costs a few
/// thousand slow operations at most.
@inline(__always)
func flushTiny(_ state: Double) -> Double {
    abs(state) < 1e-25 ? 0 : state
}

/// A first-order high-pass filter (a series capacitor into a resistive input).
struct OnePoleHighPass {
    private let b0: Double
    private let a1: Double
    private var x1: Double = 0
    private var y1: Double = 0

    /// - Parameters:
    ///   - cutoff: The -3 dB frequency in Hz, greater than 0 and below half the rate.
    ///   - sampleRate: Samples per second.
    init(cutoff: Double, sampleRate: Double) {
        let k = tan(Double.pi * cutoff / sampleRate)
        b0 = 1 / (1 + k)
        a1 = (k - 1) / (k + 1)
    }

    /// Filters one sample.
    @inline(__always)
    mutating func step(_ x: Double) -> Double {
        let y = b0 * (x - x1) - a1 * y1
        x1 = x
        y1 = y
        return y
    }

    /// Call after each block: see ``flushTiny(_:)``.
    mutating func endBlock() {
        y1 = flushTiny(y1)
    }

    /// Filters `samples` in place.
    mutating func process(_ samples: UnsafeMutableBufferPointer<Float>) {
        var filter = self
        for i in samples.indices {
            samples[i] = Float(filter.step(Double(samples[i])))
        }
        filter.endBlock()
        self = filter
    }
}

/// A second-order section in direct form I (Double state, so its noise is negligible).
struct Biquad {
    private let b0: Double
    private let b1: Double
    private let b2: Double
    private let a1: Double
    private let a2: Double
    private var x1: Double = 0
    private var x2: Double = 0
    private var y1: Double = 0
    private var y2: Double = 0

    /// A low-pass section (RBJ cookbook) with quality factor `q`.
    init(lowPass cutoff: Double, q: Double, sampleRate: Double) {
        let w0 = 2 * Double.pi * cutoff / sampleRate
        let alpha = sin(w0) / (2 * q)
        let cosW0 = cos(w0)
        let a0 = 1 + alpha
        b0 = (1 - cosW0) / 2 / a0
        b1 = (1 - cosW0) / a0
        b2 = b0
        a1 = -2 * cosW0 / a0
        a2 = (1 - alpha) / a0
    }

    /// Filters one sample.
    @inline(__always)
    mutating func step(_ x: Double) -> Double {
        // Grouped so that only one multiply and one subtract depend on the previous output.
        let y = ((b0 * x + b1 * x1 + b2 * x2) - a2 * y2) - a1 * y1
        x2 = x1
        x1 = x
        y2 = y1
        y1 = y
        return y
    }

    /// Call after each block: see ``flushTiny(_:)``.
    mutating func endBlock() {
        y1 = flushTiny(y1)
        y2 = flushTiny(y2)
    }
}

/// A fourth-order Butterworth low-pass filter: two cascaded biquads with
/// Q = 1/(2 cos(pi/8)) and 1/(2 cos(3 pi/8)). Flat passband, -24 dB per octave.
struct ButterworthLowPass4 {
    private var first: Biquad
    private var second: Biquad

    /// - Parameters:
    ///   - cutoff: The -3 dB frequency in Hz, below half the rate.
    ///   - sampleRate: Samples per second.
    init(cutoff: Double, sampleRate: Double) {
        first = Biquad(lowPass: cutoff, q: 1 / (2 * cos(Double.pi / 8)), sampleRate: sampleRate)
        second = Biquad(lowPass: cutoff, q: 1 / (2 * cos(3 * Double.pi / 8)), sampleRate: sampleRate)
    }

    /// Filters one sample.
    @inline(__always)
    mutating func step(_ x: Double) -> Double {
        second.step(first.step(x))
    }

    /// Call after each block: see ``flushTiny(_:)``.
    mutating func endBlock() {
        first.endBlock()
        second.endBlock()
    }

    /// Filters `samples` in place.
    mutating func process(_ samples: UnsafeMutableBufferPointer<Float>) {
        var filter = self
        for i in samples.indices {
            samples[i] = Float(filter.step(Double(samples[i])))
        }
        filter.endBlock()
        self = filter
    }
}
