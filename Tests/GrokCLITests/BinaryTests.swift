import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    /// Runs the built `grokctl` executable and compares what it prints, like
    /// swift-argument-parser's `AssertExecuteCommand`.
    @Suite("Binary")
    struct BinaryTests {
        @Test func versionPrintsOnlyTheVersion() throws {
            let result = try runBinary(["--version"])
            #expect(result.status == 0)
            #expect(result.standardOutput == GrokVersion.current + "\n")
            #expect(result.standardOutput == "0.1.0\n")
            #expect(result.standardError == "")
        }

        @Test func helpDevicesInEnglish() throws {
            let result = try runBinary(["help", "devices"])
            #expect(result.status == 0)
            #expect(result.standardError == "")
            #expect(result.standardOutput == Self.devicesHelp)
            #expect(try runBinary(["devices", "--help"]).standardOutput == Self.devicesHelp)
            #expect(try runBinary(["devices", "-h"]).standardOutput == Self.devicesHelp)
        }

        @Test(arguments: Language.allCases)
        func helpIsTranslated(_ language: Language) throws {
            let root = try runBinary(["--help", "--lang", language.rawValue])
            #expect(root.status == 0)
            #expect(
                collapsed(root.standardOutput).hasPrefix(
                    text(.helpHeadingOverview, language) + " " + text(.commandRootAbstract, language)))
            #expect(root.standardOutput.contains("\n" + text(.helpHeadingUsage, language) + " grokctl [<"))
            #expect(root.standardOutput.contains("\n" + text(.helpHeadingOptions, language) + "\n"))
            #expect(root.standardOutput.contains("\n" + text(.helpHeadingSubcommands, language) + "\n"))
            #expect(root.standardOutput.contains("\n  devices                 "))
            #expect(collapsed(root.standardOutput).contains(" devices " + text(.commandDevicesAbstract, language) + " "))

            let devices = try runBinary(["help", "devices"], environment: ["LANG": "\(language.rawValue)_XX.UTF-8"])
            #expect(devices.status == 0)
            #expect(devices.standardOutput.hasPrefix(
                text(.helpHeadingOverview, language) + " " + text(.commandDevicesAbstract, language) + "\n"))
            #expect(devices.standardOutput.contains("\n" + text(.helpHeadingGlobalOptions, language) + "\n"))
            #expect(devices.standardOutput.contains(
                "\n" + text(.helpHeadingUsage, language) + " grokctl devices [--probe] [--restore-levels] [<" + text(.valueOptions, language) + ">]\n"))
            #expect(devices.standardOutput == (try runBinary(["devices", "--help", "--lang", language.rawValue]).standardOutput))
        }

        @Test(arguments: Language.allCases)
        func unknownOptionIsAUsageErrorInTheUsersLanguage(_ language: Language) throws {
            let result = try runBinary(["devices", "--bogus"], environment: ["LC_ALL": "\(language.rawValue)_ZZ.UTF-8"])
            #expect(result.status == 64)
            #expect(result.standardOutput == "")
            let expected = [
                text(.errorLine, language, text(.errorUnknownOption, language, "--bogus")),
                text(.usageLine, language, "grokctl devices [--probe] [--restore-levels] [<\(text(.valueOptions, language))>]"),
                "  " + text(.usageSeeHelp, language, "grokctl devices --help"),
            ]
            #expect(result.standardError == expected.joined(separator: "\n") + "\n")
        }

        @Test func usageErrorExactEnglishText() throws {
            let result = try runBinary(["devcies"])
            #expect(result.status == 64)
            #expect(result.standardError == """
                Error: Unknown subcommand 'devcies'. Did you mean 'devices'?
                Usage: grokctl [<options>] <subcommand>
                  See 'grokctl --help' for more information.

                """)
            let value = try runBinary(["emulate", "--state", "s", "--input", "i", "--output", "o", "--rate", "22050"])
            #expect(value.status == 64)
            #expect(value.standardError.hasPrefix(
                "Error: The value '22050' is not valid for '--rate'; use one of: 44100, 48000.\nUsage: grokctl emulate "))
            let missing = try runBinary(["--lang"])
            #expect(missing.status == 64)
            #expect(missing.standardError.hasPrefix("Error: Missing value for option '--lang'.\n"))
        }

        @Test func jsonErrorShape() throws {
            for arguments in [["--json", "devices", "--bogus"], ["devices", "--bogus", "--json"]] {
                let result = try runBinary(arguments, environment: ["LANG": "de_DE.UTF-8"])
                #expect(result.status == 64)
                #expect(result.standardOutput == "")
                #expect(result.standardError.hasSuffix("\n"))
                #expect(result.standardError.split(separator: "\n").count == 1)
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(result.standardError.utf8)) as? [String: Any])
                #expect(object.keys.sorted() == ["error"])
                let error = try #require(object["error"] as? [String: Any])
                #expect(error.keys.sorted() == ["code", "message"])
                #expect(error["code"] as? String == "usage_unknown_option")
                #expect(error["message"] as? String == "Unknown option '--bogus'.")  // English, whatever the locale
            }
        }

        struct EnvironmentCase: Sendable, CustomTestStringConvertible {
            let environment: [String: String]
            let expected: Language
            var testDescription: String { "\(environment) → \(expected)" }
        }

        @Test(arguments: [
            EnvironmentCase(environment: [:], expected: .en),
            EnvironmentCase(environment: ["LANG": "de_DE.UTF-8"], expected: .de),
            EnvironmentCase(environment: ["LANG": "fr_CA"], expected: .fr),
            EnvironmentCase(environment: ["LC_MESSAGES": "es_ES.UTF-8", "LANG": "de_DE.UTF-8"], expected: .es),
            EnvironmentCase(environment: ["LC_ALL": "fr_FR.UTF-8", "LC_MESSAGES": "es_ES", "LANG": "de_DE"], expected: .fr),
            EnvironmentCase(environment: ["LANGUAGE": "it:es", "LC_ALL": "de_DE.UTF-8"], expected: .es),
            EnvironmentCase(environment: ["LANGUAGE": "de", "LC_ALL": "C"], expected: .en),
            EnvironmentCase(environment: ["LANGUAGE": "fr", "LANG": "POSIX"], expected: .en),
            EnvironmentCase(environment: ["LANG": "C"], expected: .en),
        ])
        func languageFromEnvironment(_ testCase: EnvironmentCase) throws {
            let result = try runBinary(["--help"], environment: testCase.environment)
            #expect(result.status == 0)
            let expected = text(.helpHeadingOverview, testCase.expected) + " " + text(.commandRootAbstract, testCase.expected)
            #expect(collapsed(result.standardOutput).hasPrefix(expected))
            // And --lang beats all of it.
            let forced = try runBinary(["--lang", "de", "--help"], environment: testCase.environment)
            #expect(forced.standardOutput.hasPrefix("ÜBERSICHT: "))
        }

        @Test func failureExitsWithOne() throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = directory + "/file"
            _ = FileManager.default.createFile(atPath: file, contents: Data())
            let text = try runBinary(["devices", "--bench", file], environment: ["LANG": "fr_FR.UTF-8"])
            #expect(text.status == 1)
            #expect(
                text.standardError
                    == "Erreur\u{00A0}: Le banc d’essai «\u{00A0}\(file)\u{00A0}» n’est pas un répertoire\u{00A0}; "
                    + "indiquez un répertoire avec --bench.\n")
            let json = try runBinary(["devices", "--bench", file, "--json"])
            #expect(json.status == 1)
            #expect(json.standardError.hasPrefix("{\"error\":{\"code\":\"bench_not_directory\",\"message\":\"The bench '\(file)' is not a directory"))
        }

        static let devicesHelp = """
            OVERVIEW: List sound devices and emulated Grokkers.

            Shows the ALSA devices a Grokker can be plugged into and the emulated Grokkers
            that have state on the bench. Use the name in the DEVICE column with --device.
            With --probe, also asks every sound card and emulated Grokker at once who
            answers there.

            USAGE: grokctl devices [--probe] [--restore-levels] [<options>]

            OPTIONS:
              --probe                 Handshake on every sound card and emulated Grokker at
                                      once and show who answers there: serial, firmware and
                                      link setting, or why none does. A port another grokctl
                                      holds is reported busy and left alone.
              --restore-levels        Put back the sound cards' levels a grokctl that ended
                                      (a crash, kill -9) left raised, then list.
              -h, --help              Show help information.

            GLOBAL OPTIONS:
              --lang <language>       Language of messages: en, es, fr or de. Without it,
                                      grokctl follows LANGUAGE, LC_ALL, LC_MESSAGES and
                                      LANG.
              --json                  Print JSON for scripts (stable codes, no prose);
                                      errors go to stderr as JSON objects.
              -q, --quiet             Print only results and errors, no progress or hints
                                      (provision, rollout and verify print only errors:
                                      their result is the exit code and the report).
              --bench <dir>           Directory where emulated Grokkers keep their state
                                      (default: $GROKCTL_BENCH, else
                                      $XDG_STATE_HOME/grokctl/bench, else
                                      ~/.local/state/grokctl/bench).
              --record-audio <dir>    Record the audio exchanged with each Grokker as WAV
                                      files in this directory.
              --realtime              Pace emulated Grokkers to the wall clock, as real ones
                                      run (for demonstrations).
              --alsa-config <file>    ALSA configuration file to load on top of the system
                                      one (for example, to define test devices).
              --keep-levels           Leave the sound cards' mixer levels as they are
                                      (grokctl otherwise raises them for the session and
                                      puts them back after).
              --lock-wait <seconds>   How long to wait for a Grokker another grokctl is
                                      working on before giving up. (default: 3)

            """
    }
}
