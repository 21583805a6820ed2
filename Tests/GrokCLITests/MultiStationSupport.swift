import Foundation
import GrokkerEmulator
import GrokLedger
import PostgresTestSupport
import Synchronization
import Testing

// The multi-station harness (docs/fleet.md, "Many stations"): stations as separate grokctl
// processes, each with its own bench of emulated Grokkers and its own state directory, all
// recording into one PostgreSQL database (`--ledger URI --station NAME`), and one checker of
// what must hold afterwards whatever happened on the way.

/// One station: a name and a bench of emulated Grokkers (a ``FleetWorld``: its own state
/// directory, lock files and TUF state).
final class Station {
    let name: String
    let world: FleetWorld
    let devices: Int

    init(name: String, devices: Int) throws {
        self.name = name
        self.devices = devices
        world = try FleetWorld(devices: devices)
    }

    /// `--device sim:0-(N-1)`.
    var deviceRange: String { devices == 1 ? "sim:0" : "sim:0-\(devices - 1)" }

    /// The serial numbers of this bench's Grokkers, drawing them on first use (as their first
    /// connection would: ``DeviceStateStore/openOrCreate(directory:index:)``).
    func serials() throws -> [String] {
        try (0..<devices).map { String(format: "%08u", try world.device($0).serialNumber) }
    }

    /// Gives this bench's Grokkers the identities of `other`'s (the bench seeds a serial when a
    /// unit's state file is first made; a copy of that file is the same unit out of the box):
    /// the same serial numbers on two benches, as when one batch of Grokkers is split wrongly.
    func takeIdentities(of other: Station) throws {
        _ = try other.serials()
        for n in 0..<min(devices, other.devices) {
            let from = DeviceStateStore.deviceDirectory(in: other.world.bench, index: n) + "/state.json"
            let to = DeviceStateStore.deviceDirectory(in: world.bench, index: n) + "/state.json"
            try? FileManager.default.removeItem(atPath: to)
            try FileManager.default.copyItem(atPath: from, toPath: to)
        }
    }

    /// `grokctl provision --json` of every Grokker on the bench into the shared ledger `uri`.
    func provisionArguments(uri: String, profile: String) -> [String] {
        ["provision", "--profile", profile, "--device", deviceRange, "--unattended", "--json"] + world.common
            + ["--ledger", uri, "--station", name]
    }
}

/// Counts finished steps over every station of a campaign (what the test waits on before it
/// restarts the database or kills a station: a moment in the run, not on the clock).
final class StepCounter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// What one station's grokctl process did.
struct StationRun: Sendable {
    var station: String
    /// Wall-clock moments just before the process started and just after it ended: the run it
    /// began (if any) started between them.
    var launched: Date
    var exited: Date
    var status: Int32
    /// Killed by the test (SIGKILL) before it ended by itself.
    var killed: Bool
    var standardOutput: String
    var standardError: String

    /// The `--json` events printed (one JSON object a line; a line cut by a kill is skipped).
    var events: [[String: String]] {
        standardOutput.split(separator: "\n").compactMap { line -> [String: String]? in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
            var flat: [String: String] = [:]
            for (key, value) in object {
                if let text = value as? String { flat[key] = text }
                if let number = value as? NSNumber { flat[key] = number.stringValue }
                if let data = value as? [String: Any] {
                    for (k, v) in data { if let text = v as? String { flat["data." + k] = text } }
                }
            }
            return flat
        }
    }

    /// The steps the process reported done (serial, step), from its `step_finished` events:
    /// each is reported after the ledger took it, so each must be in the ledger.
    var doneSteps: [(serial: String, step: String)] {
        events.filter { $0["event"] == "step_finished" && $0["data.result"] == "done" }
            .compactMap { event in event["serial"].map { ($0, event["data.step"] ?? "") } }
    }

    /// The run id of its `run_finished` summary (absent when killed or stopped before).
    var runKey: String? { events.first { $0["event"] == "run_finished" }?["run_id"] }

    var outcome: String? { events.first { $0["event"] == "run_finished" }?["outcome"] }

    var text: String { standardOutput + "\n" + standardError }
}

