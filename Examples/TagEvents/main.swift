// The vendor guide's delegate snippets: a filter that ignores tags entirely, finds and
// subsequent finds, and the tags list of the active inventory; then closeConnection.
//   swift run TagEvents [hw:1,0]
import Dispatch
import ExampleBench
import Foundation
import UGrokIt

final class Events: UgiInventoryDelegate, @unchecked Sendable {
    let lock = NSLock()
    var finds: [UgiEpc: Int] = [:]
    var ignored: Set<UgiEpc> = []

    func inventoryFilter(_ epc: UgiEpc) -> Bool {
        // Ignore every tag that is not a GS1 SGTIN (header 0x30): no calls at all for them.
        let ignore = epc.bytes.first != 0x30
        if ignore { _ = lock.withLock { ignored.insert(epc) } }
        return ignore
    }

    func inventoryTagFound(_ tag: UgiTag, withDetailedPerReadData data: [UgiDetailedPerReadData]?) {
        print("found", tag.epc)  // tag was found for the first time
        lock.withLock { finds[tag.epc, default: 0] += 1 }
    }

    func inventoryTagSubsequentFinds(_ tag: UgiTag, numFinds num: Int, withDetailedPerReadData data: [UgiDetailedPerReadData]?) {
        lock.withLock { finds[tag.epc, default: 0] += num }  // tag found num more times
    }
}

Ugi.createSingleton(reader: try ExampleBench.reader())
Ugi.singleton().openConnection()
// Subsequent finds are reported only when the configuration asks for them.
var configuration = UgiRfidConfiguration.config(inventoryType: .locateDistance)
configuration.reportSubsequentFinds = true
let events = Events()
try Ugi.singleton().startInventory(events, withConfiguration: configuration)
Thread.sleep(forTimeInterval: 3)
for tag in Ugi.singleton().activeInventory?.tags ?? [] {
    print(tag.epc, "read", tag.readState.totalReads, "times, history", tag.readState.readHistoryString)
}
let done = DispatchSemaphore(value: 0)
Ugi.singleton().activeInventory?.stopInventory { done.signal() }
done.wait()
Ugi.singleton().closeConnection()
Ugi.releaseSingleton()
let (finds, ignored) = events.lock.withLock { (events.finds, events.ignored) }
let ok = !finds.isEmpty && finds.keys.allSatisfy { $0.bytes.first == 0x30 } && finds.values.contains { $0 > 1 } && !ignored.isEmpty
print(ok ? "filtered and counted: OK" : "unexpected events")
exit(ok ? 0 : 1)
