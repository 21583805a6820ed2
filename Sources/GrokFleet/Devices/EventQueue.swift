import Foundation
import Synchronization

/// Events posted by worker threads and taken by the thread that prints.
public final class EventQueue<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])
    private let available = DispatchSemaphore(value: 0)

    public init() {}

    public func post(_ event: Event) {
        events.withLock { $0.append(event) }
        available.signal()
    }

    /// Waits for at least one event, and returns all that are waiting.
    public func take() -> [Event] {
        available.wait()
        return drain()
    }

    /// Waits for an event at most `seconds`, and returns all that are waiting (none when
    /// the time ran out), so the taker can look at a stop flag meanwhile.
    public func take(waitingAtMost seconds: Double) -> [Event] {
        _ = available.wait(timeout: .now() + seconds)
        return drain()
    }

    private func drain() -> [Event] {
        events.withLock { events in
            let taken = events
            events.removeAll()
            return taken
        }
    }
}
