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

/// Where a WAV file's bytes come from, front to back, once: a file, a pipe, memory.
public protocol WAVByteSource {
    /// Reads into `buffer` until it is full or the input ends; returns how many bytes came.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int
}

/// A file descriptor read from its current position (a regular file, a pipe, a socket).
public struct FileDescriptorSource: WAVByteSource {
    let fd: Int32
    let name: String

    /// Reads `fd` (not closed here); errors name the file as `name`.
    public init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
        try POSIXCall.readAll(fd, path: name, "read", buffer).get()
    }
}

/// Bytes already in memory.
struct MemorySource: WAVByteSource {
    let bytes: [UInt8]
    var position = 0

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
        let n = min(buffer.count, bytes.count - position)
        bytes.withUnsafeBytes { all in
            buffer.baseAddress?.copyMemory(from: all.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }
}

/// What a streamed WAV file held besides its samples.
public struct WAVStreamSummary: Sendable, Equatable {
    /// Frames per second.
    public var sampleRate: Int
    public var channelCount: Int
    /// Frames per channel, all blocks together.
    public var frameCount: Int
}

/// Reads RIFF/WAVE files: PCM 8/16/24/32-bit integer, 32/64-bit IEEE float, plain or
/// `WAVE_FORMAT_EXTENSIBLE` (as sox writes), any number of channels.
///
/// One reader, front to back (``stream(_:name:size:limits:blockFrames:_:)``): the samples
/// go to the caller in blocks as they are read, so memory stays at one block whatever the
/// file's length (a `data` chunk before its `fmt` chunk, which the format allows but nobody
/// writes, is held until the format is known). Unknown chunks are skipped, odd-sized chunks
/// are taken as padded to an even size, and every size is checked before it is read: the
/// `data` chunk is limited to ``maximumDataBytes`` (1 GiB), refused by its header alone, and
/// reading stops at its end, so endless input costs at most that. A stream of unknown
/// length (a pipe) may have at most ``maximumOtherBytes`` of headers and other chunks; a
/// file's are bounded by its size. RF64 and big-endian RIFX files are refused.
public enum WAVFile {
    /// The largest `data` chunk read: 1 GiB.
    public static let maximumDataBytes = 1 << 30
    /// The most bytes other than the samples (the RIFF header, chunk headers, `fmt` and
    /// other chunks) a stream of unknown length may carry: 64 KiB.
    public static let maximumOtherBytes = 64 * 1024
    /// Frames per block handed to the caller.
    public static let blockFrames = 65_536

    /// The reader's limits (tests set smaller ones).
    public struct Limits: Sendable {
        public var dataBytes: Int
        public var otherBytes: Int
        public init(dataBytes: Int = WAVFile.maximumDataBytes, otherBytes: Int = WAVFile.maximumOtherBytes) {
            self.dataBytes = dataBytes
            self.otherBytes = otherBytes
        }
    }

    /// Streams the file at `path` (a regular file: anything else is refused).
    /// - Throws: ``AudioError/file(path:detail:)`` when it cannot be opened or read,
    ///   ``AudioError/badWAV(path:detail:)`` saying what is wrong otherwise.
    public static func stream(path: String, blockFrames: Int = blockFrames,
                              _ body: (_ sampleRate: Int, _ block: [[Float]]) -> Void) throws(AudioError) -> WAVStreamSummary {
        let fd = try POSIXCall.retrying(path: path, "open") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var info = stat()
        try POSIXCall.retrying(path: path, "fstat") { fstat(fd, &info) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw AudioError.file(path: path, detail: ErrorDetail("not_regular_file"))
        }
        var source = FileDescriptorSource(fd: fd, name: path)
        return try stream(&source, name: path, size: Int(info.st_size), blockFrames: blockFrames, body)
    }

    /// Streams what `fd` holds from its current position (standard input: a pipe, or a file
    /// redirected, whose size then bounds it as a file's does); errors call it `name`.
    public static func stream(fileDescriptor fd: Int32, name: String, blockFrames: Int = blockFrames,
                              _ body: (_ sampleRate: Int, _ block: [[Float]]) -> Void) throws(AudioError) -> WAVStreamSummary {
        var info = stat()
        try POSIXCall.retrying(path: name, "fstat") { fstat(fd, &info) }
        var size: Int?
        if (info.st_mode & S_IFMT) == S_IFREG {
            let position = lseek(fd, 0, SEEK_CUR)
            if position >= 0 { size = max(0, Int(info.st_size) - Int(position)) }
        }
        var source = FileDescriptorSource(fd: fd, name: name)
        return try stream(&source, name: name, size: size, blockFrames: blockFrames, body)
    }

