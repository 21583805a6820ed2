import Foundation
import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// Issue 12 item 4, through real grokctl processes: the id a run prints is the ledger's key
/// for it, the ledger points to the report, every run outcome has one code in the summary,
/// the report, the ledger and `--json`, and output that cannot be written fails the command.
extension CLI {
    @Suite("Run identity, one vocabulary, output errors", .serialized)
    struct RunIdentityCommandTests {
        /// The run id in a summary line (`Run 20250115-120000-3fa2: ...`) or any text.
        static func runKey(in text: String) -> String? {
            text.range(of: #"[0-9]{8}-[0-9]{6}-[0-9a-f]{4}"#, options: .regularExpression).map { String(text[$0]) }
        }

        /// The JSON object of a report file.
        static func report(_ path: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        }

        /// The `run_finished` line of `--json` output.
        static func runFinished(_ output: String) throws -> [String: Any] {
            try #require(output.split(separator: "\n").lazy.compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }.first { $0["event"] as? String == "run_finished" }, "no run_finished in \(output)")
        }

        /// A directory nobody may write to, root included (this suite may run as root).
        /// A folder that exists and that this user may not create files in (root may create
        /// files nearly anywhere, but not in sysfs).
        static func unwritableDirectory() throws -> String {
            if getuid() == 0 { return "/sys" }
            let directory = try makeTemporaryDirectory()
            chmod(directory, 0o555)
            return directory
        }

        @Test("the id a run prints is its key in the ledger, in its report and under --json; ledger show lists it and ledger show RUN finds it")
        func oneRunIdentity() throws {
            let world = try FleetWorld(devices: 1)
            let run = try world.provision(devices: "sim:0")
            #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
            let summary = try #require(run.standardOutput.split(separator: "\n").first { $0.hasPrefix("Run ") })
            let key = try #require(Self.runKey(in: String(summary)), "\(summary)")
            let reportLine = try #require(run.standardOutput.split(separator: "\n").first { $0.hasPrefix("Report: ") })
            let reportPath = String(reportLine.dropFirst("Report: ".count))
            #expect(reportPath.hasSuffix("/reports/\(key).json"))
            #expect(try Self.report(reportPath)["run_id"] as? String == key)

            let ledger = try Ledger.open(path: world.ledger, readOnly: true)
            let recorded = try #require(try ledger.run(key: key), "the ledger does not know run \(key)")
            #expect(recorded.outcome == .succeeded)
            #expect(recorded.reportPath == reportPath)

            let show = try world.run(["ledger", "show"])
            #expect(show.status == 0 && show.standardOutput.contains(key), "\(show.standardOutput)")
            let one = try world.run(["ledger", "show", key])
            #expect(one.status == 0, "\(one.standardError)")
            #expect(one.standardOutput.contains(key) && one.standardOutput.contains(reportPath), "\(one.standardOutput)")
            #expect(one.standardOutput.contains(text(.fleetStepFirmware, .en)) && one.standardOutput.contains(text(.fleetRunOutcomeSucceeded, .en)))
            let json = try world.run(["ledger", "show", key, "--json"])
            let first = try #require(json.standardOutput.split(separator: "\n").first.flatMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            })
            #expect(first["id"] as? String == key && first["report"] as? String == reportPath && first["outcome"] as? String == "succeeded")
            #expect(json.standardOutput.contains("\"run\":\"\(key)\""))

            let missing = try world.run(["ledger", "show", "20000101-000000-0000"])
            #expect(missing.status == 1)
            #expect(missing.standardError.contains("20000101-000000-0000") && missing.standardError.contains(world.ledger),
                    "\(missing.standardError)")
        }

