import Foundation
import Testing
import GrokProtocol

@testable import GrokCLI
@testable import GrokCommandLine

/// Runs `program` with `arguments` in `directory` (default: a fresh temporary one), with
/// only `environment` plus PATH; returns what it printed.
func runProgram(_ program: String, _ arguments: [String], in directory: String? = nil,
                environment: [String: String] = [:]) throws -> RunResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
    let scratch = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    process.currentDirectoryURL = URL(fileURLWithPath: directory ?? scratch)
    let outURL = URL(fileURLWithPath: scratch + "/.stdout"), errURL = URL(fileURLWithPath: scratch + "/.stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    try out.close()
    try err.close()
    return RunResult(status: process.terminationStatus, standardOutput: try String(contentsOf: outURL, encoding: .utf8),
                     standardError: try String(contentsOf: errURL, encoding: .utf8))
}

let hasZsh = FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh")
let hasFish = FileManager.default.isExecutableFile(atPath: "/usr/bin/fish")

extension CLI {
    @Suite("Completions")
    struct CompletionTests {
        /// The script the built grokctl prints for `shell`, in a file.
        static func script(_ shell: String) throws -> String {
            let result = try runBinary(["completions", shell])
            #expect(result.status == 0, "\(result.standardError)")
            let file = try makeTemporaryDirectory() + "/grokctl.\(shell)"
            try result.standardOutput.write(toFile: file, atomically: true, encoding: .utf8)
            return file
        }

