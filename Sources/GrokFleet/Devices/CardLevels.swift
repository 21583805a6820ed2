import Foundation
import GrokAudio
import GrokBasics
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A sound card as a restore record names it, stable across reboots and re-plugs (which
/// renumber ALSA's cards, `hw:N`), from sysfs (docs/bench.md, "Levels"): a card on USB by its
/// port and model (its ALSA id is kept for people but not compared: identical dongles get
/// `Device`, `Device_1` in the order they appear, which a re-plug can swap); any other card
/// by ALSA's card id (`PCH`).
public struct CardIdentity: Codable, Sendable, Hashable {
    /// The USB port path (`1-1.4`); `nil` for a card not on USB.
    public var usbPath: String?
    /// The USB vendor:product (`0d8c:0014`); `nil` for a card not on USB.
    public var usbModel: String?
    /// ALSA's id of the card; `nil` where sysfs gives none.
    public var cardID: String?

    public init(usbPath: String? = nil, usbModel: String? = nil, cardID: String? = nil) {
        self.usbPath = usbPath
        self.usbModel = usbModel
        self.cardID = cardID
    }

    enum CodingKeys: String, CodingKey {
        case usbPath = "usb_path", usbModel = "usb_model", cardID = "card_id"
    }

    /// What the record's file and lock are named after: `usb-1-1.4-0d8c:0014`, `card-PCH`.
    var key: String {
        if let usbPath { return ["usb", usbPath, usbModel].compactMap { $0 }.joined(separator: "-") }
        return "card-" + (cardID ?? "")
    }

    /// Whether `other` is the same card: same USB port and model, or (not on USB) same ALSA id.
    public func isSame(as other: CardIdentity) -> Bool {
        if let usbPath { return usbPath == other.usbPath && usbModel == other.usbModel }
        return other.usbPath == nil && cardID != nil && cardID == other.cardID
    }

    /// Every ALSA card sysfs lists now (`<sysfs>/class/sound/cardN`), by number.
    public static func cards(sysfs: String = "/sys") -> [Int: CardIdentity] {
        let classDirectory = sysfs + "/class/sound"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: classDirectory)) ?? []
        let usb = Dictionary(USBSoundCard.list(sysfs: sysfs).map { ($0.card, $0) }, uniquingKeysWith: { first, _ in first })
        var cards: [Int: CardIdentity] = [:]
        for name in names {
            guard name.hasPrefix("card"), let number = Int(name.dropFirst(4)), name == "card\(number)" else { continue }
            let id = FileManager.default.contents(atPath: classDirectory + "/" + name + "/id")
                .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
            let identity = CardIdentity(usbPath: usb[number]?.path, usbModel: usb[number]?.vendorProduct,
                                        cardID: id.flatMap { $0.isEmpty ? nil : $0 })
            if identity.usbPath != nil || identity.cardID != nil { cards[number] = identity }
        }
        return cards
    }

    /// The card behind mixer `mixer` (`hw:1`); `nil` for a mixer that is not one card's
    /// (`pulse`, `default`: their names are stable) or a card sysfs does not show.
    public static func of(mixer: String, sysfs: String = "/sys") -> CardIdentity? {
        guard mixer.hasPrefix("hw:"), let number = Int(mixer.dropFirst(3)) else { return nil }
        return cards(sysfs: sysfs)[number]
    }
}

/// What a card's mixer held before grokctl raised it, and who holds it raised: the restore
/// record, `<state dir>/levels/<card>-<hash>.json`, written (and flushed to disk) before any
/// level is changed, removed once the levels are back. A record whose holders have all gone (a
/// crash, a `kill -9`) is applied by the next grokctl (``CardLevels/restoreAbandoned(directory:sysfs:)``),
/// onto the same card only (``card``), wherever ALSA numbers it now.
public struct LevelRecord: Codable, Sendable, Equatable {
    /// One session holding the raised levels: its process and a token per opened port.
    public struct Holder: Codable, Sendable, Equatable {
        public var pid: Int32
        public var token: String

        public init(pid: Int32, token: String) {
            self.pid = pid
            self.token = token
        }
    }

    /// The levels to put back.
    public var saved: MixerLevels
    /// The PCM the first session opened (`hw:1,0`, `pulse`), for people reading the file.
    public var device: String
    public var holders: [Holder]
    /// The card the levels were saved from; `nil` for a mixer that is not one card's
    /// (`pulse`: its name is stable) and in records older than card identities, which are
    /// put back on the mixer of the same name (``saved``'s `mixer`).
    public var card: CardIdentity?

    public init(saved: MixerLevels, device: String, holders: [Holder], card: CardIdentity? = nil) {
        self.saved = saved
        self.device = device
        self.holders = holders
        self.card = card
    }

    /// The mixer the levels were saved from (`hw:1`: the card's number then; `pulse`).
    public var mixer: String { saved.mixer }

    /// The file and lock name: the card's identity, else the mixer's name.
    var key: String { card?.key ?? saved.mixer }

