import Foundation
import GrokFirmware
import GrokLedger
import GrokTestSupport
import PostgresTestSupport
import Testing

@testable import GrokFleet

/// `grokctl ledger sync` sends the stations' spools through ``LedgerSyncJob``.
@Suite("Ledger sync job", .serialized)
struct LedgerSyncJobTests {
    @Test("only a shared ledger takes a sync; the spools are every station's in name order, or the one station's when it has one")
    func spoolsFound() throws {
        let directory = TemporaryDirectory("grok-spools")
        #expect(throws: LedgerError.syncNeedsShared(path: "/l.sqlite")) {
            try LedgerSyncJob(location: "/l.sqlite", spoolDirectory: directory.path, station: nil)
        }
        let uri = "postgresql:///fleet"
        #expect(try LedgerSyncJob(location: uri, spoolDirectory: directory.file("none"), station: nil).spools.isEmpty)
        for name in ["bench-b.sqlite", "bench-a.sqlite", "notes.txt"] { FileManager.default.createFile(atPath: directory.file(name), contents: Data()) }
        #expect(try LedgerSyncJob(location: uri, spoolDirectory: directory.path, station: nil).spools
                    == [directory.file("bench-a.sqlite"), directory.file("bench-b.sqlite")])
        #expect(try LedgerSyncJob(location: uri, spoolDirectory: directory.path, station: "bench-b").spools == [directory.file("bench-b.sqlite")])
        #expect(try LedgerSyncJob(location: uri, spoolDirectory: directory.path, station: "bench-c").spools.isEmpty)
        var called = false
        try LedgerSyncJob(location: uri, spoolDirectory: directory.path, station: "bench-c").run(machine: "host") { _ in called = true }
        #expect(!called, "no spool: nothing opened, nothing said")
    }

    @Test("a spooled run is sent once with its steps, then a second sync sends nothing and counts it as sent before")
    func syncSendsEachRunOnce() throws {
        let cluster = PostgresCluster.shared
        let uri = cluster.uri(try cluster.newDatabase("sync"))
        let directory = TemporaryDirectory("grok-spools")
        let path = StationPaths.spool(station: "bench-a", in: directory.path)
        let spool = try Spool.open(path: path)
        let run = try spool.ledger.beginRun(RunStart(kind: .provision, profileName: "bench-us", profileSHA256: String(repeating: "ab", count: 32),
                                                     station: "bench-a", operatorName: "Zoë", startedAt: ViewLedgerFixture.at(0), key: "spooled-run"))
        try spool.ledger.upsertDevice(DeviceSighting(serial: "00000041", seenAt: ViewLedgerFixture.at(1)))
        for (index, step) in ["connect", "identify"].enumerated() {
            try spool.ledger.recordStep(StepRecord(run: run, serial: "00000041", step: step, startedAt: ViewLedgerFixture.at(Double(index + 1)),
                                                   endedAt: ViewLedgerFixture.at(Double(index + 1) + 0.5), result: .done))
        }
        try spool.ledger.finishRun(run, outcome: .succeeded, endedAt: ViewLedgerFixture.at(3), reportPath: nil)
        let job = try LedgerSyncJob(location: uri, spoolDirectory: directory.path, station: nil)
        #expect(job.spools == [path])
        var first: [SpoolSync] = []
        try job.run(machine: "host") { first.append($0) }
        #expect(first.count == 1)
        #expect(first.first?.sent == [SpoolSync.Run(runID: "spooled-run", sentAs: "spooled-run", wasThere: false, steps: 2)])
        #expect(first.first?.spool == path && first.first?.database == StationPaths.shownLedger(uri) && first.first?.isEmpty == false)
        var second: [SpoolSync] = []
        try job.run(machine: "host") { second.append($0) }
        #expect(second.first?.isEmpty == true && second.first?.alreadySent == 1)
        let json = try jsonObject(try #require(second.first))
        #expect(json["event"] as? String == "spool_synced" && json["already_sent"] as? Int == 1 && (json["sent"] as? [Any])?.isEmpty == true)
        let shared = try LedgerQuery(location: uri)
        #expect(try shared.run(key: "spooled-run").steps.count == 2, "each step once")
    }

    @Test("a station's spool is named from the station, never a path or hidden; a shared ledger's password is never shown")
    func stationPaths() {
        #expect(StationPaths.spool(station: "bench-a", in: "/s/") == "/s/bench-a.sqlite")
        #expect(StationPaths.spool(station: "../x y", in: "/s") == "/s/_.._x_y.sqlite")
        let shown = StationPaths.shownLedger("postgresql://grok:secret@db/fleet")
        #expect(!shown.contains("secret") && shown.contains("***"), "\(shown)")
        #expect(StationPaths.shownLedger("/var/l.sqlite") == "/var/l.sqlite")
    }
}
