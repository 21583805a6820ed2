// Little-endian readers and writers for the command layer. Internal: the public surface is
// the typed messages. Every read checks the remaining length first and throws a typed
// error naming the field, so a decoder built from these never traps on any input.

/// Appends little-endian fields to a growing message.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func i16(_ value: Int16) {
        u16(UInt16(bitPattern: value))
    }

    mutating func u32(_ value: UInt32) {
        u16(UInt16(truncatingIfNeeded: value))
        u16(UInt16(truncatingIfNeeded: value >> 16))
    }

    mutating func raw(_ data: some Collection<UInt8>) {
        bytes.append(contentsOf: data)
    }

    /// A short string: `u8` byte count, then that many UTF-8 bytes. Strings longer than
    /// ``WireLimits/maxStringBytes`` are cut at the last whole character that fits.
    mutating func string(_ value: String) {
        let utf8 = WireLimits.truncated(value)
        u8(UInt8(utf8.count))
        raw(utf8)
    }

    /// Overwrites a `u16` written earlier (used for the header's payload length).
    mutating func patchU16(_ value: UInt16, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }
}

/// Reads little-endian fields from a message, bounded by `end`.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    private let end: Int

    init(_ bytes: [UInt8], from offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = min(max(offset, 0), bytes.count)
        self.end = min(max(end ?? bytes.count, self.offset), bytes.count)
    }

    /// Bytes not read yet.
    var remaining: Int { end - offset }

    private mutating func take(_ count: Int, _ field: String) throws(ProtocolError) -> Int {
        guard count >= 0, count <= remaining else {
            throw .truncated(field: field, needed: count, available: remaining)
        }
        let start = offset
        offset += count
        return start
    }

    mutating func u8(_ field: String) throws(ProtocolError) -> UInt8 {
        let at = try take(1, field)
        return bytes[at]
    }

    mutating func u16(_ field: String) throws(ProtocolError) -> UInt16 {
        let at = try take(2, field)
        return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    mutating func i16(_ field: String) throws(ProtocolError) -> Int16 {
        Int16(bitPattern: try u16(field))
    }

    mutating func u32(_ field: String) throws(ProtocolError) -> UInt32 {
        let at = try take(4, field)
        return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8
            | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    mutating func raw(count: Int, _ field: String) throws(ProtocolError) -> [UInt8] {
        let at = try take(count, field)
        return Array(bytes[at..<(at + count)])
    }

    /// A short string (`u8` length + UTF-8), validated.
    mutating func string(_ field: String) throws(ProtocolError) -> String {
        let count = Int(try u8(field + ".length"))
        let data = try raw(count: count, field)
        guard let text = String(validating: data, as: UTF8.self) else {
            throw .invalidUTF8(field: field)
        }
        return text
    }
}

/// Size limits of the command layer.
public enum WireLimits {
    /// The largest message GrokLink carries, header included.
    public static let maxMessageBytes = 4096
    /// The longest string field, in UTF-8 bytes (its length is one byte on the wire).
    public static let maxStringBytes = 255

    /// `value` as UTF-8, cut at the last whole character within ``maxStringBytes``.
    static func truncated(_ value: String) -> [UInt8] {
        let all = Array(value.utf8)
        if all.count <= maxStringBytes { return all }
        var out: [UInt8] = []
        out.reserveCapacity(maxStringBytes)
        for character in value {
            let utf8 = character.utf8
            if out.count + utf8.count > maxStringBytes { break }
            out.append(contentsOf: utf8)
        }
        return out
    }
}
