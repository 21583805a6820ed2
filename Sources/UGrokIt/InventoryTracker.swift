import Foundation
import GrokProtocol

/// Detailed data about one read (vendor `UgiDetailedPerReadData`).
public struct UgiDetailedPerReadData: Sendable, Hashable {
    /// When the reader made the read.
    public var timestamp: Date
    /// The channel, MHz.
    public var frequencyMHz: Double
    /// In-phase and quadrature received power, dBm (``VendorRSSI``'s scale); nil when the
    /// reader sent no RSSI.
    public var rssiI: Double?
    public var rssiQ: Double?
    /// The first and second words read with the find (vendor `readData1`, `readData2`),
    /// when the configuration asked for them.
    public var readData1: UInt16?
    public var readData2: UInt16?
}

/// A tag an inventory found (vendor `UgiTag`): a snapshot, safe to keep.
public struct UgiTag: Sendable, Hashable {
    public var epc: UgiEpc
    /// When the inventory first found it (vendor `firstRead`).
    public var firstRead: Date
    /// Memory read with the finds, when asked for (vendor `tidMemory`, `userMemory`).
    public var tidMemory: [UInt8]
    public var userMemory: [UInt8]
    /// RESERVED bank bytes read with the finds (`minReservedBytes`/`maxReservedBytes`;
    /// vendor `reservedMemory`): the kill and access passwords, as the tag let them be read.
    public var reservedMemory: [UInt8] = []
    /// How it has been read (vendor `readState`).
    public var readState: UgiTagReadState
    /// Whether it was found within the history window (vendor `isVisible`).
    public var isVisible: Bool { readState.isVisible }
}

/// What the tracker tells its owner, in order. The vendor's delegate methods, as values.
public enum InventoryTrackerEvent: Sendable, Hashable {
    /// `inventoryTagFound`: found for the first time.
    case found(UgiTag, [UgiDetailedPerReadData])
    /// `inventoryTagSubsequentFinds`: found `count` more times since the last report.
    case subsequentFinds(UgiTag, count: Int, [UgiDetailedPerReadData])
    /// `inventoryTagChanged`: first find, visible again, or no longer visible.
    case changed(UgiTag, isFirstFind: Bool)
    /// `inventoryHistoryInterval`: a history interval ended with at least one tag visible
    /// (the vendor's header: "called at the end of each history interval IF one or more
    /// tags are currently visible"; its library's history callback gets the number of
    /// visible tags).
    case historyInterval
}

/// The host side of an inventory (the aggregation inside the vendor's `UgiInventory`):
/// reads in, tags with their read history and visibility out, as events. Pure: time is
/// whatever the caller says (the reader's clock, carried in the reads), nothing is
/// printed or sent.
///
/// Per read the work is one dictionary lookup and a few additions, so a host keeps up with
/// many readers; memory grows with the number of distinct tags only.
///
/// Not thread-safe: one owner.
public final class InventoryTracker {
    public let historyIntervalMSec: Int
    public let historyDepth: Int
    /// Return true to ignore a tag entirely (vendor `inventoryFilter`).
    public var filter: ((UgiEpc) -> Bool)?
    /// Keep per-read data for the events (vendor `detailedPerReadData`).
    public var detailedPerReadData: Bool
    /// Report finds after the first one (vendor `reportSubsequentFinds`).
    public var reportSubsequentFinds: Bool

    fileprivate struct Record {
        var epc: UgiEpc
        var firstRead: Date
        var tid: [UInt8]
        var user: [UInt8]
        var reserved: [UInt8]
        var total = 0
        var lastRead: Date
        var rssiI: Double?
        var rssiQ: Double?
        /// Finds per interval, a ring: `history[(head + k) % depth]` is k intervals ago.
        var history: [Int]
        var head = 0
        var visible = true
        var pendingFinds = 0
        var pendingDetail: [UgiDetailedPerReadData] = []
    }

    private var records: [UgiEpc: Int] = [:]
    private var store: [Record] = []
    private var filtered: Set<UgiEpc> = []
    private var events: [InventoryTrackerEvent] = []
    private let start: Date
    private var intervalIndex = 0
    /// Reads taken, filtered ones included.
    public private(set) var readsTaken = 0

    public init(start: Date, configuration: UgiRfidConfiguration) {
        self.start = start
        historyIntervalMSec = max(1, configuration.historyIntervalMSec)
        historyDepth = max(1, configuration.historyDepth)
        detailedPerReadData = configuration.detailedPerReadData
        reportSubsequentFinds = configuration.reportSubsequentFinds
    }

