import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// `numInventoryRounds` and the reader's unique and forgotten counters.
@Suite("Inventory rounds and forgotten reads")
struct CountersTests {
    @Test("numInventoryRounds follows the reader's rounds; every read is sent or forgotten")
    func roundsAndAccounting() throws {
        let rig = try TagAccessTests.scanning()
        #expect(rig.session.inventoryRounds == 0)
        try rig.session.collect(forAtMost: 1.5)
        let seen = rig.session.inventoryRounds
        #expect(seen > 0)
        try rig.session.stopInventory()
        let d = try rig.session.diagnostics()
        // While it runs the host hears of the rounds up to the last status event (every
        // 0.25 s of the reader's clock, behind the reports on the link); after the stop the
        // count is exact.
        #expect(seen <= rig.session.inventoryRounds)
        #expect(rig.session.inventoryRounds == d.rawInventoryRounds)
        #expect(d.uniqueTags == 24)
        // A read is sent, replaced by a newer read of its tag, or dropped unsent.
        #expect(d.rawTagFinds == Int(d.reader.reportsSent) + d.forgottenTags - d.forgottenNotAcknowledged)
        #expect(d.forgottenTags >= d.forgottenNotSent + d.forgottenNotAcknowledged)
        #expect(d.forgottenNotAcknowledged == 0)
        let reset = try rig.session.diagnostics(reset: true)
        #expect(reset.uniqueTags == 24)
        let after = try rig.session.diagnostics()
        #expect(after.uniqueTags == 0 && after.forgottenTags == 0 && after.forgottenNotSent == 0)
    }

    @Test("reports in flight when the cable is pulled are forgotten, not acknowledged")
    func unplugged() throws {
        let rig = try TagAccessTests.scanning()
        try rig.session.collect(forAtMost: 0.5)
        rig.cable.plugged = false
        // Long enough for both ends to give the link up.
        _ = try rig.session.driver.run(forAtMost: 4) { false }
        rig.cable.plugged = true
        _ = try rig.session.driver.run(forAtMost: 5) {
            rig.session.connectionState == .connected && !rig.session.engine.negotiating
        }
        #expect(rig.session.connectionState == .connected)
        let d = try rig.session.diagnostics()
        #expect(d.forgottenNotAcknowledged > 0)
        #expect(d.rawTagFinds == Int(d.reader.reportsSent) + d.forgottenTags - d.forgottenNotAcknowledged)
    }
}
