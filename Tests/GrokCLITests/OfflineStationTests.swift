import Foundation
import GrokLedger
import GrokkerEmulator
import GrokProtocol
import PostgresTestSupport
import Testing

/// A station whose shared ledger is down (docs/ledger.md, "Offline stations and the spool"):
/// real grokctl processes, real emulated Grokkers, and a PostgreSQL cluster of the test's
/// own, stopped and started again (the shared test cluster serves other suites meanwhile).
@Suite("Offline stations", .serialized)
struct OfflineStationTests {
    /// A private cluster with one new database, stopped: the station's ledger is unreachable.
    struct DownDatabase {
        let cluster: PostgresCluster
        let uri: String

        init() throws {
            cluster = try PostgresCluster()
            uri = cluster.uri(try cluster.newDatabase("offline"))
            cluster.stop()
        }
    }

    /// bench-us with a `station` section (and `extra` top-level keys), written beside the world.
    /// The station waits 1 s (`ledger_reconnect_s`) for a database that does not answer, not
    /// the default 30 s (5 s of it at the start): these databases are down, not restarting.
    static func profile(_ world: FleetWorld, station: [String: String], extra: [String: Any] = [:]) throws -> String {
        let data = try #require(FileManager.default.contents(atPath: FleetWorld.profile))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var section: [String: Any] = station
        section["ledger_reconnect_s"] = 1
        object["station"] = section
        for (key, value) in extra { object[key] = value }
        let path = world.root + "/station-profile.json"
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func spoolPath(_ world: FleetWorld, _ station: String) -> String { world.state + "/grokctl/spool/\(station).sqlite" }

    /// (serial, step, result, start) of every step, as the ledger holds them.
    static func stepKeys(_ steps: [StepRecord]) -> [String] {
        steps.map { "\($0.serial) \($0.step) \($0.result.rawValue) \($0.startedAt.timeIntervalSince1970)" }
    }

    @Test("refuse (the default): the database down stops the run with fleet_ledger_offline before any Grokker is touched, and nothing is spooled")
    func refuseTouchesNoUnit() throws {
        let down = try DownDatabase()
        let world = try FleetWorld(devices: 1)
        let before = world.deviceBytes(1)
        let profile = try Self.profile(world, station: ["name": "bench-r", "ledger": down.uri])
        let result = try world.provision(devices: "sim:0", profile: profile)
        #expect(result.status == 1, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardError.contains("cannot be reached") && result.standardError.contains(down.uri),
                "\(result.standardError)")
        #expect(result.standardError.contains("\"offline\": \"spool\""), "the error does not say what to do: \(result.standardError)")
        #expect(world.deviceBytes(1) == before, "a Grokker was touched although the ledger was unreachable")
        #expect(!FileManager.default.fileExists(atPath: Self.spoolPath(world, "bench-r")))

        let json = try world.provision(["--json"], devices: "sim:0", profile: profile)
        #expect(json.standardError.contains("\"fleet_ledger_offline\""), "\(json.standardError)")
        // The dry run meets the same refusal.
        let plan = try world.provision(["--dry-run", "--json"], devices: "sim:0", profile: profile)
        #expect(plan.status == 1 && plan.standardError.contains("\"fleet_ledger_offline\""), "\(plan.standardError)")
    }

