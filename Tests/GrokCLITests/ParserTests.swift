import Testing

@testable import GrokCLI
@testable import GrokCommandLine

struct UnexpectedOutcome: Error {}

extension CLI {
    @Suite("Parser")
    struct ParserTests {
        func parse(_ arguments: [String]) -> ParseOutcome {
            ArgumentParser(root: GrokctlCommand.self, globals: GlobalOptions.declarations).parse(arguments)
        }

        /// The command names and values of a `.run` outcome.
        func run(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> (
            names: [String], values: ParsedValues
        ) {
            guard case .run(let path, let values) = parse(arguments) else {
                Issue.record("expected .run for \(arguments), got \(parse(arguments))", sourceLocation: sourceLocation)
                throw UnexpectedOutcome()
            }
            return (path.map { $0.configuration.name }, values)
        }

        /// The error of a `.failure` outcome.
        func failure(_ arguments: [String]) -> CLIError? {
            if case .failure(let error, _) = parse(arguments) { return error }
            return nil
        }

        func helpPath(_ arguments: [String]) -> [String]? {
            if case .help(let path) = parse(arguments) { return path.map { $0.configuration.name } }
            return nil
        }

        @Test func nestedSubcommandsAndPositionalArgument() throws {
            let (names, values) = try run(["audio", "decode", "link.wav"])
            #expect(names == ["grokctl", "audio", "decode"])
            #expect(values.argument(AudioDecodeCommand.file) == "link.wav")
        }

        @Test(arguments: [["--lang", "de", "devices"], ["--lang=de", "devices"], ["devices", "--lang", "de"],
                          ["devices", "--lang=de"]])
        func optionValueSeparateOrInlineBeforeOrAfterSubcommand(_ arguments: [String]) throws {
            let (names, values) = try run(arguments)
            #expect(names == ["grokctl", "devices"])
            #expect(values.value(GlobalOptions.lang) == "de")
        }

        @Test func flagsLongShortAndAbsent() throws {
            let (_, values) = try run(["--json", "devices", "-q"])
            #expect(values.flag(GlobalOptions.json))
            #expect(values.flag(GlobalOptions.quiet))
            #expect(!values.flag(GlobalOptions.realtime))
            let (_, none) = try run(["devices"])
            #expect(!none.flag(GlobalOptions.json))
            #expect(none.value(GlobalOptions.bench) == nil)
        }

        @Test func repeatableOptionKeepsOrder() throws {
            let (_, values) = try run(["info", "--device", "sim:0", "--device=sim:1", "--device", "alsa:hw:1,0"])
            #expect(values.values(InfoCommand.device) == ["sim:0", "sim:1", "alsa:hw:1,0"])
        }

        @Test func allGlobalOptionsAfterSubcommand() throws {
            let (_, values) = try run([
                "devices", "--bench", "/b", "--record-audio", "/r", "--realtime", "--alsa-config", "/a.conf",
            ])
            let globals = GlobalOptions(values, environment: [:])
            #expect(globals.bench == "/b")
            #expect(globals.recordAudio == "/r")
            #expect(globals.realtime)
            #expect(globals.alsaConfig == "/a.conf")
        }

        @Test func terminatorMakesEverythingPositional() throws {
            let (_, values) = try run(["audio", "decode", "--", "--help.wav"])
            #expect(values.argument(AudioDecodeCommand.file) == "--help.wav")
            #expect(failure(["firmware", "verify", "--", "a.ugif", "-q"]) == .unexpectedArgument("-q"))
            // A repeating argument takes them all, options' look-alikes included.
            let (_, both) = try run(["audio", "decode", "--", "a.wav", "-q"])
            #expect(both.arguments(AudioDecodeCommand.file) == ["a.wav", "-q"])
        }

        @Test func dashAloneIsAValue() throws {
            let (_, values) = try run(["emulate", "--state", "s", "--input", "-", "--output", "o"])
            #expect(values.value(EmulateCommand.input) == "-")
        }

        @Test func defaultValueWhenAbsent() throws {
            let (_, values) = try run(["emulate", "--state", "s", "--input", "i", "--output", "o"])
            #expect(values.value(EmulateCommand.rate) == "44100")
        }

        @Test func unknownOptionWithAndWithoutSuggestion() {
            #expect(failure(["devices", "--jsno"]) == .unknownOption("--jsno", suggestion: "--json"))
            #expect(failure(["--bogus"]) == .unknownOption("--bogus", suggestion: nil))
            #expect(failure(["devices", "-x"]) == .unknownOption("-x", suggestion: nil))
            // Options of one command are unknown to another.
            #expect(failure(["devices", "--device", "sim:0"]) == .unknownOption("--device", suggestion: nil))
        }

        @Test(arguments: [["--lang"], ["--lang", "--json", "devices"], ["--bench=", "devices"], ["devices", "--lang", "-q"]])
        func missingValue(_ arguments: [String]) {
            let option = arguments.contains("--bench=") ? "--bench" : "--lang"
            #expect(failure(arguments) == .missingValue(option: option))
        }

        @Test func unknownSubcommandSuggestsClosest() {
            #expect(failure(["devcies"]) == .unknownSubcommand("devcies", suggestion: "devices"))
            #expect(failure(["emulte"]) == .unknownSubcommand("emulte", suggestion: "emulate"))
            #expect(failure(["audio", "decod"]) == .unknownSubcommand("decod", suggestion: "decode"))
            #expect(failure(["calibrate"]) == .unknownSubcommand("calibrate", suggestion: nil))
            #expect(failure(["provison"]) == .unknownSubcommand("provison", suggestion: "provision"))
        }

        @Test func badValuesOfFixedChoices() {
            #expect(failure(["--lang", "it"]) == .badValue(value: "it", option: "--lang", rule: .language(["en", "es", "fr", "de"])))
            #expect(
                failure(["emulate", "--state", "s", "--input", "i", "--output", "o", "--rate", "-5"])
                    == .invalidChoice(value: "-5", option: "--rate", choices: ["44100", "48000"]))
        }

