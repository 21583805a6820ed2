import Foundation
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Testing

@testable import GrokCLI

/// What can be known to fail is found before the first unit is touched.
@Suite("Preflight")
struct PreflightTests {
    static let referenceTags = "3034257BF4789000000003E8 3034257BF4DA1C00000003EF 3034257BF4789040000003ED"

    @Test("a bench unit whose scene lacks the smoke test's reference tags stops the run before any unit is changed")
    func sceneWithoutReferenceTags() throws {
        let world = try FleetWorld(devices: 2)
        // sim:1's scene file lacks the reference tags (the demo scene without them).
        let scenePath = world.bench + "/sim-1/scene.json"
        var sceneJSON = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scenePath))) as? [String: Any])
        let references = Set(Self.referenceTags.split(separator: " ").map(String.init))
        sceneJSON["tags"] = (sceneJSON["tags"] as? [[String: Any]] ?? []).filter { !references.contains($0["epc"] as? String ?? "") }
        try JSONSerialization.data(withJSONObject: sceneJSON).write(to: URL(fileURLWithPath: scenePath))
        let before = world.deviceBytes(2)
        let result = try world.provision(devices: "sim:0-1")
        #expect(result.status == 1, "\(result.standardOutput)\n\(result.standardError)")
        let scene = world.bench + "/sim-1/scene.json"
        #expect(result.standardError.contains(text(.errorFleetSceneLacksReferenceTags, .en, "sim:1", scene, Self.referenceTags)),
                "\(result.standardError)")
        // Neither unit was touched (sim:0 was fine, but nothing starts), nothing recorded.
        #expect(world.deviceBytes(2) == before)
        #expect(!FileManager.default.fileExists(atPath: world.ledger))
    }

    @Test("an unwritable --report stops the run before any unit is changed")
    func unwritableReport() throws {
        let world = try FleetWorld(devices: 1)
        let before = world.deviceBytes(1)
        // A folder under a file can never be made, whoever runs the test.
        let report = "/dev/null/reports/run.json"
        let result = try world.provision(["--report", report], devices: "sim:0")
        #expect(result.status == 1, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardError.contains(report) && result.standardError.contains("--report"), "\(result.standardError)")
        #expect(!result.standardOutput.contains(text(.fleetReportWritten, .en, report)))
        #expect(world.deviceBytes(1) == before)
    }

    @Test("a profile that is there but wrong is a usage error: exit 64, naming the key, nothing started")
    func badProfileIs64() throws {
        let world = try FleetWorld(devices: 1)
        var profile = try String(contentsOfFile: FleetWorld.profile, encoding: .utf8)
        profile = profile.replacingOccurrences(of: "\"minimum_battery_percent\": 30", with: "\"minimum_battery_percent\": \"thirty\"")
        let file = world.root + "/bad.json"
        try profile.write(toFile: file, atomically: true, encoding: .utf8)
        let before = world.deviceBytes(1)
        let result = try world.provision(devices: "sim:0", profile: file)
        #expect(result.status == 64, "\(result.standardError)")
        #expect(result.standardError.contains("minimum_battery_percent"), "\(result.standardError)")
        #expect(world.deviceBytes(1) == before)
    }
}
