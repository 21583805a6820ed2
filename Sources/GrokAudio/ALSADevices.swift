internal import CALSA
import Glibc

/// One ALSA PCM a Grokker could be plugged into.
public struct ALSADeviceInfo: Sendable, Codable, Equatable {
    /// The name to pass to ``ALSAPort`` (`hw:1,0`, `default`, `grokbench_host`).
    public var name: String
    /// What ALSA says about it (may span several lines), or the card's name.
    public var description: String
    /// Whether it has a playback side (headphone line).
    public var canPlay: Bool
    /// Whether it has a capture side (microphone line).
    public var canCapture: Bool

    public init(name: String, description: String, canPlay: Bool, canCapture: Bool) {
        self.name = name
        self.description = description
        self.canPlay = canPlay
        self.canCapture = canCapture
    }
}

/// Lists the ALSA PCMs on this machine.
public enum ALSADevices {
    /// ALSA's PCM name hints, then every sound card as `hw:N,0` (if not already listed),
    /// then the PCMs defined in `configFile` (if given and not already listed).
    ///
    /// Never fails: with no sound card the list holds only what the configuration defines
    /// (`default`, `null`, ...), and an unreadable `configFile` adds nothing (opening a
    /// device with it reports the problem).
    public static func list(configFile: String? = nil) -> [ALSADeviceInfo] {
        ALSACall.prepare()
        var devices: [ALSADeviceInfo] = []
        func add(_ device: ALSADeviceInfo) {
            if !devices.contains(where: { $0.name == device.name }) { devices.append(device) }
        }
        nameHints().forEach(add)
        cards().forEach(add)
        if let configFile { configured(in: configFile).forEach(add) }
        return devices
    }

    /// `snd_device_name_hint(-1, "pcm")`: IOID "Output" is playback only, "Input" capture
    /// only, none both.
    static func nameHints() -> [ALSADeviceInfo] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices: [ALSADeviceInfo] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = take(snd_device_name_get_hint(hint, "NAME")) else { continue }
            let description = take(snd_device_name_get_hint(hint, "DESC")) ?? ""
            let ioid = take(snd_device_name_get_hint(hint, "IOID"))
            devices.append(
                ALSADeviceInfo(
                    name: name, description: description,
                    canPlay: ioid == nil || ioid == "Output", canCapture: ioid == nil || ioid == "Input"))
        }
        return devices
    }

    /// Every card as `hw:N,0`, with its name and whether device 0 plays and captures.
    static func cards() -> [ALSADeviceInfo] {
        var devices: [ALSADeviceInfo] = []
        var card: Int32 = -1
        while snd_card_next(&card) >= 0, card >= 0 {
            var cName: UnsafeMutablePointer<CChar>?
            let name = snd_card_get_name(card, &cName) >= 0 ? take(cName) ?? "card \(card)" : "card \(card)"
            devices.append(
                ALSADeviceInfo(
                    name: "hw:\(card),0", description: name,
                    canPlay: hasPCM(card: card, stream: SND_PCM_STREAM_PLAYBACK),
                    canCapture: hasPCM(card: card, stream: SND_PCM_STREAM_CAPTURE)))
        }
        return devices
    }

    /// The PCMs `file` defines (its `pcm.NAME` entries), described by their
    /// `hint.description` when they have one.
    static func configured(in file: String) -> [ALSADeviceInfo] {
        guard let configuration = try? ALSAConfiguration.only(file) else { return [] }
        return configuration.childIDs(of: "pcm").map { id in
            let description = configuration.string(at: "pcm.\(id).hint.description") ?? "defined in \(file)"
            return ALSADeviceInfo(name: id, description: description, canPlay: true, canCapture: true)
        }
    }

    private static func hasPCM(card: Int32, stream: snd_pcm_stream_t) -> Bool {
        var ctl: OpaquePointer?
        guard snd_ctl_open(&ctl, "hw:\(card)", 0) >= 0, let ctl else { return false }
        defer { snd_ctl_close(ctl) }
        var info: OpaquePointer?
        guard snd_pcm_info_malloc(&info) >= 0, let info else { return false }
        defer { snd_pcm_info_free(info) }
        snd_pcm_info_set_device(info, 0)
        snd_pcm_info_set_subdevice(info, 0)
        snd_pcm_info_set_stream(info, stream)
        return snd_ctl_pcm_info(ctl, info) >= 0
    }

    /// Whether a Grokker is plugged into the card of `device` by its jacks
    /// (``ALSACard/judge(_:)``); `nil` for a device that is no card's (`pulse`, a PCM of a
    /// configuration file) or a card that reports neither jack: a handshake tells then.
    public static func jackPlugged(device: String) -> Bool? {
        guard let card = ALSACard.index(ofDevice: device) else { return nil }
        return ALSACard.judge(ALSACard.jacks(card: card))
    }

    /// Copies and frees a string ALSA allocated.
    private static func take(_ string: UnsafeMutablePointer<CChar>?) -> String? {
        guard let string else { return nil }
        defer { free(string) }
        return String(cString: string)
    }
}
