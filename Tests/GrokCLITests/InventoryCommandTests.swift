import Foundation
import Testing

@testable import GrokCLI

extension CLI {
    @Suite("inventory")
    struct InventoryCommandTests {
        @Test("a Grokker without a region refuses, in the user's language; with one it lists its tags")
        func inventory() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            let refused = try runBinary(["--bench", bench, "--lang", "fr", "inventory", "--device", "sim:0", "--duration", "1"])
            #expect(refused.status == 1)
            #expect(refused.standardOutput.contains("grokctl region set"))
            #expect(refused.standardOutput.contains("n’a pas encore de région"))
            #expect(try runBinary(["--bench", bench, "region", "set", "fcc", "--device", "sim:0"]).status == 0)
            let result = try runBinary(["--bench", bench, "--json", "inventory", "--device", "sim:0", "--duration", "2"])
            #expect(result.status == 0, "\(result.standardError)")
            let lines = try jsonObjects(result.standardOutput)
            let summary = try #require(lines.last?["summary"] as? [String: Any])
            // The default bench: 24 of the standard bench in reach, the shipped profiles' 3 reference tags, the README's example tag.
            #expect(summary["tags"] as? Int == 28)
            #expect(summary["status"] as? String == "ok")
            let tags = lines.dropLast()
            #expect(tags.count == 28)
            #expect(tags.allSatisfy { ($0["uri"] as? String)?.hasPrefix("urn:epc:tag:sgtin-96:") == true })
            #expect(tags.allSatisfy { ($0["reads"] as? Int ?? 0) > 0 })
        }

        @Test("bad durations and types are usage errors", arguments: [
            ["--duration", "0"], ["--duration", "soon"], ["--type", "everything"],
        ])
        func badOptions(_ options: [String]) throws {
            let result = try runBinary(["inventory", "--device", "sim:0"] + options)
            #expect(result.status == 64)
        }
    }
}
