import Foundation
import GrokBasics
import GrokFleet
import GrokLedger
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// `provision --watch` as the binary runs it: a SIGTERM ends the session with its summary
/// (the tally's plurals in the user's language), and `station status` follows the status file.
@Suite("provision --watch and station status")
struct WatchCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The grokctl binary started with `arguments`, its stdout and stderr into one pipe.
    static func station(_ arguments: [String], environment: [String: String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = try grokctlExecutable()
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    @Test("SIGTERM ends a watching station with its summary; station status sees it running, then gone with its last tally")
    func sigtermAndStatus() throws {
        let state = try makeTemporaryDirectory()
        let environment = ["PATH": "/usr/bin:/bin", "HOME": state, "XDG_STATE_HOME": state]
        let (process, output) = try Self.station(["--lang", "de", "provision", "--watch", "--profile", Self.root + "/profiles/bench-us.json",
                                                  "--repository", "demo"], environment: environment)
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
        #expect(text.contains("0 eingerichtet · 0 bereits fertig · 0 geprüft · 0 fehlgeschlagen · 0 unterbrochen · 0 nicht fertig"), "\(text)")
        #expect(text.contains("Überwachungssitzung "), "\(text)")
        // How sound cards are heard, said once (which way depends on the machine: udev, inotify, polling).
        #expect(text.contains("Soundkarten: erkannt über ") || text.contains("Soundkarten: /proc/asound/cards wird"), "\(text)")
        let gone = runInProcess(["--lang", "en", "station", "status"], environment: environment)
        #expect(gone.standardOutput.hasPrefix("No watch session is running; the last one (run "), "\(gone)")
        #expect(gone.standardOutput.contains("0 provisioned · 0 already done"), "\(gone)")
    }

    @Test("SIGTERM during two updates: exit 130, the summary counts 2 interrupted, both firmware steps interrupted in the ledger, each upload noted to resume")
    func sigtermDuringTwoUpdates() throws {
        let state = try makeTemporaryDirectory()
        let environment = ["PATH": "/usr/bin:/bin", "HOME": state, "XDG_STATE_HOME": state]
        // Two new Grokkers plugged into the default bench.
        for port in 0..<2 {
            let plugged = runInProcess(["bench", "plug", "--device", "sim:\(port)"], environment: environment)
            #expect(plugged.status == 0, "\(plugged)")
        }
        // bench-us without its smoke test, so that the updates (the demo channel's 124 KiB image) begin sooner.
        var profile = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.root + "/profiles/bench-us.json")))
                                   as? [String: Any])
        profile["smoke_test"] = nil
        let profileFile = state + "/bench-us-quick.json"
        try JSONSerialization.data(withJSONObject: profile).write(to: URL(fileURLWithPath: profileFile))
        // The repository's state (its metadata, the upload journal) in the test's directory, not the station's.
        let repositoryState = state + "/repository"
        let (process, output) = try Self.station(["--json", "provision", "--watch", "--profile", profileFile, "--repository", "demo",
                                                  "--state", repositoryState], environment: environment)
        // Both reader images under way (past their first sectors, so the journal has them), then SIGTERM.
        var text = ""
        var uploading: [String: String] = [:]
        var readerStart: [String: Int] = [:]
        var lines: [[String: Any]] = []
        let reader = output.fileHandleForReading
        while uploading.count < 2 {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            while let newline = text.firstIndex(of: "\n") {
                let line = String(text[..<newline])
                text = String(text[text.index(after: newline)...])
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
                lines.append(object)
                // `done` counts both images: the reader image's starts where its first event says.
                let data = object["data"] as? [String: Any]
                guard object["event"] as? String == "firmware_progress", data?["image"] as? String == "reader", let done = data?["done"] as? Int,
                      let device = object["device"] as? String, let serial = object["serial"] as? String else { continue }
                let start = readerStart[device] ?? done
                readerStart[device] = start
                if done - start >= 8192 { uploading[device] = serial }
            }
        }
        kill(process.processIdentifier, SIGTERM)
        text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        lines += text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(uploading.keys.sorted() == ["sim:0", "sim:1"], "\(text)")
        #expect(process.terminationStatus == 130, "\(text)")
        let summary = try #require(lines.last { $0["event"] as? String == "watch_finished" }, "\(text)")
        let counts = summary["counts"] as? [String: Int]
        #expect(summary["outcome"] as? String == "interrupted" && counts?["interrupted"] == 2 && counts?["provisioned"] == 0, "\(summary)")
        let finished = lines.filter { $0["event"] as? String == "device_finished" }
        #expect(finished.map { $0["result"] as? String } == ["interrupted", "interrupted"], "\(finished)")
        // The ledger: the session's one run, interrupted, its two firmware steps interrupted.
        let ledger = try Ledger.open(path: state + "/grokctl/ledger.sqlite", readOnly: true)
        let run = try #require(try ledger.runs().first { $0.key == summary["run_id"] as? String })
        #expect(run.outcome == .interrupted)
        let firmware = try ledger.steps().filter { $0.run == run.id && $0.step == "firmware" }
        #expect(firmware.map(\.result) == [.interrupted, .interrupted] && Set(firmware.map(\.serial)) == Set(uploading.values), "\(firmware)")
        // Left resumable: each unit's upload noted in the station's upload journal (in the
        // repository's state), where the next session goes on from.
        let journal = UploadJournalFile(directory: repositoryState + "/uploads")
        for serial in uploading.values {
            let noted = try? Data(contentsOf: URL(fileURLWithPath: journal.path(try #require(UInt32(serial)))))
            #expect(noted?.isEmpty == false, "\(serial): \((try? FileManager.default.subpathsOfDirectory(atPath: repositoryState)) ?? [])")
        }
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
