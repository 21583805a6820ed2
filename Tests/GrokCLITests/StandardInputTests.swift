import Foundation
import GrokCrypto
import GrokFirmware
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The repository root (three levels above this file).
private let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
/// The committed demo image.
private let demoImage = checkout + "/firmware/demo/GR-1_1-8-0_demo.ugif"

/// Runs the built grokctl with `input` written into a real pipe on its standard input (from
/// another thread, so a large input never waits on the reader; SIGPIPE is blocked on that
/// thread, so a grokctl that stops reading early ends the write, not the tests).
func runBinary(_ arguments: [String], pipedInput input: [UInt8], environment: [String: String] = [:]) throws -> RunResult {
    try runBinary(arguments, environment: environment, feeding: input.count) { input[$0...] }.0
}

/// Runs the built grokctl with `header` then zeros (at most `limit` bytes in all) written into
/// a pipe on its standard input until it stops reading; returns the run and the bytes written.
func runBinary(_ arguments: [String], header: [UInt8], thenZeros limit: Int) throws -> (RunResult, Int) {
    let zeros = [UInt8](repeating: 0, count: 64 * 1024)
    return try runBinary(arguments, environment: [:], feeding: limit) { written in written < header.count ? header[written...] : zeros[...] }
}

/// The one pipe feeder: writes `piece(bytesWrittenSoFar)` until `limit` bytes went in or
/// grokctl stopped reading; returns the run and the bytes written.
private func runBinary(_ arguments: [String], environment: [String: String], feeding limit: Int,
                       piece: @escaping @Sendable (Int) -> ArraySlice<UInt8>) throws -> (RunResult, Int) {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let process = Process()
    process.executableURL = try grokctlExecutable()
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
    let paths = ["out", "err"].map { directory + "/" + $0 }
    for path in paths { _ = FileManager.default.createFile(atPath: path, contents: nil) }
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: paths[0]))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: paths[1]))
    let pipe = Pipe()
    process.standardInput = pipe
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let writer = pipe.fileHandleForWriting.fileDescriptor
    let fed = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var written = 0
    let thread = Thread {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        while written < limit {
            let next = piece(written)
            let n = next.withUnsafeBytes { write(writer, $0.baseAddress!, min($0.count, limit - written)) }
            if n < 0 {
                if errno == EINTR { continue }
                break  // EPIPE: grokctl stopped reading (a too-large input)
            }
            written += n
        }
        // Take the SIGPIPE a broken write raised, so it is never delivered.
        var none = timespec(tv_sec: 0, tv_nsec: 0)
        _ = sigtimedwait(&blocked, nil, &none)
        try? pipe.fileHandleForWriting.close()
        fed.signal()
    }
    thread.start()
    process.waitUntilExit()
    fed.wait()
    try out.close()
    try err.close()
    return (RunResult(status: process.terminationStatus, standardOutput: try String(contentsOfFile: paths[0], encoding: .utf8),
                      standardError: try String(contentsOfFile: paths[1], encoding: .utf8)), written)
}

/// The `error` object of a `--json` run's standard error.
private func jsonError(_ text: String) -> [String: Any]? {
    jsonLines(text).compactMap { $0["error"] as? [String: Any] }.first
}

extension CLI {
    /// `-` for standard input where a command reads one file (`audio decode -`, `firmware
    /// verify -`), declared on the positional argument's type (`ValueType.inputFile`), and
    /// the types of the other positional arguments, checked by the parser.
    @Suite("'-' for standard input, typed positional arguments")
    struct StandardInputTests {
        // MARK: audio decode -

        @Test("audio decode - decodes a recording piped on standard input to exactly the packets of the file")
        func audioDecodeFromStandardInput() throws {
            let session = try CLI.DecodeTests.recordSession()
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            let wav = [UInt8](try Data(contentsOf: URL(fileURLWithPath: session.wav)))
            let piped = try runBinary(["audio", "decode", "-", "--json"], pipedInput: wav)
            #expect(piped.status == 0, "\(piped.standardError)")
            #expect(piped.standardError == "")
            var lines = try jsonObjects(piped.standardOutput)
            let summary = try #require(lines.popLast()?["summary"] as? [String: Any])
            #expect(summary["file"] as? String == "-")
            #expect(lines.allSatisfy { $0["file"] as? String == "-" })
            #expect(packetKeys(lines) == packetKeys(session.packets) && !lines.isEmpty)
            #expect(lines.map { $0["time_s"] as? Double } == session.packets.map { $0["time_s"] as? Double })
            #expect(summary["packets_ok"] as? Int == session.summary["packets_ok"] as? Int)
            #expect(summary["audio_s"] as? Double == session.summary["audio_s"] as? Double)
        }