/// Runs one station's grokctl with its standard output on a pipe, read as it comes; every
/// `step_finished` line counts in `counter`. With `killAfterSteps`, the process is killed
/// (SIGKILL) right after its `killAfterSteps`-th finished step and `delay` seconds more: the
/// pipe wakes the reader as soon as the line is written, so the kill lands at that moment of
/// the run whatever the machine's speed.
func runStation(_ station: Station, _ arguments: [String], counter: StepCounter? = nil,
                killAfterSteps: Int? = nil, delay: Double = 0) throws -> StationRun {
    let pipe = Pipe()
    let errorPath = station.world.root + "/stderr-" + UUID().uuidString
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errorPath) }
    let errorHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
    let process = Process()
    process.executableURL = try grokctlExecutable()
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin"].merging(station.world.environment) { $1 }
    process.standardOutput = pipe
    process.standardError = errorHandle
    process.standardInput = FileHandle.nullDevice
    let launched = Date()
    try process.run()
    try errorHandle.close()
    let reader = pipe.fileHandleForReading
    var text = ""
    var steps = 0
    var killed = false
    var pending = ""
    while true {
        let chunk = reader.availableData
        if chunk.isEmpty { break }   // the process ended (or was killed)
        pending += String(decoding: chunk, as: UTF8.self)
        while let newline = pending.firstIndex(of: "\n") {
            let line = pending[..<newline]
            text += line + "\n"
            pending = String(pending[pending.index(after: newline)...])
            guard line.contains("\"event\":\"step_finished\"") else { continue }
            steps += 1
            counter?.add()
            if let limit = killAfterSteps, !killed, steps >= limit, !text.contains("\"event\":\"run_finished\"") {
                if delay > 0 { usleep(useconds_t(delay * 1_000_000)) }
                killed = kill(process.processIdentifier, SIGKILL) == 0
            }
        }
    }
    text += pending
    process.waitUntilExit()
    let wasKilled = killed && process.terminationReason == .uncaughtSignal
    return StationRun(station: station.name, launched: launched, exited: Date(), status: process.terminationStatus,
                      killed: wasKilled, standardOutput: text,
                      standardError: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
}

/// Runs `jobs` at once, a thread each, and waits for all of them (at most `seconds`).
/// A job that threw or did not end in time is nil.
func atOnce(_ jobs: [@Sendable () throws -> StationRun], seconds: Double = 900,
            whileRunning: () -> Void = {}) -> [StationRun?] {
    let results = Mutex<[Int: StationRun]>([:])
    let threads = jobs.enumerated().map { index, job in
        Thread {
            let run = try? job()
            results.withLock { $0[index] = run }
        }
    }
    threads.forEach { $0.start() }
    let deadline = Date().addingTimeInterval(seconds)
    while threads.contains(where: { !$0.isFinished }), Date() < deadline {
        whileRunning()
        usleep(20_000)
    }
    let finished = results.withLock { $0 }
    return jobs.indices.map { finished[$0] }
}

/// Waits (at most `seconds`) until no session of a grokctl station is connected to
/// `database`: a killed station's server process ends once it sees its socket closed, which
/// takes a moment; a station re-run seconds later, as a person would, finds it gone.
func waitForStationSessionsToEnd(cluster: PostgresCluster, database: String, seconds: Double = 20) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        let count = try cluster.psql(database, """
            SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'grokctl %'
            """).trimmingCharacters(in: .whitespacesAndNewlines)
        if count == "0" { return }
        usleep(50_000)
    }
}

/// Steps that change a Grokker: made at most once per unit.
let changingStepNames: Set<String> = ["provision", "region", "firmware"]

/// What must hold in the shared ledger after any campaign, once every station's process has
/// ended (and the killed ones were re-run): the one checker every scenario calls.
///
/// - no step recorded twice (same run, serial, step, started_at);
/// - no change made twice to one Grokker (provision, region, firmware done at most once per
///   serial and station: each station's bench holds its own units);
/// - every step a station's events reported done is in the ledger, done, in the run that
///   process began, by that station;
/// - every run the reports name is there, ended as they said; no run left open;
/// - no fleet-wide device lock left, and no advisory lock held in the database (a dead
///   station's session is gone, and a live one has ended its runs).
func checkFleetInvariants(cluster: PostgresCluster, database: String, runs: [StationRun],
                          sourceLocation: SourceLocation = #_sourceLocation) throws {
    let violations = try fleetInvariantViolations(cluster: cluster, database: database, runs: runs)
    #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))", sourceLocation: sourceLocation)
}

