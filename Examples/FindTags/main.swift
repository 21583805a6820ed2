// The vendor guide's second and third snippets: find one EPC, then a list of EPCs, and
// the delegate's tag-changed calls (first find, visible again, no longer visible).
//   swift run FindTags [hw:1,0]
import Dispatch
import ExampleBench
import Foundation
import UGrokIt

final class Changes: UgiInventoryDelegate, @unchecked Sendable {
    func inventoryTagChanged(_ tag: UgiTag, isFirstFind firstFind: Bool) {
        if firstFind {
            print("found", tag.epc)            // tag was found for the first time
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
let changes = Changes()

// First, everything, to have EPCs to look for.
let all = try Ugi.singleton().startInventory(changes, withConfiguration: configuration)
Thread.sleep(forTimeInterval: 2)
let done = DispatchSemaphore(value: 0)
all.stopInventory { done.signal() }
done.wait()
let epcs = all.tags.map(\.epc)
guard epcs.count >= 2 else {
    print("fewer than two tags in range; nothing to look for")
    exit(1)
}

// One EPC.
let one = try Ugi.singleton().startInventory(changes, withConfiguration: configuration, withEpc: epcs[0])
Thread.sleep(forTimeInterval: 1)
one.stopInventory { done.signal() }
done.wait()

// A list of EPCs.
let some = try Ugi.singleton().startInventory(changes, withConfiguration: configuration, withEpcs: Array(epcs.prefix(2)))
Thread.sleep(forTimeInterval: 1)
some.stopInventory { done.signal() }
done.wait()
Ugi.releaseSingleton()
