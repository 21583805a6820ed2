import Foundation
import GrokBasics
import GrokLedger

/// What one Grokker's turn at a watching station counts as.
public enum WatchResult: String, Sendable, Hashable, Codable {
    /// Done, and something was done to it (provisioned, region set, updated, smoke-tested).
    case provisioned
    /// Done with every step skipped: it already was as the profile wants; nothing was changed.
    case alreadyDone = "already_done"
    /// Done by `verify`'s checks, nothing changed: a unit already done at a station whose
    /// profile says `station.already_done: verify`, or any unit of `verify --watch`.
    case verified
    case failed
    /// Pulled out mid-step or stopped by a stop: plugged back in, it is finished.
    case interrupted
    /// Postponed, refused, declined, halted or left out by the rollout: not done, not failed.
    case incomplete

    /// Steps every turn performs whatever the unit is like.
    static let everyTurn: Set<FleetStep> = [.connect, .identify, .record]
    /// The code of a step `verify` checked (and found as the profile wants).
    static let verifiedCode = "step_verified"

    /// Whether a turn changed or tested the unit: a step done besides those of every turn
    /// and `verify`'s checks (which change nothing).
    static func changedTheUnit(_ steps: [StepOutcome]) -> Bool {
        steps.contains { $0.result == .done && !everyTurn.contains($0.step) && $0.code != verifiedCode }
    }

