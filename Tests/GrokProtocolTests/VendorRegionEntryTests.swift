import GrokAudio
import GrokBasics
import GrokProtocol
import Testing

@Suite("Vendor region entry")
struct VendorRegionEntryTests {
    static func bytes(_ row: VendorRegionTableRow) -> [UInt8] {
        var out: [UInt8] = []
        var chars = Array(row.hex.utf8)[...]
        while chars.count >= 2 {
            let pair = String(decoding: chars.prefix(2), as: UTF8.self)
            out.append(UInt8(pair, radix: 16)!)
            chars = chars.dropFirst(2)
        }
        return out
    }

    static let table: [(name: String, bytes: [UInt8], crc: UInt32)] = vendorRegionTable.map { ($0.name, bytes($0), $0.crc) }

    @Test("the vendor's 22 entries decode and encode back to the same 120 bytes")
    func roundTripsTheVendorTable() throws {
        #expect(Self.table.count == 22)
        for (index, row) in Self.table.enumerated() {
            #expect(row.bytes.count == 120)
            let entry = try VendorRegionEntry(bytes: row.bytes)
            #expect(entry.index == UInt8(index))
            #expect(entry.encode() == row.bytes, "\(row.name)")
        }
    }

    @Test("the vendor's table names and orders the same 22 regions as RegionCatalog, spelled the same")
    func catalogueFollowsTheVendorsOrderAndNames() throws {
        #expect(RegionCatalog.all.map(\.name) == Self.table.map(\.name))
        for (index, region) in RegionCatalog.all.enumerated() {
            #expect(region.vendorIndex == UInt8(index) && region.number == UInt16(index + 1))
            #expect(RegionCatalog.named(vendorIndex: UInt8(index)) == region)
            #expect(RegionCatalog.find(region.name) == region)
        }
        #expect(RegionCatalog.named(vendorIndex: 22) == nil)
        // The name this build used before it followed the vendor's spelling still finds FCC.
        #expect(RegionCatalog.find("FCC (US) / IC (Canada)")?.code == "fcc")
        #expect(RegionCatalog.find(RegionSetting(name: "FCC (US) / IC (Canada)", number: 1))?.code == "fcc")
        #expect(RegionCatalog.find(RegionSetting(name: "FCC (US) / IC (Canada)", number: 2)) == nil)
    }

    @Test("each field of the vendor's FCC, ETSI, Japan and Latvia entries reads as documented")
    func fieldsOfKnownEntries() throws {
        let fcc = try VendorRegionEntry(bytes: Self.table[0].bytes)
        #expect(fcc.revision == 0 && fcc.band == .band900 && fcc.channelsKHz.count == 50)
        #expect(fcc.channelsKHz.sorted() == (0..<50).map { 902_750 + 500 * $0 })
        #expect(fcc.channelsKHz.prefix(3) == [905_750, 908_250, 914_250], "hop order, not ascending")
        #expect(fcc.maxMillisecondsPerChannel == 400 && fcc.minMillisecondsPerRound == 0)
        #expect(!fcc.listenBeforeTalkByDefault && fcc.listenBeforeTalkOverrideAllowed)
        #expect(fcc.listenMilliseconds == 5 && fcc.listenThresholdDBm == -80)
        #expect(fcc.maxPowerCode == 250 && fcc.maxPowerDBm == 30 && fcc.padding == 0)
        let etsi = try VendorRegionEntry(bytes: Self.table[1].bytes)
        #expect(etsi.band == .band860 && etsi.channelsKHz == [865_700, 866_300, 866_900, 867_500])
        #expect(etsi.minMillisecondsPerRound == 25)
        let japan = try VendorRegionEntry(bytes: Self.table[5].bytes)
        #expect(japan.channelsKHz.count == 19 && japan.maxPowerDBm == 22)
        #expect(japan.channelsKHz.sorted() == RegionCatalog.entries[5].channelsKHz, "our licence-free Japan keeps the vendor's 19 channels")
        let latvia = try VendorRegionEntry(bytes: Self.table[13].bytes)
        #expect(latvia.listenBeforeTalkByDefault && !latvia.listenBeforeTalkOverrideAllowed)
        // Which entries are for the 860 MHz hardware: ETSI (EU), Latvia, India.
        let band860 = try Self.table.filter { try VendorRegionEntry(bytes: $0.bytes).band == .band860 }.map(\.name)
        #expect(band860 == ["ETSI (EU)", "Latvia", "India"])
        // Byte 119 is 0 everywhere and bytes 104-111 too.
        #expect(Self.table.allSatisfy { $0.bytes[119] == 0 && $0.bytes[104..<112].allSatisfy { $0 == 0 } })
    }

