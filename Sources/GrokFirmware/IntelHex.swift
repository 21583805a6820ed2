import GrokBasics
import GrokCrypto

/// A run of bytes at consecutive addresses.
public struct MemorySegment: Sendable, Hashable {
    /// The address of the first byte.
    public var address: UInt32
    /// The bytes.
    public var bytes: [UInt8]

    /// Creates a segment.
    public init(address: UInt32, bytes: [UInt8]) {
        self.address = address
        self.bytes = bytes
    }

    /// One past the last byte's address (may be 2^32).
    public var end: UInt64 { UInt64(address) + UInt64(bytes.count) }
}

/// An Intel HEX image, as `objcopy -O ihex` and firmware toolchains write it.
///
/// Record types read: 00 data, 01 end of file, 02 extended segment address (base = value ×
/// 16), 04 extended linear address (base = value × 65536), 03 and 05 start addresses (checked
/// for length and checksum, kept in ``startAddress``, otherwise unused: a Grokker's loader
/// knows where the application starts). Records may come in any address order; two records
/// writing the same address are refused. Adjacent data merges into one ``MemorySegment``.
public struct IntelHex: Sendable, Hashable {
    /// The data, sorted by address, non-overlapping, with no two segments adjacent.
    public var segments: [MemorySegment]
    /// The start address of a type 05 record, or CS × 16 + IP of a type 03 record.
    public var startAddress: UInt32?

    /// The most data bytes a file may hold (16 MiB): more is not a Grokker image.
    public static let defaultLimit = 16 * 1024 * 1024

    /// An image from segments in any order (sorted and merged here); overlapping segments
    /// or one running past 4 GiB are refused.
    public init(segments: [MemorySegment], startAddress: UInt32? = nil) throws(FirmwareError) {
        let sorted = segments.filter { !$0.bytes.isEmpty }.sorted { $0.address < $1.address }
        for segment in sorted where segment.end > 1 << 32 {
            throw .invalidInput(file: "<segments>", detail: ErrorDetail("segment_past_4gib", [FirmwareError.hex32(segment.address)]))
        }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.end > UInt64(b.address) {
            throw .invalidInput(file: "<segments>", detail: ErrorDetail("segments_overlap", [FirmwareError.hex32(b.address)]))
        }
        self.segments = Self.merge(sorted)
        self.startAddress = startAddress
    }

    /// Parses Intel HEX text. Lines end in LF or CR LF; blank lines are ignored; nothing but
    /// blank lines may follow the end-of-file record.
    /// - Parameters:
    ///   - text: the file's bytes.
    ///   - file: the name used in errors.
    ///   - limit: the most data bytes accepted.
    public static func parse(_ text: [UInt8], file: String = "<hex>", limit: Int = defaultLimit) throws(FirmwareError) -> IntelHex {
        struct Chunk { var address: UInt32; var bytes: [UInt8]; var line: Int }
        var chunks: [Chunk] = []
        var total = 0
        var base: UInt32 = 0
        var start: UInt32?
        var ended = false
        var lineNumber = 0
        var index = 0
        while index < text.count {
            lineNumber += 1
            var lineEnd = index
            while lineEnd < text.count && text[lineEnd] != 0x0A { lineEnd += 1 }
            var line = text[index..<lineEnd]
            index = lineEnd + 1
            if line.last == 0x0D { line = line.dropLast() }
            // Trailing spaces and tabs are tolerated; nothing else.
            while let last = line.last, last == 0x20 || last == 0x09 { line = line.dropLast() }
            if line.isEmpty { continue }
            func fail(_ code: String, _ values: [String] = []) -> FirmwareError {
                .hexRecord(file: file, line: lineNumber, detail: ErrorDetail(code, values))
            }
            if ended { throw fail("data_after_end") }
            guard line.first == UInt8(ascii: ":") else { throw fail("no_colon") }
            let digits = line.dropFirst()
            guard digits.count % 2 == 0 else { throw fail("odd_hex_digits") }
            guard digits.count >= 10 else { throw fail("record_too_short") }
            guard digits.count <= 2 * (5 + 255) else { throw fail("record_too_long") }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(digits.count / 2)
            var d = digits.startIndex
            while d < digits.endIndex {
                guard let high = Hex.nibble(digits[d]), let low = Hex.nibble(digits[d + 1]) else {
                    throw fail("not_hex_byte", [String(decoding: digits[d...(d + 1)], as: UTF8.self)])
                }
                bytes.append(high << 4 | low)
                d += 2
            }
            let count = Int(bytes[0])
            guard bytes.count == count + 5 else {
                throw fail("byte_count_mismatch", [String(count), String(bytes.count - 5)])
            }
            let sum = bytes.dropLast().reduce(UInt8(0), &+)
            let expected = 0 &- sum
            guard bytes.last! == expected else {
                throw .hexChecksum(file: file, line: lineNumber, expected: expected, found: bytes.last!)
            }
            let offset = UInt32(bytes[1]) << 8 | UInt32(bytes[2])
            let data = Array(bytes[4..<(4 + count)])
            switch bytes[3] {
            case 0x00:
                if data.isEmpty { continue }
                let address = UInt64(base) + UInt64(offset)
                guard address + UInt64(data.count) <= 1 << 32 else {
                    throw fail("past_4gib")
                }
                total += data.count
                guard total <= limit else { throw .hexTooLarge(file: file, limit: limit) }
                chunks.append(Chunk(address: UInt32(address), bytes: data, line: lineNumber))
            case 0x01:
                guard count == 0, offset == 0 else { throw fail("bad_end_record") }
                ended = true
            case 0x02:
                guard count == 2, offset == 0 else { throw fail("bad_extended_segment_record") }
                base = (UInt32(data[0]) << 8 | UInt32(data[1])) << 4
            case 0x03:
                guard count == 4, offset == 0 else { throw fail("bad_start_segment_record") }
                let cs = UInt32(data[0]) << 8 | UInt32(data[1])
                let ip = UInt32(data[2]) << 8 | UInt32(data[3])
                start = cs << 4 &+ ip
            case 0x04:
                guard count == 2, offset == 0 else { throw fail("bad_extended_linear_record") }
                base = (UInt32(data[0]) << 8 | UInt32(data[1])) << 16
            case 0x05:
                guard count == 4, offset == 0 else { throw fail("bad_start_linear_record") }
                start = data.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            default:
                throw fail("unknown_record_type", [FirmwareError.hex(bytes[3])])
            }
        }
        guard ended else { throw .hexMissingEnd(file: file) }
        // Sort by address (records may come in any order), refuse overlaps, merge neighbours.
        chunks.sort { ($0.address, $0.line) < ($1.address, $1.line) }
        var segments: [MemorySegment] = []
        var previous: Chunk?
        for chunk in chunks {
            if let previous, UInt64(previous.address) + UInt64(previous.bytes.count) > UInt64(chunk.address) {
                let (first, second) = previous.line < chunk.line ? (previous, chunk) : (chunk, previous)
                throw .hexOverlap(file: file, line: second.line, otherLine: first.line, address: chunk.address)
            }
            if let last = segments.last, last.end == UInt64(chunk.address) {
                segments[segments.count - 1].bytes += chunk.bytes
            } else {
                segments.append(MemorySegment(address: chunk.address, bytes: chunk.bytes))
            }
            previous = chunk
        }
        return IntelHex(merged: segments, startAddress: start)
    }

