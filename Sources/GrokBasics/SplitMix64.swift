/// SplitMix64 (Steele, Lea and Flood): a small seeded generator that expands one 64-bit seed
/// into well-mixed words. The one seeded generator of the package: the cable's noise
/// generator is seeded from it, the emulated Grokker draws its serials, scenes and antenna
/// from it, and tests and benchmarks use it so a seed names a run that replays exactly.
/// Not cryptographic.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
