/// What can go wrong when setting up the vendor modem. Each case has a stable ``code`` and
/// its ``arguments``; the presentation edge turns them into words.
public enum VendorModemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The vendor modem has no setting for this samples-per-bit at this sample rate.
    case unsupportedSetting(samplesPerBit: Int, sampleRate: Int)
    /// The operation belongs to the other end of the cable (`open` on a device, `start` on a
    /// host).
    case wrongRole(operation: String)

    public var code: String {
        switch self {
        case .unsupportedSetting: "vendor_modem_unsupported_setting"
        case .wrongRole: "vendor_modem_wrong_role"
        }
    }

    public var arguments: [String] {
        switch self {
        case .unsupportedSetting(let spb, let rate): [String(spb), String(rate)]
        case .wrongRole(let operation): [operation]
        }
    }

    public var description: String {
        switch self {
        case .unsupportedSetting(let spb, let rate):
            "the vendor modem has no setting for \(spb) samples per bit at \(rate) Hz; use one of 8, 10, 12, 16, 20, 24, 36, 48, 72 at 44100 or 48000 Hz."
        case .wrongRole(let operation):
            "\(operation) is not available at this end of the cable; a host opens, a device starts."
        }
    }
}
