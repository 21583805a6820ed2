/// The binary encodings of GS1's EPC Tag Data Standard (TDS 1.13, section 14), each with
/// the 8-bit header that starts the EPC, its filter width and its fields.
///
/// The raw value is the name the tag URI uses (`urn:epc:tag:sgtin-96:...`).
public enum EpcScheme: String, CaseIterable, Sendable, Codable {
    case sgtin96 = "sgtin-96", sgtin198 = "sgtin-198"
    case sscc96 = "sscc-96"
    case sgln96 = "sgln-96", sgln195 = "sgln-195"
    case grai96 = "grai-96", grai170 = "grai-170"
    case giai96 = "giai-96", giai202 = "giai-202"
    case gsrn96 = "gsrn-96", gsrnp96 = "gsrnp-96"
    case gdti96 = "gdti-96", gdti174 = "gdti-174"
    case cpi96 = "cpi-96", cpiVar = "cpi-var"
    case sgcn96 = "sgcn-96"
    case itip110 = "itip-110", itip212 = "itip-212"
    case gid96 = "gid-96"
    case usdod96 = "usdod-96"
    case adiVar = "adi-var"

    /// The EPC header (TDS table 14-1), the EPC's first byte.
    public var header: UInt8 {
        switch self {
        case .gdti96: 0x2C
        case .gsrn96: 0x2D
        case .gsrnp96: 0x2E
        case .usdod96: 0x2F
        case .sgtin96: 0x30
        case .sscc96: 0x31
        case .sgln96: 0x32
        case .grai96: 0x33
        case .giai96: 0x34
        case .gid96: 0x35
        case .sgtin198: 0x36
        case .grai170: 0x37
        case .giai202: 0x38
        case .sgln195: 0x39
        case .adiVar: 0x3B
        case .cpi96: 0x3C
        case .cpiVar: 0x3D
        case .gdti174: 0x3E
        case .sgcn96: 0x3F
        case .itip110: 0x40
        case .itip212: 0x41
        }
    }

    /// The scheme of an EPC header, if the TDS defines one.
    public init?(header: UInt8) {
        guard let scheme = Self.allCases.first(where: { $0.header == header }) else { return nil }
        self = scheme
    }

    /// The identity the pure identity URI names (`sgtin` for SGTIN-96 and SGTIN-198).
    public var identity: String { String(rawValue.prefix { $0 != "-" }) }

    /// The schemes that encode `identity` (`sgtin`), shortest first.
    public static func schemes(forIdentity identity: String) -> [EpcScheme] {
        allCases.filter { $0.identity == identity }
    }

    /// Width of the filter value in bits: 3 for GS1 keys, 4 for USDOD, 6 for ADI, none for GID.
    public var filterBits: Int {
        switch self {
        case .gid96: 0
        case .usdod96: 4
        case .adiVar: 6
        default: 3
        }
    }

    /// The largest filter value (0 for GID-96, which has none).
    public var maxFilter: Int { (1 << filterBits) - 1 }

    /// The number of bits the scheme has, or `nil` for the variable-length CPI-var and ADI-var.
    public var bitCount: Int? {
        switch self {
        case .cpiVar, .adiVar: nil
        default: Int(rawValue.split(separator: "-")[1])
        }
    }

    /// The fields of the pure identity URI in order, by their catalog codes
    /// (`epc.field.<code>`): `company_prefix`, `item_reference`, `serial`, ...
    public var fieldNames: [String] {
        layout.flatMap { field -> [String] in
            switch field {
            case .partitioned(_, let reference, _): ["company_prefix", reference]
            case .integer(let name, _, _), .digits(let name, _, _), .numericString(let name, _, _), .string7(let name, _),
                 .string6(let name, _, _), .cage(let name, _):
                [name]
            case .zeros: []
            }
        }
    }

    /// How the URI's fields look, for error messages: `company_prefix.item_reference.serial`.
    var fieldFormat: String { fieldNames.joined(separator: ".") }

    /// A partitioned GS1 key's reference, after the company prefix (TDS section 14.5.1-14.5.2).
    enum Reference {
        /// Exactly `total - company digits` digits, leading zeros kept.
        case digits(total: Int)
        /// A number without leading zeros, of at most `total - company digits` digits.
        case integer(maxTotalDigits: Int)
        /// 7-bit characters, at most `total - company digits` of them, zero-padded.
        case string7(totalCharacters: Int)
        /// 6-bit characters ended by a zero character, at most `total - company digits`.
        case string6(totalCharacters: Int)
    }

