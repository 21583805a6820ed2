import Foundation
import GrokAudio
import GrokBasics
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What a card's mixer held before grokctl raised it, and who holds it raised: the restore
/// record, `<state dir>/levels/<mixer>.json`, written (and flushed to disk) before any level is
/// changed, removed once the levels are back. A record whose holders have all gone (a crash, a
/// `kill -9`) is applied by the next grokctl (``CardLevels/restoreAbandoned(directory:)``).
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

    public init(saved: MixerLevels, device: String, holders: [Holder]) {
        self.saved = saved
        self.device = device
        self.holders = holders
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
    public static func raise(device: String, directory: String, wanted: GrokkerLevels = GrokkerLevels()) throws -> LevelHold? {
        let name = ALSAMixer.controlName(forDevice: device)
        guard let mixer = try? ALSAMixer(name) else { return nil }
        restoreAbandoned(directory: directory)
        let lock = try lock(mixer: name, directory: directory)
        defer { lock.unlock() }
        let path = recordPath(mixer: name, directory: directory)
        let holder = LevelRecord.Holder(pid: getpid(), token: nextToken())
        if var record = read(path) {
            // Another session on this card raised the levels and saved them: share its save.
            record.holders.append(holder)
            try write(record, to: path, mixer: name)
        } else {
            let record = LevelRecord(saved: try mixer.levels(), device: device, holders: [holder])
            try write(record, to: path, mixer: name)
        }
        do {
            try mixer.raiseForGrokker(wanted)
        } catch {
            _ = release(holder, mixer: name, directory: directory, alreadyLocked: true)
            throw error
        }
        let hold = LevelHold(mixer: name, directory: directory, holder: holder)
        LevelSignals.watch(hold)
        return hold
    }

    /// Puts back every record whose holders have all ended (a crash, a `kill -9`, a power cut)
    /// and removes it. Never fails: a record that cannot be applied stays for the next start.
    ///
    /// - Returns: the mixers put back.
    @discardableResult
    public static func restoreAbandoned(directory: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var restored: [String] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = DeviceLock.path(directory: directory, fileName: name)
            guard let peek = read(path), !peek.holders.contains(where: { isAlive($0.pid) }) else { continue }
            let mixer = peek.saved.mixer
            guard let lock = try? lock(mixer: mixer, directory: directory) else { continue }
            defer { lock.unlock() }
            guard var record = read(path) else { continue }
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

    /// Drops `holder` from the record of `mixer`; the last one out puts the levels back and
    /// removes the record. `false` when the levels could not be put back (the record stays).
    static func release(_ holder: LevelRecord.Holder, mixer: String, directory: String, alreadyLocked: Bool = false) -> Bool {
        let lock = alreadyLocked ? nil : try? self.lock(mixer: mixer, directory: directory)
        defer { lock?.unlock() }
        let path = recordPath(mixer: mixer, directory: directory)
        guard var record = read(path) else { return true }
        record.holders.removeAll { $0 == holder || !isAlive($0.pid) }
        if !record.holders.isEmpty {
            return (try? write(record, to: path, mixer: mixer)) != nil
        }
        guard (try? ALSAMixer(mixer).apply(record.saved)) != nil else { return false }
        unlink(path)
        return true
    }

    /// `<directory>/<mixer>.json`, the mixer's name made safe as the port locks' names are.
    static func recordPath(mixer: String, directory: String) -> String {
        let lockName = DeviceLock.portLockName(mixer)
        return DeviceLock.path(directory: directory, fileName: String(lockName.dropFirst(5).dropLast(5)) + ".json")
    }

    private static func lock(mixer: String, directory: String) throws -> DeviceLock {
        try DevicePorts.acquire(directory: directory, key: "levels:" + mixer, device: mixer, wait: 3)
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
    let directory: String
    let holder: LevelRecord.Holder
    private let released = Atomic<Bool>(false)

    init(mixer: String, directory: String, holder: LevelRecord.Holder) {
        self.mixer = mixer
        self.directory = directory
        self.holder = holder
    }

    /// Gives up the hold (once); the last hold on the card puts its levels back.
    public func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        LevelSignals.forget(self)
        _ = CardLevels.release(holder, mixer: mixer, directory: directory)
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
