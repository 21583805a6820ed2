// The vendor guide's first snippet: start inventory for all tags, report each tag when it
// is found, stop with completion.
//   swift run InventoryAllTags            (an emulated Grokker)
//   swift run InventoryAllTags hw:1,0     (a Grokker on a sound card)
import Dispatch
import ExampleBench
import Foundation
import UGrokIt

final class Listener: UgiInventoryDelegate, @unchecked Sendable {
    func inventoryTagFound(_ tag: UgiTag, withDetailedPerReadData data: [UgiDetailedPerReadData]?) {
        // tag was found for the first time
        print("found", tag.epc, tag.epc.toTagURI())
    }
}

Ugi.createSingleton(reader: try ExampleBench.reader())
Ugi.singleton().openConnection()
let listener = Listener()
let inventory = try Ugi.singleton().startInventory(
    listener, withConfiguration: UgiRfidConfiguration.config(inventoryType: .locateDistance))
Thread.sleep(forTimeInterval: 3)
let stopped = DispatchSemaphore(value: 0)
Ugi.singleton().activeInventory?.stopInventory {
    // Code to run when inventory is stopped
    print("stopped:", inventory.tags.count, "tags")
    stopped.signal()
}
stopped.wait()
Ugi.releaseSingleton()
