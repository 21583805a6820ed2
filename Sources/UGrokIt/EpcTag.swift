/// An EPC as GS1's EPC Tag Data Standard (TDS 1.13) reads it: its binary scheme, filter
/// value and the fields of its pure identity, decoded from a ``UgiEpc`` or encoded from
/// parts or URIs. Every value is checked when made, so ``bytes``, ``tagURI`` and
/// ``pureIdentityURI`` always describe one valid encoding.
///
///     let tag = try EpcTag(identity: "sgtin", fields: "0614141.112345.400", filter: 1)
///     tag.tagURI        // urn:epc:tag:sgtin-96:1.0614141.112345.400
///     try tag.epc       // 3034257BF46DB64000000190
///
/// Fields are kept as the URI shows them unescaped (`"A/B"`, not `"A%2FB"`).
public struct EpcTag: Sendable, Hashable, CustomStringConvertible {
    /// The binary encoding.
    public let scheme: EpcScheme
    /// The filter value (0 for GID-96, which has none).
    public let filter: Int
    /// The pure identity's fields in order, as ``EpcScheme/fieldNames`` names them.
    public let fields: [String]
    /// The encoded EPC: the scheme's bits, zero-padded to whole 16-bit words as a tag's EPC
    /// memory holds them (or, when decoded, the bytes as they were read).
    public let bytes: [UInt8]

    /// ``bytes`` as a ``UgiEpc``, which a Grokker can read and program.
    /// - Throws: ``EpcEncodingError/tooManyBits(scheme:bits:maximum:)`` for an EPC longer than
    ///   the vendor protocol's 27 bytes: always ITIP-212 (14 words), and long CPI-var or ADI-var.
    public var epc: UgiEpc {
        get throws(EpcEncodingError) {
            do { return try UgiEpc(bytes: bytes) } catch {
                throw .tooManyBits(scheme: scheme.rawValue, bits: bytes.count * 8, maximum: UgiEpc.maxByteCount * 8)
            }
        }
    }

    /// Encodes `fields` in `scheme` with `filter`.
    /// - Throws: ``EpcEncodingError`` naming the first field that does not fit and what it allows.
    public init(scheme: EpcScheme, filter: Int, fields: [String]) throws(EpcEncodingError) {
        guard fields.count == scheme.fieldNames.count else {
            throw .fieldCount(uri: fields.joined(separator: "."), scheme: scheme.rawValue,
                              expected: scheme.fieldNames.count, found: fields.count, format: scheme.fieldFormat)
        }
        guard (0...scheme.maxFilter).contains(filter) else {
            throw .filterOutOfRange(scheme: scheme.rawValue, filter: String(filter), maximum: scheme.maxFilter)
        }
        var writer = BitWriter()
        writer.append(UInt64(scheme.header), 8)
        writer.append(UInt64(filter), scheme.filterBits)
        try EpcCodec.encode(scheme: scheme, fields: fields, into: &writer)
        self.scheme = scheme
        self.filter = filter
        self.fields = fields
        self.bytes = writer.words()
    }

    /// Decodes `epc`; `nil` unless it is a valid encoding of a TDS scheme (a known header,
    /// the scheme's length, and every field as the TDS allows it).
    public init?(epc: UgiEpc) {
        self.init(bytes: epc.bytes)
    }

    /// Decodes an EPC's bytes; `nil` unless they are a valid encoding of a TDS scheme: a
    /// known header, every field as the TDS allows it, then only zero bits up to the next
    /// 16-bit word or byte.
    public init?(bytes: [UInt8]) {
        guard let header = bytes.first, let scheme = EpcScheme(header: header) else { return nil }
        var reader = BitReader(bytes: bytes, position: 8)
        guard reader.remaining >= scheme.filterBits else { return nil }
        let filter = Int(reader.read(scheme.filterBits))
        guard let fields = EpcCodec.decode(scheme: scheme, from: &reader) else { return nil }
        // What follows is padding: zero bits up to the next 16-bit word (or byte).
        let used = reader.position
        guard bytes.count * 8 == (used + 15) / 16 * 16 || bytes.count * 8 == (used + 7) / 8 * 8,
              reader.remainingAreZero
        else { return nil }
        self.scheme = scheme
        self.filter = filter
        self.fields = fields
        self.bytes = bytes
    }

