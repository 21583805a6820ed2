import Foundation
import GrokProtocol

/// What an emulated Grokker's piezo has played since it was made: the test hook that shows
/// sounds really follow the inventory. Sounds at volume 0 are not played and not counted.
public struct SoundLog: Sendable, Hashable {
    /// Geiger-counter clicks played.
    public var clicks = 0
    /// Tones played (rests excluded), of every sound.
    public var tones = 0
    /// Times the found-item sound was played.
    public var foundItem = 0
    /// Times the found-last-item sound was played.
    public var foundLast = 0
    /// The last sound played.
    public var last: SoundName?
    /// The volume step it was played at (1...numVolumeLevels-1).
    public var lastVolumeLevel = 0
    /// The tones of each sound the host asked to hear (PlaySound, SpeakerTest), oldest first,
    /// as the unit held them when asked: how a melody the host set and played shows (the
    /// unit's directory keeps them too, ``PlayedSounds``).
    public var asked: [[SoundTone]] = []

    public init() {}
}

/// What a Grokker is busy with (vendor 1.8+ ongoing operation).
public enum OngoingOperation: Sendable, Hashable {
    case inactive, inventory, firmwareUpdate, other
}

/// The emulated Grokker's speaker: the sounds the host set, and what an
/// inventory makes it play. Not thread-safe: the device's loop owns it.
final class SoundPlayer {
    private(set) var geiger = GeigerSound.standard
    private(set) var found = FoundSounds.standard
    let volumeLevels: Int
    let maxTones: Int
    private(set) var log = SoundLog()

    private var soundType: UInt8 = 0
    private var inventoryVolume: UInt8 = 255
    private var clickCredit = 0.0
    private var clickBudget = 0.0
    private var lastRoundTime: Double?

    init(volumeLevels: Int, maxTones: Int) {
        self.volumeLevels = max(1, volumeLevels)
        self.maxTones = maxTones
    }

    /// The volume step for a 0...255 volume: 0 is silent, 255 the loudest of the
    /// `volumeLevels` steps (0 ... levels-1), rounded to the nearest.
    func level(for volume: UInt8) -> Int {
        (Int(volume) * (volumeLevels - 1) + 127) / 255
    }

    /// Takes a Geiger-counter sound the host set (SetConfiguration kind 1): any the wire
    /// carries (``GeigerSound/isAudible`` says whether it is heard).
    func setGeiger(_ sound: GeigerSound) {
        geiger = sound
    }

    /// Takes found-item and found-last-item sounds the host set (kinds 2 and 3); false when
    /// one has more tones than the speaker plays or a tone out of range (nothing changes).
    func setFound(_ sounds: FoundSounds) -> Bool {
        guard sounds.problem(maxTones: maxTones) == nil else { return false }
        found = sounds
        return true
    }

    func play(_ name: SoundName, volume: UInt8, count: Int = 1) {
        let step = level(for: volume)
        guard step > 0, count > 0 else { return }
        switch name {
        case .foundItem:
            log.foundItem += count
            log.tones += count * found.foundItem.filter(\.isAudible).count
        case .foundLast:
            log.foundLast += count
            log.tones += count * found.foundLast.filter(\.isAudible).count
        case .geigerClick:
            log.clicks += count
        }
        log.last = name
        log.lastVolumeLevel = step
    }

    /// Plays a sound the host asked for (PlaySound, SpeakerTest) at full volume, and logs
    /// its tones; returns them.
    func playAsked(_ name: SoundName) -> [SoundTone] {
        play(name, volume: 255)
        let tones = name == .foundLast ? found.foundLast : found.foundItem
        log.asked.append(tones)
        return tones
    }

    func startInventory(soundType: UInt8, volume: UInt8) {
        self.soundType = soundType
        inventoryVolume = volume
        clickCredit = 0
        clickBudget = 1
        lastRoundTime = nil
    }

    /// After each round of the inventory at `time`: `reads` reportable reads, `firstFinds`
    /// tags found for the first time, and whether the EPCs searched for are now all found
    /// (for the first time).
    func inventoryRound(reads: Int, firstFinds: Int, foundAll: Bool, at time: Double) {
        switch soundType {
        case 1:
            // Clicks are earned by reads and played no faster than the maximum rate; what
            // cannot be played within the history depth is dropped.
            let dt = max(0, time - (lastRoundTime ?? time))
            lastRoundTime = time
            guard geiger.isAudible else { break }
            let rate = Double(geiger.playableClicksPerSecond)
            clickBudget = min(clickBudget + rate * dt, max(1, rate * dt))
            clickCredit += Double(reads) * Double(geiger.clickRateThousandths) / 1000
            clickCredit = min(clickCredit, max(1, rate * Double(geiger.historyDepthMs) / 1000))
            let clicks = Int(min(clickCredit, clickBudget).rounded(.down))
            clickCredit -= Double(clicks)
            clickBudget -= Double(clicks)
            play(.geigerClick, volume: inventoryVolume, count: clicks)
        case 2:
            play(.foundItem, volume: inventoryVolume, count: firstFinds)
        case 6:
            play(.foundItem, volume: inventoryVolume, count: firstFinds)
            if foundAll { play(.foundLast, volume: inventoryVolume) }
        default:
            break
        }
    }
}

/// The sounds the host asked an emulated Grokker to play, kept in its directory as
/// `sounds.log` so that a person (a trainee at the bench, a test) sees what the unit's
/// piezo played across power cycles and processes: one line per sound, oldest first, e.g.
/// `2026-12-06T21:58:03Z found-last 2000Hz/100ms 0Hz/50ms 3400Hz/250ms` (0 Hz is a rest).
public enum PlayedSounds {
    /// The file's name in the unit's directory.
    public static let fileName = "sounds.log"

    /// The line for `tones` of `name` played at `date`.
    static func line(_ name: SoundName, _ tones: [SoundTone], at date: Date) -> String {
        let label = switch name {
        case .foundItem: "found-item"
        case .foundLast: "found-last"
        case .geigerClick: "geiger-click"
        }
        let stamp = ISO8601DateFormatter().string(from: date)
        return ([stamp, label] + tones.map { "\($0.frequencyHz)Hz/\($0.durationMs)ms" }).joined(separator: " ") + "\n"
    }

    /// Adds a line to the log in `directory`. A log that cannot be written is not the
    /// protocol's business: the unit plays on (the error is dropped).
    static func append(_ name: SoundName, _ tones: [SoundTone], directory: String, at date: Date = Date()) {
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + fileName
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data(line(name, tones, at: date).utf8))
    }

    /// The tones of each sound in the log of the unit in `directory`, oldest first (none
    /// when there is no log); a line this build does not read is skipped.
    public static func read(directory: String) -> [[SoundTone]] {
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + fileName
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count >= 2 else { return nil }
            var tones: [SoundTone] = []
            for word in words.dropFirst(2) {
                let parts = word.split(separator: "/")
                guard parts.count == 2, parts[0].hasSuffix("Hz"), parts[1].hasSuffix("ms"),
                      let hz = UInt16(parts[0].dropLast(2)), let ms = UInt16(parts[1].dropLast(2)) else { return nil }
                tones.append(SoundTone(frequencyHz: hz, durationMs: ms))
            }
            return tones
        }
    }
}
