import GrokBasics
import Foundation
import GrokAudio
import Testing
import UGrokIt

/// Packs big-endian bit fields (value, width) into upper-case hex: builds test EPCs bit by
/// bit, independently of the decoder under test.
private func packBits(_ fields: [(UInt64, Int)]) -> String {
    var bits: [UInt8] = []
    for (value, width) in fields {
        for i in stride(from: width - 1, through: 0, by: -1) { bits.append(UInt8(value >> UInt64(i) & 1)) }
    }
    precondition(bits.count % 8 == 0)
    var hex = ""
    for start in stride(from: 0, to: bits.count, by: 8) {
        let byte = bits[start..<start + 8].reduce(0) { $0 << 1 | $1 }
        hex += String(format: "%02X", byte)
    }
    return hex
}

/// Returns the same word every time.
private struct FixedGenerator: RandomNumberGenerator {
    let word: UInt64
    mutating func next() -> UInt64 { word }
}

@Suite("UgiEpc")
struct EpcTests {
    // MARK: Parsing

    @Test func hexInEitherCaseGivesTheSameEpcShownUpperCase() throws {
        let lower = try UgiEpc(hex: "3074257bf7194e4000001a85")
        let upper = try UgiEpc(hex: "3074257BF7194E4000001A85")
        let mixed = try UgiEpc(hex: "3074257Bf7194e4000001A85")
        #expect(lower == upper)
        #expect(mixed == upper)
        #expect(Set([lower, upper, mixed]).count == 1)
        #expect(lower.description == "3074257BF7194E4000001A85")
        #expect(lower.length == 12)
        #expect(lower.bitCount == 96)
        #expect(lower.bytes == [0x30, 0x74, 0x25, 0x7B, 0xF7, 0x19, 0x4E, 0x40, 0x00, 0x00, 0x1A, 0x85])
    }

    @Test func vendorGuideExamplesParse() throws {
        for text in ["35fffffff99c70a063405c48", "35fffffff956734504747454", "1234567890abcdef12345678"] {
            let epc = try UgiEpc(hex: text)
            #expect(epc.description == text.uppercased())
        }
    }