        @Test("audio decode FILE - decodes both in turn, each under its name; '-' twice is refused, naming <file>")
        func severalRecordingsAndStandardInputOnce() throws {
            let session = try CLI.DecodeTests.recordSession()
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            let wav = [UInt8](try Data(contentsOf: URL(fileURLWithPath: session.wav)))
            let both = try runBinary(["audio", "decode", session.wav, "-", "--json"], pipedInput: wav)
            #expect(both.status == 0, "\(both.standardError)")
            let lines = try jsonObjects(both.standardOutput)
            let summaries = lines.compactMap { $0["summary"] as? [String: Any] }
            #expect(summaries.map { $0["file"] as? String } == [session.wav, "-"])
            let fromFile = lines.filter { $0["file"] as? String == session.wav }
            let fromPipe = lines.filter { $0["file"] as? String == "-" }
            #expect(packetKeys(fromFile) == packetKeys(fromPipe) && !fromFile.isEmpty)
            // In text, each table under its recording's name; standard input by its name.
            let shown = try runBinary(["audio", "decode", session.wav, "-", "--lang", "fr"], pipedInput: wav)
            #expect(shown.status == 0, "\(shown.standardError)")
            #expect(shown.standardOutput.contains(text(.decodeFileHeading, .fr, session.wav)))
            #expect(shown.standardOutput.contains(text(.decodeFileHeading, .fr, "entrée standard")), "\(shown.standardOutput)")

            let twice = try runBinary(["audio", "decode", "-", "-"], pipedInput: wav)
            #expect(twice.status == 64)
            #expect(twice.standardError.contains(text(.errorUsageBadArgument, .en, "-", "<file>", text(.valueRuleStandardInputOnce, .en))),
                    "\(twice.standardError)")
            #expect(twice.standardOutput == "")
        }

        @Test("what is not a WAV on standard input is refused naming standard input in the user's language, exit 1 as for a file")
        func audioDecodeRefusalNamesStandardInput() throws {
            let junk = Array("this is not a recording\n".utf8)
            let german = try runBinary(["audio", "decode", "-", "--lang", "de"], pipedInput: junk)
            #expect(german.status == 1)
            #expect(german.standardError.contains("„Standardeingabe“"), "\(german.standardError)")
            #expect(!german.standardError.contains("„-“"), "\(german.standardError)")
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try Data(junk).write(to: URL(fileURLWithPath: directory + "/junk.wav"))
            let file = try runBinary(["audio", "decode", directory + "/junk.wav", "--json"])
            let piped = try runBinary(["audio", "decode", "-", "--json"], pipedInput: junk)
            #expect(piped.status == file.status)
            #expect(jsonError(piped.standardError)?["code"] as? String == jsonError(file.standardError)?["code"] as? String)
            #expect(jsonError(piped.standardError)?["code"] as? String == "audio_bad_wav", "\(piped.standardError)")
        }

