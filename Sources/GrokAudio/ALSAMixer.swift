internal import CALSA
import GrokBasics
import Glibc

/// One simple mixer control (`Master`, `PCM`, `Mic`, `Capture`, `Auto Gain Control`) as read
/// from a card: its volumes per channel in the card's own units, with their range, and its
/// switches per channel (on = not muted). A side the control does not have is empty.
public struct MixerControl: Sendable, Codable, Hashable {
    /// The control's name as ALSA gives it (from the card, not localized).
    public var name: String
    /// The control's index (two controls may share a name).
    public var index: Int
    public var playbackVolumes: [Int]
    public var playbackRange: [Int]
    public var playbackSwitches: [Bool]
    public var captureVolumes: [Int]
    public var captureRange: [Int]
    public var captureSwitches: [Bool]
    /// Whether the card gives the capture volume a decibel scale (then a session sets it in
    /// decibels, ``GrokkerLevels/captureDecibels``).
    public var captureHasDecibels: Bool

    public init(name: String, index: Int, playbackVolumes: [Int] = [], playbackRange: [Int] = [],
                playbackSwitches: [Bool] = [], captureVolumes: [Int] = [], captureRange: [Int] = [],
                captureSwitches: [Bool] = [], captureHasDecibels: Bool = false) {
        self.captureHasDecibels = captureHasDecibels
        self.name = name
        self.index = index
        self.playbackVolumes = playbackVolumes
        self.playbackRange = playbackRange
        self.playbackSwitches = playbackSwitches
        self.captureVolumes = captureVolumes
        self.captureRange = captureRange
        self.captureSwitches = captureSwitches
    }

    /// An automatic gain control switch (`Auto Gain Control`, `Mic Auto Gain`): switched off
    /// for a session, as it would pump the level of the Grokker's tones.
    public var isAutomaticGain: Bool { name.lowercased().contains("auto gain") || name.contains("AGC") }

    /// A control that loops an input back to the playback side (`Mic Playback`, `Line`
    /// monitoring): left as it is, so raising levels never feeds the Grokker its own reply.
    public var isMonitor: Bool {
        ["Mic", "Line", "Capture", "Input"].contains { name.hasPrefix($0) } && !playbackVolumes.isEmpty
    }

    /// The lowest playback volume as a percentage of its range; `nil` without one.
    public var playbackPercent: Int? { Self.percent(playbackVolumes, playbackRange) }
    /// The lowest capture volume as a percentage of its range; `nil` without one.
    public var capturePercent: Int? { Self.percent(captureVolumes, captureRange) }
    /// Whether a playback switch is off (muted).
    public var playbackMuted: Bool { playbackSwitches.contains(false) }
    /// Whether a capture switch is off.
    public var captureMuted: Bool { captureSwitches.contains(false) }

    static func percent(_ volumes: [Int], _ range: [Int]) -> Int? {
        guard let lowest = volumes.min(), range.count == 2 else { return nil }
        guard range[1] > range[0] else { return 100 }
        return Int(((Double(lowest - range[0]) / Double(range[1] - range[0])) * 100).rounded())
    }
}

/// The levels of one mixer (a card's `hw:N`, or a sound server's `pulse`): what is saved
/// before a session changes them and put back after.
public struct MixerLevels: Sendable, Codable, Hashable {
    /// The ALSA control device the levels belong to (`hw:1`, `pulse`).
    public var mixer: String
    public var controls: [MixerControl]

    public init(mixer: String, controls: [MixerControl]) {
        self.mixer = mixer
        self.controls = controls
    }
}

/// What a session sets: every playback control (but monitors) to full and unmuted, every
/// capture control to ``captureDecibels`` (or ``captureFallbackPercent`` of its range where the
/// card gives no decibel scale) and switched on, automatic gain off.
public struct GrokkerLevels: Sendable, Equatable {
    /// The capture gain asked for where the card gives a decibel scale: unity (0 dB), the
    /// gain at which the Grokker's line-level reply neither clips nor loses resolution
    /// (docs/bench.md, "Levels").
    public var captureDecibels: Double = 0
    /// The capture level where the card gives no decibel scale (a sound server's `pulse`
    /// mixer, whose 100 % is unity gain).
    public var captureFallbackPercent: Int = 100

    public init() {}

