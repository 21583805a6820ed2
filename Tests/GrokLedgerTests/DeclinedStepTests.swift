import Foundation
import PostgresTestSupport
import Testing

@testable import GrokLedger

/// A step the person at the terminal said no to ("cancel" at the firmware question) has its
/// own result, `declined`, in both ledgers (schema 5 allows it in `steps.result`).
@Suite("A declined step in the ledger", .serialized)
struct DeclinedStepTests {
    /// One run: the region done, the firmware update declined (its intent recorded first).
    func record(into recorder: any RunRecorder, intent: (RunID) throws -> Void) throws {
        let run = try recorder.beginRun(start())
        try recorder.upsertDevice(DeviceSighting(serial: "GRK-1", hardwareType: "grokker", firmware: "1.7.3", seenAt: at(1)))
        try recorder.recordStep(step(run, "GRK-1", "region", from: 1, to: 2))
        try intent(run)
        var declined = step(run, "GRK-1", "firmware", .declined, from: 2, to: 3)
        declined.code = "fleet_update_declined"
        try recorder.recordStep(declined)
        try recorder.finishRun(run, outcome: .incomplete, endedAt: at(4), reportPath: nil)
    }

    @Test("SQLite keeps 'declined' as it is, closes the step's intent not done, and completedSteps does not count it as done")
    func sqlite() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        try record(into: ledger) { run in
            _ = try ledger.recordIntent(run: run, serial: "GRK-1", step: "firmware", target: "1.8.0", at: at(2))
        }
        #expect(try ledger.steps().map(\.result) == [.done, .declined])
        #expect(try ledger.steps().last?.code == "fleet_update_declined")
        #expect(try ledger.intents().map(\.outcome) == [.notDone])
        #expect(try ledger.completedSteps(serial: "GRK-1", profileSHA256: profileDigest) == ["region"])
        // The export carries the result's code too.
        let csv = scratch.file("steps.csv")
        try ledger.export(format: .csv, to: csv, table: .steps)
        let rows = parseCSV(try String(contentsOfFile: csv, encoding: .utf8))
        let column = try #require(rows.first?.firstIndex(of: "result"))
        #expect(rows.dropFirst().map { $0[column] } == ["done", "declined"])
    }

    @Test("the shared ledger on PostgreSQL records and reads 'declined' exactly as SQLite does")
    func postgres() throws {
        let cluster = PostgresCluster.shared
        let shared = try PostgresLedger.open(cluster.conninfo(try cluster.newDatabase("declined")), station: "bench-1")
        try record(into: shared) { run in
            _ = try shared.recordIntent(run: run, serial: "GRK-1", step: "firmware", target: "1.8.0", at: at(2))
        }
        #expect(try shared.steps().map(\.result) == [.done, .declined])
        #expect(try shared.intents().map(\.outcome) == [.notDone])
        #expect(try shared.completedSteps(serial: "GRK-1", profileSHA256: profileDigest) == ["region"])
    }
}
