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
    /// The in-phase RSSI of the last find, dBm on ``VendorRSSI``'s scale; nil when the
    /// reader sent none (the configuration did not ask for
    /// ``UgiRfidConfiguration/reportRssi``). Vendor: `mostRecentRssiI`, which is the raw
    /// 4-bit level (0-15) and 0 when none was sent.
    public let mostRecentRssiI: Double?
    /// The quadrature RSSI of the last find, dBm, as ``mostRecentRssiI``. Vendor:
    /// `mostRecentRssiQ`.
    public let mostRecentRssiQ: Double?
    /// Finds per history interval, `[0]` the newest (current) interval. Vendor: `readHistory`.
    public let readHistory: [Int]
    /// The EPC of the tag this is the state of (vendor `tag`, the tag itself: a snapshot is a
    /// value inside ``UgiTag``, which cannot hold itself); `nil` when made without one.
    public let tagEpc: UgiEpc?

    /// Makes a snapshot. `isVisible` defaults to "found in at least one interval of
    /// `readHistory`".
    public init(
        timestamp: Date, isVisible: Bool? = nil, totalReads: Int, mostRecentRead: Date,
        mostRecentRssiI: Double? = nil, mostRecentRssiQ: Double? = nil, readHistory: [Int], tagEpc: UgiEpc? = nil
    ) {
        self.tagEpc = tagEpc
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

    /// The last find's RSSI, dBm: the stronger of the I and Q channels (as
    /// `TagReport.rssiDBm`); nil when the reader sent none.
    public var mostRecentRssi: Double? {
        switch (mostRecentRssiI, mostRecentRssiQ) {
        case let (i?, q?): max(i, q)
        case let (i, q): i ?? q
        }
    }

    public var description: String {
        "\(totalReads) reads, \(isVisible ? "visible" : "not visible"), history [\(readHistoryString)]"
    }
}
