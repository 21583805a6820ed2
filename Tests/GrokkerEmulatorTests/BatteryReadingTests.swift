import GrokProtocol
import Testing

@testable import GrokkerEmulator

@Suite("The emulated unit's battery reading")
struct BatteryReadingTests {
    /// Hosts read the percent byte on revision 4 and later, and the raw reading through the
    /// vendor's curve on revision 3 and lower: both must see the unit's charge, to the
    /// curve's own resolution (where two points differ by one reading, as 818 and 819 of
    /// revision 3, the percents between them cannot be read: the nearest is 2 % away).
    @Test("the host's curve gives back the unit's percent from the raw reading, on every revision", arguments: [1, 2, 3, 4, 5, 6] as [UInt8])
    func curveGivesBackThePercent(revision: UInt8) {
        for percent in 0...100 {
            let raw = EmulatedGrokker.rawBatteryReading(percent: percent, hardwareRevision: revision)
            let seen = VendorBatteryCurves.percent(raw: raw, charging: false, hardwareRevision: revision).percent
            #expect(abs(seen - percent) <= 2, "revision \(revision), \(percent) %: raw \(raw) reads as \(seen) %")
        }
        #expect(!VendorBatteryCurves.percent(raw: EmulatedGrokker.rawBatteryReading(percent: 0, hardwareRevision: revision),
                                             charging: false, hardwareRevision: revision).canScan)
    }

    @Test("a revision-3 unit at 10 % reads as 10 % to the vendor's host rules")
    func revisionThreeAtTenPercent() throws {
        let level = VendorBatteryLevel(raw: UInt16(EmulatedGrokker.rawBatteryReading(percent: 10, hardwareRevision: 3)),
                                       voltageCode: 0, flags: [.canScan], percent: 10)
        let info = level.info(readerProtocol: 20, hardwareRevision: 3, capacityMinutes: 100)
        #expect(info.percentRemaining == 10)
    }
}