        @Test func singleValueOptionGivenTwice() {
            #expect(failure(["--lang", "de", "devices", "--lang", "fr"]) == .duplicateOption("--lang"))
        }

        @Test func flagGivenAValue() {
            #expect(failure(["devices", "--json=yes"]) == .flagWithValue("--json"))
        }

        @Test func missingAndUnexpectedArguments() {
            #expect(failure(["audio", "decode"]) == .missingArgument(name: .valueFile))
            #expect(failure(["firmware", "verify", "a.ugif", "b.ugif"]) == .unexpectedArgument("b.ugif"))
            #expect(failure(["audio", "decode", "a.wav", "b.wav"]) == nil)
            #expect(failure(["devices", "extra"]) == .unexpectedArgument("extra"))
        }

        @Test func missingRequiredOption() {
            #expect(failure(["info"]) == .missingOption(option: "--device"))
            #expect(failure(["emulate", "--input", "i", "--output", "o"]) == .missingOption(option: "--state"))
        }

        @Test func helpAtEveryLevelWinsOverErrors() {
            #expect(helpPath(["--help"]) == ["grokctl"])
            #expect(helpPath(["-h"]) == ["grokctl"])
            #expect(helpPath(["devices", "-h"]) == ["grokctl", "devices"])
            #expect(helpPath(["audio", "decode", "--bogus", "--help"]) == ["grokctl", "audio", "decode"])
            #expect(helpPath(["info", "--help"]) == ["grokctl", "info"])
            #expect(helpPath(["-qh", "devices"]) == ["grokctl", "devices"])
            #expect(helpPath(["nope", "--help"]) == ["grokctl"])
            // After `--`, -h is an argument.
            #expect(helpPath(["audio", "decode", "--", "-h"]) == nil)
        }

        @Test func versionOnlyOnTheRoot() {
            guard case .version = parse(["--version"]) else {
                Issue.record("--version did not parse as .version")
                return
            }
            #expect(failure(["devices", "--version"]) == .unknownOption("--version", suggestion: nil))
            // A subcommand's own `--version <v>` is its option, not a request for grokctl's version.
            if case .run(_, let values) = parse(["firmware", "flash", "--device", "sim:0", "--version", "1.8.0"]) {
                #expect(values.value(FirmwareFlashCommand.version) == "1.8.0")
            } else {
                Issue.record("firmware flash --version did not parse as its option")
            }
        }

        @Test func groupWithoutSubcommandRunsItsHelp() throws {
            let (names, _) = try run(["audio"])
            #expect(names == ["grokctl", "audio"])
            let result = runInProcess(["audio"])
            #expect(result.status == 0)
            #expect(result.standardOutput == runInProcess(["audio", "--help"]).standardOutput)
            #expect(result.standardOutput.contains("decode"))
        }

        @Test func helpSubcommandMatchesHelpFlag() {
            for path in [[], ["devices"], ["audio"], ["audio", "decode"], ["emulate"], ["info"], ["help"]] {
                let viaCommand = runInProcess(["help"] + path)
                let viaFlag = runInProcess(path + ["--help"])
                #expect(viaCommand.status == 0)
                #expect(viaCommand.standardOutput == viaFlag.standardOutput, "help \(path)")
            }
            let unknown = runInProcess(["help", "devcies"])
            #expect(unknown.status == 64)
            #expect(unknown.standardError.contains("'devices'"))
        }

        @Test func editDistanceCountsTranspositionsOnce() {
            #expect(Suggestions.editDistance("devices", "devices") == 0)
            #expect(Suggestions.editDistance("devcies", "devices") == 1)
            #expect(Suggestions.editDistance("", "abc") == 3)
            #expect(Suggestions.editDistance("kitten", "sitting") == 3)
            #expect(Suggestions.closest(to: "x", among: ["info"]) == nil)
        }

        @Test func commandOptionsDoNotShadowGlobals() {
            var stack: [any ParsableCommand.Type] = [GrokctlCommand.self]
            let globals = Set(GlobalOptions.declarations.map(\.long) + ["help"])
            while let command = stack.popLast() {
                let own = command.configuration.options.map(\.long)
                // `--version` is the root's only (the parser offers it nowhere else), so a
                // subcommand may have an option of that name (`firmware flash --version 1.8.0`).
                if ObjectIdentifier(command) == ObjectIdentifier(GrokctlCommand.self) { #expect(!own.contains("version")) }
                #expect(Set(own).isDisjoint(with: globals), "\(command.configuration.name)")
                #expect(Set(own).count == own.count)
                stack += command.configuration.subcommands
            }
        }
    }
}
