import GrokBasics

extension SplitMix64 {
    /// `count` bytes drawn from the generator, so test data is the same on every run.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}
