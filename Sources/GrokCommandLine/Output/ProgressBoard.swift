import Foundation
import GrokBasics
import Synchronization

/// Live progress bars on a terminal, one row per job (a device being flashed, an image
/// being downloaded): percentage, bytes and an ETA from the measured rate
/// (``ETAEstimate``), redrawn in place at most ten times a second, each line cut to the
/// terminal's width (a wrapped line would break the redraw). Safe to update from any
/// thread; it writes straight to the terminal on stderr (only use it when
/// ``Console/isTerminal(_:)`` says stderr is one).
public final class ProgressBoard: Sendable {
    /// What `done` and `total` count.
    public enum Unit: Sendable {
        /// Bytes, shown in KiB with one decimal.
        case kibibytes
        /// Steps of a job, `scale` units per step (so a step can be partly done), shown as whole steps.
        case steps(scale: Int)
    }

    /// What a row's amounts read when its `done` and `total` count something else (a fleet
    /// run's link milliseconds, ``FleetWork``).
    public enum Amounts: Sendable, Hashable {
        /// Steps finished of all the steps.
        case steps(done: Int, total: Int)
        /// Bytes sent of bytes to send, shown in KiB.
        case bytes(done: Int, total: Int)
    }

    private struct Row {
        var label: String
        var phase: String
        var done = 0
        var total = 0
        var estimate = ETAEstimate()
        var amounts: Amounts?
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
    private let columns: Int
    private let origin = ContinuousClock.now
    /// The bar's width when the terminal has room, and the narrowest it gets before it goes.
    static let barWidth = 24
    static let minimumBarWidth = 6

    /// - Parameters:
    ///   - labels: One per row (`sim:0`, an update's name).
    ///   - phase: The phase shown before the first update.
    ///   - unit: What the amounts count (bytes unless said).
    ///   - columns: The terminal's width (default: the terminal on stderr, else `COLUMNS`, else 80).
    public init(labels: [String], phase: String, localizer: Localizer, unit: Unit = .kibibytes,
         sink: FileDescriptorSink = .standardError, columns: Int? = nil) {
        state = Mutex(State(rows: labels.map { Row(label: $0, phase: phase) }))
        self.sink = sink
        self.localizer = localizer
        self.unit = unit
        self.columns = max(1, columns ?? LiveTable.terminalSize(fileDescriptor: sink.fileDescriptor).width)
    }

    /// Row `row` is now in `phase` with `done` of `total` (bytes, or steps × scale, or what
    /// `amounts` says they stand for, which the row then reads).
    public func update(row: Int, phase: String, done: Int, total: Int, amounts: Amounts? = nil, at now: ContinuousClock.Instant = .now) {
        let text: String? = state.withLock { state in
            var item = state.rows[row]
            let phaseChanged = item.phase != phase
            item.estimate.record(time: seconds(now), done: done, total: total)
            item.phase = phase
            item.done = done
            item.total = total
            item.amounts = amounts
            state.rows[row] = item
            if !phaseChanged, let last = state.lastDraw, now - last < .milliseconds(100) { return nil }
            state.lastDraw = now
            return render(&state, now: now)
        }
        if let text { sink.write(text) }
    }

    /// Row `row` ends with `message` in place of its bar.
    public func finish(row: Int, message: String) {
        let text = state.withLock { state in
            state.rows[row].finished = message
            return render(&state, now: .now)
        }
        sink.write(text)
    }

    /// The ETA row `row` shows at `now`, `--:--` when it cannot be told yet.
    func eta(row: Int, at now: ContinuousClock.Instant = .now) -> String {
        state.withLock { state in Self.clock(state.rows[row].estimate.remaining(at: seconds(now))) }
    }

    private func seconds(_ instant: ContinuousClock.Instant) -> Double {
        let elapsed = instant - origin
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private func render(_ state: inout State, now: ContinuousClock.Instant) -> String {
        var text = state.drawnLines > 0 ? "\u{1B}[\(state.drawnLines)A" : ""
        let labelWidth = state.rows.map { TextWidth.of($0.label) }.max() ?? 0
        // One column is kept free: writing the last column leaves some terminals about to wrap.
        let room = max(1, columns - 1)
        for row in state.rows {
            let label = TextWidth.padded(row.label, to: labelWidth) + "  "
            let body = row.finished ?? line(row, now: now, room: room - TextWidth.of(label))
            text += "\r\u{1B}[2K" + LiveTable.cut(label + body, to: room) + "\n"
        }
        state.drawnLines = state.rows.count
        return text
    }

    /// The row's text in at most `room` columns if it can be: first the bar narrows (to
    /// ``minimumBarWidth``), then the amounts go (the short line: phase, bar, percent, ETA)
    /// with the bar as wide as the rest leaves, then the bar goes; what still does not fit
    /// is cut by the caller.
    private func line(_ row: Row, now: ContinuousClock.Instant, room: Int) -> String {
        let fraction = row.total > 0 ? min(1, Double(row.done) / Double(row.total)) : 0
        let eta = Self.clock(row.estimate.remaining(at: seconds(now)))
        let percent = String(Int((fraction * 100).rounded(.down)))
        func bar(_ width: Int) -> String {
            guard width > 0 else { return "" }
            let filled = Int((fraction * Double(width)).rounded(.down))
            return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        }
        func full(_ width: Int) -> String {
            let phase = TextWidth.padded(row.phase, to: 12)
            switch row.amounts {
            case .steps(let done, let total)?:
                return localizer.text(.progressStepsLine, phase, bar(width), percent, String(done), String(total), eta)
            case .bytes(let done, let total)?:
                return localizer.text(.progressLine, phase, bar(width), percent, Self.kibibytes(done), Self.kibibytes(total), eta)
            case nil: break
            }
            switch unit {
            case .kibibytes:
                return localizer.text(.progressLine, phase, bar(width), percent, Self.kibibytes(row.done), Self.kibibytes(row.total), eta)
            case .steps(let scale):
                return localizer.text(.progressStepsLine, phase, bar(width), percent, String(row.done / max(1, scale)),
                                      String(row.total / max(1, scale)), eta)
            }
        }
        func short(_ width: Int) -> String { localizer.text(.progressShortLine, row.phase, bar(width), percent, eta) }
        let widest = full(Self.barWidth)
        var excess = TextWidth.of(widest) - room
        if excess <= 0 { return widest }
        if Self.barWidth - excess >= Self.minimumBarWidth + 2 { return full(Self.barWidth - excess) }
        excess = TextWidth.of(short(Self.barWidth)) - room
        if excess <= 0 { return short(Self.barWidth) }
        if Self.barWidth - excess >= Self.minimumBarWidth { return short(Self.barWidth - excess) }
        return short(0).replacingOccurrences(of: "  ", with: " ")
    }

    /// `12:05` (minutes:seconds); `--:--` for no estimate.
    public static func clock(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "--:--" }
        // Up, so that 0:00 means done, but not for the rounding noise of a clock's arithmetic.
        let total = Int(max(0, seconds - 1e-6).rounded(.up))
        let s = total % 60
        return "\(total / 60):\(s < 10 ? "0" : "")\(s)"
    }

    /// `64.0` (KiB, one decimal).
    static func kibibytes(_ bytes: Int) -> String {
        let tenths = (bytes * 10 + 512) / 1024
        return "\(tenths / 10).\(tenths % 10)"
    }
}
