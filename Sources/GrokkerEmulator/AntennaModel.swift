import GrokBasics
import GrokAudio
import GrokProtocol

/// The Grokker's antenna and its tuner: how much of the carrier the antenna reflects on each
/// channel, for each setting of the tuner's capacitor bank.
///
/// Every unit's antenna is a little different: on each channel the best setting and the
/// best return loss are drawn from the unit's serial number and the channel (so a unit keeps
/// them from run to run). The return loss falls by ``dBPerCode`` for each step the tuner
/// is away from the best setting (never below 3 dB); the reflected power is the carrier's
/// power minus the return loss. Out of the box the tuner is at ``factoryCode`` on every
/// channel, at least 3 steps from every channel's best; tuning a channel sweeps all codes
/// (``sweepSeconds`` of the device clock) and keeps the one that reflects least.
public enum AntennaModel {
    /// Settings of the capacitor bank.
    public static let codes = 32
    /// The setting a unit leaves the factory with.
    public static let factoryCode = 16
    /// Return loss lost per step away from the best setting, dB.
    public static let dBPerCode = 1.2
    /// Time to try one setting on one channel, seconds.
    public static let secondsPerCode = 0.001
    /// Time to tune one channel (every setting once), seconds.
    public static var sweepSeconds: Double { Double(codes) * secondsPerCode }

    private static func draw(serial: UInt32, kHz: UInt32) -> UInt64 {
        var random = SplitMix64(seed: UInt64(serial) << 32 ^ UInt64(kHz) ^ 0x414E_5445_4E4E_41)
        return random.next()
    }

    /// The channel's best setting: 2...13 or 19...30, never near the factory's.
    public static func bestCode(serial: UInt32, kHz: UInt32) -> Int {
        let r = draw(serial: serial, kHz: kHz)
        let offset = Int(r % 12)
        return (r >> 8) & 1 == 0 ? 2 + offset : 19 + offset
    }

    /// The return loss at the best setting, 22...28 dB.
    public static func bestReturnLossDB(serial: UInt32, kHz: UInt32) -> Double {
        22 + 6 * Double((draw(serial: serial, kHz: kHz) >> 16) & 0xFFFF) / 65_535
    }

    /// The return loss with the tuner at `code`, dB.
    public static func returnLossDB(code: Int, serial: UInt32, kHz: UInt32) -> Double {
        let away = Double(abs(code - bestCode(serial: serial, kHz: kHz)))
        return max(3, bestReturnLossDB(serial: serial, kHz: kHz) - dBPerCode * away)
    }

    /// Power reflected at `powerDBm` with the tuner at `code`, dBm.
    public static func reflectedDBm(powerDBm: Double, code: Int, serial: UInt32, kHz: UInt32) -> Double {
        powerDBm - returnLossDB(code: code, serial: serial, kHz: kHz)
    }

    /// The sweep: the setting that reflects least (the lowest code among equals).
    public static func tune(serial: UInt32, kHz: UInt32) -> Int {
        var best = 0
        for code in 1..<codes where returnLossDB(code: code, serial: serial, kHz: kHz) > returnLossDB(code: best, serial: serial, kHz: kHz) {
            best = code
        }
        return best
    }

    /// The tuner's setting for `kHz` in `state`.
    public static func code(in state: DeviceState, kHz: UInt32) -> Int {
        state.antennaTuning[String(kHz)] ?? factoryCode
    }

    /// The channels of the region's plan (the ones the inventory hops over), kHz.
    public static func channelsKHz(for region: RegionSetting?) -> [UInt32] {
        guard let entry = region.flatMap(RegionCatalog.entry(for:)) else { return [] }
        return entry.channelsKHz.map { UInt32($0) }
    }
}
