import Foundation
import GrokAudio
import GrokkerEmulator

/// Opens the audio port behind a device spec: an emulated Grokker behind a simulated cable
/// for `sim:N`, a sound card for `alsa:NAME`, raw PCM streams for `pcm:IN,OUT`. Wraps it in a
/// recorder when the context says where to record (`--record-audio`).
public enum DevicePorts {
    /// What a run locks before it opens the port of `spec` (``FleetDevice/portKey``): the
    /// emulated unit's directory as an absolute path; a sound card's jack by the card, however
    /// it is named (``cardKey(_:sysfs:)``: `usb:1-1.4`, `hw:1,0` and `plughw:CARD=Device` are
    /// one lock when they are one card); `alsa:` and the name for a device that is no one
    /// card's (`pulse`, `default`).
    public static func portKey(_ spec: DeviceSpec, context: DevicePortContext) -> String {
        switch spec {
        case .emulated(let index):
            let directory = context.bench.stateDirectory(for: index)
            let absolute = directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
            return "sim:" + URL(fileURLWithPath: absolute).standardizedFileURL.path
        case .alsa(let name):
            return cardKey(name, sysfs: context.sysfs) ?? "alsa:" + name
        case .usb(let path):
            return "usb:" + path
        case .pipe(let input, _):
            let absolute = input.hasPrefix("/") ? input : FileManager.default.currentDirectoryPath + "/" + input
            return "pcm:" + URL(fileURLWithPath: absolute).standardizedFileURL.path
        }
    }

    /// Opens the port of `spec` under its lock (the same lock a fleet run takes, in
    /// `context.lockDirectory`), so two commands never talk to one Grokker at once: when
    /// another process holds it, waits up to `wait` seconds (by default the context's
    /// ``DevicePortContext/lockWait``) for it, then refuses with
    /// ``FleetError/deviceBusy(device:pid:command:lockFile:)`` naming the holder. The lock is
    /// released when the port is closed (or freed). Without a lock directory: unlocked.
    public static func open(_ spec: DeviceSpec, context: DevicePortContext, wait: Double? = nil) throws -> any AudioPort {
        guard let directory = context.lockDirectory else { return try openUnlocked(spec, context: context) }
        let key = portKey(spec, context: context)
        let lock = try acquire(directory: directory, key: key, device: spec.description, wait: wait ?? context.lockWait)
        do {
            return ReleasingPort(try openUnlocked(spec, context: context), release: lock.unlock)
        } catch {
            lock.unlock()
            throw error
        }
    }

