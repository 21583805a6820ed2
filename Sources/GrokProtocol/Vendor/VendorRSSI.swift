import Foundation

/// The RSSI byte of the vendor's read records: I in the high nibble, Q in the low, each a
/// 4-bit level 0-15.
///
/// The vendor's library does not convert the levels: it hands them to the application as
/// two numbers, I = byte >> 4 and Q = byte & 0x0f (docs/vendor-protocol.md, "RSSI"), and
/// what a level means in dBm on a real reader is not known. The scale here is ours, and
/// the emulated Grokker sends by it: level n covers [-90 + 4n, -86 + 4n) dBm, clamped to
/// 0 below -86 dBm and to 15 from -30 dBm up. The host reports the lower edge of each
/// level, a figure the reply reached.
public enum VendorRSSI {
    /// The lower edge of level 0, dBm.
    public static let floorDBm = -90.0
    /// dB per level.
    public static let stepDB = 4.0
    /// The highest level.
    public static let maxLevel: UInt8 = 15
    /// The lower edge of the highest level, dBm: the strongest figure the scale can give.
    public static var ceilingDBm: Double { floorDBm + stepDB * Double(maxLevel) }

    /// The level for a channel's power, dBm.
    public static func level(dBm: Double) -> UInt8 {
        let steps = ((dBm - floorDBm) / stepDB).rounded(.down)
        return UInt8(max(0, min(Double(maxLevel), steps)))
    }

    /// The lower edge of `level`'s range, dBm (the low 4 bits of `level` are used).
    public static func dBm(level: UInt8) -> Double {
        floorDBm + stepDB * Double(level & 0x0f)
    }

    /// The byte for a read with these I and Q channel powers, dBm.
    public static func byte(iDBm: Double, qDBm: Double) -> UInt8 {
        level(dBm: iDBm) << 4 | level(dBm: qDBm)
    }

    /// The I and Q channel powers a byte stands for, dBm (each its level's lower edge).
    public static func dBm(byte: UInt8) -> (i: Double, q: Double) {
        (dBm(level: byte >> 4), dBm(level: byte & 0x0f))
    }
}
