import Foundation
import GrokLedger
import GrokkerEmulator
import GrokProtocol
import PostgresTestSupport
import Synchronization
import Testing

/// `--ledger postgresql://...`: stations (separate grokctl processes, each with its own bench)
/// record into one PostgreSQL ledger (a throwaway cluster on a Unix socket).
@Suite("Shared ledger from the command line", .serialized)
struct SharedLedgerCommandTests {
    static func runFinished(_ output: String) throws -> [String: Any] {
        try #require(output.split(separator: "\n").lazy.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }.first { $0["event"] as? String == "run_finished" }, "no run_finished in \(output)")
    }

    @Test("two stations provision their own Grokkers at once into one new shared ledger: every run, device and step is there once, with its station")
    func twoStations() throws {
        let cluster = PostgresCluster.shared
        let uri = cluster.uri(try cluster.newDatabase("stations"))
        let worlds = [try FleetWorld(devices: 2), try FleetWorld(devices: 2)]
        let results = Mutex<[Int: RunResult]>([:])
        let jobs = worlds.enumerated().map { index, world in
            (world.environment, ["provision", "--profile", FleetWorld.profile, "--device", "sim:0-1", "--unattended"] + world.common
                + ["--ledger", uri, "--station", "bench-\(index)", "--json"])
        }
        let threads = jobs.enumerated().map { index, job in
            Thread {
                let result = try? runBinary(job.1, environment: job.0, input: nil)
                results.withLock { $0[index] = result }
            }
        }
        threads.forEach { $0.start() }
        let deadline = Date().addingTimeInterval(600)
        while threads.contains(where: { !$0.isFinished }), Date() < deadline { usleep(50_000) }
        let finished = results.withLock { $0 }
        var keys: [String] = []
        for index in 0..<2 {
            let result = try #require(finished[index], "station \(index) did not finish")
            #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
            let summary = try Self.runFinished(result.standardOutput)
            #expect(summary["outcome"] as? String == "succeeded")
            keys.append(try #require(summary["run_id"] as? String))
        }
        let ledger = try PostgresLedger.open(uri, station: "auditor")
        let runs = try ledger.runs(limit: nil)
        #expect(Set(runs.map(\.key)) == Set(keys), "the printed run ids are the shared ledger's keys")
        #expect(Set(runs.map(\.station)) == ["bench-0", "bench-1"])
        #expect(runs.allSatisfy { $0.outcome == .succeeded && $0.endedAt != nil })
        // Four Grokkers (two serials per bench; the benches draw different serials), each
        // with its firmware step recorded once, by its own station.
        let devices = try ledger.devices()
        #expect(devices.count == 4, "\(devices.map(\.serial))")
        for run in runs {
            let steps = try ledger.steps(run: run.id, serial: nil)
            let firmware = steps.filter { $0.step == "firmware" && $0.result == .done }
            #expect(firmware.count == 2, "\(run.station): \(steps.map { "\($0.serial) \($0.step) \($0.result)" })")
            #expect(try ledger.stepStations(run: run.id).allSatisfy { $0 == run.station })
        }
        // `ledger show` of a station's SQLite file is untouched: nothing went there.
        #expect(!FileManager.default.fileExists(atPath: worlds[0].ledger))
    }

    @Test("a shared ledger that cannot be reached stops the run before any Grokker is touched, naming the server without its password")
    func unreachable() throws {
        let world = try FleetWorld(devices: 1)
        let before = world.deviceBytes(1)
        let result = try world.provision(["--ledger", "postgresql://grok:s3cret@/nothing?host=/nonexistent-grokctl-socket&connect_timeout=2",
                                          "--station", "bench-x"], devices: "sim:0")
        #expect(result.status != 0)
        #expect(result.standardError.contains("nonexistent-grokctl-socket"), "\(result.standardError)")
        #expect(!result.standardError.contains("s3cret"), "\(result.standardError)")
        #expect(world.deviceBytes(1) == before, "a Grokker was changed although the ledger was unreachable")
    }

    @Test("a Grokker another station's live run holds: this station's run is refused, told which station; once that run ends, it goes ahead")
    func grokkerHeldByAnotherStation() throws {
        let cluster = PostgresCluster.shared
        let uri = cluster.uri(try cluster.newDatabase("held"))
        let world = try FleetWorld(devices: 1)
        #expect(try world.run(["info", "--device", "sim:0", "--bench", world.bench]).status == 0)
        let serial = String(format: "%08u", try world.device(0).serialNumber)
        // Station A, mid-run on this Grokker (its session is alive: this test process).
        let stationA = try PostgresLedger.open(uri, station: "bench-a")
        let runA = try stationA.beginRun(RunStart(kind: .provision, profileName: "bench-us", profileSHA256: String(repeating: "ab", count: 32),
                                                  station: "bench-a", operatorName: "Zoë", startedAt: Date()))
        #expect(try stationA.lockDevice(serial, run: runA) == nil)
        let keyA = try #require(try stationA.run(runA)?.key)
        let job = ["provision", "--profile", FleetWorld.profile, "--device", "sim:0", "--unattended"] + world.common
            + ["--ledger", uri, "--station", "bench-b"]
        let refused = try world.run(job)
        #expect(refused.status != 0, "\(refused.standardOutput)")
        #expect((refused.standardOutput + refused.standardError).contains("station bench-a, run \(keyA)"),
                "\(refused.standardOutput)\n\(refused.standardError)")
        #expect(try world.device(0).firmwareVersion == FirmwareVersion(major: 1, minor: 7, build: 3), "a refused run changed the Grokker")
        // Station A's run ends: its lock goes with it, and station B's run goes ahead.
        try stationA.finishRun(runA, outcome: .succeeded, endedAt: Date(), reportPath: nil)
        let done = try world.run(job)
        #expect(done.status == 0, "\(done.standardOutput)\n\(done.standardError)")
        #expect(try world.device(0).firmwareVersion == FirmwareVersion(major: 1, minor: 8, build: 0))
        #expect(try stationA.deviceLocks().isEmpty, "a finished run's lock stayed")
    }
}
