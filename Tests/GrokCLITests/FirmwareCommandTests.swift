import Foundation
import GrokCrypto
import Testing
@testable import UGrokIt
import GrokFleet

@testable import GrokCLI
@testable import GrokCommandLine

/// The JSON objects of a `--json` run, one per line.
func jsonLines(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

/// The repository root (three levels above this file).
private let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
/// The shipped demo channel (a `file://` TUF repository, root.json beside it) and its image.
private let demoChannel = checkout + "/firmware/demo-channel"
private let demoImage = checkout + "/firmware/demo/GR-1_1-8-0_demo.ugif"

extension CLI {
    @Suite("Firmware commands: flash and verify on the vendor stack")
    struct FirmwareCommandTests {
        /// A station with its own state directory, bench and no trust root installed anywhere.
        func station(_ arguments: [String], dir: String, language: String = "en") throws -> RunResult {
            try runBinary(arguments + ["--state", dir + "/state", "--bench", dir + "/bench"],
                          environment: ["HOME": dir, "XDG_CONFIG_HOME": dir + "/config", "LANG": language])
        }

        var repository: [String] { ["--repository", "file://" + demoChannel, "--trusted-root", demoChannel + "/root.json"] }

        // What a flash does (phases, results, re-runs, refusals, the loader) is GrokFleetTests'
        // FlashJobTests; here, what only the binary shows: the options, the events' fields, the
        // words and the exit codes.
        @Test("flash sim:0 from the demo channel (1.7.3 -> 1.8.0) under --json: the events' fields, exit 0; the same image from a file is already up to date, in French, exit 0, as the channel says")
        func flashFromTheDemoChannel() throws {
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let flash = try station(["firmware", "flash", "--device", "sim:0", "--json"] + repository, dir: dir)
            #expect(flash.status == 0, "\(flash.standardOutput)\(flash.standardError)")
            let events = jsonLines(flash.standardOutput)
            let started = try #require(events.first { $0["event"] as? String == "flash_started" })
            #expect(started["from"] as? String == "1.7.3" && started["to"] as? String == "1.8.0")
            #expect(started["name"] as? String == "GR-1_1-8-0_demo.ugif" && started["device"] as? String == "sim:0")
            let phases = events.filter { $0["event"] as? String == "flash_progress" }.compactMap { $0["phase"] as? String }
            #expect(phases.first == "loader" && phases.last == "reader", "\(phases)")
            let done = try #require(events.first { $0["event"] as? String == "flash_done" })
            #expect(done["result"] as? Int == 0 && done["result_name"] as? String == "SUCCESS")
            #expect(done["to"] as? String == "1.8.0" && (done["bytes"] as? Int ?? 0) > 60_000)
            #expect((done["seconds"] as? Double ?? 0) > 0 && done["chunk_bytes"] is Int && done["resumed_chunks"] is Int)
            #expect(events.last?["event"] as? String == "flash_summary" && events.last?["updated"] as? Int == 1)
            #expect(events.last?["outcome"] as? String == "done")

            // The same version from a local file: already up to date, nothing flashed, in French,
            // exit 0 as from the channel (which has nothing newer).
            let french = try station(["firmware", "flash", "--device", "sim:0", "--package", demoImage, "--lang", "fr"] + repository, dir: dir)
            #expect(french.status == 0, "\(french.standardOutput)\(french.standardError)")
            #expect(french.standardOutput.contains(text(.flashRunsTarget, .fr, "sim:0", "1.8.0")), "\(french.standardOutput)")
            #expect(french.standardOutput.contains(text(.flashSummary, .fr, "0", "1", "0", "1")), "\(french.standardOutput)")
            let channel = try station(["firmware", "flash", "--device", "sim:0", "--json"] + repository, dir: dir)
            #expect(channel.status == 0)
            #expect(jsonLines(channel.standardOutput).contains { $0["event"] as? String == "flash_skipped" && $0["reason"] as? String == "up_to_date" })
        }

        @Test("Ctrl-C during a flash ends it CANCELLED (106), exit 130, with a localized message")
        func interruptCancels() throws {
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            // Paced to the wall clock (--realtime) so the update is still under way when the signal comes.
            let process = Process()
            process.executableURL = try grokctlExecutable()
            process.arguments = ["--realtime", "--bench", dir + "/bench", "firmware", "flash", "--device", "sim:0", "--json",
                                 "--state", dir + "/state"] + repository
            process.environment = ["PATH": "/usr/bin:/bin", "HOME": dir, "XDG_CONFIG_HOME": dir + "/config"]
            let out = dir + "/stdout"
            _ = FileManager.default.createFile(atPath: out, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            process.standardOutput = handle
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            // Wait for the first progress event (a safety bound only; nothing is timed).
            var waited = 0
            while waited < 6000, !(try String(contentsOfFile: out, encoding: .utf8)).contains("flash_progress"), process.isRunning {
                usleep(10_000)
                waited += 1
            }
            process.interrupt()
            process.waitUntilExit()
            try handle.close()
            // Cancelled, not failed: 130 as any command Ctrl-C stopped (issue 12, item 8).
            #expect(process.terminationStatus == 130)
            let events = jsonLines(try String(contentsOfFile: out, encoding: .utf8))
            let summary = events.first { $0["event"] as? String == "flash_summary" }
            #expect(summary?["outcome"] as? String == "cancelled" && summary?["cancelled"] as? Int == 1, "\(events)")
            let failed = try #require(events.first { $0["event"] as? String == "flash_failed" }, "\(events)")
            #expect(failed["result"] as? Int == 106 && failed["result_name"] as? String == "CANCELLED")
            #expect(failed["code"] as? String == "flash_update_cancelled")
            #expect(Localizer(language: .de).message(for: FlashFailure(
                device: "sim:0", result: .cancelled, running: "1.7.3", image: "1.8.0", imageHardware: "GR-1", unitHardware: "GR-1",
                battery: nil, options: FirmwareUpdateOptions())).contains("CANCELLED"))
            // That a re-run finishes the update: FlashJobTests.
        }

        @Test("verify --json: a local .ugif's facts; with --repository, listed as the demo target (intact); a copy with one changed digit is only well-formed alone, damaged against the channel, and flash refuses it before any Grokker is opened; a cut file is refused by verify and by flash before any device")
        func verifyAndTampering() throws {
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let local = try station(["firmware", "verify", demoImage, "--json"], dir: dir)
            #expect(local.status == 0, "\(local.standardError)")
            let facts = try #require(jsonLines(local.standardOutput).first)
            let committed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: demoImage)))
            let image = try #require(facts["image"] as? [String: Any])
            #expect(image["sha256"] as? String == SHA256.hash(committed).hex && image["version"] as? String == "1.8.0")
            #expect(image["hardware_name"] as? String == "GR-1")
            #expect((image["sections"] as? [[String: Any]])?.compactMap { $0["kind"] as? String } == ["loader", "reader"])
            #expect(facts["listed_as"] == nil || facts["listed_as"] is NSNull)

            let listed = try station(["firmware", "verify", demoImage, "--json"] + repository, dir: dir)
            #expect(listed.status == 0, "\(listed.standardError)")
            #expect(jsonLines(listed.standardOutput).first?["listed_as"] as? String == "GR-1_1-8-0_demo.ugif")
            let byName = try station(["firmware", "verify", "--name", "GR-1_1-8-0_demo.ugif", "--lang", "de"] + repository, dir: dir)
            #expect(byName.status == 0, "\(byName.standardError)")
            #expect(byName.standardOutput.contains("GR-1_1-8-0_demo.ugif"))

            // One hex digit changed in the READER's data (not its header, not a marker): the file still
            // parses. Without a channel nothing says it is intact; the channel's listing of its name
            // says it is damaged; flash refuses it before any Grokker is opened (issue 23, item 3).
            let lines = try String(contentsOfFile: demoImage, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var damagedLines = lines
            let row = try #require(damagedLines.indices.last { damagedLines[$0].count == 64 })
            var digits = Array(damagedLines[row])
            digits[10] = digits[10] == "0" ? "1" : "0"
            damagedLines[row] = String(digits)
            try FileManager.default.createDirectory(atPath: dir + "/copy", withIntermediateDirectories: true)
            let damaged = dir + "/copy/GR-1_1-8-0_demo.ugif"
            try damagedLines.joined(separator: "\n").write(toFile: damaged, atomically: true, encoding: .utf8)
            let unknown = try station(["firmware", "verify", damaged], dir: dir)
            #expect(unknown.status == 0 && !unknown.standardOutput.contains(text(.verifyIntact, .en, damaged)), "\(unknown.standardOutput)")
            #expect(unknown.standardOutput.contains(text(.verifyWellFormed, .en, damaged)), "\(unknown.standardOutput)")
            let unknownJSON = try station(["firmware", "verify", damaged, "--json"], dir: dir)
            #expect(jsonLines(unknownJSON.standardOutput).first?["integrity"] as? String == "not_checked")
            #expect(jsonLines(local.standardOutput).first?["integrity"] as? String == "not_checked")
            #expect(jsonLines(listed.standardOutput).first?["integrity"] as? String == "listed")
            let checked = try station(["firmware", "verify", damaged, "--json"] + repository, dir: dir)
            #expect(checked.status == 1)
            #expect(checked.standardError.contains("firmware_image_hash_mismatch"), "\(checked.standardError)")
            for extra in [[], repository] {
                let refusedFlash = try station(["firmware", "flash", "--device", "sim:0", "--package", damaged] + extra, dir: dir)
                #expect(refusedFlash.status == 1)
                #expect(refusedFlash.standardError.contains(extra.isEmpty ? "--allow-unlisted" : "SHA-256"), "\(refusedFlash.standardError)")
                #expect(!FileManager.default.fileExists(atPath: dir + "/bench/sim-0"), "a Grokker was opened for a damaged image")
            }

            // A file cut short does not parse: refused by verify, and by flash before any device.
            let cut = dir + "/GR-1_1-8-0_demo.ugif"
            try lines.prefix(lines.count / 2).joined(separator: "\n").write(toFile: cut, atomically: true, encoding: .utf8)
            let refused = try station(["firmware", "verify", cut, "--json"], dir: dir)
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("firmware_invalid_input"), "\(refused.standardError)")
            let flash = try station(["firmware", "flash", "--device", "sim:0", "--package", cut, "--json"], dir: dir)
            #expect(flash.status == 1)
            #expect(flash.standardError.contains("firmware_invalid_input"))
            #expect(jsonLines(flash.standardOutput).isEmpty, "\(flash.standardOutput)")
        }

        @Test("Usage errors name the option and what to do")
        func usageErrors() {
            var result = runInProcess(["firmware", "flash", "--device", "sim:0", "--name", "a", "--package", "b"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("'--name' and '--package' cannot be used together"))
            result = runInProcess(["firmware", "flash", "--device", "sim:0", "--min-battery", "120"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("'120' is not a percentage for '--min-battery'"))
            result = runInProcess(["firmware", "list", "--repository", "ftp://example.com"])
            #expect(result.status == 64)
            result = runInProcess(["firmware", "verify"])
            #expect(result.status == 64)
            result = runInProcess(["firmware", "flash", "--device", "sim:0", "--version", "1.x", "--lang", "fr"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("« 1.x » n’est pas une version de firmware"))
            result = runInProcess(["firmware", "list"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("--repository"))
            // --allow-unlisted says how to take a --package image: alone it is refused.
            result = runInProcess(["firmware", "flash", "--device", "sim:0", "--allow-unlisted"])
            #expect(result.status == 64 && result.standardError.contains("--package"), "\(result.standardError)")
            result = runInProcess(["firmware", "verify", "--name", "x.ugif"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("--repository"))
        }

        @Test("The built binary shows localized help for the firmware commands; the envelope commands are gone")
        func binaryHelp() throws {
            var result = try runBinary(["firmware", "--help", "--lang", "es"])
            #expect(result.status == 0)
            #expect(collapsed(result.standardOutput).contains(text(.commandFirmwareAbstract, .es)))
            for sub in ["list", "check", "download", "verify", "flash", "pack"] {
                #expect(result.standardOutput.contains(sub))
            }
            #expect(!result.standardOutput.contains("cache"))
            result = try runBinary(["firmware", "check", "--help"])
            #expect(collapsed(result.standardOutput).contains("100 when at least one has"))
            #expect(result.standardOutput.contains("--repository") && !result.standardOutput.contains("--trusted-keys"))
            result = try runBinary(["channel", "publish"])
            #expect(result.status == 64)
            result = try runBinary(["firmware", "cache", "verify"])
            #expect(result.status == 64)
        }
    }
}
