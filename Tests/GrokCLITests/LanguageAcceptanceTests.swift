import Foundation
import GrokAudio
import GrokBasics
import GrokFleet
import GrokkerEmulator
import GrokLedger
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    /// Real grokctl runs in Spanish, French and German on a bench where one Grokker fails
    /// its function (smoke) test: help, a usage error, info, provision, inventory, locate,
    /// an audio decode. The output must hold no English word sequence, no plural written
    /// as `(s)` or agreeing with the wrong count, and no decimal point.
    @Suite("Localization acceptance: whole commands in es, fr and de", .serialized)
    struct LanguageAcceptanceTests {
        /// Words a translation never needs, as whole words: their presence means English
        /// leaked in (from Swift, a library or a nested error kept as English prose).
        static let englishWords: Set<String> = [
            "the", "and", "is", "are", "was", "of", "with", "reads", "missing", "weakest", "strongest", "failed",
            "cannot", "passed", "found", "smoke", "read", "answered", "seconds", "not",
            "loader", "registered", "expects", "revisions", "unknown",
        ]

        /// Names and tokens that are the same in every language (`sim:0`, option names, paths).
        static func prose(_ output: String) -> String {
            output.split(whereSeparator: \.isNewline).map { line in
                line.split(separator: " ").filter { word in
                    !word.hasPrefix("-") && !word.contains("/") && !word.contains(":") && !word.contains("=")
                        && !word.contains(".json") && !word.contains("_")
                }.joined(separator: " ")
            }.joined(separator: "\n")
        }

        static func englishWordsIn(_ output: String) -> [String] {
            let words = prose(output).split { !$0.isLetter }.map { $0.lowercased() }
            return words.filter { englishWords.contains($0) }
        }

        /// A decimal number written with a point (`3.5`), not a version (`1.8.0`), a date
        /// (`01.12.26`) or part of a name.
        static func decimalPoints(_ output: String) -> [String] {
            let pattern = #"(?<![\d.\w-])\d+\.\d+(?![\d.\w])"#
            let regex = try! NSRegularExpression(pattern: pattern)
            let text = output as NSString
            return regex.matches(in: output, range: NSRange(location: 0, length: text.length)).map { text.substring(with: $0.range) }
        }

        @Test("the checks themselves catch English, a plural in parentheses and a decimal point")
        func checksCatchTheFaults() {
            #expect(Self.englishWordsIn("sim:1: falló la prueba de humo (missing_tags: 123 reads in 3.013 s)") == ["reads"])
            #expect(Self.englishWordsIn("sim:1: der Funktionstest ist fehlgeschlagen (Referenz-Tags fehlen: 123 Lesungen)").isEmpty)
            #expect(Self.decimalPoints("123 reads in 3.013 s, firmware 1.8.0, le 01.12.26") == ["3.013"])
            #expect(Self.decimalPoints("123 Lesungen in 3,013 s").isEmpty)
        }

        @Test("plural forms follow CLDR: fr counts 0 and 1 as one, en, es and de only 1")
        func pluralRules() {
            for (number, en, fr) in [("0", PluralCategory.other, PluralCategory.one), ("1", .one, .one), ("2", .other, .other),
                                     ("1.5", .other, .one), ("21", .other, .other), ("-1", .one, .one)] {
                #expect(PluralCategory(number, languageCode: "en") == en, "en \(number)")
                #expect(PluralCategory(number, languageCode: "de") == en, "de \(number)")
                #expect(PluralCategory(number, languageCode: "es") == en, "es \(number)")
                #expect(PluralCategory(number, languageCode: "fr") == fr, "fr \(number)")
            }
            #expect(PluralCategory("sim:0", languageCode: "en") == .other)
        }

        @Test("info's summary agrees with its counts in all four languages", arguments: [
            (Language.en, "1", "1", "1 of 1 Grokker answered."), (.en, "1", "3", "1 of 3 Grokkers answered."),
            (.es, "1", "1", "Respondió 1 de 1 Grokker."), (.es, "2", "3", "Respondieron 2 de 3 Grokkers."),
            (.fr, "1", "1", "1 Grokker sur 1 a répondu."), (.fr, "0", "2", "0 Grokker sur 2 a répondu."),
            (.fr, "2", "2", "2 Grokkers sur 2 ont répondu."),
            (.de, "1", "1", "1 von 1 Grokker hat geantwortet."), (.de, "2", "3", "2 von 3 Grokkern haben geantwortet."),
        ])
        func infoSummaryPlurals(_ language: Language, _ answered: String, _ total: String, _ expected: String) {
            #expect(Localizer(language: language).text(.infoSummary, answered, total) == expected)
        }

        /// Every count a person reads agrees with its number: these sentences printed "1 Pakete
        /// in Ordnung", "1 tags", "1 rows (numbers 7)" before their counts became plural entries.
        @Test("counts in decode, inventory, locate, recovery, ledger check and the emulator agree with their numbers", arguments: [
            (Language.en, MessageKey.decodeSummaryChannel, ["Host → Grokker", "1", "1"], "Host → Grokker: 1 packet ok, 1 damaged."),
            (.de, .decodeSummaryChannel, ["Host → Grokker", "1", "0"], "Host → Grokker: 1 Paket in Ordnung, 0 beschädigt."),
            (.de, .decodeSummaryChannel, ["Host → Grokker", "3", "2"], "Host → Grokker: 3 Pakete in Ordnung, 2 beschädigt."),
            (.es, .decodeSummaryChannel, ["Host → Grokker", "1", "1"], "Host → Grokker: 1 paquete correcto, 1 dañado."),
            (.fr, .decodeSummaryChannel, ["Hôte → Grokker", "0", "2"], "Hôte → Grokker : 0 paquet correct, 2 endommagés."),
            (.en, .inventorySummary, ["sim:0", "1", "1", "1.5"], "sim:0: 1 tag, 1 read in 1.5 s of audio."),
            (.es, .inventorySummary, ["sim:0", "1", "40", "1.5"], "sim:0: 1 etiqueta, 40 lecturas en 1,5 s de audio."),
            (.de, .inventorySummary, ["sim:0", "13", "1", "1.5"], "sim:0: 13 Tags, 1 Lesung in 1,5 s Audio."),
            (.fr, .locateLine, ["1,0", "[###]", "-62,0", "1"], "1,0 s  [###]  RSSI -62,0 dBm  1 lecture"),
            (.en, .ledgerRecoverLostRows, ["steps", "1", "7"], "Lost from steps: 1 row (number 7)."),
            (.de, .ledgerRecoverLostRows, ["steps", "2", "7, 8"], "Verloren aus steps: 2 Zeilen (Nummern 7, 8)."),
            (.de, .ledgerRecovered, ["a", "b", "1", "1", "1", "1"], "„a“ nach „b“ gerettet: 1 Lauf, 1 Schritt, 1 Funktionstest, 1 Grokker."),
            (.es, .ledgerRecovered, ["a", "b", "1", "2", "1", "3"],
             "Rescatado «a» en «b»: 1 ejecución, 2 pasos, 1 prueba de funcionamiento, 3 Grokkers."),
            (.en, .ledgerCheckSound, ["l", "5", "1", "1", "0", "1", "1", "1", "1"],
             "The ledger 'l' is sound: schema version 5, 1 page; 1 run (0 not finished), 1 step, 1 smoke test, 1 Grokker; 1 committed transaction in its -wal."),
            (.fr, .ledgerCheckShared, ["p", "5", "1", "1", "2", "1", "1", "0"],
             "Le registre partagé « p » a la version de schéma 5 : 1 exécution (1 ouverte sur un poste actif), 2 étapes, 1 test de fonctionnement, 1 Grokker, 0 résultat de déploiement."),
            (.de, .emulateStoppedSignal, ["2.5", "1", "1"], "Nach 2,5 s Audio durch ein Signal beendet: 1 Paket gesendet, 1 empfangen."),
            (.es, .emulateStoppedHostClosed, ["2.5", "1", "3"], "El host cerró el enlace tras 2,5 s de audio: 1 paquete enviado, 3 recibidos."),
        ])
        func countsAgree(_ language: Language, _ key: MessageKey, _ arguments: [String], _ expected: String) {
            #expect(Localizer(language: language).text(key, arguments: arguments) == expected)
        }

        @Test("a cancelled flash counts its devices in the right form")
        func cancelledFlashDevices() {
            #expect(Localizer(language: .de).text(.flashCancelledSummary, "0", "0", "0", "1", "1").contains("von 1 Gerät."))
            #expect(Localizer(language: .de).text(.flashCancelledSummary, "1", "0", "0", "1", "2").contains("von 2 Geräten."))
            #expect(Localizer(language: .en).text(.flashCancelledSummary, "0", "0", "0", "1", "1").contains("of 1 device."))
        }

        @Test("a failed function test reads in the user's language, figures and reasons included")
        func smokeTestFailureIsLocalizedWhole() {
            let error = FleetErrorSample.smokeFailure
            let german = Localizer(language: .de).message(for: error)
            #expect(german.contains("Funktionstest"))
            #expect(german.contains("123 Lesungen in 3,013 s (40,826/s), 13 Tags, fehlend: 3074257BF7194E4000001A85"), "\(german)")
            #expect(german.contains("Referenz-Tags fehlen"))
            let english = error.description
            #expect(english.contains("(reference tags missing: 123 reads in 3.013 s (40.826/s), 13 tags, missing 3074257BF7194E4000001A85"),
                    "\(english)")
            let one = Localizer(language: .fr).message(for: FleetErrorSample.smokeFailure(reads: 1, tags: 1))
            #expect(one.contains("1 lecture en") && one.contains("1 étiquette,"), "\(one)")
        }

        /// Moves the profile's reference tags of a scene file 60 m away.
        static func referenceTagsOutOfReach(_ path: String) throws {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            var scene = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let references: Set<String> = ["3034257BF4789000000003E8", "3034257BF4DA1C00000003EF", "3034257BF4789040000003ED"]
            let tags = try #require(scene["tags"] as? [[String: Any]])
            scene["tags"] = tags.map { tag -> [String: Any] in
                var tag = tag
                if references.contains(tag["epc"] as? String ?? "") { tag["distance_m"] = 60.0 }
                return tag
            }
            try JSONSerialization.data(withJSONObject: scene, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: path))
        }

        @Test("commands in es, fr and de print no English words, no (s) plurals and no decimal point",
              arguments: [Language.es, .fr, .de])
        func wholeCommands(_ language: Language) throws {
            let world = try FleetWorld(devices: 2)
            // sim:1's scene holds the profile's reference tags (the preflight lets the run
            // start) but 60 m away, out of reach, so its function test fails.
            try Self.referenceTagsOutOfReach(world.bench + "/sim-1/scene.json")
            let lang = ["--lang", language.rawValue]
            var outputs: [String: String] = [:]
            func run(_ name: String, _ arguments: [String], expect status: Int32) throws {
                let result = try world.run(lang + arguments)
                #expect(result.status == status, "\(language) \(name): \(result.standardOutput) \(result.standardError)")
                outputs[name] = result.standardOutput + result.standardError
            }
            try run("help", ["--help"], expect: 0)
            try run("inventory help", ["inventory", "--help"], expect: 0)
            try run("usage error", ["inventory", "--device", "sim:0", "--duration", "soon"], expect: 64)
            try run("provision", ["provision", "--profile", FleetWorld.profile, "--device", "sim:0-1", "--unattended"] + world.common,
                    expect: 1)
            try run("info", ["info", "--device", "sim:0", "--bench", world.bench], expect: 0)
            try run("inventory", ["inventory", "--device", "sim:0", "--duration", "1.5", "--bench", world.bench], expect: 0)
            try run("locate", ["locate", "3034257BF4789000000003E7", "--device", "sim:0", "--duration", "1.5", "--bench", world.bench],
                    expect: 0)
            let recordings = world.root + "/rec"
            try run("recorded info", ["--record-audio", recordings, "info", "--device", "sim:0", "--bench", world.bench], expect: 0)
            let wav = try #require(try FileManager.default.contentsOfDirectory(atPath: recordings).first { $0.hasSuffix(".wav") })
            try run("audio decode", ["audio", "decode", recordings + "/" + wav], expect: 0)

            let provision = outputs["provision"] ?? ""
            let smokeWord = [Language.es: "prueba de funcionamiento", .fr: "test de fonctionnement", .de: "Funktionstest"][language]!
            #expect(provision.contains(smokeWord), "\(provision)")
            let summary = [Language.es: "Respondió 1 de 1 Grokker.", .fr: "1 Grokker sur 1 a répondu.",
                           .de: "1 von 1 Grokker hat geantwortet."][language]!
            #expect(outputs["info"]?.contains(summary) == true, "\(outputs["info"] ?? "")")

            let sentences = try FleetLocalizationTests.englishSentences(for: language)
            for (name, output) in outputs.sorted(by: { $0.key < $1.key }) {
                for sentence in sentences where output.contains(sentence) {
                    Issue.record("\(language) \(name) prints English: \"\(sentence)\"")
                }
                let words = Self.englishWordsIn(output)
                #expect(words.isEmpty, "\(language) \(name) prints English words \(words):\n\(output)")
                #expect(output.range(of: #"\p{L}\((s|en|n|es)\)"#, options: .regularExpression) == nil,
                        "\(language) \(name) writes a plural in parentheses:\n\(output)")
                let points = Self.decimalPoints(output)
                #expect(points.isEmpty, "\(language) \(name) writes decimal points \(points):\n\(output)")
            }
        }
    }
}

