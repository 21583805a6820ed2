// Shared by the examples: a Grokker to talk to. With an ALSA device name as the first
// argument it is a real Grokker on that sound card; without one, an emulated Grokker (its
// region set) behind a simulated cable, paced to the wall clock like real hardware, with the
// vendor guide's tags in front of it (the EPCs its snippets name) and a few others. Each run
// starts from a fresh emulated bench, so a tag the last run programmed is back as it was.
// The examples themselves import only UGrokIt (and this), as an app would.
import Foundation
import GrokAudio
import GrokkerEmulator
import GrokProtocol
import UGrokIt

public enum ExampleBench {
    /// The EPCs the vendor guide's snippets use, all in front of the emulated Grokker.
    public static let guideEPCs = ["35fffffff99c70a063405c48", "35fffffff956734504747454", "1234567890abcdef12345678"]

    /// The emulated Grokker's field: the guide's tags, then five more at 0.4-2 m.
    static var scene: RFScene {
        func bytes(_ hex: String) -> [UInt8] { UgiUtil.stringToData(hex) ?? [] }
        var tags = zip(guideEPCs, [0.5, 0.8, 0.3]).map { epc, meters in
            RFScene.Tag(epc: bytes(epc), placement: .distance(meters: meters))
        }
        for (i, meters) in [0.4, 0.7, 1.0, 1.5, 2.0].enumerated() {
            tags.append(RFScene.Tag(epc: bytes(String(format: "3034257bf7194e4000001a8%01x", i)), placement: .distance(meters: meters)))
        }
        return RFScene(tags: tags)
    }

    /// The reader the example drives.
    public static func reader() throws -> Reader {
        var options = ReaderOptions()
        let arguments = CommandLine.arguments.dropFirst()
        if let device = arguments.first {
            return Reader(name: "alsa:\(device)", options: options) { try ALSAPort(device: device) }
        }
        options.realtime = true
        let bench = FileManager.default.temporaryDirectory
            .appendingPathComponent("ugrokit-example-\(ProcessInfo.processInfo.processIdentifier)").path
        try? FileManager.default.removeItem(atPath: bench)
        let store = try DeviceStateStore.openOrCreate(directory: bench, index: 0)
        try store.update { $0.region = RegionCatalog.find("fcc")?.setting; $0.provisioning.userHasSetRegion = true }
        let scene = scene
        atexit { try? FileManager.default.removeItem(atPath: FileManager.default.temporaryDirectory
            .appendingPathComponent("ugrokit-example-\(ProcessInfo.processInfo.processIdentifier)").path) }
        return Reader(name: "sim:0", options: options) {
            let grokker = try EmulatedGrokker(store: try DeviceStateStore.openOrCreate(directory: bench, index: 0), scene: scene)
            return SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker)
        }
    }
}
