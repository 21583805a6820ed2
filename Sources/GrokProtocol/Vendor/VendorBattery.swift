/// Battery flag bits (GetBatteryLevel response byte 3).
public struct VendorBatteryFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bit 0: external power is connected.
    public static let externalPower = VendorBatteryFlags(rawValue: 0x01)
    /// Bit 1: the battery is charging.
    public static let charging = VendorBatteryFlags(rawValue: 0x02)
    /// Bit 2: there is enough charge to scan.
    public static let canScan = VendorBatteryFlags(rawValue: 0x04)
}

/// GetBatteryLevel (0x03, no payload) response: `[raw LE16][(volts - 2.00) x 100][flags]` and,
/// from reader protocol 14, `[percent]` (the host asks for 5 bytes then, else 4:
/// `CommandGetBatteryLevel`, 0x14074).
public struct VendorBatteryLevel: Sendable, Hashable {
    /// The raw battery ADC reading.
    public var raw: UInt16
    /// `(volts - 2.00) * 100`.
    public var voltageCode: UInt8
    public var flags: VendorBatteryFlags
    /// Present in the 5-byte form (reader protocol >= 14).
    public var percent: UInt8?

    public init(raw: UInt16, voltageCode: UInt8, flags: VendorBatteryFlags, percent: UInt8?) {
        self.raw = raw
        self.voltageCode = voltageCode
        self.flags = flags
        self.percent = percent
    }

    /// Volts, as the library computes them (`BatteryGetInfo`, 0x16839: code / 100 + 2).
    public var volts: Double { Double(voltageCode) / 100 + 2 }

    /// The response length the host asks for from a reader of `readerProtocol`.
    public static func responseLength(readerProtocol: Int) -> Int { readerProtocol >= 14 ? 5 : 4 }

    public func encode() -> [UInt8] {
        var w = VendorWriter()
        w.u16(raw)
        w.u8(voltageCode)
        w.u8(flags.rawValue)
        if let percent { w.u8(percent) }
        return w.bytes
    }

    public init(decoding data: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(data)
        raw = try r.u16("battery.raw")
        voltageCode = try r.u8("battery.voltage")
        flags = VendorBatteryFlags(rawValue: try r.u8("battery.flags"))
        percent = r.isAtEnd ? nil : try r.u8("battery.percent")
        if let percent, percent > 100 {
            throw .outOfRange(field: "battery.percent", value: String(percent), allowed: "0...100")
        }
        try r.finish("GetBatteryLevel response")
    }

    /// What `BatteryGetInfo` makes of this answer. Below reader protocol 14, or on hardware
    /// revision 3 or lower, the percentage comes from ``VendorBatteryCurves`` and "can scan"
    /// means percent > 0; otherwise both come from the reader (percent byte, flags bit 2).
    /// Minutes are `percent * capacityMinutes / 100`, truncated.
    public func info(readerProtocol: Int, hardwareRevision: UInt8, capacityMinutes: Int) -> VendorBatteryInfo {
        let charging = flags.contains(.charging)
        let percentValue: Int
        let canScan: Bool
        if readerProtocol >= 14, hardwareRevision > 3, let percent {
            percentValue = Int(percent)
            canScan = flags.contains(.canScan)
        } else {
            let curve = VendorBatteryCurves.percent(raw: Int(raw), charging: charging, hardwareRevision: hardwareRevision)
            percentValue = curve.percent
            canScan = curve.canScan
        }
        return VendorBatteryInfo(canScan: canScan, externalPowerIsConnected: flags.contains(.externalPower),
                                 isCharging: charging, percentRemaining: percentValue,
                                 minutesRemaining: percentValue * capacityMinutes / 100, volts: volts)
    }
}

/// The vendor's `BatteryInfo`, as its host library derives it.
public struct VendorBatteryInfo: Sendable, Hashable {
    public var canScan: Bool
    public var externalPowerIsConnected: Bool
    public var isCharging: Bool
    public var percentRemaining: Int
    public var minutesRemaining: Int
    public var volts: Double
}