    /// The one reader: parses `source` front to back and hands `body` the samples, one block
    /// of at most `blockFrames` frames at a time (one array per channel, in -1...1).
    /// - Parameters:
    ///   - name: What errors call the input.
    ///   - size: The input's length when known (a file): a `data` chunk it cannot hold is
    ///     refused before any sample is read, and the other chunks need no limit of their own.
    ///   - limits: ``Limits`` (the defaults outside tests).
    /// - Throws: ``AudioError/badWAV(path:detail:)`` saying what is wrong, or the source's error.
    public static func stream(_ source: inout some WAVByteSource, name: String, size: Int? = nil, limits: Limits = Limits(),
                              blockFrames: Int = blockFrames,
                              _ body: (_ sampleRate: Int, _ block: [[Float]]) -> Void) throws(AudioError) -> WAVStreamSummary {
        var reader = Reader(name: name, size: size, limits: limits)
        return try reader.run(&source, blockFrames: max(1, blockFrames), body)
    }

    /// Reads and decodes the whole file into memory (tests, benchmarks: short files).
    public static func read(path: String) throws(AudioError) -> WAVAudio {
        var collected = Collected()
        let summary = try stream(path: path) { collected.add($1) }
        return collected.audio(summary)
    }

    /// Decodes a whole file already in memory.
    /// - Parameters:
    ///   - bytes: The file's bytes.
    ///   - name: What errors call the file (`standard input`).
    /// - Throws: ``AudioError/badWAV(path:detail:)`` saying what is wrong.
    public static func decode(_ bytes: [UInt8], name: String) throws(AudioError) -> WAVAudio {
        var source = MemorySource(bytes: bytes)
        var collected = Collected()
        let summary = try stream(&source, name: name, size: bytes.count) { collected.add($1) }
        return collected.audio(summary)
    }

    private struct Collected {
        var channels: [[Float]] = []
        mutating func add(_ block: [[Float]]) {
            if channels.isEmpty { channels = Array(repeating: [], count: block.count) }
            for (index, samples) in block.enumerated() { channels[index] += samples }
        }
        func audio(_ summary: WAVStreamSummary) -> WAVAudio {
            WAVAudio(sampleRate: summary.sampleRate,
                     channels: channels.isEmpty ? Array(repeating: [], count: summary.channelCount) : channels)
        }
    }

    private struct Format {
        var isFloat: Bool
        var channels: Int
        var sampleRate: Int
        var bitsPerSample: Int
        var blockAlign: Int
    }

    private struct Reader {
        let name: String
        let size: Int?
        let limits: Limits
        /// Bytes taken from the source so far (the offset in the file).
        var offset = 0
        /// Of those, bytes that were not samples.
        var otherBytes = 0

        init(name: String, size: Int?, limits: Limits) {
            self.name = name
            self.size = size
            self.limits = limits
        }

        func bad(_ code: String, _ values: [String] = []) -> AudioError { .badWAV(path: name, detail: ErrorDetail(code, values)) }