    /// The mixer to put the levels back on, with the cards there are now (``CardIdentity/cards(sysfs:)``):
    /// the one of the card they were saved from, whatever its number now; `nil` when that card
    /// is not there (the record waits for it). A record without a card: its mixer's name.
    public func target(cards: [Int: CardIdentity]) -> String? {
        guard let card else { return saved.mixer }
        return cards.filter { $0.value.isSame(as: card) }.keys.min().map { "hw:\($0)" }
    }
}

/// Mixer levels for Grokker sessions on ALSA cards (docs/bench.md, "Levels"): on opening a
/// Grokker, save the card's levels in a restore record, then raise them (``GrokkerLevels``);
/// on closing the last session on that card, put them back. Several Grokkers on one card
/// share one save (the record's holders count them).
public enum CardLevels {
    /// Raises the levels of `device`'s mixer for a session and returns the hold that puts them
    /// back; `nil` when the device has no mixer (a PCM defined in a configuration file, a
    /// FIFO). The record is written under `directory` before anything changes.
    ///
    /// - Throws: ``FleetError/levelsNotSaved(mixer:path:detail:)`` when the record cannot be
    ///   written (nothing was changed), ``FleetError/lockFailed(path:detail:)``, or the mixer's
    ///   ``AudioError`` when a level cannot be set (the levels already changed are put back).
    /// - Parameter sysfs: where the kernel's sysfs is, to name the card (``CardIdentity``).
    public static func raise(device: String, directory: String, sysfs: String = "/sys",
                             wanted: GrokkerLevels = GrokkerLevels()) throws -> LevelHold? {
        let name = ALSAMixer.controlName(forDevice: device)
        guard let mixer = try? ALSAMixer(name) else { return nil }
        restoreAbandoned(directory: directory, sysfs: sysfs)
        let card = CardIdentity.of(mixer: name, sysfs: sysfs)
        let key = card?.key ?? name
        let lock = try lock(key: key, directory: directory)
        defer { lock.unlock() }
        let path = recordPath(key: key, directory: directory)
        let holder = LevelRecord.Holder(pid: getpid(), token: nextToken())
        if var record = read(path) {
            // Another session on this card raised the levels and saved them: share its save.
            record.holders.append(holder)
            try write(record, to: path, mixer: name)
        } else {
            let record = LevelRecord(saved: try mixer.levels(), device: device, holders: [holder], card: card)
            try write(record, to: path, mixer: name)
        }
        do {
            try mixer.raiseForGrokker(wanted)
        } catch {
            _ = release(holder, key: key, mixer: name, directory: directory, alreadyLocked: true)
            throw error
        }
        let hold = LevelHold(key: key, mixer: name, directory: directory, holder: holder)
        LevelSignals.watch(hold)
        return hold
    }

    /// Puts back every record whose holders have all ended (a crash, a `kill -9`, a power cut)
    /// onto the card it was saved from, wherever ALSA numbers it now, and removes it. Never
    /// fails: a record that cannot be applied, or whose card is not there, stays for the next
    /// start (``waiting(directory:sysfs:)``).
    ///
    /// - Returns: the mixers put back.
    @discardableResult
    public static func restoreAbandoned(directory: String, sysfs: String = "/sys") -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var restored: [String] = []
        var cards: [Int: CardIdentity]?
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = DeviceLock.path(directory: directory, fileName: name)
            guard let peek = read(path), !peek.holders.contains(where: { isAlive($0.pid) }) else { continue }
            if cards == nil { cards = CardIdentity.cards(sysfs: sysfs) }
            guard let mixer = peek.target(cards: cards ?? [:]) else { continue }
            guard let lock = try? lock(key: peek.key, directory: directory) else { continue }
            defer { lock.unlock() }
            guard var record = read(path), record.key == peek.key else { continue }
            record.holders.removeAll { !isAlive($0.pid) }
            if !record.holders.isEmpty { continue }
            if (try? ALSAMixer(mixer).apply(record.saved)) != nil {
                unlink(path)
                restored.append(mixer)
            }
        }
        return restored
    }

    /// The levels each mixer with a record will get back (`grokctl devices`).
    public static func records(directory: String) -> [LevelRecord] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.sorted().filter { $0.hasSuffix(".json") }.compactMap { read(DeviceLock.path(directory: directory, fileName: $0)) }
    }

    /// The records left by grokctls that ended whose card is not there now (unplugged): they
    /// wait, and are put back when the card is plugged in again and a grokctl starts.
    public static func waiting(directory: String, sysfs: String = "/sys") -> [LevelRecord] {
        let cards = CardIdentity.cards(sysfs: sysfs)
        return records(directory: directory).filter { record in
            !record.holders.contains { isAlive($0.pid) } && record.target(cards: cards) == nil
        }
    }

    /// Drops `holder` from the record `key`; the last one out puts the levels back on
    /// `mixer` (the session's own card, open until now) and removes the record. `false` when
    /// the levels could not be put back (the record stays).
    static func release(_ holder: LevelRecord.Holder, key: String, mixer: String, directory: String, alreadyLocked: Bool = false) -> Bool {
        let lock = alreadyLocked ? nil : try? self.lock(key: key, directory: directory)
        defer { lock?.unlock() }
        let path = recordPath(key: key, directory: directory)
        guard var record = read(path) else { return true }
        record.holders.removeAll { $0 == holder || !isAlive($0.pid) }
        if !record.holders.isEmpty {
            return (try? write(record, to: path, mixer: mixer)) != nil
        }
        guard (try? ALSAMixer(mixer).apply(record.saved)) != nil else { return false }
        unlink(path)
        return true
    }

    /// `<directory>/<key>.json`, the key (a card's identity or a mixer's name) made safe as
    /// the port locks' names are.
    static func recordPath(key: String, directory: String) -> String {
        let lockName = DeviceLock.portLockName(key)
        return DeviceLock.path(directory: directory, fileName: String(lockName.dropFirst(5).dropLast(5)) + ".json")
    }

    private static func lock(key: String, directory: String) throws -> DeviceLock {
        try DevicePorts.acquire(directory: directory, key: "levels:" + key, device: key, wait: 3)
    }

    private static func read(_ path: String) -> LevelRecord? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(LevelRecord.self, from: data)
    }

    /// Writes `record` to a temporary file, flushes it to disk and renames it over `path`:
    /// a crash leaves the old record or the new one, never half of one.
    private static func write(_ record: LevelRecord, to path: String, mixer: String) throws(FleetError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(record) else {
            throw .levelsNotSaved(mixer: mixer, path: path, detail: systemErrorName(EINVAL))
        }
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw .levelsNotSaved(mixer: mixer, path: path, detail: systemErrorName(errno)) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        let failure = errno
        close(fd)
        guard written == data.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw .levelsNotSaved(mixer: mixer, path: path, detail: systemErrorName(written == data.count && synced == 0 ? errno : failure))
        }
    }

    private static func isAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    private static let counter = Atomic<Int>(0)

    private static func nextToken() -> String {
        "\(getpid())-\(counter.add(1, ordering: .relaxed).newValue)"
    }
}

