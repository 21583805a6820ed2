import Foundation
import GrokFleet
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("locate")
    struct LocateCommandTests {
        /// The readings themselves are DeviceJobTests' (GrokFleetTests); here, the lines.
        @Test("a tag never heard: a line per interval, then 'not heard' in the user's language, exit 1; --json lines")
        func neverHeard() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            try setRegion("fcc", bench: bench, devices: [.emulated(index: 0)])
            let missing = try runBinary(["--bench", bench, "--lang", "es", "locate", "000000000000000000000001",
                                         "--device", "sim:0", "--duration", "1"])
            #expect(missing.status == 1)
            #expect(missing.standardOutput.contains("no se oye"))
            #expect(missing.standardOutput.contains("··········"))
            let json = try runBinary(["--bench", bench, "--json", "locate", "000000000000000000000001", "--device", "sim:0",
                                      "--duration", "1"])
            #expect(json.status == 1)
            let readings = try jsonObjects(json.standardOutput)
            #expect(readings.count == 2)
            #expect(readings.allSatisfy { $0["proximity"] as? Double == 0 && $0["reads"] as? Int == 0 && $0["rssi"] == nil })
            #expect(readings.map { $0["time_s"] as? Double } == [0.5, 1])
        }
    }
}