        @Test("audio decode - refuses a header declaring 0xFFFFFFFF data bytes by the header: endless input behind it is not read (was: 1 GiB read, 2 GiB RSS)")
        func audioDecodeRefusesAHugeDeclaredSizeBeforeReading() throws {
            var header = Array("RIFF".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + Array("WAVE".utf8)
            header += Array("fmt ".utf8) + [16, 0, 0, 0, 1, 0, 1, 0, 0x44, 0xAC, 0, 0, 0x88, 0x58, 1, 0, 2, 0, 16, 0]
            header += Array("data".utf8) + [0xFF, 0xFF, 0xFF, 0xFF]
            // Endless zeros after it, cut off at 64 MiB should grokctl go on reading.
            let (result, written) = try runBinary(["audio", "decode", "-", "--json"], header: header, thenZeros: 64 << 20)
            #expect(result.status == 1)
            #expect(jsonError(result.standardError)?["code"] as? String == "audio_bad_wav", "\(result.standardError)")
            #expect(result.standardError.contains("4294967295"), "\(result.standardError)")
            // What the pipe holds (64 KiB here) and what grokctl read: the header only.
            #expect(written < 4 << 20, "\(written) bytes went into the pipe")
        }

        // MARK: firmware verify -

        @Test("firmware verify - checks an image piped on standard input: the file's facts, named standard input")
        func firmwareVerifyFromStandardInput() throws {
            let image = [UInt8](try Data(contentsOf: URL(fileURLWithPath: demoImage)))
            let json = try runBinary(["firmware", "verify", "-", "--json"], pipedInput: image)
            #expect(json.status == 0, "\(json.standardError)")
            let facts = try #require(jsonLines(json.standardOutput).first?["image"] as? [String: Any])
            #expect(facts["file"] as? String == "-")
            #expect(facts["sha256"] as? String == SHA256.hash(image).hex && facts["size"] as? Int == image.count)
            #expect(facts["version"] as? String == "1.8.0" && facts["hardware_name"] as? String == "GR-1")
            let file = try runBinary(["firmware", "verify", demoImage, "--json"])
            let fileFacts = try #require(jsonLines(file.standardOutput).first?["image"] as? [String: Any])
            #expect(fileFacts["sections"] as? [[String: AnyHashable]] == facts["sections"] as? [[String: AnyHashable]])

            for language in [Language.en, .es] {
                let shown = try runBinary(["firmware", "verify", "-", "--lang", language.rawValue], pipedInput: image)
                #expect(shown.status == 0, "\(shown.standardError)")
                let name = text(.inputStandardInput, language)
                #expect(shown.standardOutput.contains(text(.verifyWellFormed, language, name)), "\(shown.standardOutput)")
                #expect(shown.standardOutput.contains(text(.packageFactFile, language, name)))
            }
        }

        @Test("a corrupt image on standard input is refused as a corrupt file is (exit 1, firmware_invalid_input), naming standard input")
        func corruptImageOnStandardInput() throws {
            let lines = try String(contentsOfFile: demoImage, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            let cut = Array(lines.prefix(lines.count / 2).joined(separator: "\n").utf8)
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let cutFile = directory + "/GR-1_1-8-0_demo.ugif"
            try Data(cut).write(to: URL(fileURLWithPath: cutFile))
            let file = try runBinary(["firmware", "verify", cutFile, "--json"])
            let piped = try runBinary(["firmware", "verify", "-", "--json"], pipedInput: cut)
            #expect(file.status == 1 && piped.status == file.status, "\(piped.standardError)")
            let error = try #require(jsonError(piped.standardError), "\(piped.standardError)")
            #expect(error["code"] as? String == "firmware_invalid_input")
            #expect(piped.standardOutput == "")
            let french = try runBinary(["firmware", "verify", "-", "--lang", "fr"], pipedInput: cut)
            #expect(french.status == 1)
            #expect(french.standardError.contains("« entrée standard »"), "\(french.standardError)")
        }

        @Test("an input larger than the command reads is refused after reading no more than the limit, naming standard input")
        func tooLargeInputIsAClearError() throws {
            var big = [UInt8](try Data(contentsOf: URL(fileURLWithPath: demoImage)))
            while big.count <= UgifImage.maxFileBytes { big += big }
            let piped = try runBinary(["firmware", "verify", "-", "--json"], pipedInput: big)
            #expect(piped.status == 1)
            let error = try #require(jsonError(piped.standardError), "\(piped.standardError)")
            #expect(error["code"] as? String == "input_too_large")
            let german = try runBinary(["firmware", "verify", "-", "--lang", "de"], pipedInput: big)
            #expect(german.standardError.contains(text(.errorInputTooLarge, .de, text(.inputStandardInput, .de), String(UgifImage.maxFileBytes))),
                    "\(german.standardError)")
            // A file as large is refused by its size, before it is read.
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/GR-1_1-8-0_big.ugif"
            try Data(big).write(to: URL(fileURLWithPath: path))
            let file = try runBinary(["firmware", "verify", path, "--json"])
            #expect(file.status == 1 && jsonError(file.standardError)?["code"] as? String == "input_too_large")
            // A file that is not there: its own clear error.
            let missing = try runBinary(["firmware", "verify", directory + "/none.ugif", "--lang", "es"])
            #expect(missing.status == 1)
            #expect(missing.standardError.contains(text(.errorInputUnreadable, .es, directory + "/none.ugif", "no_such_file")),
                    "\(missing.standardError)")
        }

