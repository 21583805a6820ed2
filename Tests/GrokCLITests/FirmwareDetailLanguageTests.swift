import Foundation
import GrokBasics
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The repository root (three levels above this file).
private let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

extension CLI {
    /// Real `grokctl firmware verify` and `firmware pack` runs on real damaged files: what is
    /// wrong inside the file (a `.ugif` line, an Intel HEX record) is a code under
    /// `firmware.detail`, so the whole message reads in the user's language.
    @Suite("Firmware details in es, fr and de: no English inside a refused file's message", .serialized)
    struct FirmwareDetailLanguageTests {
        /// The demo `.ugif` with line `number` (1-based) replaced by `transform` of it.
        static func demoImage(replacingLine number: Int, _ transform: (String) -> String) throws -> String {
            var lines = try String(contentsOfFile: checkout + "/firmware/demo/GR-1_1-8-0_demo.ugif", encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines[number - 1] = transform(lines[number - 1])
            return lines.joined(separator: "\n")
        }

        /// The line number of the demo image's first line after `marker` (a section title).
        static func lineAfter(_ marker: String) throws -> Int {
            let lines = try String(contentsOfFile: checkout + "/firmware/demo/GR-1_1-8-0_demo.ugif", encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            let index = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == marker })
            return index + 3  // the title, the "AAAA length" line, then the first data line (1-based)
        }

        @Test("a refused .ugif or Intel HEX file is explained without English, and without a raw detail code",
              arguments: [Language.es, .fr, .de])
        func refusedFilesReadInTheUsersLanguage(_ language: Language) throws {
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let sentences = try FleetLocalizationTests.englishSentences(for: language)
            let reader = try Self.lineAfter("READER")
            var files: [String: (text: String, name: String, code: String)] = [:]
            files["odd hex digits"] = (try Self.demoImage(replacingLine: reader) { String($0.dropLast()) }, "GR-1_1-8-0_demo.ugif", "odd_hex_digits")
            files["not a hex digit"] = (try Self.demoImage(replacingLine: reader) { "ZZ" + $0.dropFirst(2) }, "GR-1_1-8-0_demo.ugif", "not_hex_digit")
            files["unknown header key"] = (try Self.demoImage(replacingLine: 8) { _ in "SOFTWARE_COLOUR = 9" }, "GR-1_1-8-0_demo.ugif", "unknown_key")
            files["a CR"] = (try Self.demoImage(replacingLine: reader) { $0 + "\r" }, "GR-1_1-8-0_demo.ugif", "carriage_return")
            files["file name"] = (try String(contentsOfFile: checkout + "/firmware/demo/GR-1_1-8-0_demo.ugif", encoding: .utf8),
                                  "demo-1.8.0.ugif", "bad_name_shape")
            var outputs: [String: String] = [:]
            for (name, file) in files {
                let path = dir + "/" + UUID().uuidString
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                try file.text.write(toFile: path + "/" + file.name, atomically: true, encoding: .utf8)
                let verify = try runBinary(["firmware", "verify", path + "/" + file.name, "--lang", language.rawValue])
                #expect(verify.status == 1, "\(name): \(verify.standardError)")
                outputs["verify, " + name] = verify.standardError
                let json = try runBinary(["firmware", "verify", path + "/" + file.name, "--json"])
                #expect(json.standardError.contains("\"code\":\"firmware_invalid_input\""), "\(name): \(json.standardError)")
            }
            // An Intel HEX record with an odd number of digits, given to `firmware pack`.
            try """
            {"hardware_type": 5, "hardware_revisions": [3], "version": "1.8.0", "build_date": "2026-12-01T00:00:00Z",
             "reader_protocol": 20, "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}], "notes": {"en": "Demo."}}
            """.write(toFile: dir + "/desc.json", atomically: true, encoding: .utf8)
            try ":020000000102F\n:00000001FF\n".write(toFile: dir + "/bad.hex", atomically: true, encoding: .utf8)
            let pack = try runBinary(["firmware", "pack", "--hex", dir + "/bad.hex", "--description", dir + "/desc.json",
                                      "--output", dir + "/GR-1_1-8-0_demo.ugif", "--lang", language.rawValue])
            #expect(pack.status != 0, "\(pack.standardError)")
            #expect(pack.standardError.contains("bad.hex"), "\(pack.standardError)")
            outputs["pack, odd hex digits"] = pack.standardError
            for (name, output) in outputs.sorted(by: { $0.key < $1.key }) {
                let found = LanguageAcceptanceTests.faults(output, language, sentences: sentences)
                #expect(found.isEmpty, "\(language) \(name): \(found)\n\(output)")
                for code in files.values.map(\.code) + ["odd_hex_digits"] {
                    #expect(!output.contains(code), "\(language) \(name) shows the raw code \(code):\n\(output)")
                }
            }
        }

