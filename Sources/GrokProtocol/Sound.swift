/// One tone of a sound: a frequency held for a duration (vendor: the entries of the
/// found-item and found-last-item sounds). A frequency of 0 is a rest (silence).
public struct SoundTone: Sendable, Hashable {
    /// Hz; 0 is a rest, and so is a frequency the piezo does not sound (``isAudible``).
    public var frequencyHz: UInt16
    /// Milliseconds.
    public var durationMs: UInt16

    public init(frequencyHz: UInt16, durationMs: UInt16) {
        self.frequencyHz = frequencyHz
        self.durationMs = durationMs
    }

    /// Whether the piezo sounds it: a frequency in ``SoundLimits/frequencyHz`` (0 is a rest)
    /// for more than 0 ms.
    public var isAudible: Bool { SoundLimits.frequencyHz.contains(frequencyHz) && durationMs > 0 }
}

/// The Geiger-counter sound an inventory with sound type GEIGER_COUNTER makes (vendor
/// `setGeigerCounterSound`): clicks whose rate follows the rate of reads.
///
/// Each read earns ``clickRateThousandths``/1000 of a click; clicks are played as they are
/// earned, at most ``maxClicksPerSecond``; clicks earned but not played within
/// ``historyDepthMs`` are dropped, so the sound follows what the reader finds now.
public struct GeigerSound: Sendable, Hashable {
    /// Hz (silent outside ``SoundLimits/frequencyHz``).
    public var frequencyHz: UInt16
    /// Length of one click, ms.
    public var clickDurationMs: UInt16
    /// Clicks per read, in thousandths (1000: one click per read).
    public var clickRateThousandths: UInt16
    /// Most clicks per second; clicks never overlap (``playableClicksPerSecond``).
    public var maxClicksPerSecond: UInt16
    /// How long earned clicks wait to be played, ms.
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

    /// Whether the piezo makes these clicks heard: a frequency it sounds
    /// (``SoundLimits/frequencyHz``), clicks that last, and a rate above zero. A Grokker takes
    /// any Geiger sound the vendor's library can encode (its host re-sends a refused one eight
    /// times and then resets the link, so a unit that refused what the vendor's app sends
    /// would be unusable to it); one that is not audible plays silence.
    public var isAudible: Bool {
        SoundLimits.frequencyHz.contains(frequencyHz) && clickDurationMs > 0 && clickRateThousandths > 0 && maxClicksPerSecond > 0
    }

    /// Clicks per second the piezo can play: at most ``maxClicksPerSecond``, and never
    /// overlapping (at most 1000 / ``clickDurationMs``).
    public var playableClicksPerSecond: Int {
        guard clickDurationMs > 0 else { return 0 }
        return min(Int(maxClicksPerSecond), 1000 / Int(clickDurationMs))
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

    /// Why a Grokker with room for `maxTones` tones per sound refuses these, or `nil`: only
    /// more tones than it has room for. Any frequency and length the wire carries is taken; a
    /// tone the piezo cannot sound (``SoundTone/isAudible``) is a rest of its length.
    public func problem(maxTones: Int) -> String? {
        for (name, sound) in [("found-item", foundItem), ("found-last-item", foundLast)] where sound.count > maxTones {
            return "the \(name) sound has \(sound.count) tones; this Grokker plays at most \(maxTones)"
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
/// driver cannot swing it. (Our model; the Grokker's figures are not published.)
public enum SoundLimits {
    /// Frequencies the piezo sounds, Hz; a tone or click outside them is silent.
    public static let frequencyHz: ClosedRange<UInt16> = 200...8000
}
