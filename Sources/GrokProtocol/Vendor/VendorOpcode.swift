/// The command numbers the vendor host library sends (the low 6 bits of a request's first
/// byte). Facts from `libugrokitapi.so` (SDK 1.7.16, x86_64): each `Command*` function loads its
/// number into `%edi` before calling `PacketProtocolSendPacket` (offsets in docs/vendor-protocol.md, section 5).
public enum VendorOpcode: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// `CommandGetProtocolVersion`; the first packet of every connection.
    case getVersion = 0x00
    /// `CommandProgramReader`: erase at an address, then write chunks (firmware update).
    case programReader = 0x01
    /// `CommandChangeSoftwareType`: verify the programmed image and jump to loader/application.
    case changeSoftwareType = 0x02
    /// `CommandGetBatteryLevel`.
    case getBatteryLevel = 0x03
    /// `CommandProvision*`: sub-ops 00-04.
    case provisioning = 0x04
    /// `CommandEchoMaster` (thread 0x11f80): no payload; the reader then drives an echo test in
    /// slave mode (``VendorEchoMasterPacket``).
    case echoMaster = 0x05
    /// `CommandGetDiagnosticData`.
    case getDiagnostics = 0x06
    /// `CommandInventory`: the inventory-start struct; the reader then sends slave-mode packets.
    case inventory = 0x07
    /// `CommandPauseConnection`: the reader goes quiet for a while.
    case pauseConnection = 0x08
    /// `CommandPlaySound`.
    case playSound = 0x09
    /// `CommandGetConfigurationUsingCache`.
    case getConfiguration = 0x0a
    /// `CommandSetConfigurationAndCache`.
    case setConfiguration = 0x0b
    /// `CommandEcho` (AutoConfig's link test).
    case echo = 0x0c
    /// The antenna-tuning run started by `CommandTuneAntenna` (reader reports progress in slave mode).
    case tuneAntenna = 0x0d
    /// `CommandGetDetailedAntennaTuning`.
    case getDetailedAntennaTuning = 0x0e
    /// `CommandSpeakerTest`.
    case speakerTest = 0x0f
    /// `CommandGetAntennaTuning`.
    case getAntennaTuning = 0x10
    /// `CommandSetRegion`.
    case setRegion = 0x11
    /// The continuous-transmit test started by `CommandContinuousTest`.
    case continuousTest = 0x12
    /// `CommandSetTestFlags` (2-byte payload) and `CommandGetTestFlags` (empty payload).
    case testFlags = 0x13
    /// `CommandScanAllFrequencies`.
    case scanAllFrequencies = 0x14
    /// `CommandGetTemperature`.
    case getTemperature = 0x15
    /// `CommandScanWide`.
    case scanWide = 0x16

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return "\(self.name) (0x\(hex.count == 1 ? "0" + hex : hex))"
    }

    private var name: String {
        switch self {
        case .getVersion: "GetVersion"
        case .programReader: "ProgramReader"
        case .changeSoftwareType: "ChangeSoftwareType"
        case .getBatteryLevel: "GetBatteryLevel"
        case .provisioning: "Provisioning"
        case .echoMaster: "EchoMaster"
        case .getDiagnostics: "GetDiagnostics"
        case .inventory: "Inventory"
        case .pauseConnection: "PauseConnection"
        case .playSound: "PlaySound"
        case .getConfiguration: "GetConfiguration"
        case .setConfiguration: "SetConfiguration"
        case .echo: "Echo"
        case .tuneAntenna: "TuneAntenna"
        case .getDetailedAntennaTuning: "GetDetailedAntennaTuning"
        case .speakerTest: "SpeakerTest"
        case .getAntennaTuning: "GetAntennaTuning"
        case .setRegion: "SetRegion"
        case .continuousTest: "ContinuousTest"
        case .testFlags: "TestFlags"
        case .scanAllFrequencies: "ScanAllFrequencies"
        case .getTemperature: "GetTemperature"
        case .scanWide: "ScanWide"
        }
    }
}

/// The command numbers a reader sends to the host in slave mode (during an inventory). Facts
/// from the library's slave-mode handler (x86_64 offset 0x12c00): it switches on these and
/// answers anything else with ACK_7.
public enum VendorReaderOpcode: UInt8, Sendable, CaseIterable {
    /// The inventory ended: `[result][u16 LE]`; ends slave mode.
    case completed = 0x00
    /// Tags read for the first time, each with its own EPC length.
    case firstRead = 0x01
    /// As ``firstRead`` with every EPC exactly 12 bytes and no length byte.
    case firstRead96 = 0x02
    /// Tags read again: `[rounds]` then `[id][numFinds]([rssi])` each.
    case subsequentRead = 0x03
    /// Keep-alive with the round count: `[rounds]`.
    case ping = 0x05
    /// The result of a tag access the host asked for: `[result][epcLen][EPC][data]`.
    case tagAccessResult = 0x06
}

/// The small encodings the vendor protocol uses for physical quantities.
public enum VendorUnits {
    /// The lowest power a one-byte power field carries (byte 0).
    public static let powerOffsetDBm = 5.0

    /// A power in dBm on the wire: `(dBm - 5) * 10`, truncated toward zero as the library does
    /// (`cvttsd2si` in `CommandInventory`, offset 0x14ae0).
    public static func powerByte(dBm: Double, field: String) throws(VendorCommandError) -> UInt8 {
        let tenths = (dBm - powerOffsetDBm) * 10
        guard tenths.isFinite, tenths >= 0, tenths < 256 else {
            throw .outOfRange(field: field, value: String(dBm), allowed: "5...30.5 dBm")
        }
        return UInt8(tenths.rounded(.towardZero))
    }

    /// The power a power byte stands for, in dBm.
    public static func dBm(powerByte: UInt8) -> Double {
        Double(powerByte) / 10 + powerOffsetDBm
    }

    /// A version number in the vendor's two-byte form: `[high + 6][low]` (protocol 20 is `06 14`).
    public static func versionBytes(_ version: Int, field: String) throws(VendorCommandError) -> [UInt8] {
        try checkRange(field, version, 0...(249 * 256 + 255))
        return [UInt8(version / 256 + 6), UInt8(version % 256)]
    }

    /// The version two bytes stand for: `(b0 - 6) * 256 + b1`; a first byte below 6 is refused.
    public static func version(_ b0: UInt8, _ b1: UInt8, field: String) throws(VendorCommandError) -> Int {
        guard b0 >= 6 else { throw .outOfRange(field: field, value: String(b0), allowed: "first byte 6...255") }
        return (Int(b0) - 6) * 256 + Int(b1)
    }

    /// The volume level the library sends for `volume` (0...1) on a reader with `levels`
    /// volume levels: `trunc(levels * volume + 0.5)` (`CommandInventory` 0x14d58,
    /// `CommandSpeakerTest` 0x15e5a).
    public static func volumeLevel(volume: Double, levels: UInt8) throws(VendorCommandError) -> UInt8 {
        guard volume.isFinite, volume >= 0, volume <= 1 else {
            throw .outOfRange(field: "volume", value: String(volume), allowed: "0...1")
        }
        return UInt8((Double(levels) * volume + 0.5).rounded(.towardZero))
    }
}
