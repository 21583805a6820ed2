import GrokAudio
import GrokProtocol
import Synchronization

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
}

/// One tone of the found-item or found-last-item sound (frequency 0: a rest).
public struct UgiTone: Sendable, Hashable {
    /// Hz; 0 is a rest.
    public var frequencyHz: UInt16
    /// Milliseconds.
    public var durationMs: UInt16

    public init(frequencyHz: UInt16, durationMs: UInt16) {
        self.frequencyHz = frequencyHz
        self.durationMs = durationMs
    }
}

/// A sound to play now (vendor `UgiSounds`).
public enum UgiSound: UInt8, Sendable, Hashable, CaseIterable {
    /// The found-item sound (FOUND_ITEM).
    case foundItem = 1
    /// The found-last-item sound (FOUND_LAST, the one `playSound` sends: 0 on the wire).
    case foundLast = 2
}

extension ReaderSession {
    /// Vendor `setFoundItemSound` and `setFoundLastItemSound`, together (configurations 2
    /// and 3): each at most `maxTonesInSound` tones (``ReaderInfo``, GetVersion byte 41);
    /// more is refused before anything is sent.
    public func setFoundSounds(foundItem: [UgiTone], foundLast: [UgiTone]) throws(ReaderError) {
        let most = Int(info?.maxTonesInSound ?? 255)
        for (name, tones) in [("foundItem", foundItem), ("foundLast", foundLast)] where tones.count > most {
            throw .invalidArgument(field: name, value: "\(tones.count) tones", allowed: "0 to \(most) tones")
        }
        try setFoundItemSound(foundItem)
        try setFoundLastItemSound(foundLast)
    }

    /// Vendor `playSound`. The vendor protocol's only public sound is FOUND_LAST
    /// (`UGI_PLAY_SOUND_FOUND_LAST`, sent as 0); the others are
    /// ``ReaderError/notSupported(port:feature:)`` (nothing is sent).
    public func playSound(_ sound: UgiSound) throws(ReaderError) {
        guard sound == .foundLast else { throw .notSupported(port: port.name, feature: "playSound \(sound)") }
        try playSound(UInt8(0))
    }

    /// Plays `tones` now, the one way the vendor's protocol allows (its only public played
    /// sound is FOUND_LAST): they are set as the found-last-item sound, played, the link is
    /// kept up while they sound (a unit may read its sound table while it plays), and the
    /// found-last-item sound is put back as it was: the one this host set
    /// (``configurationCache``), else the unit's standard one (``FoundSounds/standard``), so
    /// an application using the Grokker later hears what it expects. The sound is put back
    /// even when playing failed; the first error is thrown. More tones than the reader's
    /// `maxTonesInSound` are refused before anything is sent.
    public func playTones(_ tones: [UgiTone]) throws(ReaderError) {
        let most = Int(info?.maxTonesInSound ?? 255)
        guard tones.count <= most else {
            throw .invalidArgument(field: "tones", value: "\(tones.count) tones", allowed: "0 to \(most) tones")
        }
        let hostSet = configurationsSet.contains(.foundLastItemSound)
        let standard = VendorConfiguration.tones(.foundLastItemSound, FoundSounds.standard.foundLast.map {
            GrokProtocol.VendorTone(frequencyHz: $0.frequencyHz, durationMs: $0.durationMs)
        })
        let before = hostSet ? configurationCache[.foundLastItemSound] ?? standard : standard
        try setFoundLastItemSound(tones)
        var failure: ReaderError?
        do {
            try playSound(.foundLast)
            try idle(forAtMost: Double(tones.reduce(0) { $0 + Int($1.durationMs) }) / 1000)
        } catch {
            failure = error
        }
        do {
            try setConfiguration(before)
        } catch {
            failure = failure ?? error
        }
        // A sound the host had not set stays not set (a link reset does not send it again).
        if !hostSet { configurationsSet.remove(.foundLastItemSound) }
        if let failure { throw failure }
    }

    /// Vendor volume, 0 (silent) to 1 (loudest). The vendor protocol carries the volume in
    /// the inventory start (byte 2, scaled to the reader's `numVolumeLevels`), so it is kept
    /// here and sent with every inventory started from now on; nothing is sent now.
    /// Outside 0...1 is refused.
    public func setVolume(_ volume: Double) throws(ReaderError) {
        guard volume.isFinite, (0...1).contains(volume) else {
            throw .invalidArgument(field: "volume", value: String(volume), allowed: "0 to 1")
        }
        self.volume = volume
    }
}

/// The sounds set through a ``Reader``: what the vendor's getters return and what goes to the
/// unit again after every reconnection.
struct ReaderSounds: Sendable {
    var geiger: UgiGeigerCounterSound?
    var foundItem: [UgiTone]?
    var foundLast: [UgiTone]?
}

