import GrokBasics
import Foundation
import Testing

@testable import GrokLedger

/// The one decoder per record (LedgerRows.swift) on a SQLite file edited by hand: what
/// SQLite keeps in a column of the wrong type is refused as PostgreSQL's text would be.
@Suite("Ledger: one decoder per record")
struct LedgerRowsTests {
    /// Runs `sql` on the file as a person with the sqlite3 shell would.
    static func edit(_ path: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, sql]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "sqlite3 \(sql)")
    }

    @Test("text kept in a number column of a SQLite file is refused naming the column, by the records and by the fleet view")
    func textInANumberColumnIsRefused() throws {
        let scratch = Scratch()
        do {
            let ledger = try Ledger.open(path: scratch.ledgerPath, heartbeatInterval: nil)
            let run = try ledger.beginRun(start())
            try ledger.recordSmokeTest(SmokeTestRecord(run: run, serial: "GRK-1", afterStep: "region", startedAt: at(2),
                                                       durationMilliseconds: 3013, expectedTags: ["E200"], foundTags: ["E200"],
                                                       readsPerSecond: 40.5, minRSSI: -61.5, passed: true))
            try ledger.finishRun(run, outcome: .succeeded, endedAt: at(3), reportPath: nil)
        }
        // SQLite keeps what its REAL affinity cannot convert; read as a number it was 0 before.
        try Self.edit(scratch.ledgerPath, "UPDATE smoke_tests SET reads_per_second = 'fast'")
        let ledger = try Ledger.open(path: scratch.ledgerPath, readOnly: true)
        let damaged = LedgerError.corrupt(path: scratch.ledgerPath,
                                          damage: LedgerDamage("bad_number", ["smoke_tests.reads_per_second", "fast"]))
        #expect(throws: damaged) { try ledger.smokeTests() }
        #expect(throws: damaged) { try ledger.fleetSnapshot() }
    }
}
