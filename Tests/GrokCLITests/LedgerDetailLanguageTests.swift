import Foundation
import GrokBasics
import GrokLedger
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    /// Real ledger refusals (a real SQLite ledger, a real export): what the ledger refused
    /// is a code under `ledger.detail`, so the whole message reads in the user's language.
    @Suite("Ledger details in es, fr and de: no English inside a refused record's message")
    struct LedgerDetailLanguageTests {
        @Test("refused records, a read-only ledger and a failed export are explained without English",
              arguments: [Language.es, .fr, .de])
        func refusalsReadInTheUsersLanguage(_ language: Language) throws {
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let path = dir + "/ledger.sqlite"
            let ledger = try Ledger.open(path: path, heartbeatInterval: nil)
            let now = Date(timeIntervalSince1970: 1_780_000_000)
            let digest = String(repeating: "ab", count: 32)
            let run = try ledger.beginRun(RunStart(kind: .provision, profileName: "bench-eu", profileSHA256: digest,
                                                   station: "bench-1", operatorName: "Zoë", startedAt: now))
            var errors: [String: LedgerError] = [:]
            func refused(_ name: String, _ body: () throws -> Void) {
                do { try body(); Issue.record("\(name) was not refused") } catch let error as LedgerError { errors[name] = error } catch {
                    Issue.record("\(name): \(error)")
                }
            }
            refused("step ends before it starts") {
                try ledger.recordStep(StepRecord(run: run, serial: "GK-7", step: "region", startedAt: now,
                                                 endedAt: now.addingTimeInterval(-5), result: .done))
            }
            refused("step without a serial") {
                try ledger.recordStep(StepRecord(run: run, serial: "", step: "region", startedAt: now, endedAt: now, result: .done))
            }
            refused("profile digest") {
                _ = try ledger.beginRun(RunStart(kind: .provision, profileName: "bench-eu", profileSHA256: "abc",
                                                 station: "bench-1", operatorName: "Zoë", startedAt: now))
            }
            refused("run ends before it started") {
                try ledger.finishRun(run, outcome: .succeeded, endedAt: now.addingTimeInterval(-60), reportPath: nil)
            }
            let reader = try Ledger.open(path: path, readOnly: true, heartbeatInterval: nil)
            refused("read-only") {
                _ = try reader.beginRun(RunStart(kind: .provision, profileName: "bench-eu", profileSHA256: digest,
                                                 station: "bench-1", operatorName: "Zoë", startedAt: now))
            }
            // An export whose directory cannot be made: its parent is a regular file.
            try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/not-a-directory"))
            refused("export directory") { try ledger.export(format: .csv, to: dir + "/not-a-directory/out/runs.csv") }
            #expect(errors["step ends before it starts"] == .invalidRecord(path: path, detail: ErrorDetail("step_ends_before_start", ["region", "GK-7"])))
            #expect(errors["read-only"]?.code == "ledger_read_only")
            #expect(errors["export directory"]?.code == "ledger_export_failed")

            let sentences = try FleetLocalizationTests.englishSentences(for: language)
            let localizer = Localizer(language: language)
            for (name, error) in errors.sorted(by: { $0.key < $1.key }) {
                let message = localizer.message(for: error)
                let found = LanguageAcceptanceTests.faults(message, language, sentences: sentences)
                #expect(found.isEmpty, "\(language) \(name): \(found)\n\(message)")
                if case .invalidRecord(_, let detail) = error { #expect(!message.contains(detail.code), "\(message)") }
                // The English stays whole too (`description`, from the catalog).
                #expect(!error.description.contains("{") && !error.description.isEmpty)
            }
        }
    }
}
