import Foundation
import GrokAudio
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

    /// Per-device failures that are not library errors.
    static func open(_ spec: DeviceSpec, context: DevicePortContext) throws -> any AudioPort {
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
}