extension Reader {
    /// Sets a sound as the vendor does: remembered at once, sent now when the reader is
    /// connected (a refusal is thrown and nothing is remembered), else sent by the reader's
    /// thread when it connects, and again after every reconnection.
    private func setSound(_ remember: @escaping @Sendable (inout ReaderSounds) -> Void,
                          send: @escaping @Sendable (ReaderSession) throws(ReaderError) -> Void) async throws(ReaderError) {
        guard inOpenConnection else {
            shared.withLock { remember(&$0.sounds) }
            return
        }
        try await perform { [self] (session) throws(ReaderError) in
            if session.isConnected { try send(session) }
            shared.withLock { remember(&$0.sounds) }
        }
    }

    /// Vendor `setGeigerCounterSound`.
    public func setGeigerCounterSound(_ sound: UgiGeigerCounterSound) async throws(ReaderError) {
        try await setSound({ $0.geiger = sound }, send: { (session) throws(ReaderError) in try session.setGeigerCounterSound(sound) })
    }

    /// Vendor `setFoundItemSound` and `setFoundLastItemSound` together.
    public func setFoundSounds(foundItem: [UgiTone], foundLast: [UgiTone]) async throws(ReaderError) {
        try await setSound({ s in
            s.foundItem = foundItem
            s.foundLast = foundLast
        }, send: { (session) throws(ReaderError) in try session.setFoundSounds(foundItem: foundItem, foundLast: foundLast) })
    }

    /// Vendor `setFoundItemSound`.
    public func setFoundItemSound(_ tones: [UgiTone]) async throws(ReaderError) {
        try await setSound({ $0.foundItem = tones }, send: { (session) throws(ReaderError) in try session.setFoundItemSound(tones) })
    }

    /// Vendor `setFoundLastItemSound`.
    public func setFoundLastItemSound(_ tones: [UgiTone]) async throws(ReaderError) {
        try await setSound({ $0.foundLast = tones }, send: { (session) throws(ReaderError) in try session.setFoundLastItemSound(tones) })
    }

    /// Vendor `getGeigerCounterSound`: the last one set through this reader (`nil` before).
    public var geigerCounterSound: UgiGeigerCounterSound? { shared.withLock { $0.sounds.geiger } }
    /// Vendor `getFoundItemSound`: the last one set through this reader (`nil` before).
    public var foundItemSound: [UgiTone]? { shared.withLock { $0.sounds.foundItem } }
    /// Vendor `getFoundLastItemSound`: the last one set through this reader (`nil` before).
    public var foundLastItemSound: [UgiTone]? { shared.withLock { $0.sounds.foundLast } }

    /// Sends the remembered sounds to a unit just connected; one it refuses is logged
    /// (`connectionErrors`) and kept, so the connection stands.
    func resendSounds(_ session: ReaderSession) {
        let sounds = shared.withLock { $0.sounds }
        do throws(ReaderError) {
            if let geiger = sounds.geiger { try session.setGeigerCounterSound(geiger) }
            if let tones = sounds.foundItem { try session.setFoundItemSound(tones) }
            if let tones = sounds.foundLast { try session.setFoundLastItemSound(tones) }
        } catch {
            session.log(.connectionErrors, "the remembered sounds were not taken again: \(error)")
        }
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
    /// Vendor `setFoundItemSound` / `setFoundLastItemSound` together.
    public func setFoundSounds(foundItem: [UgiTone], foundLast: [UgiTone]) async throws(ReaderError) {
        try await reader.setFoundSounds(foundItem: foundItem, foundLast: foundLast)
    }
    /// Vendor `setFoundItemSound`.
    public func setFoundItemSound(_ tones: [UgiTone]) async throws(ReaderError) { try await reader.setFoundItemSound(tones) }
    /// Vendor `setFoundLastItemSound`.
    public func setFoundLastItemSound(_ tones: [UgiTone]) async throws(ReaderError) { try await reader.setFoundLastItemSound(tones) }
    /// Vendor `getGeigerCounterSound`: the last one set (`nil` before any).
    public func getGeigerCounterSound() -> UgiGeigerCounterSound? { reader.geigerCounterSound }
    /// Vendor `getFoundItemSound`: the last one set (`nil` before any).
    public func getFoundItemSound() -> [UgiTone]? { reader.foundItemSound }
    /// Vendor `getFoundLastItemSound`: the last one set (`nil` before any).
    public func getFoundLastItemSound() -> [UgiTone]? { reader.foundLastItemSound }
    /// Vendor `playSound`.
    public func playSound(_ sound: UgiSound) async throws(ReaderError) { try await reader.playSound(sound) }
    /// Vendor volume (0...1).
    public func setVolume(_ volume: Double) async throws(ReaderError) { try await reader.setVolume(volume) }
}