    /// The EPC tag URI: `urn:epc:tag:sgtin-96:1.0614141.112345.400` (no filter for GID-96).
    public var tagURI: String {
        let body = escapedFields.joined(separator: ".")
        return "urn:epc:tag:\(scheme.rawValue):" + (scheme == .gid96 ? body : "\(filter).\(body)")
    }

    /// The EPC pure identity URI: `urn:epc:id:sgtin:0614141.112345.400`.
    public var pureIdentityURI: String {
        "urn:epc:id:\(scheme.identity):" + escapedFields.joined(separator: ".")
    }

    public var description: String { tagURI }

    private var escapedFields: [String] {
        zip(scheme.fieldNames, fields).map { name, value in
            switch scheme {
            case .cpiVar, .adiVar: EpcCodec.escape(value, special: "#/")
            default: EpcCodec.escape(value, special: EpcCodec.string7Escaped)
            }
        }
    }
}

// MARK: - From URIs and GS1 parts

extension EpcTag {
    /// Parses and encodes an EPC tag URI (`urn:epc:tag:<scheme>:<filter>.<fields>`) or a
    /// pure identity URI (`urn:epc:id:<identity>:<fields>`, encoded with `filter` in the
    /// shortest scheme that can hold it, as ``init(identity:fields:filter:)``).
    /// - Parameter filter: The filter for a pure identity URI; a tag URI has its own.
    /// - Throws: ``EpcEncodingError``; also for a `filter` given with a tag URI that has another.
    public init(uri: String, filter: Int? = nil) throws(EpcEncodingError) {
        let parts = uri.split(separator: ":", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, parts[0].lowercased() == "urn", parts[1].lowercased() == "epc",
              ["tag", "id"].contains(parts[2].lowercased())
        else { throw .notEpcURI(uri: EpcError.shown(uri)) }
        let name = parts[3].lowercased()
        if parts[2].lowercased() == "id" {
            guard !EpcScheme.schemes(forIdentity: name).isEmpty else {
                throw .unknownScheme(uri: EpcError.shown(uri), scheme: name, known: EpcCodec.identities.joined(separator: ", "))
            }
            try self.init(identity: name, fields: parts[4], filter: filter ?? 0)
            return
        }
        guard let scheme = EpcScheme(rawValue: name) else {
            throw .unknownScheme(uri: EpcError.shown(uri), scheme: name,
                                 known: EpcScheme.allCases.map(\.rawValue).joined(separator: ", "))
        }
        var body = parts[4]
        var tagFilter = 0
        if scheme != .gid96 {
            let filterText = String(body.prefix { $0 != "." })
            guard body.count > filterText.count else {
                throw .fieldCount(uri: EpcError.shown(uri), scheme: scheme.rawValue, expected: scheme.fieldNames.count + 1,
                                  found: 1, format: "filter." + scheme.fieldFormat)
            }
            guard filterText.count <= 2, filterText.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(filterText) else {
                throw .filterOutOfRange(scheme: scheme.rawValue, filter: EpcError.shown(filterText), maximum: scheme.maxFilter)
            }
            tagFilter = value
            body = String(body.dropFirst(filterText.count + 1))
        }
        if let filter, filter != tagFilter, scheme != .gid96 {
            throw .filterConflict(uri: EpcError.shown(uri), filter: String(filter))
        }
        try self.init(scheme: scheme, filter: tagFilter, fields: EpcCodec.split(body, scheme: scheme, uri: uri))
    }

    /// Encodes a pure identity from its GS1 parts (`identity` `sgtin`, `fields`
    /// `0614141.112345.400`: company prefix, item reference with indicator digit first,
    /// serial), in the shortest scheme that can hold them: SGTIN-96 for a serial of digits
    /// below 2^38 without leading zeros, SGTIN-198 otherwise.
    /// - Throws: ``EpcEncodingError``: for a value no scheme holds, the longest scheme's reason.
    public init(identity: String, fields: String, filter: Int = 0) throws(EpcEncodingError) {
        let schemes = EpcScheme.schemes(forIdentity: identity.lowercased())
        guard let longest = schemes.last else {
            throw .unknownScheme(uri: EpcError.shown(identity), scheme: identity,
                                 known: EpcCodec.identities.joined(separator: ", "))
        }
        for scheme in schemes.dropLast() {
            if let fields = try? EpcCodec.split(fields, scheme: scheme, uri: fields),
               let tag = try? EpcTag(scheme: scheme, filter: filter, fields: fields) {
                self = tag
                return
            }
        }
        try self.init(scheme: longest, filter: filter, fields: EpcCodec.split(fields, scheme: longest, uri: fields))
    }

    /// An SGTIN from a GTIN's company prefix and item reference (indicator digit first) and
    /// a serial.
    public static func sgtin(companyPrefix: String, itemReference: String, serial: String, filter: Int = 0)
        throws(EpcEncodingError) -> EpcTag {
        try EpcTag(identity: "sgtin", fields: "\(companyPrefix).\(itemReference).\(EpcCodec.escape(serial, special: EpcCodec.string7Escaped))",
                   filter: filter)
    }

    /// An SSCC from its company prefix and serial reference (extension digit first).
    public static func sscc(companyPrefix: String, serialReference: String, filter: Int = 0) throws(EpcEncodingError) -> EpcTag {
        try EpcTag(scheme: .sscc96, filter: filter, fields: [companyPrefix, serialReference])
    }

    /// An SGLN from a GLN's company prefix and location reference and an extension.
    public static func sgln(companyPrefix: String, locationReference: String, extension: String, filter: Int = 0)
        throws(EpcEncodingError) -> EpcTag {
        try EpcTag(identity: "sgln", fields: "\(companyPrefix).\(locationReference).\(EpcCodec.escape(`extension`, special: EpcCodec.string7Escaped))",
                   filter: filter)
    }

    /// A GRAI from its company prefix, asset type and serial.
    public static func grai(companyPrefix: String, assetType: String, serial: String, filter: Int = 0)
        throws(EpcEncodingError) -> EpcTag {
        try EpcTag(identity: "grai", fields: "\(companyPrefix).\(assetType).\(EpcCodec.escape(serial, special: EpcCodec.string7Escaped))",
                   filter: filter)
    }

    /// A GIAI from its company prefix and individual asset reference.
    public static func giai(companyPrefix: String, assetReference: String, filter: Int = 0) throws(EpcEncodingError) -> EpcTag {
        try EpcTag(identity: "giai", fields: "\(companyPrefix).\(EpcCodec.escape(assetReference, special: EpcCodec.string7Escaped))",
                   filter: filter)
    }
}

// MARK: - The codec

/// Field by field encoding and decoding of ``EpcScheme/layout`` (TDS section 14.5).
enum EpcCodec {
    /// The pure identity names, each once.
    static var identities: [String] {
        var seen: [String] = []
        for scheme in EpcScheme.allCases where !seen.contains(scheme.identity) { seen.append(scheme.identity) }
        return seen
    }

