import Foundation
import GrokCrypto
import GrokTestSupport
import GrokBasics
import GrokFirmware
import GrokkerEmulator
import GrokLedger
import GrokTUF
import Testing

@testable import GrokFleet

/// A station made at test time for a ``FleetSession``: a bench of out-of-the-box emulated
/// Grokkers holding the demo scene, the shipped demo channel (a file:// TUF repository) with
/// a fresh TUF state directory, and a state directory (ledger, spool, locks, reports).
final class SessionStation {
    let root: String
    var bench: String { root + "/bench" }
    var state: String { root + "/state" }
    var ledger: String { state + "/ledger.sqlite" }
    var reports: String { state + "/reports" }
    static let profile = repositoryRoot + "/profiles/bench-us.json"
    static let referenceTags = ["3034257BF4789000000003E8", "3034257BF4DA1C00000003EF", "3034257BF4789040000003ED"]

    init(devices: Int) throws {
        root = TemporaryDirectory.untilExit("fleet-session")
        for n in 0..<devices {
            try FileManager.default.createDirectory(atPath: bench + "/sim-\(n)", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: repositoryRoot + "/profiles/scenes/demo.json", toPath: bench + "/sim-\(n)/scene.json")
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func configuration(_ mode: FleetMode = .provision, devices: [DeviceSpec], reportFile: String? = nil,
                       dryRun: Bool = false) -> FleetSession.Configuration {
        let channel = repositoryRoot + "/firmware/demo-channel"
        let repository = StationRepository(stateDirectory: root + "/tuf-state", trustedRootFile: channel + "/root.json",
                                           repositoryURL: "file://" + channel, fetcher: LocalFileFetcher())
        return FleetSession.Configuration(
            mode: mode, profileFile: Self.profile, devices: devices,
            ports: DevicePortContext(bench: Bench(directory: bench), lockDirectory: state + "/locks"),
            station: "bench-test", operatorName: "tester", defaultLedger: ledger, spoolDirectory: state + "/spool",
            lockDirectory: state + "/locks", reportFile: reportFile, reportsDirectory: reports, dryRun: dryRun,
            repository: repository)
    }

    /// The bytes of each unit's state file (`nil`: the unit was never opened).
    func deviceBytes(_ count: Int) -> [Data?] {
        (0..<count).map { FileManager.default.contents(atPath: bench + "/sim-\($0)/state.json") }
    }
}

/// What can be known to fail is found before the first unit is touched.
@Suite("Fleet session: preflight")
struct FleetSessionPreflightTests {
    @Test("a bench unit whose scene lacks the smoke test's reference tags stops the run before any unit is changed")
    func sceneWithoutReferenceTags() async throws {
        let station = try SessionStation(devices: 2)
        // sim:1's scene file lacks the reference tags (the demo scene without them).
        let scenePath = station.bench + "/sim-1/scene.json"
        var scene = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scenePath))) as? [String: Any])
        let references = Set(SessionStation.referenceTags)
        scene["tags"] = (scene["tags"] as? [[String: Any]] ?? []).filter { !references.contains($0["epc"] as? String ?? "") }
        try JSONSerialization.data(withJSONObject: scene).write(to: URL(fileURLWithPath: scenePath))
        let before = station.deviceBytes(2)
        let session = try FleetSession(station.configuration(devices: [.emulated(index: 0), .emulated(index: 1)]))
        await #expect(throws: FleetError.sceneLacksReferenceTags(device: "sim:1", scene: scenePath, missing: SessionStation.referenceTags)) {
            _ = try await session.prepare()
        }
        // Neither unit was touched (sim:0 was fine, but nothing starts), nothing recorded.
        #expect(station.deviceBytes(2) == before)
        #expect(!FileManager.default.fileExists(atPath: station.ledger))
    }

    @Test("an unwritable report stops the run before any unit is changed, naming the report and the system's code")
    func unwritableReport() async throws {
        let station = try SessionStation(devices: 1)
        let before = station.deviceBytes(1)
        // A folder under a file can never be made, whoever runs the test: the station's
        // reports folder (made when missing) is one here.
        var configuration = station.configuration(devices: [.emulated(index: 0)])
        configuration.reportsDirectory = "/dev/null/reports"
        let report = "/dev/null/reports/preflight.json"
        let session = try FleetSession(configuration)
        await #expect(throws: FleetError.reportNotWritable(path: report, detail: "ENOTDIR")) { _ = try await session.prepare() }
        #expect(FleetError.reportNotWritable(path: report, detail: "ENOTDIR").englishMessage.contains("--report"))
        #expect(station.deviceBytes(1) == before)
        #expect(!FileManager.default.fileExists(atPath: station.ledger))
    }

    @Test("a --report in a folder that does not exist is refused naming the folder, which is not made")
    func reportInAMissingFolder() async throws {
        let station = try SessionStation(devices: 1)
        let folder = station.bench + "-nonexistent/dir"
        let session = try FleetSession(station.configuration(devices: [.emulated(index: 0)], reportFile: folder + "/r.json"))
        await #expect(throws: FleetError.reportDirectoryMissing(path: folder + "/r.json", directory: folder)) { _ = try await session.prepare() }
        #expect(!FileManager.default.fileExists(atPath: station.bench + "-nonexistent"))
        #expect(!FileManager.default.fileExists(atPath: station.ledger))
    }

    @Test("a run without devices named takes every emulated Grokker on the bench; an empty bench is refused, naming it")
    func devicesFromTheBench() async throws {
        let station = try SessionStation(devices: 2)
        let session = try FleetSession(station.configuration(devices: [], dryRun: true))
        #expect(try session.deviceSpecs() == [.emulated(index: 0), .emulated(index: 1)])
        let empty = try SessionStation(devices: 0)
        let none = try FleetSession(empty.configuration(devices: []))
        #expect(throws: FleetError.noDevices(bench: empty.bench)) { _ = try none.deviceSpecs() }
    }
}

