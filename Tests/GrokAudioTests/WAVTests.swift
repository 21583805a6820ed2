import Foundation
import GrokBasics
import GrokTestSupport
import Testing

@testable import GrokAudio

/// Builds WAV files byte by byte, so the reader is tested against exactly what a header says.
struct WAVBytes {
    var bytes: [UInt8] = []

    mutating func ascii(_ text: String) { bytes += Array(text.utf8) }
    mutating func u16(_ value: Int) { bytes += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
    mutating func u32(_ value: Int) { for shift in [0, 8, 16, 24] { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) } }

    /// A fmt chunk; `extensible` wraps `tag` in WAVE_FORMAT_EXTENSIBLE.
    static func fmt(tag: Int, channels: Int, rate: Int, bits: Int, extensible: Bool = false) -> [UInt8] {
        var chunk = WAVBytes()
        chunk.ascii("fmt ")
        chunk.u32(extensible ? 40 : 16)
        chunk.u16(extensible ? 0xFFFE : tag)
        chunk.u16(channels)
        chunk.u32(rate)
        chunk.u32(rate * channels * bits / 8)
        chunk.u16(channels * bits / 8)
        chunk.u16(bits)
        if extensible {
            chunk.u16(22)
            chunk.u16(bits)
            chunk.u32(channels == 1 ? 0x4 : 0x3)
            chunk.u16(tag)
            chunk.bytes += [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        }
        return chunk.bytes
    }

    static func chunk(_ id: String, _ body: [UInt8], declaredSize: Int? = nil) -> [UInt8] {
        var chunk = WAVBytes()
        chunk.ascii(id)
        chunk.u32(declaredSize ?? body.count)
        chunk.bytes += body
        if body.count % 2 == 1 { chunk.bytes.append(0) }
        return chunk.bytes
    }

    static func riff(_ chunks: [UInt8]...) -> [UInt8] {
        let body = chunks.joined()
        var file = WAVBytes()
        file.ascii("RIFF")
        file.u32(4 + body.count)
        file.ascii("WAVE")
        return file.bytes + body
    }
}

@Suite("WAV")
struct WAVTests {
    let scratch = TemporaryDirectory("grokaudio-test")

