import Foundation
import GrokFleet
import GrokLedger
import GrokkerEmulator
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    /// `grokctl fleet status`: the command on a real shared ledger (two stations' real provision runs plus the
    /// rollout rows the rollout code writes) and on a station's SQLite file.
    @Suite("Fleet status", .serialized)
    struct FleetStatusTests {
        @Test("the shared ledger: every station's units done, failed and pending, the halt and who tripped it, against the profile's threshold")
        func statusOfTheSharedLedger() throws {
            let fixture = try SharedFleetFixture.get()
            let result = try fixture.run(["fleet", "status", "--ledger", fixture.uri, "--profile", fixture.haltProfile, "--json"])
            #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
            let rollouts = jsonRecords(result.standardOutput, "rollout")
            #expect(rollouts.count == 1)
            let rollout = try #require(rollouts.first)
            #expect(rollout["id"] as? String == "fw-1.8")
            #expect(rollout["state"] as? String == "halted")
            #expect(rollout["reason_code"] as? String == "fleet_halted")
            #expect(rollout["tripped_by"] as? String == "bench-1")
            let totals = try #require(rollout["totals"] as? [String: Any])
            #expect(totals["done"] as? Int == 2 && totals["failed"] as? Int == 1 && totals["pending"] as? Int == 1, "\(totals)")
            #expect(rollout["above_threshold"] as? Bool == true)
            // The rule read as the stage recorded it when it halted (30 %), not the --profile's 25 %.
            let judgement = try #require(rollout["judgement"] as? [String: Any])
            #expect(judgement["code"] as? String == "halted" && judgement["failed"] as? Int == 1 && judgement["finished"] as? Int == 3,
                    "\(judgement)")
            let halt = try #require(rollout["halt"] as? [String: Any])
            #expect(halt["max_failure_rate"] as? Double == 0.3 && halt["source"] as? String == "stage", "\(halt)")
            #expect(halt["after_devices"] == nil, "a halt recorded without its rule: after_devices is not known, never the profile's")
            // The failed unit (bench-1's first Grokker; its run failed no step).
            let failed = try #require(rollout["failed_units"] as? [[String: Any]])
            #expect(failed.map { $0["serial"] as? String } == [fixture.serials[1][0]] && failed.first?["station"] as? String == "bench-1",
                    "\(failed)")
            let stations = try #require(rollout["stations"] as? [[String: Any]])
            #expect(stations.map { $0["name"] as? String } == ["bench-0", "bench-1"])
            let counts = stations.map { $0["counts"] as? [String: Any] ?? [:] }
            #expect(counts[0]["done"] as? Int == 1 && counts[0]["pending"] as? Int == 1, "\(counts[0])")
            #expect(counts[1]["done"] as? Int == 1 && counts[1]["failed"] as? Int == 1, "\(counts[1])")
            let events = try #require(rollout["events"] as? [[String: Any]])
            #expect(events.map { $0["action"] as? String } == ["created", "halted"])
            let firmware = jsonRecords(result.standardOutput, "firmware")
            #expect(firmware.count == 1 && firmware.first?["version"] as? String == "1.8.0" && firmware.first?["devices"] as? Int == 4,
                    "\(firmware)")
            let rates = jsonRecords(result.standardOutput, "smoke_tests")
            #expect(rates.map { $0["station"] as? String } == ["bench-0", "bench-1"], "\(rates)")
            #expect(rates.allSatisfy { ($0["tests"] as? Int ?? 0) >= 2 && $0["passed"] as? Int == $0["tests"] as? Int })
            #expect(rates.allSatisfy { ($0["reads_per_second_median"] as? Double ?? 0) > 0 })
        }

        @Test("the table is in the user's language: its words, plural forms and decimal commas, no English", arguments: Language.allCases)
        func statusTableInEveryLanguage(_ language: Language) throws {
            let fixture = try SharedFleetFixture.get()
            let result = try fixture.run(["--lang", language.rawValue, "fleet", "status", "--ledger", fixture.uri, "--profile", fixture.haltProfile])
            #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
            let output = result.standardOutput
            let localizer = Localizer(language: language)
            #expect(output.contains(localizer.text(.fleetStatusRollout, "fw-1.8", "1.8.0", "100", localizer.text(.fleetStateHalted))), "\(output)")
            #expect(output.contains(localizer.text(.fleetStatusTrippedBy, "bench-1")), "\(output)")
            // Why it halted, as the run said it in this language, not the ledger's stored figures.
            let halt = SharedFleetFixture.halt
            #expect(RolloutHalt(json: SharedFleetFixture.haltDetail) == halt)
            #expect(output.contains(localizer.message(for: FleetError.halted(rollout: "fw-1.8", failed: halt.failed, finished: halt.finished,
                                                                              threshold: halt.threshold, trippedBy: halt.trippedBy,
                                                                              stationFailures: halt.stationFailures))), "\(output)")
            #expect(!output.contains(SharedFleetFixture.haltDetail), "the stored figures are printed as they are: \(output)")
            // 3 finished, failure rate 33.3 %: a plural form and the language's decimal separator.
            #expect(output.contains(localizer.text(.fleetStatusFinished, "3", LocaleFormat.decimal(100.0 / 3, digits: 1, language))), "\(output)")
            #expect(output.contains(localizer.text(.fleetStatusPending, "1")), "\(output)")
            // How the rule reads: the halt by the rule that halted it (30 %), not the profile's 25 %.
            #expect(output.contains(localizer.text(.fleetStatusJudgementHalted, "1", "3", "30")), "\(output)")
            #expect(!output.contains("25 %"), "the profile's threshold is shown beside the stage's: \(output)")
            #expect(output.contains(localizer.text(.fleetStatusFirmware, "4")), "\(output)")
            if language != .en {
                let words = LanguageAcceptanceTests.englishWordsIn(output)
                #expect(words.isEmpty, "\(language) prints English words \(words):\n\(output)")
                #expect(LanguageAcceptanceTests.decimalPoints(output).isEmpty, "\(language) writes decimal points:\n\(output)")
            }
        }

        /// A station's SQLite ledger as a rollout run leaves it before its first unit: the stage
        /// and one Grokker it selects (what the status counts: GrokFleetTests' FleetStatusViewTests).
        static func stagedLedger(_ world: FleetWorld) throws {
            let ledger = try Ledger.open(path: world.ledger, heartbeatInterval: nil)
            try ledger.upsertDevice(DeviceSighting(serial: "00000042", hardwareType: "grokker", hardwareRevision: "3", firmware: "1.7.3",
                                                   seenAt: Date(timeIntervalSince1970: 1_796_000_000)))
            _ = try ledger.checkRolloutStage(StageCheck(rolloutID: "eu-night", release: "1.8.0", profilePercentage: 100, rule: nil,
                                                        station: "bench-a", actor: "ops", runKey: "",
                                                        now: Date(timeIntervalSince1970: 1_796_000_000)))
        }

        @Test("a station's SQLite ledger: its rollout as a JSON line (exit 0); an unknown rollout exits 1 naming it and the ledger; no ledger exits 1")
        func statusOfASQLiteLedger() throws {
            let world = try FleetWorld(devices: 1)
            try Self.stagedLedger(world)
            let result = try world.run(["fleet", "status", "--json"])
            #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
            #expect(jsonRecords(result.standardOutput, "rollout").map { $0["id"] as? String } == ["eu-night"], "\(result.standardOutput)")
            let unknown = try world.run(["fleet", "status", "--rollout", "nope"])
            #expect(unknown.status == 1)
            #expect(unknown.standardError.contains("'nope'") && unknown.standardError.contains(world.ledger), "\(unknown.standardError)")
            let none = try FleetWorld(devices: 1).run(["fleet", "status"])
            #expect(none.status == 1 && none.standardError.contains("ledger"), "\(none.standardError)")
        }

        @Test("a rollout no unit finished yet says so in every language, in the table and the report (no '– %')")
        func rolloutWithNoUnitFinished() throws {
            let world = try FleetWorld(devices: 1)
            try Self.stagedLedger(world)
            for language in Language.allCases {
                let localizer = Localizer(language: language)
                let none = localizer.text(.fleetStatusNoneFinished)
                let text = try world.run(["--lang", language.rawValue, "fleet", "status"])
                #expect(text.status == 0, "\(text.standardOutput)\n\(text.standardError)")
                #expect(text.standardOutput.contains(none), "\(language): \(text.standardOutput)")
                #expect(!text.standardOutput.contains("– %"), "\(language): \(text.standardOutput)")
                let page = try world.run(["--lang", language.rawValue, "fleet", "report", "--html", "-"])
                #expect(page.status == 0, "\(page.standardError)")
                let escaped = FleetReportPage(localizer: localizer, ledger: "", generatedAt: Date()).escape(none)
                #expect(page.standardOutput.contains(escaped), "\(language)")
                #expect(!page.standardOutput.contains("– %"), "\(language)")
            }
        }
    }
}
