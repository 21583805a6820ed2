// The vendor guide's tag-programming snippet: while inventory runs, give a tag a new EPC
// through the active inventory, and hear of it in the completion.
//   swift run ProgramTag            (an emulated Grokker with the guide's tags)
//   swift run ProgramTag hw:1,0     (a Grokker on a sound card)
import Dispatch
import ExampleBench
import Foundation
import UGrokIt

/// Signals when the tag to program is in range.
final class Finder: UgiInventoryDelegate, @unchecked Sendable {
    let wanted: UgiEpc
    let found = DispatchSemaphore(value: 0)
    init(_ wanted: UgiEpc) { self.wanted = wanted }
    func inventoryTagFound(_ tag: UgiTag, withDetailedPerReadData data: [UgiDetailedPerReadData]?) {
        if tag.epc == wanted { found.signal() }
    }
}

let oldEpc = try UgiEpc(fromString: "1234567890abcdef12345678")
let newEpc = try UgiEpc(fromString: "35fffffff956734504747454")
Ugi.createSingleton(reader: try ExampleBench.reader())
Ugi.singleton().openConnection()
let finder = Finder(oldEpc)
try Ugi.singleton().startInventory(finder, withConfiguration: UgiRfidConfiguration.config(inventoryType: .inventoryShortRange))
guard finder.found.wait(timeout: .now() + 30) == .success else {
    print("\(oldEpc) is not in range")
    exit(1)
}
let programmed = DispatchSemaphore(value: 0)
nonisolated(unsafe) var outcome: Result<TagAccessStatus, ReaderError>?
Ugi.singleton().activeInventory?.programTag(oldEpc, toEpc: newEpc, withPassword: UGI_NO_PASSWORD, whenCompleted: { result in
    outcome = result
    if case .success(.ok) = result {
        // tag programmed successfully
    } else {
        // tag programming was unsuccessful
    }
    programmed.signal()
})
programmed.wait()
print("program \(oldEpc) -> \(newEpc): \(outcome.map { "\($0)" } ?? "no result")")
let stopped = DispatchSemaphore(value: 0)
Ugi.singleton().activeInventory?.stopInventory { stopped.signal() }
stopped.wait()
Ugi.singleton().closeConnection()
Ugi.releaseSingleton()
if case .success(.ok) = outcome {
    print("\(newEpc): OK")
    exit(0)
}
exit(1)
