/// What a Grokker says about itself: the vendor SDK's reader information
/// (`readerHardwareType`, `readerSerialNumber`, `regionName`, ...), made by the host session
/// from the GetVersion answer (``VendorReaderVersion``, docs/vendor-protocol.md).
public struct ReaderInfo: Sendable, Hashable {
    /// The hardware kind (vendor `readerHardwareType`).
    public var hardwareType: HardwareType
    /// The model name (vendor `readerHardwareModel`).
    public var hardwareModel: String
    /// The board revision (vendor `readerHardwareRevision`).
    public var hardwareRevision: UInt8
    /// The application firmware's version.
    public var firmwareVersion: FirmwareVersion
    /// The loader's version (the part that flashes the application).
    public var loaderVersion: FirmwareVersion
    /// The serial number; see ``serialNumberText``.
    public var serialNumber: UInt32
    /// The reader protocol the firmware implements (vendor `readerProtocolVersion`; the
    /// vendor's is 20). Not the command protocol's ``ProtocolVersion``.
    public var readerProtocolVersion: UInt16
    /// The region set on the reader; `nil` when the region is not set (out of the box).
    public var region: RegionSetting?
    /// The reader refuses inventory until a region is set (vendor `userMustSetRegion`).
    public var userMustSetRegion: Bool
    /// The user may choose the region (vendor `userCanSetRegion`).
    public var userCanSetRegion: Bool
    /// The reader has been provisioned at the factory (serial number registered).
    public var provisioned: Bool
    /// The hardware enforces a region setting (vendor enforce-region-setting flag).
    public var enforceRegion: Bool
    /// Maximum RF power in tenths of a dBm (300 = 30.0 dBm); see ``maxPowerDBm``.
    public var maxPowerTenthsDBm: Int16
    /// Best receive sensitivity in tenths of a dBm (-800 = -80.0 dBm); see ``maxSensitivityDBm``.
    public var maxSensitivityTenthsDBm: Int16
    /// Number of speaker volume steps (vendor `numVolumeLevels`).
    public var numVolumeLevels: UInt8
    /// Most tones one sound may have (vendor `maxTonesInSound`).
    public var maxTonesInSound: UInt8
    /// The reader has a battery (vendor `hasBattery`).
    public var hasBattery: Bool
    /// The reader can run on external power (vendor `hasExternalPower`).
    public var hasExternalPower: Bool
    /// Battery capacity in minutes of scanning (vendor `batteryCapacity`).
    public var batteryCapacityMinutes: UInt16
    /// Battery capacity in mAh (vendor `batteryCapacity_mAh`).
    public var batteryCapacityMAh: UInt16
    /// The RF chip and peripherals passed their power-on checks (vendor `deviceInitializedSuccessfully`).
    public var deviceInitializedSuccessfully: Bool

    /// Creates reader information.
    public init(
        hardwareType: HardwareType, hardwareModel: String, hardwareRevision: UInt8,
        firmwareVersion: FirmwareVersion, loaderVersion: FirmwareVersion, serialNumber: UInt32,
        readerProtocolVersion: UInt16, region: RegionSetting?, userMustSetRegion: Bool,
        userCanSetRegion: Bool, provisioned: Bool, enforceRegion: Bool,
        maxPowerTenthsDBm: Int16, maxSensitivityTenthsDBm: Int16, numVolumeLevels: UInt8,
        maxTonesInSound: UInt8, hasBattery: Bool, hasExternalPower: Bool,
        batteryCapacityMinutes: UInt16, batteryCapacityMAh: UInt16, deviceInitializedSuccessfully: Bool
    ) {
        self.hardwareType = hardwareType
        self.hardwareModel = hardwareModel
        self.hardwareRevision = hardwareRevision
        self.firmwareVersion = firmwareVersion
        self.loaderVersion = loaderVersion
        self.serialNumber = serialNumber
        self.readerProtocolVersion = readerProtocolVersion
        self.region = region
        self.userMustSetRegion = userMustSetRegion
        self.userCanSetRegion = userCanSetRegion
        self.provisioned = provisioned
        self.enforceRegion = enforceRegion
        self.maxPowerTenthsDBm = maxPowerTenthsDBm
        self.maxSensitivityTenthsDBm = maxSensitivityTenthsDBm
        self.numVolumeLevels = numVolumeLevels
        self.maxTonesInSound = maxTonesInSound
        self.hasBattery = hasBattery
        self.hasExternalPower = hasExternalPower
        self.batteryCapacityMinutes = batteryCapacityMinutes
        self.batteryCapacityMAh = batteryCapacityMAh
        self.deviceInitializedSuccessfully = deviceInitializedSuccessfully
    }

    /// The vendor's reader protocol version (20).
    public static let vendorReaderProtocolVersion: UInt16 = 20

    /// Whether a region is set (vendor: region configured).
    public var regionSet: Bool { region != nil }
    /// The region's name (vendor `regionName`); `nil` when not set.
    public var regionName: String? { region?.name }
    /// The region's number; `nil` when not set.
    public var regionNumber: UInt16? { region?.number }
    /// Maximum RF power in dBm (vendor `maxPower`).
    public var maxPowerDBm: Double { Double(maxPowerTenthsDBm) / 10 }
    /// Best receive sensitivity in dBm (vendor `maxSensitivity`).
    public var maxSensitivityDBm: Double { Double(maxSensitivityTenthsDBm) / 10 }
    /// The serial number as printed on the unit: at least 8 decimal digits, zero-padded.
    public var serialNumberText: String { Self.formatSerialNumber(serialNumber) }

    /// Formats a serial number as at least 8 decimal digits (`00012345`).
    public static func formatSerialNumber(_ serial: UInt32) -> String {
        let digits = String(serial)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    // MARK: Wire format

    /// Bits of the `flags` field.
    enum Flag: UInt16, CaseIterable {
        case regionSet = 0x0001
        case userMustSetRegion = 0x0002
        case userCanSetRegion = 0x0004
        case provisioned = 0x0008
        case enforceRegion = 0x0010
        case hasBattery = 0x0020
        case hasExternalPower = 0x0040
        case deviceInitializedSuccessfully = 0x0080
    }

    var flagBits: UInt16 {
        var bits: UInt16 = 0
        func set(_ on: Bool, _ flag: Flag) { if on { bits |= flag.rawValue } }
        set(regionSet, .regionSet)
        set(userMustSetRegion, .userMustSetRegion)
        set(userCanSetRegion, .userCanSetRegion)
        set(provisioned, .provisioned)
        set(enforceRegion, .enforceRegion)
        set(hasBattery, .hasBattery)
        set(hasExternalPower, .hasExternalPower)
        set(deviceInitializedSuccessfully, .deviceInitializedSuccessfully)
        return bits
    }

}

extension ReaderInfo: CustomStringConvertible {
    /// A one-line summary (vendor `readerDescription`).
    public var description: String {
        "\(hardwareType) \(hardwareModel) rev \(hardwareRevision), serial \(serialNumberText), "
            + "firmware \(firmwareVersion), loader \(loaderVersion), region \(regionName ?? "not set")"
    }
}
