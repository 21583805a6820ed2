import Foundation
import GrokAudio
import Testing

@testable import GrokCLI

extension CLI {
    @Suite("Emulate")
    struct EmulateTests {
        /// `text` split where `{1}` (a detail only the library knows) goes: what comes
        /// before it and after it, with `{0}` filled in.
        static func around(_ key: MessageKey, _ language: Language, _ first: String) -> (String, String) {
            let marker = "\u{1}"
            let parts = text(key, language, first, marker, "\u{2}").components(separatedBy: marker)
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }

        @Test(arguments: [Language.en, .fr])
        func missingInputNamesThePath(_ language: Language) throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let missing = directory + "/no-such-fifo"
            let output = directory + "/out"
            let expected: any Error
            do {
                _ = try RawPipePort(inputPath: missing, outputPath: output)
                Issue.record("\(missing) opened")
                return
            } catch {
                expected = error
            }
            let result = try runBinary([
                "emulate", "--state", directory + "/dev", "--input", missing, "--output", output,
                "--lang", language.rawValue,
            ])
            #expect(result.status == 1)
            #expect(result.standardOutput == "")
            let lines = result.standardError.split(separator: "\n").map(String.init)
            #expect(lines == [
                text(.emulateWaiting, language, missing, output),
                text(.errorLine, language, Localizer(language: language).message(for: expected)),
            ])
            #expect(lines.last?.contains(missing) == true)
            #expect(!FileManager.default.fileExists(atPath: output))
        }

        @Test(arguments: [Language.en, .de])
        func corruptStateNamesTheFile(_ language: Language) throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let state = directory + "/dev"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            let file = state + "/state.json"
            try Data("{\"format\": 1, \"serialNumber\": ".utf8).write(to: URL(fileURLWithPath: file))
            let fifo = directory + "/in"
            try #require(mkfifo(fifo, 0o600) == 0)

            let result = try runBinary([
                "emulate", "--state", state, "--input", fifo, "--output", directory + "/out",
                "--lang", language.rawValue,
            ])
            #expect(result.status == 1)
            #expect(result.standardOutput == "")
            let (before, after) = Self.around(.errorEmulatorStateCorrupt, language, file)
            let line = result.standardError
            #expect(line.hasPrefix(text(.errorLine, language, before)), "\(line)")
            #expect(line.hasSuffix(after + "\n"), "\(line)")
            // The state is left for the user to repair.
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "{\"format\": 1, \"serialNumber\": ")

            let json = try runBinary([
                "emulate", "--state", state, "--input", fifo, "--output", directory + "/out", "--json",
            ])
            #expect(json.status == 1)
            let error = try #require(try jsonObjects(json.standardError).first?["error"] as? [String: Any])
            #expect(error["code"] as? String == "emulator_state_corrupt")
            #expect((error["message"] as? String)?.contains(file) == true)
        }

        /// SIGINT and SIGTERM end a serving emulator cleanly: exit 0 and an end event.
        @Test(arguments: [SIGINT, SIGTERM])
        func signalStopsServing(_ signal: Int32) throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let watchdog = SessionWatchdog()
            // Silence in, nothing out: it serves as fast as it can until told to stop.
            let emulator = try GrokctlChild(
                ["emulate", "--json", "--state", directory + "/dev", "--input", "/dev/zero", "--output", "/dev/null"],
                in: directory, name: "emulate")
            watchdog.watch(emulator)
            // The start event is printed once the handlers are in place.
            let deadline = Date().addingTimeInterval(100)
            while !emulator.outputSoFar().contains("\"event\":\"start\""), emulator.isRunning, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
            kill(emulator.pid, signal)
            let result = try emulator.wait()
            #expect(!watchdog.finish(), "the emulator did not stop; the watchdog killed it")
            #expect(result.status == 0, "\(result.standardError)")
            let events = try jsonObjects(result.standardOutput)
            #expect(events.map { $0["event"] as? String } == ["start", "end"])
            #expect(events.last?["reason"] as? String == "signal")
            #expect(events.last?["packets_sent"] as? Int == 0)
        }
    }
}