    public init(_ report: DeviceReport) {
        switch report.outcome {
        case .done:
            if report.steps.contains(where: { $0.result == .done && $0.code == Self.verifiedCode }) {
                self = .verified
            } else {
                self = Self.changedTheUnit(report.steps) ? .provisioned : .alreadyDone
            }
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
    public var verified = 0
    public var failed = 0
    public var interrupted = 0
    public var incomplete = 0

    public init() {}

    init<Results: Sequence<WatchResult>>(_ results: Results) {
        for result in results {
            switch result {
            case .provisioned: provisioned += 1
            case .alreadyDone: alreadyDone += 1
            case .verified: verified += 1
            case .failed: failed += 1
            case .interrupted: interrupted += 1
            case .incomplete: incomplete += 1
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case provisioned, verified, failed, interrupted, incomplete
        case alreadyDone = "already_done"
    }

    /// A status file written before `verified` was counted reads as none verified.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        provisioned = try container.decode(Int.self, forKey: .provisioned)
        alreadyDone = try container.decode(Int.self, forKey: .alreadyDone)
        verified = try container.decodeIfPresent(Int.self, forKey: .verified) ?? 0
        failed = try container.decode(Int.self, forKey: .failed)
        interrupted = try container.decode(Int.self, forKey: .interrupted)
        incomplete = try container.decode(Int.self, forKey: .incomplete)
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
/// times a second while something changes and at least every ``heartbeatSeconds`` while the
/// session runs (so its age tells a station that stopped answering), and once more when the
/// session ends.
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
        /// The step's own progress where one is known (the update's bytes, the smoke test's
        /// seconds); `nil` for a step that reports none.
        public var progress: Progress?
        /// Seconds left of the port's Grokker's whole workflow as of ``WatchStatus/updated``,
        /// estimated as a run's bar does (``FleetWork`` measured by ``ETAEstimate``); `nil`
        /// while there is no rate to estimate from yet.
        public var etaSeconds: Double?

        public init(port: String, holds: String? = nil, serial: String? = nil, step: String? = nil, doing: String,
                    progress: Progress? = nil, etaSeconds: Double? = nil) {
            self.port = port
            self.holds = holds
            self.serial = serial
            self.step = step
            self.doing = doing
            self.progress = progress
            self.etaSeconds = etaSeconds
        }

        enum CodingKeys: String, CodingKey {
            case port, holds, serial, step, doing, progress
            case etaSeconds = "eta_s"
        }
    }

    /// How far a step is: `done` of `total`, in `unit`.
    public struct Progress: Sendable, Hashable, Codable {
        public enum Unit: String, Sendable, Hashable, Codable {
            /// The firmware update's bytes sent, of both images' (`firmware_progress`).
            case bytes
            /// The smoke test's seconds run (on the station's clock), of the profile's `duration_s`.
            case seconds
        }

        public var unit: Unit
        public var done: Double
        public var total: Double

        public init(unit: Unit, done: Double, total: Double) {
            self.unit = unit
            self.done = done
            self.total = total
        }

        /// `done` over `total`, from 0 to 1.
        public var fraction: Double { total > 0 ? min(1, max(0, done / total)) : 0 }
    }

    public var format = 1
    public var pid: Int
    /// When the process `pid` started (field 22 of `/proc/<pid>/stat`, clock ticks since boot):
    /// a pid the kernel gave to another process since has another. `nil` when it could not be
    /// read (and in a status written before it was kept).
    public var pidStart: UInt64?
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

    public init(pid: Int, pidStart: UInt64?, profile: String, profileFile: String, mode: String, runID: String, started: String,
                updated: String, running: Bool, ports: [Port], tally: WatchTally) {
        self.pid = pid
        self.pidStart = pidStart
        self.profile = profile
        self.profileFile = profileFile
        self.mode = mode
        self.runID = runID
        self.started = started
        self.updated = updated
        self.running = running
        self.ports = ports
        self.tally = tally
    }

    enum CodingKeys: String, CodingKey {
        case format, pid, profile, mode, started, updated, running, ports, tally
        case pidStart = "pid_start", profileFile = "profile_file", runID = "run_id"
    }

    /// A running session rewrites its status at least this often (seconds).
    public static let heartbeatSeconds = 1.0
    /// A status that says running and is older than this (seconds) is from a station that
    /// stopped answering: ten heartbeats, so a busy moment is not taken for a hang.
    public static let staleSeconds = 10.0

    /// Where a station keeps it: `<state dir>/watch/status.json`.
    public static func path(stateDirectory: String) -> String { joinPath(stateDirectory, "watch/status.json") }

    /// The system station's (`grokctl-watch@PROFILE`, whose unit sets `XDG_STATE_HOME=/var/lib`).
    public static let systemPath = "/var/lib/grokctl/watch/status.json"

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

    /// What the station that wrote it is doing now.
    public enum StationState: String, Sendable, Hashable, Codable {
        /// Its process (that pid, started at that time) is there and the status is fresh.
        case running
        /// Its process is there, but the status has not been rewritten for ``WatchStatus/staleSeconds``:
        /// hung, stopped (SIGSTOP) or unable to write its status; what it last said may be stale.
        case notAnswering = "not_answering"
        /// The session ended and said so (`running: false`).
        case stopped
        /// The status says running but no process with its pid and start time is there: the
        /// session stopped without closing its status (killed, crashed, the machine restarted).
        case stoppedUnclosed = "stopped_unclosed"

        /// Whether the session's process is still there (running, or not answering).
        public var processIsThere: Bool { self == .running || self == .notAnswering }
    }

    /// What the station that wrote it is doing at `now`: running only while a process with
    /// its pid and its start time exists (a reused pid is another process) and the status is
    /// fresh. A status without ``pidStart`` is judged by its pid alone.
    /// - Parameter processStart: a process's start time by pid, `nil` when there is none.
    public func state(at now: Date = Date(), processStart: (Int) -> UInt64? = WatchStatus.processStart(pid:)) -> StationState {
        guard running else { return .stopped }
        guard pid > 0 else { return .stoppedUnclosed }
        if let pidStart {
            guard processStart(pid) == pidStart else { return .stoppedUnclosed }
        } else {
            guard kill(pid_t(pid), 0) == 0 || errno == EPERM else { return .stoppedUnclosed }
        }
        guard let written = Self.date(updated), now.timeIntervalSince(written) <= Self.staleSeconds else { return .notAnswering }
        return .running
    }

    /// When process `pid` started: field 22 of `/proc/<pid>/stat` (clock ticks since boot);
    /// `nil` when there is no such process (or no `/proc`), or it has exited and waits to be
    /// reaped (a zombie: it runs no more).
    public static func processStart(pid: Int) -> UInt64? {
        guard pid > 0, let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        return processStart(stat: String(decoding: data, as: UTF8.self))
    }

    /// Field 22 of a `/proc/<pid>/stat` line; `nil` for a process that has exited (field 3,
    /// its state, `Z` zombie or `X`/`x` dead).
    static func processStart(stat text: String) -> UInt64? {
        // Field 2 is the command in parentheses, which may hold spaces and parentheses itself:
        // the fields after it start after its last ')', with field 3 (the state) first.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 19, !["Z", "X", "x"].contains(fields[0]) else { return nil }
        return UInt64(fields[19])
    }

    /// `updated` or `started` as a date (they are ``Timestamp/iso8601(_:)``'s).
    public static func date(_ timestamp: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: timestamp)
    }
}

/// One port's Grokker's progress at a station, from its worker's events: the step's own
/// progress where one is known, and the ETA of its whole workflow as a run's bar measures it
/// (``FleetWork``: the work in link time; ``ETAEstimate``: its rate, on the station's clock).
struct PortProgress: Sendable {
    private(set) var work: FleetWork
    private var estimate = ETAEstimate()
    /// When the smoke test under way began (seconds on the caller's clock).
    private var smokeTestStarted: Double?

    /// - Parameter smokeTestSeconds: the profile's smoke test length (0: none).
    init(smokeTestSeconds: Double) {
        work = FleetWork(smokeTestSeconds: smokeTestSeconds)
    }

    /// Takes one of the Grokker's events, heard at `time` seconds.
    mutating func apply(_ event: FleetEvent, at time: Double) {
        work.apply(event)
        switch event.event {
        case "step_started":
            smokeTestStarted = work.current == .smokeTest || work.current == .finalSmokeTest ? time : nil
            estimate.record(time: time, done: work.doneMilliseconds, total: work.totalMilliseconds)
        case "firmware_progress", "step_finished":
            if work.current == nil { smokeTestStarted = nil }
            estimate.record(time: time, done: work.doneMilliseconds, total: work.totalMilliseconds)
        default:
            break
        }
    }

    /// The step's progress at `time`: the update's bytes during the firmware step once its
    /// first `firmware_progress` came, a smoke test's seconds run of the profile's length;
    /// `nil` otherwise.
    func progress(at time: Double) -> WatchStatus.Progress? {
        switch work.current {
        case .firmware?:
            guard let bytes = work.firmwareBytes else { return nil }
            return WatchStatus.Progress(unit: .bytes, done: Double(bytes.done), total: Double(bytes.total))
        case .smokeTest?, .finalSmokeTest?:
            guard let started = smokeTestStarted, work.smokeTestSeconds > 0 else { return nil }
            let seconds = (max(0, time - started) * 10).rounded(.down) / 10
            return WatchStatus.Progress(unit: .seconds, done: min(seconds, work.smokeTestSeconds), total: work.smokeTestSeconds)
        default:
            return nil
        }
    }

    /// Seconds left of the Grokker's workflow at `time` (tenths), `nil` until a rate is measured
    /// and once it finished.
    func eta(at time: Double) -> Double? {
        guard !work.isFinished, let left = estimate.remaining(at: time) else { return nil }
        return (left * 10).rounded() / 10
    }
}