extension CLI.LanguageAcceptanceTests {
    /// What a message shows of `output`'s faults: English words or sentences, decimal points.
    static func faults(_ output: String, _ language: Language, sentences: [String]) -> [String] {
        // "was" is German too ("sagt, was nicht stimmt").
        sentences.filter { output.contains($0) } + englishWordsIn(output).filter { !(language == .de && $0 == "was") }
            + decimalPoints(output)
    }

    @Test("nested details (a port, a lock, the ledger, the updater) read in the user's language, from real failures",
          arguments: [Language.es, .fr, .de])
    func nestedDetails(_ language: Language) throws {
        let world = try FleetWorld(devices: 1)
        let sentences = try CLI.FleetLocalizationTests.englishSentences(for: language)
        let localizer = Localizer(language: language)
        // A state directory under a regular file: the lock directory cannot be made (ENOTDIR).
        let blocker = world.root + "/not-a-directory"
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        var environment = world.environment
        environment["XDG_STATE_HOME"] = blocker + "/state"
        let lang = ["--lang", language.rawValue]
        var outputs: [String: String] = [:]
        let provision = try runBinary(["provision", "--profile", FleetWorld.profile, "--device", "sim:0", "--unattended",
                                       "--ledger", world.root + "/ledger.sqlite", "--report", world.root + "/report.json"]
                                      + world.common + lang, environment: environment, input: nil)
        #expect(provision.status == 1, "\(provision.standardOutput)\(provision.standardError)")
        outputs["provision, lock directory unusable"] = provision.standardOutput + provision.standardError
        #expect(outputs["provision, lock directory unusable"]?.contains("ENOTDIR") == true, "\(outputs)")
        let info = try runBinary(["info", "--device", "sim:0", "--bench", world.bench] + lang, environment: environment, input: nil)
        #expect(info.status == 1)
        outputs["info, lock directory unusable"] = info.standardOutput + info.standardError

        // Real library errors, nested in the fleet's: a FIFO that is not there, a ledger that is not SQLite.
        var portError: (any Error)?
        do { _ = try RawPipePort(inputPath: world.root + "/no-fifo-in", outputPath: world.root + "/no-fifo-out") } catch { portError = error }
        let notALedger = world.root + "/garbage.sqlite"
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: notALedger))
        var ledgerError: (any Error)?
        do { _ = try Ledger.open(path: notALedger) } catch { ledgerError = error }
        // A ledger whose size is no whole number of pages: refused as damaged, in words, by `ledger show` too.
        let damaged = world.root + "/damaged.sqlite"
        do { _ = try Ledger.open(path: damaged) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: damaged))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0, count: 100))
        try handle.close()
        var corrupt: (any Error)?
        do { _ = try Ledger.open(path: damaged) } catch { corrupt = error }
        #expect((corrupt as? LedgerError)?.code == "ledger_corrupt", "\(String(describing: corrupt))")
        outputs["ledger_corrupt"] = localizer.message(for: try #require(corrupt))
        let show = try world.run(["ledger", "show", "--ledger", damaged] + lang)
        #expect(show.status == 1)
        outputs["ledger show, damaged"] = show.standardOutput + show.standardError
        outputs["ledger_corrupt, integrity"] = localizer.message(for: LedgerError.corrupt(path: damaged, damage: LedgerDamage("check_failed", ["integrity_check", "1"])))
        outputs["ledger_corrupt, wal"] = localizer.message(for: LedgerError.corrupt(path: damaged, damage: LedgerDamage("wal_frame", ["3", "12", "2"])))
        let errors: [FleetError] = [
            .portUnavailable(device: "sim:0", error: try #require(portError)),
            .recorderFailed(operation: "record_step", subject: "sim:0, region", error: try #require(ledgerError)),
            .recorderFailed(operation: "begin_run", subject: "20261201-120000-3fa2", error: LedgerError.diskFull(path: notALedger)),
            .profileUnreadable(file: "/p.json", detail: "no_such_file"),
            .updateDeclined(device: "sim:0", decision: "cancelled"),
        ] + ["crc_mismatch", "no_file", "bad_file", "incompatible_hardware", "incompatible_version", "protocol_failure",
             "cant_reconnect", "cancelled", "battery_too_low"].map {
            .firmwareUpdateFailed(device: "sim:0", code: "firmware_update_" + $0, detail: "the unit refused the loader image's CRCs")
        }
        for error in errors { outputs[error.code + " " + error.arguments.joined(separator: " ")] = localizer.message(for: error) }
        for (name, output) in outputs.sorted(by: { $0.key < $1.key }) {
            let found = Self.faults(output, language, sentences: sentences)
            #expect(found.isEmpty, "\(language) \(name): \(found)\n\(output)")
        }
    }
}

/// The commonest failure: reference tags missing in a function test.
enum FleetErrorSample {
    static let smokeFailure = smokeFailure(reads: 123, tags: 13)

    static func smokeFailure(reads: Int, tags: Int) -> FleetError {
        .smokeTestFailed(device: "sim:1", measurement: SmokeTestMeasurement(
            passed: false, reasons: ["missing_tags"], reads: reads, duration: 3.013, readsPerSecond: 40.826, uniqueTags: tags,
            missingTags: ["3074257BF7194E4000001A85"], strongestRSSI: -40.5, weakestReferenceRSSI: nil))
    }
}

extension CLI.LanguageAcceptanceTests {
    /// grokctl's commands run one after the other on a terminal `columns` wide (under
    /// `script`, which gives them a pseudo-terminal): what the screen showed, without CRs.
    static func onTerminal(columns: Int, _ commands: [[String]], environment: [String: String]) throws -> String {
        let grokctl = try grokctlExecutable().path
        func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let script = (["stty cols \(columns) rows 500"] + commands.map { ([grokctl] + $0).map(quoted).joined(separator: " ") })
            .joined(separator: "; ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", script, "/dev/null"]
        process.environment = ["PATH": "/usr/bin:/bin", "TERM": "xterm"].merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r", with: "")
    }

    @Test("verify, a dry run's plan, a profile error and firmware verify read whole in es, fr and de, no '..' at a line's end; tables at 60 and 80 columns cut no word (issue 24 item 4)",
          arguments: [Language.es, .fr, .de])
    func verifyPlansAndTables(_ language: Language) throws {
        let world = try FleetWorld(devices: 1)
        let sentences = try CLI.FleetLocalizationTests.englishSentences(for: language)
        let lang = ["--lang", language.rawValue]
        var outputs: [String: String] = [:]
        func run(_ name: String, _ arguments: [String], expect status: Int32) throws {
            let result = try world.run(lang + arguments)
            #expect(result.status == status, "\(language) \(name): \(result.standardOutput) \(result.standardError)")
            outputs[name] = result.standardOutput + result.standardError
        }
        // An out-of-the-box unit differs from bench-us in its factory data, region and firmware.
        try run("verify", ["verify", "--profile", FleetWorld.profile, "--device", "sim:0"] + world.common, expect: 1)
        try run("dry run", ["provision", "--profile", FleetWorld.profile, "--device", "sim:0", "--dry-run"] + world.common, expect: 0)
        let checkout = URL(fileURLWithPath: FleetWorld.profile).deletingLastPathComponent().deletingLastPathComponent().path
        // The EU rollout on a unit with no region: the plan refuses its region step, and its
        // row does not repeat the device the plan's heading names.
        try run("dry run, region refused", ["provision", "--profile", checkout + "/profiles/rollout-eu-night.json", "--device", "sim:0",
                                            "--dry-run"] + world.common, expect: 0)
        let refused = outputs["dry run, region refused"] ?? ""
        #expect(!refused.contains("sim:0:") && !refused.contains("sim:0 :") && refused.contains("region.set"), "\(refused)")
        let profile = world.root + "/fast.json"
        try Data(#"{"format": 1, "name": "fast", "smoke_test": {"reference_tags": ["3034257BF4789000000003E8"], "min_reads_per_second": "fast"}}"#.utf8)
            .write(to: URL(fileURLWithPath: profile))
        // A profile is named on the command line: a bad one is a usage error.
        try run("profile error", ["provision", "--profile", profile, "--device", "sim:0", "--dry-run"] + world.common, expect: 64)
        try run("firmware verify", ["firmware", "verify", checkout + "/firmware/demo/GR-1_1-8-0_demo.ugif"], expect: 0)
        try run("firmware verify, channel", ["firmware", "verify", "--name", "GR-1_1-8-0_demo.ugif"] + world.repository, expect: 0)
        #expect(outputs["verify"]?.contains(text(.regionFcc, language)) == true, "\(outputs["verify"] ?? "")")

        let serial = try world.device(0).serialNumber
        let ledger = ["ledger", "show", "--ledger", world.ledger]
        let commands = [lang + ["info", "--device", "sim:0", "--bench", world.bench], lang + ledger, lang + ["region", "list"],
                        lang + ["provision", "--profile", FleetWorld.profile, "--device", "sim:0", "--dry-run"] + world.common]
        for columns in [60, 80] {
            let screen = try Self.onTerminal(columns: columns, commands, environment: world.environment)
            outputs["\(columns) columns"] = screen
            // A table's lines (cells apart by two spaces) fit the terminal; sentences are the terminal's to wrap.
            for line in screen.split(separator: "\n") where line.contains("  ") {
                #expect(TextWidth.of(line) < columns, "\(language) \(columns) columns: \(line)")
            }
            // Words a narrow column used to cut: a serial number, the run's key, the headers.
            let words = Set(screen.split { $0 == " " || $0 == "\n" }.map(String.init))
            let headers = [MessageKey.infoColumnSerial, .infoColumnConnect, .infoColumnLink, .ledgerColumnStation, .ledgerColumnOperator]
                .flatMap { text($0, language).split(separator: " ").map(String.init) }
            for word in [String(serial)] + headers {
                #expect(words.contains(word), "\(language) \(columns) columns: '\(word)' is not shown whole:\n\(screen)")
            }
        }
        for (name, output) in outputs.sorted(by: { $0.key < $1.key }) {
            let found = Self.faults(output, language, sentences: sentences)
            #expect(found.isEmpty, "\(language) \(name): \(found)\n\(output)")
            #expect(!output.contains("..\n") && !output.hasSuffix(".."), "\(language) \(name) ends a line with '..':\n\(output)")
        }
    }
}
