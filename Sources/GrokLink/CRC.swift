/// The two checksums of the link layer (see docs/protocol.md, "Link layer").
///
/// - CRC-8/AUTOSAR (poly 0x2F, init 0xFF, xorout 0xFF, not reflected) guards the 5-byte
///   frame header, so a damaged length is caught before the receiver waits for bytes that
///   will never come. Check value over "123456789": 0xDF.
/// - CRC-32C (Castagnoli: poly 0x1EDC6F41, reflected 0x82F63B78, init and xorout 0xFFFFFFFF)
///   guards header and payload. Its Hamming distance stays at 6 up to 5,243 bits and 4 up to
///   about 2^31 bits, better than IEEE CRC-32 at our frame lengths. Check value: 0xE3069283.
public enum LinkCRC {
    static let crc32cTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        return c
    }

    static let crc8Table: [UInt8] = (0..<256).map { n in
        var c = UInt8(n)
        for _ in 0..<8 { c = (c & 0x80) != 0 ? (c << 1) ^ 0x2F : c << 1 }
        return c
    }

    /// CRC-32C of `bytes`, continuing from a previous `crc32c` result when `seed` is given.
    public static func crc32c(_ bytes: some Sequence<UInt8>, seed: UInt32 = 0) -> UInt32 {
        var c = ~seed
        crc32cTable.withUnsafeBufferPointer { table in
            for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        }
        return ~c
    }

    /// CRC-8/AUTOSAR of `bytes`.
    public static func crc8(_ bytes: some Sequence<UInt8>) -> UInt8 {
        var c: UInt8 = 0xFF
        crc8Table.withUnsafeBufferPointer { table in
            for b in bytes { c = table[Int(c ^ b)] }
        }
        return c ^ 0xFF
    }
}
