import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// A fleet profile's `"locale"` is the language of its run's output only where the user chose
/// none: `--lang` and a language the environment names outrank it (docs/profiles.md, "The
/// language of a run").
@Suite("The profile's locale")
struct ProfileLocaleTests {
    /// The shipped bench profile with `"locale": locale` (or none), written into the world.
    func profile(_ world: FleetWorld, locale: String?) throws -> String {
        var json = try String(contentsOfFile: FleetWorld.profile, encoding: .utf8)
        if let locale {
            json = json.replacingOccurrences(of: #""format": 1,"#, with: #""format": 1, "locale": "\#(locale)","#)
            #expect(json.contains(#""locale": "\#(locale)""#))
        }
        let file = world.root + "/locale-\(locale ?? "none").json"
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A dry run (nothing changed) with `environment` added and `extra` options; its output.
    func dryRun(_ world: FleetWorld, profile: String, environment: [String: String], extra: [String] = []) throws -> RunResult {
        try runBinary(["provision", "--profile", profile, "--device", "sim:0", "--dry-run"] + world.common + extra,
                      environment: world.environment.merging(environment) { $1 }, input: nil)
    }

    @Test("the user's language wins: LANG or --lang over a profile's locale, which applies under LANG=C or none")
    func precedence() throws {
        let world = try FleetWorld(devices: 1)
        let german = try profile(world, locale: "de")

        // An English (or French) technician's run of a German profile stays in their language.
        let byEnvironment = try dryRun(world, profile: german, environment: ["LANG": "fr_FR.UTF-8"])
        #expect(byEnvironment.status == 0, "\(byEnvironment.standardError)")
        #expect(byEnvironment.standardOutput.contains(text(.fleetPlanNothingDone, .fr)), "\(byEnvironment.standardOutput)")
        #expect(!byEnvironment.standardOutput.contains(text(.fleetPlanNothingDone, .de)), "\(byEnvironment.standardOutput)")
        let english = try dryRun(world, profile: german, environment: ["LANG": "en_US.UTF-8"])
        #expect(english.standardOutput.contains(text(.fleetPlanNothingDone, .en)), "\(english.standardOutput)")

        let byOption = try dryRun(world, profile: german, environment: ["LANG": "fr_FR.UTF-8"], extra: ["--lang", "es"])
        #expect(byOption.standardOutput.contains(text(.fleetPlanNothingDone, .es)), "\(byOption.standardOutput)")

        // No language chosen (C, or one grokctl does not speak): the profile's.
        let byProfile = try dryRun(world, profile: german, environment: ["LANG": "C.UTF-8"])
        #expect(byProfile.standardOutput.contains(text(.fleetPlanNothingDone, .de)), "\(byProfile.standardOutput)")
        let unsupported = try dryRun(world, profile: german, environment: ["LANG": "it_IT.UTF-8"])
        #expect(unsupported.standardOutput.contains(text(.fleetPlanNothingDone, .de)), "\(unsupported.standardOutput)")
    }
}
