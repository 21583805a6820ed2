import Foundation
import GrokLedger
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// `-` for standard output where a command writes a file, declared once on the option's
/// type (`ValueType.outputFile`), so help and man pages say so.
@Suite("'-' for standard output")
struct DashForStandardStreamsTests {
    @Test("--report - prints the run's report on standard output, after everything else; no report file, no report_path")
    func reportToStandardOutput() throws {
        let world = try FleetWorld(devices: 1)
        let result = try world.provision(["--report", "-"], devices: "sim:0")
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "{"), "\(result.standardOutput)")
        let json = lines[start...].joined(separator: "\n")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
        #expect(report["format"] as? String == "grokctl-fleet-report")
        #expect(report["outcome"] as? String == "succeeded")
        #expect(!FileManager.default.fileExists(atPath: world.root + "/-"))
        #expect(!result.standardOutput.contains(text(.fleetReportWritten, .en, "-")))
        let run = try #require(try Ledger.open(path: world.ledger).runs().first)
        #expect(run.reportPath == nil)
        // The run's plain-text log has no report file to sit beside: it is in the state
        // directory's reports, named by the run, and the summary names it.
        let log = world.state + "/grokctl/reports/" + run.key + ".log"
        #expect(result.standardOutput.contains(text(.fleetLogWritten, .en, log)), "\(result.standardOutput)")
        let logged = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let stamp = ISO8601DateFormatter()
        stamp.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // Every line stamped with the UTC time; the steps and the run's summary line as shown (never a bar).
        #expect(logged.allSatisfy { stamp.date(from: String($0.prefix(24))) != nil && $0.dropFirst(24).hasPrefix("  ") }, "\(logged)")
        let smokeTest = text(.fleetStepLine, .en, "sim:0", text(.fleetStepSmokeTest, .en), text(.fleetResultDone, .en), "")
        #expect(logged.contains { $0.contains(smokeTest) }, "\(logged)")
        #expect(logged.contains { $0.contains(run.key) }, "\(logged)")
    }

    @Test("help and the man page say what '-' means for --report and ledger export --output, in the user's language")
    func helpSaysIt() throws {
        for (command, language) in [(["provision"], Language.en), (["ledger", "export"], .de)] {
            let help = runInProcess(command + ["--help", "--lang", language.rawValue])
            #expect(collapsed(help.standardOutput).contains(text(.helpDashStandardOutput, language)), "\(help.standardOutput)")
            let man = runInProcess(["man"] + command + ["--lang", language.rawValue])
            #expect(man.standardOutput.contains(ManPages.escape(text(.helpDashStandardOutput, language))), "\(man.standardOutput)")
        }
    }
}
