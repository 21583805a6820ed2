import Foundation
import GrokAudio
import GrokFleet
import GrokkerEmulator
import GrokLink

/// Opens the audio port behind a device spec: an emulated Grokker behind a simulated cable
/// for `sim:N`, a sound card for `alsa:NAME`, raw PCM streams for `pcm:IN,OUT`. Wraps it in a recorder under `--record-audio`.
enum DevicePorts {
    /// What a run locks before it opens the port of `spec` (``FleetDevice/portKey``): the
    /// emulated unit's directory as an absolute path, or `alsa:` and the ALSA device name.
    static func portKey(_ spec: DeviceSpec, context: DevicePortContext) -> String {
        switch spec {
        case .emulated(let index):
            let directory = context.bench.stateDirectory(for: index)
            let absolute = directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
            return "sim:" + URL(fileURLWithPath: absolute).standardizedFileURL.path
        case .alsa(let name):
            return "alsa:" + name
        case .pipe(let input, _):
            let absolute = input.hasPrefix("/") ? input : FileManager.default.currentDirectoryPath + "/" + input
            return "pcm:" + URL(fileURLWithPath: absolute).standardizedFileURL.path
        }
    }

    /// How long a command waits for a port another grokctl holds before it gives up.
    static let lockWaitSeconds = 3.0

    /// Opens the port of `spec` under its lock (the same lock a fleet run takes, in
    /// `context.lockDirectory`), so two commands never talk to one Grokker at once: when
    /// another grokctl holds it, waits up to `wait` seconds for it, then refuses with
    /// ``CLIError/deviceBusy(device:pid:command:lockFile:)`` naming the holder. The lock is
    /// released when the port is closed (or freed). Without a lock directory: unlocked.
    static func open(_ spec: DeviceSpec, context: DevicePortContext, wait: Double = lockWaitSeconds) throws -> any AudioPort {
        guard let directory = context.lockDirectory else { return try openUnlocked(spec, context: context) }
        let key = portKey(spec, context: context)
        let lock = try acquire(directory: directory, key: key, device: spec.description, wait: wait)
        do {
            return LockedPort(try openUnlocked(spec, context: context), lock: lock)
        } catch {
            lock.unlock()
            throw error
        }
    }

    /// Takes the port lock of `key`, polling every 50 ms for at most `wait` seconds.
    static func acquire(directory: String, key: String, device: String, wait: Double) throws -> DeviceLock {
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, wait) * 1000))
        while true {
            if let lock = try DeviceLock.acquire(directory: directory, port: key) { return lock }
            if ContinuousClock.now >= deadline {
                let path = DeviceLock.path(directory: directory, fileName: DeviceLock.portLockName(key))
                let holder = DeviceLock.holder(path: path)
                throw CLIError.deviceBusy(device: device, pid: holder?.pid ?? "?", command: holder?.command ?? "?", lockFile: path)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Opens the port of `spec` without its lock: for the fleet engine, which takes the
    /// lock itself before it opens the port (DeviceWorker). Per-device failures that are not library errors.
    static func openUnlocked(_ spec: DeviceSpec, context: DevicePortContext) throws -> any AudioPort {
        let port: any AudioPort
        switch spec {
        case .emulated(let index):
            var random = SystemRandomNumberGenerator()
            let store = try DeviceStateStore.openOrCreate(deviceDirectory: context.bench.stateDirectory(for: index),
                                                          using: &random)
            let grokker = try EmulatedGrokker(store: store, sampleRate: context.sampleRate, bench: RFScene.defaultBench(seed:))
            var cable = context.cable
            cable.deviceClockPPM += grokker.clockErrorPPM
            port = SimulatedCablePort(name: spec.description, sampleRate: context.sampleRate,
                                      configuration: cable, peer: grokker)
        case .alsa(let name):
            port = try ALSAPort(device: name, sampleRate: context.sampleRate, configFile: context.alsaConfig)
        case .pipe(let input, let output):
            // The peer on the other ends (`grokctl emulate`) opens its input first: ours is
            // its input, so it goes first.
            port = try RawPipePort(inputPath: input, outputPath: output, sampleRate: context.sampleRate, opensOutputFirst: true)
        }
        guard let directory = context.recordAudio else { return port }
        return try RecordingPort(wrapping: port, directory: directory)
    }
}

/// What opening a port needs from the command line, as a value that can cross threads.
struct DevicePortContext: Sendable {
    var bench: Bench
    var alsaConfig: String?
    var recordAudio: String?
    var sampleRate = 44_100
    var cable = CableConfiguration.clean
    /// Where the ports' locks are (the state directory's `locks`); `nil`: ports are not locked.
    var lockDirectory: String? = nil

    init(bench: Bench, alsaConfig: String? = nil, recordAudio: String? = nil, lockDirectory: String? = nil) {
        self.bench = bench
        self.alsaConfig = alsaConfig
        self.recordAudio = recordAudio
        self.lockDirectory = lockDirectory
    }

    /// The command line's: its bench, ALSA configuration, audio recording and the state
    /// directory's locks (the fleet runs' too).
    init(_ context: CommandContext) {
        self.init(bench: context.bench, alsaConfig: context.globals.alsaConfig, recordAudio: context.globals.recordAudio,
                  lockDirectory: StateDirectory.locks(environment: context.environment))
    }
}

/// A port opened under its lock: everything goes to the port; closing it (or freeing it)
/// releases the lock, so the next command may open the Grokker.
final class LockedPort: AudioPort {
    let port: any AudioPort
    private let lock: DeviceLock

    init(_ port: any AudioPort, lock: DeviceLock) {
        self.port = port
        self.lock = lock
    }

    var name: String { port.name }
    var sampleRate: Int { port.sampleRate }
    var jackPlugged: Bool? { port.jackPlugged }

    func transfer(output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>) throws(AudioError) {
        try port.transfer(output: output, input: input)
    }

    func close() {
        port.close()
        lock.unlock()
    }

    deinit { lock.unlock() }
}
