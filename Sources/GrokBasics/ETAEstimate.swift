import Foundation

/// The time left of a job from its measured progress: the rate at which `done` grew over
/// the recent half of the time since it first moved (at least ``minimumWindow`` seconds),
/// so waiting before the first byte (connecting, erasing) does not count and a rate that
/// changes is followed. Pure: the caller gives the time of each sample (the wall clock on a
/// terminal, the link's sample clock in tests), so the same series gives the same ETA.
/// A total that changes (a fleet run learning its update's size) keeps the measurement:
/// `done` is still counted in the same unit, only what is left changed.
public struct ETAEstimate: Sendable {
    /// The shortest window the rate is measured over, seconds.
    public static let minimumWindow = 10.0
    /// At most this many samples are kept (older ones are thinned, every other one dropped).
    public static let maximumSamples = 512

    public private(set) var samples: [(time: Double, done: Int)] = []
    private var total = 0

    public init() {}

    /// Takes a sample: `done` of `total` at `time` seconds. A job that went back (a restart)
    /// starts its measurement over.
    public mutating func record(time: Double, done: Int, total: Int) {
        if samples.last.map({ done < $0.done }) ?? false { samples.removeAll() }
        self.total = total
        if let last = samples.last, last.done == done {
            // Nothing moved: until the first move, the newest such sample is the origin.
            if samples.count == 1 { samples[0] = (time, done) }
            return
        }
        samples.append((time, done))
        if samples.count > Self.maximumSamples {
            samples = samples.enumerated().filter { $0.offset % 2 == 0 || $0.offset == samples.count - 1 }.map(\.element)
        }
    }

    /// Seconds left at `time`, or `nil` while nothing has moved yet; 0 when all is done.
    public func remaining(at time: Double) -> Double? {
        guard let last = samples.last, total > 0 else { return nil }
        if last.done >= total { return 0 }
        guard samples.count >= 2, let first = samples.first else { return nil }
        let elapsed = time - first.time
        let window = max(Self.minimumWindow, elapsed / 2)
        let from = samples.last { $0.time <= time - window } ?? first
        let seconds = time - from.time
        let moved = last.done - from.done
        guard seconds > 0, moved > 0 else { return nil }
        return Double(total - last.done) * seconds / Double(moved)
    }
}