        // MARK: firmware flash --package -, firmware pack --hex -

        @Test("firmware flash --package - flashes an image piped on standard input (1.7.3 -> 1.8.0), named standard input; a second '-' is refused")
        func flashFromStandardInput() throws {
            let image = [UInt8](try Data(contentsOf: URL(fileURLWithPath: demoImage)))
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let station = ["--state", dir + "/state", "--bench", dir + "/bench"]
            let environment = ["HOME": dir, "XDG_CONFIG_HOME": dir + "/config"]
            // Standard input has no name a channel could list it under: flashed on the technician's word.
            let flash = try runBinary(["firmware", "flash", "--device", "sim:0", "--package", "-", "--allow-unlisted", "--json"] + station,
                                      pipedInput: image, environment: environment)
            #expect(flash.status == 0, "\(flash.standardOutput)\(flash.standardError)")
            let events = jsonLines(flash.standardOutput)
            let started = try #require(events.first { $0["event"] as? String == "flash_started" }, "\(flash.standardOutput)")
            #expect(started["from"] as? String == "1.7.3" && started["to"] as? String == "1.8.0")
            #expect(events.contains { $0["event"] as? String == "flash_done" && $0["result_name"] as? String == "SUCCESS" })
            // (That the unit then runs 1.8.0: FlashJobTests.) The same image again, in Spanish: already up to date, as for a file.
            let again = try runBinary(["firmware", "flash", "--device", "sim:0", "--package", "-", "--allow-unlisted", "--lang", "es"] + station,
                                      pipedInput: image, environment: environment)
            #expect(again.status == 0)
            #expect(again.standardOutput.contains(text(.flashRunsTarget, .es, "sim:0", "1.8.0")), "\(again.standardOutput)")
            // Not an image: refused as a corrupt file is, before any device is touched.
            let junk = try runBinary(["firmware", "flash", "--device", "sim:1", "--package", "-", "--allow-unlisted", "--lang", "de"] + station,
                                     pipedInput: Array("no image\n".utf8), environment: environment)
            #expect(junk.status == 1)
            #expect(junk.standardError.contains("„Standardeingabe“"), "\(junk.standardError)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/bench/sim-1"), "a device was opened for a bad image")
        }

