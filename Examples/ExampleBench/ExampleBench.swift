// Shared by the examples: a Grokker to talk to. With an ALSA device name as the first
// argument it is a real Grokker on that sound card; without one, an emulated Grokker (its
// region set) behind a simulated cable, paced to the wall clock like real hardware.
import Foundation
import GrokAudio
import GrokkerEmulator
import GrokProtocol
import UGrokIt

public enum ExampleBench {
    /// The reader the example drives.
    public static func reader() throws -> Reader {
        var options = ReaderOptions()
        let arguments = CommandLine.arguments.dropFirst()
        if let device = arguments.first {
            return Reader(name: "alsa:\(device)", options: options) { try ALSAPort(device: device) }
        }
        options.realtime = true
        let bench = FileManager.default.temporaryDirectory.appendingPathComponent("ugrokit-example").path
        let store = try DeviceStateStore.openOrCreate(directory: bench, index: 0)
        if store.state.region == nil {
            try store.update { $0.region = RegionCatalog.find("fcc")?.setting; $0.provisioning.userHasSetRegion = true }
        }
        return Reader(name: "sim:0", options: options) {
            let grokker = try EmulatedGrokker(store: try DeviceStateStore.openOrCreate(directory: bench, index: 0))
            return SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker)
        }
    }
}