        /// One run, as text or `--json`, optionally stopped with SIGINT once it has said something.
        private func provision(_ world: FleetWorld, devices: String, json: Bool, interrupt: Bool = false) throws -> RunResult {
            guard interrupt else { return try world.provision(json ? ["--json"] : [], devices: devices) }
            let process = Process()
            let pipe = Pipe()
            process.executableURL = try grokctlExecutable()
            process.arguments = ["provision", "--profile", FleetWorld.profile, "--device", devices, "--unattended"] + world.common
                + (json ? ["--json"] : [])
            process.environment = ["PATH": "/usr/bin:/bin"].merging(world.environment) { $1 }
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            var text = ""
            // The first step line (text) or the first finished step (JSON): the run is going,
            // and its firmware update (seconds of audio) is still ahead.
            let marker = json ? "\"event\":\"step_finished\"" : "\(devices): "
            while !text.contains(marker) {
                let chunk = pipe.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            kill(process.processIdentifier, SIGINT)
            while true {
                let chunk = pipe.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            process.waitUntilExit()
            return RunResult(status: process.terminationStatus, standardOutput: text, standardError: "")
        }

        @Test("every run outcome a fleet run can end with has one code: the same in the summary's words, the report, the ledger and --json")
        func oneVocabulary() throws {
            let english = Localizer(language: .en)
            var seen: Set<String> = []
            func check(_ world: FleetWorld, devices: String, expected: GrokFleet.RunOutcome, exit: Int32, interrupt: Bool = false) throws {
                let ledger = { try Ledger.open(path: world.ledger, readOnly: true) }
                // As text: the summary line's word is the catalog's for the code.
                let plain = try provision(world, devices: devices, json: false, interrupt: interrupt)
                #expect(plain.status == exit, "\(expected): \(plain.standardOutput)\n\(plain.standardError)")
                let summary = try #require(plain.standardOutput.split(separator: "\n").first { $0.hasPrefix("Run ") },
                                           "\(plain.standardOutput)")
                let key = try #require(Self.runKey(in: String(summary)))
                #expect(summary.hasPrefix("Run \(key): \(english.runOutcome(code: expected.rawValue));"), "\(summary)")
                #expect(try Self.report(world.state + "/grokctl/reports/\(key).json")["outcome"] as? String == expected.rawValue)
                #expect(try ledger().run(key: key)?.outcome?.rawValue == expected.rawValue)
                // As JSON: the run_finished line, its report and the ledger.
                let json = try provision(world, devices: devices, json: true, interrupt: interrupt)
                #expect(json.status == exit, "\(expected): \(json.standardOutput)\n\(json.standardError)")
                let finished = try Self.runFinished(json.standardOutput)
                let jsonKey = try #require(finished["run_id"] as? String)
                #expect(finished["outcome"] as? String == expected.rawValue)
                #expect(try Self.report(try #require(finished["report"] as? String))["outcome"] as? String == expected.rawValue)
                #expect(try ledger().run(key: jsonKey)?.outcome?.rawValue == expected.rawValue)
                seen.insert(expected.rawValue)
            }
            // Succeeded: an out-of-the-box unit brought up, then the same unit again (nothing to do).
            try check(try FleetWorld(devices: 1), devices: "sim:0", expected: .succeeded, exit: 0)
            // Incomplete: the battery is too low for the update, which is postponed.
            let low = try FleetWorld(devices: 1)
            try DeviceStateStore.openOrCreate(directory: low.bench, index: 0).update { $0.batteryPercent = 10 }
            try check(low, devices: "sim:0", expected: .incomplete, exit: 2)
            // Failed: a sound card that does not exist.
            try check(try FleetWorld(devices: 1), devices: "alsa:grokctl_no_such_card", expected: .failed, exit: 1)
            // Interrupted: Ctrl-C while the unit is being worked on.
            try check(try FleetWorld(devices: 1), devices: "sim:0", expected: .interrupted, exit: 130, interrupt: true)
            #expect(seen == Set(GrokFleet.RunOutcome.allCases.map(\.rawValue)))
        }

        @Test("the fleet's outcome codes are the ledger's, and each has its words in every language")
        func codesAreShared() {
            let ledgerCodes = Set(GrokLedger.RunOutcome.allCases.map(\.rawValue))
            #expect(Set(GrokFleet.RunOutcome.allCases.map(\.rawValue)).isSubset(of: ledgerCodes))
            for code in ledgerCodes {
                let key = MessageKey(rawValue: "fleet.run_outcome." + code)
                #expect(key != nil, "\(code)")
                guard let key else { continue }
                let words = Language.allCases.map { text(key, $0) }
                #expect(Set(words).count == Language.allCases.count, "\(code): \(words)")
            }
        }

        /// grokctl with its standard output on `path` (`/dev/full`).
        private func run(_ arguments: [String], standardOutputTo path: String, environment: [String: String]) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = try grokctlExecutable()
            process.arguments = arguments
            process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
            let errors = try makeTemporaryDirectory() + "/stderr"
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
            process.standardOutput = FileHandle(forWritingAtPath: path)
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            try err.close()
            return (process.terminationStatus, try String(contentsOfFile: errors, encoding: .utf8))
        }

