import Foundation
import GrokBasics
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    /// Real grokctl runs on real emulated Grokkers whose files were damaged: a state.json
    /// that is not JSON, lacks a field, holds a value of the wrong type or out of range; a
    /// flash.bin of the wrong size or that is a directory; a bench under a regular file; and
    /// `grokctl emulate` on a damaged state. What is wrong is a code under `emulator.detail`,
    /// so the whole message reads in the user's language: no Foundation or Swift English.
    @Suite("Emulator details in es, fr and de: no English inside a damaged unit's message", .serialized)
    struct EmulatorDetailLanguageTests {
        /// One damaged unit: how to damage a good one, and what the message must name.
        struct Damage: Sendable {
            let name: String
            /// Changes the unit directory `sim-0` of a bench made by a real `info`.
            let apply: @Sendable (String) throws -> Void
            /// Text the message must contain (the file, the key, the errno's name).
            let names: [String]
        }

        /// Rewrites the unit's state.json through `change`.
        static func editState(_ unit: String, _ change: (inout [String: Any]) -> Void) throws {
            let path = unit + "/state.json"
            var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            change(&object)
            try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        }

        static let damages: [Damage] = [
            Damage(name: "state not JSON", apply: { try Data("garbage{".utf8).write(to: URL(fileURLWithPath: $0 + "/state.json")) },
                   names: ["state.json"]),
            Damage(name: "state without its serial number", apply: { try editState($0) { $0["serialNumber"] = nil } },
                   names: ["state.json", "serialNumber"]),
            Damage(name: "state with a serial number of the wrong type", apply: { try editState($0) { $0["serialNumber"] = "x" } },
                   names: ["serialNumber"]),
            Damage(name: "state with a battery above 100 %", apply: { try editState($0) { $0["batteryPercent"] = 150 } },
                   names: ["batteryPercent", "100"]),
            Damage(name: "flash of the wrong size", apply: { unit in
                       let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: unit + "/flash.bin"))
                       try handle.truncate(atOffset: 10)
                       try handle.close()
                   }, names: ["flash.bin", "10"]),
            Damage(name: "flash that is a directory", apply: { unit in
                       try FileManager.default.removeItem(atPath: unit + "/flash.bin")
                       try FileManager.default.createDirectory(atPath: unit + "/flash.bin", withIntermediateDirectories: false)
                   }, names: ["flash.bin", "EISDIR"]),
        ]

        /// Foundation's English for what these files used to be refused with.
        static let foundationSentences = ["The given data was not valid JSON", "Expected to decode", "missing field",
                                          "is above 100", "could not open", "the flash file has", String(cString: strerror(ENOTDIR))]

        static func expectNoEnglish(_ result: RunResult, _ language: Language, _ name: String, names: [String],
                                    sentences: [String]) {
            let output = result.standardOutput + result.standardError
            #expect(result.status != 0, "\(name): \(output)")
            for text in names {
                #expect(output.contains(text), "\(language) \(name) does not name \(text):\n\(output)")
            }
            let found = LanguageAcceptanceTests.faults(output, language, sentences: sentences)
            #expect(found.isEmpty, "\(language) \(name): \(found)\n\(output)")
            for sentence in foundationSentences {
                #expect(!output.contains(sentence), "\(language) \(name) holds Foundation's English:\n\(output)")
            }
            for code in ["_failed", "not_json", "missing_field", "wrong_type", "flash_size", "battery_above"] {
                #expect(!output.contains(code), "\(language) \(name) shows a raw detail code:\n\(output)")
            }
        }

        @Test("a damaged emulated Grokker is explained in the user's language", arguments: [Language.es, .fr, .de])
        func damagedUnitsReadInTheUsersLanguage(_ language: Language) throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let sentences = try FleetLocalizationTests.englishSentences(for: language)
            for (index, damage) in Self.damages.enumerated() {
                let bench = directory + "/bench-\(index)"
                let made = try runBinary(["info", "--device", "sim:0", "--bench", bench])
                try #require(made.status == 0, "\(damage.name): \(made.standardError)")
                try damage.apply(bench + "/sim-0")
                let result = try runBinary(["info", "--device", "sim:0", "--bench", bench, "--lang", language.rawValue])
                Self.expectNoEnglish(result, language, damage.name, names: damage.names, sentences: sentences)
            }
            // A bench under a regular file: the unit's directory cannot be made.
            let blocker = directory + "/not-a-directory"
            try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
            let blocked = try runBinary(["info", "--device", "sim:0", "--bench", blocker + "/bench", "--lang", language.rawValue])
            Self.expectNoEnglish(blocked, language, "bench under a regular file", names: ["ENOTDIR"], sentences: sentences)
            // `grokctl emulate` on a unit whose state is not JSON.
            let unit = directory + "/unit"
            try FileManager.default.createDirectory(atPath: unit, withIntermediateDirectories: true)
            try Data("garbage{".utf8).write(to: URL(fileURLWithPath: unit + "/state.json"))
            let emulate = try runBinary(["emulate", "--state", unit, "--input", "/dev/null", "--output", "/dev/null",
                                         "--lang", language.rawValue])
            Self.expectNoEnglish(emulate, language, "emulate on a damaged state", names: [unit + "/state.json"], sentences: sentences)
        }
    }
}
