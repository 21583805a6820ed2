// CALSA re-exports the C library headers; in whole-module builds the compiler attributes
// some Glibc struct members (stat, timespec, tm) to it, so MemberImportVisibility needs it.
internal import CALSA
import Glibc
import GrokBasics

/// Decoded audio: one array of samples in -1...1 per channel, all the same length.
public struct WAVAudio: Sendable, Equatable {
    /// Frames per second.
    public var sampleRate: Int
    /// The samples, one array per channel (left first).
    public var channels: [[Float]]

    public init(sampleRate: Int, channels: [[Float]]) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Frames per channel.
    public var frameCount: Int { channels.first?.count ?? 0 }
}

/// Reads RIFF/WAVE files: PCM 8/16/24/32-bit integer, 32/64-bit IEEE float, plain or
/// `WAVE_FORMAT_EXTENSIBLE` (as sox writes), any number of channels.
///
/// Unknown chunks are skipped, odd-sized chunks are taken as padded to an even size, and
/// every size is checked against the file before anything is allocated. Sample data is
/// limited to ``maximumDataBytes`` (1 GiB); RF64 and big-endian RIFX files are refused.
public enum WAVFile {
    /// The largest `data` chunk read: 1 GiB.
    public static let maximumDataBytes = 1 << 30

    /// Reads and decodes the whole file.
    /// - Throws: ``AudioError/file(path:detail:)`` when it cannot be opened or read,
    ///   ``AudioError/badWAV(path:detail:)`` saying what is wrong otherwise.
    public static func read(path: String) throws(AudioError) -> WAVAudio {
        let fd = try POSIXCall.retrying(path: path, "open") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var info = stat()
        try POSIXCall.retrying(path: path, "fstat") { fstat(fd, &info) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw AudioError.file(path: path, detail: ErrorDetail("not_regular_file"))
        }
        let reader = Reader(fd: fd, memory: nil, path: path, size: Int(info.st_size))
        return try reader.decode()
    }

    /// Decodes a whole file already in memory (read from a pipe, such as standard input).
    /// - Parameters:
    ///   - bytes: The file's bytes.
    ///   - name: What errors call the file (`standard input`).
    /// - Throws: ``AudioError/badWAV(path:detail:)`` saying what is wrong.
    public static func decode(_ bytes: [UInt8], name: String) throws(AudioError) -> WAVAudio {
        try Reader(fd: -1, memory: bytes, path: name, size: bytes.count).decode()
    }

    /// How many bytes ``checkStart(_:name:)`` looks at: the RIFF header.
    public static let startBytes = 12

    /// Checks the first ``startBytes`` bytes of a stream (fewer: it ended there) as
    /// ``decode(_:name:)`` would, so a pipe that carries no WAV is refused before the rest of
    /// it is read.
    /// - Throws: ``AudioError/badWAV(path:detail:)``, the same error decoding would give.
    public static func checkStart(_ start: [UInt8], name: String) throws(AudioError) {
        let reader = Reader(fd: -1, memory: start, path: name, size: start.count)
        _ = try reader.header()
    }

    private struct Format {
        var isFloat: Bool
        var channels: Int
        var sampleRate: Int
        var bitsPerSample: Int
        var blockAlign: Int
    }

    private struct Reader {
        let fd: Int32
        /// The whole file, when it was read from a pipe; `nil`: read `fd` at offsets.
        let memory: [UInt8]?
        let path: String
        let size: Int

        func bad(_ code: String, _ values: [String] = []) -> AudioError { .badWAV(path: path, detail: ErrorDetail(code, values)) }

        func bytes(at offset: Int, count: Int) throws(AudioError) -> [UInt8] {
            guard offset >= 0, count >= 0, offset + count <= size else {
                throw bad("ends_early", [String(offset + count), String(size)])
            }
            if let memory { return Array(memory[offset..<(offset + count)]) }
            var buffer = [UInt8](repeating: 0, count: count)
            let got = try buffer.withUnsafeMutableBytes { raw in
                POSIXCall.readAll(fd, path: path, "read", raw, at: offset)
            }.get()
            if got < count { throw bad("ends_early", [String(offset + count), String(offset + got)]) }
            return buffer
        }

