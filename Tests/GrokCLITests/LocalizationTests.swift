import Foundation
import GrokBasics
import GrokAudio
import GrokFleet
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("Localization")
    struct LocalizationTests {
        @Test(arguments: Language.allCases)
        func catalogHasExactlyTheKeysWithEnglishPlaceholders(_ language: Language) throws {
            let catalog = try Catalogs.load(language)
            let english = try Catalogs.load(.en)
            let expected = Set(MessageKey.allCases.map(\.rawValue))
            #expect(Set(catalog.keys).subtracting(expected).isEmpty, "stray keys in \(language).json")
            for key in MessageKey.allCases {
                guard let value = catalog[key.rawValue] else {
                    Issue.record("\(language).json lacks \(key.rawValue)")
                    continue
                }
                let empty = value.texts.contains { $0.isEmpty }
                #expect(!empty)
                #expect(
                    Catalogs.placeholders(in: value) == english[key.rawValue].map { Catalogs.placeholders(in: $0) },
                    "\(language).json \(key.rawValue): placeholders differ from English")
            }
        }

        @Test("a change is written with one arrow, →, in every language (never ->)", arguments: Language.allCases)
        func oneArrow(_ language: Language) throws {
            for (key, value) in try Catalogs.load(language) {
                #expect(!value.texts.contains { $0.contains("->") }, "\(language).json \(key)")
            }
        }

        @Test("French names a rollout stage 'palier' wherever English says stage, never 'étape' (a workflow step)")
        func frenchStageIsPalier() throws {
            let english = try Catalogs.load(.en), french = try Catalogs.load(.fr)
            var stages = 0
            for (key, value) in english where value.texts.contains(where: { $0.range(of: #"\b[Ss]tages?\b"#, options: .regularExpression) != nil }) {
                let texts = try #require(french[key]).texts
                stages += 1
                #expect(!texts.contains { $0.contains("étape") }, "fr.json \(key): \(texts)")
            }
            #expect(stages > 20)
        }

        @Test("French writes an elision with ’ (l’image, n’est), as the rest of its catalog does, never with a straight quote")
        func frenchElisionsAreTypographic() throws {
            for (key, value) in try Catalogs.load(.fr) {
                for text in value.texts {
                    #expect(text.range(of: #"\p{L}'\p{L}"#, options: .regularExpression) == nil, "fr.json \(key): \(text)")
                }
            }
        }

        @Test("a date says its time zone, in every language")
        func datesSayTheirZone() throws {
            let date = Date(timeIntervalSince1970: 1_736_942_400)
            for language in Language.allCases {
                let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
                let text = LocaleFormat.dateTime(date, language, timeZone: berlin)
                #expect(text.hasSuffix(" " + (berlin.abbreviation(for: date) ?? "-")), "\(text)")
                #expect(LocaleFormat.dateTime(date, language, timeZone: try #require(TimeZone(identifier: "UTC"))) != text)
            }
        }

        @Test("a message about a device drops the device it starts with where the line names it already")
        func messageWithoutItsDevice() {
            for language in Language.allCases {
                let localizer = Localizer(language: language)
                let full = localizer.fleetMessage(code: "fleet_battery_low", arguments: ["sim:2", "10", "30"])
                let short = localizer.fleetMessage(code: "fleet_battery_low", arguments: ["sim:2", "10", "30"], about: "sim:2")
                #expect(full.hasPrefix("sim:2") && !short.contains("sim:2") && full.hasSuffix(short), "\(language): \(short)")
                #expect(localizer.fleetMessage(code: "fleet_battery_low", arguments: ["sim:2", "10", "30"], about: "sim:3") == full)
            }
        }

        /// The names `MessageKey` had when it was kept by hand, where they differ from the rule.
        static let legacyNames: Set<String> = [
            "optionJSON", "optionALSAConfig", "argumentWAVFile", "decodeStatusOK", "decodeStatusBadCRC", "devicesNoALSA",
            "errorUnknownOption", "errorUnknownSubcommand", "errorMissingValue", "errorMissingOption", "errorMissingArgument",
            "errorUnexpectedArgument", "errorDuplicateOption", "errorFlagWithValue", "errorInvalidValue", "errorInvalidChoice",
            "errorInvalidDevice", "errorDeviceOutOfRange", "errorDuplicateDevice", "errorAudioIO", "errorAudioBadWAV", "valueURL",
            "optionAllowInsecureHTTP", "listHeadingTUF", "optionCABundle", "packageFactSHA256",
            "errorUsageInvalidServerURL", "errorFirmwarePackageSegmentCRC", "errorFirmwareIO", "errorNetInvalidURL", "optionExportCSV",
        ]

        @Test("every generated MessageKey case is its dotted key in camelCase, or its old hand-written name")
        func messageKeyNamesFollowTheRule() {
            #expect(MessageKey.allCases.count == (try? Catalogs.load(.en).count))
            for key in MessageKey.allCases {
                let words = key.rawValue.split(whereSeparator: { $0 == "." || $0 == "_" })
                let rule = String(words[0]) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
                let name = String(describing: key)
                #expect(name == rule || Self.legacyNames.contains(name), "\(key.rawValue) is named \(name), not \(rule)")
            }
            // The rule's spelling of an old name still compiles, as an alias.
            #expect(MessageKey.optionJson == .optionJSON && MessageKey.errorUsageUnknownOption == .errorUnknownOption)
        }

        @Test func englishPlaceholdersAreNumberedFromZeroWithoutGaps() throws {
            for (key, value) in try Catalogs.load(.en) {
                let numbers = Catalogs.placeholders(in: value)
                #expect(numbers == Set(0..<numbers.count), "\(key)")
            }
        }

        @Test func translationsDifferFromEnglish() throws {
            let english = try Catalogs.load(.en)
            for language in [Language.es, .fr, .de] {
                let catalog = try Catalogs.load(language)
                // Left out: region names (mostly proper nouns: China, Israel) and terms, units
                // and formats that every one of these languages writes as English does.
                let international: Set<MessageKey> = [
                    .inventoryColumnEpc, .inventoryColumnRssi, .infoBitRate, .infoMilliseconds, .infoDeviceFailed,
                    .infoHardware, .valueHex, .valueUri, .packageFactSHA256,
                    // "Grokker" is a name; "firmware" is the glossary's term in es, fr and de
                    // (docs/glossary.md); a separator before nested figures.
                    .infoSummaryTotal, .infoColumnFirmware, .fleetColumnFirmware, .fleetStepFirmware, .fleetFirmwareChange,
                    .fleetSmokeFiguresClause, .fleetProvisioningChangeMore,
                    // A step's line: punctuation around the device, step, result and message.
                    .fleetStepLine,
                    // A percentage; "Rollout" is the glossary's German term.
                    .fleetStagePercent, .fleetStageColumnRollout,
                    // Punctuation joining three figures (French adds a space before the semicolon).
                    .fleetStatusSummary,
                    // A detail shown as it is (a caller that still passes prose, or a non-coded error).
                    .errorFleetUntypedCause,
                    // Templates whose words are all plural entries of their own (the same
                    // frame in several languages), a name's plural, and French "page(s)".
                    .locateLine, .decodeSummaryChannel, .inventorySummary, .countGrokkers, .countPages,
                    // A bad .ugif nested whole: the UgifError's own message, in the reader's language.
                    .firmwareDetailUgif,
                    // The field a .ugif name disagrees on: "version" is the French word too.
                    .firmwareFieldVersion,
                    // The product's name as the devices table's heading.
                    .devicesColumnGrokker,
                    // A mixer control's name (from the card) and its percentage.
                    .devicesLevelPlayback,
                ]
                let same = MessageKey.allCases.filter {
                    !$0.rawValue.hasPrefix("region.") && !international.contains($0)
                        && catalog[$0.rawValue] == english[$0.rawValue]
                }
                // Only words that are the same in both languages may match.
                #expect(same.count < 8, "\(language): \(same.map(\.rawValue))")
                #expect(catalog[MessageKey.helpHeadingUsage.rawValue] != english[MessageKey.helpHeadingUsage.rawValue])
            }
        }

        @Test("library errors' decimal numbers follow the language; versions and names do not change")
        func errorNumbersFollowTheLanguage() {
            let german = Localizer(language: .de)
            #expect(german.localizedNumber("12.5") == "12,5")
            #expect(german.localizedNumber("-0.25") == "-0,25")
            #expect(german.localizedNumber("1.8.0") == "1.8.0")
            #expect(german.localizedNumber("a.json") == "a.json")
            #expect(german.localizedNumber("12.") == "12.")
            #expect(Localizer(language: .en).localizedNumber("12.5") == "12.5")
            let error = FleetError.notInRollout(device: "sim:3", serial: "12345678", percentage: 12.5)
            #expect(Localizer(language: .fr).message(for: error).contains("12,5"))
            #expect(Localizer(language: .en).message(for: error).contains("12.5"))
        }

        @Test func formatFillsNumberedPlaceholders() {
            #expect(Catalogs.format("{1} and {0}, {0}", ["a", "b"]) == "b and a, a")
            #expect(Catalogs.format("{2} stays", ["a"]) == "{2} stays")
            #expect(Catalogs.format("{x} {} {", ["a"]) == "{x} {} {")
            #expect(Catalogs.format("braces {{0}}", ["a"]) == "braces {a}")
            #expect(Catalogs.placeholders(in: "{0} {12} {a}") == [0, 12])
        }

        struct Case: Sendable, CustomTestStringConvertible {
            let environment: [String: String]
            let expected: Language
            var testDescription: String { "\(environment) → \(expected)" }
        }

        static let cases: [Case] = [
            Case(environment: [:], expected: .en),
            Case(environment: ["LANG": "de_DE.UTF-8"], expected: .de),
            Case(environment: ["LANG": "fr_CA"], expected: .fr),
            Case(environment: ["LANG": "es"], expected: .es),
            Case(environment: ["LANG": "de_AT@euro"], expected: .de),
            Case(environment: ["LANG": "C"], expected: .en),
            Case(environment: ["LANG": "POSIX"], expected: .en),
            Case(environment: ["LANG": "it_IT.UTF-8"], expected: .en),
            Case(environment: ["LC_MESSAGES": "es_ES.UTF-8", "LANG": "de_DE.UTF-8"], expected: .es),
            Case(environment: ["LC_ALL": "fr_FR.UTF-8", "LC_MESSAGES": "es_ES", "LANG": "de_DE"], expected: .fr),
            Case(environment: ["LC_ALL": "", "LC_MESSAGES": "", "LANG": "de_DE"], expected: .de),
            Case(environment: ["LC_ALL": "C", "LANG": "de_DE.UTF-8"], expected: .en),
            Case(environment: ["LANGUAGE": "it:de:fr", "LANG": "es_ES.UTF-8"], expected: .de),
            Case(environment: ["LANGUAGE": "fr_BE", "LC_ALL": "de_DE.UTF-8"], expected: .fr),
            Case(environment: ["LANGUAGE": "", "LANG": "es_MX"], expected: .es),
            // gettext ignores LANGUAGE in the C locale, and when no locale is set at all.
            Case(environment: ["LANGUAGE": "de", "LANG": "C"], expected: .en),
            Case(environment: ["LANGUAGE": "de", "LC_ALL": "POSIX", "LANG": "fr_FR"], expected: .en),
            Case(environment: ["LANGUAGE": "de", "LC_ALL": "C.UTF-8"], expected: .en),
            Case(environment: ["LANGUAGE": "de"], expected: .en),
            // Like gettext, a LANGUAGE list with nothing supported gives the untranslated text.
            Case(environment: ["LANGUAGE": "pt_BR:it", "LANG": "fr_FR.UTF-8"], expected: .en),
        ]

        @Test(arguments: cases)
        func languageFromEnvironment(_ testCase: Case) {
            #expect(Language.resolve(option: nil, environment: testCase.environment) == testCase.expected)
        }

        @Test func langOptionBeatsEnvironment() {
            let environment = ["LANGUAGE": "fr", "LC_ALL": "de_DE.UTF-8"]
            #expect(Language.resolve(option: .es, environment: environment) == .es)
            #expect(runInProcess(["--lang", "es", "--help"], environment: environment).standardOutput.hasPrefix("RESUMEN:"))
        }

        @Test(arguments: Language.allCases)
        func helpHeadingsAreTranslated(_ language: Language) {
            let root = runInProcess(["--help", "--lang", language.rawValue]).standardOutput
            let decode = runInProcess(["--lang", language.rawValue, "audio", "decode", "--help"]).standardOutput
            let audio = runInProcess(["--lang=\(language.rawValue)", "help", "audio"]).standardOutput
            #expect(
                collapsed(root).hasPrefix(text(.helpHeadingOverview, language) + " " + text(.commandRootAbstract, language)))
            for heading in [MessageKey.helpHeadingUsage, .helpHeadingOptions, .helpHeadingSubcommands] {
                #expect(root.contains("\n" + text(heading, language) + "\n") || root.contains("\n" + text(heading, language) + " "))
            }
            #expect(decode.contains("\n" + text(.helpHeadingArguments, language) + "\n"))
            #expect(decode.contains("\n" + text(.helpHeadingGlobalOptions, language) + "\n"))
            #expect(audio.contains("\n" + text(.helpHeadingSubcommands, language) + "\n"))
            if language != .en {
                for english in ["OVERVIEW:", "USAGE:", "OPTIONS:", "SUBCOMMANDS:", "Show help information."] {
                    #expect(!root.contains(english), "\(language) help still says \(english)")
                }
                #expect(!decode.contains("ARGUMENTS:"))
                #expect(!decode.contains("GLOBAL OPTIONS:"))
            }
        }

        @Test(arguments: Language.allCases)
        func helpFitsEightyColumns(_ language: Language) {
            var stack: [[String]] = [[]]
            while let path = stack.popLast() {
                let help = runInProcess(path + ["--help", "--lang", language.rawValue]).standardOutput
                for line in help.split(separator: "\n") {
                    let wrappable = line.trimmingCharacters(in: .whitespaces).contains(" ")
                    #expect(!wrappable || TextWidth.of(line) <= 80, "\(language) \(path): \(line)")
                    #expect(!line.hasSuffix(" "), "\(language) \(path): trailing space in '\(line)'")
                }
                let command = try? HelpCommand.resolve(path, from: Grokctl.root).last
                for sub in command?.configuration.subcommands ?? [] { stack.append(path + [sub.configuration.name]) }
            }
        }

        @Test func everyAudioErrorHasALocalizedMessageWithItsArguments() {
            let samples: [AudioError] = [
                .deviceNotFound(device: "hw:9,0", detail: ErrorDetail("no_pcm")), .deviceBusy(device: "hw:1,0"),
                .unsupportedFormat(device: "hw:1,0", detail: ErrorDetail("accepts_no_data")),
                .io(device: "hw:1,0", operation: "snd_pcm_writei", detail: ErrorDetail("capture_ended")), .closed(port: "sim:2"),
                .badWAV(path: "/tmp/x.wav", detail: ErrorDetail("no_fmt_chunk")), .file(path: "/tmp/x", detail: ErrorDetail("not_regular_file")),
                .stalled(port: "alsa:hw:1,0", seconds: "8"), .timedOut(port: "sim:2", what: "step region", seconds: "300"),
                .cancelled(port: "pipe:/tmp/in"),
            ]
            // Exhaustive: a new AudioError case fails to compile here until it gets a sample and keys.
            for sample in samples {
                switch sample {
                case .deviceNotFound, .deviceBusy, .unsupportedFormat, .io, .closed, .badWAV, .file, .stalled, .timedOut, .cancelled: break
                }
            }
            #expect(Set(samples.map(\.code)).count == 10)
            for sample in samples {
                let key = MessageKey(errorCode: sample.code)
                #expect(key != nil, "no catalog key error.\(sample.code)")
                for language in Language.allCases {
                    let message = Localizer(language: language).message(for: sample)
                    // A detail's code (`no_fmt_chunk`) is shown through its own entry, not as itself.
                    for argument in sample.arguments where !argument.allSatisfy({ $0.isLowercase || $0 == "_" }) {
                        #expect(message.contains(argument), "\(language) \(sample.code)")
                    }
                    #expect(!message.contains("{"), "\(language) \(sample.code): \(message)")
                }
                if let key {
                    let placeholders = Catalogs.placeholders(in: Localizer.english.text(key))
                    #expect(placeholders == Set(0..<sample.arguments.count), "\(sample.code)")
                }
            }
            #expect(Localizer(language: .de).message(for: AudioError.deviceBusy(device: "hw:1,0")).contains("„hw:1,0“"))
        }

        struct UnknownCoded: CodedError {
            var code: String { "frobnicator_jammed" }
            var arguments: [String] { ["x"] }
            var description: String { "the frobnicator jammed; clear it and retry." }
        }

        struct Plain: Error {}

        @Test func errorWithoutCatalogKeyShowsEnglishDescription() {
            let result = Localizer(language: .fr).message(for: UnknownCoded())
            #expect(result == "the frobnicator jammed; clear it and retry.")
            #expect(Localizer.code(for: UnknownCoded()) == "frobnicator_jammed")
            #expect(Localizer.code(for: Plain()) == "internal_error")
        }

        @Test func everyCLIErrorCodeHasAKey() {
            let samples: [CLIError] = [
                .unknownOption("--x", suggestion: "--y"), .unknownSubcommand("x", suggestion: nil),
                .missingValue(option: "--lang"), .missingOption(option: "--device"),
                .missingArgument(name: .valueFile), .unexpectedArgument("x"), .duplicateOption("--lang"),
                .flagWithValue("--json"), .invalidValue(value: "x", option: "--bench"),
                .badValue(value: "ZZZZ", option: "--epc", rule: .epc(minDigits: 8, maxDigits: 54)),
                .badArgument(value: "tcsh", name: .valueShell, rule: .choice(["bash", "zsh", "fish"])),
                .invalidChoice(value: "it", option: "--lang", choices: ["en"]), .devices(.invalidDevice("x")),
                .devices(.deviceOutOfRange(index: "64", spec: "sim:64")), .devices(.duplicateDevice("sim:1")), .invalidRegion("mars"),
                .conflictingOptions("--name", "--package"), .missingOneOf(["<file>", "--name"]), .invalidChannel("Rel ease"),
                .invalidServerURL("ftp://x"), .invalidPercent(value: "120", option: "--min-battery"),
                .invalidFirmwareVersion("1.x"), .configuration(code: "station_settings_not_object", arguments: ["/etc/grokctl/station.json"]),
            ]
            for sample in samples {
                switch sample {
                case .unknownOption, .unknownSubcommand, .missingValue, .missingOption, .missingArgument,
                    .unexpectedArgument, .duplicateOption, .flagWithValue, .invalidValue, .badValue, .badArgument, .invalidChoice,
                    .coded, .configuration, .invalidRegion, .conflictingOptions, .missingOneOf, .invalidChannel, .invalidServerURL,
                    .invalidPercent, .invalidFirmwareVersion:
                    break
                }
                #expect(MessageKey(errorCode: sample.code) != nil, "\(sample.code)")
                let placeholders = Catalogs.placeholders(in: Localizer.english.text(sample.messageKey))
                #expect(placeholders == Set(0..<sample.arguments.count), "\(sample.code)")
            }
            #expect(CLIError.missingArgument(name: .valueFile).description == "Missing expected argument '<file>'.")
            #expect(
                Localizer(language: .de).message(for: CLIError.missingArgument(name: .valueFile))
                    == "Das erforderliche Argument „<Datei>“ fehlt.")
            #expect(
                CLIError.unknownOption("--jsno", suggestion: "--json").description
                    == "Unknown option '--jsno'. Did you mean '--json'?")
        }
    }
}
