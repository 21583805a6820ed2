import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol
import Testing

@Suite("Region catalogue")
struct RegionCatalogueTests {
    /// Revision 3 in 10000000...49999999: FCC and ETSI only; revision 3 in 50000000...: all;
    /// revision 2: FCC.
    static let eligibility = [
        RegionEligibility(hardwareRevisions: [3], serials: Cohort(ranges: [.init(from: 10_000_000, through: 49_999_999)]),
                          regions: ["fcc", "etsi"]),
        RegionEligibility(hardwareRevisions: [3], serials: Cohort(ranges: [.init(from: 50_000_000, through: 99_999_999)]),
                          regions: RegionCatalog.entries.map(\.code)),
        RegionEligibility(hardwareRevisions: [2], regions: ["fcc"]),
    ]

    static func catalogue(version: UInt64 = 1, expires: Date = january2026) throws -> RegionCatalogue {
        try RegionPublisher.catalogue(version: version, expires: expires, eligibility: eligibility)
    }

    @Test("published with all 22 regions; each unit gets the regions its revision and serial may choose")
    func eligibilityByRevisionAndSerial() throws {
        let catalogue = try Self.catalogue()
        #expect(catalogue.regions == RegionCatalog.entries)
        #expect(catalogue.regions(hardwareRevision: 3, serial: 12_345_678).map(\.code) == ["fcc", "etsi"])
        #expect(catalogue.regions(hardwareRevision: 3, serial: 55_555_555).count == 22)
        #expect(catalogue.regions(hardwareRevision: 2, serial: 55_555_555).map(\.code) == ["fcc"])
        #expect(catalogue.regions(hardwareRevision: 1, serial: 55_555_555).isEmpty)
        // The payload decodes to the same catalogue, byte-stable.
        let back = try RegionCatalogue.decode(catalogue.payload(), file: "p")
        #expect(back == catalogue && back.payload() == catalogue.payload())
    }

    @Test("a catalogue with an entry looser than the firmware's limits is refused, naming region, field, expected, found")
    func looserEntriesAreRefused() throws {
        var loud = RegionCatalog.entries
        loud[1].maxPowerDBm = 36  // ETSI's lower band allows 2 W ERP, not 4.
        var offBand = RegionCatalog.entries
        offBand[0].channelsKHz[49] = 928_250
        for (regions, region, field) in [(loud, "ETSI (EU)", "max_power_dbm"), (offBand, "FCC (US), IC (Canada)", "channels_khz[49]")] {
            let bad = RegionCatalogue(version: 9, expires: january2026, regions: regions, eligibility: Self.eligibility)
            #expect(throws: FirmwareError.self) { try RegionPublisher.catalogue(version: 9, expires: january2026, eligibility: Self.eligibility, regions: regions) }
            // Listed anyway (the publisher's check bypassed, TUF signs whatever it is given):
            // the station's decode still refuses it.
            do {
                _ = try RegionCatalogue.decode(bad.payload(), file: "x")
                Issue.record("accepted \(field)")
            } catch {
                guard case .regionInvalid(let file, let r, let f, let expected, let found) = error else { Issue.record("\(error)"); continue }
                #expect(file == "x" && r == region && f == field && !expected.isEmpty && !found.isEmpty)
                #expect(error.code == "firmware_region_invalid" && error.arguments.count == 5)
            }
        }
        // Eligibility naming a region the catalogue does not list.
        let unknown = [RegionEligibility(hardwareRevisions: [3], regions: ["atlantis"])]
        #expect(throws: FirmwareError.self) { try RegionPublisher.catalogue(version: 1, expires: january2026, eligibility: unknown) }
    }
}
