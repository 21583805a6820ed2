import Foundation
import GrokBasics
import GrokFirmware
import Testing

@Suite("Intel HEX")
struct IntelHexTests {
    /// A classic example file: two data lines at 0x0100, an extended linear address, a start
    /// address and the end record.
    static let sample = """
        :10010000214601360121470136007EFE09D2190140
        :100110002146017E17C20001FF5F16002148011928
        :020000040800F2
        :04000000DEADBEEFC4
        :0400000508000131BD
        :00000001FF

        """

    @Test("Data, extended linear address and start address records parse into segments")
    func parsesSample() throws {
        let hex = try IntelHex.parse(Self.sample, file: "sample.hex")
        #expect(hex.segments.count == 2)
        #expect(hex.segments[0].address == 0x0100)
        #expect(hex.segments[0].bytes.count == 32)
        #expect(Array(hex.segments[0].bytes.prefix(4)) == [0x21, 0x46, 0x01, 0x36])
        #expect(hex.segments[1] == MemorySegment(address: 0x0800_0000, bytes: [0xDE, 0xAD, 0xBE, 0xEF]))
        #expect(hex.startAddress == 0x0800_0131)
    }

    @Test("Extended segment addresses (type 02) multiply by 16; start segment (03) is read")
    func segmentAddressing() throws {
        let text = ":020000021000EC\n:0300100001020 3E7\n:0400000300120034B3\n:00000001FF\n".replacingOccurrences(of: " ", with: "")
        let hex = try IntelHex.parse(text)
        #expect(hex.segments == [MemorySegment(address: 0x10010, bytes: [1, 2, 3])])
        #expect(hex.startAddress == 0x0154)  // CS 0x0012 × 16 + IP 0x0034
    }

    @Test("Out-of-order records are sorted and adjacent ones merged; CR LF endings accepted")
    func outOfOrder() throws {
        let text = ":020002000304F5\r\n:020000000102FB\r\n:00000001FF\r\n".replacingOccurrences(of: " ", with: "")
        let hex = try IntelHex.parse(text)
        #expect(hex.segments == [MemorySegment(address: 0, bytes: [1, 2, 3, 4])])
    }

    @Test("Writer round trip across 64 KiB boundaries and several segments")
    func roundTrip() throws {
        let image = try IntelHex(segments: [
            MemorySegment(address: 0x0800_FFF0, bytes: pattern(300, seed: 7)),
            MemorySegment(address: 0x0000_0010, bytes: pattern(5, seed: 8)),
            MemorySegment(address: 0x2000_0000, bytes: pattern(40, seed: 9)),
        ], startAddress: 0x0800_0101)
        for length in [1, 16, 32, 255] {
            let text = image.encoded(recordLength: length)
            #expect(try IntelHex.parse(text) == image)
        }
        #expect(image.encoded().contains(":020000040801F1\n"))
        #expect(throws: FirmwareError.self) {
            try IntelHex(segments: [MemorySegment(address: 0, bytes: [1, 2]), MemorySegment(address: 1, bytes: [3])])
        }
    }

    @Test("Each defect is refused with the line number and what is wrong",
          arguments: [
            (":020000000102FC\n:00000001FF\n", FirmwareError.hexChecksum(file: "t.hex", line: 1, expected: 0xFB, found: 0xFC)),
            ("\n:020000000102FB\n020000000102FB\n:00000001FF\n", .hexRecord(file: "t.hex", line: 3, detail: ErrorDetail("no_colon"))),
            (":020000000102FB\n:0300000001FB\n:00000001FF\n", .hexRecord(file: "t.hex", line: 2, detail: ErrorDetail("byte_count_mismatch", ["3", "1"]))),
            (":02000000010ZFB\n:00000001FF\n", .hexRecord(file: "t.hex", line: 1, detail: ErrorDetail("not_hex_byte", ["0Z"]))),
            (":020000000102F\n:00000001FF\n", .hexRecord(file: "t.hex", line: 1, detail: ErrorDetail("odd_hex_digits"))),
            (":00000006FA\n:00000001FF\n", .hexRecord(file: "t.hex", line: 1, detail: ErrorDetail("unknown_record_type", ["0x06"]))),
            (":020000000102FB\n", .hexMissingEnd(file: "t.hex")),
            (":00000001FF\n:020000000102FB\n", .hexRecord(file: "t.hex", line: 2, detail: ErrorDetail("data_after_end"))),
            (":020000000102FB\n:0100010009F5\n:00000001FF\n", .hexOverlap(file: "t.hex", line: 2, otherLine: 1, address: 1)),
            (":0100010009F5\n:020000000102FB\n:00000001FF\n", .hexOverlap(file: "t.hex", line: 2, otherLine: 1, address: 1)),
            (":03000004000100F8\n:00000001FF\n", .hexRecord(file: "t.hex", line: 1, detail: ErrorDetail("bad_extended_linear_record"))),
            (":020000040800F2\n:02000004\n", .hexRecord(file: "t.hex", line: 2, detail: ErrorDetail("record_too_short"))),
            (":020000FFFFFF00\n:01FFFF0000\n:00000001FF\n".replacingOccurrences(of: ":020000FFFFFF00", with: ":02000004FFFFFC").replacingOccurrences(of: ":01FFFF0000", with: ":02FFFF000102FD"),
             .hexRecord(file: "t.hex", line: 2, detail: ErrorDetail("past_4gib"))),
          ])
    func defects(text: String, expected: FirmwareError) {
        #expect(throws: expected) { try IntelHex.parse(text, file: "t.hex") }
    }

    @Test("A file holding more data than the limit is refused")
    func limit() throws {
        let image = try IntelHex(segments: [MemorySegment(address: 0, bytes: pattern(100, seed: 3))])
        #expect(throws: FirmwareError.hexTooLarge(file: "<hex>", limit: 64)) { try IntelHex.parse(image.encoded(), limit: 64) }
        #expect(try IntelHex.parse(image.encoded(), limit: 100) == image)
    }

    @Test("Flattening fills gaps with 0xFF")
    func flatten() throws {
        let image = try IntelHex(segments: [MemorySegment(address: 0x10, bytes: [1]), MemorySegment(address: 0x13, bytes: [2])])
        #expect(image.flattened() == MemorySegment(address: 0x10, bytes: [1, 0xFF, 0xFF, 2]))
        #expect(image.flattened(limit: 3) == nil)
    }
}
