import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// A station's settings through the binary: `station init` writes them, the firmware
/// commands use them, `paths` shows where each came from (docs/cli.md, "Station settings").
@Suite("Station settings from the command line")
struct StationCommandTests {
    @Test("no repository anywhere: a usage error naming both ways; after 'station init --repository demo' firmware list works; paths shows each source, the ledger's password masked")
    func initThenUse() throws {
        let home = try makeTemporaryDirectory()
        let environment = ["HOME": home, "XDG_STATE_HOME": home + "/state"]
        let settings = home + "/.config/grokctl/station.json"

        let none = try runBinary(["--lang", "de", "firmware", "list"], environment: environment)
        #expect(none.status == 64, "\(none.standardError)")
        #expect(none.standardError.contains(text(.errorUsageNoRepository, .de, settings)), "\(none.standardError)")
        #expect(!none.standardError.contains("--repository' fehlt") && !none.standardError.contains("Missing expected option"))

        let written = try runBinary(["station", "init", "--repository", "demo", "--ledger", "postgresql://station:s3cret@db.example/fleet",
                                     "--name", "bench-3"], environment: environment)
        #expect(written.status == 0 && written.standardOutput.contains(text(.stationWritten, .en, settings)), "\(written.standardError)")
        let again = try runBinary(["station", "init", "--name", "x"], environment: environment)
        #expect(again.status == 1 && again.standardError.contains(settings), "\(again.standardError)")

        let list = try runBinary(["firmware", "list", "--state", home + "/tuf", "--json"], environment: environment)
        #expect(list.status == 0, "\(list.standardError)")
        #expect(list.standardOutput.contains("GR-1_1-8-0_demo.ugif"), "\(list.standardOutput)")

        let paths = try runBinary(["paths", "--json"], environment: environment)
        let listing = try JSONDecoder().decode(CLI.InstallPathsTests.Listing.self, from: Data(paths.standardOutput.utf8))
        let lines = Dictionary(uniqueKeysWithValues: listing.paths.map { ($0.name, $0) })
        #expect(lines["repository"]?.path == "demo" && lines["repository"]?.source == "user_settings")
        #expect(lines["station"]?.path == "bench-3" && lines["station"]?.source == "user_settings")
        #expect(lines["ledger"]?.path == "postgresql://station:***@db.example/fleet" && lines["ledger"]?.source == "user_settings")
        #expect(lines["trusted_root"]?.path?.hasSuffix("/firmware/demo-channel/root.json") == true, "\(paths.standardOutput)")
        #expect(lines["user_station_settings"]?.path == settings && lines["user_station_settings"]?.exists == true)
        #expect(!paths.standardOutput.contains("s3cret"))
    }
}

extension StationCommandTests {
    @Test("a broken station.json is one failure, exit 1, naming the file, whichever command reads it (a profile's name looked up was a usage error, 64)")
    func brokenSettingsOneExitCode() throws {
        let home = try makeTemporaryDirectory()
        let environment = ["HOME": home, "XDG_STATE_HOME": home + "/state"]
        let settings = home + "/.config/grokctl/station.json"
        try FileManager.default.createDirectory(atPath: home + "/.config/grokctl", withIntermediateDirectories: true)
        try Data(#"{"repository": "demo",}"#.utf8).write(to: URL(fileURLWithPath: settings))
        for arguments in [["provision", "--profile", "bench-us", "--device", "sim:0", "--dry-run"], ["firmware", "list"],
                          ["ledger", "show"], ["paths"]] {
            let result = try runBinary(arguments, environment: environment)
            #expect(result.status == 1, "\(arguments): \(result.status) \(result.standardError)")
            #expect(result.standardError.contains(settings) && !result.standardError.contains("Usage:"), "\(arguments): \(result.standardError)")
        }
    }
}
