import GrokProtocol

/// The fixed capabilities of an emulated hardware model: what GetVersion reports besides the
/// per-unit ``DeviceState``.
public struct EmulatedHardware: Sendable, Equatable {
    /// The hardware kind (GetVersion bytes 2-3).
    public var hardwareType: HardwareType
    /// Maximum RF power, tenths of a dBm (GetVersion byte 9).
    public var maxPowerTenthsDBm: Int16
    /// Best receive sensitivity, tenths of a dBm (GetVersion byte 10, negated).
    public var maxSensitivityTenthsDBm: Int16
    /// Speaker volume steps (GetVersion byte 11).
    public var numVolumeLevels: UInt8
    /// Most tones in one sound (GetVersion byte 29).
    public var maxTonesInSound: UInt8

    public init(hardwareType: HardwareType, maxPowerTenthsDBm: Int16, maxSensitivityTenthsDBm: Int16,
                numVolumeLevels: UInt8, maxTonesInSound: UInt8) {
        self.hardwareType = hardwareType
        self.maxPowerTenthsDBm = maxPowerTenthsDBm
        self.maxSensitivityTenthsDBm = maxSensitivityTenthsDBm
        self.numVolumeLevels = numVolumeLevels
        self.maxTonesInSound = maxTonesInSound
    }

    /// The emulated Grokker 1 (GR-1): 30.0 dBm, -80.0 dBm sensitivity, 8 volume levels, 16
    /// tones per sound.
    public static let grokker1 = EmulatedHardware(
        hardwareType: .grokker1, maxPowerTenthsDBm: 300, maxSensitivityTenthsDBm: -800, numVolumeLevels: 8, maxTonesInSound: 16)
}