        /// The RIFF header, checked.
        func header() throws(AudioError) -> [UInt8] {
            let header = try bytes(at: 0, count: 12)
            let magic = String(decoding: header[0..<4], as: UTF8.self)
            switch magic {
            case "RIFF": break
            case "RIFX": throw bad("rifx")
            case "RF64": throw bad("rf64")
            default: throw bad("not_riff", [describe(header[0..<4])])
            }
            guard header[8..<12].elementsEqual("WAVE".utf8) else {
                throw bad("not_wave", [describe(header[8..<12])])
            }
            return header
        }

        func decode() throws(AudioError) -> WAVAudio {
            _ = try header()
            // The RIFF size is often wrong in streamed files; chunks are bounded by the file.
            var offset = 12
            var format: Format?
            var data: (offset: Int, count: Int)?
            while offset + 8 <= size, format == nil || data == nil {
                let chunk = try bytes(at: offset, count: 8)
                let id = describe(chunk[0..<4])
                let length = Int(le32(chunk, 4))
                let body = offset + 8
                switch id {
                case "'fmt '":
                    guard length >= 16 else { throw bad("fmt_too_short", [String(length)]) }
                    guard length <= 1024 else { throw bad("fmt_too_long", [String(length)]) }
                    format = try parseFormat(try bytes(at: body, count: length))
                case "'data'":
                    guard length <= WAVFile.maximumDataBytes else {
                        throw bad("data_too_large", [String(length)])
                    }
                    guard body + length <= size else {
                        throw bad("data_truncated", [String(length), String(max(0, size - body))])
                    }
                    data = (body, length)
                default:
                    break
                }
                offset = body + length + (length & 1)
            }
            guard let format else { throw bad("no_fmt_chunk") }
            guard let data else { throw bad("no_data_chunk") }
            let frames = data.count / format.blockAlign
            let samples = try bytes(at: data.offset, count: frames * format.blockAlign)
            return WAVAudio(sampleRate: format.sampleRate, channels: convert(samples, format: format, frames: frames))
        }

        func parseFormat(_ fmt: [UInt8]) throws(AudioError) -> Format {
            var tag = Int(le16(fmt, 0))
            let channels = Int(le16(fmt, 2))
            let sampleRate = Int(le32(fmt, 4))
            let blockAlign = Int(le16(fmt, 12))
            let bits = Int(le16(fmt, 14))
            if tag == 0xFFFE {
                guard fmt.count >= 40, le16(fmt, 16) >= 22 else {
                    throw bad("extensible_fmt_size", [String(fmt.count)])
                }
                let tail: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
                guard fmt[26..<40].elementsEqual(tail) else {
                    throw bad("extensible_unknown_guid")
                }
                tag = Int(le16(fmt, 24))
            }
            guard channels > 0 else { throw bad("zero_channels") }
            guard sampleRate > 0, sampleRate <= 1_000_000 else { throw bad("sample_rate", [String(sampleRate)]) }
            let isFloat: Bool
            switch (tag, bits) {
            case (1, 8), (1, 16), (1, 24), (1, 32): isFloat = false
            case (3, 32), (3, 64): isFloat = true
            case (1, _), (3, _):
                throw bad(tag == 1 ? "integer_bits" : "float_bits", [String(bits)])
            default:
                throw bad("compressed", ["0x" + String(tag, radix: 16)])
            }
            guard blockAlign == channels * bits / 8 else {
                throw bad("block_align", [String(blockAlign), String(channels), String(bits)])
            }
            return Format(isFloat: isFloat, channels: channels, sampleRate: sampleRate, bitsPerSample: bits, blockAlign: blockAlign)
        }