    @Test("the SetRegion payload is the library's own CRC-32 of the first 119 bytes, little-endian, then those bytes")
    func setRegionPayloadCarriesTheLibrarysCRC() throws {
        for row in Self.table {
            let entry = try VendorRegionEntry(bytes: row.bytes)
            let payload = entry.setRegionPayload()
            #expect(payload.count == 123)
            #expect(payload[0..<4] == [UInt8(row.crc & 0xFF), UInt8(row.crc >> 8 & 0xFF), UInt8(row.crc >> 16 & 0xFF), UInt8(row.crc >> 24)][...],
                    "\(row.name)")
            #expect(Array(payload[4...]) == Array(row.bytes.prefix(119)))
            #expect(try VendorRegionEntry(setRegionPayload: payload) == entry)
        }
    }

    @Test("a SetRegion payload with a wrong CRC, a missing byte or an extra byte is refused, never trapped on")
    func badPayloadsAreRefused() throws {
        let good = try VendorRegionEntry(bytes: Self.table[0].bytes).setRegionPayload()
        var flipped = good
        flipped[50] ^= 0x01
        #expect(throws: ProtocolError.self) { try VendorRegionEntry(setRegionPayload: flipped) }
        do {
            _ = try VendorRegionEntry(setRegionPayload: flipped)
        } catch {
            #expect(error.code == "protocol_invalid_value" && error.arguments.first == "set_region.crc32")
        }
        #expect(throws: ProtocolError.truncated(field: "set_region", needed: 123, available: 122)) {
            try VendorRegionEntry(setRegionPayload: good.dropLast())
        }
        #expect(throws: ProtocolError.trailingBytes(count: 1)) { try VendorRegionEntry(setRegionPayload: good + [0]) }
        #expect(throws: ProtocolError.self) { try VendorRegionEntry(bytes: [UInt8](repeating: 0, count: 118)) }
        #expect(throws: ProtocolError.trailingBytes(count: 1)) { try VendorRegionEntry(bytes: [UInt8](repeating: 0, count: 121)) }
        var tooMany = Self.table[0].bytes
        tooMany[3] = 51
        #expect(throws: ProtocolError.invalidValue(field: "region_entry.channel_count", value: 51)) {
            try VendorRegionEntry(bytes: tooMany)
        }
    }

    @Test("any bytes at all decode or throw; whatever decodes encodes to bytes that decode to the same entry")
    func arbitraryBytesNeverTrap() {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<2000 {
            let count = Int(rng.next() % 130)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            guard let entry = try? VendorRegionEntry(bytes: bytes) else { continue }
            #expect((try? VendorRegionEntry(bytes: entry.encode())) == entry)
            #expect((try? VendorRegionEntry(setRegionPayload: entry.setRegionPayload()))?.encode().prefix(119) == entry.encode().prefix(119))
        }
    }

    @Test("every region of our catalogue goes on the wire and comes back with the same channels, times, listening and power")
    func ourEntriesRoundTrip() throws {
        for entry in RegionCatalog.entries {
            let vendor = try VendorRegionEntry(entry)
            #expect(vendor.index == UInt8(entry.number - 1))
            #expect(Int(vendor.revision) == entry.revision)
            #expect(vendor.band == entry.hardwareBand)
            #expect(vendor.channelsKHz.sorted() == entry.channelsKHz)
            #expect(vendor.maxPowerDBm <= min(30, entry.maxEIRPDBm) + 1e-9 && vendor.maxPowerDBm > min(30, entry.maxEIRPDBm) - 0.1 - 1e-9,
                    "\(entry.code): \(vendor.maxPowerDBm)")
            let back = try #require(RegionEntry(vendor: try VendorRegionEntry(bytes: vendor.encode())))
            #expect(back.number == entry.number && back.name == entry.name && back.code == entry.code)
            #expect(back.channelsKHz == entry.channelsKHz && back.revision == entry.revision)
            #expect(back.maxDwellMilliseconds == entry.maxDwellMilliseconds && back.minRoundMilliseconds == entry.minRoundMilliseconds)
            #expect(back.listenBeforeTalk == entry.listenBeforeTalk)
            #expect(throws: Never.self) { try back.validate() }
        }
    }

    @Test("the vendor's own entries become valid RegionEntry values of the same region")
    func vendorEntriesBecomeOurs() throws {
        for (index, row) in Self.table.enumerated() {
            let entry = try #require(RegionEntry(vendor: try VendorRegionEntry(bytes: row.bytes)))
            #expect(entry.number == UInt16(index + 1) && entry.name == row.name && entry.revision == 0)
            #expect(entry.maxEIRPDBm <= 30)
            #expect(throws: Never.self) { try entry.validate() }
        }
        var unknown = try VendorRegionEntry(bytes: Self.table[0].bytes)
        unknown.index = 22
        #expect(RegionEntry(vendor: unknown) == nil)
    }

    @Test("the hop order scrambles every list of 3 or more channels, keeps them all, and is the same every time",
          arguments: [1, 2, 3, 4, 6, 10, 16, 19, 26, 36, 50])
    func hopOrder(count: Int) {
        let channels = (0..<count).map { 900_000 + 500 * $0 }
        let order = VendorRegionEntry.hopOrder(channels.reversed())
        #expect(order.sorted() == channels)
        #expect(order == VendorRegionEntry.hopOrder(channels))
        if count >= 3 {
            #expect(order != channels, "not ascending")
            // No two neighbours in the list are neighbours on the band for 5 or more channels.
            if count >= 5 {
                #expect(zip(order, order.dropFirst()).allSatisfy { abs($0 - $1) > 500 }, "\(order)")
            }
        }
    }

    @Test("an entry the vendor layout cannot carry is refused with the field that does not fit")
    func unrepresentableEntries() {
        var offGrid = RegionCatalog.entries[1]
        offGrid.channelsKHz = [865_725]
        offGrid.bands = [FrequencyBand(lowKHz: 865_000, highKHz: 868_000)]
        var tooMany = RegionCatalog.entries[0]
        tooMany.channelsKHz = (0..<51).map { 902_500 + 500 * $0 }
        var quiet = RegionCatalog.entries[0]
        quiet.maxPowerDBm = 4
        var longListen = RegionCatalog.entries[1]
        longListen.listenBeforeTalk.listenMilliseconds = 300
        for (entry, field) in [(offGrid, "channels_khz[0]"), (tooMany, "channels_khz"), (quiet, "max_power_dbm"),
                               (longListen, "listen_before_talk.listen_ms")] {
            do {
                _ = try VendorRegionEntry(entry)
                Issue.record("accepted \(field)")
            } catch {
                #expect(error.field == field && error.code == "region_entry_invalid")
            }
        }
    }

    @Test("power codes: (dBm - 5) x 10, rounded down, never above the region or the Grokker's 30 dBm")
    func powerCodes() throws {
        #expect(VendorRegionEntry.powerCode(dBm: 30) == 250)
        #expect(VendorRegionEntry.powerCode(dBm: 27) == 220)
        #expect(VendorRegionEntry.powerCode(dBm: 12.99) == 79)
        #expect(VendorRegionEntry.powerCode(dBm: 2) == 0 && VendorRegionEntry.powerCode(dBm: .nan) == 0)
        let indonesia = try #require(RegionCatalog.find("indonesia").flatMap { RegionCatalog.entry(for: $0.setting) })
        #expect(try VendorRegionEntry(indonesia).maxPowerDBm == 26)
        #expect(try VendorRegionEntry(indonesia, antennaGainDBi: 2).maxPowerDBm == 24)
        let fcc = RegionCatalog.entries[0]
        #expect(try VendorRegionEntry(fcc).maxPowerDBm == 30)
    }
}