        /// `firmware pack` of the demo Intel HEX with the description `description`, written to `output`.
        static func pack(description: String, output: String, _ language: Language) throws -> RunResult {
            try runBinary(["firmware", "pack", "--hex", checkout + "/firmware/demo/grokker-app-1.8.0.hex", "--base", "0x08007000",
                           "--reader-bytes", "61440", "--description", description, "--output", output, "--lang", language.rawValue])
        }

        @Test("a refused description (its JSON, its rules) and an output that cannot be written are explained without English",
              arguments: [Language.en, .es, .fr, .de])
        func refusedDescriptionsReadInTheUsersLanguage(_ language: Language) throws {
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            func description(_ change: (inout [String: Any]) -> Void) throws -> String {
                var object: [String: Any] = [
                    "hardware_type": 5, "hardware_revisions": [3], "version": "1.8.0", "build_date": "2026-12-01T00:00:00Z",
                    "reader_protocol": 20, "applies_to": [["min": "1.0.0", "max": "1.7.65535"]], "notes": ["en": "Demo."],
                ]
                change(&object)
                let path = dir + "/" + UUID().uuidString + ".json"
                try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
                return path
            }
            let output = dir + "/GR-1_1-8-0_demo.ugif"
            // Each failure, with what its English message says of it.
            let failures: [(name: String, description: String, output: String, english: String)] = [
                ("revisions out of order", try description { $0["hardware_revisions"] = [3, 1] }, output, "must be strictly ascending"),
                ("no English notes", try description { $0["notes"] = ["de": "Demo."] }, output, "needs English notes"),
                ("a date that is no date", try description { $0["build_date"] = "yesterday" }, output, "'yesterday' is not a time"),
                ("a text where a number belongs", try description { $0["reader_protocol"] = "twenty" }, output, "must be a JSON number"),
                ("a field missing", try description { $0["version"] = nil }, output, "version: is missing"),
                ("an output under a file", try description { _ in }, dir + "/notes.txt/GR-1_1-8-0_demo.ugif", "the system reports ENOTDIR"),
            ]
            try "x".write(toFile: dir + "/notes.txt", atomically: true, encoding: .utf8)
            let sentences = language == .en ? [] : try FleetLocalizationTests.englishSentences(for: language)
            for failure in failures {
                let run = try Self.pack(description: failure.description, output: failure.output, language)
                #expect(run.status == 1, "\(failure.name): \(run.standardError)")
                #expect(!FileManager.default.fileExists(atPath: output), "\(failure.name)")
                if language == .en {
                    #expect(run.standardError.contains(failure.english), "\(failure.name): \(run.standardError)")
                    continue
                }
                let found = LanguageAcceptanceTests.faults(run.standardError, language, sentences: sentences)
                #expect(found.isEmpty, "\(language) \(failure.name): \(found)\n\(run.standardError)")
                for code in ["not_ascending", "no_english_notes", "not_utc_time", "wrong_type", "missing", "system", "number"] {
                    #expect(!run.standardError.contains(code), "\(language) \(failure.name) shows the raw code \(code):\n\(run.standardError)")
                }
            }
        }
    }
}
