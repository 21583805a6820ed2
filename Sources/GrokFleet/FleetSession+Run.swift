import Foundation
import GrokBasics
import GrokLedger
import Synchronization

extension FleetSession {
    /// What a run tells its caller, on the caller's thread.
    public enum Event: Sendable {
        /// A unit's event (what `--json` prints).
        case fleet(FleetEvent)
        /// The shared ledger was lost for good mid-run: the rest of the run goes to this
        /// station's spool (said once).
        case spooling(database: String, spool: String)
    }

    /// How a run ended: its report, and where the report and the run's records went.
    public struct Outcome {
        public let report: FleetReport
        /// The report file written; `nil` when it could not be (``reportFailure``) or went to
        /// the caller (``reportText``).
        public let reportPath: String?
        /// The report as its file would hold it, for a caller that prints it (`--report -`).
        public let reportText: String?
        /// Why the report file was not written.
        public let reportFailure: FleetError?
        /// Why the ledger could not close the run or record where its report is.
        public let ledgerFailure: (any Error)?
        /// Where the run's records went, as people are shown it.
        public let ledgerLocation: String
    }

    /// The dry run: what a run would do to each unit, decided by the same function a run
    /// uses; nothing is recorded. `interactive`: a person would answer the questions.
    public func plan(_ prepared: Prepared, interactive: Bool) -> [DevicePlan] {
        let runner = FleetRunner(profile: profile, firmware: prepared.firmware, delegate: prepared.policy,
                                 recorder: prepared.history, options: runOptions)
        return runner.plan(prepared.devices, policy: prepared.policy, interactive: interactive)
    }

    /// Runs every unit on a thread of its own and hands their events to `handle` on the
    /// calling thread, then writes the report file and records where it is in the ledger.
    ///
    /// - Parameters:
    ///   - decider: who answers the run's questions (``Prepared/policy``, or a person at a
    ///     terminal with the policy behind).
    ///   - holdEvents: while true (a question is open), events wait and are handed over
    ///     once it is false again or a stop was asked for.
    ///   - handle: each event, in order.
    /// - Throws: ``FleetError/recorderFailed(operation:subject:cause:)`` when the run cannot be
    ///   begun in the ledger (nothing was done).
    public func run(_ prepared: Prepared, decider: any ConfigurationDelegate, holdEvents: () -> Bool = { false },
                    handle: (Event) -> Void) throws(FleetError) -> Outcome {
        guard let opened = prepared.ledger else {
            preconditionFailure("a dry run's preparation is for plan(_:interactive:)")
        }
        let recorder = opened.ledger
        let queue = EventQueue<Result<FleetEvent, FleetError>?>()
        let delegate = EventStreamDelegate(decider: decider) { queue.post(.success($0)) }
        let runner = FleetRunner(profile: profile, firmware: prepared.firmware, delegate: delegate, recorder: recorder,
                                 options: runOptions)
        let finished = Mutex<Result<FleetReport, FleetError>?>(nil)
        let worker = Thread {
            let result = Result { () throws(FleetError) -> FleetReport in try runner.runBlocking(prepared.devices) }
            finished.withLock { $0 = result }
            queue.post(nil)
        }
        worker.stackSize = 1 << 20
        worker.start()

        let stopRequested = configuration.stopRequested
        let cancellation = runOptions.cancellation
        var done = false
        var held: [Result<FleetEvent, FleetError>?] = []
        var switchAnnounced = false
        func announceSwitch() {
            // The shared ledger lost for good mid-run: said once that the rest goes to the spool.
            guard !switchAnnounced, let failover = recorder as? SpoolFailover, let spool = failover.spool else { return }
            handle(.spooling(database: failover.shared.target, spool: spool.path))
            switchAnnounced = true
        }
        while !done {
            announceSwitch()
            // Woken at least every 100 ms, so a stop reaches the devices even while none of
            // them has anything to say (a step blocked on a silent reader).
            if stopRequested() { cancellation.cancel() }
            held += queue.take(waitingAtMost: 0.1)
            if holdEvents(), !stopRequested() { continue }
            for event in held {
                if case .success(let event)? = event { handle(.fleet(event)) } else { done = true }
            }
            held.removeAll()
            if stopRequested() { cancellation.cancel() }
        }
        announceSwitch()
        // The devices are done: what is left (the report) must finish whatever arrives now.
        configuration.devicesFinished()
        if let signal = configuration.chaos.signalBeforeReport { kill(getpid(), signal) }
        let report = try finished.withLock { $0 }!.get()
        return finish(report, runner: runner, ledger: opened)
    }

    /// Writes the report (whatever the ledger did: when it failed, the report is the record
    /// of the run) and, once it is on disk, records its path in the ledger.
    func finish(_ report: FleetReport, runner: FleetRunner, ledger opened: StationLedger) -> Outcome {
        let reportPath = configuration.reportFile ?? joinPath(configuration.reportsDirectory, report.runID + ".json")
        let file = FleetReportFile(report: report, profile: profile, options: runOptions, ledger: opened.location)
        // `-`: the caller prints the report, after everything else (no file, so the ledger's
        // report path stays empty).
        if reportPath == "-" {
            return Outcome(report: report, reportPath: nil, reportText: file.text(), reportFailure: nil,
                           ledgerFailure: report.ledgerFailure, ledgerLocation: opened.location)
        }
        var reportFailure: FleetError?
        do throws(FleetError) {
            try file.write(to: reportPath)
        } catch {
            reportFailure = error
        }
        var ledgerFailure: (any Error)? = report.ledgerFailure
        if reportFailure == nil, ledgerFailure == nil {
            do {
                try runner.recordReport(path: Self.absolute(reportPath))
            } catch {
                ledgerFailure = error
            }
        }
        return Outcome(report: report, reportPath: reportFailure == nil ? reportPath : nil, reportText: nil,
                       reportFailure: reportFailure, ledgerFailure: ledgerFailure, ledgerLocation: opened.location)
    }

    /// `path` made absolute against the current directory (what the ledger records).
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
