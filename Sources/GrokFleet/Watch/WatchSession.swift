import Foundation
import GrokBasics
import GrokLedger
import Synchronization

/// A station that watches its bench (`grokctl provision --watch`, issue 26): it runs until
/// stopped, polls every watched port (``WatchSource``) and, when a Grokker appears on one,
/// works it through the profile's workflow on a thread of its own (the same ``DeviceWorker``
/// a run uses, recording every step into one ledger run for the whole session). A port is
/// worked by one worker at a time; every port at once. A Grokker already as the profile wants
/// has every step skipped (judged from the unit, nothing is changed: "already done"); one
/// pulled out mid-step has that step recorded `interrupted` and is finished when it is plugged
/// back in, on any port (an interrupted upload resumes from the station's upload journal).
/// A stop (``FleetRunOptions/cancellation``) ends the steps in flight at their safe points,
/// as a run's stop does, and the session returns its summary (docs/fleet.md, "Watching the bench").
public final class WatchSession: Sendable {
    /// What the caller hears, on its own thread.
    public enum Event: Sendable {
        /// A port to watch appeared (a sound card plugged into the hub), after the start.
        case portAdded(port: String)
        /// A watched port went away (its sound card was pulled out).
        case portRemoved(port: String)
        /// A Grokker is in the port now (`holds`: the source's token for it).
        case grokkerPlugged(port: String, holds: String)
        /// The port's Grokker was pulled out.
        case portEmptied(port: String)
        /// A worker's event (step started, finished, the update's progress...).
        case fleet(FleetEvent)
        /// A worker finished its Grokker: the report and what it counts as.
        case deviceFinished(port: String, report: DeviceReport, result: WatchResult)
        /// The station's status changed (for a live display and the status file).
        case status(WatchStatus)
    }

    public let runner: FleetRunner
    public let source: any WatchSource
    /// How often the ports are looked at (seconds).
    public let pollInterval: Double
    /// Where the status is kept for `grokctl station status` (`<state>/watch/status.json`);
    /// `nil`: not written.
    public let statusFile: String?
    /// Polled at least every `pollInterval`: once true, the session stops (a signal).
    public let stopRequested: @Sendable () -> Bool
    /// How the ports are opened (the bench, ALSA, the locks).
    public let ports: DevicePortContext
    private let queue = EventQueue<Posted>()

    enum Posted: Sendable {
        case fleet(FleetEvent)
        case finished(port: String, report: DeviceReport)
    }

    /// - Parameters:
    ///   - options: the run's options; ``FleetRunOptions/unplugInterrupts`` is set, and
    ///     ``FleetRunOptions/verifyAlreadyDone`` as the profile's `station.already_done` says.
    ///   - decider: who decides (the profile's policy: a station asks no one).
    public init(profile: Profile, firmware: FleetFirmware?, decider: any ConfigurationDelegate, recorder: any LedgerStore,
                options: FleetRunOptions, source: any WatchSource, ports: DevicePortContext, pollInterval: Double = 0.25, statusFile: String? = nil,
                stopRequested: @escaping @Sendable () -> Bool = { false }) {
        var options = options
        options.unplugInterrupts = true
        options.verifyAlreadyDone = profile.station?.alreadyDone == .verify
        let queue = self.queue
        let delegate = EventStreamDelegate(decider: decider) { queue.post(.fleet($0)) }
        runner = FleetRunner(profile: profile, firmware: firmware, delegate: delegate, recorder: recorder, options: options)
        self.source = source
        self.ports = ports
        self.pollInterval = pollInterval
        self.statusFile = statusFile
        self.stopRequested = stopRequested
    }

    /// What one port is doing, as the session tracks it.
    struct PortState {
        var holds: String?
        /// The token the last worker was started for (not again while it stays).
        var worked: String?
        var working = false
        /// Refused because another of this session's workers still held the Grokker (moved
        /// before its worker had ended): tried again once another worker ends.
        var retry = false
        var serial: String?
        var step: String?
        var doing: String?
        /// The worker's Grokker's progress and ETA (from its events), while one works.
        var progress: PortProgress?
    }

