import Foundation

/// How a tag has been read so far: an immutable snapshot taken at ``timestamp``, safe to
/// keep and to pass between tasks. Vendor: `UgiTagReadState` (`UgiTag.readState`).
///
/// The read history counts finds per history interval
/// (``UgiRfidConfiguration/historyIntervalMSec``, 500 ms by default), for the last
/// ``UgiRfidConfiguration/historyDepth`` intervals (20 by default, so 10 seconds), newest
/// first. A tag is visible while it was found within that window.
public struct UgiTagReadState: Sendable, Hashable, Codable, CustomStringConvertible {
    /// When this snapshot was taken.
    public let timestamp: Date
    /// Whether the tag was found within the history window. Vendor: `isVisible`.
    public let isVisible: Bool
    /// Finds since the inventory first saw the tag. Vendor: `totalReads`.
    public let totalReads: Int
    /// When the tag was last found. Vendor: `mostRecentRead`.
    public let mostRecentRead: Date
    /// The in-phase RSSI of the last find, dBm (0 unless the configuration asks for
    /// ``UgiRfidConfiguration/reportRssi``). Vendor: `mostRecentRssiI`.
    public let mostRecentRssiI: Double
    /// The quadrature RSSI of the last find, dBm. Vendor: `mostRecentRssiQ`.
    public let mostRecentRssiQ: Double
    /// Finds per history interval, `[0]` the newest (current) interval. Vendor: `readHistory`.
    public let readHistory: [Int]

    /// Makes a snapshot. `isVisible` defaults to "found in at least one interval of
    /// `readHistory`".
    public init(
        timestamp: Date, isVisible: Bool? = nil, totalReads: Int, mostRecentRead: Date,
        mostRecentRssiI: Double = 0, mostRecentRssiQ: Double = 0, readHistory: [Int]
    ) {
        self.timestamp = timestamp
        self.isVisible = isVisible ?? readHistory.contains { $0 > 0 }
        self.totalReads = totalReads
        self.mostRecentRead = mostRecentRead
        self.mostRecentRssiI = mostRecentRssiI
        self.mostRecentRssiQ = mostRecentRssiQ
        self.readHistory = readHistory
    }

    /// The read history as text: the find counts of ``readHistory``, newest first, in
    /// decimal, separated by single spaces; `""` for an empty history. For example
    /// `"3 0 0 12"` is three finds in the current interval, none in the two before and
    /// twelve in the one before those. Vendor: `readHistoryString`.
    public var readHistoryString: String {
        readHistory.map(String.init).joined(separator: " ")
    }

    /// Finds within the history window (the sum of ``readHistory``).
    public var readsInHistory: Int { readHistory.reduce(0, +) }

    /// The last find's total received power, dBm: the I and Q channel powers added,
    /// `10 log10(10^(I/10) + 10^(Q/10))`.
    public var mostRecentRssi: Double {
        10 * log10(pow(10, mostRecentRssiI / 10) + pow(10, mostRecentRssiQ / 10))
    }

    public var description: String {
        "\(totalReads) reads, \(isVisible ? "visible" : "not visible"), history [\(readHistoryString)]"
    }
}
