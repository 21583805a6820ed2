// The vendor guide's second and third snippets: find one EPC, then a list of EPCs (the
// guide's own literal EPCs: the emulated bench has those tags), with the delegate's
// tag-changed calls (first find, visible again, no longer visible).
//   swift run FindTags [hw:1,0]
import Dispatch
import ExampleBench
import Foundation
import UGrokIt

final class Changes: UgiInventoryDelegate, @unchecked Sendable {
    let lock = NSLock()
    var seen: Set<UgiEpc> = []
    func inventoryTagChanged(_ tag: UgiTag, isFirstFind firstFind: Bool) {
        if firstFind {
            print("found", tag.epc)            // tag was found for the first time
            _ = lock.withLock { seen.insert(tag.epc) }
        } else if tag.isVisible {
            print("visible again", tag.epc)    // tag was not visible, is now visible again
        } else {
            print("no longer visible", tag.epc)
        }
    }
}

Ugi.createSingleton(reader: try ExampleBench.reader())
Ugi.singleton().openConnection()
let configuration = UgiRfidConfiguration.config(inventoryType: .locateDistance)
let done = DispatchSemaphore(value: 0)

// One EPC.
let epc = try UgiEpc(fromString: "35fffffff99c70a063405c48")
let one = Changes()
try Ugi.singleton().startInventory(one, withConfiguration: configuration, withEpc: epc)
Thread.sleep(forTimeInterval: 2)
Ugi.singleton().activeInventory?.stopInventory { done.signal() }
done.wait()

// A list of EPCs.
let epc1 = try UgiEpc(fromString: "35fffffff99c70a063405c48")
let epc2 = try UgiEpc(fromString: "35fffffff956734504747454")
let some = Changes()
try Ugi.singleton().startInventory(some, withConfiguration: configuration, withEpcs: [epc1, epc2])
Thread.sleep(forTimeInterval: 2)
Ugi.singleton().activeInventory?.stopInventory { done.signal() }
done.wait()
Ugi.singleton().closeConnection()
Ugi.releaseSingleton()
let ok = one.lock.withLock { one.seen == [epc] } && some.lock.withLock { some.seen.isSubset(of: [epc1, epc2]) && !some.seen.isEmpty }
print(ok ? "only the tags asked for: OK" : "other tags were reported")
exit(ok ? 0 : 1)
