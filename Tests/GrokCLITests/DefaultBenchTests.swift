import Foundation
import GrokkerEmulator
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The default bench (`sim:N` with no scene of its own) holds what the shipped profiles and
/// the README expect: their Fleet and locate commands work on a bench nobody set up.
@Suite("The default bench")
struct DefaultBenchTests {
    /// Runs grokctl in the checkout (the README's commands name `profiles/...` from there)
    /// with a fresh home and state directory.
    static func readme(_ arguments: [String], home: String) throws -> RunResult {
        let process = Process()
        process.executableURL = try grokctlExecutable()
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: FlashTerminalTests.root)
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": home, "XDG_STATE_HOME": home + "/state",
                               "XDG_CONFIG_HOME": home + "/config", "LANG": "C.UTF-8"]
        let out = home + "/out-\(UUID().uuidString)", err = home + "/err-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return RunResult(status: process.terminationStatus, standardOutput: try String(contentsOfFile: out, encoding: .utf8),
                         standardError: try String(contentsOfFile: err, encoding: .utf8))
    }

    /// The README's `$R`: the shipped demo channel.
    static let repository = ["--repository", "file://" + FlashTerminalTests.root + "/firmware/demo-channel",
                             "--trusted-root", "firmware/demo-channel/root.json"]

    @Test("README's Fleet commands on a fresh default bench: provision, its dry run, verify, the ledger")
    func fleetCommands() throws {
        let home = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let plan = try Self.readme(["provision", "--profile", "profiles/bench-us.json", "--device", "sim:0-3", "--dry-run"]
                                   + Self.repository, home: home)
        #expect(plan.status == 0, "\(plan.standardOutput)\(plan.standardError)")
        let run = try Self.readme(["provision", "--profile", "profiles/bench-us.json", "--device", "sim:0-3"] + Self.repository,
                                  home: home)
        // Before: every smoke test missed the reference tags (only the demo scene had them), nothing was flashed, exit 1.
        #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        #expect(run.standardOutput.components(separatedBy: "final smoke test — done").count - 1 == 4, "\(run.standardOutput)")
        let verify = try Self.readme(["verify", "--profile", "profiles/verify-us.json", "--device", "sim:0-3"] + Self.repository,
                                     home: home)
        #expect(verify.status == 0, "\(verify.standardOutput)\(verify.standardError)")
        let ledger = try Self.readme(["ledger", "show"], home: home)
        #expect(ledger.status == 0 && ledger.standardOutput.contains("(2)"), "\(ledger.standardOutput)\(ledger.standardError)")
        let export = try Self.readme(["ledger", "export", "--csv", "--output", home + "/steps.csv"], home: home)
        #expect(export.status == 0, "\(export.standardError)")
        #expect(((try? String(contentsOfFile: home + "/steps.csv", encoding: .utf8)) ?? "").contains("smoke_test"))
    }

    @Test("README's locate 3074257BF7194E4000001A85 finds its tag on the default bench")
    func locateTheReadmeTag() throws {
        let home = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        #expect(try Self.readme(["region", "set", "etsi", "--device", "sim:0"], home: home).status == 0)
        let found = try Self.readme(["--json", "locate", "3074257BF7194E4000001A85", "--device", "sim:0", "--duration", "2"],
                                    home: home)
        #expect(found.status == 0, "\(found.standardOutput)\(found.standardError)")
        let reads = jsonLines(found.standardOutput).compactMap { $0["reads"] as? Int }.reduce(0, +)
        #expect(reads > 0, "\(found.standardOutput)")
    }

    @Test("the default bench is the standard bench, then the shipped profiles' reference tags and the README's example tag")
    func sceneContents() throws {
        let scene = RFScene.defaultBench(seed: 12_345)
        let standard = RFScene.standardBench(seed: 12_345)
        #expect(Array(scene.tags.prefix(standard.tags.count)) == standard.tags)
        let hex = Set(scene.tags.map { $0.epc.map { String(format: "%02X", $0) }.joined() })
        for profile in ["bench-us", "verify-us"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: FlashTerminalTests.root + "/profiles/\(profile).json"))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let smoke = try #require(object["smoke_test"] as? [String: Any])
            let wanted = try #require(smoke["reference_tags"] as? [String])
            #expect(!wanted.isEmpty && wanted.allSatisfy(hex.contains), "\(profile): \(wanted)")
        }
        #expect(hex.contains("3074257BF7194E4000001A85"))
    }
}
