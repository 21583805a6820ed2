import Foundation
import Synchronization

/// Live progress bars on a terminal, one row per job (a device being flashed, an image
/// being downloaded): percentage, bytes and an ETA from the rate so far, redrawn in place
/// at most ten times a second. Safe to update from any thread; it writes straight to the
/// terminal on stderr (only use it when ``Console/isTerminal(_:)`` says stderr is one).
final class ProgressBoard: Sendable {
    /// What `done` and `total` count.
    enum Unit: Sendable {
        /// Bytes, shown in KiB with one decimal.
        case kibibytes
        /// Steps of a job, `scale` units per step (so a step can be partly done), shown as whole steps.
        case steps(scale: Int)
    }

    private struct Row {
        var label: String
        var phase: String
        var done = 0
        var total = 0
        var rateStart: (time: ContinuousClock.Instant, done: Int)?
        var finished: String?
    }

    private struct State {
        var rows: [Row]
        var drawnLines = 0
        var lastDraw: ContinuousClock.Instant?
    }

    private let state: Mutex<State>
    private let sink: FileDescriptorSink
    private let localizer: Localizer
    private let unit: Unit
    private let width = 24

    /// - Parameters:
    ///   - labels: One per row (`sim:0`, an update's name).
    ///   - phase: The phase shown before the first update.
    ///   - unit: What the amounts count (bytes unless said).
    init(labels: [String], phase: String, localizer: Localizer, unit: Unit = .kibibytes,
         sink: FileDescriptorSink = .standardError) {
        state = Mutex(State(rows: labels.map { Row(label: $0, phase: phase) }))
        self.sink = sink
        self.localizer = localizer
        self.unit = unit
    }

    /// Row `row` is now in `phase` with `done` of `total` bytes.
    func update(row: Int, phase: String, done: Int, total: Int) {
        let now = ContinuousClock.now
        let text: String? = state.withLock { state in
            var item = state.rows[row]
            let phaseChanged = item.phase != phase
            if phaseChanged || item.rateStart == nil || done < item.done { item.rateStart = (now, done) }
            item.phase = phase
            item.done = done
            item.total = total
            state.rows[row] = item
            if !phaseChanged, let last = state.lastDraw, now - last < .milliseconds(100) { return nil }
            state.lastDraw = now
            return render(&state, now: now)
        }
        if let text { sink.write(text) }
    }

    /// Row `row` ends with `message` in place of its bar.
    func finish(row: Int, message: String) {
        let text = state.withLock { state in
            state.rows[row].finished = message
            return render(&state, now: .now)
        }
        sink.write(text)
    }

    private func render(_ state: inout State, now: ContinuousClock.Instant) -> String {
        var text = state.drawnLines > 0 ? "\u{1B}[\(state.drawnLines)A" : ""
        let labelWidth = state.rows.map { TextWidth.of($0.label) }.max() ?? 0
        for row in state.rows {
            let label = row.label + String(repeating: " ", count: max(0, labelWidth - TextWidth.of(row.label)))
            text += "\r\u{1B}[2K" + label + "  " + (row.finished ?? line(row, now: now)) + "\n"
        }
        state.drawnLines = state.rows.count
        return text
    }

    private func line(_ row: Row, now: ContinuousClock.Instant) -> String {
        let fraction = row.total > 0 ? min(1, Double(row.done) / Double(row.total)) : 0
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        var eta = "--:--"
        if let start = row.rateStart, row.done > start.done, row.total > row.done {
            let elapsed = now - start.time
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if seconds > 0.2 {
                let remaining = Double(row.total - row.done) / (Double(row.done - start.done) / seconds)
                eta = Self.clock(remaining)
            }
        } else if row.total > 0, row.done >= row.total {
            eta = "0:00"
        }
        let phase = row.phase.padding(toLength: max(row.phase.count, 12), withPad: " ", startingAt: 0)
        let percent = String(Int((fraction * 100).rounded(.down)))
        switch unit {
        case .kibibytes:
            return localizer.text(.progressLine, phase, bar, percent, Self.kibibytes(row.done), Self.kibibytes(row.total), eta)
        case .steps(let scale):
            return localizer.text(.progressStepsLine, phase, bar, percent, String(row.done / max(1, scale)),
                                  String(row.total / max(1, scale)), eta)
        }
    }

    /// `12:05` (minutes:seconds).
    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--:--" }
        let total = Int(seconds.rounded(.up))
        let s = total % 60
        return "\(total / 60):\(s < 10 ? "0" : "")\(s)"
    }

    /// `64.0` (KiB, one decimal).
    static func kibibytes(_ bytes: Int) -> String {
        let tenths = (bytes * 10 + 512) / 1024
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// Events posted by worker threads and taken by the thread that prints.
final class EventQueue<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])
    private let available = DispatchSemaphore(value: 0)

    func post(_ event: Event) {
        events.withLock { $0.append(event) }
        available.signal()
    }

    /// Waits for at least one event, and returns all that are waiting.
    func take() -> [Event] {
        available.wait()
        return drain()
    }

    /// Waits for an event at most `seconds`, and returns all that are waiting (none when
    /// the time ran out), so the taker can look at a stop flag meanwhile.
    func take(waitingAtMost seconds: Double) -> [Event] {
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
