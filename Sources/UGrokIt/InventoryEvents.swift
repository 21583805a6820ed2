import GrokProtocol

/// The delegate's calls as values, for Swift-concurrency code (see
/// ``Reader/inventoryEvents(withConfiguration:)``).
public enum UgiInventoryEvent: Sendable {
    case started
    /// The stream ends after ``InventoryStopReason/ok``; LOST_CONNECTION is temporary.
    case stopped(InventoryStopReason)
    case found(UgiTag, detailedPerReadData: [UgiDetailedPerReadData]?)
    case subsequentFinds(UgiTag, numFinds: Int, detailedPerReadData: [UgiDetailedPerReadData]?)
    case changed(UgiTag, isFirstFind: Bool)
    case historyInterval
}

/// A delegate that turns every call into an element of an `AsyncStream`.
final class StreamingDelegate: UgiInventoryDelegate, @unchecked Sendable {
    let continuation: AsyncStream<UgiInventoryEvent>.Continuation

    init(_ continuation: AsyncStream<UgiInventoryEvent>.Continuation) {
        self.continuation = continuation
    }

    func inventoryDidStart() { continuation.yield(.started) }
    func inventoryDidStop(_ result: InventoryStopReason) {
        continuation.yield(.stopped(result))
        if result != .lostConnection { continuation.finish() }
    }
    func inventoryTagFound(_ tag: UgiTag, withDetailedPerReadData data: [UgiDetailedPerReadData]?) {
        continuation.yield(.found(tag, detailedPerReadData: data))
    }
    func inventoryTagSubsequentFinds(_ tag: UgiTag, numFinds: Int, withDetailedPerReadData data: [UgiDetailedPerReadData]?) {
        continuation.yield(.subsequentFinds(tag, numFinds: numFinds, detailedPerReadData: data))
    }
    func inventoryTagChanged(_ tag: UgiTag, isFirstFind: Bool) { continuation.yield(.changed(tag, isFirstFind: isFirstFind)) }
    func inventoryHistoryInterval() { continuation.yield(.historyInterval) }
}

extension Reader {
    /// Starts an inventory whose delegate calls arrive as an `AsyncStream`, which ends when
    /// the inventory stops:
    ///
    /// ```swift
    /// let (inventory, events) = try reader.inventoryEvents(withConfiguration: configuration)
    /// for await event in events {
    ///     if case .found(let tag, _) = event { print(tag.epc) }
    /// }
    /// ```
    public func inventoryEvents(withConfiguration configuration: UgiRfidConfiguration) throws(ConfigurationError)
        -> (inventory: UgiInventory, events: AsyncStream<UgiInventoryEvent>) {
        let (stream, continuation) = AsyncStream.makeStream(of: UgiInventoryEvent.self)
        let inventory = try startInventory(StreamingDelegate(continuation), withConfiguration: configuration)
        return (inventory, stream)
    }
}
