/// The EPC Gen2 CRC-16 (ISO/IEC 13239: polynomial x^16 + x^12 + x^5 + 1 = `0x1021`, preset
/// `0xFFFF`, most significant bit first, output inverted; the catalog's CRC-16/GENIBUS, check
/// value `0xD64E` over ASCII `123456789`).
///
/// A tag's StoredCRC (EPC bank word 0) is this CRC over the PC word and the EPC words.
public enum Gen2CRC16 {
    /// What a receiver finds when it runs the CRC register (without the final inversion) over
    /// data followed by its CRC: `0x1D0F` means the data arrived intact.
    public static let residue: UInt16 = 0x1D0F

    /// The CRC-16 of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
        ~register(bytes)
    }

    /// The CRC-16 of 16-bit words, each sent most significant byte first.
    public static func checksum(words: some Sequence<UInt16>) -> UInt16 {
        checksum(words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
    }

    /// The register after shifting in `bytes` from the preset, before the final inversion.
    static func register(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
