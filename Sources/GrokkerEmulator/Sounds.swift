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
