import Foundation
import GrokAudio
import GrokLink
import GrokProtocol
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("Emulate")
    struct EmulateTests {
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
            // What is wrong is a code (`not_json`: the file is cut short), shown in the language.
            let message = text(.errorEmulatorStateCorrupt, language, file, "not_json")
            #expect(result.standardError == text(.errorLine, language, message) + "\n", "\(result.standardError)")
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

        @Test("on sound devices: one that cannot be opened is named with what to do (exit 1); a sound device with a file is a usage error (exit 64)")
        func soundDevicesAreNamed() throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let missing = try runBinary([
                "emulate", "--state", directory + "/dev", "--input", "alsa:grok_no_such_pcm", "--output", "alsa:grok_no_such_pcm",
            ])
            #expect(missing.status == 1)
            let error = missing.standardError.split(separator: "\n").last.map(String.init) ?? ""
            #expect(error.contains("'grok_no_such_pcm'") && error.contains("grokctl devices"), "\(missing.standardError)")

            let mixed = try runBinary([
                "emulate", "--state", directory + "/dev", "--input", "alsa:pulse", "--output", directory + "/out", "--lang", "fr",
            ])
            #expect(mixed.status == 64)
            #expect(mixed.standardError.contains(text(.errorUsageEmulateEndsMixed, .fr, "alsa:pulse", directory + "/out")),
                    "\(mixed.standardError)")
        }

        @Test("--protocol is gone: the emulator speaks only the vendor protocol")
        func protocolOptionIsGone() throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let result = try runBinary([
                "emulate", "--state", directory + "/dev", "--input", "/dev/zero", "--output", "/dev/null", "--protocol", "vendor",
            ])
            #expect(result.status == 64, "\(result.standardError)")
            #expect(result.standardError.contains("--protocol"))
        }

        /// An outside host on two FIFOs: it plays into the emulator's --input and records its
        /// --output, raw s16le mono at 44.1 kHz, and talks the vendor protocol to it.
        @Test("an outside host connects over two FIFOs of raw PCM, handshakes and reads GetVersion with the unit's serial")
        func outsideHostOverFIFOs() throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let toGrokker = directory + "/host-to-grokker"
            let fromGrokker = directory + "/grokker-to-host"
            try #require(mkfifo(toGrokker, 0o600) == 0 && mkfifo(fromGrokker, 0o600) == 0)
            let watchdog = SessionWatchdog()
            let emulator = try GrokctlChild(
                ["emulate", "--json", "--state", directory + "/dev", "--input", toGrokker, "--output", fromGrokker],
                in: directory, name: "emulate")
            watchdog.watch(emulator)
            // A writer on the Grokker's output keeps the host's open for reading from waiting
            // (and its reads from seeing an end before the emulator opens that end); the host's
            // open for writing then meets the emulator's open for reading.
            let holder = open(fromGrokker, O_RDWR | O_CLOEXEC)
            try #require(holder >= 0)
            defer { close(holder) }
            let port = try RawPipePort(inputPath: fromGrokker, outputPath: toGrokker)
            let driver = LinkDriver(port: port, engine: try VendorLink(role: .host, sampleRate: 44_100))
            let host = driver.engine
            try host.open()
            #expect(try driver.run(forAtMost: 5) { host.isConnected })
            try host.send(command: VendorOpcode.getVersion.rawValue, payload: try VendorVersionRequest().encode())
            var answer: ResponsePacket?
            _ = try driver.run(forAtMost: 5) {
                for event in host.drainEvents() { if case .packet(.completed(_, let response)) = event { answer = response } }
                return answer != nil
            }
            port.close()
            let result = try emulator.wait()
            #expect(!watchdog.finish(), "the session did not end; the watchdog killed it")
            #expect(result.status == 0, "\(result.standardError)")
            let events = try jsonObjects(result.standardOutput)
            #expect(events.map { $0["event"] as? String } == ["start", "end"])
            #expect(events.last?["reason"] as? String == "host_closed")
            let version = try VendorReaderVersion(decoding: try #require(answer).data)
            #expect(version.software == .application && version.protocolVersion == 20)
            #expect(ReaderInfo.formatSerialNumber(version.serialNumber) == events.first?["serial"] as? String)
            #expect(events.first?["firmware"] as? String == "1.7.3")
        }
    }
}