/// What ``checkFleetInvariants(cluster:database:runs:sourceLocation:)`` found wrong, one
/// sentence each (empty: everything held).
/// `lockWait`: how long a lock of a session that is going away may take to go.
func fleetInvariantViolations(cluster: PostgresCluster, database: String, runs: [StationRun], lockWait: Double = 10) throws -> [String] {
    var violations: [String] = []
    func expect(_ holds: Bool, _ what: @autoclosure () -> String) { if !holds { violations.append(what()) } }
    let sql = { (query: String) throws -> [[String]] in
        try cluster.psql(database, query).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }
    let twice = try sql("""
        SELECT run_id, serial, step, started_at, count(*) FROM steps GROUP BY run_id, serial, step, started_at HAVING count(*) > 1
        """)
    expect(twice.isEmpty, "steps recorded twice: \(twice)")
    let changes = try sql("""
        SELECT station, serial, step, count(*) FROM steps WHERE result = 'done' AND step IN ('provision', 'region', 'firmware')
        GROUP BY station, serial, step HAVING count(*) > 1
        """)
    expect(changes.isEmpty, "changes made twice to one Grokker: \(changes)")
    let open = try sql("SELECT run_key, station FROM runs WHERE ended_at IS NULL")
    expect(open.isEmpty, "runs left open: \(open)")
    let locks = try sql("SELECT serial, station FROM device_locks")
    expect(locks.isEmpty, "fleet-wide device locks left: \(locks)")
    // A killed station's server process ends when it sees the socket closed; a bounded wait.
    var advisory: [[String]] = []
    let deadline = Date().addingTimeInterval(lockWait)
    repeat {
        advisory = try sql("""
            SELECT l.pid, l.objid, a.application_name FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """)
        if advisory.isEmpty { break }
        usleep(50_000)
    } while Date() < deadline
    expect(advisory.isEmpty, "advisory locks still held: \(advisory)")

    // Nothing missing that a station reported done. Read without PostgresLedger.open, which
    // would close abandoned runs itself and hide a run left open.
    let ledgerRuns = try sql("SELECT id, run_key, station, started_at, outcome FROM runs")
    let ledgerSteps = try sql("SELECT run_id, serial, step FROM steps WHERE result = 'done'")
    var doneByRun: [String: Set<String>] = [:]
    for row in ledgerSteps where row.count == 3 { doneByRun[row[0], default: []].insert(row[1] + " " + row[2]) }
    for run in runs {
        let done = run.doneSteps
        if let key = run.runKey {
            let row = ledgerRuns.first { $0.count == 5 && $0[1] == key }
            expect(row?[2] == run.station, "run \(key) of \(run.station) is not in the ledger as its")
            if let outcome = run.outcome { expect(row?[4] == outcome, "run \(key): reported \(outcome), ledger \(row?[4] ?? "-")") }
        }
        guard !done.isEmpty else { continue }
        // The run this process began: the station's run that started while it lived.
        let slack = 0.01
        let candidates = ledgerRuns.filter { row in
            guard row.count == 5, row[2] == run.station, let started = ledgerDate(row[3]) else { return false }
            return started.timeIntervalSince(run.launched) >= -slack && started.timeIntervalSince(run.exited) <= slack
        }
        expect(candidates.count == 1, "\(run.station): \(candidates.count) runs began while one process lived")
        guard let ledgerRun = candidates.first else { continue }
        if let key = run.runKey { expect(ledgerRun[1] == key, "\(run.station): its run \(key) is not the run that began while it lived") }
        let recorded = doneByRun[ledgerRun[0]] ?? []
        for step in done {
            expect(recorded.contains(step.serial + " " + step.step),
                    "\(run.station) reported \(step.serial) \(step.step) done; run \(ledgerRun[1]) does not have it")
        }
    }
    return violations
}

/// A ledger timestamp (`2026-12-01T17:44:44.123Z`).
func ledgerDate(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
}