/// The library's raw-reading-to-percent curves (data at 0x2a300, 0x2a400, 0x2a500 of the x86_64
/// build, chosen through the pointer table at 0x29ae0 by hardware revision). Each curve has 26
/// raw readings for 0, 4, 8, ... 100 %; facts, restated here as numbers.
public enum VendorBatteryCurves {
    /// One curve: readings on battery and while charging, for 0 %, 4 %, ... 100 %.
    public struct Curve: Sendable, Hashable {
        public let discharging: [Int]
        public let charging: [Int]
    }

    /// Hardware revisions 1 and 2 (table at 0x2a500).
    public static let revision1and2 = Curve(
        discharging: [700, 756, 787, 792, 801, 805, 808, 811, 814, 817, 820, 823, 826, 828, 832, 837, 840, 846, 851,
                      856, 863, 869, 875, 882, 888, 911],
        charging: [750, 804, 833, 836, 843, 845, 846, 847, 848, 849, 850, 851, 852, 852, 854, 857, 858, 862, 865, 868,
                   873, 877, 881, 886, 890, 911])
    /// Hardware revision 3 (table at 0x2a400).
    public static let revision3 = Curve(
        discharging: [737, 786, 799, 803, 807, 812, 814, 818, 819, 822, 825, 827, 832, 836, 839, 844, 849, 854, 861,
                      867, 872, 879, 887, 893, 901, 919],
        charging: [970, 980, 998, 1002, 1006, 1010, 1014, 1018, 1021, 1021, 1022, 1022, 1023, 1023, 1023, 1023, 1023,
                   1023, 1023, 1023, 1023, 1023, 1023, 1023, 1023, 1023])
    /// Hardware revisions 4 to 6 and any other (table at 0x2a300). Its charging curve is not
    /// monotonic at the top (783, 768, 685, 642), so the library reads every charging value
    /// above 730 as 100 %.
    public static let revision4AndLater = Curve(
        discharging: [509, 543, 552, 555, 558, 561, 563, 565, 566, 568, 570, 572, 575, 578, 580, 583, 587, 590, 595,
                      599, 603, 608, 613, 617, 623, 635],
        charging: [730, 764, 766, 767, 769, 770, 770, 770, 770, 770, 771, 772, 773, 774, 775, 776, 777, 778, 779, 780,
                   781, 782, 783, 768, 685, 642])

    /// The curve the library uses for `hardwareRevision` (1-6; anything else counts as 6).
    public static func curve(hardwareRevision: UInt8) -> Curve {
        switch hardwareRevision {
        case 1, 2: revision1and2
        case 3: revision3
        default: revision4AndLater
        }
    }

    /// The library's interpolation (`BatteryGetInfo`, 0x16898): at or below the first point 0 %
    /// (cannot scan); at or above the last 100 %; else, between points i and i+1,
    /// `4i + (4 (raw - p_i) + (p_{i+1} - p_i) / 8) / (p_{i+1} - p_i)`, and can scan when > 0.
    public static func percent(raw: Int, charging: Bool, hardwareRevision: UInt8) -> (percent: Int, canScan: Bool) {
        let points = charging ? curve(hardwareRevision: hardwareRevision).charging
            : curve(hardwareRevision: hardwareRevision).discharging
        if raw <= points[0] { return (0, false) }
        if raw >= points[25] { return (100, true) }
        for i in 0..<25 where points[i + 1] > raw {
            let span = points[i + 1] - points[i]
            let value = 4 * i + (4 * (raw - points[i]) + (span >> 3)) / span
            return (value, value > 0)
        }
        return (100, true)
    }

    /// The battery constants `CommandProvisionRegister` sends per hardware revision (tables at
    /// 0x22bb0 and 0x22b90, chosen by `BatteryGetProvisioningInfo`; revision 0 or above 6 uses 6).
    public static func provisioningConstants(hardwareRevision: UInt8) -> (a: UInt8, b: UInt8) {
        let a: [UInt8] = [0, 180, 180, 199, 137, 137, 137]
        let b: [UInt8] = [0, 150, 150, 185, 128, 128, 128]
        let index = (1...6).contains(hardwareRevision) ? Int(hardwareRevision) : 6
        return (a[index], b[index])
    }
}
