/// One tone of a sound: a frequency held for a duration (vendor: the entries of the
/// found-item and found-last-item sounds). A frequency of 0 is a rest (silence).
public struct SoundTone: Sendable, Hashable {
    /// Hz; 0 is a rest, otherwise within ``SoundLimits/frequencyHz``.
    public var frequencyHz: UInt16
    /// Milliseconds, within ``SoundLimits/toneMilliseconds``.
    public var durationMs: UInt16

    public init(frequencyHz: UInt16, durationMs: UInt16) {
        self.frequencyHz = frequencyHz
        self.durationMs = durationMs
    }

}

/// The Geiger-counter sound an inventory with sound type GEIGER_COUNTER makes (vendor
/// `setGeigerCounterSound`): clicks whose rate follows the rate of reads.
///
/// Each read earns ``clickRateThousandths``/1000 of a click; clicks are played as they are
/// earned, at most ``maxClicksPerSecond``; clicks earned but not played within
/// ``historyDepthMs`` are dropped, so the sound follows what the reader finds now.
public struct GeigerSound: Sendable, Hashable {
    /// Hz, within ``SoundLimits/frequencyHz``.
    public var frequencyHz: UInt16
    /// Length of one click, ms (``SoundLimits/clickMilliseconds``).
    public var clickDurationMs: UInt16
    /// Clicks per read, in thousandths (1000: one click per read).
    public var clickRateThousandths: UInt16
    /// Most clicks per second (``SoundLimits/clicksPerSecond``); clicks never overlap.
    public var maxClicksPerSecond: UInt16
    /// How long earned clicks wait to be played, ms (``SoundLimits/historyMilliseconds``).
    public var historyDepthMs: UInt16

    public init(frequencyHz: UInt16, clickDurationMs: UInt16, clickRateThousandths: UInt16,
                maxClicksPerSecond: UInt16, historyDepthMs: UInt16) {
        self.frequencyHz = frequencyHz
        self.clickDurationMs = clickDurationMs
        self.clickRateThousandths = clickRateThousandths
        self.maxClicksPerSecond = maxClicksPerSecond
        self.historyDepthMs = historyDepthMs
    }

    /// What a Grokker starts with: 3 kHz clicks of 2 ms, one per read, at most 40 per second,
    /// forgotten after 500 ms.
    public static let standard = GeigerSound(
        frequencyHz: 3000, clickDurationMs: 2, clickRateThousandths: 1000, maxClicksPerSecond: 40, historyDepthMs: 500)

    /// Why a Grokker refuses this sound, or `nil` when it plays it.
    public var problem: String? {
        if !SoundLimits.frequencyHz.contains(frequencyHz) {
            return "Geiger frequency \(frequencyHz) Hz is outside the piezo's \(SoundLimits.frequencyHz) Hz"
        }
        if !SoundLimits.clickMilliseconds.contains(clickDurationMs) {
            return "click duration \(clickDurationMs) ms is outside \(SoundLimits.clickMilliseconds) ms"
        }
        if !SoundLimits.clickRateThousandths.contains(clickRateThousandths) {
            return "click rate \(clickRateThousandths)/1000 per read is outside \(SoundLimits.clickRateThousandths)"
        }
        if !SoundLimits.clicksPerSecond.contains(maxClicksPerSecond) {
            return "max clicks per second \(maxClicksPerSecond) is outside \(SoundLimits.clicksPerSecond)"
        }
        if Int(maxClicksPerSecond) * Int(clickDurationMs) > 1000 {
            return "\(maxClicksPerSecond) clicks of \(clickDurationMs) ms do not fit in a second"
        }
        if !SoundLimits.historyMilliseconds.contains(historyDepthMs) {
            return "history depth \(historyDepthMs) ms is outside \(SoundLimits.historyMilliseconds) ms"
        }
        return nil
    }
}

/// The found-item and found-last-item sounds (vendor `setFoundItemSound`,
/// `setFoundLastItemSound`), each at most `maxTonesInSound` tones (``ReaderInfo``).
public struct FoundSounds: Sendable, Hashable {
    /// Played on a first find (sound types FIRST_FIND and FIRST_FIND_AND_LAST).
    public var foundItem: [SoundTone]
    /// Played when the last of the EPCs searched for is found (FIRST_FIND_AND_LAST).
    public var foundLast: [SoundTone]

    public init(foundItem: [SoundTone], foundLast: [SoundTone]) {
        self.foundItem = foundItem
        self.foundLast = foundLast
    }

    /// What a Grokker starts with: a 2.7 kHz beep of 60 ms; for the last item a rising
    /// three-note figure.
    public static let standard = FoundSounds(
        foundItem: [SoundTone(frequencyHz: 2700, durationMs: 60)],
        foundLast: [SoundTone(frequencyHz: 2000, durationMs: 100), SoundTone(frequencyHz: 0, durationMs: 50),
                    SoundTone(frequencyHz: 2700, durationMs: 100), SoundTone(frequencyHz: 3400, durationMs: 250)])

    /// The most tones in one sound that fit the wire (a `u8` count).
    public static let maxWireTones = 255

    /// Why a Grokker with room for `maxTones` tones per sound refuses these, or `nil`.
    public func problem(maxTones: Int) -> String? {
        for (name, sound) in [("found-item", foundItem), ("found-last-item", foundLast)] {
            if sound.count > maxTones { return "the \(name) sound has \(sound.count) tones; this Grokker plays at most \(maxTones)" }
            for tone in sound {
                if tone.frequencyHz != 0, !SoundLimits.frequencyHz.contains(tone.frequencyHz) {
                    return "a \(name) tone of \(tone.frequencyHz) Hz is outside the piezo's \(SoundLimits.frequencyHz) Hz (0 is a rest)"
                }
                if !SoundLimits.toneMilliseconds.contains(tone.durationMs) {
                    return "a \(name) tone of \(tone.durationMs) ms is outside \(SoundLimits.toneMilliseconds) ms"
                }
            }
        }
        return nil
    }
}

/// A sound the host asks the Grokker to play now (vendor `playSound`).
public enum SoundName: UInt8, Sendable, Hashable, CaseIterable {
    /// The found-item sound (vendor FOUND_ITEM).
    case foundItem = 1
    /// The found-last-item sound (vendor FOUND_LAST).
    case foundLast = 2
    /// One Geiger-counter click.
    case geigerClick = 3
}

/// What the Grokker's piezo speaker can do. A piezo disc is loud near its resonance (about
/// 2.7 kHz on the Grokker) and hardly audible below a few hundred hertz; above 8 kHz its
/// driver cannot swing it. Durations are bounded so one sound cannot hold the speaker.
public enum SoundLimits {
    /// Frequencies a tone or click may have, Hz.
    public static let frequencyHz: ClosedRange<UInt16> = 200...8000
    /// Length of one tone, ms.
    public static let toneMilliseconds: ClosedRange<UInt16> = 1...2000
    /// Length of one Geiger click, ms.
    public static let clickMilliseconds: ClosedRange<UInt16> = 1...100
    /// Clicks per read, thousandths (0.001 to 10 clicks per read).
    public static let clickRateThousandths: ClosedRange<UInt16> = 1...10_000
    /// Most clicks per second.
    public static let clicksPerSecond: ClosedRange<UInt16> = 1...200
    /// How long earned clicks may wait, ms.
    public static let historyMilliseconds: ClosedRange<UInt16> = 50...10_000
}
