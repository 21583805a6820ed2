import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// A profile file that is not there was named wrong on the command line: a usage error
/// (exit 64), with the message that names the file, in the user's language.
@Suite("A missing profile file")
struct MissingProfileTests {
    @Test("provision, rollout and verify with a profile file that does not exist exit 64 naming it, in the user's language",
          arguments: ["provision", "rollout", "verify"])
    func missingFileIsAUsageError(_ command: String) throws {
        let world = try FleetWorld(devices: 1)
        let missing = world.root + "/no-such-profile.json"
        let result = try world.run([command, "--profile", missing, "--device", "sim:0", "--lang", "de"] + world.common)
        #expect(result.status == 64, "\(result.standardError)")
        #expect(result.standardError.contains(text(.errorFleetProfileUnreadable, .de, missing, "no_such_file")), "\(result.standardError)")
        #expect(result.standardError.contains("keine solche Datei"), "\(result.standardError)")
        let json = try world.run([command, "--profile", missing, "--device", "sim:0", "--json"] + world.common)
        #expect(json.status == 64)
        #expect(json.standardError.contains(#""code":"fleet_profile_unreadable""#), "\(json.standardError)")
        // Nothing was started: no ledger.
        #expect(!FileManager.default.fileExists(atPath: world.ledger))
    }
}
