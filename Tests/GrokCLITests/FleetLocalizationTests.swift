import Foundation
import GrokBasics
import GrokFirmware
import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("Fleet: the terminal delegate and the localization acceptance", .serialized)
    struct FleetLocalizationTests {
        static let profilePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("profiles/bench-us.json").path

        func delegate(_ lines: [String], _ language: Language = .en) throws -> (TerminalDelegate, LockedBuffer) {
            let profile = try Profile.load(path: Self.profilePath)
            let output = LockedBuffer()
            let delegate = TerminalDelegate(localizer: Localizer(language: language),
                                            policy: PolicyDelegate(profile: profile, mode: .provision),
                                            input: ScriptedLines(lines), output: output)
            return (delegate, output)
        }

        func offer(battery: Int = 90) -> FirmwareOffer {
            FirmwareOffer(name: "grokker-1.8.0", channel: "release", version: FirmwareVersion(major: 1, minor: 8, build: 0),
                          running: FirmwareVersion(major: 1, minor: 7, build: 3), compatibility: .upgrade, readerProtocol: 20,
                          notes: ["en": "Faster inventory.", "de": "Schnellere Inventur."], buildDate: Date(timeIntervalSince1970: 0),
                          batteryPercent: battery, externalPower: false)
        }

        let context = FleetDeviceContext(device: "sim:0")

        @Test("update now, postpone, cancel; unreadable answers are asked again; end of input postpones")
        func firmwareChoices() throws {
            #expect(try delegate(["1"]).0.promptForFirmwareUpdate(context, offer: offer()) == .update)
            #expect(try delegate([""]).0.promptForFirmwareUpdate(context, offer: offer()) == .update)
            guard case .postpone(let reason, _) = try delegate(["2"]).0.promptForFirmwareUpdate(context, offer: offer()) else {
                Issue.record("2 did not postpone")
                return
            }
            #expect(reason == "fleet_update_declined")
            guard case .cancel = try delegate(["3"]).0.promptForFirmwareUpdate(context, offer: offer()) else {
                Issue.record("3 did not cancel")
                return
            }
            let (again, output) = try delegate(["9", "update", "1"], .de)
            #expect(again.promptForFirmwareUpdate(context, offer: offer()) == .update)
            #expect(output.text.contains(text(.promptInvalid, .de)))
            #expect(output.text.contains("Schnellere Inventur."))
            guard case .postpone = try delegate([]).0.promptForFirmwareUpdate(context, offer: offer()) else {
                Issue.record("end of input did not postpone")
                return
            }
            // Low battery: the policy's advice is shown and the default becomes postpone.
            let (low, lowOutput) = try delegate([""])
            guard case .postpone = low.promptForFirmwareUpdate(context, offer: offer(battery: 10)) else {
                Issue.record("the default with a low battery is not postpone")
                return
            }
            #expect(lowOutput.text.contains(text(.errorFleetBatteryLow, .en, "sim:0", "10", "30")))
        }

        @Test("4, 5, 6: the answer of 1, 2, 3 for this Grokker and, without asking, for the remaining ones")
        func firmwareChoiceForTheRemaining() throws {
            let (delegate, output) = try delegate(["6"], .fr)
            guard case .cancel = delegate.promptForFirmwareUpdate(context, offer: offer()) else {
                Issue.record("6 did not cancel")
                return
            }
            // No input left: the next Grokker takes the same answer, says so, and is not asked.
            let next = FleetDeviceContext(device: "sim:1")
            guard case .cancel = delegate.promptForFirmwareUpdate(next, offer: offer()) else {
                Issue.record("the next Grokker was not cancelled")
                return
            }
            #expect(output.text.components(separatedBy: text(.promptFirmwareChoices, .fr)).count - 1 == 1, "\(output.text)")
            #expect(output.text.contains(text(.promptFirmwareRemembered, .fr, text(.promptDevice, .fr, "sim:1", "?"),
                                              text(.promptAnswerCancel, .fr))), "\(output.text)")
        }

        @Test("region: chosen by number or the default, confirmed in the user's language")
        func regionChoice() throws {
            let names = ["ETSI (EU)", "FCC (US), IC (Canada)", "Japan"]
            #expect(try delegate(["2"]).0.chooseRegionFromRegions(context, names: names, selected: 0) == 1)
            #expect(try delegate([""]).0.chooseRegionFromRegions(context, names: names, selected: 1) == 1)
            #expect(try delegate(["0", "4", "3"]).0.chooseRegionFromRegions(context, names: names, selected: nil) == 2)
            #expect(try delegate([]).0.chooseRegionFromRegions(context, names: names, selected: 1) == nil)
            let (es, output) = try delegate(["s"], .es)
            #expect(es.confirmRegion(context, name: "FCC (US), IC (Canada)"))
            #expect(output.text.contains("[S/n]"))
            #expect(try delegate(["n"], .fr).0.confirmRegion(context, name: "fcc") == false)
            #expect(try delegate(["j"], .de).0.confirmRegion(context, name: "fcc"))
            #expect(try delegate([""]).0.confirmRegion(context, name: "fcc"))
            #expect(try delegate(["y"]).0.notifySetRegionFailure(context, error: .regionNotChosen(device: "sim:0"), attempt: 1) == .retry)
            #expect(try delegate([""]).0.notifySetRegionFailure(context, error: .regionNotChosen(device: "sim:0"), attempt: 1) == .giveUp)
        }

        /// Every English catalog text, cut at its placeholders, keeping the pieces of four
        /// words or more: none may appear in es, fr or de output (unless that language's
        /// catalog has the same text).
        static func englishSentences(for language: Language) throws -> [String] {
            let english = try Catalogs.load(.en)
            let other = try Catalogs.load(language)
            var pieces: Set<String> = []
            for (key, value) in english where other[key] != value {
                for piece in value.texts.flatMap({ $0.components(separatedBy: CharacterSet(charactersIn: "{}")) }) {
                    let trimmed = piece.trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters))
                    let words = trimmed.split(whereSeparator: { $0 == " " }).filter { $0.contains { $0.isLetter } }
                    if words.count >= 4 { pieces.insert(trimmed) }
                }
            }
            return pieces.sorted()
        }

        @Test("every command in es, fr and de prints no English sentence; numbers and dates follow the locale",
              arguments: [Language.es, .fr, .de])
        func noEnglish(_ language: Language) throws {
            let world = try FleetWorld(devices: 2)
            let lang = ["--lang", language.rawValue]
            var outputs: [String: String] = [:]
            func run(_ name: String, _ arguments: [String], expect status: Int32 = 0) throws {
                let result = try world.run(arguments + lang)
                #expect(result.status == status, "\(language) \(name): \(result.standardError)")
                outputs[name] = result.standardOutput + result.standardError
            }
            for help in [["--help"], ["provision", "--help"], ["rollout", "--help"], ["verify", "--help"], ["ledger", "--help"],
                         ["ledger", "show", "--help"], ["ledger", "export", "--help"], ["firmware", "list", "--help"],
                         ["region", "list", "--help"], ["info", "--help"]] {
                try run(help.joined(separator: " "), help)
            }
            try run("provision", ["provision", "--profile", FleetWorld.profile, "--device", "sim:0-1", "--unattended"] + world.common)
            try run("provision dry run", ["provision", "--profile", FleetWorld.profile, "--device", "sim:0-1", "--dry-run"] + world.common)
            try run("verify", ["verify", "--profile", FleetWorld.profile, "--device", "sim:0-1"] + world.common)
            try run("ledger show", ["ledger", "show"])
            let serial = String(format: "%08u", try world.device(0).serialNumber)
            try run("ledger show serial", ["ledger", "show", "--serial", serial])
            try run("firmware list", ["firmware", "list", "--device", "sim:0", "--bench", world.bench] + world.repository)
            try run("region list", ["region", "list"])
            try run("info", ["info", "--device", "sim:0-1", "--bench", world.bench])
            // A profile file that is not there is a usage error (64).
            try run("a bad profile", ["verify", "--profile", world.root + "/missing.json", "--device", "sim:0"] + world.common,
                    expect: 64)

            let sentences = try Self.englishSentences(for: language)
            #expect(sentences.count > 200)
            for (name, output) in outputs.sorted(by: { $0.key < $1.key }) {
                for sentence in sentences where output.contains(sentence) {
                    Issue.record("\(language) \(name) prints English: \"\(sentence)\"")
                }
            }
            // Decimal comma: the smoke test rate and the run's seconds; no decimal point.
            let provision = outputs["provision"] ?? ""
            #expect(provision.range(of: #"\d+,\d [^\s]+/s"#, options: .regularExpression) != nil, "\(provision)")
            #expect(provision.range(of: #"\d+\.\d [^\s]+/s"#, options: .regularExpression) == nil)
            // Dates as the language writes them.
            let dates: [Language: String] = [.es: #"\d{1,2}/\d{1,2}/\d{2}"#, .fr: #"\d{2}/\d{2}/\d{4}"#, .de: #"\d{2}\.\d{2}\.\d{2}"#]
            let show = outputs["ledger show"] ?? ""
            #expect(show.range(of: dates[language]!, options: .regularExpression) != nil, "\(show)")
        }
    }
}