    /// The percentage `control` should have on each side under these settings: `nil` for a
    /// side left alone or set in decibels. Used to say which control is too low when a
    /// handshake fails.
    public func target(for control: MixerControl) -> (playback: Int?, capture: Int?) {
        if control.isAutomaticGain { return (nil, nil) }
        let playback = control.isMonitor || control.playbackVolumes.isEmpty ? nil : 100
        let capture = control.captureVolumes.isEmpty || control.captureHasDecibels ? nil : captureFallbackPercent
        return (playback, capture)
    }
}

/// A control of the card that stands between the host and the Grokker at a level below what a
/// session sets: the one to raise when no Grokker answers.
public struct LevelShortfall: Sendable, Equatable {
    /// The control's name (`Master`, `Mic`).
    public var control: String
    /// `playback` (the headphone line, host to Grokker) or `capture` (the microphone line).
    public var side: String
    /// Its level in percent of its range (the lowest channel's); `nil` for a switch without a volume.
    public var percent: Int?
    /// Whether its switch is off.
    public var muted: Bool
    /// The loudest input the port heard, in dBFS, rounded (`-inf` for pure silence).
    public var loudestInputDBFS: String

    public init(control: String, side: String, percent: Int?, muted: Bool, loudestInputDBFS: String) {
        self.control = control
        self.side = side
        self.percent = percent
        self.muted = muted
        self.loudestInputDBFS = loudestInputDBFS
    }
}

/// One opened ALSA mixer (`snd_mixer_t`), closed in `deinit`. Every call goes through
/// ``ALSACall``. Not thread-safe.
public final class ALSAMixer {
    /// The control device it was opened on (`hw:1`, `pulse`).
    public let name: String
    private let handle: OpaquePointer

    /// The control device behind a PCM name: `hw:N` for a card device (`hw:1,0`,
    /// `plughw:CARD=Device`), else the name itself (`pulse`, `default`: ALSA defines a
    /// control device of the same name for them).
    public static func controlName(forDevice device: String) -> String {
        if let card = ALSACard.index(ofDevice: device) { return "hw:\(card)" }
        return device
    }

    /// Opens the simple-element mixer of `name` (`hw:1`, `pulse`).
    ///
    /// - Throws: ``AudioError/deviceNotFound(device:detail:)`` when there is no such control
    ///   device, ``AudioError/io(device:operation:detail:)`` for other failures.
    public init(_ name: String) throws(AudioError) {
        var mixer: OpaquePointer?
        try ALSACall.check("snd_mixer_open", device: name) { snd_mixer_open(&mixer, 0) }
        guard let mixer else { throw AudioError.io(device: name, operation: "snd_mixer_open", detail: ErrorDetail("no_pcm")) }
        do {
            try ALSACall.check("snd_mixer_attach", device: name) { snd_mixer_attach(mixer, name) }
            try ALSACall.check("snd_mixer_selem_register", device: name) { snd_mixer_selem_register(mixer, nil, nil) }
            try ALSACall.check("snd_mixer_load", device: name) { snd_mixer_load(mixer) }
        } catch {
            snd_mixer_close(mixer)
            throw error
        }
        self.name = name
        self.handle = mixer
    }

    deinit {
        snd_mixer_close(handle)
    }

    /// Every simple control of the mixer with its volumes and switches.
    public func levels() throws(AudioError) -> MixerLevels {
        var controls: [MixerControl] = []
        for element in elements() {
            controls.append(try read(element))
        }
        return MixerLevels(mixer: name, controls: controls)
    }

    /// Puts `levels` back (volumes and switches per channel); controls the mixer no longer
    /// has are skipped.
    public func apply(_ levels: MixerLevels) throws(AudioError) {
        for control in levels.controls {
            guard let element = find(control.name, index: control.index) else { continue }
            try set(element, control: control)
        }
    }