        /// What bash completes for the words typed so far (the last one being completed), as
        /// bash calls the function (COMP_LINE up to the cursor), with the built grokctl on the
        /// PATH for the candidates it lists (`environment` is its environment).
        static func bashCompletes(_ words: [String], script: String, environment: [String: String] = [:]) throws -> [String] {
            let line = words.joined(separator: " ")
            let quotedLine = "'" + line.replacingOccurrences(of: "'", with: "'\\''") + "'"
            let program = """
                source '\(script)' || exit 3
                complete -p grokctl || exit 4
                COMP_LINE=\(quotedLine); COMP_POINT=${#COMP_LINE}
                _grokctl
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let binaries = try grokctlExecutable().deletingLastPathComponent().path
            let result = try runProgram("/usr/bin/bash", ["--norc", "-c", program],
                                        environment: environment.merging(["PATH": binaries + ":/usr/bin:/bin"]) { $1 })
            #expect(result.status == 0, "\(result.standardError)")
            var lines = result.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.first == "complete -o default -F _grokctl grokctl")
            lines.removeFirst()
            return lines
        }

        @Test func bashReallyCompletesCommandsOptionsChoicesAndFiles() throws {
            let script = try Self.script("bash")
            #expect(try Self.bashCompletes(["grokctl", "inv"], script: script) == ["inventory"])
            #expect(try Self.bashCompletes(["grokctl", "firmware", "fl"], script: script) == ["flash"])
            #expect(try Self.bashCompletes(["grokctl", "--json", "ledger", "ex"], script: script) == ["export"])
            #expect(try Self.bashCompletes(["grokctl", "inventory", "--ty"], script: script) == ["--type"])
            // An option's value is skipped: `5` is not taken for a subcommand.
            #expect(try Self.bashCompletes(["grokctl", "inventory", "--duration", "5", "--ty"], script: script) == ["--type"])
            #expect(try Self.bashCompletes(["grokctl", "--lang", ""], script: script) == ["en", "es", "fr", "de"])
            #expect(try Self.bashCompletes(["grokctl", "inventory", "--type", ""], script: script)
                    == InventoryCommand.type.choices!)
            #expect(try Self.bashCompletes(["grokctl", "tag", "read", "--bank", "t"], script: script) == ["tid"])
            let directory = try makeTemporaryDirectory()
            try "{}".write(toFile: directory + "/night.json", atomically: true, encoding: .utf8)
            #expect(try Self.bashCompletes(["grokctl", "provision", "--profile", directory + "/ni"], script: script)
                    == [directory + "/night.json"])
        }

        @Test("region set, --profile and --device complete to the regions, the profiles and the devices of this station")
        func valuesOfTheStationComplete() throws {
            // The helper the scripts call, one candidate a line.
            let bench = try makeTemporaryDirectory()
            for index in [2, 11] { try FileManager.default.createDirectory(atPath: bench + "/sim-\(index)", withIntermediateDirectories: true) }
            let environment = ["GROKCTL_BENCH": bench, "HOME": bench]
            let regions = runInProcess(["__complete", "region"]).standardOutput.split(separator: "\n").map(String.init)
            #expect(regions == RegionCatalog.all.map(\.code) && regions.contains("etsi"))
            let devices = runInProcess(["__complete", "device"], environment: environment).standardOutput.split(separator: "\n")
            #expect(devices.prefix(2) == ["sim:2", "sim:11"] && devices.dropFirst(2).allSatisfy { $0.hasPrefix("alsa:") }, "\(devices)")
            let profiles = runInProcess(["__complete", "profile"], environment: environment).standardOutput
            #expect(profiles.split(separator: "\n").map(String.init) == (try InstallPaths(environment: environment).knownProfiles()))
            #expect(try InstallPaths(environment: environment).knownProfiles().contains("bench-us"))
            #expect(runInProcess(["__complete", "colour"]).status == 64)

            // Through bash: the words typed so far decide what is asked for.
            let script = try Self.script("bash")
            #expect(try Self.bashCompletes(["grokctl", "region", "set", "et"], script: script) == ["etsi", "etsi_high"])
            #expect(try Self.bashCompletes(["grokctl", "provision", "--profile", "bench"], script: script, environment: environment)
                    == ["bench-us"])
            #expect(try Self.bashCompletes(["grokctl", "info", "--device", "s"], script: script, environment: environment)
                    == ["sim:2", "sim:11"])
            // bash keeps `sim:` as words of its own (COMP_WORDBREAKS has the colon): only the rest is offered.
            #expect(try Self.bashCompletes(["grokctl", "--json", "info", "--device", "sim:1"], script: script, environment: environment)
                    == ["11"])
        }

        @Test func everyOptionOfEveryCommandIsOffered() throws {
            let script = try Self.script("bash")
            for path in allCommandPaths().dropFirst() where path.last!.configuration.subcommands.isEmpty {
                let words = path.map { $0.configuration.name } + ["--"]
                let offered = Set(try Self.bashCompletes(words, script: script))
                for option in path.last!.configuration.options + GlobalOptions.declarations + [.help] {
                    #expect(offered.contains(option.spelling), "\(words.joined(separator: " ")): \(option.spelling)")
                }
            }
        }

        @Test(.enabled(if: hasZsh)) func zshScriptParses() throws {
            let result = try runProgram("/usr/bin/zsh", ["-n", try Self.script("zsh")])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardError.isEmpty, "\(result.standardError)")
        }

        @Test(.enabled(if: hasFish)) func fishScriptParsesAndCompletes() throws {
            let script = try Self.script("fish")
            let parsed = try runProgram("/usr/bin/fish", ["--no-config", "-n", script])
            #expect(parsed.status == 0, "\(parsed.standardError)")
            let home = try makeTemporaryDirectory()
            let completed = try runProgram(
                "/usr/bin/fish", ["--no-config", "-c", "source '\(script)'; complete -C 'grokctl firmware fl'"],
                environment: ["HOME": home])
            #expect(completed.standardOutput.split(separator: "\n").map { String($0.split(separator: "\t")[0]) } == ["flash"],
                    "\(completed.standardOutput) \(completed.standardError)")
            // A value of the station: the region codes, asked of the built grokctl.
            let binaries = try grokctlExecutable().deletingLastPathComponent().path
            let regions = try runProgram(
                "/usr/bin/fish", ["--no-config", "-c", "source '\(script)'; complete -C 'grokctl region set et'"],
                environment: ["HOME": home, "PATH": binaries + ":/usr/bin:/bin"])
            #expect(regions.standardOutput.split(separator: "\n").map { String($0.split(separator: "\t")[0]) } == ["etsi", "etsi_high"],
                    "\(regions.standardOutput) \(regions.standardError)")
        }

        @Test func unknownShellIsAUsageErrorListingTheShells() {
            let result = runInProcess(["completions", "tcsh"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("use one of: bash, zsh, fish"), "\(result.standardError)")
        }
    }

    @Suite("Man pages")
    struct ManPageTests {
        @Test func everyPageRendersWithManAndGroffWithoutWarnings() throws {
            let directory = try makeTemporaryDirectory()
            let written = try runBinary(["man", "--directory", directory])
            #expect(written.status == 0, "\(written.standardError)")
            let files = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
            #expect(files.count == allCommandPaths().count)
            #expect(files.contains("grokctl.1") && files.contains("grokctl-firmware-flash.1"))
            for file in files {
                let path = directory + "/" + file
                let groff = try runProgram("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", path])
                #expect(groff.status == 0 && groff.standardError.isEmpty, "\(file): \(groff.standardError)")
                let man = try runProgram("/usr/bin/man", ["-l", path], environment: ["MANPAGER": "cat", "MANWIDTH": "80", "LANG": "C.UTF-8"])
                #expect(man.status == 0, "\(file): \(man.standardError)")
                #expect(man.standardOutput.contains(String(file.dropLast(2))), "\(file)")
            }
        }

        @Test func aCommandsPageHasItsOptionsDefaultsAndExclusiveSets() throws {
            let flash = try runBinary(["man", "firmware", "flash"])
            #expect(flash.status == 0)
            let file = try makeTemporaryDirectory() + "/flash.1"
            try flash.standardOutput.write(toFile: file, atomically: true, encoding: .utf8)
            let man = try runProgram("/usr/bin/man", ["-l", file], environment: ["MANPAGER": "cat", "MANWIDTH": "200", "LANG": "C.UTF-8"])
            let page = collapsed(man.standardOutput.replacingOccurrences(of: "\u{2010}", with: "-"))
            #expect(page.contains("grokctl-firmware-flash - " + text(.commandFirmwareFlashAbstract, .en)), "\(page)")
            #expect(page.contains("--min-battery <percent>"))
            #expect(page.contains(text(.helpDefault, .en, "20")))
            #expect(page.contains("--name | --version | --package"))
            #expect(page.contains("GLOBAL OPTIONS"))
            let german = try runBinary(["--lang", "de", "man", "provision"])
            #expect(german.standardOutput.contains(".SH BEZEICHNUNG"))
            #expect(german.standardOutput.contains(ManPages.escape(text(.commandProvisionAbstract, .de))))
        }

        /// The EXIT STATUS section of `command`'s page: each status and its meaning.
        static func exitStatuses(_ command: [String], _ language: Language = .en) -> [Int32: String] {
            let result = runInProcess(["--lang", language.rawValue, "man"] + command)
            #expect(result.status == 0, "\(result.standardError)")
            let heading = ".SH " + ManPages.escape(text(.manHeadingExitStatus, language))
            let section = result.standardOutput.components(separatedBy: heading).last!.components(separatedBy: "\n.SH ").first!
            var statuses: [Int32: String] = [:]
            let lines = section.split(separator: "\n").map(String.init)
            for (index, line) in lines.enumerated() where line.hasPrefix(".B ") && index + 1 < lines.count {
                statuses[Int32(line.dropFirst(3))!] = lines[index + 1]
            }
            return statuses
        }

        @Test("each command's page lists its own exit statuses with their meanings, besides 0, 1 and 64")
        func eachPageListsItsOwnExitStatuses() {
            let common: [Int32: String] = [0: ManPages.escape(text(.manExitSuccess, .en)), 1: ManPages.escape(text(.manExitFailure, .en)),
                                           64: ManPages.escape(text(.manExitUsage, .en))]
            #expect(Self.exitStatuses(["firmware", "check"]) == common.merging([100: ManPages.escape(text(.manExitUpdateAvailable, .en))]) { $1 })
            let fleet = common.merging([2: ManPages.escape(text(.manExitFleetIncomplete, .en)),
                                        130: ManPages.escape(text(.manExitFleetInterrupted, .en))]) { $1 }
            for command in ["provision", "rollout", "verify"] { #expect(Self.exitStatuses([command]) == fleet, "\(command)") }
            #expect(Self.exitStatuses(["firmware", "flash"]) == common.merging([130: ManPages.escape(text(.manExitFlashCancelled, .en))]) { $1 })
            #expect(Self.exitStatuses(["ledger", "show"]) == common)
            #expect(Self.exitStatuses(["firmware", "check"], .de)[100] == ManPages.escape(text(.manExitUpdateAvailable, .de)))
        }

        @Test func unknownCommandSuggestsTheClosest() {
            let result = runInProcess(["man", "firmware", "flsh"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("'flash'"), "\(result.standardError)")
        }
    }
}
