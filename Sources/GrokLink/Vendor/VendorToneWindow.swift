// The handshake's ears: one analysis window of 1260 samples at a time, measuring how much of
// the window's energy sits in each tone the current phase listens for (Goertzel), and the
// vendor's own measure, sign changes, for comparison.

/// What one window contained.
public struct VendorWindowReport: Sendable, Equatable {
    /// Sign changes between consecutive samples (the vendor's measure; a sample counts as
    /// positive when it is >= 0).
    public var signChanges: Int
    /// Mean power with the window's mean removed, in full-scale units squared.
    public var power: Double
    /// For each listened-for tone, the share of the window's (mean-removed) energy at that
    /// frequency: 1 for a pure tone, about 2/1260 for white noise.
    public var toneShares: [Double]
}

/// Measures windows of ``vendorHandshakeWindow`` samples. Pure and incremental: feed samples
/// in any chunking, a report comes out at the end of each window.
struct VendorToneWindow {
    let length: Int
    let sampleRate: Int
    /// The listened-for frequencies, in Hz.
    private(set) var targets: [Double] = []
    private var coefficients: [Double] = []
    private var s1: [Double] = []
    private var s2: [Double] = []
    private var count = 0
    private var sum = 0.0
    private var sumSquares = 0.0
    private var signChanges = 0
    private var lastPositive = true

    init(sampleRate: Int, length: Int = vendorHandshakeWindow) {
        self.sampleRate = sampleRate
        self.length = length
    }

    /// Samples still missing from the current window.
    var remaining: Int { length - count }

    /// Listens for `frequencies` from the next window on (the current one keeps its targets
    /// if it has begun).
    mutating func listen(for frequencies: [Double]) {
        targets = frequencies
        coefficients = frequencies.map { 2 * vendorCos(2 * Double.pi * $0 / Double(sampleRate)) }
        s1 = Array(repeating: 0, count: frequencies.count)
        s2 = Array(repeating: 0, count: frequencies.count)
    }

    /// Starts a fresh window (the partial one is dropped).
    mutating func restart() {
        count = 0
        sum = 0
        sumSquares = 0
        signChanges = 0
        for i in s1.indices {
            s1[i] = 0
            s2[i] = 0
        }
    }

    /// Consumes at most ``remaining`` samples; returns the report when the window completes.
    mutating func consume(_ input: UnsafeBufferPointer<Float>) -> VendorWindowReport? {
        precondition(input.count <= remaining)
        var sum = self.sum
        var squares = self.sumSquares
        var changes = signChanges
        var positive = lastPositive
        for x in input {
            let v = Double(x)
            sum += v
            squares += v * v
            let p = x >= 0
            if p != positive { changes += 1 }
            positive = p
        }
        self.sum = sum
        sumSquares = squares
        signChanges = changes
        lastPositive = positive
        for t in targets.indices {
            let c = coefficients[t]
            var a = s1[t]
            var b = s2[t]
            for x in input {
                let s = Double(x) + c * a - b
                b = a
                a = s
            }
            s1[t] = a
            s2[t] = b
        }
        count += input.count
        guard count == length else { return nil }
        let n = Double(length)
        let energy = Swift.max(sumSquares - sum * sum / n, 0)
        var shares: [Double] = []
        shares.reserveCapacity(targets.count)
        for t in targets.indices {
            let a = s1[t]
            let b = s2[t]
            let magnitude = a * a + b * b - coefficients[t] * a * b
            shares.append(energy > 1e-9 * n ? Swift.min(magnitude * 2 / (n * energy), 1.5) : 0)
        }
        let report = VendorWindowReport(signChanges: signChanges, power: energy / n, toneShares: shares)
        restart()
        return report
    }
}