    @Test(arguments: [UgiEpc.minByteCount, UgiEpc.standardByteCount, UgiEpc.maxByteCount])
    func acceptsEveryLengthFrom4To27Bytes(count: Int) throws {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 1) }
        let fromBytes = try UgiEpc(bytes: bytes)
        let fromHex = try UgiEpc(hex: fromBytes.description.lowercased())
        #expect(fromBytes.bytes == bytes)
        #expect(fromHex == fromBytes)
        #expect(fromBytes.description.count == count * 2)
    }

    @Test func rejectsOneByteOutsideEitherBound() {
        #expect(throws: EpcError.tooShort(epc: "010203", bytes: 3)) { try UgiEpc(bytes: [1, 2, 3]) }
        #expect(throws: EpcError.tooShort(epc: "010203", bytes: 3)) { try UgiEpc(hex: "010203") }
        let long = String(repeating: "AB", count: 28)
        #expect(throws: EpcError.tooLong(epc: long, bytes: 28)) { try UgiEpc(hex: long) }
        #expect(throws: EpcError.tooLong(epc: long, bytes: 28)) { try UgiEpc(bytes: [UInt8](repeating: 0xAB, count: 28)) }
        #expect(throws: EpcError.empty) { try UgiEpc(bytes: [UInt8]()) }
    }

    @Test(arguments: [
        ("", EpcError.empty),
        ("30 74257BF7194E4000001A85", .invalidCharacter(hex: "30 74257BF7194E4000001A85", character: " ", offset: 2)),
        ("0x3074257BF7194E4000001A", .invalidCharacter(hex: "0x3074257BF7194E4000001A", character: "x", offset: 1)),
        ("3074-257B", .invalidCharacter(hex: "3074-257B", character: "-", offset: 4)),
        ("3074257G", .invalidCharacter(hex: "3074257G", character: "G", offset: 7)),
        ("30é4257B", .invalidCharacter(hex: "30é4257B", character: "é", offset: 2)),
        ("３074257B", .invalidCharacter(hex: "３074257B", character: "３", offset: 0)),
        ("3074257BF", .oddLength(hex: "3074257BF", digits: 9)),
        ("abc", .oddLength(hex: "abc", digits: 3)),
        ("00", .tooShort(epc: "00", bytes: 1)),
        ("a1b2c3", .tooShort(epc: "A1B2C3", bytes: 3)),
    ])
    func eachBadHexStringHasItsOwnError(text: String, expected: EpcError) {
        #expect(throws: expected) { try UgiEpc(hex: text) }
    }

    @Test func errorsHaveDistinctCodesAndSayWhatIsAccepted() {
        let errors: [EpcError] = [
            .empty, .invalidCharacter(hex: "30Z4", character: "Z", offset: 2), .oddLength(hex: "307", digits: 3),
            .tooShort(epc: "0102", bytes: 2), .tooLong(epc: "AB", bytes: 28),
        ]
        #expect(Set(errors.map(\.code)).count == errors.count)
        for error in errors where error != .empty {
            #expect(error.description.contains(error.arguments[0]), "names the value: \(error)")
        }
        #expect(EpcError.empty.description.contains("4 to 27 bytes"))
        #expect(EpcError.tooShort(epc: "0102", bytes: 2).description.contains("4 to 27 bytes"))
        #expect(EpcError.tooLong(epc: "AB", bytes: 28).description.contains("28 bytes"))
        #expect(EpcError.invalidCharacter(hex: "30Z4", character: "Z", offset: 2).description.contains("'Z' at position 3"))
        #expect(EpcError.invalidCharacter(hex: "30Z4", character: "Z", offset: 2).arguments == ["30Z4", "Z", "3"])
        #expect(EpcError.oddLength(hex: "307", digits: 3).description.contains("3 hex digits"))
    }

    @Test func aRunawayInputIsShortenedInTheError() throws {
        let text = String(repeating: "0", count: 1_000) + "Z"
        let error = try #require(throws: EpcError.self) { try UgiEpc(hex: text) }
        guard case .invalidCharacter(let shown, let character, let offset) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(shown.count == 64)
        #expect(shown.hasSuffix("..."))
        #expect(character == "Z")
        #expect(offset == 1_000)
    }

    // MARK: Codable

    @Test func encodesAsItsHexStringAndDecodesEitherCase() throws {
        let epc = try UgiEpc(hex: "3074257bf7194e4000001a85")
        let json = try JSONEncoder().encode([epc])
        #expect(String(decoding: json, as: UTF8.self) == #"["3074257BF7194E4000001A85"]"#)
        #expect(try JSONDecoder().decode([UgiEpc].self, from: json) == [epc])
        let lower = Data(#"["3074257bf7194e4000001a85"]"#.utf8)
        #expect(try JSONDecoder().decode([UgiEpc].self, from: lower) == [epc])
    }

    @Test func decodingABadHexStringFailsWithTheEpcErrorText() {
        let bad = Data(#"["30Z4257BF7194E4000001A85"]"#.utf8)
        do {
            _ = try JSONDecoder().decode([UgiEpc].self, from: bad)
            Issue.record("decoded a bad EPC")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("'Z' at position 3"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    // MARK: Tag URIs (EPC Tag Data Standard)

    @Test func sgtin96WorkedExampleFromTheTagDataStandard() throws {
        let epc = try UgiEpc(hex: "3074257BF7194E4000001A85")
        #expect(epc.toTagURI() == "urn:epc:tag:sgtin-96:3.0614141.812345.6789")
        #expect(epc.toPureIdentityURI() == "urn:epc:id:sgtin:0614141.812345.6789")
    }

    @Test func sgtin96BuiltBitByBitMatchesTheWorkedExample() {
        // header 00110000, filter 3, partition 5 (24-bit/7-digit company, 20-bit/6-digit item),
        // company 0614141, indicator + item 812345, serial 6789 (38 bits).
        let hex = packBits([(0x30, 8), (3, 3), (5, 3), (614_141, 24), (812_345, 20), (6789, 38)])
        #expect(hex == "3074257BF7194E4000001A85")
    }

    @Test func sscc96ExampleBuiltBitByBit() throws {
        // SSCC (00) 1 0614141 234567890 8 of the TDS: company prefix 0614141, extension digit
        // 1 + serial reference 234567890 = 1234567890. header 00110001, filter 3, partition 5
        // (24-bit/7-digit company, 34-bit/10-digit serial reference), 24 reserved zero bits.
        let hex = packBits([(0x31, 8), (3, 3), (5, 3), (614_141, 24), (1_234_567_890, 34), (0, 24)])
        #expect(hex == "3174257BF4499602D2000000")
        let epc = try UgiEpc(hex: hex)
        #expect(epc.toTagURI() == "urn:epc:tag:sscc-96:3.0614141.1234567890")
        #expect(epc.toPureIdentityURI() == "urn:epc:id:sscc:0614141.1234567890")
    }

    @Test(arguments: [
        // TDS table 14-5: partition, company bits, company, serial reference bits, serial
        // reference (extension digit first, odd so its last bit is 1), expected text. Company
        // and serial reference share 58 bits in every partition.
        (0, 40, UInt64(123_456_789_012), 18, UInt64(12_345), "123456789012.12345"),
        (1, 37, 12_345_678_901, 21, 123_457, "12345678901.123457"),
        (2, 34, 1_234_567_890, 24, 1_234_567, "1234567890.1234567"),
        (3, 30, 123_456_789, 28, 12_345_679, "123456789.12345679"),
        (4, 27, 12_345_678, 31, 123_456_789, "12345678.123456789"),
        (5, 24, 614_141, 34, 1_234_567_890, "0614141.1234567890"),
        (6, 20, 123, 38, 12_345_678_901, "000123.12345678901"),
        (0, 40, 1, 18, 7, "000000000001.00007"),
    ])
    func sscc96EveryPartitionDecodesTheWholeSerialReference(
        partition: Int, companyBits: Int, company: UInt64, serialBits: Int, serial: UInt64, expected: String
    ) throws {
        #expect(companyBits + serialBits == 58)
        let hex = packBits([(0x31, 8), (2, 3), (UInt64(partition), 3), (company, companyBits), (serial, serialBits), (0, 24)])
        let epc = try UgiEpc(hex: hex)
        #expect(epc.toTagURI() == "urn:epc:tag:sscc-96:2.\(expected)")
        #expect(epc.toPureIdentityURI() == "urn:epc:id:sscc:\(expected)")
    }

    @Test(arguments: [
        // partition, company bits, company, item bits, item, expected company.item text
        (0, 40, UInt64(123_456_789_012), 4, UInt64(5), "123456789012.5"),
        (1, 37, 12_345_678_901, 7, 7, "12345678901.07"),
        (2, 34, 1_234_567_890, 10, 12, "1234567890.012"),
        (3, 30, 123_456_789, 14, 1234, "123456789.1234"),
        (4, 27, 12_345_678, 17, 3, "12345678.00003"),
        (5, 24, 614_141, 20, 812_345, "0614141.812345"),
        (6, 20, 123, 24, 1_234_567, "000123.1234567"),
    ])
    func sgtin96EveryPartitionPadsToItsDigits(
        partition: Int, companyBits: Int, company: UInt64, itemBits: Int, item: UInt64, expected: String
    ) throws {
        let hex = packBits([(0x30, 8), (1, 3), (UInt64(partition), 3), (company, companyBits), (item, itemBits), (0, 38)])
        let epc = try UgiEpc(hex: hex)
        #expect(epc.toTagURI() == "urn:epc:tag:sgtin-96:1.\(expected).0")
        #expect(epc.toPureIdentityURI() == "urn:epc:id:sgtin:\(expected).0")
    }

    @Test func sgtin96LargestSerial() throws {
        let hex = packBits([(0x30, 8), (0, 3), (5, 3), (614_141, 24), (812_345, 20), ((1 << 38) - 1, 38)])
        #expect(try UgiEpc(hex: hex).toTagURI() == "urn:epc:tag:sgtin-96:0.0614141.812345.274877906943")
    }

    @Test func gid96IsDecodedForUGrokItsOwnEpcs() throws {
        let epc = try UgiEpc(hex: "35fffffff99c70a063405c48")
        #expect(epc.toTagURI() == "urn:epc:tag:gid-96:268435455.10077962.1665162312")
        #expect(epc.toPureIdentityURI() == "urn:epc:id:gid:268435455.10077962.1665162312")
    }

    @Test(arguments: [
        // Partition 7 is reserved.
        packBits([(0x30, 8), (3, 3), (7, 3), (614_141, 24), (812_345, 20), (6789, 38)]),
        // A 7-digit company prefix field holding 8 digits (16777215).
        packBits([(0x30, 8), (3, 3), (5, 3), ((1 << 24) - 1, 24), (812_345, 20), (6789, 38)]),
        // A 6-digit item reference field holding 7 digits (1048575).
        packBits([(0x30, 8), (3, 3), (5, 3), (614_141, 24), ((1 << 20) - 1, 20), (6789, 38)]),
        // SSCC-96 partition 7, and SSCC-96 with non-zero reserved bits.
        packBits([(0x31, 8), (3, 3), (7, 3), (614_141, 24), (1_234_567_890, 34), (0, 24)]),
        packBits([(0x31, 8), (3, 3), (5, 3), (614_141, 24), (1_234_567_890, 34), (1, 24)]),
        // SSCC-96 serial reference with 11 digits in a 10-digit field.
        packBits([(0x31, 8), (3, 3), (5, 3), (614_141, 24), (12_345_678_901, 34), (0, 24)]),
        // Headers this decoder does not know, and a factory TID-shaped EPC.
        "35742578", "E28011602000123456789ABC", "00000000000000000000000000", "AD1234567890ABCDEF123456",
    ])
    func anythingElseIsTheRawUri(hex: String) throws {
        let epc = try UgiEpc(hex: hex)
        #expect(epc.toTagURI() == "urn:epc:raw:\(hex.count * 4).x\(hex)")
        #expect(epc.toPureIdentityURI() == nil)
    }

    @Test func knownHeadersOfTheWrongLengthAreRaw() throws {
        let sgtin128 = try UgiEpc(hex: "3074257BF7194E4000001A8500000000")
        #expect(sgtin128.toTagURI() == "urn:epc:raw:128.x3074257BF7194E4000001A8500000000")
        let short = try UgiEpc(hex: "30742578")
        #expect(short.toTagURI() == "urn:epc:raw:32.x30742578")
    }

    // MARK: Unprogrammed tags

    @Test(arguments: [
        ("E28011602000123456789ABC", "Impinj"),  // Monza R6 TID: MDID 1 with XTID.
        ("E2801105200074F2A1B2C3D4", "Impinj"),  // Monza 4.
        ("E2806894200050012345ABCD", "NXP Semiconductors"),  // UCODE 8: MDID 6 with XTID.
        ("E2006810000000001234ABCD", "NXP Semiconductors"),  // Without XTID.
        ("E2003412012345678901ABCD", "Alien Technology"),  // Higgs-3: MDID 3.
        ("E200B1400000000012345678", "EM Microelectronic"),  // MDID 0x00B.
        ("E2C03412", "Alien Technology"),  // Security and file bits set: still MDID 3.
    ])
    func tidShapedEpcsAreUnprogrammedAndNameTheirMaker(hex: String, maker: String) throws {
        let epc = try UgiEpc(hex: hex)
        #expect(epc.isUnprogrammed)
        #expect(epc.manufacturerName == maker)
    }

    @Test func allZeroEpcsAreUnprogrammedWithoutAMaker() throws {
        for count in [4, 12, 16] {
            let epc = try UgiEpc(bytes: [UInt8](repeating: 0, count: count))
            #expect(epc.isUnprogrammed)
            #expect(epc.manufacturerName == nil)
        }
    }

    @Test(arguments: [
        "3074257BF7194E4000001A85",  // SGTIN-96.
        "35FFFFFFF99C70A063405C48",  // U Grok It GID-96.
        "E21FF0000000000000000000",  // E2 but MDID 0x1FF, assigned to no one.
        "E2024000",  // MDID 0x024, past the list.
        "000000000000000000000001",  // Not all zero.
        "E3801160200012345678ABCD",  // Not the E2 class.
    ])
    func programmedEpcsAreNot(hex: String) throws {
        let epc = try UgiEpc(hex: hex)
        #expect(!epc.isUnprogrammed)
        #expect(epc.manufacturerName == nil)
    }

    @Test func theMakerTableFollowsGS1sMdidList() {
        #expect(UgiEpc.maskDesigners[1] == "Impinj")
        #expect(UgiEpc.maskDesigners[3] == "Alien Technology")
        #expect(UgiEpc.maskDesigners[6] == "NXP Semiconductors")
        #expect(UgiEpc.maskDesigners[11] == "EM Microelectronic")
        #expect(UgiEpc.maskDesigners.keys.allSatisfy { (1...0x1FF).contains($0) })
        #expect(Set(UgiEpc.maskDesigners.values).count == UgiEpc.maskDesigners.count)
    }

    // MARK: New U Grok It EPCs

    @Test func newUGrokItEpcTakesSixtyBitsFromTheGenerator() {
        var counting = FixedGenerator(word: 0x0123_4567_89AB_CDEF)
        #expect(UgiEpc.newUGrokItEpc(using: &counting).description == "35FFFFFFF123456789ABCDEF")
        var ones = FixedGenerator(word: .max)
        #expect(UgiEpc.newUGrokItEpc(using: &ones).description == "35FFFFFFFFFFFFFFFFFFFFFF")
        var topNibbleOnly = FixedGenerator(word: 0xF000_0000_0000_0000)
        #expect(UgiEpc.newUGrokItEpc(using: &topNibbleOnly).description == "35FFFFFFF000000000000000")
    }

    @Test func newUGrokItEpcsAreGid96WithTheUGrokItManagerAndRepeatPerSeed() {
        var a = SplitMix64(seed: 42)
        var b = SplitMix64(seed: 42)
        var c = SplitMix64(seed: 43)
        let first = (0..<50).map { _ in UgiEpc.newUGrokItEpc(using: &a) }
        let again = (0..<50).map { _ in UgiEpc.newUGrokItEpc(using: &b) }
        let other = (0..<50).map { _ in UgiEpc.newUGrokItEpc(using: &c) }
        #expect(first == again)
        #expect(first != other)
        #expect(Set(first).count == 50)
        for epc in first + other {
            #expect(epc.length == UgiEpc.standardByteCount)
            #expect(epc.description.hasPrefix("35FFFFFFF"))
            #expect(epc.isUGrokItEpc)
            #expect(!epc.isUnprogrammed)
            #expect(epc.toTagURI().hasPrefix("urn:epc:tag:gid-96:268435455."))
        }
        var system = SystemRandomNumberGenerator()
        #expect(UgiEpc.newUGrokItEpc(using: &system).isUGrokItEpc)
    }

    @Test func otherEpcsAreNotUGrokItEpcs() throws {
        #expect(try !UgiEpc(hex: "3074257BF7194E4000001A85").isUGrokItEpc)
        #expect(try !UgiEpc(hex: "35FFFFFFE99C70A063405C48").isUGrokItEpc)  // Manager 0xFFFFFFE.
        #expect(try !UgiEpc(hex: "35FFFFFFF99C70A063405C4800").isUGrokItEpc)  // 13 bytes.
    }
}

@Suite("UgiTagReadState")
struct TagReadStateTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func readHistoryStringIsNewestFirstSpaceSeparated() {
        let state = UgiTagReadState(
            timestamp: start, totalReads: 15, mostRecentRead: start, readHistory: [3, 0, 0, 12])
        #expect(state.readHistoryString == "3 0 0 12")
        #expect(state.readsInHistory == 15)
        #expect(state.readHistory.first == 3)
        let empty = UgiTagReadState(timestamp: start, totalReads: 0, mostRecentRead: start, readHistory: [])
        #expect(empty.readHistoryString == "")
    }

    @Test func visibleWhileFoundWithinTheWindowUnlessToldOtherwise() {
        let seen = UgiTagReadState(timestamp: start, totalReads: 1, mostRecentRead: start, readHistory: [0, 1, 0])
        let gone = UgiTagReadState(timestamp: start, totalReads: 9, mostRecentRead: start, readHistory: [0, 0, 0])
        let told = UgiTagReadState(timestamp: start, isVisible: false, totalReads: 1, mostRecentRead: start, readHistory: [1])
        #expect(seen.isVisible)
        #expect(!gone.isVisible)
        #expect(!told.isVisible)
        #expect(gone.description == "9 reads, not visible, history [0 0 0]")
    }

    @Test func rssiIsTheStrongerChannelAndNilWhenNoneWasSent() {
        let equal = UgiTagReadState(
            timestamp: start, totalReads: 1, mostRecentRead: start, mostRecentRssiI: -60, mostRecentRssiQ: -60, readHistory: [1])
        #expect(equal.mostRecentRssi == -60)
        let dominated = UgiTagReadState(
            timestamp: start, totalReads: 1, mostRecentRead: start, mostRecentRssiI: -90, mostRecentRssiQ: -40, readHistory: [1])
        #expect(dominated.mostRecentRssi == -40)
        let none = UgiTagReadState(timestamp: start, totalReads: 1, mostRecentRead: start, readHistory: [1])
        #expect(none.mostRecentRssi == nil)
    }

    @Test func snapshotsRoundTripThroughJSON() throws {
        let state = UgiTagReadState(
            timestamp: start, totalReads: 42, mostRecentRead: start.addingTimeInterval(1.5),
            mostRecentRssiI: -61.5, mostRecentRssiQ: -63.25, readHistory: [2, 0, 5])
        let decoded = try JSONDecoder().decode(UgiTagReadState.self, from: JSONEncoder().encode(state))
        #expect(decoded == state)
    }
}
