// The vendor guide's tag-programming snippet: while inventory runs, give a tag a new EPC.
//   swift run ProgramTag [hw:1,0]
// Uses a ReaderSession (the synchronous reader under Reader) so each step reads in order.
import ExampleBench
import Foundation
import GrokAudio
import GrokkerEmulator
import GrokProtocol
import UGrokIt

let bench = FileManager.default.temporaryDirectory.appendingPathComponent("ugrokit-example-program").path
let port: any AudioPort
if let device = CommandLine.arguments.dropFirst().first {
    port = try ALSAPort(device: device)
} else {
    let store = try DeviceStateStore.openOrCreate(directory: bench, index: 0)
    if store.state.region == nil {
        try store.update { $0.region = RegionCatalog.find("fcc")?.setting; $0.provisioning.userHasSetRegion = true }
    }
    port = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean,
                              peer: try EmulatedGrokker(store: try DeviceStateStore.openOrCreate(directory: bench, index: 0)))
}
let session = try ReaderSession(port: port)
try session.connect()
let configuration = UgiRfidConfiguration.config(inventoryType: .inventoryShortRange)
try session.startInventory(configuration)
try session.collect(forAtMost: 1)
guard let first = session.takeReports().first, let old = try? UgiEpc(bytes: first.epc) else {
    print("no tag in range")
    exit(1)
}
var generator = SystemRandomNumberGenerator()
let new = UgiEpc.newUGrokItEpc(using: &generator)
let result = try session.programTag(old, to: new)
print("program \(old) -> \(new): \(result)")
try session.stopInventory()
session.close()
exit(result == .ok ? 0 : 1)
