// Little-endian readers and writers for the vendor command layer. Internal: the public
// surface is the typed messages. Every read checks the remaining length first and throws a
// typed error naming the field, so a decoder built from these never traps on any input.

/// Appends little-endian fields to a growing vendor payload.
struct VendorWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 32) {
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func u32(_ value: UInt32) {
        u16(UInt16(truncatingIfNeeded: value))
        u16(UInt16(truncatingIfNeeded: value >> 16))
    }

    mutating func u64(_ value: UInt64) {
        u32(UInt32(truncatingIfNeeded: value))
        u32(UInt32(truncatingIfNeeded: value >> 32))
    }

    mutating func raw(_ data: some Collection<UInt8>) { bytes.append(contentsOf: data) }
}

/// Reads little-endian fields from a vendor payload.
struct VendorReader {
    private let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    /// Bytes not read yet.
    var remaining: Int { bytes.count - offset }

    var isAtEnd: Bool { remaining == 0 }

    private mutating func take(_ count: Int, _ field: String) throws(VendorCommandError) -> Int {
        guard count >= 0, count <= remaining else {
            throw .truncated(field: field, needed: count, available: remaining)
        }
        let start = offset
        offset += count
        return start
    }

    mutating func u8(_ field: String) throws(VendorCommandError) -> UInt8 {
        bytes[try take(1, field)]
    }

    mutating func bool(_ field: String) throws(VendorCommandError) -> Bool {
        let value = try u8(field)
        guard value <= 1 else { throw .unknownValue(field: field, value: Int(value)) }
        return value == 1
    }

    mutating func u16(_ field: String) throws(VendorCommandError) -> UInt16 {
        let at = try take(2, field)
        return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    mutating func u32(_ field: String) throws(VendorCommandError) -> UInt32 {
        let at = try take(4, field)
        return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8
            | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    mutating func u64(_ field: String) throws(VendorCommandError) -> UInt64 {
        let low = try u32(field)
        let high = try u32(field)
        return UInt64(low) | UInt64(high) << 32
    }

    mutating func raw(_ count: Int, _ field: String) throws(VendorCommandError) -> [UInt8] {
        let at = try take(count, field)
        return Array(bytes[at..<(at + count)])
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        let out = Array(bytes[offset...])
        offset = bytes.count
        return out
    }

    /// Throws unless every byte was read.
    func finish(_ message: String) throws(VendorCommandError) {
        guard remaining == 0 else { throw .trailingBytes(message: message, count: remaining) }
    }
}

/// The limits a vendor payload lives within.
public enum VendorWireLimits {
    /// The largest payload of a long packet (its length byte; the vendor host refuses more).
    public static let maxPayloadBytes = 250
    /// The largest response data a one-byte length can announce. (The library's receive
    /// buffers are larger for some answers: 270 bytes for detailed antenna tuning, 160 for
    /// configurations; whether a reader ever sends more than 255 is unknown.)
    public static let maxResponseBytes = 255
    /// EPC lengths the vendor host accepts in reader packets (bytes).
    public static let epcBytes: ClosedRange<Int> = 4...27
}

func checkRange(_ field: String, _ value: Int, _ range: ClosedRange<Int>) throws(VendorCommandError) {
    guard range.contains(value) else {
        throw .outOfRange(field: field, value: String(value), allowed: "\(range.lowerBound)...\(range.upperBound)")
    }
}

func checkEpc(_ field: String, _ epc: [UInt8]) throws(VendorCommandError) {
    guard VendorWireLimits.epcBytes.contains(epc.count) else {
        throw .outOfRange(field: field + ".count", value: String(epc.count), allowed: "4...27")
    }
}