        @Test("firmware pack --hex - makes the same image as from the file; '-' twice across its inputs is refused")
        func packFromStandardInput() throws {
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try """
            {"hardware_type": 5, "hardware_revisions": [3], "version": "1.8.0", "build_date": "2026-12-01T00:00:00Z",
             "reader_protocol": 20, "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}], "notes": {"en": "Demo."}}
            """.write(toFile: dir + "/desc.json", atomically: true, encoding: .utf8)
            let hex = checkout + "/firmware/demo/grokker-app-1.8.0.hex"
            func pack(_ hexArgument: String, _ output: String, description: String? = nil) -> [String] {
                ["firmware", "pack", "--hex", hexArgument, "--loader", checkout + "/firmware/demo/grokker-loader-1.0.0.hex",
                 "--base", "0x08007000", "--reader-bytes", "61440", "--description", description ?? dir + "/desc.json",
                 "--output", dir + "/" + output + "/GR-1_1-8-0_demo.ugif"]
            }
            for sub in ["file", "pipe"] { try FileManager.default.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true) }
            let fromFile = try runBinary(pack(hex, "file"))
            #expect(fromFile.status == 0, "\(fromFile.standardError)")
            let piped = try runBinary(pack("-", "pipe"), pipedInput: [UInt8](try Data(contentsOf: URL(fileURLWithPath: hex))))
            #expect(piped.status == 0, "\(piped.standardError)")
            let a = try Data(contentsOf: URL(fileURLWithPath: dir + "/file/GR-1_1-8-0_demo.ugif"))
            let b = try Data(contentsOf: URL(fileURLWithPath: dir + "/pipe/GR-1_1-8-0_demo.ugif"))
            #expect(a == b && !a.isEmpty)
            // A bad Intel HEX on standard input names standard input, in French.
            let bad = try runBinary(pack("-", "pipe") + ["--lang", "fr"], pipedInput: Array(":zz\n".utf8))
            #expect(bad.status == 1)
            #expect(bad.standardError.contains("« entrée standard »"), "\(bad.standardError)")
            let twice = try runBinary(pack("-", "pipe", description: "-") + ["--json"], pipedInput: [])
            #expect(twice.status == 64)
            #expect(jsonError(twice.standardError)?["code"] as? String == "usage_bad_value", "\(twice.standardError)")
        }

        // MARK: where '-' is refused, and typed positional values

        @Test("'-' is refused where the file is read again or in place: a ledger, a repository target, a directory")
        func dashRefusedWhereItCannotMakeSense() throws {
            let ledger = try runBinary(["ledger", "show", "--ledger", "-"])
            #expect(ledger.status == 64)
            #expect(ledger.standardError.contains(text(.errorUsageBadValue, .en, "-", "--ledger", text(.valueRuleNamed, .en))),
                    "\(ledger.standardError)")
            let target = try runBinary(["repo", "add", "--repo", "/nonexistent", "--channel", "release", "-", "--lang", "de"])
            #expect(target.status == 64)
            #expect(target.standardError.contains(text(.errorUsageBadArgument, .de, "-", "<" + text(.valueFile, .de) + ">",
                                                       text(.valueRuleNamed, .de))), "\(target.standardError)")
            let bench = try runBinary(["devices", "--bench", "-", "--json"])
            #expect(bench.status == 64)
            #expect(jsonError(bench.standardError)?["code"] as? String == "usage_bad_value", "\(bench.standardError)")
        }

        @Test("a positional value its type refuses is a usage error naming the argument and what is allowed, in the user's language")
        func wrongTypedPositionalValues() throws {
            let epc = try runBinary(["locate", "ZZZZ", "--device", "sim:0", "--lang", "fr"])
            #expect(epc.status == 64)
            let rule = text(.valueRuleEpc, .fr, "8", "54")
            #expect(epc.standardError.contains(text(.errorUsageBadArgument, .fr, "ZZZZ", "<" + text(.valueHex, .fr) + ">", rule)),
                    "\(epc.standardError)")
            let shell = try runBinary(["completions", "tcsh", "--json"])
            #expect(shell.status == 64)
            let error = try #require(jsonError(shell.standardError), "\(shell.standardError)")
            #expect(error["code"] as? String == "usage_bad_argument")
            #expect((error["message"] as? String)?.contains("bash, zsh, fish") == true, "\(error)")
        }

        @Test("the parser checks each positional value against its declared type")
        func parserChecksPositionalTypes() {
            func failure(_ arguments: [String]) -> CLIError? {
                if case .failure(let error, _) = ArgumentParser(root: GrokctlCommand.self, globals: GlobalOptions.declarations)
                    .parse(arguments) { return error }
                return nil
            }
            #expect(failure(["audio", "decode", "a.wav", "-", "b.wav", "-"])
                    == .badArgument(value: "-", name: .valueFile, rule: .standardInputOnce))
            #expect(failure(["audio", "decode", "-"]) == nil)
            #expect(failure(["firmware", "verify", "-"]) == nil)
            #expect(failure(["completions", "ksh"]) == .badArgument(value: "ksh", name: .valueShell, rule: .choice(["bash", "zsh", "fish"])))
            #expect(failure(["locate", "30", "--device", "sim:0"])
                    == .badArgument(value: "30", name: .valueHex, rule: .epc(minDigits: 8, maxDigits: 54)))
            #expect(failure(["firmware", "flash", "--device", "sim:0", "--package", "-"]) == nil)
            #expect(failure(["firmware", "pack", "--hex", "-", "--description", "d.json", "--output", "-"])
                    == .badValue(value: "-", option: "--output", rule: .named))
            #expect(failure(["firmware", "pack", "--hex", "-", "--description", "-", "--output", "o.ugif"])
                    == .badValue(value: "-", option: "--description", rule: .standardInputOnce))
            #expect(failure(["repo", "add", "--repo", "r", "--channel", "c", "./-"]) == nil)
        }

        // MARK: help, man pages, completions

        @Test("help and the man page say that '-' reads standard input, in the user's language")
        func helpAndManSayIt() throws {
            for (command, language) in [(["audio", "decode"], Language.en), (["firmware", "verify"], .fr)] {
                let help = runInProcess(command + ["--help", "--lang", language.rawValue])
                #expect(collapsed(help.standardOutput).contains(text(.helpDashStandardInput, language)), "\(help.standardOutput)")
                let man = runInProcess(["man"] + command + ["--lang", language.rawValue])
                #expect(man.standardOutput.contains(ManPages.escape(text(.helpDashStandardInput, language))), "\(man.standardOutput)")
            }
            let completions = runInProcess(["man", "completions"])
            #expect(completions.standardOutput.contains(ManPages.escape(text(.manChoices, .en, "bash, zsh, fish"))))
            // An argument that is no file says nothing about '-'.
            let region = runInProcess(["region", "set", "--help"])
            #expect(!collapsed(region.standardOutput).contains(text(.helpDashStandardInput, .en)))
        }

        @Test("bash completes a positional argument by its type: files, choices, nothing for a word")
        func bashCompletesPositionalsByType() throws {
            let script = try CompletionTests.script("bash")
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try Data().write(to: URL(fileURLWithPath: directory + "/recording.wav"))
            try FileManager.default.createDirectory(atPath: directory + "/pages", withIntermediateDirectories: true)
            #expect(try CompletionTests.bashCompletes(["grokctl", "audio", "decode", directory + "/rec"], script: script)
                    == [directory + "/recording.wav"])
            // Repeating: a second file completes too, after a first and an option.
            #expect(try CompletionTests.bashCompletes(["grokctl", "audio", "decode", "a.wav", "--json", directory + "/rec"], script: script)
                    == [directory + "/recording.wav"])
            #expect(try CompletionTests.bashCompletes(["grokctl", "firmware", "verify", "--name", "x", directory + "/rec"], script: script)
                    == [directory + "/recording.wav"])
            #expect(try CompletionTests.bashCompletes(["grokctl", "completions", ""], script: script) == ["bash", "zsh", "fish"])
            #expect(try CompletionTests.bashCompletes(["grokctl", "completions", "z"], script: script) == ["zsh"])
            // The one argument given, nothing more is offered for it.
            #expect(try CompletionTests.bashCompletes(["grokctl", "completions", "bash", ""], script: script) == [])
        }

        @Test(.enabled(if: hasZsh)) func zshCompletesPositionalsByType() throws {
            let path = try CompletionTests.script("zsh")
            let script = try String(contentsOfFile: path, encoding: .utf8)
            #expect(script.contains("\"grokctl audio decode|\"*) _files; return ;;"), "\(script)")
            #expect(script.contains("\"grokctl completions|0\") compadd -- bash zsh fish; return ;;"))
            let parsed = try runProgram("/usr/bin/zsh", ["-n", path])
            #expect(parsed.status == 0 && parsed.standardError.isEmpty, "\(parsed.standardError)")
        }

        @Test(.enabled(if: hasFish)) func fishCompletesPositionalsByType() throws {
            let script = try CompletionTests.script("fish")
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try Data().write(to: URL(fileURLWithPath: directory + "/recording.wav"))
            // region set's values are asked of the built grokctl (`grokctl __complete region`).
            let binaries = try grokctlExecutable().deletingLastPathComponent().path
            func completes(_ line: String) throws -> [String] {
                let result = try runProgram("/usr/bin/fish", ["--no-config", "-c", "source '\(script)'; complete -C '\(line)'"],
                                            environment: ["HOME": directory, "PATH": binaries + ":/usr/bin:/bin"])
                #expect(result.standardError.isEmpty, "\(result.standardError)")
                return result.standardOutput.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
            }
            #expect(try completes("grokctl audio decode \(directory)/rec") == [directory + "/recording.wav"])
            #expect(try completes("grokctl completions ").sorted() == ["bash", "fish", "zsh"])
            // A word argument offers no files (the script turns file completion off).
            #expect(try completes("grokctl region set \(directory)/rec") == [])
        }
    }
}
