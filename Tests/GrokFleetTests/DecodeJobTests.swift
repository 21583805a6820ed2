import DeviceTestSupport
import Foundation
import GrokAudio
import GrokBasics
import GrokFleet
import GrokTestSupport
import Testing

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

/// `audio decode` as a use case: recordings of our host and our emulated Grokker on a
/// simulated cable (``LinkRecording``), decoded by ``RecordingDecoder``.
@Suite("Recording decoder")
struct DecodeJobTests {
    /// The whole packets' bytes, in order.
    static func keys(_ packets: [DecodedPacket]) -> [String] { packets.filter(\.isWhole).map(\.bytes) }

    static func decode(_ recording: LinkRecording) throws -> DecodedRecording {
        try RecordingDecoder.decode(path: recording.wav, file: recording.wav)
    }

    @Test("a recording decodes to the packets the host sent and received, at the setting it ran", arguments: [8, 12, 72])
    func recordingDecodesToWhatTheHostCounted(spb: Int) throws {
        let recording = try LinkRecording.record(samplesPerBit: spb)
        let decoded = try Self.decode(recording)
        let played = decoded.packets.filter { $0.channel == 0 }
        let captured = decoded.packets.filter { $0.channel == 1 }
        #expect(decoded.directions == [.hostToDevice, .deviceToHost])
        #expect(played.allSatisfy { $0.direction == "host_to_device" })
        #expect(captured.allSatisfy { $0.direction == "device_to_host" })
        #expect(decoded.packets.allSatisfy { $0.status == "ok" && $0.samplesPerBit == spb }, "\(decoded.packets)")
        // The host asks first: GetVersion, then the battery; the Grokker answers each.
        #expect(played.first?.name == "GetVersion (0x00)")
        #expect(played.contains { $0.name == "GetBatteryLevel (0x03)" })
        #expect(played.allSatisfy { $0.kind == "request" && $0.retry == false })
        #expect(captured.allSatisfy { $0.kind == "response" })
        #expect(captured.first?.name == "ACK_0" && (captured.first?.length ?? 0) > 0)
        #expect(played.count == recording.sent && captured.count == recording.received,
                "host sent \(recording.sent), received \(recording.received)")
        // Sorted by time, each labelled with its file, and every field a script relies on set.
        let times = decoded.packets.map(\.timeSeconds)
        #expect(times == times.sorted())
        #expect(decoded.packets.allSatisfy { $0.file == recording.wav && $0.kind != nil && $0.name != nil && $0.length != nil })
        #expect(decoded.packets.allSatisfy { $0.endSample > 0 && $0.bitRate > 0 && !$0.bytes.isEmpty })
        #expect(decoded.summary.channels.map(\.packetsOK) == [played.count, captured.count])
        #expect(decoded.summary.channels.map(\.samplesPerBit) == [[spb], [spb]])
        #expect(decoded.summary.packetsDamaged == 0)
        #expect(decoded.summary.sampleRate == 44100)
        #expect(decoded.summary.file == recording.wav)
        try decoded.requireWholePackets(name: recording.wav)
    }

    @Test("an inventory's slave-mode packets are named from the reader's command set, its answers ACK_n")
    func slaveModeIsDecoded() throws {
        let decoded = try Self.decode(try LinkRecording.record(inventory: true))
        #expect(decoded.packets.allSatisfy { $0.isWhole }, "\(decoded.packets)")
        let played = decoded.packets.filter { $0.channel == 0 }
        let captured = decoded.packets.filter { $0.channel == 1 }
        #expect(played.contains { $0.name == "Inventory (0x07)" })
        // The reader's requests in slave mode, and the host's answers to them.
        let readerRequests = captured.filter { $0.kind == "request" }
        #expect(!readerRequests.isEmpty)
        let names = Set(readerRequests.compactMap(\.name))
        #expect(names.isSubset(of: ["FirstRead (0x01)", "FirstRead96 (0x02)", "SubsequentRead (0x03)", "Ping (0x05)",
                                    "Completed (0x00)"]), "\(names)")
        #expect(played.contains { $0.kind == "response" })
    }

    @Test("48 kHz recordings decode at the 48 kHz settings")
    func at48kHz() throws {
        let decoded = try Self.decode(try LinkRecording.record(samplesPerBit: 12, sampleRate: 48_000))
        #expect(!decoded.packets.isEmpty && decoded.packets.allSatisfy { $0.isWhole })
        #expect(decoded.packets.allSatisfy { $0.bitRate == 4000 })
        #expect(decoded.summary.sampleRate == 48000)
    }

    static let soxPath = installedTool("sox")

    /// 300 ppm of clock error and some noise, made by an outside tool, change nothing:
    /// every packet of every direction comes through, in order, with the same bytes.
    @Test(.enabled(if: soxPath != nil, "sox is not installed (scripts/setup.sh --test installs it); skipping"))
    func resampledNoisyRecordingDecodesTheSame() throws {
        let sox = try #require(Self.soxPath)
        let soxi = try #require(installedTool("soxi"), "sox is installed without soxi")
        let recording = try LinkRecording.record()
        let original = try Self.decode(recording)
        let scaled = recording.directory.file("scaled.wav")
        let noise = recording.directory.file("noise.wav")
        let noisy = recording.directory.file("noisy.wav")
        // `speed` plays 1.0003 times faster and resamples back to the same rate: the
        // same audio, 300 ppm shorter, as if recorded with a clock 300 ppm slow.
        _ = try runTool(sox, [recording.wav, scaled, "speed", "1.0003"])
        let before = try #require(Double(try runTool(soxi, ["-s", recording.wav])))
        let after = try #require(Double(try runTool(soxi, ["-s", scaled])))
        #expect(try runTool(soxi, ["-r", scaled]) == "44100")
        let ppm = (before / after - 1) * 1e6
        #expect(abs(ppm - 300) < 120, "length changed by \(ppm) ppm (\(before) → \(after) samples)")
        let seconds = try runTool(soxi, ["-D", scaled])
        _ = try runTool(sox, ["-n", "-r", "44100", "-c", "2", noise, "synth", seconds, "whitenoise", "vol", "0.02"])
        _ = try runTool(sox, ["-m", "-v", "1", scaled, "-v", "1", noise, noisy])

        let decoded = try RecordingDecoder.decode(path: noisy, file: noisy)
        try decoded.requireWholePackets(name: noisy)
        for direction in ["host_to_device", "device_to_host"] {
            let keys = Self.keys(original.packets.filter { $0.direction == direction })
            #expect(keys.count >= 2, "too little to compare in \(direction)")
            #expect(Self.keys(decoded.packets.filter { $0.direction == direction }) == keys, "\(direction)")
        }
    }

    @Test("silence holds no packets: decode_no_frames with the file, its length and no damaged packets")
    func silenceHoldsNoPackets() throws {
        let directory = TemporaryDirectory()
        let silence = directory.file("silence.wav")
        let writer = try WAVWriter(path: silence, sampleRate: 44100, channels: 2)
        let zeros = [Float](repeating: 0, count: 44100)
        try writer.append(channels: [zeros, zeros])
        try writer.finish()
        let decoded = try RecordingDecoder.decode(path: silence, file: silence)
        #expect(decoded.packets.isEmpty && decoded.summary.packetsOK == 0)
        #expect(decoded.summary.channels.map(\.direction) == ["host_to_device", "device_to_host"])
        #expect(decoded.seconds == 1)
        #expect(throws: AudioDecodeFailure(path: silence, seconds: 1, damagedPackets: 0)) {
            try decoded.requireWholePackets(name: silence)
        }
        #expect(AudioDecodeFailure(path: silence, seconds: 1, damagedPackets: 0).arguments == [silence, "1.000", "0"])
    }

    /// Noise at sample rates the vendor modem does not run (it runs at 44.1 and 48 kHz only):
    /// no packets, no crash.
    @Test(arguments: [1000, 8000, 96000])
    func otherSampleRatesHoldNoPackets(_ rate: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("noise-\(rate).wav")
        var state: UInt32 = 12345
        let noise = (0..<rate).map { _ -> Float in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(Int32.max) * 0.5
        }
        let writer = try WAVWriter(path: path, sampleRate: rate, channels: 1)
        try writer.append(channels: [noise])
        try writer.finish()
        let decoded = try RecordingDecoder.decode(path: path, file: path)
        #expect(decoded.summary.packetsOK == 0)
        #expect(throws: AudioDecodeFailure.self) { try decoded.requireWholePackets(name: path) }
        #expect((try? decoded.requireWholePackets(name: path)) == nil)
    }

    @Test("channels are labelled by what they carry: a mono file by number, a swapped pair by its first request")
    func channelsAreLabelledByWhatTheyCarry() throws {
        let directory = TemporaryDirectory()
        let recording = try LinkRecording.record()
        let original = try Self.decode(recording)
        let audio = try WAVFile.read(path: recording.wav)
        let mono = directory.file("captured.wav")
        let writer = try WAVWriter(path: mono, sampleRate: audio.sampleRate, channels: 1)
        try writer.append(channels: [audio.channels[1]])
        try writer.finish()
        let single = try RecordingDecoder.decode(path: mono, file: mono)
        #expect(single.directions == [.channel(0)])
        #expect(!single.packets.isEmpty && single.packets.allSatisfy { $0.direction == "channel_0" })
        #expect(Self.keys(single.packets) == Self.keys(original.packets.filter { $0.channel == 1 }))

        // Left and right swapped (as `grokctl emulate --record-audio` records: left is
        // what the Grokker played): the first request says which way each channel went.
        let swapped = directory.file("swapped.wav")
        let stereo = try WAVWriter(path: swapped, sampleRate: audio.sampleRate, channels: 2)
        try stereo.append(channels: [audio.channels[1], audio.channels[0]])
        try stereo.finish()
        let turned = try RecordingDecoder.decode(path: swapped, file: swapped)
        #expect(turned.directions == [.deviceToHost, .hostToDevice])
        #expect(!turned.packets.isEmpty)
        #expect(turned.packets.filter { $0.channel == 0 }.allSatisfy { $0.direction == "device_to_host" })
        #expect(turned.packets.filter { $0.channel == 1 }.allSatisfy { $0.direction == "host_to_device" })
        #expect(Self.keys(turned.packets.filter { $0.direction == "host_to_device" })
            == Self.keys(original.packets.filter { $0.channel == 0 }))
    }

    @Test("a recording streamed from a pipe (standard input) decodes as the file does; what is no WAV is refused by its start")
    func pipeDecodesAsTheFile() throws {
        let recording = try LinkRecording.record()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: recording.wav)))
        let fromFile = try Self.decode(recording)
        func piped(_ input: [UInt8], file: String) throws -> DecodedRecording {
            var fds: [Int32] = [0, 0]
            try #require(pipe(&fds) == 0)
            defer { close(fds[0]) }
            let end = fds[1]
            let writer = Thread {
                var offset = 0
                while offset < input.count {
                    let n = input.withUnsafeBytes { write(end, $0.baseAddress! + offset, input.count - offset) }
                    if n <= 0 { break }
                    offset += n
                }
                close(end)
            }
            writer.start()
            return try RecordingDecoder.decode(fileDescriptor: fds[0], name: "standard input", file: file)
        }
        #expect(try piped(bytes, file: recording.wav) == fromFile)
        let dashed = try piped(bytes, file: "-")
        #expect(dashed.packets.allSatisfy { $0.file == "-" } && dashed.summary.file == "-")
        #expect(throws: AudioError.badWAV(path: "standard input", detail: ErrorDetail("not_riff", ["'this'"]))) {
            _ = try piped(Array("this is not a".utf8), file: "-")
        }
    }
}
