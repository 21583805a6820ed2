import Foundation
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// What can be known to fail is found before the first unit is touched; the preflight's own
/// refusals are tested against the library (GrokFleetTests, "Fleet session: preflight"), the
/// exit code of a wrong profile here.
@Suite("Preflight")
struct PreflightTests {
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
