import Foundation
import Testing

@testable import GrokLedger

@Suite("Ledger: recovery keeps intents")
struct RecoveryIntentsTests {
    @Test("a recovered ledger keeps every intent, the open ones (a change without an outcome) still open")
    func intentsSurviveRecovery() throws {
        let scratch = Scratch()
        var ledger: Ledger? = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        let first = try #require(ledger).beginRun(start())
        try ledger?.recordStep(step(first, "GK-1", "identify"))
        let made = try #require(ledger).recordIntent(run: first, serial: "GK-1", step: "region", target: "FCC", at: at(3))
        try ledger?.recordStep(step(first, "GK-1", "region", from: 3, to: 4))
        // Killed between a change and its record: this one stays open.
        try ledger?.recordIntent(run: first, serial: "GK-1", step: "firmware", target: "1.8.0", at: at(5))
        try ledger?.finishRun(first, outcome: .interrupted, endedAt: at(6), reportPath: nil)
        let before = try #require(ledger).intents()
        ledger = nil
        #expect(before.count == 2)
        #expect(before.first { $0.id == made }?.outcome != nil)

        let output = scratch.file("recovered.sqlite")
        let report = try Ledger.recover(from: scratch.ledgerPath, to: output)
        #expect(report.isComplete, "\(report)")
        #expect(report.recovered[.intents] == 2)
        let recovered = try Ledger.open(path: output, readOnly: true)
        #expect(try recovered.intents() == before)
        #expect(try recovered.intents(openOnly: true).map(\.step) == ["firmware"])
    }

    @Test("check counts the intents")
    func checkCountsIntents() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
        let run = try ledger.beginRun(start())
        try ledger.recordIntent(run: run, serial: "GK-1", step: "region", target: "FCC", at: at(1))
        try ledger.finishRun(run, outcome: .interrupted, endedAt: at(2), reportPath: nil)
        #expect(try Ledger.check(path: scratch.ledgerPath).rows[.intents] == 1)
    }
}