        @Test("standard output on a full disk fails the command (exit 1) naming it: ledger export, ledger show, --version")
        func standardOutputOnAFullDisk() throws {
            let world = try FleetWorld(devices: 1)
            _ = try world.provision(devices: "alsa:grokctl_no_such_card")  // a ledger with one run
            #expect(FileManager.default.fileExists(atPath: world.ledger))
            for arguments in [["ledger", "export", "--csv"], ["ledger", "export", "--json"], ["ledger", "show"], ["--version"]] {
                let (status, errors) = try run(arguments, standardOutputTo: "/dev/full", environment: world.environment)
                #expect(status == 1, "\(arguments): \(errors)")
                #expect(errors.contains(text(.errorOutputWriteFailed, .en, "standard output", "ENOSPC")), "\(arguments): \(errors)")
            }
            // The same commands with somewhere to write succeed.
            #expect(try world.run(["ledger", "export", "--csv"]).status == 0)
            // An export file in a directory nobody may write to: the error names the file.
            let unwritable = try Self.unwritableDirectory() + "/steps.csv"
            let export = try world.run(["ledger", "export", "--csv", "--output", unwritable])
            #expect(export.status == 1 && export.standardError.contains(unwritable), "\(export.standardError)")
        }

        @Test("a report in a directory nobody may write to stops the run before it starts (preflight), naming the system's code")
        func reportNotWritableIsAPreflightRefusal() throws {
            let world = try FleetWorld(devices: 1)
            let report = try Self.unwritableDirectory() + "/report.json"
            let run = try world.provision(["--report", report, "--lang", "de"], devices: "sim:0")
            #expect(run.status == 1, "\(run.standardOutput)\n\(run.standardError)")
            #expect(run.standardError.contains(text(.errorFleetReportNotWritable, .de, report, "EACCES")), "\(run.standardError)")
            #expect(Self.runKey(in: run.standardOutput) == nil, "a run was started")
            #expect(try world.device(0).firmwareVersion == FirmwareVersion(major: 1, minor: 7, build: 3), "the Grokker was changed")
        }

        @Test("a report that cannot be written at the end (a full disk) fails the run, says so, and the outcome is still in the ledger")
        func reportNotWritten() throws {
            let world = try FleetWorld(devices: 1)
            for report in ["/dev/full"] {
                let run = try world.provision(["--report", report, "--lang", "de"], devices: "alsa:grokctl_no_such_card")
                #expect(run.status == 1, "\(run.standardOutput)\n\(run.standardError)")
                #expect(!run.standardOutput.contains(text(.fleetReportWritten, .de, report)), "\(run.standardOutput)")
                let message = try #require(run.standardError.split(separator: "\n").first { $0.contains(report) }, "\(run.standardError)")
                let errno = report == "/dev/full" ? "ENOSPC" : (getuid() == 0 ? "EPERM" : "EACCES")
                #expect(message.contains(text(.errorFleetReportNotWritten, .de, report, errno)), "\(message)")
                let key = try #require(Self.runKey(in: run.standardOutput))
                let recorded = try #require(try Ledger.open(path: world.ledger, readOnly: true).run(key: key))
                #expect(recorded.outcome == .failed && recorded.endedAt != nil)
                #expect(recorded.reportPath == nil)
            }
            var info = stat()
            #expect(stat("/dev/full", &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR, "/dev/full is still the device")
        }
    }
}
