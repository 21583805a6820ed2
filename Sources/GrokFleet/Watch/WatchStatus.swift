import Foundation
import GrokBasics
import GrokLedger

/// What one Grokker's turn at a watching station counts as.
public enum WatchResult: String, Sendable, Hashable, Codable {
    /// Done, and something was done to it (provisioned, region set, updated, smoke-tested).
    case provisioned
    /// Done with every step skipped: it already was as the profile wants; nothing was changed.
    case alreadyDone = "already_done"
    case failed
    /// Pulled out mid-step or stopped by a stop: plugged back in, it is finished.
    case interrupted
    /// Postponed, refused, declined, halted or left out by the rollout: not done, not failed.
    case incomplete

    /// Steps every turn performs whatever the unit is like.
    static let everyTurn: Set<FleetStep> = [.connect, .identify, .record]

    public init(_ report: DeviceReport) {
        switch report.outcome {
        case .done:
            let changed = report.steps.contains { $0.result == .done && !Self.everyTurn.contains($0.step) }
            self = changed ? .provisioned : .alreadyDone
        case .failed: self = .failed
        case .interrupted: self = .interrupted
        case .postponed, .refused, .halted, .notInStage: self = .incomplete
        }
    }
}

/// A watch session's running tally: each Grokker counted once, by its latest result (one
/// provisioned earlier in the session stays provisioned when it comes back already done).
public struct WatchTally: Sendable, Hashable, Codable {
    public var provisioned = 0
    public var alreadyDone = 0
    public var failed = 0
    public var interrupted = 0
    public var incomplete = 0

    public init() {}

    init<Results: Sequence<WatchResult>>(_ results: Results) {
        for result in results {
            switch result {
            case .provisioned: provisioned += 1
            case .alreadyDone: alreadyDone += 1
            case .failed: failed += 1
            case .interrupted: interrupted += 1
            case .incomplete: incomplete += 1
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case provisioned, failed, interrupted, incomplete
        case alreadyDone = "already_done"
    }
}

/// How a watch session ended.
public struct WatchSummary: Sendable, Hashable {
    public var runID: String
    public var started: Date
    public var ended: Date
    /// The ledger run's outcome: interrupted when a Grokker was left interrupted, else failed
    /// when one failed, incomplete when one is not done, succeeded otherwise (also with none).
    public var outcome: RunOutcome
    public var tally: WatchTally
    /// Set when the session could not be closed in the ledger.
    public var ledgerFailure: FleetError?

    static func outcome(_ results: [WatchResult]) -> RunOutcome {
        if results.contains(.interrupted) { return .interrupted }
        if results.contains(.failed) { return .failed }
        if results.contains(.incomplete) { return .incomplete }
        return .succeeded
    }
}

/// What a watching station is doing, for `grokctl station status`: kept in
/// `<state dir>/watch/status.json`, written whole (renamed into place) at most about three
/// times a second while something changes, and once more when the session ends.
public struct WatchStatus: Sendable, Hashable, Codable {
    public struct Port: Sendable, Hashable, Codable {
        public var port: String
        /// What the port holds (the source's token), `nil` when empty.
        public var holds: String?
        public var serial: String?
        /// The step under way (or last begun).
        public var step: String?
        /// The latest event's code (`step_started`, `firmware_progress`...), or `idle`.
        public var doing: String
    }

    public var format = 1
    public var pid: Int
    public var profile: String
    public var profileFile: String
    public var mode: String
    public var runID: String
    public var started: String
    public var updated: String
    /// False once the session ended (its last tally is kept).
    public var running: Bool
    public var ports: [Port]
    public var tally: WatchTally

    enum CodingKeys: String, CodingKey {
        case format, pid, profile, mode, started, updated, running, ports, tally
        case profileFile = "profile_file", runID = "run_id"
    }

    /// Where a station keeps it: `<state dir>/watch/status.json`.
    public static func path(stateDirectory: String) -> String { joinPath(stateDirectory, "watch/status.json") }

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        var options = AtomicFile.Options()
        options.createsDirectories = true
        try AtomicFile.write([UInt8](try encoder.encode(self)) + [0x0A], to: path, options: options)
    }

    /// The status a station left at `path`; `nil` when there is none.
    /// - Throws: ``FleetError/watchStatusUnreadable(path:)`` when it is there and is not one.
    public static func read(path: String) throws(FleetError) -> WatchStatus? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let status = try? JSONDecoder().decode(WatchStatus.self, from: data), status.format == 1 else {
            throw .watchStatusUnreadable(path: path)
        }
        return status
    }

    /// Whether the session that wrote it is still at work: it said it was running and its
    /// process is still there.
    public var isRunning: Bool {
        guard running, pid > 0 else { return false }
        return kill(pid_t(pid), 0) == 0 || errno == EPERM
    }
}