    func write(_ bytes: [UInt8], name: String = "test.wav") throws -> String {
        let path = scratch.file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: Writer -> reader

    @Test(arguments: [1, 2, 3])
    func writerRoundTripsExact16BitValues(channels: Int) throws {
        let path = scratch.file("round-\(channels).wav")
        var random = SplitMix64(seed: UInt64(channels))
        // More than the writer's 64 KiB buffer, so it flushes along the way.
        let frames = 40_000
        let values = (0..<(frames * channels)).map { _ in Int16(Int(random.next() % 65535) - 32767) }
        let writer = try WAVWriter(path: path, sampleRate: 48000, channels: channels)
        let floats = values.map { Float($0) / 32767 }
        try writer.append(interleaved: Array(floats[0..<(1000 * channels)]))
        try writer.append(interleaved: Array(floats[(1000 * channels)...]))
        #expect(writer.frameCount == frames)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(FileManager.default.fileExists(atPath: path + ".partial"))
        try writer.finish()
        #expect(!FileManager.default.fileExists(atPath: path + ".partial"))

        let audio = try WAVFile.read(path: path)
        #expect(audio.sampleRate == 48000)
        #expect(audio.channels.count == channels)
        #expect(audio.frameCount == frames)
        for channel in 0..<channels {
            let expected = stride(from: channel, to: values.count, by: channels).map { PCM16.float(values[$0]) }
            #expect(audio.channels[channel] == expected)
            #expect(audio.channels[channel].map(PCM16.sample) == expected.map(PCM16.sample))
        }
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(size == 44 + frames * channels * 2)
    }

    @Test func perChannelAppendEqualsInterleaved() throws {
        let left: [Float] = [0, 0.5, -0.5, 1]
        let right: [Float] = [-1, 0.25, 2, -2]
        let a = try WAVWriter(path: scratch.file("a.wav"), sampleRate: 44100, channels: 2)
        try a.append(channels: [left, right])
        try left.withUnsafeBufferPointer { l in
            try right.withUnsafeBufferPointer { r in try a.append(channels: [l, r]) }
        }
        try a.finish()
        let audio = try WAVFile.read(path: scratch.file("a.wav"))
        let clamp: (Float) -> Float = { PCM16.float(PCM16.sample($0)) }
        #expect(audio.channels == [(left + left).map(clamp), (right + right).map(clamp)])
    }

    @Test func unfinishedWriterLeavesNothing() throws {
        let path = scratch.file("dropped.wav")
        do {
            let writer = try WAVWriter(path: path, sampleRate: 44100, channels: 1)
            try writer.append(interleaved: [0.1, 0.2])
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
    }

    @Test func finishingTwiceIsAnError() throws {
        let path = scratch.file("twice.wav")
        let writer = try WAVWriter(path: path, sampleRate: 44100, channels: 1)
        try writer.finish()
        #expect(throws: AudioError.self) { try writer.finish() }
        #expect(throws: AudioError.self) { try writer.append(interleaved: [0]) }
        #expect(try WAVFile.read(path: path).frameCount == 0)
    }

    @Test func writerNeedsAWritableDirectory() {
        #expect {
            _ = try WAVWriter(path: scratch.file("missing-dir/x.wav"), sampleRate: 44100, channels: 1)
        } throws: { error in
            guard case .file(let path, _) = error as? AudioError else { return false }
            return path == scratch.file("missing-dir/x.wav.partial")
        }
    }

    // MARK: Hand-built headers

    @Test func reads8BitUnsigned() throws {
        let path = try write(WAVBytes.riff(
            WAVBytes.fmt(tag: 1, channels: 1, rate: 8000, bits: 8), WAVBytes.chunk("data", [128, 255, 1, 0])))
        let audio = try WAVFile.read(path: path)
        #expect(audio.sampleRate == 8000)
        #expect(audio.channels == [[0, 1, -1, -1]])
    }

    @Test func reads24BitWithOddUnknownChunk() throws {
        let samples: [UInt8] = [0xFF, 0xFF, 0x7F, 0x01, 0x00, 0x80, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00]
        let path = try write(WAVBytes.riff(
            WAVBytes.fmt(tag: 1, channels: 2, rate: 96000, bits: 24),
            WAVBytes.chunk("LIST", [1, 2, 3]),  // odd size: padded
            WAVBytes.chunk("data", samples)))
        let audio = try WAVFile.read(path: path)
        #expect(audio.sampleRate == 96000)
        #expect(audio.channels == [[1, Float(Double(0x400000) / 8_388_607)], [-1, 0]])
    }

    @Test func reads32BitInteger() throws {
        var data = WAVBytes()
        data.u32(Int(Int32.max))
        data.u32(Int(UInt32(bitPattern: Int32.min + 1)))
        data.u32(1 << 30)
        let path = try write(WAVBytes.riff(
            WAVBytes.fmt(tag: 1, channels: 1, rate: 44100, bits: 32), WAVBytes.chunk("data", data.bytes)))
        #expect(try WAVFile.read(path: path).channels == [[1, -1, Float(Double(1 << 30) / 2_147_483_647)]])
    }

    @Test func readsFloat32AndFloat64() throws {
        let floats: [Float] = [0.5, -0.25, 1.5, -3]
        let f32 = floats.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
        let path32 = try write(WAVBytes.riff(
            WAVBytes.fmt(tag: 3, channels: 2, rate: 44100, bits: 32), WAVBytes.chunk("data", f32)), name: "f32.wav")
        #expect(try WAVFile.read(path: path32).channels == [[0.5, 1], [-0.25, -1]])

        let doubles: [Double] = [0.125, -0.75, 0]
        let f64 = doubles.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
        let path64 = try write(WAVBytes.riff(
            WAVBytes.fmt(tag: 3, channels: 1, rate: 48000, bits: 64), WAVBytes.chunk("data", f64)), name: "f64.wav")
        #expect(try WAVFile.read(path: path64).channels == [[0.125, -0.75, 0]])
    }

    @Test func readsExtensible() throws {
        var pcm = WAVBytes()
        pcm.u16(16384)
        pcm.u16(Int(UInt16(bitPattern: -32767)))
        let path16 = try write(WAVBytes.riff(
            WAVBytes.fmt(tag: 1, channels: 1, rate: 44100, bits: 16, extensible: true),
            WAVBytes.chunk("fact", [0, 0, 0, 0]), WAVBytes.chunk("data", pcm.bytes)), name: "ext16.wav")
        #expect(try WAVFile.read(path: path16).channels == [[PCM16.float(16384), -1]])

        let f32 = [Float(0.75)].flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
        let pathF = try write(WAVBytes.riff(
            WAVBytes.fmt(tag: 3, channels: 1, rate: 44100, bits: 32, extensible: true),
            WAVBytes.chunk("data", f32)), name: "extf.wav")
        #expect(try WAVFile.read(path: pathF).channels == [[0.75]])
    }

    @Test func dataBeforeFmtAndTrailingPartialFrameAreAccepted() throws {
        let path = try write(WAVBytes.riff(
            WAVBytes.chunk("data", [0xFF, 0x7F, 0x00]),
            WAVBytes.fmt(tag: 1, channels: 1, rate: 44100, bits: 16)))
        #expect(try WAVFile.read(path: path).channels == [[1]])
    }

    // MARK: Bad files

    /// Each bad file and the code (under `audio.detail`) its refusal carries.
    static let badFiles: [(String, [UInt8], String)] = [
        ("empty", [], "ends_early"),
        ("wrong magic", Array("RIFX".utf8) + [0, 0, 0, 0] + Array("WAVE".utf8), "rifx"),
        ("not RIFF", Array("OggS\0\0\0\0\0\0\0\0".utf8), "not_riff"),
        ("not WAVE", Array("RIFF".utf8) + [4, 0, 0, 0] + Array("AVI ".utf8), "not_wave"),
        ("truncated data", WAVBytes.riff(
            WAVBytes.fmt(tag: 1, channels: 1, rate: 44100, bits: 16),
            WAVBytes.chunk("data", [1, 2, 3, 4], declaredSize: 1000)), "data_truncated"),
        ("truncated header", Array(WAVBytes.riff(WAVBytes.fmt(tag: 1, channels: 1, rate: 44100, bits: 16)).prefix(30)), "ends_early"),
        ("absurd data size", WAVBytes.riff(
            WAVBytes.fmt(tag: 1, channels: 1, rate: 44100, bits: 16),
            WAVBytes.chunk("data", [0, 0], declaredSize: 0xFFFF_FFF0)), "data_too_large"),
        ("absurd fmt size", WAVBytes.riff(WAVBytes.chunk("fmt ", [0, 0], declaredSize: 0x7FFF_FFFF)), "fmt_too_long"),
        ("zero channels", WAVBytes.riff(
            WAVBytes.fmt(tag: 1, channels: 0, rate: 44100, bits: 16), WAVBytes.chunk("data", [])), "zero_channels"),
        ("zero rate", WAVBytes.riff(
            WAVBytes.fmt(tag: 1, channels: 1, rate: 0, bits: 16), WAVBytes.chunk("data", [])), "sample_rate"),
        ("12-bit", WAVBytes.riff(
            WAVBytes.fmt(tag: 1, channels: 1, rate: 44100, bits: 12), WAVBytes.chunk("data", [])), "integer_bits"),
        ("compressed", WAVBytes.riff(
            WAVBytes.fmt(tag: 0x55, channels: 1, rate: 44100, bits: 16), WAVBytes.chunk("data", [])), "compressed"),
        ("no data", WAVBytes.riff(WAVBytes.fmt(tag: 1, channels: 1, rate: 44100, bits: 16)), "no_data_chunk"),
        ("no fmt", WAVBytes.riff(WAVBytes.chunk("data", [0, 0])), "no_fmt_chunk"),
    ]

    @Test(arguments: badFiles)
    func badFilesNameThePathAndTheProblem(name: String, bytes: [UInt8], problem: String) throws {
        let path = try write(bytes, name: name.replacingOccurrences(of: " ", with: "-") + ".wav")
        #expect {
            _ = try WAVFile.read(path: path)
        } throws: { error in
            guard case .badWAV(let named, let detail) = error as? AudioError else { return false }
            return named == path && detail.code == problem
        }
    }

