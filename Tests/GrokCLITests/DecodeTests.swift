import Foundation
import GrokAudio
import Testing

@testable import GrokCLI

/// One object per line of `--json` output.
func jsonObjects(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { line in
        let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(value as? [String: Any], "not a JSON object: \(line)")
    }
}

/// The whole frames of `frames` as (type, seq, ack, length), in order.
func frameKeys(_ frames: [[String: Any]]) -> [String] {
    frames.filter { $0["status"] as? String == "ok" }.map { frame in
        "\(frame["type"] ?? "?") seq=\(frame["seq"] ?? "?") ack=\(frame["ack"] ?? "?") len=\(frame["length"] ?? "?")"
    }
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
        /// Frames per transfer of the host's link (`ReaderOptions.blockSize`).
        static let hostBlockFrames = 256

        /// A recorded `info` session with an emulated Grokker: the recording, the `info
        /// --json` report, and the `audio decode --json` lines of the recording.
        struct Session {
            var directory: String
            var wav: String
            var report: [String: Any]
            var frames: [[String: Any]]
            var summary: [String: Any]
        }

        static func recordSession() throws -> Session {
            let directory = try makeTemporaryDirectory()
            let recordings = directory + "/recordings"
            try FileManager.default.createDirectory(atPath: recordings, withIntermediateDirectories: true)
            let info = try runBinary([
                "--bench", directory + "/bench", "--record-audio", recordings, "info", "--device", "sim:0", "--json",
            ])
            try #require(info.status == 0, "info failed: \(info.standardError)")
            let reports = try jsonObjects(info.standardOutput)
            try #require(reports.count == 1)
            let files = try FileManager.default.contentsOfDirectory(atPath: recordings)
            try #require(files.count == 1, "expected one recording, found \(files)")
            try #require(files[0].hasSuffix(".wav"))
            let wav = recordings + "/" + files[0]
            let decode = try runBinary(["audio", "decode", wav, "--json"])
            try #require(decode.status == 0, "decode failed: \(decode.standardError)")
            #expect(decode.standardError == "")
            var lines = try jsonObjects(decode.standardOutput)
            let summary = try #require(lines.popLast()?["summary"] as? [String: Any])
            return Session(directory: directory, wav: wav, report: reports[0], frames: lines, summary: summary)
        }

        @Test func recordingDecodesToWhatTheHostCounted() throws {
            let session = try Self.recordSession()
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            let played = session.frames.filter { $0["channel"] as? Int == 0 }
            let captured = session.frames.filter { $0["channel"] as? Int == 1 }
            #expect(played.allSatisfy { $0["direction"] as? String == "host_to_device" })
            #expect(captured.allSatisfy { $0["direction"] as? String == "device_to_host" })

            // The host says hello first; every frame it played is whole; the Grokker answered.
            #expect(played.first?["type"] as? String == "HELLO")
            #expect(played.allSatisfy { $0["status"] as? String == "ok" }, "\(played)")
            #expect(captured.contains { $0["type"] as? String == "HELLO-ACK" && $0["status"] as? String == "ok" })
            // Sorted by time, and every field a script relies on is there.
            let times = session.frames.compactMap { $0["time_s"] as? Double }
            #expect(times.count == session.frames.count && times == times.sorted())
            for frame in session.frames {
                for field in ["time_s", "channel", "direction", "bit_rate", "samples_per_bit", "type", "seq", "status", "quality"] {
                    #expect(frame[field] != nil, "\(field) missing in \(frame)")
                }
            }

            // The host decoded the same captured audio live and counted what it played.
            let sent = try #require(session.report["packets_sent"] as? Int)
            let received = try #require(session.report["packets_received"] as? Int)
            let audio = try WAVFile.read(path: session.wav)
            try #require(audio.channels.count == 2)
            let okPlayed = played.count { $0["status"] as? String == "ok" }
            let okCaptured = captured.count { $0["status"] as? String == "ok" }
            // packets_sent counts a frame once it starts playing; a frame still playing when
            // the port closed is in the recording only in part (the recording then ends in
            // the middle of it, not in silence).
            let endsInsideAFrame = audio.channels[0].suffix(8).contains { $0 != 0 }
            #expect(okPlayed == sent || (okPlayed == sent - 1 && endsInsideAFrame),
                    "host played \(sent) frames, the recording holds \(okPlayed) whole")
            // The block captured by the last transfer is recorded but was never demodulated.
            let lastBlock = Int64(audio.frameCount - Self.hostBlockFrames)
            let afterLastDemodulation = captured.count {
                $0["status"] as? String == "ok" && Int64($0["end_sample"] as? Int ?? 0) > lastBlock
            }
            #expect(okCaptured - afterLastDemodulation == received,
                    "host received \(received) frames, the recording holds \(okCaptured) whole")

            let channels = try #require(session.summary["channels"] as? [[String: Any]])
            #expect(channels.map { $0["frames_ok"] as? Int } == [okPlayed, okCaptured])
            #expect(channels.map { $0["direction"] as? String } == ["host_to_device", "device_to_host"])
            #expect(session.summary["sample_rate"] as? Int == 44100)
            #expect(abs((session.summary["audio_s"] as? Double ?? 0) - Double(audio.frameCount) / 44100) < 1e-5)
        }

        @Test func terminalTableIsLocalized() throws {
            let session = try Self.recordSession()
            defer { try? FileManager.default.removeItem(atPath: session.directory) }
            let okPlayed = frameKeys(session.frames.filter { $0["channel"] as? Int == 0 }).count
            let okCaptured = frameKeys(session.frames.filter { $0["channel"] as? Int == 1 }).count
            for language in [Language.en, .fr] {
                let result = try runBinary(["audio", "decode", session.wav, "--lang", language.rawValue])
                #expect(result.status == 0)
                let lines = result.standardOutput.split(separator: "\n").map(String.init)
                try #require(lines.count == session.frames.count + 4)
                for key in [MessageKey.decodeColumnTime, .decodeColumnDirection, .decodeColumnFrame, .decodeColumnQuality] {
                    #expect(lines[0].contains(text(key, language)))
                }
                #expect(lines[1].contains(text(.decodeDirectionHostToDevice, language)))
                #expect(lines[1].contains(text(.decodeFrame, language, "HELLO", "0", "0", "11")))
                #expect(lines[1].contains(text(.decodeStatusOK, language)))
                let cells = lines[1].split(separator: " ")
                #expect(cells.first?.hasPrefix("0.0") == true && cells.first?.count == 5, "time: \(lines[1])")
                #expect(cells.last.flatMap { Double($0) } != nil && cells.last?.count == 4, "quality: \(lines[1])")
                #expect(lines[lines.count - 3] == text(
                    .decodeSummaryChannel, language, text(.decodeDirectionHostToDevice, language), String(okPlayed), "0"))
                #expect(lines[lines.count - 2] == text(
                    .decodeSummaryChannel, language, text(.decodeDirectionDeviceToHost, language), String(okCaptured),
                    String(session.summary["frames_bad_crc"] as? Int ?? -1)))
                #expect(lines[lines.count - 1].hasSuffix(text(.decodeSummaryAudio, language, "", "44100")))
            }
        }

        static let soxPath = installedTool("sox")

        /// 300 ppm of clock error and some noise, made by an outside tool, change nothing:
        /// every frame of every direction comes through, in order, with the same fields.
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
                func keys(_ frames: [[String: Any]]) -> [String] {
                    frameKeys(frames.filter { $0["direction"] as? String == direction })
                }
                let original = keys(session.frames)
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
        func silenceHoldsNoFrames(_ language: Language) throws {
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
            #expect(summary["frames_ok"] as? Int == 0)
        }

        /// Noise at sample rates too low for some or all modes: no frames, no crash.
        @Test(arguments: [1000, 8000])
        func lowSampleRatesHoldNoFrames(_ rate: Int) throws {
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
            #expect(frameKeys(lines) == frameKeys(session.frames.filter { $0["channel"] as? Int == 1 }))

            // Left and right swapped (as `grokctl emulate --record-audio` records: left is
            // what the Grokker played): the frames say which way each channel went.
            let swapped = directory + "/swapped.wav"
            let stereo = try WAVWriter(path: swapped, sampleRate: audio.sampleRate, channels: 2)
            try stereo.append(channels: [audio.channels[1], audio.channels[0]])
            try stereo.finish()
            let decoded = try runBinary(["audio", "decode", swapped, "--json"])
            #expect(decoded.status == 0)
            var frames = try jsonObjects(decoded.standardOutput)
            _ = frames.popLast()
            #expect(frames.filter { $0["channel"] as? Int == 0 }.allSatisfy { $0["direction"] as? String == "device_to_host" })
            #expect(frames.filter { $0["channel"] as? Int == 1 }.allSatisfy { $0["direction"] as? String == "host_to_device" })
            #expect(frameKeys(frames.filter { $0["direction"] as? String == "host_to_device" })
                == frameKeys(session.frames.filter { $0["channel"] as? Int == 0 }))
        }
    }
}
