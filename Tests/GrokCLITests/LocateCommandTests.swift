import Foundation
import Testing

@testable import GrokCLI

extension CLI {
    @Suite("locate")
    struct LocateCommandTests {
        static let demoScene = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("profiles/scenes/demo.json").path

        @Test("a tag walking towards the reader fills the bar; a tag never heard fails")
        func approaching() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            try FileManager.default.createDirectory(atPath: bench + "/sim-0", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Self.demoScene, toPath: bench + "/sim-0/scene.json")
            #expect(try runBinary(["--bench", bench, "region", "set", "fcc", "--device", "sim:0"]).status == 0)
            // The demo scene's moving tag comes from 5.5 m to 0.4 m over ten seconds.
            let result = try runBinary(["--bench", bench, "--json", "locate", "3034257BF4789000000003E7", "--device", "sim:0",
                                        "--duration", "6"])
            #expect(result.status == 0, "\(result.standardError)")
            let readings = try jsonObjects(result.standardOutput).compactMap { $0["proximity"] as? Double }
            #expect(readings.count == 12)
            #expect(readings.last! > readings.first! + 0.1)
            let missing = try runBinary(["--bench", bench, "--lang", "es", "locate", "000000000000000000000001",
                                         "--device", "sim:0", "--duration", "1"])
            #expect(missing.status == 1)
            #expect(missing.standardOutput.contains("no se oye"))
        }
    }
}
