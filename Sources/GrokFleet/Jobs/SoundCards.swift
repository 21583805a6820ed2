import GrokAudio

/// An ALSA sound device a Grokker could be plugged into (`grokctl devices`).
public struct SoundCard: Sendable, Hashable {
    /// The spec to pass to `--device`: `alsa:hw:1,0`.
    public var device: DeviceSpec
    /// ALSA's description, its lines joined by ", " (from the system, not localized).
    public var description: String
    public var canPlay: Bool
    public var canCapture: Bool

    /// The sound devices ALSA lists, reading `alsaConfig` instead of the system's
    /// configuration when given (`--alsa-config`); none when ALSA lists none.
    public static func list(alsaConfig: String? = nil) -> [SoundCard] {
        ALSADevices.list(configFile: alsaConfig).map { info in
            SoundCard(device: .alsa(name: info.name),
                      description: info.description.split(whereSeparator: \.isNewline).joined(separator: ", "),
                      canPlay: info.canPlay, canCapture: info.canCapture)
        }
    }
}