    /// Watches until stopped (blocking the calling thread); `handle` hears every event on it.
    /// - Throws: ``FleetError/recorderFailed(operation:subject:cause:)`` when the session
    ///   cannot be begun in the ledger; the source's error when it cannot be read at the start.
    public func run(handle: (Event) -> Void) throws(FleetError) -> WatchSummary {
        let options = runner.options
        let started = options.clock()
        let recording = try runner.beginLedgerRun(at: started)
        var ports: [String: PortState] = [:]
        var tally = WatchTally()
        /// Each Grokker's latest result, by serial (a Grokker without a serial by port and time).
        var results: [String: WatchResult] = [:]
        var lastStatus = Date.distantPast
        var lastScan = Date.distantPast
        var changed = true
        let pid = Int(getpid())
        let pidStart = WatchStatus.processStart(pid: pid)
        let smokeTestSeconds = runner.profile.smokeTest?.duration ?? 0
        /// The progress's clock: seconds since the session began (wall clock, as a run's bars).
        let origin = Date()

        func status(_ now: Date) -> WatchStatus {
            let time = now.timeIntervalSince(origin)
            return WatchStatus(pid: pid, pidStart: pidStart, profile: runner.profile.name, profileFile: runner.profile.file,
                               mode: options.mode.rawValue, runID: options.runID, started: Timestamp.iso8601(started),
                               updated: Timestamp.iso8601(now), running: true,
                               ports: ports.filter { $0.value.holds != nil || $0.value.working }.sorted { $0.key.localizedStandardCompare($1.key) == .orderedAscending }
                                   .map { key, state in
                                       let progress = state.working ? state.progress : nil
                                       return WatchStatus.Port(port: key, holds: state.holds, serial: state.serial, step: state.step,
                                                               doing: state.working ? (state.doing ?? "starting") : "idle",
                                                               progress: progress?.progress(at: time), etaSeconds: progress?.eta(at: time))
                                   },
                               tally: tally)
        }
        func publish(force: Bool) {
            let now = Date()
            let due = now.timeIntervalSince(lastStatus)
            // Something changed (at most about three times a second), or a heartbeat: the
            // progress and ETA move with the clock, and the file's age tells a station that hangs.
            guard force || (changed && due >= 0.3) || due >= WatchStatus.heartbeatSeconds else { return }
            lastStatus = now
            changed = false
            let current = status(now)
            if let statusFile { try? current.write(to: statusFile) }
            handle(.status(current))
        }

        var firstScan = true
        while true {
            if stopRequested() { options.cancellation.cancel() }
            let stopping = options.cancellation.isCancelled
            if stopping, !ports.values.contains(where: \.working) { break }
            if !stopping, Date().timeIntervalSince(lastScan) >= pollInterval {
                lastScan = Date()
                let busy = Set(ports.filter(\.value.working).keys)
                var scanned: [WatchedPort]?
                do {
                    scanned = try source.scan(busy: busy)
                } catch {
                    if firstScan { throw error }
                    // Unreadable for a moment (a file being replaced): the ports keep what
                    // they held, and are looked at again next time.
                }
                let seen = Set((scanned ?? []).map(\.spec.description))
                for (key, state) in ports where scanned != nil && !seen.contains(key) && !state.working {
                    if state.holds != nil { handle(.portEmptied(port: key)) }
                    handle(.portRemoved(port: key))
                    ports[key] = nil
                    changed = true
                }
                for watched in scanned ?? [] {
                    let key = watched.spec.description
                    if ports[key] == nil, !firstScan { handle(.portAdded(port: key)) }
                    var state = ports[key] ?? PortState()
                    if state.holds != watched.holds {
                        if let holds = watched.holds {
                            handle(.grokkerPlugged(port: key, holds: holds))
                        } else if state.holds != nil {
                            handle(.portEmptied(port: key))
                            state.serial = nil
                            state.step = nil
                            state.doing = nil
                        }
                        state.holds = watched.holds
                        changed = true
                    }
                    if watched.holds == nil {
                        state.worked = nil
                        state.retry = false
                    }
                    if let holds = watched.holds, !state.working, state.worked != holds {
                        state.worked = holds
                        state.working = true
                        state.doing = "starting"
                        state.step = nil
                        state.progress = PortProgress(smokeTestSeconds: smokeTestSeconds)
                        changed = true
                        start(watched.spec, recording: recording)
                    }
                    ports[key] = state
                }
                firstScan = false
            }
            for posted in queue.take(waitingAtMost: min(pollInterval, 0.1)) {
                switch posted {
                case .fleet(let event):
                    if var state = ports[event.device] {
                        if let serial = event.serial { state.serial = serial }
                        if event.event == "step_started", case .string(let step)? = event.data["step"] { state.step = step }
                        state.doing = event.event
                        state.progress?.apply(event, at: Date().timeIntervalSince(origin))
                        ports[event.device] = state
                        changed = true
                    }
                    handle(.fleet(event))
                case .finished(let port, let report):
                    var state = ports[port] ?? PortState()
                    state.working = false
                    state.doing = nil
                    state.progress = nil
                    let result = WatchResult(report)
                    if report.code == FleetError.deviceLocked(device: "", serial: "", lockFile: "").code {
                        // Another worker of this session still had it (moved before that one ended).
                        state.retry = true
                    } else {
                        let key = report.serial ?? "\(port) \(Timestamp.iso8601(options.clock()))"
                        // Once provisioned in this session, a later "already done" (or verified) keeps it so.
                        if !([.alreadyDone, .verified].contains(result) && results[key] == .provisioned) { results[key] = result }
                        tally = WatchTally(results.values)
                    }
                    if state.retry == false {
                        // A worker ended: ports refused for a Grokker it held may try again.
                        for (other, var waiting) in ports where waiting.retry && other != port {
                            waiting.worked = nil
                            waiting.retry = false
                            ports[other] = waiting
                        }
                    }
                    ports[port] = state
                    changed = true
                    handle(.deviceFinished(port: port, report: report, result: result))
                }
            }
            publish(force: false)
        }
        let ended = options.clock()
        let outcome = WatchSummary.outcome(Array(results.values))
        let failure = runner.finishLedgerRun(recording, outcome: outcome, at: ended)
        var last = status(ended)
        last.running = false
        if let statusFile { try? last.write(to: statusFile) }
        return WatchSummary(runID: options.runID, started: started, ended: ended, outcome: outcome, tally: tally,
                            ledgerFailure: failure)
    }

    private func start(_ spec: DeviceSpec, recording: DeviceWorker.Recording) {
        let device = DevicePorts.fleetDevice(spec, context: ports)
        let runner = self.runner
        let queue = self.queue
        let port = spec.description
        let thread = Thread {
            let report = runner.work(device, recording: recording)
            queue.post(.finished(port: port, report: report))
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
