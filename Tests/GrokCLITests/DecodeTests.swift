import DeviceTestSupport
import Foundation
import GrokAudio
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

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

extension CLI {
    @Suite("Audio decode")
    struct DecodeTests {
        /// A recorded session (``LinkRecording``) and the `audio decode --json` lines of the
        /// recording (what the binary shows; the decoder itself is tested in GrokFleetTests'
        /// DecodeJobTests).
        struct Session {
            var recording: LinkRecording
            var directory: String { recording.directoryPath }
            var wav: String { recording.wav }
            var packets: [[String: Any]]
            var summary: [String: Any]
        }

        static func recordSession() throws -> Session {
            let recording = try LinkRecording.record()
            let decode = try runBinary(["audio", "decode", recording.wav, "--json"])
            try #require(decode.status == 0, "decode failed: \(decode.standardError)")
            #expect(decode.standardError == "")
            var lines = try jsonObjects(decode.standardOutput)
            let summary = try #require(lines.popLast()?["summary"] as? [String: Any])
            // Every field a script relies on is there.
            for packet in lines {
                for field in ["file", "time_s", "end_sample", "channel", "direction", "bit_rate", "samples_per_bit", "kind", "name",
                              "length", "bytes", "status"] {
                    #expect(packet[field] != nil, "\(field) missing in \(packet)")
                }
            }
            for field in ["file", "sample_rate", "audio_s", "packets_ok", "packets_damaged", "channels"] {
                #expect(summary[field] != nil, "\(field) missing in the summary")
            }
            return Session(recording: recording, packets: lines, summary: summary)
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
    }
}