    /// Takes one read, `milliseconds` after the inventory started on the reader's clock.
    public func take(_ report: TagReport) {
        readsTaken += 1
        let time = start.addingTimeInterval(Double(report.milliseconds) / 1000)
        advance(toMilliseconds: Int(report.milliseconds))
        guard let epc = try? UgiEpc(bytes: report.epc) else { return }
        if let index = records[epc] {
            store[index].record(report, at: time, detailed: detailedPerReadData)
            if !store[index].visible {
                store[index].visible = true
                events.append(.changed(tag(store[index], at: time), isFirstFind: false))
            }
            return
        }
        if filtered.contains(epc) { return }
        if let filter, filter(epc) {
            filtered.insert(epc)
            return
        }
        var record = Record(epc: epc, firstRead: time, tid: report.tid, user: report.user, reserved: report.reserved, lastRead: time,
                            history: [Int](repeating: 0, count: historyDepth))
        record.record(report, at: time, detailed: false)
        record.pendingFinds = 0
        records[epc] = store.count
        store.append(record)
        let snapshot = tag(record, at: time)
        events.append(.changed(snapshot, isFirstFind: true))
        events.append(.found(snapshot, detailedPerReadData ? [Record.detail(report, at: time)] : []))
    }

    /// Moves the clock on: ends history intervals, reports tags that went out of sight and
    /// the finds gathered since the last call. An interval that ends with no tag visible
    /// (none found yet, or all out of sight) is not reported, as with the vendor.
    public func advance(toMilliseconds now: Int) {
        let target = now / historyIntervalMSec
        while intervalIndex < target {
            intervalIndex += 1
            let time = start.addingTimeInterval(Double(intervalIndex * historyIntervalMSec) / 1000)
            var anyVisible = false
            for i in store.indices {
                store[i].head = (store[i].head + historyDepth - 1) % historyDepth
                store[i].history[store[i].head] = 0
                if store[i].visible, !store[i].history.contains(where: { $0 > 0 }) {
                    store[i].visible = false
                    events.append(.changed(tag(store[i], at: time), isFirstFind: false))
                }
                anyVisible = anyVisible || store[i].visible
            }
            if anyVisible { events.append(.historyInterval) }
        }
    }

    /// The events since the last call, oldest first; subsequent finds are gathered into one
    /// event per tag.
    public func drainEvents() -> [InventoryTrackerEvent] {
        if reportSubsequentFinds {
            let now = start.addingTimeInterval(Double(intervalIndex * historyIntervalMSec) / 1000)
            for i in store.indices where store[i].pendingFinds > 0 {
                events.append(.subsequentFinds(tag(store[i], at: now), count: store[i].pendingFinds, store[i].pendingDetail))
                store[i].pendingFinds = 0
                store[i].pendingDetail.removeAll()
            }
        }
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// Every tag found, in the order first found (vendor `tags`).
    public var tags: [UgiTag] {
        store.map { tag($0, at: $0.lastRead) }
    }

    /// The tag with this EPC, if found (vendor `getTagByEpc`).
    public func tag(_ epc: UgiEpc) -> UgiTag? {
        records[epc].map { tag(store[$0], at: store[$0].lastRead) }
    }

    /// Distinct tags found.
    public var count: Int { store.count }

    private func tag(_ r: Record, at time: Date) -> UgiTag {
        var history = [Int]()
        history.reserveCapacity(historyDepth)
        for k in 0..<historyDepth { history.append(r.history[(r.head + k) % historyDepth]) }
        let state = UgiTagReadState(timestamp: time, isVisible: r.visible, totalReads: r.total, mostRecentRead: r.lastRead,
                                    mostRecentRssiI: r.rssiI, mostRecentRssiQ: r.rssiQ, readHistory: history, tagEpc: r.epc)
        return UgiTag(epc: r.epc, firstRead: r.firstRead, tidMemory: r.tid, userMemory: r.user, reservedMemory: r.reserved,
                      readState: state)
    }
}

extension InventoryTracker.Record {
    mutating func record(_ report: TagReport, at time: Date, detailed: Bool) {
        total += 1
        pendingFinds += 1
        history[head] += 1
        lastRead = time
        rssiI = report.rssiITenthsDBm.map { Double($0) / 10 }
        rssiQ = report.rssiQTenthsDBm.map { Double($0) / 10 }
        if !report.tid.isEmpty { tid = report.tid }
        if !report.user.isEmpty { user = report.user }
        if !report.reserved.isEmpty { reserved = report.reserved }
        if detailed { pendingDetail.append(Self.detail(report, at: time)) }
    }

    static func detail(_ report: TagReport, at time: Date) -> UgiDetailedPerReadData {
        let data = report.readData
        return UgiDetailedPerReadData(timestamp: time, frequencyMHz: Double(report.frequencyKHz) / 1000,
                                      rssiI: report.rssiITenthsDBm.map { Double($0) / 10 },
                                      rssiQ: report.rssiQTenthsDBm.map { Double($0) / 10 },
                                      readData1: data.first, readData2: data.count > 1 ? data[1] : nil)
    }
}
