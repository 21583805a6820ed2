import GrokProtocol

/// The Geiger-counter sound (vendor `UgiGeigerCounterSound` / `setGeigerCounterSound`):
/// clicks at `frequency` whose rate follows the rate of reads.
public struct UgiGeigerCounterSound: Sendable, Hashable {
    /// Hz (the piezo plays 200...8000).
    public var frequency: Int
    /// Length of a click, ms.
    public var clickDurationMsec: Int
    /// Clicks per read (vendor `clickRate`), 0.001...10.
    public var clickRate: Double
    /// Most clicks per second.
    public var maxClicksPerSecond: Int
    /// How long clicks earned by reads may wait to be played, ms (vendor `historyDepthMsec`).
    public var historyDepthMsec: Int

    public init(frequency: Int, clickDurationMsec: Int, clickRate: Double, maxClicksPerSecond: Int, historyDepthMsec: Int) {
        self.frequency = frequency
        self.clickDurationMsec = clickDurationMsec
        self.clickRate = clickRate
        self.maxClicksPerSecond = maxClicksPerSecond
        self.historyDepthMsec = historyDepthMsec
    }

    /// What goes on the wire; values that do not fit are clamped, and the Grokker judges them.
    var wire: GeigerSound {
        GeigerSound(frequencyHz: UInt16(clamping: frequency), clickDurationMs: UInt16(clamping: clickDurationMsec),
                    clickRateThousandths: clickRate.isFinite ? UInt16(clamping: Int((clickRate * 1000).rounded())) : 0,
                    maxClicksPerSecond: UInt16(clamping: maxClicksPerSecond),
                    historyDepthMs: UInt16(clamping: historyDepthMsec))
    }
}

/// One tone of the found-item or found-last-item sound (frequency 0: a rest).
public typealias UgiTone = SoundTone
/// A sound to play now (vendor `UgiSounds`: FOUND_ITEM, FOUND_LAST).
public typealias UgiSound = SoundName

extension ReaderSession {
    /// Vendor `setGeigerCounterSound`. A Grokker refuses values its piezo cannot play
    /// (``ReaderError/rejected(port:command:status:)`` with `invalid_argument`).
    public func setGeigerCounterSound(_ sound: UgiGeigerCounterSound) throws(ReaderError) {
        _ = try call(.setGeigerSound(sound.wire))
    }

    /// Vendor `setFoundItemSound` and `setFoundLastItemSound`, together: each at most
    /// `maxTonesInSound` tones (``ReaderInfo``); the Grokker refuses more, or frequencies
    /// its piezo cannot play.
    public func setFoundSounds(foundItem: [UgiTone], foundLast: [UgiTone]) throws(ReaderError) {
        for (name, tones) in [("foundItem", foundItem), ("foundLast", foundLast)] where tones.count > FoundSounds.maxWireTones {
            throw .invalidArgument(field: name, value: "\(tones.count) tones", allowed: "0 to \(info?.maxTonesInSound ?? 255) tones")
        }
        _ = try call(.setFoundSounds(FoundSounds(foundItem: foundItem, foundLast: foundLast)))
    }

    /// Vendor `playSound` (e.g. FOUND_LAST): plays it now at the volume set with
    /// ``setVolume(_:)``.
    public func playSound(_ sound: UgiSound) throws(ReaderError) {
        _ = try call(.playSound(sound))
    }

    /// Vendor volume, 0 (silent) to 1 (loudest); the Grokker maps it to its
    /// `numVolumeLevels` steps. Outside 0...1 is refused before anything is sent.
    public func setVolume(_ volume: Double) throws(ReaderError) {
        guard volume.isFinite, (0...1).contains(volume) else {
            throw .invalidArgument(field: "volume", value: String(volume), allowed: "0 to 1")
        }
        _ = try call(.setVolume(UInt8((volume * 255).rounded())))
    }
}

extension Reader {
    /// Vendor `setGeigerCounterSound`, on the reader's thread.
    public func setGeigerCounterSound(_ sound: UgiGeigerCounterSound) async throws(ReaderError) {
        try await perform { (session) throws(ReaderError) in try session.setGeigerCounterSound(sound) }
    }

    /// Vendor `setFoundItemSound` and `setFoundLastItemSound`, on the reader's thread.
    public func setFoundSounds(foundItem: [UgiTone], foundLast: [UgiTone]) async throws(ReaderError) {
        try await perform { (session) throws(ReaderError) in try session.setFoundSounds(foundItem: foundItem, foundLast: foundLast) }
    }

    /// Vendor `playSound`, on the reader's thread.
    public func playSound(_ sound: UgiSound) async throws(ReaderError) {
        try await perform { (session) throws(ReaderError) in try session.playSound(sound) }
    }

    /// Vendor volume (0...1), on the reader's thread.
    public func setVolume(_ volume: Double) async throws(ReaderError) {
        try await perform { (session) throws(ReaderError) in try session.setVolume(volume) }
    }
}

extension Ugi {
    /// Vendor `setGeigerCounterSound`.
    public func setGeigerCounterSound(_ sound: UgiGeigerCounterSound) async throws(ReaderError) {
        try await reader.setGeigerCounterSound(sound)
    }
    /// Vendor `setFoundItemSound` / `setFoundLastItemSound`.
    public func setFoundSounds(foundItem: [UgiTone], foundLast: [UgiTone]) async throws(ReaderError) {
        try await reader.setFoundSounds(foundItem: foundItem, foundLast: foundLast)
    }
    /// Vendor `playSound`.
    public func playSound(_ sound: UgiSound) async throws(ReaderError) { try await reader.playSound(sound) }
    /// Vendor volume (0...1).
    public func setVolume(_ volume: Double) async throws(ReaderError) { try await reader.setVolume(volume) }
}
