import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

@Suite("Inventory end to end")
struct InventoryEndToEndTests {
    @Test("an emulated Grokker reads its field over the audio link; the tracker sees every tag in range")
    func readsTheField() throws {
        let rig = try Rig(CableConfiguration(deviceClockPPM: 120))
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        let configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        try configuration.validate()
        try rig.session.startInventory(configuration)
        let tracker = InventoryTracker(start: Date(), configuration: configuration)
        try rig.session.collect(forAtMost: 4)
        try rig.session.stopInventory()
        for report in rig.session.takeReports() { tracker.take(report) }
        let expected = Set(rig.grokker.field.tags.filter { tag in
            if case .distance(let m) = tag.placement { m < 10 } else { false }
        }.map { try! UgiEpc(bytes: $0.epc) })
        #expect(expected.count == 24)
        #expect(Set(tracker.tags.map(\.epc)) == expected)
        // The preset does not ask for RSSI: none is reported (RSSITests for RSSI asked for).
        #expect(tracker.tags.allSatisfy { $0.readState.mostRecentRssi == nil })
        #expect(tracker.tags.allSatisfy { $0.epc.toTagURI().hasPrefix("urn:epc:tag:sgtin-96:3.0614141.812345.") })
        // Nothing more arrives once stopped.
        try rig.session.collect(forAtMost: 0.5)
        #expect(rig.session.takeReports().isEmpty)
    }

    @Test("a SELECT mask limits the reads to the matching tags")
    func select() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("etsi")
        let target = rig.grokker.field.tags[3].epc
        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        configuration.selectBank = .epc
        configuration.selectOffset = 32
        configuration.selectMask = target
        configuration.selectMaskBitLength = target.count * 8
        try configuration.validate()
        try rig.session.startInventory(configuration)
        try rig.session.collect(forAtMost: 2)
        try rig.session.stopInventory()
        let seen = Set(rig.session.takeReports().map(\.epc))
        #expect(seen == [target])
    }

    @Test("reads with per-read data follow the region's channels")
    func channels() throws {
        let rig = try Rig()
        try rig.session.connect()
        // The vendor's ETSI entry: 400 ms on a channel (ours allows EN 302 208's 4 s), so the
        // window visits many channels.
        try rig.session.setRegion("etsi", table: .vendor)
        // The channel travels in the per-read records only.
        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        configuration.detailedPerReadData = true
        configuration.detailedPerReadNumReads = 1
        configuration.reportSubsequentFinds = true
        try rig.session.startInventory(configuration)
        // 6 s: a tag read on the first channel keeps its S1 flag for its own persistence (0.5
        // to 5 s, drawn per tag), so in a shorter window every read could fall on one channel.
        try rig.session.collect(forAtMost: 6)
        try rig.session.stopInventory()
        let channels = Set(rig.session.takeReports().map(\.frequencyKHz))
        #expect(channels.isSubset(of: [865_700, 866_300, 866_900, 867_500]), "\(channels)")
        // It hops: each read names the channel it was on (the emulator once sent index 0 always).
        #expect(channels.count > 1, "\(channels)")
    }
}

@Suite("Inventory across an unplug")
struct InventoryReconnectTests {
    @Test("unplugging mid-inventory ends it as interrupted (slave mode times out); reconnected, a new one reads again")
    func interruptedThenRestarted() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        var states: [VendorInventoryState] = []
        rig.session.inventoryStateListeners = [{ states.append($0) }]
        let configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        try rig.session.startInventory(configuration)
        try rig.session.collect(forAtMost: 1)
        #expect(!rig.session.takeReports().isEmpty)
        rig.cable.plugged = false
        try rig.session.collect(forAtMost: 6)
        #expect(!rig.session.inventoryRunning)
        #expect(rig.session.inventory?.state == .interrupted)
        #expect(states.first == .running && states.last == .interrupted)
        _ = rig.session.takeReports()
        rig.cable.plugged = true
        try rig.session.connect()
        try rig.session.startInventory(configuration)
        try rig.session.collect(forAtMost: 2)
        #expect(!rig.session.takeReports().isEmpty)
        #expect(try rig.session.stopInventory() == .completed(.ok))
    }
}
