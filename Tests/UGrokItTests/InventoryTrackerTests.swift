import Foundation
import GrokProtocol
import Testing
import UGrokIt

@Suite("Inventory tracker")
struct InventoryTrackerTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func read(_ tag: Int, at ms: Int, rssi: Int16 = -600) -> TagReport {
        var epc = [UInt8](repeating: 0x30, count: 12)
        epc[10] = UInt8(tag >> 8)
        epc[11] = UInt8(tag & 0xFF)
        return TagReport(epc: epc, pc: 0x3000, rssiITenthsDBm: rssi, rssiQTenthsDBm: rssi - 5,
                         frequencyKHz: 902_750, milliseconds: UInt32(ms), tid: [0xE2, 0x80, 0x11, 0x05])
    }

    static func epc(_ tag: Int) -> UgiEpc { try! UgiEpc(bytes: read(tag, at: 0).epc) }

    @Test("first finds, subsequent finds and history per 500 ms interval")
    func findsAndHistory() throws {
        var configuration = UgiRfidConfiguration()
        configuration.reportSubsequentFinds = true
        let tracker = InventoryTracker(start: Self.start, configuration: configuration)
        tracker.take(Self.read(1, at: 10))
        tracker.take(Self.read(2, at: 20))
        tracker.take(Self.read(1, at: 30))
        tracker.take(Self.read(1, at: 40))
        let first = tracker.drainEvents()
        #expect(first.filter { if case .found = $0 { true } else { false } }.count == 2)
        #expect(first.filter { if case .changed(_, true) = $0 { true } else { false } }.count == 2)
        let subsequent = first.compactMap { event -> Int? in
            if case .subsequentFinds(let tag, let count, _) = event, tag.epc == Self.epc(1) { count } else { nil }
        }
        #expect(subsequent == [2])
        tracker.take(Self.read(1, at: 700))
        let one = try #require(tracker.tag(Self.epc(1)))
        #expect(one.readState.totalReads == 4)
        #expect(Array(one.readState.readHistory.prefix(2)) == [1, 3])
        #expect(one.readState.readHistory.count == 20)
        #expect(one.firstRead == Self.start.addingTimeInterval(0.010))
        #expect(one.tidMemory == [0xE2, 0x80, 0x11, 0x05])
        #expect(one.readState.mostRecentRssiI == -60)
        #expect(tracker.tags.map(\.epc) == [Self.epc(1), Self.epc(2)])
    }

    @Test("a tag not seen for the whole history window is no longer visible, and comes back")
    func visibility() throws {
        let tracker = InventoryTracker(start: Self.start, configuration: UgiRfidConfiguration())
        tracker.take(Self.read(7, at: 100))
        _ = tracker.drainEvents()
        // 20 intervals of 500 ms: still visible just before 10.5 s, gone after.
        tracker.advance(toMilliseconds: 9_999)
        #expect(tracker.tag(Self.epc(7))?.isVisible == true)
        tracker.advance(toMilliseconds: 10_000)
        let gone = tracker.drainEvents().compactMap { event -> UgiTag? in
            if case .changed(let tag, false) = event { tag } else { nil }
        }
        #expect(gone.map(\.epc) == [Self.epc(7)])
        #expect(gone.first?.isVisible == false)
        tracker.take(Self.read(7, at: 12_000))
        let back = tracker.drainEvents().compactMap { event -> UgiTag? in
            if case .changed(let tag, false) = event { tag } else { nil }
        }
        #expect(back.first?.isVisible == true)
    }

    @Test("a history interval is reported only when it ends with a tag visible, as the vendor's header says")
    func historyIntervalOnlyWhileVisible() {
        var configuration = UgiRfidConfiguration()
        configuration.historyIntervalMSec = 100
        configuration.historyDepth = 2
        let tracker = InventoryTracker(start: Self.start, configuration: configuration)
        func intervals() -> Int { tracker.drainEvents().filter { $0 == .historyInterval }.count }
        // Nothing found yet: three intervals end, none is reported.
        tracker.advance(toMilliseconds: 300)
        #expect(intervals() == 0)
        // Found at 350 ms: visible while its find is within the last two intervals, so at the
        // end of the interval at 400 ms; at 500 ms it is out of sight, and the intervals to
        // 1000 ms go unreported.
        tracker.take(Self.read(1, at: 350))
        tracker.advance(toMilliseconds: 1_000)
        #expect(intervals() == 1)
        #expect(tracker.tag(Self.epc(1))?.isVisible == false)
        // Seen again: reported again.
        tracker.take(Self.read(1, at: 1_050))
        tracker.advance(toMilliseconds: 1_100)
        #expect(intervals() == 1)
    }

    @Test("a filtered tag is ignored entirely")
    func filter() {
        let tracker = InventoryTracker(start: Self.start, configuration: UgiRfidConfiguration())
        tracker.filter = { $0 == Self.epc(3) }
        tracker.take(Self.read(3, at: 0))
        tracker.take(Self.read(4, at: 0))
        tracker.take(Self.read(3, at: 5))
        #expect(tracker.count == 1)
        #expect(tracker.tag(Self.epc(3)) == nil)
        #expect(tracker.readsTaken == 3)
    }
}