    /// Sets the levels a Grokker session wants (``GrokkerLevels``).
    public func raiseForGrokker(_ wanted: GrokkerLevels = GrokkerLevels()) throws(AudioError) {
        for element in elements() {
            let control = try read(element)
            if control.isAutomaticGain {
                try setSwitches(element, playback: control.playbackSwitches.isEmpty ? nil : false,
                                capture: control.captureSwitches.isEmpty ? nil : false)
                continue
            }
            if !control.isMonitor, control.playbackRange.count == 2 {
                try ALSACall.check("snd_mixer_selem_set_playback_volume_all", stream: "playback", device: name) {
                    snd_mixer_selem_set_playback_volume_all(element, control.playbackRange[1])
                }
            }
            if control.captureRange.count == 2 {
                var low = 0, high = 0
                if control.captureHasDecibels, snd_mixer_selem_get_capture_dB_range(element, &low, &high) == 0 {
                    let centibels = min(max(Int(wanted.captureDecibels * 100), low), high)
                    try ALSACall.check("snd_mixer_selem_set_capture_dB_all", stream: "capture", device: name) {
                        snd_mixer_selem_set_capture_dB_all(element, centibels, 0)
                    }
                } else {
                    let range = control.captureRange
                    let value = range[0] + (range[1] - range[0]) * wanted.captureFallbackPercent / 100
                    try ALSACall.check("snd_mixer_selem_set_capture_volume_all", stream: "capture", device: name) {
                        snd_mixer_selem_set_capture_volume_all(element, value)
                    }
                }
            }
            try setSwitches(element, playback: control.isMonitor || control.playbackSwitches.isEmpty ? nil : true,
                            capture: control.captureSwitches.isEmpty ? nil : true)
        }
    }

    // MARK: Elements

    private func elements() -> [OpaquePointer] {
        var list: [OpaquePointer] = []
        var element = snd_mixer_first_elem(handle)
        while let current = element {
            if snd_mixer_selem_is_active(current) != 0 { list.append(current) }
            element = snd_mixer_elem_next(current)
        }
        return list
    }

    private func find(_ controlName: String, index: Int) -> OpaquePointer? {
        elements().first { element in
            String(cString: snd_mixer_selem_get_name(element)) == controlName
                && Int(snd_mixer_selem_get_index(element)) == index
        }
    }

    private static let channels = (0...Int32(SND_MIXER_SCHN_LAST.rawValue)).map { snd_mixer_selem_channel_id_t(rawValue: $0) }

    private func read(_ element: OpaquePointer) throws(AudioError) -> MixerControl {
        var control = MixerControl(name: String(cString: snd_mixer_selem_get_name(element)),
                                   index: Int(snd_mixer_selem_get_index(element)))
        let playbackChannels = Self.channels.filter { snd_mixer_selem_has_playback_channel(element, $0) != 0 }
        let captureChannels = Self.channels.filter { snd_mixer_selem_has_capture_channel(element, $0) != 0 }
        if snd_mixer_selem_has_playback_volume(element) != 0 {
            var low = 0, high = 0
            try ALSACall.check("snd_mixer_selem_get_playback_volume_range", stream: "playback", device: name) {
                snd_mixer_selem_get_playback_volume_range(element, &low, &high)
            }
            control.playbackRange = [low, high]
            for channel in playbackChannels {
                var value = 0
                try ALSACall.check("snd_mixer_selem_get_playback_volume", stream: "playback", device: name) {
                    snd_mixer_selem_get_playback_volume(element, channel, &value)
                }
                control.playbackVolumes.append(value)
            }
        }
        if snd_mixer_selem_has_playback_switch(element) != 0 {
            for channel in playbackChannels {
                var value: Int32 = 0
                try ALSACall.check("snd_mixer_selem_get_playback_switch", stream: "playback", device: name) {
                    snd_mixer_selem_get_playback_switch(element, channel, &value)
                }
                control.playbackSwitches.append(value != 0)
            }
        }
        if snd_mixer_selem_has_capture_volume(element) != 0 {
            var low = 0, high = 0
            try ALSACall.check("snd_mixer_selem_get_capture_volume_range", stream: "capture", device: name) {
                snd_mixer_selem_get_capture_volume_range(element, &low, &high)
            }
            control.captureRange = [low, high]
            var lowDB = 0, highDB = 0
            control.captureHasDecibels = snd_mixer_selem_get_capture_dB_range(element, &lowDB, &highDB) == 0 && highDB > lowDB
            for channel in captureChannels {
                var value = 0
                try ALSACall.check("snd_mixer_selem_get_capture_volume", stream: "capture", device: name) {
                    snd_mixer_selem_get_capture_volume(element, channel, &value)
                }
                control.captureVolumes.append(value)
            }
        }
        if snd_mixer_selem_has_capture_switch(element) != 0 {
            for channel in captureChannels {
                var value: Int32 = 0
                try ALSACall.check("snd_mixer_selem_get_capture_switch", stream: "capture", device: name) {
                    snd_mixer_selem_get_capture_switch(element, channel, &value)
                }
                control.captureSwitches.append(value != 0)
            }
        }
        return control
    }

