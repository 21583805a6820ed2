import GrokBasics
import GrokCrypto
import Testing
import UGrokIt

/// Packs big-endian bit fields (value, width) and pads them with zeros to whole 16-bit
/// words: builds EPCs bit by bit, independently of the encoder under test.
private func packed(_ fields: [(UInt64, Int)]) -> [UInt8] {
    var bits: [UInt8] = []
    for (value, width) in fields {
        for i in stride(from: width - 1, through: 0, by: -1) { bits.append(UInt8(value >> UInt64(i) & 1)) }
    }
    bits += [UInt8](repeating: 0, count: (bits.count + 15) / 16 * 16 - bits.count)
    return stride(from: 0, to: bits.count, by: 8).map { bits[$0..<$0 + 8].reduce(0) { $0 << 1 | $1 } }
}

/// 7-bit ASCII characters as (value, 7) fields.
private func ascii7(_ text: String) -> [(UInt64, Int)] { text.utf8.map { (UInt64($0), 7) } }

@Suite("EpcTag: the Tag Data Standard's schemes, encoded and decoded")
struct EpcTagTests {
    @Test("The TDS's SGTIN-96 example, from its GS1 parts")
    func sgtinFromParts() throws {
        let tag = try EpcTag.sgtin(companyPrefix: "0614141", itemReference: "812345", serial: "6789", filter: 3)
        #expect(tag.scheme == .sgtin96)
        #expect(try tag.epc.description == "3074257BF7194E4000001A85")
        #expect(tag.tagURI == "urn:epc:tag:sgtin-96:3.0614141.812345.6789")
        #expect(tag.pureIdentityURI == "urn:epc:id:sgtin:0614141.812345.6789")
        #expect(try EpcTag(uri: "urn:epc:id:sgtin:0614141.812345.6789", filter: 3) == tag)
        #expect(try EpcTag(uri: tag.tagURI) == tag)
        #expect(try EpcTag(epc: tag.epc) == tag)
        // The type's documentation example.
        #expect(try EpcTag(identity: "sgtin", fields: "0614141.112345.400", filter: 1).epc.description == "3034257BF46DB64000000190")
    }

    @Test("A pure identity takes the 96-bit scheme when its serial fits, the long one otherwise")
    func shortestSchemeThatHoldsIt() throws {
        #expect(try EpcTag(identity: "sgtin", fields: "0614141.812345.274877906943").scheme == .sgtin96)  // 2^38 - 1
        #expect(try EpcTag(identity: "sgtin", fields: "0614141.812345.274877906944").scheme == .sgtin198)
        #expect(try EpcTag(identity: "sgtin", fields: "0614141.812345.0123").scheme == .sgtin198)  // A leading zero is text.
        #expect(try EpcTag(identity: "sgln", fields: "0614141.12345.A1").scheme == .sgln195)
        #expect(try EpcTag(identity: "gsrn", fields: "0614141.1234567890").scheme == .gsrn96)
    }

    @Test("SGLN-96, GRAI-170, USDOD-96 and ADI-var built bit by bit decode to their URIs")
    func builtBitByBit() throws {
        let sgln = packed([(0x32, 8), (1, 3), (5, 3), (614_141, 24), (12_345, 17), (400, 41)])
        #expect(EpcTag(bytes: sgln)?.tagURI == "urn:epc:tag:sgln-96:1.0614141.12345.400")
        let grai = packed([(0x37, 8), (2, 3), (5, 3), (614_141, 24), (12_345, 20)] + ascii7("A/B") + [(0, 112 - 21)])
        #expect(EpcTag(bytes: grai)?.tagURI == "urn:epc:tag:grai-170:2.0614141.12345.A%2FB")
        // A 5-character CAGE code is led by a space (0x20).
        let usdod = packed([(0x2F, 8), (0, 4)] + " 2S194".utf8.map { (UInt64($0), 8) } + [(12_345_678_901, 36)])
        #expect(EpcTag(bytes: usdod)?.tagURI == "urn:epc:tag:usdod-96:0.2S194.12345678901")
        // ADI: 6-bit characters, each string ended by a zero character; '#' first in a serial.
        let six = { (text: String) in text.utf8.map { (UInt64($0 & 0x3F), 6) } + [(0, 6)] }
        let adi = packed([(0x3B, 8), (3, 6)] + " 35962".utf8.map { (UInt64($0 & 0x3F), 6) } + six("PQ7/Z43") + six("#A1"))
        let tag = try #require(EpcTag(bytes: adi))
        #expect(tag.tagURI == "urn:epc:tag:adi-var:3.35962.PQ7%2FZ43.%23A1")
        #expect(tag.fields == ["35962", "PQ7/Z43", "#A1"])
        #expect(try UgiEpc(bytes: adi).toTagURI() == tag.tagURI)
    }

