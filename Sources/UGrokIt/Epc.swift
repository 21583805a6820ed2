import GrokCrypto

/// An Electronic Product Code: the identifier a UHF RFID tag backscatters when inventoried.
///
/// 4 to 27 bytes (the standard EPC is 12 bytes, 96 bits). Made from bytes or from a hex
/// string in either case; shown as upper-case hex (its `description`, the vendor's
/// `toString`), encoded in JSON as that hex string. Two EPCs are equal when their bytes are.
///
/// Vendor: `UgiEpc` (`epcFromBytes`, `epcFromString`, `toString`, `toTagURI`,
/// `isUnprogrammedEpc`, `getManufacturerNameIfUnprogrammed`, `epcFromUGrokItEpc`).
public struct UgiEpc: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The EPC's bytes, most significant first (as the tag sends them).
    public let bytes: [UInt8]

    /// Shortest EPC accepted, in bytes (a 32-bit EPC).
    public static let minByteCount = 4
    /// Longest EPC accepted, in bytes (216 bits).
    public static let maxByteCount = 27
    /// The standard EPC length, in bytes (96 bits, e.g. SGTIN-96).
    public static let standardByteCount = 12

    /// Makes an EPC from its bytes. Vendor: `UgiEpc.epcFromBytes`.
    /// - Throws: ``EpcError/empty`` for no bytes, ``EpcError/tooShort(epc:bytes:)`` or
    ///   ``EpcError/tooLong(epc:bytes:)`` unless there are ``minByteCount`` to ``maxByteCount``.
    public init(bytes: some Sequence<UInt8>) throws(EpcError) {
        let bytes = Array(bytes)
        if bytes.count < Self.minByteCount {
            if bytes.isEmpty { throw .empty }
            throw .tooShort(epc: EpcError.shown(hexString(bytes)), bytes: bytes.count)
        }
        if bytes.count > Self.maxByteCount {
            throw .tooLong(epc: EpcError.shown(hexString(bytes)), bytes: bytes.count)
        }
        self.bytes = bytes
    }

    /// Makes an EPC from hex digits in either case, e.g. `"3074257bf7194e4000001a85"`.
    /// Nothing else is accepted: no spaces, separators or `0x` prefix. Vendor:
    /// `UgiEpc.epcFromString`.
    /// - Throws: ``EpcError``: ``EpcError/empty``, ``EpcError/invalidCharacter(hex:character:offset:)``
    ///   (the first one), ``EpcError/oddLength(hex:digits:)``, then ``EpcError/tooShort(epc:bytes:)``
    ///   or ``EpcError/tooLong(epc:bytes:)``, checked in that order.
    public init(hex: String) throws(EpcError) {
        if hex.isEmpty { throw .empty }
        var nibbles: [UInt8] = []
        nibbles.reserveCapacity(hex.utf8.count)
        for (offset, character) in hex.enumerated() {
            guard let nibble = character.asciiValue.flatMap(Hex.nibble) else {
                throw .invalidCharacter(hex: EpcError.shown(hex), character: String(character), offset: offset)
            }
            nibbles.append(nibble)
        }
        if nibbles.count % 2 != 0 { throw .oddLength(hex: EpcError.shown(hex), digits: nibbles.count) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(nibbles.count / 2)
        for i in stride(from: 0, to: nibbles.count, by: 2) { bytes.append(nibbles[i] << 4 | nibbles[i + 1]) }
        try self.init(bytes: bytes)
    }

    /// Upper-case hex, two digits per byte. Vendor: `UgiEpc.toString`.
    public var description: String { hexString(bytes) }

    /// The length in bytes. Vendor: `UgiEpc.length`.
    public var length: Int { bytes.count }

    /// The length in bits.
    public var bitCount: Int { bytes.count * 8 }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do throws(EpcError) {
            try self.init(hex: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

// MARK: - EPC Tag Data Standard URIs

extension UgiEpc {
    /// The EPC Tag URI of GS1's EPC Tag Data Standard (TDS 1.13). Vendor: `UgiEpc.toTagURI`.
    ///
    /// Every binary scheme of the TDS is decoded (``EpcScheme``: SGTIN-96/198, SSCC-96,
    /// SGLN-96/195, GRAI-96/170, GIAI-96/202, GSRN-96, GSRNP-96, GDTI-96/174, CPI-96/var,
    /// SGCN-96, ITIP-110/212, GID-96, USDOD-96, ADI-var), e.g.
    /// `urn:epc:tag:sgtin-96:3.0614141.812345.6789`. Anything else, and any of these with a
    /// field the TDS forbids (partition 7, a company prefix or reference with more digits
    /// than the partition allows, non-zero reserved bits, a character outside the scheme's
    /// set, the wrong length), is the TDS raw URI `urn:epc:raw:<bits>.x<HEX>`.
    public func toTagURI() -> String {
        epcTag?.tagURI ?? "urn:epc:raw:\(bitCount).x\(description)"
    }

    /// The EPC Pure Identity URI (`urn:epc:id:sgtin:0614141.812345.6789`): the tag URI
    /// without the encoding and filter, naming the object rather than the tag. `nil` for an
    /// EPC that only has a raw URI.
    public func toPureIdentityURI() -> String? {
        epcTag?.pureIdentityURI
    }

    /// The EPC decoded by the Tag Data Standard (scheme, filter and fields), or `nil` when
    /// it is no valid encoding of any of its schemes.
    public var epcTag: EpcTag? { EpcTag(epc: self) }
}

// MARK: - Unprogrammed tags

extension UgiEpc {
    /// Whether the tag still carries the EPC it left the chip factory with: all zero bytes,
    /// or an EPC shaped like the chip's TID (see ``manufacturerName``). A heuristic, like the
    /// vendor's. Vendor: `UgiEpc.isUnprogrammedEpc`.
    public var isUnprogrammed: Bool {
        bytes.allSatisfy { $0 == 0 } || manufacturerName != nil
    }

    /// The chip maker, for an EPC that is still the factory's TID-derived one; `nil` otherwise
    /// (also for an all-zero EPC, which names no maker).
    ///
    /// Many chips (Impinj Monza R6 and M700, NXP UCODE 7 and 8, Alien Higgs, EM4126, ...)
    /// ship with the first words of their TID as their EPC. Such an EPC starts with the
    /// ISO/IEC 15963 allocation class `E2`, then the XTID, security and file bits and the
    /// 9-bit mask designer ID (MDID) of GS1's list: `E2 80 11 60 ...` is an Impinj chip
    /// (MDID 1 with the XTID bit set), `E2 80 68 94 ...` an NXP one (MDID 6). `E2` is no
    /// GS1 EPC header, so a programmed GS1 EPC never matches. Vendor:
    /// `UgiEpc.getManufacturerNameIfUnprogrammed`.
    public var manufacturerName: String? {
        guard bytes[0] == 0xE2 else { return nil }
        let mdid = (Int(bytes[1]) << 4 | Int(bytes[2]) >> 4) & 0x1FF
        return Self.maskDesigners[mdid]
    }

    /// GS1's mask designer IDs (MDID) and their chip makers, from GS1's MDID assignment list
    /// (as updated 18 January 2021), the 9-bit MDID without the XTID, S and F bits.
    public static let maskDesigners: [Int: String] = [
        0x001: "Impinj", 0x002: "Texas Instruments", 0x003: "Alien Technology", 0x004: "Intelleflex",
        0x005: "Atmel", 0x006: "NXP Semiconductors", 0x007: "ST Microelectronics", 0x008: "EP Microelectronics",
        0x009: "Motorola (Symbol Technologies)", 0x00A: "Sentech Snd Bhd", 0x00B: "EM Microelectronic",
        0x00C: "Renesas Technology", 0x00D: "Mstar", 0x00E: "Tyco International", 0x00F: "Quanray Electronics",
        0x010: "Fujitsu", 0x011: "LSIS", 0x012: "CAEN RFID", 0x013: "Productivity Engineering",
        0x014: "Federal Electric", 0x015: "ON Semiconductor", 0x016: "Ramtron", 0x017: "Tego",
        0x018: "Ceitec", 0x019: "CPA Wernher von Braun", 0x01A: "TransCore", 0x01B: "Nationz",
        0x01C: "Invengo", 0x01D: "Kiloway", 0x01E: "Longjing Microelectronics", 0x01F: "Chipus Microelectronics",
        0x020: "ORIDAO", 0x021: "Maintag", 0x022: "Yangzhou Daoyuan Microelectronics", 0x023: "Gate Elektronik",
    ]
}

// MARK: - U Grok It EPCs

extension UgiEpc {
    /// The GID-96 general manager number of U Grok It EPCs: all 28 bits set (268435455),
    /// as in the vendor's examples (`35FFFFFFF99C70A063405C48`).
    public static let uGrokItManagerNumber: UInt32 = 0x0FFF_FFFF

    /// A new 96-bit EPC for a U Grok It tag: GID-96 (header `0x35`) with general manager
    /// number ``uGrokItManagerNumber``, then 60 random bits (the 24-bit object class and the
    /// 36-bit serial) drawn from `generator`. Like the vendor's examples, every such EPC
    /// starts `35FFFFFFF`. Vendor: `UgiEpc.epcFromUGrokItEpc`.
    /// - Parameter generator: The source of the random bits; pass a seeded generator for
    ///   reproducible EPCs, `SystemRandomNumberGenerator` otherwise.
    public static func newUGrokItEpc(using generator: inout some RandomNumberGenerator) -> UgiEpc {
        let random = generator.next() & 0x0FFF_FFFF_FFFF_FFFF  // 60 bits.
        var value: [UInt8] = [0x35, 0xFF, 0xFF, 0xFF, 0xF0 | UInt8(random >> 56)]
        for shift in stride(from: 48, through: 0, by: -8) { value.append(UInt8(truncatingIfNeeded: random >> UInt64(shift))) }
        return UgiEpc(validBytes: value)
    }

    /// Whether this is a 96-bit GID-96 EPC with U Grok It's manager number, as
    /// ``newUGrokItEpc(using:)`` makes.
    public var isUGrokItEpc: Bool {
        bytes.count == Self.standardByteCount && bytes[0] == 0x35 && BitReader(bytes: bytes)[8, 28] == UInt64(Self.uGrokItManagerNumber)
    }

    /// For byte arrays known to have a valid length.
    private init(validBytes: [UInt8]) {
        precondition((Self.minByteCount...Self.maxByteCount).contains(validBytes.count))
        bytes = validBytes
    }
}

// MARK: - Helpers

/// Upper-case hex, as the vendor's `UgiEpc.toString` writes EPCs.
func hexString(_ bytes: [UInt8]) -> String {
    Hex.encode(bytes, uppercase: true)
}