    private func set(_ element: OpaquePointer, control: MixerControl) throws(AudioError) {
        let playbackChannels = Self.channels.filter { snd_mixer_selem_has_playback_channel(element, $0) != 0 }
        let captureChannels = Self.channels.filter { snd_mixer_selem_has_capture_channel(element, $0) != 0 }
        if snd_mixer_selem_has_playback_volume(element) != 0 {
            for (channel, value) in zip(playbackChannels, control.playbackVolumes) {
                try ALSACall.check("snd_mixer_selem_set_playback_volume", stream: "playback", device: name) {
                    snd_mixer_selem_set_playback_volume(element, channel, value)
                }
            }
        }
        if snd_mixer_selem_has_playback_switch(element) != 0 {
            for (channel, on) in zip(playbackChannels, control.playbackSwitches) {
                try ALSACall.check("snd_mixer_selem_set_playback_switch", stream: "playback", device: name) {
                    snd_mixer_selem_set_playback_switch(element, channel, on ? 1 : 0)
                }
            }
        }
        if snd_mixer_selem_has_capture_volume(element) != 0 {
            for (channel, value) in zip(captureChannels, control.captureVolumes) {
                try ALSACall.check("snd_mixer_selem_set_capture_volume", stream: "capture", device: name) {
                    snd_mixer_selem_set_capture_volume(element, channel, value)
                }
            }
        }
        if snd_mixer_selem_has_capture_switch(element) != 0 {
            for (channel, on) in zip(captureChannels, control.captureSwitches) {
                try ALSACall.check("snd_mixer_selem_set_capture_switch", stream: "capture", device: name) {
                    snd_mixer_selem_set_capture_switch(element, channel, on ? 1 : 0)
                }
            }
        }
    }

    private func setSwitches(_ element: OpaquePointer, playback: Bool?, capture: Bool?) throws(AudioError) {
        if let playback {
            try ALSACall.check("snd_mixer_selem_set_playback_switch_all", stream: "playback", device: name) {
                snd_mixer_selem_set_playback_switch_all(element, playback ? 1 : 0)
            }
        }
        if let capture {
            try ALSACall.check("snd_mixer_selem_set_capture_switch_all", stream: "capture", device: name) {
                snd_mixer_selem_set_capture_switch_all(element, capture ? 1 : 0)
            }
        }
    }
}

@available(*, unavailable) extension ALSAMixer: Sendable {}

extension MixerLevels {
    /// The control standing lowest below what a session sets (``GrokkerLevels``): a muted
    /// one first, then the lowest percentage; `nil` when every control is where a session
    /// puts it. `loudestInput` is the port's peak input (0...1).
    public func shortfall(_ wanted: GrokkerLevels = GrokkerLevels(), loudestInput: Float) -> LevelShortfall? {
        let dbfs = loudestInput > 0 ? String(Int((20 * log10(Double(loudestInput))).rounded())) : "-inf"
        var worst: LevelShortfall?
        func consider(_ candidate: LevelShortfall) {
            guard let current = worst else { worst = candidate; return }
            if candidate.muted != current.muted {
                if candidate.muted { worst = candidate }
            } else if (candidate.percent ?? -1) < (current.percent ?? -1) {
                worst = candidate
            }
        }
        for control in controls {
            let target = wanted.target(for: control)
            if let level = target.playback {
                if control.playbackMuted {
                    consider(LevelShortfall(control: control.name, side: "playback", percent: control.playbackPercent, muted: true,
                                            loudestInputDBFS: dbfs))
                } else if let percent = control.playbackPercent, percent < level {
                    consider(LevelShortfall(control: control.name, side: "playback", percent: percent, muted: false, loudestInputDBFS: dbfs))
                }
            }
            if !control.isAutomaticGain, !control.captureVolumes.isEmpty || !control.captureSwitches.isEmpty {
                if control.captureMuted {
                    consider(LevelShortfall(control: control.name, side: "capture", percent: control.capturePercent, muted: true,
                                            loudestInputDBFS: dbfs))
                } else if let level = target.capture, let percent = control.capturePercent, percent < level {
                    consider(LevelShortfall(control: control.name, side: "capture", percent: percent, muted: false, loudestInputDBFS: dbfs))
                }
            }
        }
        return worst
    }
}