    @Test("spool: the run provisions into the station's spool, saying there is no fleet-wide lock; once the database is back 'ledger sync' sends every step once, and again sends nothing")
    func spoolThenLedgerSync() throws {
        let down = try DownDatabase()
        let world = try FleetWorld(devices: 2)
        let profile = try Self.profile(world, station: ["name": "bench-s", "ledger": down.uri, "offline": "spool"])
        let result = try world.provision(devices: "sim:0-1", profile: profile)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardError.contains("no fleet-wide device lock"), "\(result.standardError)")
        let spoolPath = Self.spoolPath(world, "bench-s")
        #expect(result.standardOutput.contains(spoolPath), "the summary does not name the spool: \(result.standardOutput)")
        for n in 0..<2 { #expect(try world.device(n).firmwareVersion == FirmwareVersion(major: 1, minor: 8, build: 0), "sim:\(n)") }
        let spool = try Ledger.open(path: spoolPath, readOnly: true)
        let spooledRun = try #require(try spool.runs().first)
        #expect(spooledRun.station == "bench-s")
        let spooledSteps = try spool.steps()
        #expect(spooledSteps.filter { $0.step == "firmware" && $0.result == .done }.count == 2)

        // A dry run while the database is still down plans from the spool and changes nothing.
        let bytes = world.deviceBytes(2)
        let plan = try world.provision(["--dry-run"], devices: "sim:0-1", profile: profile)
        #expect(plan.status == 0, "\(plan.standardOutput)\n\(plan.standardError)")
        let spooledRuns = try Ledger.open(path: spoolPath, readOnly: true).runs().count
        #expect(world.deviceBytes(2) == bytes && spooledRuns == 1, "the dry run changed a Grokker or recorded a run")

        try down.cluster.start()
        let sync = try world.run(["ledger", "sync", "--ledger", down.uri])
        #expect(sync.status == 0, "\(sync.standardOutput)\n\(sync.standardError)")
        #expect(sync.standardOutput.contains("Sent 1 spooled run"), "\(sync.standardOutput)")
        let shared = try PostgresLedger.open(down.uri, station: "auditor")
        let runs = try shared.runs()
        #expect(runs.map(\.key) == [spooledRun.key] && runs.first?.station == "bench-s" && runs.first?.outcome == .succeeded)
        let sentSteps = try shared.steps()
        #expect(Self.stepKeys(sentSteps) == Self.stepKeys(spooledSteps), "not every step once")
        #expect(try shared.stepStations(run: runs[0].id).allSatisfy { $0 == "bench-s" })
        #expect(Set(try shared.devices().map(\.serial)) == Set(try spool.devices().map(\.serial)))

        let again = try world.run(["ledger", "sync", "--ledger", down.uri, "--json"])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardOutput.contains("\"sent\":[]") && again.standardOutput.contains("\"already_sent\":1"), "\(again.standardOutput)")
        #expect(try shared.steps().count == sentSteps.count && shared.runs().count == 1)
    }

    @Test("spool: the next run that reaches the database sends the spool before it starts, and its Grokkers' spooled work counts as done")
    func nextRunSendsTheSpool() throws {
        let down = try DownDatabase()
        let world = try FleetWorld(devices: 1)
        let profile = try Self.profile(world, station: ["name": "bench-n", "ledger": down.uri, "offline": "spool"])
        let offline = try world.provision(devices: "sim:0", profile: profile)
        #expect(offline.status == 0, "\(offline.standardOutput)\n\(offline.standardError)")
        let spooledKey = try #require(try Ledger.open(path: Self.spoolPath(world, "bench-n"), readOnly: true).runs().first?.key)

        try down.cluster.start()
        let online = try world.provision(devices: "sim:0", profile: profile)
        #expect(online.status == 0, "\(online.standardOutput)\n\(online.standardError)")
        #expect(online.standardOutput.contains("Sent 1 spooled run"), "\(online.standardOutput)")
        #expect(!online.standardError.contains("no fleet-wide device lock"), "the online run said it spools")
        let shared = try PostgresLedger.open(down.uri, station: "auditor")
        let runs = try shared.runs()
        #expect(runs.count == 2 && runs.last?.key == spooledKey)
        // The Grokker was flashed once, by the spooled run; the online run found it done.
        let steps = try shared.steps()
        let changes = steps.filter { ["provision", "region", "firmware"].contains($0.step) && $0.result == .done }
        #expect(changes.count == 3 && changes.allSatisfy { $0.run == runs.last?.id }, "\(Self.stepKeys(steps))")
    }

    @Test("a rollout refuses offline even with spool, saying its halt rule needs the fleet; no Grokker is touched")
    func rolloutRefusesOffline() throws {
        let down = try DownDatabase()
        let world = try FleetWorld(devices: 1)
        let before = world.deviceBytes(1)
        let profile = try Self.profile(world, station: ["name": "bench-o", "ledger": down.uri, "offline": "spool"],
                                       extra: ["rollout": ["id": "offline-test", "percentage": 100]])
        let result = try world.run(["rollout", "--profile", profile, "--device", "sim:0"] + world.common)
        #expect(result.status == 1, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardError.contains("A rollout does not record into the spool"), "\(result.standardError)")
        #expect(world.deviceBytes(1) == before, "a Grokker was touched")
        #expect(!FileManager.default.fileExists(atPath: Self.spoolPath(world, "bench-o")))
        // In the technician's language.
        let german = try world.run(["rollout", "--profile", profile, "--device", "sim:0", "--lang", "de"] + world.common)
        #expect(german.status == 1 && german.standardError.contains("Ein Rollout schreibt nie in das lokale Journal"), "\(german.standardError)")
    }

    @Test("'ledger sync' to a ledger that is not a shared database is refused naming it; with no spool it says so and sends nothing")
    func syncRefusalsAndNoSpool() throws {
        let state = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let environment = ["XDG_STATE_HOME": state, "HOME": state]
        let file = runInProcess(["ledger", "sync", "--ledger", state + "/ledger.sqlite"], environment: environment)
        #expect(file.status == 1 && file.standardError.contains("is not a shared ledger") && file.standardError.contains(state + "/ledger.sqlite"),
                "\(file.standardError)")
        let json = runInProcess(["ledger", "sync", "--ledger", state + "/ledger.sqlite", "--json"], environment: environment)
        #expect(json.standardError.contains("\"ledger_sync_not_shared\""), "\(json.standardError)")
        let cluster = PostgresCluster.shared
        let uri = cluster.uri(try cluster.newDatabase("nospool"))
        let none = runInProcess(["ledger", "sync", "--ledger", uri], environment: environment)
        #expect(none.status == 0 && none.standardOutput.contains("There is no spool at '\(state)/grokctl/spool'"), "\(none.standardOutput)\(none.standardError)")
        #expect(try PostgresLedger.open(uri, station: "auditor").runs().isEmpty)
    }

    @Test("the ledger is --ledger, else GROKCTL_LEDGER, else the profile's station.ledger; the station --station, else the profile's station.name")
    func precedence() throws {
        let world = try FleetWorld(devices: 1)
        let fromProfile = world.root + "/profile-ledger.sqlite", fromEnvironment = world.root + "/environment-ledger.sqlite"
        let fromOption = world.root + "/option-ledger.sqlite"
        let profile = try Self.profile(world, station: ["name": "bench-p", "ledger": fromProfile])
        func runs(_ path: String) throws -> [RunRecord] {
            FileManager.default.fileExists(atPath: path) ? try Ledger.open(path: path, readOnly: true).runs() : []
        }
        let byProfile = try world.provision(devices: "sim:0", profile: profile)
        #expect(byProfile.status == 0, "\(byProfile.standardOutput)\n\(byProfile.standardError)")
        #expect(try runs(fromProfile).map(\.station) == ["bench-p"])
        #expect(!FileManager.default.fileExists(atPath: world.ledger), "the default ledger was used")

        let job = ["provision", "--profile", profile, "--device", "sim:0", "--unattended"] + world.common
        var environment = world.environment
        environment["GROKCTL_LEDGER"] = fromEnvironment
        let byEnvironment = try runBinary(job + ["--station", "bench-o"], environment: environment, input: nil)
        #expect(byEnvironment.status == 0, "\(byEnvironment.standardOutput)\n\(byEnvironment.standardError)")
        #expect(try runs(fromEnvironment).map(\.station) == ["bench-o"])
        #expect(try runs(fromProfile).count == 1)

        let byOption = try runBinary(job + ["--ledger", fromOption], environment: environment, input: nil)
        #expect(byOption.status == 0, "\(byOption.standardOutput)\n\(byOption.standardError)")
        #expect(try runs(fromOption).map(\.station) == ["bench-p"])
        #expect(try runs(fromEnvironment).count == 1 && runs(fromProfile).count == 1)
    }
}
