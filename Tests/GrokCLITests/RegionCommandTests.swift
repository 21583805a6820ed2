import Foundation
import GrokProtocol
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("region")
    struct RegionCommandTests {
        @Test("region list names all 22 in each language", arguments: Language.allCases)
        func list(language: Language) throws {
            let result = try runBinary(["--lang", language.rawValue, "region", "list"])
            #expect(result.status == 0)
            let lines = result.standardOutput.split(separator: "\n")
            #expect(lines.count == 23)
            #expect(lines[0].hasPrefix(text(.regionColumnNumber, language)))
            #expect(lines[2].contains(text(.regionEtsi, language)))
            #expect(lines[22].contains("singapore"))
        }

        @Test("region list --json gives codes and vendor names")
        func listJSON() throws {
            let objects = try jsonObjects(try runBinary(["--json", "region", "list"]).standardOutput)
            #expect(objects.count == 22)
            #expect(objects[0]["code"] as? String == "fcc")
            #expect(objects[0]["name"] as? String == "FCC (US), IC (Canada)")
            #expect(objects[21]["number"] as? Int == 22)
        }

        /// That the Grokkers change is DeviceJobTests' (GrokFleetTests); here, what it says.
        @Test("region set says what it set on each Grokker, in the user's language; --json gives the serial")
        func set() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            let result = try runBinary(["--bench", bench, "--lang", "de", "region", "set", "etsi", "--device", "sim:0-1"])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.contains(text(.regionSetDone, .de, "sim:0", text(.regionEtsi, .de))))
            #expect(result.standardOutput.contains(text(.regionSetDone, .de, "sim:1", text(.regionEtsi, .de))))
            let json = try jsonObjects(try runBinary(["--bench", bench, "--json", "region", "set", "etsi", "--device", "sim:0"]).standardOutput)
            #expect(json.count == 1)
            #expect(json.first?["status"] as? String == "ok" && json.first?["region_code"] as? String == "etsi")
            #expect(json.first?["region_name"] as? String == "ETSI (EU)" && (json.first?["serial"] as? String)?.count == 8)
        }

        @Test("an unknown region is a usage error and touches nothing")
        func invalid() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            let result = try runBinary(["--bench", bench, "--lang", "fr", "region", "set", "atlantis", "--device", "sim:0"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("atlantis"))
            #expect(!FileManager.default.fileExists(atPath: bench + "/sim-0"))
        }
    }
}