    /// Takes the port lock of `key`, polling every 50 ms for at most `wait` seconds.
    public static func acquire(directory: String, key: String, device: String, wait: Double) throws -> DeviceLock {
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, wait) * 1000))
        while true {
            if let lock = try DeviceLock.acquire(directory: directory, port: key) { return lock }
            if ContinuousClock.now >= deadline {
                let path = DeviceLock.path(directory: directory, fileName: DeviceLock.portLockName(key))
                let holder = DeviceLock.holder(path: path)
                throw FleetError.deviceBusy(device: device, pid: holder?.pid ?? "?", command: holder?.command ?? "?", lockFile: path)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Opens the port of `spec` without its lock: for the fleet engine, which takes the
    /// lock itself before it opens the port (DeviceWorker). Per-device failures that are not library errors.
    public static func openUnlocked(_ spec: DeviceSpec, context: DevicePortContext) throws -> any AudioPort {
        let port: any AudioPort
        switch spec {
        case .emulated(let index):
            // The port holds the Grokker the bench says (ports.json; by default its own), or
            // nothing: then its jack is empty, as a card's with no Grokker in it.
            guard case .unit(let unit) = try context.bench.content(ofPort: index) else {
                let empty = SimulatedCablePort(name: spec.description, sampleRate: context.sampleRate,
                                               configuration: context.cable, peer: EmptyJack())
                empty.plugged = false
                port = empty
                break
            }
            var random = SystemRandomNumberGenerator()
            let store = try DeviceStateStore.openOrCreate(deviceDirectory: context.bench.stateDirectory(for: unit),
                                                          using: &random)
            let grokker = try EmulatedGrokker(store: store, sampleRate: context.sampleRate, bench: RFScene.defaultBench(seed:))
            var cable = context.cable
            cable.deviceClockPPM += grokker.clockErrorPPM
            port = BenchPort(SimulatedCablePort(name: spec.description, sampleRate: context.sampleRate,
                                                configuration: cable, peer: grokker),
                             bench: context.bench, port: index, unit: unit)
        case .usb(let path):
            guard let card = USBSoundCard.find(path: path, sysfs: context.sysfs) else {
                throw FleetError.usbCardNotFound(path: path, plugged: USBSoundCard.list(sysfs: context.sysfs).map { "usb:" + $0.path })
            }
            port = try openALSA("hw:\(card.card),0", context: context)
        case .alsa(let name):
            port = try openALSA(name, context: context)
        case .pipe(let input, let output):
            // The peer on the other ends (`grokctl emulate`) opens its input first: ours is
            // its input, so it goes first.
            port = try RawPipePort(inputPath: input, outputPath: output, sampleRate: context.sampleRate, opensOutputFirst: true)
        }
        guard let directory = context.recordAudio else { return port }
        return try RecordingPort(wrapping: port, directory: directory)
    }

    /// Opens ALSA device `name`, raising its card's levels for the session unless the context
    /// keeps them (``CardLevels``).
    private static func openALSA(_ name: String, context: DevicePortContext) throws -> any AudioPort {
        let port: any AudioPort
        do {
            // A card runs at a rate it has (44.1 or 48 kHz, the protocol has both), never
            // through plug's resampler unless the user named a plug device.
            let plug = ALSAPort.isPlugDevice(name)
            let rate = plug ? context.sampleRate : try ALSAPort.nativeRate(device: name, configFile: context.alsaConfig)
            let card = try ALSAPort(device: name, sampleRate: rate, configFile: context.alsaConfig, resample: plug)
            if let directory = context.levelsDirectory, !context.keepLevels {
                do {
                    if let hold = try CardLevels.raise(device: name, directory: directory, sysfs: context.sysfs) {
                        port = ReleasingPort(card, release: hold.release)
                    } else {
                        port = card
                    }
                } catch {
                    card.close()
                    throw error
                }
            } else {
                port = card
            }
        }
        return port
    }
}

/// What opening a port needs (the bench, the ALSA configuration, where to record, the
/// locks), as a value that can cross threads.
public struct DevicePortContext: Sendable {
    public var bench: Bench
    /// An ALSA configuration file to read instead of the system's (`--alsa-config`).
    public var alsaConfig: String?
    /// Where every port's audio is recorded (`--record-audio`); `nil`: not recorded.
    public var recordAudio: String?
    public var sampleRate = 44_100
    /// The simulated cable of emulated Grokkers.
    public var cable = CableConfiguration.clean
    /// Where the ports' locks are (the state directory's `locks`); `nil`: ports are not locked.
    public var lockDirectory: String? = nil
    /// How long opening a port waits for another grokctl that holds it (`--lock-wait`).
    public var lockWait: Double
    /// Where the restore records of raised mixer levels are kept (the state directory's
    /// `levels`); `nil`: levels are left alone (nothing could restore them after a crash).
    public var levelsDirectory: String? = nil
    /// Leave the cards' levels as they are (`--keep-levels`).
    public var keepLevels = false
    /// Where the kernel's sysfs is, for `usb:` names (tests pass a tree of their own).
    public var sysfs = "/sys"
    /// The station's remembered link settings (the state directory's `link-settings.json`);
    /// `nil`: nothing is remembered, every Grokker is configured anew.
    public var linkSettings: LinkSettingFile? = nil

    /// The wait when none is given: 3 s, long enough for a command just finishing.
    public static let defaultLockWait = 3.0

    public init(bench: Bench, alsaConfig: String? = nil, recordAudio: String? = nil, lockDirectory: String? = nil,
                lockWait: Double = defaultLockWait, levelsDirectory: String? = nil, keepLevels: Bool = false,
                linkSettings: LinkSettingFile? = nil) {
        self.levelsDirectory = levelsDirectory
        self.keepLevels = keepLevels
        self.bench = bench
        self.linkSettings = linkSettings
        self.alsaConfig = alsaConfig
        self.recordAudio = recordAudio
        self.lockDirectory = lockDirectory
        self.lockWait = lockWait
    }
}

/// A port with something to give back when it closes (the Grokker's lock, the raised levels
/// of its card): everything goes to the port; closing it, or freeing it, gives the thing
/// back (each `release` may be called more than once).
public final class ReleasingPort: AudioPort {
    public let port: any AudioPort
    private let release: @Sendable () -> Void

    public init(_ port: any AudioPort, release: @escaping @Sendable () -> Void) {
        self.port = port
        self.release = release
    }

    public var name: String { port.name }
    public var sampleRate: Int { port.sampleRate }
    public var jackPlugged: Bool? { port.jackPlugged }
    public var levelShortfall: LevelShortfall? { port.levelShortfall }

    public func transfer(output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>) throws(AudioError) {
        try port.transfer(output: output, input: input)
    }

    public func close() {
        port.close()
        release()
    }

    deinit { release() }
}

extension DevicePorts {
    /// `spec` as a unit of a fleet run: its name, its port's lock key and how to open its
    /// port (unlocked: the run takes the port's lock itself before it opens it).
    public static func fleetDevice(_ spec: DeviceSpec, context: DevicePortContext) -> FleetDevice {
        FleetDevice(name: spec.description, portKey: portKey(spec, context: context), cardModel: soundCardModel(spec, sysfs: context.sysfs),
                    usbPath: usbPath(spec, sysfs: context.sysfs)) {
            try openUnlocked(spec, context: context)
        }
    }

    /// The lock key of the card ALSA device `name` names (a Grokker is in a card's jack,
    /// whichever of its PCMs is opened): `usb:` and its port path for a card on USB (the key a
    /// `usb:` name has), `card:` and ALSA's id for another card sysfs shows; `nil` when the
    /// name names no card, or one sysfs does not show.
    public static func cardKey(_ name: String, sysfs: String = "/sys") -> String? {
        guard let argument = USBSoundCard.cardArgument(of: name) else { return nil }
        let cards = CardIdentity.cards(sysfs: sysfs)
        let found: CardIdentity? = switch argument {
        case .number(let number): cards[number]
        case .id(let id): cards.values.first { $0.cardID == id }
        }
        guard let found else { return nil }
        if let path = found.usbPath { return "usb:" + path }
        return found.cardID.map { "card:" + $0 }
    }

    /// The USB port of the sound card `spec` leads to (`1-1.4`): a `usb:` name's own, or the
    /// port of the card an ALSA name names (``USBSoundCard/card(forDevice:in:)``); `nil` for
    /// emulated Grokkers, raw PCM streams, names that name no card and cards not on USB.
    public static func usbPath(_ spec: DeviceSpec, sysfs: String = "/sys") -> String? {
        switch spec {
        case .usb(let path): path
        case .alsa(let name): USBSoundCard.card(forDevice: name, in: USBSoundCard.list(sysfs: sysfs))?.path
        case .emulated, .pipe: nil
        }
    }
}
