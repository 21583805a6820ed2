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
        try rig.session.startInventory(configuration.inventoryParameters)
        let tracker = InventoryTracker(start: Date(), configuration: configuration)
        try rig.session.collect(forAtMost: 4)
        try rig.session.stopInventory()
        for report in rig.session.takeReports() { tracker.take(report) }
        let expected = Set(rig.grokker.field.tags.filter { tag in
            if case .distance(let m) = tag.placement { m < 10 } else { false }
        }.map { try! UgiEpc(bytes: $0.epc) })
        #expect(expected.count == 24)
        #expect(Set(tracker.tags.map(\.epc)) == expected)
        // The closest tags are the loudest.
        let sorted = tracker.tags.sorted { $0.readState.mostRecentRssiI > $1.readState.mostRecentRssiI }
        #expect(sorted.first.map { $0.readState.mostRecentRssiI > -50 } == true)
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
        try rig.session.startInventory(configuration.inventoryParameters)
        try rig.session.collect(forAtMost: 2)
        try rig.session.stopInventory()
        let seen = Set(rig.session.takeReports().map(\.epc))
        #expect(seen == [target])
    }

    @Test("reads follow the region's channels")
    func channels() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("etsi")
        try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters)
        try rig.session.collect(forAtMost: 2)
        try rig.session.stopInventory()
        let channels = Set(rig.session.takeReports().map(\.frequencyKHz))
        #expect(!channels.isEmpty)
        #expect(channels.isSubset(of: [865_700, 866_300, 866_900, 867_500]))
    }
}

@Suite("Inventory across an unplug")
struct InventoryReconnectTests {
    @Test("unplugging mid-inventory reports LOST_CONNECTION; the same inventory resumes by itself on reconnect")
    func resumes() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        let parameters = UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters
        try rig.session.startInventory(parameters)
        try rig.session.collect(forAtMost: 1)
        #expect(!rig.session.takeReports().isEmpty)
        rig.cable.plugged = false
        try rig.session.collect(forAtMost: 3)
        #expect(rig.session.inventoryStopped == .lostConnection)
        #expect(rig.session.connectionState != .connected)
        #expect(rig.session.inventoryRunning)
        _ = rig.session.takeReports()
        rig.cable.plugged = true
        try rig.session.collect(forAtMost: 4)
        #expect(rig.session.inventoryResumptions == 1)
        #expect(rig.session.inventoryStopped == nil)
        #expect(rig.session.inventory == parameters)
        #expect(!rig.session.takeReports().isEmpty)
        try rig.session.stopInventory()
    }

    @Test("without a running inventory, a lost connection is an error")
    func lostWithoutInventory() throws {
        let rig = try Rig()
        try rig.session.connect()
        rig.cable.plugged = false
        #expect(throws: ReaderError.lostConnection(port: "sim:0")) { try rig.session.collect(forAtMost: 5) }
    }
}