        func convert(_ bytes: [UInt8], format: Format, frames: Int) -> [[Float]] {
            let width = format.bitsPerSample / 8
            var channels = [[Float]](repeating: [], count: format.channels)
            for channel in 0..<format.channels {
                channels[channel].reserveCapacity(frames)
            }
            bytes.withUnsafeBytes { raw in
                for frame in 0..<frames {
                    for channel in 0..<format.channels {
                        let at = frame * format.blockAlign + channel * width
                        let value: Float
                        switch (format.isFloat, width) {
                        case (false, 1):
                            value = Float(Int(raw[at]) - 128) / 127
                        case (false, 2):
                            value = PCM16.float(Int16(bitPattern: UInt16(raw[at]) | UInt16(raw[at + 1]) << 8))
                        case (false, 3):
                            let unsigned = UInt32(raw[at]) << 8 | UInt32(raw[at + 1]) << 16 | UInt32(raw[at + 2]) << 24
                            value = Float(Double(Int32(bitPattern: unsigned) >> 8) / 8_388_607)
                        case (false, _):
                            let unsigned = UInt32(raw[at]) | UInt32(raw[at + 1]) << 8 | UInt32(raw[at + 2]) << 16 | UInt32(raw[at + 3]) << 24
                            value = Float(Double(Int32(bitPattern: unsigned)) / 2_147_483_647)
                        case (true, 4):
                            let bits = UInt32(raw[at]) | UInt32(raw[at + 1]) << 8 | UInt32(raw[at + 2]) << 16 | UInt32(raw[at + 3]) << 24
                            value = Float(bitPattern: bits)
                        default:
                            var bits: UInt64 = 0
                            for byte in 0..<8 { bits |= UInt64(raw[at + byte]) << (8 * byte) }
                            value = Float(Double(bitPattern: bits))
                        }
                        channels[channel].append(max(-1, min(1, value.isNaN ? 0 : value)))
                    }
                }
            }
            return channels
        }

        func le16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        func describe(_ bytes: ArraySlice<UInt8>) -> String {
            let printable = bytes.allSatisfy { (0x20..<0x7F).contains($0) }
            return printable
                ? "'\(String(decoding: bytes, as: UTF8.self))'"
                : bytes.map { "0x" + String($0, radix: 16) }.joined(separator: " ")
        }
    }
}

// MARK: - Writing

/// Streams 16-bit PCM to a WAV file. Samples go to `<path>.partial` in the same directory
/// (GrokBasics' ``StagedFile``); ``finish()`` fixes the header sizes, fsyncs and renames it
/// onto `path`, so `path` only ever holds a complete file. Dropping the writer without
/// finishing removes the partial file.
///
/// Not thread-safe: one owner at a time.
public final class WAVWriter {
    /// Where the finished file goes.
    public let path: String
    /// Frames per second written in the header.
    public let sampleRate: Int
    /// Samples per frame.
    public let channelCount: Int
    /// Frames appended so far.
    public private(set) var frameCount: Int = 0

    private let file: StagedFile
    private var pending: [UInt8] = []
    private static let headerBytes = 44
    private static let flushBytes = 1 << 16

    /// Creates `<path>.partial` and writes a provisional header.
    /// - Throws: ``AudioError/file(path:detail:)`` when the file cannot be created (or a
    ///   `<path>.partial` is already there: another writer's),
    ///   ``AudioError/badWAV(path:detail:)`` for a zero channel count or a bad rate.
    public init(path: String, sampleRate: Int, channels: Int) throws(AudioError) {
        guard (1...65535).contains(channels) else { throw AudioError.badWAV(path: path, detail: ErrorDetail("channel_count", [String(channels)])) }
        guard (1...1_000_000).contains(sampleRate) else {
            throw AudioError.badWAV(path: path, detail: ErrorDetail("sample_rate", [String(sampleRate)]))
        }
        self.path = path
        self.sampleRate = sampleRate
        self.channelCount = channels
        let partial = path + ".partial"
        do throws(SystemCallError) {
            file = try StagedFile(replacing: path, temporaryPath: partial)
        } catch {
            throw POSIXCall.audioError(error, path: partial)
        }
        pending = Self.header(sampleRate: sampleRate, channels: channels, dataBytes: 0)
    }

    /// Appends interleaved frames (`samples.count` must be a multiple of the channel count).
    public func append(interleaved samples: UnsafeBufferPointer<Float>) throws(AudioError) {
        precondition(samples.count % channelCount == 0, "interleaved samples must fill whole frames")
        try reserve(frames: samples.count / channelCount)
        for sample in samples { appendSample(sample) }
        try flushIfNeeded()
    }

    /// Appends interleaved frames (`samples.count` must be a multiple of the channel count).
    public func append(interleaved samples: [Float]) throws(AudioError) {
        let result = samples.withUnsafeBufferPointer { buffer in
            Result { () throws(AudioError) in try append(interleaved: buffer) }
        }
        try result.get()
    }

