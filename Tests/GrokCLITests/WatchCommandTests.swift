import Foundation
import GrokBasics
import GrokFleet
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// `provision --watch` as the binary runs it: a SIGTERM ends the session with its summary
/// (the tally's plurals in the user's language), and `station status` follows the status file.
@Suite("provision --watch and station status")
struct WatchCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test("SIGTERM ends a watching station with its summary; station status sees it running, then gone with its last tally")
    func sigtermAndStatus() throws {
        let state = try makeTemporaryDirectory()
        let environment = ["PATH": "/usr/bin:/bin", "HOME": state, "XDG_STATE_HOME": state]
        let process = Process()
        process.executableURL = try grokctlExecutable()
        process.arguments = ["--lang", "de", "provision", "--watch", "--profile", Self.root + "/profiles/bench-us.json",
                             "--repository", "demo"]
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let statusFile = state + "/grokctl/watch/status.json"
        var waited = 0
        while !FileManager.default.fileExists(atPath: statusFile), waited < 600, process.isRunning {
            Thread.sleep(forTimeInterval: 0.05)
            waited += 1
        }
        let running = runInProcess(["--lang", "en", "station", "status"], environment: environment)
        kill(process.processIdentifier, SIGTERM)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(running.standardOutput.contains("Watch session running: process \(process.processIdentifier)"), "\(running)")
        #expect(running.standardOutput.contains("No Grokker plugged in."), "\(running)")
        // Nothing was plugged in: succeeded, exit 0, the tally in German.
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("0 eingerichtet · 0 bereits fertig · 0 fehlgeschlagen · 0 unterbrochen · 0 nicht fertig"), "\(text)")
        #expect(text.contains("Überwachungssitzung "), "\(text)")
        // How sound cards are heard, said once (which way depends on the machine: udev, inotify, polling).
        #expect(text.contains("Soundkarten: erkannt über ") || text.contains("Soundkarten: /proc/asound/cards wird"), "\(text)")
        let gone = runInProcess(["--lang", "en", "station", "status"], environment: environment)
        #expect(gone.standardOutput.hasPrefix("No watch session is running; the last one (run "), "\(gone)")
        #expect(gone.standardOutput.contains("0 provisioned · 0 already done"), "\(gone)")
    }

    @Test("provision needs --device or --watch, not both; a station takes no --report, --interactive or --dry-run")
    func deviceOrWatch() throws {
        let profile = Self.root + "/profiles/bench-us.json"
        let neither = runInProcess(["provision", "--profile", profile])
        #expect(neither.status == ExitCode.usageError.rawValue && neither.standardError.contains("--device"), "\(neither)")
        let both = runInProcess(["provision", "--profile", profile, "--watch", "--device", "sim:0"])
        #expect(both.status == ExitCode.usageError.rawValue && both.standardError.contains("--watch"), "\(both)")
        for extra in [["--report", "r.json"], ["--interactive"], ["--dry-run"]] {
            let refused = runInProcess(["provision", "--profile", profile, "--watch"] + extra)
            #expect(refused.status == ExitCode.usageError.rawValue && refused.standardError.contains(extra[0]), "\(refused)")
        }
        let none = runInProcess(["station", "status"], environment: ["HOME": try makeTemporaryDirectory()])
        #expect(none.standardOutput == "No watch session is running; none has run on this station.\n", "\(none)")
    }
}
