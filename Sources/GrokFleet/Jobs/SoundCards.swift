import GrokAudio

/// An ALSA sound device a Grokker could be plugged into (`grokctl devices`).
public struct SoundCard: Sendable, Hashable {
    /// The spec to pass to `--device`: `alsa:hw:1,0`.
    public var device: DeviceSpec
    /// ALSA's description, its lines joined by ", " (from the system, not localized).
    public var description: String
    public var canPlay: Bool
    public var canCapture: Bool
    /// The device's mixer (``ALSAMixer/controlName(forDevice:)``: `hw:1`, `pulse`); `nil` when
    /// it has none (a PCM of a configuration file, `null`).
    public var mixer: String?
    /// The mixer's controls and their levels; `nil` without a mixer.
    public var levels: [ControlLevel]?
    /// Whether a Grokker is plugged in by the card's jacks (``ALSACard/judge(_:)``); `nil`
    /// when the card reports no headphone or microphone jack: a handshake tells then.
    public var jackPlugged: Bool?
    /// The USB sound card the device leads to (its port path and model): `hw:1,0`,
    /// `plughw:CARD=Device`; `nil` for names that name no card and cards not on USB.
    public var usb: USBSoundCard?

    /// The sound devices ALSA lists, reading `alsaConfig` instead of the system's
    /// configuration when given (`--alsa-config`); none when ALSA lists none. Each mixer is
    /// read once, however many of the devices share it.
    public static func list(alsaConfig: String? = nil, sysfs: String = "/sys") -> [SoundCard] {
        let usbCards = USBSoundCard.list(sysfs: sysfs)
        var mixers: [String: [ControlLevel]?] = [:]
        func levels(_ device: String) -> [ControlLevel]? {
            let name = ALSAMixer.controlName(forDevice: device)
            if let known = mixers[name] { return known }
            let read = (try? ALSAMixer(name)).flatMap { try? $0.levels() }?.controls.map(ControlLevel.init)
            mixers[name] = .some(read)
            return read
        }
        return ALSADevices.list(configFile: alsaConfig).map { info in
            SoundCard(device: .alsa(name: info.name),
                      description: info.description.split(whereSeparator: \.isNewline).joined(separator: ", "),
                      canPlay: info.canPlay, canCapture: info.canCapture,
                      mixer: levels(info.name) == nil ? nil : ALSAMixer.controlName(forDevice: info.name), levels: levels(info.name),
                      jackPlugged: ALSADevices.jackPlugged(device: info.name), usb: USBSoundCard.card(forDevice: info.name, in: usbCards))
        }
    }
}

/// One mixer control's level as `grokctl devices` shows it; a side the control lacks is `nil`.
public struct ControlLevel: Sendable, Hashable, Encodable {
    /// The control's name, from the card (`Master`, `Mic`).
    public var control: String
    public var playbackPercent: Int?
    public var playbackMuted: Bool?
    public var capturePercent: Int?
    public var captureMuted: Bool?

    enum CodingKeys: String, CodingKey {
        case control
        case playbackPercent = "playback_percent", playbackMuted = "playback_muted"
        case capturePercent = "capture_percent", captureMuted = "capture_muted"
    }

    init(_ control: MixerControl) {
        self.control = control.name
        playbackPercent = control.playbackPercent
        playbackMuted = control.playbackSwitches.isEmpty ? nil : control.playbackMuted
        capturePercent = control.capturePercent
        captureMuted = control.captureSwitches.isEmpty ? nil : control.captureMuted
    }
}
