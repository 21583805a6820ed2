import Foundation
import GrokLedger
import PostgresTestSupport
import Synchronization

/// The shared ledger under many stations (issue 14, item 7): `--stations N` (default 16)
/// threads, each its own station with its own `PostgresLedger` connection, write realistic
/// runs (beginRun, per Grokker upsertDevice, the fleet-wide lock, an intent before each
/// change, the nine steps, two smoke tests, finishRun) into one PostgreSQL that the
/// benchmark starts itself (PostgresTestSupport's throwaway cluster: initdb in a temporary
/// directory, a Unix socket, removed afterwards). Beside it the same runs from one station
/// into PostgreSQL and into a SQLite file on the same disk: the anchor for the time a step's
/// record adds. Then how soon one station's write is seen by another station's next read
/// (a row written by one, read by the other reading back to back), and how soon a halt
/// does: one station's failing unit trips the rollout stage, every other station checking
/// its stage finds it halted.
enum LedgerBenchmark {
    static let steps = ["connect", "identify", "provision", "region", "smoke_test", "firmware", "reconnect", "final_smoke_test", "record"]
    static let changes: Set<String> = ["provision", "region", "firmware"]

    static func run() -> Figures {
        var figures = Figures()
        let arguments = CommandLine.arguments
        var stations = 16
        if let i = arguments.firstIndex(of: "--stations"), i + 1 < arguments.count, let n = Int(arguments[i + 1]), (1...64).contains(n) {
            stations = n
        }
        var runsPerStation = 5
        if let i = arguments.firstIndex(of: "--runs"), i + 1 < arguments.count, let n = Int(arguments[i + 1]), (1...1000).contains(n) {
            runsPerStation = n
        }
        let devicesPerRun = 8
        let cluster: PostgresCluster
        do { cluster = try PostgresCluster(durable: true) } catch { fail("cannot start PostgreSQL: \(error)") }
        defer { cluster.stop(mode: "immediate") }

        // Many stations at once.
        let many = workload(stations: stations, runs: runsPerStation, devices: devicesPerRun, location: database(cluster, "many")) { database, station in
            try PostgresLedger.open(cluster.conninfo(database), station: station)
        }
        figures.set("stations", Double(stations))
        figures.set("runs", Double(stations * runsPerStation))
        figures.set("devices_per_run", Double(devicesPerRun))
        figures.set("records", Double(many.records))
        figures.set("wall_s", many.wall, digits: 2)
        figures.set("records_per_s", Double(many.records) / many.wall, digits: 0)
        figures.set("pg_step_ms_p50", percentile(many.stepLatencies, 0.50), digits: 2)
        figures.set("pg_step_ms_p95", percentile(many.stepLatencies, 0.95), digits: 2)

        // One station alone: PostgreSQL, then a SQLite file (the anchor).
        let alone = workload(stations: 1, runs: runsPerStation, devices: devicesPerRun, location: database(cluster, "alone")) { database, station in
            try PostgresLedger.open(cluster.conninfo(database), station: station)
        }
        figures.set("pg_1_records_per_s", Double(alone.records) / alone.wall, digits: 0)
        figures.set("pg_1_step_ms_p50", percentile(alone.stepLatencies, 0.50), digits: 2)
        figures.set("pg_1_step_ms_p95", percentile(alone.stepLatencies, 0.95), digits: 2)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grokbench-ledger-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sqlite = workload(stations: 1, runs: runsPerStation, devices: devicesPerRun, location: directory + "/ledger.sqlite") { path, _ in
            try Ledger.open(path: path)
        }
        figures.set("sqlite_records_per_s", Double(sqlite.records) / sqlite.wall, digits: 0)
        figures.set("sqlite_step_ms_p50", percentile(sqlite.stepLatencies, 0.50), digits: 2)
        figures.set("sqlite_step_ms_p95", percentile(sqlite.stepLatencies, 0.95), digits: 2)

        // One station's write, seen by another's next read.
        let seen = propagation(cluster: cluster, trials: 200)
        figures.set("write_to_other_station_read_ms_p50", percentile(seen, 0.50), digits: 2)
        figures.set("write_to_other_station_read_ms_p95", percentile(seen, 0.95), digits: 2)
        figures.set("write_to_other_station_read_ms_max", seen.max() ?? .nan, digits: 2)

        // A halt, through the rollout stage itself: one station's failing unit trips the
        // rule; the other stations, checking their stage as before each unit, see it halted.
        let halt = haltPropagation(cluster: cluster, watchers: stations - 1, trials: 20)
        figures.set("halt_to_other_station_ms_p50", percentile(halt.seen, 0.50), digits: 2)
        figures.set("halt_to_other_station_ms_p95", percentile(halt.seen, 0.95), digits: 2)
        figures.set("halt_to_other_station_ms_max", halt.seen.max() ?? .nan, digits: 2)
        figures.set("stage_check_ms_p50", percentile(halt.checks, 0.50), digits: 2)
        figures.set("stage_check_ms_p95", percentile(halt.checks, 0.95), digits: 2)
        return figures
    }