    /// GS1's 82 characters (TDS table A-1) that the 7-bit string fields hold.
    static let string7Characters = Set("!\"%&'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
    /// The 7-bit characters a URI writes as `%XX` (TDS table A-1).
    static let string7Escaped = "\"%&/<>?"
    /// The characters of CPI-var part references (TDS table 14-27 uses table G-1's `#`, `-`,
    /// `/`, digits and capitals).
    static let string6Characters = Set("#-/0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    /// ADI part numbers and serials: capitals, digits, `-` and `/` (and `#` first in a serial).
    static let adiCharacters = Set("-/0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    /// CAGE codes and DoDAACs: digits and capitals but `I` and `O`.
    static let cageCharacters = Set("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ")

    static func escape(_ value: String, special: String) -> String {
        var out = ""
        for character in value {
            if special.contains(character), let ascii = character.asciiValue {
                out += "%" + String(ascii, radix: 16, uppercase: true).leftPadded(to: 2)
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// Splits a URI body into the scheme's fields (the last takes any further dots, which a
    /// 7-bit serial may hold) and undoes `%XX` escapes.
    static func split(_ body: String, scheme: EpcScheme, uri: String) throws(EpcEncodingError) -> [String] {
        let count = scheme.fieldNames.count
        let pieces = body.split(separator: ".", maxSplits: count - 1, omittingEmptySubsequences: false).map(String.init)
        guard pieces.count == count else {
            throw .fieldCount(uri: EpcError.shown(uri), scheme: scheme.rawValue, expected: count, found: pieces.count,
                              format: scheme.fieldFormat)
        }
        var fields: [String] = []
        for (name, piece) in zip(scheme.fieldNames, pieces) {
            fields.append(try unescape(piece, scheme: scheme, field: name))
        }
        return fields
    }

    private static func unescape(_ text: String, scheme: EpcScheme, field: String) throws(EpcEncodingError) -> String {
        guard text.contains("%") else { return text }
        var out = ""
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            guard character == "%" else { out.append(character); continue }
            let digits = String(characters.prefix(2))
            guard digits.count == 2, let value = UInt8(digits, radix: 16), value > 0x20, value < 0x7F else {
                throw .badEscape(scheme: scheme.rawValue, field: field, value: EpcError.shown(text))
            }
            out.append(Character(Unicode.Scalar(value)))
            characters = characters.dropFirst(2)
        }
        return out
    }

    // MARK: Encoding

    static func encode(scheme: EpcScheme, fields: [String], into writer: inout BitWriter) throws(EpcEncodingError) {
        var index = 0
        func next() -> (name: String, value: String) {
            defer { index += 1 }
            return (scheme.fieldNames[index], fields[index])
        }
        let name = scheme.rawValue
        for field in scheme.layout {
            switch field {
            case .partitioned(let bits, _, let reference):
                let company = next(), ref = next()
                try digitsOnly(company.value, scheme: name, field: company.name)
                guard (6...12).contains(company.value.count) else {
                    throw .companyPrefixLength(scheme: name, value: company.value, digits: company.value.count)
                }
                let partition = 12 - company.value.count
                let companyBits = EpcScheme.companyPrefixBits[partition]
                writer.append(UInt64(partition), 3)
                writer.append(UInt64(company.value)!, companyBits)
                let referenceBits = bits - companyBits
                switch reference {
                case .digits(let total):
                    let count = total - company.value.count
                    try digitsOnly(ref.value, scheme: name, field: ref.name, allowEmpty: count == 0)
                    guard ref.value.count == count else {
                        throw .digitCount(scheme: name, field: ref.name, value: ref.value, expected: count,
                                          companyDigits: company.value.count)
                    }
                    writer.append(UInt64(ref.value) ?? 0, referenceBits)
                case .integer(let maxTotalDigits):
                    let value = try integer(ref.value, scheme: name, field: ref.name, bits: referenceBits,
                                            maxDigits: maxTotalDigits - company.value.count)
                    writer.append(value, referenceBits)
                case .string7(let totalCharacters):
                    try string7(ref.value, scheme: name, field: ref.name, bits: referenceBits,
                                maxCharacters: totalCharacters - company.value.count, into: &writer)
                case .string6(let totalCharacters):
                    try string6(ref.value, shown: ref.value, scheme: name, field: ref.name, characters: string6Characters,
                                allowed: "# - / 0-9 A-Z", range: 0...(totalCharacters - company.value.count), into: &writer)
                }
            case .integer(_, let bits, let maxDigits):
                let field = next()
                writer.append(try integer(field.value, scheme: name, field: field.name, bits: bits, maxDigits: maxDigits), bits)
            case .digits(_, let bits, let count):
                let field = next()
                try digitsOnly(field.value, scheme: name, field: field.name)
                guard field.value.count == count else {
                    throw .digitCount(scheme: name, field: field.name, value: field.value, expected: count, companyDigits: 0)
                }
                writer.append(UInt64(field.value)!, bits)
            case .numericString(_, let bits, let maxDigits):
                let field = next()
                try digitsOnly(field.value, scheme: name, field: field.name)
                guard field.value.count <= maxDigits else {
                    throw .tooLong(scheme: name, field: field.name, value: EpcError.shown(field.value), maximum: maxDigits)
                }
                writer.append(UInt64("1" + field.value)!, bits)
            case .string7(_, let bits):
                let field = next()
                try string7(field.value, scheme: name, field: field.name, bits: bits, maxCharacters: bits / 7, into: &writer)
            case .string6(_, let minCharacters, let maxCharacters):
                let field = next()
                var value = Substring(field.value)
                if field.name == "serial", value.first == "#" {  // ADI: serial unique within the CAGE alone.
                    writer.append(UInt64(Character("#").asciiValue! & 0x3F), 6)
                    value = value.dropFirst()
                }
                guard !value.isEmpty || minCharacters == 0 else {
                    throw .empty(scheme: name, field: field.name)
                }
                try string6(String(value), shown: field.value, scheme: name, field: field.name, characters: adiCharacters,
                            allowed: "- / 0-9 A-Z" + (field.name == "serial" ? " (# first)" : ""),
                            range: 0...(maxCharacters - (field.value.count - value.count)), into: &writer)
            case .cage(_, let characterBits):
                let field = next()
                guard (5...6).contains(field.value.count) else {
                    throw .cageLength(scheme: name, value: EpcError.shown(field.value), characters: field.value.count)
                }
                if let bad = field.value.first(where: { !cageCharacters.contains($0) }) {
                    throw .badCharacter(scheme: name, field: field.name, value: EpcError.shown(field.value),
                                        character: String(bad), allowed: "0-9 A-Z (not I or O)")
                }
                let padded = field.value.count == 5 ? " " + field.value : field.value
                for character in padded.utf8 {
                    writer.append(UInt64(characterBits == 6 ? character & 0x3F : character), characterBits)
                }
            case .zeros(let bits):
                writer.append(0, bits)
            }
        }
    }

    private static func digitsOnly(_ value: String, scheme: String, field: String, allowEmpty: Bool = false) throws(EpcEncodingError) {
        if value.isEmpty && !allowEmpty { throw .empty(scheme: scheme, field: field) }
        guard value.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .notDigits(scheme: scheme, field: field, value: EpcError.shown(value))
        }
    }

    private static func integer(_ value: String, scheme: String, field: String, bits: Int, maxDigits: Int?)
        throws(EpcEncodingError) -> UInt64 {
        try digitsOnly(value, scheme: scheme, field: field)
        guard value == "0" || value.first != "0" else { throw .leadingZero(scheme: scheme, field: field, value: value) }
        let limit: UInt64 = bits >= 64 ? .max : (1 << UInt64(bits)) - 1
        var maximum = limit
        if let maxDigits, maxDigits < 20 {
            var power: UInt64 = 1
            for _ in 0..<maxDigits { power *= 10 }
            maximum = min(limit, power - 1)
        }
        guard value.count <= 20, let number = UInt64(value), number <= maximum else {
            throw .tooLarge(scheme: scheme, field: field, value: EpcError.shown(value), maximum: String(maximum))
        }
        return number
    }

    private static func string7(_ value: String, scheme: String, field: String, bits: Int, maxCharacters: Int,
                                into writer: inout BitWriter) throws(EpcEncodingError) {
        if value.isEmpty { throw .empty(scheme: scheme, field: field) }
        if let bad = value.first(where: { !string7Characters.contains($0) }) {
            throw .badCharacter(scheme: scheme, field: field, value: EpcError.shown(value), character: String(bad),
                                allowed: "0-9 A-Z a-z ! \" % & ' ( ) * + , - . / : ; < = > ? _")
        }
        guard value.count <= maxCharacters else {
            throw .tooLong(scheme: scheme, field: field, value: EpcError.shown(value), maximum: maxCharacters)
        }
        for character in value.utf8 { writer.append(UInt64(character), 7) }
        writer.append(0, bits - 7 * value.count)
    }

    /// 6-bit characters of `value` and a terminating zero character; errors show `shown`
    /// (the whole field, an ADI serial's leading `#` included).
    private static func string6(_ value: String, shown: String, scheme: String, field: String, characters: Set<Character>,
                                allowed: String, range: ClosedRange<Int>, into writer: inout BitWriter) throws(EpcEncodingError) {
        if let bad = value.first(where: { !characters.contains($0) }) {
            throw .badCharacter(scheme: scheme, field: field, value: EpcError.shown(shown), character: String(bad), allowed: allowed)
        }
        guard value.count <= range.upperBound else {
            throw .tooLong(scheme: scheme, field: field, value: EpcError.shown(shown),
                           maximum: range.upperBound + (shown.count - value.count))
        }
        for character in value.utf8 { writer.append(UInt64(character & 0x3F), 6) }
        writer.append(0, 6)  // The terminating zero character.
    }

    // MARK: Decoding

    static func decode(scheme: EpcScheme, from reader: inout BitReader) -> [String]? {
        var fields: [String] = []
        for field in scheme.layout {
            switch field {
            case .partitioned(let bits, _, let reference):
                guard reader.remaining >= 3 else { return nil }
                let partition = Int(reader.read(3))
                guard partition < 7 else { return nil }
                let companyDigits = 12 - partition, companyBits = EpcScheme.companyPrefixBits[partition]
                guard reader.remaining >= companyBits,
                      let company = decimal(reader.read(companyBits), digits: companyDigits) else { return nil }
                fields.append(company)
                let referenceBits = bits - companyBits
                switch reference {
                case .digits(let total):
                    guard reader.remaining >= referenceBits,
                          let text = decimal(reader.read(referenceBits), digits: total - companyDigits) else { return nil }
                    fields.append(text)
                case .integer(let maxTotalDigits):
                    guard reader.remaining >= referenceBits else { return nil }
                    let text = String(reader.read(referenceBits))
                    guard text.count <= maxTotalDigits - companyDigits else { return nil }
                    fields.append(text)
                case .string7(let totalCharacters):
                    guard let text = readString7(&reader, bits: referenceBits), !text.isEmpty,
                          text.count <= totalCharacters - companyDigits else { return nil }
                    fields.append(text)
                case .string6(let totalCharacters):
                    guard let text = readString6(&reader, characters: string6Characters),
                          text.count <= totalCharacters - companyDigits else { return nil }
                    fields.append(text)
                }
            case .integer(_, let bits, let maxDigits):
                guard reader.remaining >= bits else { return nil }
                let text = String(reader.read(bits))
                guard text.count <= maxDigits else { return nil }
                fields.append(text)
            case .digits(_, let bits, let count):
                guard reader.remaining >= bits, let text = decimal(reader.read(bits), digits: count) else { return nil }
                fields.append(text)
            case .numericString(_, let bits, let maxDigits):
                guard reader.remaining >= bits else { return nil }
                let text = String(reader.read(bits))
                guard text.first == "1", (2...(maxDigits + 1)).contains(text.count) else { return nil }
                fields.append(String(text.dropFirst()))
            case .string7(_, let bits):
                guard let text = readString7(&reader, bits: bits), !text.isEmpty else { return nil }
                fields.append(text)
            case .string6(let name, let minCharacters, let maxCharacters):
                var prefix = ""
                if name == "serial", reader.remaining >= 6, reader.peek(6) == UInt64(Character("#").asciiValue! & 0x3F) {
                    _ = reader.read(6)
                    prefix = "#"
                }
                guard let text = readString6(&reader, characters: adiCharacters),
                      ((minCharacters - prefix.count)...(maxCharacters - prefix.count)).contains(text.count) else { return nil }
                fields.append(prefix + text)
            case .cage(_, let characterBits):
                guard reader.remaining >= 6 * characterBits else { return nil }
                var text = ""
                for index in 0..<6 {
                    let code = UInt8(reader.read(characterBits))
                    let ascii = characterBits == 6 ? (code < 0x20 ? code | 0x40 : code) : code
                    if index == 0, ascii == 0x20 { continue }  // A 5-character CAGE code's leading space.
                    let character = Character(Unicode.Scalar(ascii))
                    guard cageCharacters.contains(character) else { return nil }
                    text.append(character)
                }
                fields.append(text)
            case .zeros(let bits):
                guard reader.remaining >= bits, reader.read(bits) == 0 else { return nil }
            }
        }
        return fields
    }

    /// 7-bit characters up to the first zero one; every bit after it must be zero too.
    private static func readString7(_ reader: inout BitReader, bits: Int) -> String? {
        guard reader.remaining >= bits else { return nil }
        var text = ""
        var ended = false
        for _ in 0..<(bits / 7) {
            let code = UInt8(reader.read(7))
            if code == 0 { ended = true; continue }
            let character = Character(Unicode.Scalar(code))
            guard !ended, string7Characters.contains(character) else { return nil }
            text.append(character)
        }
        guard reader.read(bits % 7) == 0 else { return nil }
        return text
    }

    /// 6-bit characters up to a zero character (table G-1: codes 1-26 are `A`-`Z`, 32-63 are
    /// ASCII 0x20-0x3F).
    private static func readString6(_ reader: inout BitReader, characters: Set<Character>) -> String? {
        var text = ""
        while true {
            guard reader.remaining >= 6 else { return nil }
            let code = UInt8(reader.read(6))
            if code == 0 { return text }
            let character = Character(Unicode.Scalar(code < 0x20 ? code | 0x40 : code))
            guard characters.contains(character) else { return nil }
            text.append(character)
        }
    }

    /// `value` as exactly `digits` decimal digits with leading zeros, or `nil` if it needs more.
    private static func decimal(_ value: UInt64, digits: Int) -> String? {
        if digits == 0 { return value == 0 ? "" : nil }
        let text = String(value)
        guard text.count <= digits else { return nil }
        return text.leftPadded(to: digits)
    }
}

// MARK: - Bits

/// Reads big-endian bit fields of up to 64 bits, counted from the first byte's top bit.
struct BitReader {
    let bytes: [UInt8]
    var position = 0

    var remaining: Int { bytes.count * 8 - position }

    var remainingAreZero: Bool { (position..<(bytes.count * 8)).allSatisfy { bit($0) == 0 } }

    subscript(offset: Int, count: Int) -> UInt64 {
        (offset..<(offset + count)).reduce(0) { $0 << 1 | UInt64(bit($1)) }
    }

    func peek(_ count: Int) -> UInt64 { self[position, count] }

    mutating func read(_ count: Int) -> UInt64 {
        defer { position += count }
        return self[position, count]
    }

    private func bit(_ index: Int) -> UInt8 { bytes[index / 8] >> (7 - index % 8) & 1 }
}

/// Appends big-endian bit fields of up to 64 bits.
struct BitWriter {
    private(set) var bits: [UInt8] = []

    mutating func append(_ value: UInt64, _ count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            bits.append(shift >= 64 ? 0 : UInt8(value >> UInt64(shift) & 1))
        }
    }

    /// The bits padded with zeros to whole 16-bit words, as bytes.
    func words() -> [UInt8] {
        let padded = bits + [UInt8](repeating: 0, count: (bits.count + 15) / 16 * 16 - bits.count)
        return stride(from: 0, to: padded.count, by: 8).map { start in padded[start..<start + 8].reduce(0) { $0 << 1 | $1 } }
    }
}

extension String {
    fileprivate func leftPadded(to count: Int) -> String {
        self.count >= count ? self : String(repeating: "0", count: count - self.count) + self
    }
}
