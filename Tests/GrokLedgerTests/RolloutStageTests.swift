import GrokBasics
import Foundation
import PostgresTestSupport
import Synchronization
import GrokTestSupport
import Testing

@testable import GrokLedger

/// Rollout stages, their events and the units' results (schema 5) on both ledgers: the
/// station's SQLite file and the shared PostgreSQL database (a real throwaway cluster).
@Suite("Rollout stages on both ledgers", .serialized)
struct RolloutStageTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgresql
        var testDescription: String { rawValue }
    }

    /// One ledger, opened once per station (stations of one SQLite file share its stage as
    /// runs of one station do; on PostgreSQL each station has its own connection).
    final class Place: @unchecked Sendable {
        let kind: Kind
        private let temporary = TemporaryDirectory("grokstage")
        var directory: String { temporary.path }
        let database: String?
        let conninfo: String?

        init(_ kind: Kind, _ name: String) throws {
            self.kind = kind
            database = kind == .postgresql ? try PostgresCluster.shared.newDatabase(name) : nil
            conninfo = database.map { PostgresCluster.shared.conninfo($0) }
        }

        /// Where errors say the ledger is: the file's path, or the server's target.
        func location(_ ledger: any RolloutStageStore) -> String {
            (ledger as? PostgresLedger)?.target ?? directory + "/ledger.sqlite"
        }

        /// Runs `sql` on the ledger as a person editing it by hand would (sqlite3, psql).
        func edit(_ sql: String) throws {
            if let database {
                _ = try PostgresCluster.shared.psql(database, sql)
                return
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            process.arguments = [directory + "/ledger.sqlite", sql]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "sqlite3 \(sql)")
        }


        func station(_ name: String) throws -> any RolloutStageStore & LedgerStore {
            switch kind {
            case .sqlite: try Ledger.open(path: directory + "/ledger.sqlite", heartbeatInterval: nil)
            case .postgresql: try PostgresLedger.open(conninfo!, station: name)
            }
        }
    }

    static let rule = RolloutHaltRule(afterDevices: 4, maxFailureRate: 0.5, windowDevices: 4)

    static func check(_ station: String, run: String, rule: RolloutHaltRule? = rule, percentage: Double = 25, at time: Double) -> StageCheck {
        StageCheck(rolloutID: "fw-1.8", release: "1.8.0", profilePercentage: percentage, rule: rule, station: station, actor: "op-\(station)",
                   runKey: run, now: at(time))
    }

    static func result(_ station: String, run: String, _ serial: Int, _ outcome: RolloutUnitOutcome, at time: Double) -> RolloutResult {
        RolloutResult(rolloutID: "fw-1.8", runKey: run, station: station, serial: String(format: "%08d", serial), percentage: 25,
                      outcome: outcome, hardwareRevision: "3", firmwareAfter: outcome == .succeeded ? "1.8.0" : "1.7.3", finishedAt: at(time))
    }

    /// Begins a rollout run of `station` and returns its key.
    static func begin(_ ledger: any RolloutStageStore & LedgerStore, _ station: String, at time: Double) throws -> String {
        let run = try ledger.beginRun(RunStart(kind: .rollout, profileName: "rollout", profileSHA256: profileDigest, station: station,
                                               operatorName: "op-\(station)", startedAt: at(time)))
        return try #require(try ledger.run(run)?.key)
    }

    @Test("the halt rule counts the last N units of every station: the result that trips it halts the stage once, naming the station with the most failures", arguments: Kind.allCases)
    func haltAcrossStations(_ kind: Kind) throws {
        let place = try Place(kind, "halt")
        let a = try place.station("bench-a"), b = try place.station("bench-b")
        let runA = try Self.begin(a, "bench-a", at: 0), runB = try Self.begin(b, "bench-b", at: 0)
        var stage = try a.checkRolloutStage(Self.check("bench-a", run: runA, at: 1))
        #expect(stage.state == .active && stage.percentage == 25 && stage.inLedger)
        _ = try a.recordRolloutResult(Self.result("bench-a", run: runA, 1, .succeeded, at: 2), Self.check("bench-a", run: runA, at: 2))
        _ = try a.recordRolloutResult(Self.result("bench-a", run: runA, 2, .succeeded, at: 3), Self.check("bench-a", run: runA, at: 3))
        _ = try b.recordRolloutResult(Self.result("bench-b", run: runB, 3, .failed, at: 4), Self.check("bench-b", run: runB, at: 4))
        stage = try b.recordRolloutResult(Self.result("bench-b", run: runB, 4, .failed, at: 5), Self.check("bench-b", run: runB, at: 5))
        // 2 of 4 failed: not above one half.
        #expect(stage.state == .active)
        stage = try b.recordRolloutResult(Self.result("bench-b", run: runB, 5, .failed, at: 6), Self.check("bench-b", run: runB, at: 6))
        // The window is the last 4: bench-b's three failures and one success of bench-a.
        #expect(stage.state == .halted)
        #expect(stage.reasonCode == "fleet_halted" && stage.trippedBy == "bench-b")
        #expect(stage.halt == RolloutHalt(failed: 3, finished: 4, threshold: 0.5, trippedBy: "bench-b", stationFailures: 3, rule: Self.rule),
                "the halt records the rule that tripped")
        // The other station sees it before its next unit, and nothing more is written.
        let seen = try a.checkRolloutStage(Self.check("bench-a", run: runA, at: 7))
        #expect(seen.state == .halted && seen.halt?.trippedBy == "bench-b")
        let events = try a.stageEvents("fw-1.8")
        #expect(events.map(\.action) == [.created, .halted])
        #expect(events[0].station == "bench-a" && events[0].actor == "op-bench-a" && events[0].percentageAfter == 25)
        #expect(events[1].station == "bench-b" && events[1].note == runB)
        let results = try a.rolloutResults("fw-1.8")
        #expect(results.map(\.station) == ["bench-a", "bench-a", "bench-b", "bench-b", "bench-b"])
        #expect(results.map(\.runKey) == [runA, runA, runB, runB, runB])
        #expect(results[0].hardwareRevision == "3" && results[0].firmwareAfter == "1.8.0" && results[0].percentage == 25)
    }

    @Test("pause, resume and advance: each a recorded change; advance only upward and only when active; resume clears a halt and the window starts again", arguments: Kind.allCases)
    func changesByHand(_ kind: Kind) throws {
        let place = try Place(kind, "changes")
        let ledger = try place.station("bench-a")
        #expect(throws: LedgerError.noSuchStage(path: ledger.location, rollout: "fw-1.8")) {
            try ledger.changeRolloutStage("fw-1.8", .pause, by: "Zoë", note: "", at: at(0))
        }
        let run = try Self.begin(ledger, "bench-a", at: 0)
        for n in 0..<4 {
            _ = try ledger.recordRolloutResult(Self.result("bench-a", run: run, n, .failed, at: Double(1 + n)),
                                               Self.check("bench-a", run: run, at: Double(1 + n)))
        }
        #expect(try ledger.rolloutStage("fw-1.8")?.state == .halted)
        #expect(throws: LedgerError.stageNotChangeable(path: ledger.location, rollout: "fw-1.8", state: "halted", change: "advance")) {
            try ledger.changeRolloutStage("fw-1.8", .advance(to: 50), by: "Zoë", note: "", at: at(10))
        }
        #expect(throws: LedgerError.stageNotChangeable(path: ledger.location, rollout: "fw-1.8", state: "halted", change: "pause")) {
            try ledger.changeRolloutStage("fw-1.8", .pause, by: "Zoë", note: "", at: at(10))
        }
        var stage = try ledger.changeRolloutStage("fw-1.8", .resume, by: "Zoë", note: "bad bench cable replaced", at: at(11))
        #expect(stage.state == .active && stage.reasonCode == nil && stage.trippedBy == nil && stage.updatedBy == "Zoë")
        // The four old failures are before the resume: they no longer count.
        stage = try ledger.checkRolloutStage(Self.check("bench-a", run: run, at: 12))
        #expect(stage.state == .active)
        stage = try ledger.changeRolloutStage("fw-1.8", .advance(to: 50), by: "Ann", note: "", at: at(13))
        #expect(stage.percentage == 50)
        #expect(throws: LedgerError.stageNotUpward(path: ledger.location, rollout: "fw-1.8", percentage: 50, requested: 40)) {
            try ledger.changeRolloutStage("fw-1.8", .advance(to: 40), by: "Ann", note: "", at: at(14))
        }
        // The profile's percentage no longer matters once the stage exists.
        #expect(try ledger.checkRolloutStage(Self.check("bench-a", run: run, percentage: 10, at: 15)).percentage == 50)
        stage = try ledger.changeRolloutStage("fw-1.8", .pause, by: "Ann", note: "weekend", at: at(16))
        #expect(stage.state == .paused && stage.reasonCode == "fleet_stage_paused" && stage.reasonDetail == "weekend")
        #expect(try ledger.checkRolloutStage(Self.check("bench-a", run: run, at: 17)).state == .paused)
        #expect(throws: LedgerError.stageNotChangeable(path: ledger.location, rollout: "fw-1.8", state: "paused", change: "advance")) {
            try ledger.changeRolloutStage("fw-1.8", .advance(to: 60), by: "Ann", note: "", at: at(18))
        }
        #expect(try ledger.changeRolloutStage("fw-1.8", .resume, by: "Ann", note: "", at: at(19)).state == .active)
        #expect(throws: LedgerError.stageNotChangeable(path: ledger.location, rollout: "fw-1.8", state: "active", change: "resume")) {
            try ledger.changeRolloutStage("fw-1.8", .resume, by: "Ann", note: "", at: at(20))
        }
        let events = try ledger.stageEvents("fw-1.8")
        #expect(events.map(\.action) == [.created, .halted, .resumed, .advanced, .paused, .resumed])
        #expect(events[3].percentageBefore == 25 && events[3].percentageAfter == 50 && events[3].actor == "Ann" && events[3].station == nil)
        #expect(events[2].note == "bad bench cable replaced" && events[2].actor == "Zoë")
        #expect(try ledger.rolloutStages().map(\.rolloutID) == ["fw-1.8"])
    }

    @Test("a dry run's preview writes nothing: a missing stage shows the profile's percentage, a tripped rule shows halted", arguments: Kind.allCases)
    func previewWritesNothing(_ kind: Kind) throws {
        let place = try Place(kind, "preview")
        let ledger = try place.station("bench-a")
        let run = try Self.begin(ledger, "bench-a", at: 0)
        let missing = try ledger.previewRolloutStage(Self.check("bench-a", run: run, percentage: 10, at: 1))
        #expect(!missing.inLedger && missing.percentage == 10 && missing.state == .active)
        #expect(try ledger.rolloutStage("fw-1.8") == nil)
        // Results recorded under a rule that never trips, then previewed with one that does.
        let lenient = RolloutHaltRule(afterDevices: 100, maxFailureRate: 1)
        for n in 0..<4 {
            _ = try ledger.recordRolloutResult(Self.result("bench-a", run: run, n, .failed, at: Double(2 + n)),
                                               Self.check("bench-a", run: run, rule: lenient, at: Double(2 + n)))
        }
        let preview = try ledger.previewRolloutStage(Self.check("bench-a", run: run, at: 10))
        #expect(preview.state == .halted && preview.halt?.failed == 4)
        #expect(try ledger.rolloutStage("fw-1.8")?.state == .active)
        #expect(try ledger.stageEvents("fw-1.8").map(\.action) == [.created])
    }

    @Test("the stage is made once, with the profile's percentage, when eight stations check it at the same moment", arguments: Kind.allCases)
    func madeOnce(_ kind: Kind) throws {
        let place = try Place(kind, "race")
        let stations = try (0..<8).map { try place.station("bench-\($0)") }
        let runs = try stations.enumerated().map { try Self.begin($1, "bench-\($0)", at: 0) }
        let failures = Mutex<[String]>([])
        let threads = stations.enumerated().map { index, ledger in
            Thread {
                do { _ = try ledger.checkRolloutStage(Self.check("bench-\(index)", run: runs[index], at: 1)) } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        threads.forEach { $0.start() }
        let deadline = Date().addingTimeInterval(120)
        while threads.contains(where: { !$0.isFinished }), Date() < deadline { usleep(10_000) }
        #expect(failures.withLock { $0 }.isEmpty)
        let events = try stations[0].stageEvents("fw-1.8")
        #expect(events.map(\.action) == [.created], "\(events)")
        #expect(try stations[0].rolloutStage("fw-1.8")?.percentage == 25)
    }

    @Test("a result names a run the ledger holds; one of an unknown run is refused and nothing is kept", arguments: Kind.allCases)
    func resultOfUnknownRun(_ kind: Kind) throws {
        let place = try Place(kind, "unknown")
        let ledger = try place.station("bench-a")
        #expect(throws: LedgerError.noSuchRun(path: ledger.location, run: "20250101-000000-dead")) {
            try ledger.recordRolloutResult(Self.result("bench-a", run: "20250101-000000-dead", 1, .failed, at: 1),
                                           Self.check("bench-a", run: "20250101-000000-dead", at: 1))
        }
        #expect(try ledger.rolloutStage("fw-1.8") == nil, "the failed call's stage was kept")
        #expect(try ledger.rolloutResults("fw-1.8").isEmpty)
    }

    // MARK: The rule alone (pure)

    static func results(_ outcomes: [(String, RolloutUnitOutcome)]) -> [RolloutResult] {
        outcomes.enumerated().map { n, pair in result(pair.0, run: "r", n, pair.1, at: Double(n)) }
    }

    @Test("the rule waits for after_devices, trips only above the rate, and counts only the last window_devices")
    func ruleCounts() {
        let rule = RolloutHaltRule(afterDevices: 3, maxFailureRate: 0.45, windowDevices: 5)
        #expect(rule.evaluate(Self.results([("a", .failed), ("a", .failed)])) == nil, "fewer than after_devices")
        #expect(rule.evaluate(Self.results([("a", .failed), ("a", .succeeded), ("a", .succeeded), ("a", .succeeded), ("a", .succeeded)])) == nil)
        #expect(rule.evaluate(Self.results([("a", .failed), ("b", .failed), ("a", .incomplete), ("a", .succeeded), ("a", .succeeded)])) == nil,
                "2 of 5 is not above 0.45")
        // Newest first: the three failures are the newest; the old successes fall out of the window.
        let newestFirst = Self.results([("b", .failed), ("c", .failed), ("c", .failed), ("a", .succeeded), ("a", .succeeded),
                                        ("a", .succeeded), ("a", .succeeded)])
        #expect(rule.evaluate(newestFirst) == RolloutHalt(failed: 3, finished: 5, threshold: 0.45, trippedBy: "c", stationFailures: 2, rule: rule))
        #expect(RolloutHaltRule(afterDevices: 3, maxFailureRate: 0.45).evaluate(newestFirst) == nil, "without a window: 3 of 7")
    }

    @Test("a tie between stations goes to the first name")
    func ruleTie() {
        let rule = RolloutHaltRule(afterDevices: 2, maxFailureRate: 0.1)
        let halt = rule.evaluate(Self.results([("bench-9", .failed), ("bench-10", .failed), ("bench-2", .succeeded)]))
        #expect(halt?.trippedBy == "bench-10" && halt?.stationFailures == 1)
    }

    @Test("window_minutes: only units finished in the last minutes count, on both ledgers", arguments: Kind.allCases)
    func windowMinutes(_ kind: Kind) throws {
        let place = try Place(kind, "minutes")
        let ledger = try place.station("bench-a")
        let run = try Self.begin(ledger, "bench-a", at: 0)
        let lenient = RolloutHaltRule(afterDevices: 100, maxFailureRate: 1)
        // Three failures an hour before, one success now.
        for n in 0..<3 {
            _ = try ledger.recordRolloutResult(Self.result("bench-a", run: run, n, .failed, at: Double(n)),
                                               Self.check("bench-a", run: run, rule: lenient, at: Double(n)))
        }
        _ = try ledger.recordRolloutResult(Self.result("bench-a", run: run, 9, .succeeded, at: 3600),
                                           Self.check("bench-a", run: run, rule: lenient, at: 3600))
        let recent = RolloutHaltRule(afterDevices: 1, maxFailureRate: 0.5, windowMinutes: 30)
        #expect(try ledger.checkRolloutStage(Self.check("bench-a", run: run, rule: recent, at: 3601)).state == .active)
        let hour = RolloutHaltRule(afterDevices: 1, maxFailureRate: 0.5, windowMinutes: 90)
        #expect(try ledger.checkRolloutStage(Self.check("bench-a", run: run, rule: hour, at: 3601)).state == .halted)
    }

    @Test("every rollout's stages, events and results come back in one read, as the per-rollout reads give them, and the fleet view reads the same", arguments: Kind.allCases)
    func everyRolloutInOneRead(_ kind: Kind) throws {
        let place = try Place(kind, "records")
        let ledger = try place.station("bench-a")
        #expect(try ledger.rolloutRecords() == RolloutRecords())
        let run = try Self.begin(ledger, "bench-a", at: 0)
        var other = Self.check("bench-a", run: run, percentage: 50, at: 1)
        other.rolloutID = "fw-1.9"
        _ = try ledger.checkRolloutStage(Self.check("bench-a", run: run, at: 1))
        _ = try ledger.checkRolloutStage(other)
        for (index, outcome) in [RolloutUnitOutcome.succeeded, .failed, .incomplete].enumerated() {
            _ = try ledger.recordRolloutResult(Self.result("bench-a", run: run, index, outcome, at: Double(2 + index)),
                                               Self.check("bench-a", run: run, at: Double(2 + index)))
            var result = Self.result("bench-a", run: run, 10 + index, outcome, at: Double(2 + index))
            result.rolloutID = "fw-1.9"
            result.percentage = 50
            _ = try ledger.recordRolloutResult(result, other)
        }
        _ = try ledger.changeRolloutStage("fw-1.9", .pause, by: "ops", note: "night", at: at(9))
        let records = try ledger.rolloutRecords()
        #expect(records.stages == (try ledger.rolloutStages()))
        #expect(records.stages.map(\.rolloutID) == ["fw-1.8", "fw-1.9"])
        for id in ["fw-1.8", "fw-1.9"] {
            #expect(records.events.filter { $0.rolloutID == id } == (try ledger.stageEvents(id)))
            #expect(records.results.filter { $0.rolloutID == id } == (try ledger.rolloutResults(id)))
        }
        #expect(records.events.map(\.action) == [.created, .created, .paused])
        #expect(records.results.count == 6 && records.results.map(\.runKey).allSatisfy { $0 == run })
        let view = try #require(ledger as? any FleetViewSource)
        #expect(try view.fleetSnapshot().rollouts == records)
    }

    @Test("a damaged time in a stage row is refused alike by the stage store and the fleet view, naming the column, on both ledgers", arguments: Kind.allCases)
    func damagedStageRowIsRefusedAlike(_ kind: Kind) throws {
        let place = try Place(kind, "damaged")
        do {
            let ledger = try place.station("bench-a")
            _ = try ledger.checkRolloutStage(Self.check("bench-a", run: "key", at: 0))
        }
        try place.edit("UPDATE rollout_stages SET updated_at = 'yesterday'")
        let ledger = try place.station("bench-b")
        let damaged = LedgerError.corrupt(path: place.location(ledger), damage: LedgerDamage("bad_time", ["rollout_stages.updated_at", "yesterday"]))
        #expect(throws: damaged) { try ledger.rolloutStages() }
        #expect(throws: damaged) { try ledger.rolloutRecords() }
        let view = try #require(ledger as? any FleetViewSource)
        // The view read the stage by its own decoder before, and showed no time instead.
        #expect(throws: damaged) { try view.fleetSnapshot() }
    }

}