    /// Appends frames given one buffer per channel (all of the same length).
    public func append(channels: [UnsafeBufferPointer<Float>]) throws(AudioError) {
        precondition(channels.count == channelCount, "one buffer per channel")
        let frames = channels.first?.count ?? 0
        precondition(channels.allSatisfy { $0.count == frames }, "channels must have the same length")
        try reserve(frames: frames)
        for frame in 0..<frames {
            for channel in channels { appendSample(channel[frame]) }
        }
        try flushIfNeeded()
    }

    /// Appends frames given one array per channel (all of the same length).
    public func append(channels: [[Float]]) throws(AudioError) {
        precondition(channels.count == channelCount, "one array per channel")
        let frames = channels.first?.count ?? 0
        precondition(channels.allSatisfy { $0.count == frames }, "channels must have the same length")
        try reserve(frames: frames)
        for frame in 0..<frames {
            for channel in channels { appendSample(channel[frame]) }
        }
        try flushIfNeeded()
    }

    /// Writes what is buffered, fixes the header sizes, fsyncs, closes and renames the
    /// partial file onto ``path``.
    public func finish() throws(AudioError) {
        guard file.isOpen else { throw AudioError.file(path: path, detail: ErrorDetail("writer_finished")) }
        try flush()
        let dataBytes = frameCount * channelCount * 2
        let header = Self.header(sampleRate: sampleRate, channels: channelCount, dataBytes: dataBytes)
        let staged = file
        let written = header.withUnsafeBytes { buffer in
            Result { () throws(SystemCallError) in try staged.write(buffer, at: 0, call: "write header") }
        }
        do throws(SystemCallError) {
            try written.get()
            try file.commit()
        } catch {
            file.discard()
            throw POSIXCall.audioError(error, path: error.path ?? file.temporaryPath)
        }
    }

    // MARK: Internals

    private func reserve(frames: Int) throws(AudioError) {
        guard file.isOpen else { throw AudioError.file(path: path, detail: ErrorDetail("writer_finished")) }
        let limit = (Int(UInt32.max) - Self.headerBytes) / (channelCount * 2)
        guard frameCount + frames <= limit else {
            throw AudioError.file(path: path, detail: ErrorDetail("too_many_frames", [String(limit), String(channelCount)]))
        }
        frameCount += frames
        pending.reserveCapacity(pending.count + frames * channelCount * 2)
    }

    private func appendSample(_ sample: Float) {
        let value = UInt16(bitPattern: PCM16.sample(sample))
        pending.append(UInt8(truncatingIfNeeded: value))
        pending.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    private func flushIfNeeded() throws(AudioError) {
        if pending.count >= Self.flushBytes { try flush() }
    }

    private func flush() throws(AudioError) {
        do throws(SystemCallError) {
            try file.write(pending)
        } catch {
            throw POSIXCall.audioError(error, path: file.temporaryPath)
        }
        pending.removeAll(keepingCapacity: true)
    }

    private static func header(sampleRate: Int, channels: Int, dataBytes: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerBytes)
        func le32(_ value: Int) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) } }
        func le16(_ value: Int) { bytes.append(UInt8(truncatingIfNeeded: value)); bytes.append(UInt8(truncatingIfNeeded: value >> 8)) }
        bytes.append(contentsOf: "RIFF".utf8)
        le32(36 + dataBytes)
        bytes.append(contentsOf: "WAVEfmt ".utf8)
        le32(16)
        le16(1)
        le16(channels)
        le32(sampleRate)
        le32(sampleRate * channels * 2)
        le16(channels * 2)
        le16(16)
        bytes.append(contentsOf: "data".utf8)
        le32(dataBytes)
        return bytes
    }
}

@available(*, unavailable) extension WAVWriter: Sendable {}

// MARK: - Sample conversion

/// The one conversion between `Float` samples and signed 16-bit ones used by every port
/// and file here: full scale is ±32767, so converting there and back is exact.
enum PCM16 {
    /// Clamps to -1...1 and rounds to the nearest 16-bit value (NaN becomes 0).
    @inline(__always)
    static func sample(_ value: Float) -> Int16 {
        if value.isNaN { return 0 }
        return Int16((max(-1, min(1, value)) * 32767).rounded())
    }

    /// The sample as a `Float` in -1...1 (-32768 is clamped to -1).
    @inline(__always)
    static func float(_ sample: Int16) -> Float {
        max(-1, Float(sample) / 32767)
    }
}