    @Test("a WAV held in memory or streamed without a known size decodes as the same file on disk; a bad one names what the caller calls it, with the same problem",
          arguments: badFiles)
    func inMemoryAndStreamedDecodeAgreeWithTheFile(name: String, bytes: [UInt8], problem: String) throws {
        let good = WAVBytes.riff(WAVBytes.fmt(tag: 1, channels: 2, rate: 48000, bits: 24),
                                 WAVBytes.chunk("LIST", [1, 2, 3]), WAVBytes.chunk("data", [0, 0, 0x80, 0xFF, 0xFF, 0x7F, 1, 2]))
        let file = try WAVFile.read(path: try write(good))
        #expect(try WAVFile.decode(good, name: "standard input") == file)
        #expect(try Self.streamed(good).audio == file)
        var decodeError: AudioError?
        do { _ = try WAVFile.decode(bytes, name: "standard input") } catch { decodeError = error }
        guard case .badWAV(let named, let detail)? = decodeError else {
            Issue.record("\(name): decoded, or \(String(describing: decodeError))")
            return
        }
        #expect(named == "standard input" && detail.code == problem, "\(detail)")
        #expect(throws: decodeError!) { _ = try Self.streamed(bytes) }
    }

    /// An input read front to back that never ends: `start`, then zeros; counts what was taken.
    struct EndlessSource: WAVByteSource {
        var start: [UInt8]
        var taken = 0
        var stopAt: Int?
        mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
            var n = buffer.count
            if let stopAt { n = min(n, stopAt - taken) }
            for i in 0..<n { buffer[i] = taken + i < start.count ? start[taken + i] : 0 }
            taken += n
            return n
        }
    }