/// One session's hold on a card's raised levels; ``release()`` (or freeing it) gives it up,
/// and the last hold on a card puts its levels back.
public final class LevelHold: Sendable {
    /// The mixer (`hw:1`, `pulse`).
    public let mixer: String
    /// The record's key (``LevelRecord``).
    let key: String
    let directory: String
    let holder: LevelRecord.Holder
    private let released = Atomic<Bool>(false)

    init(key: String, mixer: String, directory: String, holder: LevelRecord.Holder) {
        self.key = key
        self.mixer = mixer
        self.directory = directory
        self.holder = holder
    }

    /// Gives up the hold (once); the last hold on the card puts its levels back.
    public func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        LevelSignals.forget(self)
        _ = CardLevels.release(holder, key: key, mixer: mixer, directory: directory)
    }

    deinit { release() }
}

/// Ctrl-C, SIGTERM, SIGHUP and SIGQUIT while levels are raised: where such a signal would end
/// the process the default way (no handler of the command's own), the levels are put back
/// first, then the signal ends the process as it would have. The handler only writes the
/// signal's number to a pipe (async-signal-safe); a thread reads it and does the mixer work.
enum LevelSignals {
    private static let holds = Mutex<[ObjectIdentifier: LevelHold]>([:])
    private static let pipeWrite = Atomic<Int32>(-1)
    private static let installed = Mutex<Bool>(false)
    static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func watch(_ hold: LevelHold) {
        holds.withLock { $0[ObjectIdentifier(hold)] = hold }
        install()
    }

    static func forget(_ hold: LevelHold) {
        _ = holds.withLock { $0.removeValue(forKey: ObjectIdentifier(hold)) }
    }

    private static func install() {
        installed.withLock { done in
            guard !done else { return }
            done = true
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { return }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            pipeWrite.store(fds[1], ordering: .relaxed)
            let readEnd = fds[0]
            Thread.detachNewThread {
                var number: Int32 = 0
                while read(readEnd, &number, MemoryLayout<Int32>.size) == MemoryLayout<Int32>.size {
                    let pending = holds.withLock { Array($0.values) }
                    for hold in pending { hold.release() }
                    signal(number, SIG_DFL)
                    raise(number)
                }
            }
            for number in signals {
                var current = sigaction()
                sigaction(number, nil, &current)
                // Only where the signal would end the process: a command's own handler
                // (a fleet run's stop) closes its ports, and so gives the levels back, itself.
                guard current.__sigaction_handler.sa_handler == nil else { continue }
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { number in
                    var value = number
                    _ = Glibc.write(LevelSignals.pipeWrite.load(ordering: .relaxed), &value, MemoryLayout<Int32>.size)
                }
                sigemptyset(&action.sa_mask)
                action.sa_flags = 0
                sigaction(number, &action, nil)
            }
        }
    }
}