        /// Up to `count` bytes (fewer: the input ended).
        mutating func take(_ source: inout some WAVByteSource, _ count: Int) throws(AudioError) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: count)
            let got = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(AudioError) in try source.read(into: raw) }
            }.get()
            offset += got
            if got < count { buffer.removeLast(count - got) }
            return buffer
        }

        /// Exactly `count` bytes that are not samples.
        mutating func other(_ source: inout some WAVByteSource, _ count: Int) throws(AudioError) -> [UInt8] {
            try allowOther(count)
            let start = offset
            let bytes = try take(&source, count)
            guard bytes.count == count else { throw bad("ends_early", [String(start + count), String(offset)]) }
            return bytes
        }

        /// Counts `count` more bytes of headers and other chunks against the limit (a stream
        /// of unknown length only; a file's size bounds them).
        mutating func allowOther(_ count: Int) throws(AudioError) {
            otherBytes += count
            if size == nil, otherBytes > limits.otherBytes { throw bad("headers_too_large", [String(limits.otherBytes)]) }
        }

        /// Reads and drops `count` bytes; false when the input ended first.
        mutating func skip(_ source: inout some WAVByteSource, _ count: Int) throws(AudioError) -> Bool {
            var left = count
            while left > 0 {
                let piece = try take(&source, min(left, 65_536))
                left -= piece.count
                if piece.isEmpty { return false }
            }
            return true
        }

        mutating func run(_ source: inout some WAVByteSource, blockFrames: Int,
                          _ body: (_ sampleRate: Int, _ block: [[Float]]) -> Void) throws(AudioError) -> WAVStreamSummary {
            try checkHeader(try other(&source, 12))
            // The RIFF size is often wrong in streamed files; chunks are bounded by the input.
            var format: Format?
            // A data chunk met before the fmt chunk, held until the format is known.
            var early: [UInt8]?
            while true {
                let chunk = try take(&source, 8)
                if chunk.count < 8 { break }
                try allowOther(8)
                let length = Int(le32(chunk, 4))
                let padded = length + (length & 1)
                switch describe(chunk[0..<4]) {
                case "'fmt '" where format == nil:
                    guard length >= 16 else { throw bad("fmt_too_short", [String(length)]) }
                    guard length <= 1024 else { throw bad("fmt_too_long", [String(length)]) }
                    format = try parseFormat(try other(&source, length))
                    if length & 1 == 1 { try allowOther(1); _ = try take(&source, 1) }
                case "'data'" where format == nil && early == nil:
                    try checkData(length, at: offset)
                    let bytes = try take(&source, length)
                    guard bytes.count == length else { throw bad("data_truncated", [String(length), String(bytes.count)]) }
                    early = bytes
                    if length & 1 == 1 { _ = try take(&source, 1) }
                case "'data'" where format != nil:
                    // The data chunk after the fmt chunk: streamed, never held.
                    try checkData(length, at: offset)
                    var blocks = Blocks(format: format!, blockFrames: blockFrames)
                    let start = offset
                    let frames = try blocks.pass(&source, bytes: length, body)
                    offset += blocks.consumed
                    guard blocks.consumed == length else {
                        throw bad("data_truncated", [String(length), String(offset - start)])
                    }
                    return WAVStreamSummary(sampleRate: format!.sampleRate, channelCount: format!.channels, frameCount: frames)
                default:
                    // Another chunk: skipped (at the end of the input, the next header is missing).
                    try allowOther(padded)
                    _ = try skip(&source, padded)
                    continue
                }
                if let format, let early {
                    var blocks = Blocks(format: format, blockFrames: blockFrames)
                    var memory = MemorySource(bytes: early)
                    let frames = try blocks.pass(&memory, bytes: early.count, body)
                    return WAVStreamSummary(sampleRate: format.sampleRate, channelCount: format.channels, frameCount: frames)
                }
            }
            guard format != nil else { throw bad("no_fmt_chunk") }
            throw bad("no_data_chunk")
        }

        /// The RIFF header, checked.
        func checkHeader(_ header: [UInt8]) throws(AudioError) {
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
        }

        /// A data chunk's declared length, checked before a byte of it is read.
        func checkData(_ length: Int, at body: Int) throws(AudioError) {
            guard length <= limits.dataBytes else { throw bad("data_too_large", [String(length)]) }
            if let size, body + length > size {
                throw bad("data_truncated", [String(length), String(max(0, size - body))])
            }
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
    }

    /// The samples of a data chunk, converted a block at a time into buffers used again.
    private struct Blocks {
        let format: Format
        let blockFrames: Int
        var channels: [[Float]]
        var raw: [UInt8]
        /// Bytes of the chunk taken from the source by the last ``pass(_:bytes:_:)``.
        var consumed = 0

        init(format: Format, blockFrames: Int) {
            self.format = format
            self.blockFrames = blockFrames
            channels = Array(repeating: [], count: format.channels)
            for index in channels.indices { channels[index].reserveCapacity(blockFrames) }
            raw = [UInt8](repeating: 0, count: blockFrames * format.blockAlign)
        }

        /// Reads `bytes` bytes of samples (whole frames go to `body`; a trailing part-frame is
        /// dropped); returns the frames passed. Stops early when the input ends.
        mutating func pass(_ source: inout some WAVByteSource, bytes: Int,
                           _ body: (_ sampleRate: Int, _ block: [[Float]]) -> Void) throws(AudioError) -> Int {
            consumed = 0
            var frames = 0
            while consumed < bytes {
                let wanted = min(raw.count, bytes - consumed)
                let got = try raw.withUnsafeMutableBytes { buffer in
                    Result { () throws(AudioError) in try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted])) }
                }.get()
                consumed += got
                let whole = got / format.blockAlign
                if whole > 0 {
                    convert(frames: whole)
                    body(format.sampleRate, channels)
                    frames += whole
                }
                if got < wanted { break }
            }
            return frames
        }

        mutating func convert(frames: Int) {
            let width = format.bitsPerSample / 8
            let format = self.format
            for index in channels.indices { channels[index].removeAll(keepingCapacity: true) }
            raw.withUnsafeBytes { raw in
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
        }
    }

}

private func le16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
private func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
}
private func describe(_ bytes: ArraySlice<UInt8>) -> String {
    let printable = bytes.allSatisfy { (0x20..<0x7F).contains($0) }
    return printable
        ? "'\(String(decoding: bytes, as: UTF8.self))'"
        : bytes.map { "0x" + String($0, radix: 16) }.joined(separator: " ")
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