@Suite("Fleet session: run and report")
struct FleetSessionRunTests {
    @Test("a provision run hands every unit's events to the caller, writes the report file and records its path in the ledger")
    func provisionWritesTheReport() async throws {
        let station = try SessionStation(devices: 2)
        let session = try FleetSession(station.configuration(devices: [.emulated(index: 0), .emulated(index: 1)]))
        let prepared = try await session.prepare()
        #expect(prepared.ledger != nil && prepared.history == nil)
        var events: [FleetEvent] = []
        let outcome = try session.run(prepared, decider: prepared.policy) { event in
            if case .fleet(let event) = event { events.append(event) }
        }
        #expect(outcome.report.outcome == .succeeded, "\(outcome.report.devices.map { ($0.code, $0.arguments) })")
        #expect(Set(events.filter { $0.event == "device_finished" }.map(\.device)) == ["sim:0", "sim:1"])
        let path = try #require(outcome.reportPath)
        #expect(path == station.reports + "/" + outcome.report.runID + ".json")
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(file["run_id"] as? String == outcome.report.runID)
        #expect(file["station"] as? String == "bench-test" && file["operator"] as? String == "tester")
        #expect(outcome.reportFailure == nil && outcome.ledgerFailure == nil && outcome.reportText == nil)
        let ledger = try Ledger.open(path: station.ledger, readOnly: true)
        #expect(try ledger.run(key: outcome.report.runID)?.reportPath == path)
    }

    @Test("a report to the caller ('-') is handed over as text, no file is written and the ledger records no report path")
    func reportToTheCaller() async throws {
        let station = try SessionStation(devices: 1)
        let session = try FleetSession(station.configuration(devices: [.emulated(index: 0)], reportFile: "-"))
        let prepared = try await session.prepare()
        let outcome = try session.run(prepared, decider: prepared.policy) { _ in }
        #expect(outcome.reportPath == nil)
        let text = try #require(outcome.reportText)
        #expect(text.hasSuffix("}\n") && text.contains("\"format\" : \"grokctl-fleet-report\""))
        #expect(!FileManager.default.fileExists(atPath: station.reports))
        let ledger = try Ledger.open(path: station.ledger, readOnly: true)
        #expect(try ledger.run(key: outcome.report.runID)?.reportPath == nil)
    }

    @Test("a dry run plans every unit from what it reads and records nothing; it names the images a run would fetch and fetches none")
    func dryRunPlansOnly() async throws {
        let station = try SessionStation(devices: 2)
        let session = try FleetSession(station.configuration(devices: [.emulated(index: 0), .emulated(index: 1)], dryRun: true))
        let prepared = try await session.prepare()
        #expect(prepared.ledger == nil)
        // The profile targets the newest release: the run would fetch it; the dry run did not.
        #expect(prepared.prefetched.isEmpty && prepared.wouldFetch == ["GR-1_1-8-0_demo.ugif"], "\(prepared.wouldFetch)")
        // The state directory holds what TUF verified, by SHA-256: the region catalogue the plan
        // reads, and no firmware image.
        let images = (try? FileManager.default.contentsOfDirectory(atPath: station.root + "/tuf-state/images")) ?? []
        let digests = try #require(prepared.firmware).listings.map { $0.sha256.hex.lowercased() }
        #expect(!digests.isEmpty && images.allSatisfy { !digests.contains($0) }, "\(images)")
        let plans = session.plan(prepared, interactive: false)
        #expect(plans.map(\.device) == ["sim:0", "sim:1"])
        #expect(plans.allSatisfy { $0.error == nil && $0.steps.contains { $0.step == .region && $0.action == .run } })
        #expect(!FileManager.default.fileExists(atPath: station.ledger))
    }
}
