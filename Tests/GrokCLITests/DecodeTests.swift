import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

@testable import GrokCLI

/// One object per line of `--json` output.
func jsonObjects(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { line in
        let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(value as? [String: Any], "not a JSON object: \(line)")
    }
}

/// The whole packets of `packets` as their bytes, in order.
func packetKeys(_ packets: [[String: Any]]) -> [String] {
    packets.filter { $0["status"] as? String == "ok" }.map { "\($0["bytes"] ?? "?")" }
}

/// The path of an executable in the usual directories, if installed.
func installedTool(_ name: String) -> String? {
    ["/usr/bin/", "/usr/local/bin/", "/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Runs `tool` with `arguments`; returns its standard output, failing the test on a non-zero exit.
func runTool(_ tool: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let problems = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try #require(
        process.terminationStatus == 0,
        "\(tool) \(arguments) exited \(process.terminationStatus): \(String(decoding: problems, as: UTF8.self))")
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

extension CLI {
    @Suite("Audio decode")
    struct DecodeTests {
        /// A recorded session between our host (``ReaderSession``) and our emulated
        /// Grokker (``EmulatedGrokker``) over a clean simulated cable, recorded by
        /// ``RecordingPort`` as `--record-audio` records (left: played, right: captured), and
        /// the `audio decode --json` lines of the recording.
        struct Session {
            var directory: String
            var wav: String
            var packets: [[String: Any]]
            var summary: [String: Any]
            /// What the host's packet layer counted: requests it put on the line (resends included),
            /// answers it received.
            var sent: Int
            var received: Int
        }

        static func recordSession(samplesPerBit spb: Int = 12, sampleRate: Int = 44_100, inventory: Bool = false) throws -> Session {
            let directory = try makeTemporaryDirectory()
            let store = try DeviceStateStore.openOrCreate(directory: directory + "/bench", index: 0)
            try store.update { s in
                s.region = RegionSetting(name: "FCC (US), IC (Canada)", number: 1)
                s.provisioning.userHasSetRegion = true
            }
            let scene = RFScene(tags: [RFScene.Tag(epc: [0x30, 0x08, 0x33, 0xb2, 0xdd, 0xd9, 0x01, 0x40, 0, 0, 0, 1],
                                                   placement: .distance(meters: 0.5))])
            let grokker = try EmulatedGrokker(store: store, sampleRate: sampleRate, scene: scene)
            let cable = SimulatedCablePort(name: "decode", sampleRate: sampleRate, configuration: .clean, peer: grokker)
            let recording = try RecordingPort(wrapping: cable, directory: directory + "/recordings")
            let session = try ReaderSession(port: recording, samplesPerBit: spb)
            _ = try session.connect()
            _ = try session.batteryInfo()
            if inventory {
                try session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance))
                try session.collect(forAtMost: 10) { session.inventory!.packetsAnswered >= 3 }
                _ = try session.stopInventory()
            }
            try session.idle(forAtMost: 0.2)
            let statistics = session.link.packets.statistics
            session.close()
            let decode = try runBinary(["audio", "decode", recording.recordingPath, "--json"])
            try #require(decode.status == 0, "decode failed: \(decode.standardError)")
            #expect(decode.standardError == "")
            var lines = try jsonObjects(decode.standardOutput)
            let summary = try #require(lines.popLast()?["summary"] as? [String: Any])
            return Session(directory: directory, wav: recording.recordingPath, packets: lines, summary: summary,
                           sent: statistics.packetsSent + statistics.sendRetries, received: statistics.responsesReceived)
        }

        @Test("a recording decodes to the packets the host sent and received, at the setting it ran",
              arguments: [8, 12, 72])
        func recordingDecodesToWhatTheHostCounted(spb: Int) throws {
            let session = try Self.recordSession(samplesPerBit: spb)
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            let played = session.packets.filter { $0["channel"] as? Int == 0 }
            let captured = session.packets.filter { $0["channel"] as? Int == 1 }
            #expect(played.allSatisfy { $0["direction"] as? String == "host_to_device" })
            #expect(captured.allSatisfy { $0["direction"] as? String == "device_to_host" })
            #expect(session.packets.allSatisfy { $0["status"] as? String == "ok" && $0["samples_per_bit"] as? Int == spb },
                    "\(session.packets)")
            // The host asks first: GetVersion, then the battery; the Grokker answers each.
            #expect(played.first?["name"] as? String == "GetVersion (0x00)")
            #expect(played.contains { $0["name"] as? String == "GetBatteryLevel (0x03)" })
            #expect(played.allSatisfy { $0["kind"] as? String == "request" && $0["retry"] as? Bool == false })
            #expect(captured.allSatisfy { $0["kind"] as? String == "response" })
            #expect(captured.first?["name"] as? String == "ACK_0" && (captured.first?["length"] as? Int ?? 0) > 0)
            #expect(played.count == session.sent && captured.count == session.received,
                    "host sent \(session.sent), received \(session.received)")
            // Sorted by time, and every field a script relies on is there.
            let times = session.packets.compactMap { $0["time_s"] as? Double }
            #expect(times.count == session.packets.count && times == times.sorted())
            for packet in session.packets {
                for field in ["time_s", "end_sample", "channel", "direction", "bit_rate", "samples_per_bit", "kind", "name",
                              "length", "bytes", "status"] {
                    #expect(packet[field] != nil, "\(field) missing in \(packet)")
                }
            }
            let channels = try #require(session.summary["channels"] as? [[String: Any]])
            #expect(channels.map { $0["packets_ok"] as? Int } == [played.count, captured.count])
            #expect(channels.map { $0["samples_per_bit"] as? [Int] } == [[spb], [spb]])
            #expect(session.summary["packets_damaged"] as? Int == 0)
            #expect(session.summary["sample_rate"] as? Int == 44100)
        }

        @Test("an inventory's slave-mode packets are named from the reader's command set, its answers ACK_n")
        func slaveModeIsDecoded() throws {
            let session = try Self.recordSession(inventory: true)
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            #expect(session.packets.allSatisfy { $0["status"] as? String == "ok" }, "\(session.packets)")
            let played = session.packets.filter { $0["channel"] as? Int == 0 }
            let captured = session.packets.filter { $0["channel"] as? Int == 1 }
            #expect(played.contains { $0["name"] as? String == "Inventory (0x07)" })
            // The reader's requests in slave mode, and the host's answers to them.
            let readerRequests = captured.filter { $0["kind"] as? String == "request" }
            #expect(!readerRequests.isEmpty)
            let names = Set(readerRequests.compactMap { $0["name"] as? String })
            #expect(names.isSubset(of: ["FirstRead (0x01)", "FirstRead96 (0x02)", "SubsequentRead (0x03)", "Ping (0x05)",
                                        "Completed (0x00)"]), "\(names)")
            #expect(played.contains { $0["kind"] as? String == "response" })
        }

        @Test("48 kHz recordings decode at the 48 kHz settings")
        func at48kHz() throws {
            let session = try Self.recordSession(samplesPerBit: 12, sampleRate: 48_000)
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            #expect(!session.packets.isEmpty && session.packets.allSatisfy { $0["status"] as? String == "ok" })
            #expect(session.packets.allSatisfy { $0["bit_rate"] as? Double == 4000 })
            #expect(session.summary["sample_rate"] as? Int == 48000)
        }

        @Test func terminalTableIsLocalized() throws {
            let session = try Self.recordSession()
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            let okPlayed = packetKeys(session.packets.filter { $0["channel"] as? Int == 0 }).count
            let okCaptured = packetKeys(session.packets.filter { $0["channel"] as? Int == 1 }).count
            // The table counts what the JSON lists (a recording may end inside a packet).
            func damaged(_ channel: Int) -> String {
                String(session.packets.filter { $0["channel"] as? Int == channel && $0["status"] as? String != "ok" }.count)
            }
            let first = try #require(session.packets.first)
            for language in [Language.en, .fr] {
                let result = try runBinary(["audio", "decode", session.wav, "--lang", language.rawValue])
                #expect(result.status == 0)
                let lines = result.standardOutput.split(separator: "\n").map(String.init)
                try #require(lines.count == session.packets.count + 4)
                for key in [MessageKey.decodeColumnTime, .decodeColumnDirection, .decodeColumnPacket, .decodeColumnSetting] {
                    #expect(lines[0].contains(text(key, language)))
                }
                #expect(lines[1].contains(text(.decodeDirectionHostToDevice, language)))
                #expect(lines[1].contains(text(.decodePacket, language, "GetVersion (0x00)", String(first["length"] as? Int ?? -1))))
                #expect(lines[1].contains(text(.decodeStatusOK, language)))
                let cells = lines[1].split(separator: " ")
                #expect(cells.first?.count == 5, "time: \(lines[1])")
                #expect(lines[lines.count - 3] == text(
                    .decodeSummaryChannel, language, text(.decodeDirectionHostToDevice, language), String(okPlayed), damaged(0)))
                #expect(lines[lines.count - 2] == text(
                    .decodeSummaryChannel, language, text(.decodeDirectionDeviceToHost, language), String(okCaptured), damaged(1)))
                #expect(lines[lines.count - 1].hasSuffix(text(.decodeSummaryAudio, language, "", "44100")))
            }
        }

        static let soxPath = installedTool("sox")

        /// 300 ppm of clock error and some noise, made by an outside tool, change nothing:
        /// every packet of every direction comes through, in order, with the same bytes.
        @Test(.enabled(if: soxPath != nil, "sox is not installed (scripts/setup.sh --test installs it); skipping"))
        func resampledNoisyRecordingDecodesTheSame() throws {
            let sox = try #require(Self.soxPath)
            let soxi = try #require(installedTool("soxi"), "sox is installed without soxi")
            let session = try Self.recordSession()
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            let scaled = session.directory + "/scaled.wav"
            let noise = session.directory + "/noise.wav"
            let noisy = session.directory + "/noisy.wav"
            // `speed` plays 1.0003 times faster and resamples back to the same rate: the
            // same audio, 300 ppm shorter, as if recorded with a clock 300 ppm slow.
            _ = try runTool(sox, [session.wav, scaled, "speed", "1.0003"])
            let before = try #require(Double(try runTool(soxi, ["-s", session.wav])))
            let after = try #require(Double(try runTool(soxi, ["-s", scaled])))
            #expect(try runTool(soxi, ["-r", scaled]) == "44100")
            let ppm = (before / after - 1) * 1e6
            #expect(abs(ppm - 300) < 120, "length changed by \(ppm) ppm (\(before) → \(after) samples)")
            let seconds = try runTool(soxi, ["-D", scaled])
            _ = try runTool(sox, ["-n", "-r", "44100", "-c", "2", noise, "synth", seconds, "whitenoise", "vol", "0.02"])
            _ = try runTool(sox, ["-m", "-v", "1", scaled, "-v", "1", noise, noisy])

            let result = try runBinary(["audio", "decode", noisy, "--json"])
            #expect(result.status == 0, "\(result.standardError)")
            var lines = try jsonObjects(result.standardOutput)
            _ = lines.popLast()
            for direction in ["host_to_device", "device_to_host"] {
                func keys(_ packets: [[String: Any]]) -> [String] {
                    packetKeys(packets.filter { $0["direction"] as? String == direction })
                }
                let original = keys(session.packets)
                #expect(original.count >= 2, "too little to compare in \(direction)")
                #expect(keys(lines) == original, "\(direction)")
            }
        }

        // MARK: Errors

        @Test(arguments: [Language.en, .de])
        func unreadableFilesFailWithTheReadersError(_ language: Language) throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let missing = directory + "/missing.wav"
            let garbage = directory + "/garbage.wav"
            try Data("this is not a WAV file, just some words".utf8).write(to: URL(fileURLWithPath: garbage))
            for path in [missing, garbage] {
                let expected: any Error
                do {
                    _ = try WAVFile.read(path: path)
                    Issue.record("\(path) read as a WAV file")
                    continue
                } catch {
                    expected = error
                }
                let result = try runBinary(["audio", "decode", path, "--lang", language.rawValue])
                #expect(result.status == 1)
                #expect(result.standardOutput == "")
                #expect(result.standardError == text(.errorLine, language, Localizer(language: language).message(for: expected)) + "\n")
                #expect(result.standardError.contains(path))
            }
        }

        @Test(arguments: [Language.en, .es])
        func silenceHoldsNoPackets(_ language: Language) throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let silence = directory + "/silence.wav"
            let writer = try WAVWriter(path: silence, sampleRate: 44100, channels: 2)
            let zeros = [Float](repeating: 0, count: 44100)
            try writer.append(channels: [zeros, zeros])
            try writer.finish()

            let result = try runBinary(["audio", "decode", silence, "--lang", language.rawValue])
            #expect(result.status == 1)
            let message = text(.errorDecodeNoFrames, language, silence, Localizer(language: language).localizedNumber("1.000"), "0")
            #expect(message.contains(silence) && !message.contains("{"))
            #expect(result.standardError == text(.errorLine, language, message) + "\n")
            #expect(result.standardOutput.contains(
                text(.decodeSummaryChannel, language, text(.decodeDirectionHostToDevice, language), "0", "0")))

            let json = try runBinary(["audio", "decode", silence, "--json", "--lang", language.rawValue])
            #expect(json.status == 1)
            let error = try #require(try jsonObjects(json.standardError).first?["error"] as? [String: Any])
            #expect(error["code"] as? String == "decode_no_frames")
            #expect(error["message"] as? String == text(.errorDecodeNoFrames, .en, silence, "1.000", "0"))
            let summary = try #require(try jsonObjects(json.standardOutput).last?["summary"] as? [String: Any])
            #expect(summary["packets_ok"] as? Int == 0)
        }

        /// Noise at sample rates the vendor modem does not run (it runs at 44.1 and 48 kHz only):
        /// no packets, no crash.
        @Test(arguments: [1000, 8000, 96000])
        func otherSampleRatesHoldNoPackets(_ rate: Int) throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/noise-\(rate).wav"
            var state: UInt32 = 12345
            let noise = (0..<rate).map { _ -> Float in
                state = state &* 1_664_525 &+ 1_013_904_223
                return Float(Int32(bitPattern: state)) / Float(Int32.max) * 0.5
            }
            let writer = try WAVWriter(path: path, sampleRate: rate, channels: 1)
            try writer.append(channels: [noise])
            try writer.finish()
            let result = try runBinary(["audio", "decode", path, "--json"])
            #expect(result.status == 1)
            let error = try #require(try jsonObjects(result.standardError).first?["error"] as? [String: Any])
            #expect(error["code"] as? String == "decode_no_frames")
        }

        @Test func channelsAreLabelledByWhatTheyCarry() throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let session = try Self.recordSession()
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            let audio = try WAVFile.read(path: session.wav)
            let mono = directory + "/captured.wav"
            let writer = try WAVWriter(path: mono, sampleRate: audio.sampleRate, channels: 1)
            try writer.append(channels: [audio.channels[1]])
            try writer.finish()
            let result = try runBinary(["audio", "decode", mono, "--json"])
            #expect(result.status == 0)
            var lines = try jsonObjects(result.standardOutput)
            _ = lines.popLast()
            #expect(!lines.isEmpty && lines.allSatisfy { $0["direction"] as? String == "channel_0" })
            #expect(packetKeys(lines) == packetKeys(session.packets.filter { $0["channel"] as? Int == 1 }))

            // Left and right swapped (as `grokctl emulate --record-audio` records: left is
            // what the Grokker played): the first request says which way each channel went.
            let swapped = directory + "/swapped.wav"
            let stereo = try WAVWriter(path: swapped, sampleRate: audio.sampleRate, channels: 2)
            try stereo.append(channels: [audio.channels[1], audio.channels[0]])
            try stereo.finish()
            let decoded = try runBinary(["audio", "decode", swapped, "--json"])
            #expect(decoded.status == 0)
            var frames = try jsonObjects(decoded.standardOutput)
            _ = frames.popLast()
            #expect(!frames.isEmpty)
            #expect(frames.filter { $0["channel"] as? Int == 0 }.allSatisfy { $0["direction"] as? String == "device_to_host" })
            #expect(frames.filter { $0["channel"] as? Int == 1 }.allSatisfy { $0["direction"] as? String == "host_to_device" })
            #expect(packetKeys(frames.filter { $0["direction"] as? String == "host_to_device" })
                == packetKeys(session.packets.filter { $0["channel"] as? Int == 0 }))
        }
    }
}