    struct Outcome {
        var records = 0
        var wall = 0.0
        /// Each recordStep's time, milliseconds.
        var stepLatencies: [Double] = []
    }

    /// A new database in `cluster`.
    static func database(_ cluster: PostgresCluster, _ name: String) -> String {
        do { return try cluster.newDatabase(name) } catch { fail("cannot create a database: \(error)") }
    }

    /// `stations` threads at once, each opening its own ledger (`open(location, station)`,
    /// before the clock starts) and recording `runs` runs of `devices` Grokkers one after
    /// the other. Counts every record written (a run's begin and end, a device, a lock, an
    /// intent, a step, a smoke test: one transaction each).
    static func workload(stations: Int, runs: Int, devices: Int, location place: String,
                         open: @escaping @Sendable (String, String) throws -> any LedgerStore) -> Outcome {
        let outcome = Mutex(Outcome())
        let ready = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<stations {
            ready.enter()
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                let station = "station-\(index)"
                let ledger: any LedgerStore
                do { ledger = try open(place, station) } catch { fail("\(station) cannot open the ledger: \(error)") }
                ready.leave()
                go.wait()
                var records = 0
                var latencies: [Double] = []
                do {
                    for r in 0..<runs { try record(ledger, station: station, run: r, devices: devices, records: &records, latencies: &latencies) }
                } catch {
                    fail("\(station): \(error)")
                }
                if let shared = ledger as? PostgresLedger { shared.close() }
                outcome.withLock {
                    $0.records += records
                    $0.stepLatencies += latencies
                }
            }
            thread.start()
        }
        ready.wait()
        let start = monotonic()
        for _ in 0..<stations { go.signal() }
        done.wait()
        let wall = monotonic() - start
        return outcome.withLock {
            var result = $0
            result.wall = wall
            return result
        }
    }

    /// One run as grokctl records it.
    static func record(_ ledger: any LedgerStore, station: String, run r: Int, devices: Int, records: inout Int,
                       latencies: inout [Double]) throws {
        let digest = String(repeating: "5e", count: 32)
        let run = try ledger.beginRun(RunStart(kind: .provision, profileName: "bench-us", profileSHA256: digest, station: station,
                                               operatorName: "grokbench", startedAt: Date()))
        records += 1
        for d in 0..<devices {
            let serial = String(format: "%@-%04d-%02d", station, r, d)
            try ledger.upsertDevice(DeviceSighting(serial: serial, hardwareType: "GR-1", hardwareRevision: "3", firmware: "1.7.3", seenAt: Date()))
            records += 1
            if let shared = ledger as? PostgresLedger {
                _ = try shared.lockDevice(serial, run: run)
                records += 1
            }
            for step in steps {
                let started = Date()
                if changes.contains(step) {
                    try ledger.recordIntent(run: run, serial: serial, step: step, target: step == "firmware" ? "1.8.0" : "fcc", at: started)
                    records += 1
                }
                let record = StepRecord(run: run, serial: serial, step: step, startedAt: started, endedAt: started.addingTimeInterval(0.5),
                                        result: .done, firmwareBefore: step == "firmware" ? "1.7.3" : nil,
                                        firmwareAfter: step == "firmware" ? "1.8.0" : nil, code: "step_done", detail: "")
                let t0 = monotonic()
                try ledger.recordStep(record)
                latencies.append((monotonic() - t0) * 1000)
                records += 1
                if step == "smoke_test" || step == "final_smoke_test" {
                    try ledger.recordSmokeTest(SmokeTestRecord(
                        run: run, serial: serial, afterStep: step, startedAt: started, durationMilliseconds: 2000,
                        expectedTags: ["3034257BF4789000000003E8"], foundTags: ["3034257BF4789000000003E8"], readsPerSecond: 42,
                        minRSSI: -55, passed: true))
                    records += 1
                }
            }
            try ledger.upsertDevice(DeviceSighting(serial: serial, firmware: "1.8.0", region: "fcc", provisioned: true, seenAt: Date()))
            records += 1
        }
        try ledger.finishRun(run, outcome: .succeeded, endedAt: Date(), reportPath: nil)
        records += 1
    }

    /// Milliseconds from one station's write returning (its commit) to the first read of
    /// another station, reading back to back, that sees the row: `trials` runs begun by
    /// the writer, at random gaps of 1-20 ms, each looked for by its key.
    static func propagation(cluster: PostgresCluster, trials: Int) -> [Double] {
        let database = database(cluster, "seen")
        let keys = (0..<trials).map { "seen-\($0)-\(UUID().uuidString.prefix(8))" }
        let committed = Mutex<[Double?]>(Array(repeating: nil, count: trials))
        let writer: PostgresLedger
        let reader: PostgresLedger
        do {
            writer = try PostgresLedger.open(cluster.conninfo(database), station: "writer")
            reader = try PostgresLedger.open(cluster.conninfo(database), station: "reader")
        } catch {
            fail("cannot open the ledger: \(error)")
        }
        let digest = String(repeating: "5e", count: 32)
        let thread = Thread {
            for (index, key) in keys.enumerated() {
                usleep(UInt32.random(in: 1000...20_000))
                do {
                    let run = try writer.beginRun(RunStart(kind: .rollout, profileName: "halt", profileSHA256: digest, station: "writer",
                                                           operatorName: "grokbench", startedAt: Date(), key: key))
                    let now = monotonic()
                    committed.withLock { $0[index] = now }
                    try writer.finishRun(run, outcome: .failed, endedAt: Date(), reportPath: nil)
                } catch {
                    fail("writer: \(error)")
                }
            }
        }
        thread.start()
        var seen: [Double] = []
        for (index, key) in keys.enumerated() {
            while true {
                let found: Bool
                do { found = try reader.run(key: key) != nil } catch { fail("reader: \(error)") }
                if found {
                    let now = monotonic()
                    // The reader can see the row before the writer's COMMIT has returned to it.
                    let at = committed.withLock { $0[index] }
                    seen.append(max(0, (now - (at ?? now)) * 1000))
                    break
                }
            }
        }
        writer.close()
        reader.close()
        return seen
    }

    /// Milliseconds from the moment one station's failing unit result returns having halted
    /// the stage (its commit) to the first stage check of each of `watchers` other stations
    /// (each its own connection, checking back to back as a station does before each unit
    /// and firmware decision) that finds the stage halted; and the time of one check. One new
    /// rollout per trial; the rule halts on the third failure.
    static func haltPropagation(cluster: PostgresCluster, watchers: Int, trials: Int) -> (seen: [Double], checks: [Double]) {
        let database = database(cluster, "halt")
        let digest = String(repeating: "4a", count: 32)
        let rule = RolloutHaltRule(afterDevices: 3, maxFailureRate: 0.5)
        func open(_ station: String) -> (PostgresLedger, String) {
            do {
                let ledger = try PostgresLedger.open(cluster.conninfo(database), station: station)
                let key = "\(station)-\(UUID().uuidString.prefix(8))"
                _ = try ledger.beginRun(RunStart(kind: .rollout, profileName: "halt", profileSHA256: digest, station: station,
                                                 operatorName: "grokbench", startedAt: Date(), key: key))
                return (ledger, key)
            } catch {
                fail("cannot open the ledger: \(error)")
            }
        }
        let (writer, writerKey) = open("tripper")
        let others = (0..<max(1, watchers)).map { open("watcher-\($0)") }
        let seen = Mutex<[Double]>([])
        let checks = Mutex<[Double]>([])
        for trial in 0..<trials {
            let rollout = "bench-halt-\(trial)-\(UUID().uuidString.prefix(6))"
            @Sendable func check(_ station: String, _ key: String) -> StageCheck {
                StageCheck(rolloutID: rollout, release: "1.8.0", profilePercentage: 100, rule: rule, station: station,
                           actor: "grokbench", runKey: key, now: Date())
            }
            do { _ = try writer.checkRolloutStage(check("tripper", writerKey)) } catch { fail("tripper: \(error)") }
            let tripped = Mutex<Double?>(nil)
            let threads = others.enumerated().map { index, other in
                Thread {
                    var local: [Double] = []
                    while true {
                        let start = monotonic()
                        let stage: RolloutStage
                        do { stage = try other.0.checkRolloutStage(check("watcher-\(index)", other.1)) } catch { fail("watcher: \(error)") }
                        let now = monotonic()
                        local.append((now - start) * 1000)
                        if stage.state == .halted {
                            // The watcher can see the halt before the tripper's COMMIT has returned to it.
                            let at = tripped.withLock { $0 } ?? now
                            seen.withLock { $0.append(max(0, (now - at) * 1000)) }
                            break
                        }
                    }
                    checks.withLock { $0 += local.suffix(50) }
                }
            }
            threads.forEach { $0.start() }
            for unit in 0..<3 {
                usleep(UInt32.random(in: 2000...10_000))
                let result = RolloutResult(rolloutID: rollout, runKey: writerKey, station: "tripper", serial: String(format: "%08d", trial * 10 + unit),
                                           percentage: 100, outcome: .failed, hardwareRevision: "3", firmwareAfter: "1.7.3", finishedAt: Date())
                do {
                    let stage = try writer.recordRolloutResult(result, check("tripper", writerKey))
                    if stage.state == .halted { tripped.withLock { $0 = monotonic() } }
                } catch {
                    fail("tripper: \(error)")
                }
            }
            while threads.contains(where: { !$0.isFinished }) { usleep(1000) }
        }
        writer.close()
        others.forEach { $0.0.close() }
        return (seen.withLock { $0 }, checks.withLock { $0 })
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    static func monotonic() -> Double { ProvisionBenchmark.monotonic() }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("grokbench ledger: \(message)\n".utf8))
        exit(1)
    }
}
