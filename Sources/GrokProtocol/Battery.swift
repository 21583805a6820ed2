/// The battery's state (vendor `UgiBatteryInfo`). Not available while the reader scans or
/// updates its firmware.
public struct BatteryInfo: Sendable, Hashable {
    /// Enough charge to run inventory (vendor `canScan`).
    public var canScan: Bool
    /// External power is connected (vendor `externalPowerIsConnected`).
    public var externalPowerIsConnected: Bool
    /// The battery is charging (vendor `isCharging`).
    public var isCharging: Bool
    /// Minutes of scanning left (vendor `minutesRemaining`).
    public var minutesRemaining: UInt16
    /// Charge left, 0-100 (vendor `percentRemaining`).
    public var percentRemaining: UInt8
    /// Battery voltage, millivolts (vendor `voltage`, in volts there).
    public var millivolts: UInt16

    public init(canScan: Bool, externalPowerIsConnected: Bool, isCharging: Bool, minutesRemaining: UInt16,
                percentRemaining: UInt8, millivolts: UInt16) {
        self.canScan = canScan
        self.externalPowerIsConnected = externalPowerIsConnected
        self.isCharging = isCharging
        self.minutesRemaining = minutesRemaining
        self.percentRemaining = percentRemaining
        self.millivolts = millivolts
    }

    /// Battery voltage in volts.
    public var voltage: Double { Double(millivolts) / 1000 }

}
