import Foundation
import GrokFleet
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("inventory")
    struct InventoryCommandTests {
        /// What the inventory finds is DeviceJobTests' (GrokFleetTests); here, the refusal in the
        /// user's language and the `--json` lines.
        @Test("a Grokker without a region refuses, in the user's language (exit 1); with one, --json lists its tags then a summary, the table their tag URIs")
        func inventory() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            let refused = try runBinary(["--bench", bench, "--lang", "fr", "inventory", "--device", "sim:0", "--duration", "1"])
            #expect(refused.status == 1)
            #expect(refused.standardOutput.contains("grokctl region set"))
            #expect(refused.standardOutput.contains("n’a pas encore de région"))
            try setRegion("fcc", bench: bench, devices: [.emulated(index: 0)])
            let result = try runBinary(["--bench", bench, "--json", "inventory", "--device", "sim:0", "--duration", "1"])
            #expect(result.status == 0, "\(result.standardError)")
            let lines = try jsonObjects(result.standardOutput)
            let summary = try #require(lines.last?["summary"] as? [String: Any])
            let tags = lines.dropLast()
            #expect(summary["status"] as? String == "ok" && summary["device"] as? String == "sim:0")
            #expect(summary["tags"] as? Int == tags.count && !tags.isEmpty)
            // The seconds the inventory ran on the audio clock (start to the reader's completion),
            // and every tag first seen within them (docs/cli.md).
            let seconds = try #require(summary["seconds"] as? Double)
            #expect(seconds >= 1 && seconds < 2 && (summary["reads"] as? Int ?? 0) >= tags.count, "\(seconds)")
            #expect(tags.allSatisfy { ($0["first_seen_s"] as? Double ?? 99) <= seconds }, "\(tags.map { $0["first_seen_s"] ?? "-" })")
            #expect(tags.allSatisfy { $0["device"] as? String == "sim:0" && ($0["epc"] as? String)?.count == 24 })
            #expect(tags.allSatisfy { ($0["uri"] as? String)?.hasPrefix("urn:epc:tag:sgtin-96:") == true })
            #expect(tags.allSatisfy { ($0["reads"] as? Int ?? 0) > 0 && $0["rssi_dbm"] as? Double != nil && $0["first_seen_s"] as? Double != nil })
            // The reader's RSSI in dBm (its scale runs -90 to -30 dBm), not one constant for
            // every tag of the bench (tags from 0.3 m to several metres).
            let rssi = tags.compactMap { $0["rssi_dbm"] as? Double }
            #expect(rssi.allSatisfy { $0 >= -90 && $0 <= -30 } && Set(rssi).count > 2, "\(rssi)")
            // The table shows each tag's EPC tag URI too.
            let german = try runBinary(["--bench", bench, "--lang", "de", "inventory", "--device", "sim:0", "--duration", "0.3"])
            #expect(german.status == 0 && german.standardOutput.contains("Tag-URI"), "\(german.standardOutput)")
            #expect(german.standardOutput.contains("urn:epc:tag:sgtin-96:"), "\(german.standardOutput)")
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
