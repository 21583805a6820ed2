import Foundation
import Testing
import GrokFleet

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("Output")
    struct OutputTests {
        @Test func displayWidth() {
            #expect(TextWidth.of("abc") == 3)
            #expect(TextWidth.of("é") == 1)
            #expect(TextWidth.of("e\u{301}") == 1)  // decomposed: e + combining acute
            #expect(TextWidth.of("PÉRIPHÉRIQUE") == 12)
            #expect(TextWidth.of("Größe") == 5)
            #expect(TextWidth.of("日本") == 4)
            #expect(TextWidth.of("\u{1F600}") == 2)
            #expect(TextWidth.of("a\u{200B}b") == 2)  // zero-width space
            #expect(TextWidth.of("\u{00A0}:") == 2)
        }

        /// The display column where each cell of `line` starts, given the cells.
        func columns(of line: String, cells: [String]) -> [Int] {
            var result: [Int] = []
            var rest = line[...]
            var consumed = 0
            for cell in cells {
                let range = rest.range(of: cell)!
                consumed += TextWidth.of(rest[..<range.lowerBound])
                result.append(consumed)
                consumed += TextWidth.of(cell)
                rest = rest[range.upperBound...]
            }
            return result
        }

        @Test func tableAlignsAccentedDecomposedAndWideText() {
            let rows = [
                ["sim:0", "émulé", "Grokker émulé, état dans /tmp/b"],
                ["alsa:hw:1,0", "Wiedergabe und Aufnahme", "USB Audio"],
                ["alsa:x", "e\u{301}mule\u{301}", "日本語のカード"],
            ]
            let table = Table(headers: ["PÉRIPHÉRIQUE", "TYPE", "DESCRIPTION"], rows: rows)
            let lines = table.lines()
            #expect(lines.count == 4)
            let expected = columns(of: lines[0], cells: ["PÉRIPHÉRIQUE", "TYPE", "DESCRIPTION"])
            #expect(expected == [0, 14, 14 + 23 + 2])
            for (line, row) in zip(lines.dropFirst(), rows) {
                #expect(columns(of: line, cells: row) == expected, "\(line)")
                #expect(!line.hasSuffix(" "))
            }
        }

        @Test func tableRightAlignmentAndShortRows() {
            let table = Table(headers: ["N", "NAME"], rows: [["7", "ü"], ["123"]], alignments: [.right])
            #expect(table.lines() == ["  N  NAME", "  7  ü", "123"])
        }

        /// The fleet summary in French is 106 columns wide: on a 100-column terminal its last
        /// header wrapped as "Résulta" / "t" and every row broke the same way; at 60 columns
        /// serial numbers, run keys and German headers were cut mid-word ("5050692" / "8").
        @Test("a table wider than the terminal wraps cells at spaces inside their columns, or shows records, never cutting a word or losing text",
              arguments: [100, 80, 60, 45])
        func tableFitsTheTerminal(width: Int) {
            let headers = ["Appareil", "N° de série", "Firmware", "Région", "Test de fonctionnement", "Résultat"]
            let rows = [["sim:0", "72833392", "1.7.3 → 1.8.0", "FCC (États-Unis), IC (Canada)", "réussi, 6,5 lectures/s", "terminé"],
                        ["sim:1", "38812967", "1.7.3 → 1.8.0", "ETSI (Europe)", "échoué : étiquettes de référence manquantes", "échec"]]
            let table = Table(headers: headers, rows: rows)
            #expect(table.lines().map { TextWidth.of($0) }.max()! > 100, "the sample must be wider than the terminal")
            let lines = table.lines(width: width)
            for line in lines { #expect(TextWidth.of(line) < width, "\(TextWidth.of(line)) columns: \(line)") }
            // Every word of every cell is shown whole: no text lost, no word cut.
            let shown = Set(lines.flatMap { $0.split(separator: " ").map(String.init) })
            for word in (headers + rows.flatMap { $0 }).flatMap({ $0.split(separator: " ").map(String.init) }) {
                #expect(shown.contains(word), "\(width): '\(word)' is not shown whole:\n\(lines.joined(separator: "\n"))")
            }
            #expect(lines.count > 3, "nothing was wrapped")
            // Wide enough for its longest words: still a table, headers on the first line.
            #expect(lines[0].hasPrefix("Appareil  N° de série") == (width >= 80), "\(lines[0])")
            #expect(Table(headers: ["N", "NAME"], rows: [["7", "ü"]]).lines(width: 100) == ["N  NAME", "7  ü"])
        }

        @Test("a table too narrow for its words shows each row as a record: a header and its value per line, an empty line between rows")
        func recordsWhenTooNarrow() {
            let table = Table(headers: ["Seriennummer", "Verbindungsaufbau", "Region"],
                              rows: [["50506928", "673 ms", "nicht festgelegt"], ["72366187", "701 ms", ""]])
            #expect(table.lines(width: 30) == ["Seriennummer       50506928", "Verbindungsaufbau  673 ms", "Region             nicht", "                   festgelegt",
                                               "", "Seriennummer       72366187", "Verbindungsaufbau  701 ms", "Region"])
        }

        @Test func wrapBreaksOnlyAtASCIISpaces() {
            let french = "Langue des messages\u{00A0}: en, es, fr ou de."
            let lines = TextWidth.wrap(french, width: 22)
            #expect(lines == ["Langue des messages\u{00A0}:", "en, es, fr ou de."])
            #expect(TextWidth.wrap("  a b c", width: 5) == ["  a b", "  c"])
            #expect(TextWidth.wrap("USAGE: aaa bbb ccc", width: 14, hangingIndent: 7) == ["USAGE: aaa bbb", "       ccc"])
        }

        struct Event: Encodable {
            let zeta: Int
            let alpha: String
            let path: String
        }

        @Test func jsonLinesAreCompactSortedAndReadable() {
            let line = JSONLines.line(for: Event(zeta: 1, alpha: "é\"", path: "/tmp/a"))
            #expect(line == "{\"alpha\":\"é\\\"\",\"path\":\"/tmp/a\",\"zeta\":1}\n")
        }

        @Test("a line to the systemd journal carries its priority (<3> error, <4> warning); the same lines elsewhere do not")
        func journalPriorities() throws {
            let directory = try makeTemporaryDirectory()
            func run(journal: Bool) throws -> (out: String, err: String) {
                let outPath = directory + "/out-\(journal)", errPath = directory + "/err-\(journal)"
                let out = open(outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600), err = open(errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                defer { close(out); close(err) }
                var info = stat()
                #expect(fstat(out, &info) == 0)
                // systemd gives one stream for both; here stdout's: stderr (another file) is not the journal.
                let console = Console(localizer: Localizer(language: .en), json: false, quiet: false,
                                      standardOutput: FileDescriptorSink(fileDescriptor: out),
                                      standardError: FileDescriptorSink(fileDescriptor: err),
                                      journalStream: journal ? "\(info.st_dev):\(info.st_ino)" : nil)
                #expect(console.isJournal(.standardOutput) == journal && !console.isJournal(.standardError))
                console.print("sim:0: smoke test — failed\nsecond line", priority: .warning)
                console.print("sim:0: provisioned", priority: .info)
                console.print("plain")
                console.report(FleetError.invalidDevice("sim:99"))
                return (try String(contentsOfFile: outPath, encoding: .utf8), try String(contentsOfFile: errPath, encoding: .utf8))
            }
            let journal = try run(journal: true)
            #expect(journal.out == "<4>sim:0: smoke test — failed\n<4>second line\n<6>sim:0: provisioned\nplain\n")
            #expect(journal.err.hasPrefix("Error: "))
            let elsewhere = try run(journal: false)
            #expect(elsewhere.out == "sim:0: smoke test — failed\nsecond line\nsim:0: provisioned\nplain\n")
            // Garbage in JOURNAL_STREAM is not the journal.
            let garbage = Console(localizer: Localizer(language: .en), json: false, quiet: false, journalStream: "not:a:stream")
            #expect(!garbage.isJournal(.standardOutput))
        }

        @Test func consoleHonoursQuietAndJSON() {
            func console(json: Bool, quiet: Bool) -> (Console, BufferSink, BufferSink) {
                let out = BufferSink()
                let err = BufferSink()
                return (
                    Console(
                        localizer: Localizer(language: .de), json: json, quiet: quiet, standardOutput: out,
                        standardError: err), out, err
                )
            }
            let (plain, plainOut, plainErr) = console(json: false, quiet: false)
            plain.say(.devicesNoALSA)
            plain.say(.devicesNoALSA, to: .standardError)
            plain.warn(.devicesNoBench, "/b")
            #expect(plainOut.text == "Keine ALSA-Audiogeräte gefunden.\n")
            #expect(plainErr.text.hasPrefix("Keine ALSA-Audiogeräte gefunden.\nWarnung: Noch keine emulierten Grokker in /b;"))

            let (quiet, quietOut, quietErr) = console(json: false, quiet: true)
            quiet.say(.devicesNoALSA)
            quiet.warn(.devicesNoALSA)
            quiet.print("result")
            #expect(quiet.report(FleetError.benchUnreadable(path: "/b", detail: "x")) == .failure)
            #expect(quietOut.text == "result\n")
            #expect(quietErr.text.hasPrefix("Fehler: Das Prüfstandverzeichnis „/b“"))

            let (json, jsonOut, jsonErr) = console(json: true, quiet: false)
            json.say(.devicesNoALSA)
            json.json(["ok": true])
            json.warn(.devicesNoALSA)
            #expect(json.report(CLIError.devices(.invalidDevice("x"))) == .usageError)
            #expect(jsonOut.text == "{\"ok\":true}\n")
            let errLines = jsonErr.text.split(separator: "\n")
            #expect(errLines.count == 2)
            #expect(errLines[0] == "{\"warning\":{\"code\":\"devices.no_alsa\",\"message\":\"No ALSA sound devices found.\"}}")
            #expect(errLines[1].hasPrefix("{\"error\":{\"code\":\"usage_invalid_device\",\"message\":\"Invalid device 'x'."))
        }

        @Test func devicesListsTheEmulatedBench() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            for name in ["sim-3", "sim-12", "sim-64", "sim-07", "notes"] {
                try FileManager.default.createDirectory(atPath: bench + "/" + name, withIntermediateDirectories: true)
            }
            _ = FileManager.default.createFile(atPath: bench + "/sim-5", contents: Data())  // a file, not state
            #expect(try Bench(directory: bench).emulatedDevices() == [3, 12])

            let json = runInProcess(["devices", "--json", "--bench", bench])
            #expect(json.status == 0)
            #expect(json.standardError == "")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
            #expect(object["bench"] as? String == bench)
            let devices = try #require(object["devices"] as? [[String: Any]])
            let emulated = devices.filter { $0["kind"] as? String == "emulated" }
            #expect(emulated.map { $0["device"] as? String } == ["sim:3", "sim:12"])
            #expect(emulated.first?["state_directory"] as? String == bench + "/sim-3")

            let text = runInProcess(["devices", "--bench", bench, "--lang", "fr"])
            #expect(text.status == 0)
            let lines = text.standardOutput.split(separator: "\n")
            // The first column is as wide as the longest ALSA name on this machine
            // (libasound2-plugins adds `alsa:samplerate`, ...).
            let header = lines.first.map { $0.split(separator: " ", omittingEmptySubsequences: true) }
            #expect(header?.prefix(2) == ["PÉRIPHÉRIQUE", "TYPE"])
            #expect(lines.contains { $0.hasPrefix("sim:12") && $0.contains("émulé") && $0.contains(bench + "/sim-12") })
        }

        @Test func devicesProbeSaysWhoAnswers() throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let bench = directory + "/bench"
            let environment = ["XDG_STATE_HOME": directory + "/state"]
            #expect(runInProcess(["info", "--device", "sim:2", "--bench", bench, "-q"], environment: environment).status == 0)

            let json = runInProcess(["devices", "--probe", "--json", "--bench", bench], environment: environment)
            #expect(json.status == 0 && json.standardError == "")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
            let probe = try #require(object["probe"] as? [[String: Any]])
            #expect(probe.map { $0["device"] as? String } == ["sim:2"])
            #expect(probe.first?["status"] as? String == "answered" && probe.first?["link_setting"] as? String == "stored")
            #expect(probe.first?["samples_per_bit"] as? Int == 8 && (probe.first?["serial"] as? String)?.count == 8)
            #expect(object["levels_waiting"] as? [Any] != nil)

            let german = runInProcess(["devices", "--probe", "--bench", bench, "--lang", "de"], environment: environment)
            #expect(german.status == 0)
            let serial = probe.first?["serial"] as? String ?? "?"
            #expect(german.standardOutput.contains(text(.devicesProbeAnswered, .de, serial, "1.7.3")))
            #expect(german.standardOutput.hasSuffix(text(.devicesProbeSummary, .de, "1", "1") + "\n"))
            // Without --probe nothing is asked.
            let plain = runInProcess(["devices", "--json", "--bench", bench], environment: environment)
            #expect((try JSONSerialization.jsonObject(with: Data(plain.standardOutput.utf8)) as? [String: Any])?["probe"] == nil)
        }

        @Test func devicesOnAnEmptyBenchSaysSoUnlessQuiet() throws {
            let bench = try makeTemporaryDirectory() + "/missing"
            let result = runInProcess(["devices", "--bench", bench], environment: ["LANG": "es_ES.UTF-8"])
            #expect(result.status == 0)
            #expect(result.standardOutput.contains(text(.devicesNoBench, .es, bench)))
            let quiet = runInProcess(["devices", "--bench", bench, "-q"], environment: ["LANG": "es_ES.UTF-8"])
            #expect(!quiet.standardOutput.contains(bench))
        }

        @Test func unreadableBenchIsAFailure() throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = directory + "/not-a-directory"
            _ = FileManager.default.createFile(atPath: file, contents: Data())
            let result = runInProcess(["devices", "--bench", file])
            #expect(result.status == 1)
            #expect(result.standardError == "Error: The bench '\(file)' is not a directory; give a directory with --bench.\n")
            #expect(!result.standardError.contains("Usage:"))
        }

        @Test func defaultBenchFollowsEnvironment() {
            #expect(GlobalOptions.defaultBench(environment: ["GROKCTL_BENCH": "/g", "XDG_STATE_HOME": "/x"]) == "/g")
            #expect(GlobalOptions.defaultBench(environment: ["XDG_STATE_HOME": "/x/", "HOME": "/h"]) == "/x/grokctl/bench")
            #expect(GlobalOptions.defaultBench(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"]) == "/h/.local/state/grokctl/bench")
            #expect(GlobalOptions.defaultBench(environment: ["GROKCTL_BENCH": "", "HOME": "/h"]) == "/h/.local/state/grokctl/bench")
        }
    }
}