    /// Parses Intel HEX text; see ``parse(_:file:limit:)-(UInt8)``.
    public static func parse(_ text: String, file: String = "<hex>", limit: Int = defaultLimit) throws(FirmwareError) -> IntelHex {
        try parse(Array(text.utf8), file: file, limit: limit)
    }

    /// The image as Intel HEX text: type 04 records wherever the upper 16 address bits
    /// change, data records of at most `recordLength` bytes that never cross a 64 KiB
    /// boundary, a type 05 record for ``startAddress``, and the end-of-file record. Lines
    /// end in LF.
    public func encoded(recordLength: Int = 16) -> String {
        precondition((1...255).contains(recordLength), "an Intel HEX record holds 1 to 255 data bytes")
        var out = ""
        func record(_ type: UInt8, _ offset: UInt16, _ data: some Collection<UInt8>) {
            var bytes: [UInt8] = [UInt8(data.count), UInt8(offset >> 8), UInt8(offset & 0xFF), type]
            bytes += data
            bytes.append(0 &- bytes.reduce(UInt8(0), &+))
            out += ":" + bytes.map { FirmwareError.hex($0).dropFirst(2) }.joined() + "\n"
        }
        var upper: UInt32 = 0
        for segment in segments {
            var address = segment.address
            var index = 0
            while index < segment.bytes.count {
                if upper != address >> 16 {
                    upper = address >> 16
                    record(0x04, 0, [UInt8(address >> 24), UInt8((address >> 16) & 0xFF)])
                }
                let room = Int(0x1_0000 - (address & 0xFFFF))
                let count = min(recordLength, segment.bytes.count - index, room)
                record(0x00, UInt16(address & 0xFFFF), segment.bytes[index..<(index + count)])
                index += count
                address &+= UInt32(count)
            }
        }
        if let startAddress {
            record(0x05, 0, [UInt8(startAddress >> 24), UInt8((startAddress >> 16) & 0xFF),
                             UInt8((startAddress >> 8) & 0xFF), UInt8(startAddress & 0xFF)])
        }
        record(0x01, 0, [UInt8]())
        return out
    }

    /// The bytes from the lowest to the highest address, gaps filled with `fill` (0xFF,
    /// erased flash, by default); `nil` when there is no data or the span exceeds `limit`.
    public func flattened(fill: UInt8 = 0xFF, limit: Int = defaultLimit) -> MemorySegment? {
        guard let first = segments.first, let last = segments.last else { return nil }
        let span = last.end - UInt64(first.address)
        guard span <= UInt64(limit) else { return nil }
        var bytes = [UInt8](repeating: fill, count: Int(span))
        for segment in segments {
            let at = Int(segment.address - first.address)
            bytes.replaceSubrange(at..<(at + segment.bytes.count), with: segment.bytes)
        }
        return MemorySegment(address: first.address, bytes: bytes)
    }

    private init(merged: [MemorySegment], startAddress: UInt32?) {
        segments = merged
        self.startAddress = startAddress
    }

    private static func merge(_ sorted: [MemorySegment]) -> [MemorySegment] {
        var out: [MemorySegment] = []
        for segment in sorted {
            if let last = out.last, last.end == UInt64(segment.address) {
                out[out.count - 1].bytes += segment.bytes
            } else {
                out.append(segment)
            }
        }
        return out
    }
}
