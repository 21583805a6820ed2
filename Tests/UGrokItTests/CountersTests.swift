import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// `numInventoryRounds` and the reader's unique and forgotten counters.
@Suite("Inventory rounds and the reader's counters")
struct CountersTests {
    @Test("numInventoryRounds follows the reader's round counter; GetDiagnostics counts what it read")
    func roundsAndAccounting() throws {
        // Rounds travel in subsequent-read packets only (reader packet 03): ask for them.
        let rig = try Rig()
        try rig.connectWithRegion()
        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        configuration.reportSubsequentFinds = true
        try rig.session.startInventory(configuration)
        try rig.session.collect(forAtMost: 1.5)
        let seen = rig.session.inventoryRounds
        #expect(seen > 0)
        try rig.session.stopInventory()
        let epcs = Set(rig.session.takeReports().map(\.epc))
        let d = try rig.session.diagnostics()
        #expect(seen <= rig.session.inventoryRounds)
        #expect(d.rawInventoryRounds > 0)
        #expect(d.uniqueTags == epcs.count)
        #expect(d.rawTagFinds >= epcs.count)
        let reset = try rig.session.diagnostics(reset: true)
        #expect(reset.uniqueTags == epcs.count)
        let after = try rig.session.diagnostics()
        #expect(after.uniqueTags == 0 && after.rawTagFinds == 0)
    }
}
