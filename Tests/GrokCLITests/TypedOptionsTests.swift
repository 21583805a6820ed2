import Foundation
import Testing

import GrokProtocol

@testable import GrokCLI
@testable import GrokCommandLine

/// Every command of the tree, root first, as paths.
func allCommandPaths() -> [[any ParsableCommand.Type]] {
    var result: [[any ParsableCommand.Type]] = []
    func visit(_ path: [any ParsableCommand.Type]) {
        result.append(path)
        for sub in path.last!.configuration.subcommands { visit(path + [sub]) }
    }
    visit([GrokctlCommand.self])
    return result
}

/// The package checkout these tests were built from.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

extension CLI {
    @Suite("Typed options")
    struct TypedOptionsTests {
        @Test func everyDeclaredDefaultSatisfiesItsOwnType() throws {
            for path in allCommandPaths() {
                for option in path.last!.configuration.options + GlobalOptions.declarations {
                    guard let defaultValue = option.defaultValue else { continue }
                    #expect(throws: Never.self, "\(option.spelling) of \(path.last!.configuration.name)") {
                        _ = try option.valueType.parse(defaultValue, option: option.spelling)
                    }
                }
            }
        }

        /// A default is written once, on its declaration: no command falls back to a
        /// literal of its own (`values.value(Self.duration) ?? "5"` was written 14 times).
        @Test func noCommandRepeatsADefaultInItsCode() throws {
            let directories = ["Sources/GrokCLI/Commands", "Sources/GrokCLI/Options"]
            var repeats: [String] = []
            for directory in directories {
                let full = packageRoot + "/" + directory
                for file in try FileManager.default.contentsOfDirectory(atPath: full) where file.hasSuffix(".swift") {
                    let source = try String(contentsOfFile: full + "/" + file, encoding: .utf8)
                    for (number, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                    where line.contains("values.value(") && line.range(of: #"\) \?\? "[^"]+""#, options: .regularExpression) != nil {
                        repeats.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                    }
                }
            }
            #expect(repeats.isEmpty, "\(repeats)")
        }

        @Test func commandsReadTheDeclaredDefault() throws {
            let outcome = ArgumentParser(root: GrokctlCommand.self, globals: GlobalOptions.declarations)
                .parse(["tag", "read", "--device", "sim:0", "--epc", "3034257BF7194E4000001A85"])
            guard case .run(let path, let values) = outcome else { throw UnexpectedOutcome() }
            let command = try #require(try path.last!.init(values) as? TagReadCommand)
            #expect(command.offset == Int(TagCommand.offset.defaultValue!))
            #expect(command.length == Int(TagReadCommand.length.defaultValue!))
            #expect(command.target.password == UInt32(TagCommand.password.defaultValue!, radix: 16))
            #expect(command.bank == .user && TagCommand.bank.defaultValue == "user")
        }

        @Test(arguments: [
            (["tag", "read", "--device", "sim:0", "--epc", "ZZZZ"], "an EPC is 8 to 54 hex digits, in whole bytes"),
            (["tag", "read", "--device", "sim:0", "--epc", "3034257BF7194E4000001A85", "--offset", "3"], "a multiple of 2"),
            (["inventory", "--device", "sim:0", "--duration", "0"], "greater than 0 and at most 3600"),
            (["inventory", "--device", "sim:0", "--duration", "soon"], "greater than 0 and at most 3600"),
            (["tag", "lock", "--device", "sim:0", "--epc", "3034257BF7194E4000001A85", "--payload", "FFFFFF"],
             "at most 5 digits"),
            (["ledger", "show", "--limit", "0"], "from 1 to 1000000"),
            (["--lang", "it", "devices"], "use one of en, es, fr, de, or a locale name such as de_DE"),
        ])
        func aBadValueSaysWhyAndWhatIsAllowed(arguments: [String], reason: String) {
            let result = runInProcess(arguments)
            #expect(result.status == 64)
            let option = arguments.last { $0.hasPrefix("--") }!
            let value = arguments[arguments.lastIndex(of: option)! + 1]
            #expect(result.standardError.hasPrefix("Error: '\(value)' is not valid for '\(option)': "), "\(result.standardError)")
            #expect(result.standardError.contains(reason), "\(result.standardError)")
        }

        @Test func theReasonIsInTheUsersLanguage() {
            let result = runInProcess(["--lang", "de", "inventory", "--device", "sim:0", "--duration", "0"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("„0“ ist für „--duration“ ungültig: geben Sie eine Zahl größer als 0 und höchstens 3600 an."))
            let json = runInProcess(["--json", "tag", "read", "--device", "sim:0", "--epc", "ZZZZ"])
            #expect(json.standardError.contains(#""code":"usage_bad_value""#))
        }

        @Test(arguments: ["de_DE", "DE", "de_DE.UTF-8", "de"])
        func langTakesALocaleNameInAnyCase(value: String) {
            for arguments in [["--lang", value, "devices", "--help"], ["devices", "--lang=\(value)", "--help"]] {
                let result = runInProcess(arguments)
                #expect(result.status == 0, "\(arguments): \(result.standardError)")
                #expect(result.standardOutput.hasPrefix(text(.helpHeadingOverview, .de)), "\(arguments)")
            }
            let outcome = ArgumentParser(root: GrokctlCommand.self, globals: GlobalOptions.declarations)
                .parse(["--lang", value, "devices"])
            guard case .run(_, let values) = outcome else { Issue.record("\(outcome)"); return }
            #expect(GlobalOptions(values, environment: [:]).language == .de)
        }

        @Test func exclusiveOptionsAreRefusedByTheParserFromTheirDeclaration() {
            let parser = ArgumentParser(root: GrokctlCommand.self, globals: GlobalOptions.declarations)
            for (arguments, pair) in [
                (["provision", "--profile", "p.json", "--device", "sim:0", "--interactive", "--unattended"],
                 ("--interactive", "--unattended")),
                (["firmware", "flash", "--device", "sim:0", "--version", "1.8.0", "--package", "a.ugif"], ("--version", "--package")),
                (["ledger", "export", "--csv", "--json"], ("--csv", "--json")),
                (["firmware", "download", "--name", "x", "--all"], ("--name", "--all")),
            ] {
                guard case .failure(let error, _) = parser.parse(arguments) else {
                    Issue.record("\(arguments) parsed"); continue
                }
                #expect(error == .conflictingOptions(pair.0, pair.1), "\(arguments)")
            }
        }

        @Test func aDashOutputIsStandardOutput() throws {
            let parser = ArgumentParser(root: GrokctlCommand.self, globals: GlobalOptions.declarations)
            for (arguments, file) in [(["ledger", "export", "--csv", "--output", "-"], nil),
                                      (["ledger", "export", "--csv"], nil), (["ledger", "export", "--csv", "-o", "s.csv"], "s.csv")] {
                guard case .run(let path, let values) = parser.parse(arguments) else { throw UnexpectedOutcome() }
                let command = try #require(try path.last!.init(values) as? LedgerExportCommand)
                #expect(command.outputFile == file, "\(arguments)")
            }
            #expect(LedgerExportCommand.output.valueType == .outputFile)
        }

        @Test func anEmptyOrBlankPathIsRefusedWithTheRule() {
            let result = runInProcess(["provision", "--profile", " ", "--device", "sim:0"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("give a value that is not empty"), "\(result.standardError)")
        }
    }
}