    @Test("What epcpy 0.1.8 misreads, checked here: an escape is one character, '%', ':' and escapes in a row")
    func escapes() throws {
        // 20 characters, 6 of them escaped: still fits SGTIN-198's 20.
        let serial = "A/B\"C%D&E<F>G?HIJKLMN"
        #expect(serial.count == 21)
        let fits = try EpcTag.sgtin(companyPrefix: "0614141", itemReference: "812345", serial: String(serial.dropLast()))
        #expect(fits.scheme == .sgtin198)
        #expect(fits.tagURI == "urn:epc:tag:sgtin-198:0.0614141.812345.A%2FB%22C%25D%26E%3CF%3EG%3FHIJKLM")
        #expect(fits.fields[2] == String(serial.dropLast()))
        #expect(EpcTag(bytes: fits.bytes) == fits)
        #expect(throws: EpcEncodingError.tooLong(scheme: "sgtin-198", field: "serial", value: serial, maximum: 20)) {
            try EpcTag.sgtin(companyPrefix: "0614141", itemReference: "812345", serial: serial)
        }
        let giai = try EpcTag(uri: "urn:epc:tag:giai-202:1.0614141.%2F%3CA:B:C")
        #expect(giai.fields == ["0614141", "/<A:B:C"])
        #expect(EpcTag(bytes: giai.bytes)?.tagURI == "urn:epc:tag:giai-202:1.0614141.%2F%3CA:B:C")
        #expect(giai.bytes == packed([(0x38, 8), (1, 3), (5, 3), (614_141, 24)] + ascii7("/<A:B:C") + [(0, 164 - 49)]))
    }

    @Test("ITIP-212 needs 14 words, more than the SDK's 27-byte EPC: its bytes, but no UgiEpc")
    func itip212IsTooLongForTheReader() throws {
        let tag = try EpcTag(uri: "urn:epc:tag:itip-212:0.0614141.812345.01.02.A")
        #expect(tag.bytes.count == 28)
        #expect(EpcTag(bytes: tag.bytes) == tag)
        #expect(throws: EpcEncodingError.tooManyBits(scheme: "itip-212", bits: 224, maximum: 216)) { try tag.epc }
        #expect(try EpcTag(uri: "urn:epc:tag:itip-110:0.0614141.812345.01.02.7").epc.length == 14)
    }

    @Test(arguments: [
        ("urn:epc:raw:96.x30", EpcEncodingError.notEpcURI(uri: "urn:epc:raw:96.x30")),
        ("urn:epc:tag:sgtin-97:1.0614141.812345.1",
         .unknownScheme(uri: "urn:epc:tag:sgtin-97:1.0614141.812345.1", scheme: "sgtin-97",
                        known: EpcScheme.allCases.map(\.rawValue).joined(separator: ", "))),
        ("urn:epc:tag:sgtin-96:1.0614141.812345",
         .fieldCount(uri: "urn:epc:tag:sgtin-96:1.0614141.812345", scheme: "sgtin-96", expected: 3, found: 2,
                     format: "company_prefix.item_reference.serial")),
        ("urn:epc:tag:sgtin-96:8.0614141.812345.1", .filterOutOfRange(scheme: "sgtin-96", filter: "8", maximum: 7)),
        ("urn:epc:tag:usdod-96:16.2S194.1", .filterOutOfRange(scheme: "usdod-96", filter: "16", maximum: 15)),
        ("urn:epc:tag:adi-var:x.2S194.A.1", .filterOutOfRange(scheme: "adi-var", filter: "x", maximum: 63)),
        ("urn:epc:tag:sscc-96:1", .fieldCount(uri: "urn:epc:tag:sscc-96:1", scheme: "sscc-96", expected: 3, found: 1,
                                              format: "filter.company_prefix.serial_reference")),
        ("urn:epc:tag:sgtin-96:1.06141.8123456.1", .companyPrefixLength(scheme: "sgtin-96", value: "06141", digits: 5)),
        ("urn:epc:tag:sgtin-96:1.0614141.81234.1",
         .digitCount(scheme: "sgtin-96", field: "item_reference", value: "81234", expected: 6, companyDigits: 7)),
        ("urn:epc:tag:sgtin-96:1.0614141.812345.01", .leadingZero(scheme: "sgtin-96", field: "serial", value: "01")),
        ("urn:epc:tag:sgtin-96:1.0614141.812345.274877906944",
         .tooLarge(scheme: "sgtin-96", field: "serial", value: "274877906944", maximum: "274877906943")),
        ("urn:epc:tag:cpi-var:1.0614141.A.1000000000000",
         .tooLarge(scheme: "cpi-var", field: "serial", value: "1000000000000", maximum: "999999999999")),
        ("urn:epc:tag:sscc-96:1.0614141.12345678x", .notDigits(scheme: "sscc-96", field: "serial_reference", value: "12345678x")),
        ("urn:epc:tag:sgtin-198:1.0614141.812345.", .empty(scheme: "sgtin-198", field: "serial")),
        ("urn:epc:tag:sgtin-198:1.0614141.812345.A B",
         .badCharacter(scheme: "sgtin-198", field: "serial", value: "A B", character: " ",
                       allowed: "0-9 A-Z a-z ! \" % & ' ( ) * + , - . / : ; < = > ? _")),
        ("urn:epc:tag:sgtin-198:1.0614141.812345.A%2", .badEscape(scheme: "sgtin-198", field: "serial", value: "A%2")),
        ("urn:epc:tag:itip-110:1.0614141.812345.1.02.7",
         .digitCount(scheme: "itip-110", field: "piece", value: "1", expected: 2, companyDigits: 0)),
        ("urn:epc:tag:usdod-96:1.2S1945X.1", .cageLength(scheme: "usdod-96", value: "2S1945X", characters: 7)),
        ("urn:epc:tag:adi-var:1.2SI94.A.1",
         .badCharacter(scheme: "adi-var", field: "cage", value: "2SI94", character: "I", allowed: "0-9 A-Z (not I or O)")),
        ("urn:epc:tag:adi-var:1.2S194.A.%23BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
         .tooLong(scheme: "adi-var", field: "serial", value: "#BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", maximum: 30)),
        ("urn:epc:tag:adi-var:1.2S194.AAAAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
         .tooManyBits(scheme: "adi-var", bits: 400, maximum: 216)),
    ])
    func badPartsAreNamed(uri: String, expected: EpcEncodingError) throws {
        let error = try #require(throws: EpcEncodingError.self) { try EpcTag(uri: uri).epc }
        #expect(error == expected)
        #expect(error.code.hasPrefix("epc_"))
        #expect(!error.description.contains("{"), "every placeholder filled: \(error.description)")
    }

    @Test("Messages name the field in words and count in the right form")
    func messages() {
        #expect(EpcEncodingError.digitCount(scheme: "sgtin-96", field: "item_reference", value: "81234", expected: 6, companyDigits: 7)
            .description == "sgtin-96: the item reference '81234' must have exactly 6 digits with a company prefix of 7 digits "
            + "(together they make the whole GS1 key); add or remove leading zeros.")
        #expect(EpcEncodingError.digitCount(scheme: "itip-110", field: "piece", value: "1", expected: 2, companyDigits: 0)
            .description == "itip-110: the piece number '1' must have exactly 2 digits; add or remove leading zeros.")
        #expect(EpcEncodingError.fieldCount(uri: "urn:epc:tag:sscc-96:1", scheme: "sscc-96", expected: 3, found: 1,
                                            format: "filter.company_prefix.serial_reference").description
            == "'urn:epc:tag:sscc-96:1' has 1 field where sscc-96 takes 3: filter.company_prefix.serial_reference.")
    }

    @Test("A tag URI's own filter wins over none, and another one is refused")
    func filterConflict() throws {
        #expect(try EpcTag(uri: "urn:epc:tag:sgtin-96:3.0614141.812345.1", filter: 3).filter == 3)
        #expect(throws: EpcEncodingError.filterConflict(uri: "urn:epc:tag:sgtin-96:3.0614141.812345.1", filter: "1")) {
            try EpcTag(uri: "urn:epc:tag:sgtin-96:3.0614141.812345.1", filter: 1)
        }
    }

    @Test("Decoding refuses what the TDS forbids: bits after a string's end, a SGCN serial without its leading 1, a stray length")
    func decodingIsStrict() throws {
        var grai = packed([(0x37, 8), (2, 3), (5, 3), (614_141, 24), (12_345, 20)] + ascii7("A") + [(0, 7)] + ascii7("B")
                          + [(0, 112 - 21)])
        #expect(EpcTag(bytes: grai) == nil)
        grai = packed([(0x37, 8), (2, 3), (5, 3), (614_141, 24), (12_345, 20)] + ascii7("A") + [(0, 112 - 7)])
        #expect(EpcTag(bytes: grai)?.fields == ["0614141", "12345", "A"])
        #expect(EpcTag(bytes: grai + [0, 0, 0, 0]) == nil, "two more words are no padding")
        let sgcn = packed([(0x3F, 8), (0, 3), (5, 3), (614_141, 24), (12_345, 17), (22_345, 41)])
        #expect(EpcTag(bytes: sgcn) == nil)
        let sgcnWithZeros = packed([(0x3F, 8), (0, 3), (5, 3), (614_141, 24), (12_345, 17), (1_000_123, 41)])
        #expect(EpcTag(bytes: sgcnWithZeros)?.tagURI == "urn:epc:tag:sgcn-96:0.0614141.12345.000123")
    }

    @Test("Every scheme's header is the TDS's and names it back")
    func headers() {
        #expect(EpcScheme.allCases.count == 21)
        #expect(Set(EpcScheme.allCases.map(\.header)).count == 21)
        for scheme in EpcScheme.allCases { #expect(EpcScheme(header: scheme.header) == scheme) }
        #expect(EpcScheme(header: 0x3A) == nil)  // GDTI-113, withdrawn.
        #expect(EpcScheme.schemes(forIdentity: "giai") == [.giai96, .giai202])
    }
}