    /// `bytes` streamed with no size known, collected; with the blocks' sizes.
    static func streamed(_ bytes: [UInt8], blockFrames: Int = 4) throws(AudioError) -> (audio: WAVAudio, blocks: [Int]) {
        var source = EndlessSource(start: bytes, stopAt: bytes.count)
        var channels: [[Float]] = []
        var blocks: [Int] = []
        let summary = try WAVFile.stream(&source, name: "standard input", blockFrames: blockFrames) { _, block in
            if channels.isEmpty { channels = Array(repeating: [], count: block.count) }
            for (index, samples) in block.enumerated() { channels[index] += samples }
            blocks.append(block[0].count)
        }
        #expect(channels.isEmpty || channels[0].count == summary.frameCount)
        return (WAVAudio(sampleRate: summary.sampleRate,
                         channels: channels.isEmpty ? Array(repeating: [], count: summary.channelCount) : channels), blocks)
    }

    @Test("a header declaring 0xFFFFFFFF data bytes on endless input is refused after its 44 header bytes, not after reading them")
    func hugeDeclaredDataIsRefusedByItsHeader() {
        for declared in [0xFFFF_FFFF, (1 << 30) + 1] {
            var source = EndlessSource(start: WAVBytes.riff(WAVBytes.fmt(tag: 1, channels: 2, rate: 44100, bits: 16))
                + Array("data".utf8) + (0..<4).map { UInt8(truncatingIfNeeded: declared >> (8 * $0)) })
            #expect(throws: AudioError.badWAV(path: "standard input", detail: ErrorDetail("data_too_large", [String(declared)]))) {
                _ = try WAVFile.stream(&source, name: "standard input") { _, _ in Issue.record("a block was read") }
            }
            #expect(source.taken == 44)
        }
    }

    @Test("a data chunk over the limit (set small here) is refused before a sample is read; one within it is read to its end and no further, a block at a time")
    func dataLimitAndEndlessInput() throws {
        let limits = WAVFile.Limits(dataBytes: 100_000)
        func header(_ declared: Int) -> [UInt8] {
            WAVBytes.riff(WAVBytes.fmt(tag: 1, channels: 1, rate: 44100, bits: 16)) + Array("data".utf8)
                + (0..<4).map { UInt8(truncatingIfNeeded: declared >> (8 * $0)) }
        }
        var over = EndlessSource(start: header(100_002))
        #expect(throws: AudioError.badWAV(path: "pipe", detail: ErrorDetail("data_too_large", ["100002"]))) {
            _ = try WAVFile.stream(&over, name: "pipe", limits: limits) { _, _ in }
        }
        #expect(over.taken == 44)

        var within = EndlessSource(start: header(100_000))
        var largest = 0
        var frames = 0
        let summary = try WAVFile.stream(&within, name: "pipe", limits: limits, blockFrames: 4096) { _, block in
            largest = max(largest, block[0].count)
            frames += block[0].count
        }
        #expect(within.taken == 44 + 100_000)
        #expect(summary.frameCount == 50_000 && frames == 50_000)
        #expect(largest == 4096)
    }

    @Test("other chunks on a stream of unknown length are limited (64 KiB): an endless LIST chunk is refused by its header")
    func endlessOtherChunkIsRefused() {
        var source = EndlessSource(start: Array("RIFF".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + Array("WAVE".utf8)
            + Array("LIST".utf8) + [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(throws: AudioError.badWAV(path: "pipe", detail: ErrorDetail("headers_too_large", [String(WAVFile.maximumOtherBytes)]))) {
            _ = try WAVFile.stream(&source, name: "pipe") { _, _ in }
        }
        #expect(source.taken == 20)
    }

    @Test func missingFileIsAFileError() {
        let path = scratch.file("nothing.wav")
        #expect(throws: AudioError.file(path: path, detail: ErrorDetail("open_failed", ["ENOENT"]))) {
            _ = try WAVFile.read(path: path)
        }
    }

    // MARK: sox

    static let sox: String? = ["/usr/bin/sox", "/usr/local/bin/sox", "/bin/sox"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test(.enabled(if: sox != nil, "sox is not installed (apt-get install sox)"))
    func readsWhatSoxWrites() throws {
        let path = scratch.file("sine.wav")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.sox))
        process.arguments = ["-n", "-r", "44100", "-c", "1", path, "synth", "0.1", "sine", "1000"]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)

        let audio = try WAVFile.read(path: path)
        #expect(audio.sampleRate == 44100)
        #expect(audio.channels.count == 1)
        #expect(audio.frameCount == 4410)
        let samples = audio.channels[0]
        var signChanges = 0
        for index in 1..<samples.count where (samples[index - 1] < 0) != (samples[index] < 0) {
            signChanges += 1
        }
        // 1000 Hz for 0.1 s: 100 cycles, two sign changes each.
        #expect((198...201).contains(signChanges))
        // sox writes this as 32-bit WAVE_FORMAT_EXTENSIBLE; its own `sox x.wav -n stat`
        // reports a maximum amplitude of 0.704996 for it.
        #expect(abs(samples.map(abs).max()! - 0.704996) < 0.001)
    }
}