    /// One field of the binary layout after the header and filter.
    enum Field {
        /// 3 partition bits, then company prefix and reference sharing `bits` (variable for
        /// a 6-bit string reference).
        case partitioned(bits: Int, reference: String, Reference)
        /// A number without leading zeros below 2^bits, of at most `maxDigits` digits.
        case integer(String, bits: Int, maxDigits: Int = 20)
        /// Exactly `count` digits (leading zeros kept) below 2^bits.
        case digits(String, bits: Int, count: Int)
        /// Up to `maxDigits` digits, leading zeros kept: the number "1" followed by them.
        case numericString(String, bits: Int, maxDigits: Int)
        /// 7-bit characters of GS1's 82-character set, zero-padded to `bits`.
        case string7(String, bits: Int)
        /// 6-bit characters ended by a zero character, `minCharacters...maxCharacters`.
        case string6(String, minCharacters: Int, maxCharacters: Int)
        /// A 5-character CAGE code or 6-character DoDAAC in `characterBits`-bit characters,
        /// a CAGE code led by a space.
        case cage(String, characterBits: Int)
        /// Bits that must be zero.
        case zeros(bits: Int)
    }

    /// The fields after header and filter (TDS tables 14-3 to 14-31).
    var layout: [Field] {
        switch self {
        case .sgtin96: [.partitioned(bits: 44, reference: "item_reference", .digits(total: 13)), .integer("serial", bits: 38)]
        case .sgtin198: [.partitioned(bits: 44, reference: "item_reference", .digits(total: 13)), .string7("serial", bits: 140)]
        case .sscc96: [.partitioned(bits: 58, reference: "serial_reference", .digits(total: 17)), .zeros(bits: 24)]
        case .sgln96: [.partitioned(bits: 41, reference: "location_reference", .digits(total: 12)), .integer("extension", bits: 41)]
        case .sgln195: [.partitioned(bits: 41, reference: "location_reference", .digits(total: 12)), .string7("extension", bits: 140)]
        case .grai96: [.partitioned(bits: 44, reference: "asset_type", .digits(total: 12)), .integer("serial", bits: 38)]
        case .grai170: [.partitioned(bits: 44, reference: "asset_type", .digits(total: 12)), .string7("serial", bits: 112)]
        case .giai96: [.partitioned(bits: 82, reference: "asset_reference", .integer(maxTotalDigits: 30))]
        case .giai202: [.partitioned(bits: 188, reference: "asset_reference", .string7(totalCharacters: 30))]
        case .gsrn96, .gsrnp96: [.partitioned(bits: 58, reference: "service_reference", .digits(total: 17)), .zeros(bits: 24)]
        case .gdti96: [.partitioned(bits: 41, reference: "document_type", .digits(total: 12)), .integer("serial", bits: 41)]
        case .gdti174: [.partitioned(bits: 41, reference: "document_type", .digits(total: 12)), .string7("serial", bits: 119)]
        case .cpi96: [.partitioned(bits: 51, reference: "part_reference", .integer(maxTotalDigits: 15)), .integer("serial", bits: 31)]
        case .cpiVar: [.partitioned(bits: 0, reference: "part_reference", .string6(totalCharacters: 30)),
                         .integer("serial", bits: 40, maxDigits: 12)]
        case .sgcn96: [.partitioned(bits: 41, reference: "document_type", .digits(total: 12)),
                       .numericString("serial", bits: 41, maxDigits: 12)]
        case .itip110: [.partitioned(bits: 44, reference: "item_reference", .digits(total: 13)), .digits("piece", bits: 7, count: 2),
                        .digits("total", bits: 7, count: 2), .integer("serial", bits: 38)]
        case .itip212: [.partitioned(bits: 44, reference: "item_reference", .digits(total: 13)), .digits("piece", bits: 7, count: 2),
                        .digits("total", bits: 7, count: 2), .string7("serial", bits: 140)]
        case .gid96: [.integer("manager", bits: 28), .integer("object_class", bits: 24), .integer("serial", bits: 36)]
        case .usdod96: [.cage("cage", characterBits: 8), .integer("serial", bits: 36)]
        case .adiVar: [.cage("cage", characterBits: 6), .string6("part_number", minCharacters: 0, maxCharacters: 32),
                       .string6("serial", minCharacters: 1, maxCharacters: 30)]
        }
    }

    /// Company prefix bits by partition value 0-6 (12 down to 6 digits), the same in every
    /// GS1 partition table of the TDS.
    static let companyPrefixBits = [40, 37, 34, 30, 27, 24, 20]
}
