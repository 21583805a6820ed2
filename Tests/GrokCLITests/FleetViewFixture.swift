import Foundation
import GrokFleet
import GrokLedger
import GrokkerEmulator
import PostgresTestSupport
import Testing

/// A fleet worth looking at, made once for the suites that read it: two stations (two
/// grokctl processes, two benches of two emulated Grokkers each) provision into one new
/// shared ledger on the test cluster, then a rollout's stage, its events and its units'
/// results are added with SQL as the rollout code writes them (schema 5's tables):
///
/// - rollout `fw-1.8` (release 1.8.0) at 100 %, halted (`fleet_halted`, tripped by bench-1);
/// - bench-0's first Grokker succeeded; bench-1's first failed; bench-1's second failed,
///   then succeeded when run again; bench-0's second has no result (pending).
final class SharedFleetFixture: @unchecked Sendable {
    let uri: String
    let database: String
    let worlds: [FleetWorld]
    /// The serials by station: bench-0's two, then bench-1's two.
    let serials: [[String]]
    /// A profile whose rollout `fw-1.8` halts above 25 % after 2 units.
    let haltProfile: String
    let times: [Date]

    static let shared: Result<SharedFleetFixture, any Error> = Result { try SharedFleetFixture() }

    static func get() throws -> SharedFleetFixture { try shared.get() }

    /// The halt as a rollout run records it in `reason_detail` (``RolloutHalt``'s JSON).
    static let halt = RolloutHalt(failed: 1, finished: 3, threshold: 0.3, trippedBy: "bench-1", stationFailures: 1)
    static let haltDetail = #"{"failed":1,"finished":3,"station_failures":1,"threshold":0.3,"tripped_by":"bench-1"}"#

    private init() throws {
        let cluster = PostgresCluster.shared
        database = try cluster.newDatabase("view")
        uri = cluster.uri(database)
        worlds = [try FleetWorld(devices: 2), try FleetWorld(devices: 2)]
        var serials: [[String]] = []
        for (index, world) in worlds.enumerated() {
            let result = try world.provision(["--ledger", uri, "--station", "bench-\(index)"], devices: "sim:0-1")
            guard result.status == 0 else {
                throw FixtureFailure(description: "station \(index) provision: \(result.standardOutput)\n\(result.standardError)")
            }
            serials.append(try (0..<2).map { String(format: "%08u", try world.device($0).serialNumber) })
        }
        self.serials = serials
        let base = Date(timeIntervalSince1970: 1_796_000_000)   // 2026-12-01
        let times = (0..<5).map { base.addingTimeInterval(Double($0) * 600) }
        self.times = times
        func t(_ index: Int) -> String { LedgerTimeText.format(times[index]) }
        let run0 = try Self.runID(cluster, database, station: "bench-0")
        let run1 = try Self.runID(cluster, database, station: "bench-1")
        _ = try cluster.psql(database, """
            INSERT INTO rollout_stages (rollout_id, release, percentage, state, reason_code, reason_detail, tripped_by, updated_at, updated_by)
            VALUES ('fw-1.8', '1.8.0', 100, 'halted', 'fleet_halted', '\(Self.haltDetail)', 'bench-1', '\(t(4))', 'bench-1');
            INSERT INTO stage_events (record_id, rollout_id, action, percentage_before, percentage_after, station, actor, note, at) VALUES
              ('e1', 'fw-1.8', 'created', NULL, 100, 'bench-0', 'Zoë', '', '\(t(0))'),
              ('e2', 'fw-1.8', 'halted', 100, 100, 'bench-1', 'bench-1', '2/3', '\(t(4))');
            INSERT INTO rollout_results (record_id, rollout_id, run_id, station, serial, percentage, outcome, hardware_revision, firmware_after, finished_at) VALUES
              ('r1', 'fw-1.8', \(run0), 'bench-0', '\(serials[0][0])', 100, 'succeeded', '3', '1.8.0', '\(t(1))'),
              ('r2', 'fw-1.8', \(run1), 'bench-1', '\(serials[1][0])', 100, 'failed', '3', '1.7.3', '\(t(2))'),
              ('r3', 'fw-1.8', \(run1), 'bench-1', '\(serials[1][1])', 100, 'failed', '3', '1.7.3', '\(t(3))'),
              ('r4', 'fw-1.8', \(run1), 'bench-1', '\(serials[1][1])', 100, 'succeeded', '3', '1.8.0', '\(t(4))');
            """)
        let haltProfile = worlds[0].root + "/rollout-fw.json"
        self.haltProfile = haltProfile
        var profile = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: FleetWorld.profile))) as! [String: Any]
        profile["rollout"] = ["id": "fw-1.8", "percentage": 100, "halt": ["after_devices": 2, "max_failure_rate": 0.25]]
        try JSONSerialization.data(withJSONObject: profile, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: haltProfile))
    }

    static func runID(_ cluster: PostgresCluster, _ database: String, station: String) throws -> Int64 {
        let text = try cluster.psql(database, "SELECT id FROM runs WHERE station = '\(station)' ORDER BY id LIMIT 1")
        guard let id = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw FixtureFailure(description: "no run of \(station): '\(text)'")
        }
        return id
    }

    /// Runs the built grokctl as bench-0's station does.
    func run(_ arguments: [String]) throws -> RunResult { try worlds[0].run(arguments) }
}

struct FixtureFailure: Error, CustomStringConvertible {
    let description: String
}

/// The ledger's time format (UTC, milliseconds, `Z`), as the records hold it.
enum LedgerTimeText {
    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

/// The JSON lines of a `--json` command, by their `record`.
func jsonRecords(_ output: String, _ record: String) -> [[String: Any]] {
    output.split(separator: "\n").compactMap { line in
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }.filter { $0["record"] as? String == record }
}
