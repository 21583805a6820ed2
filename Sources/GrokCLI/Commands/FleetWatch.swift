import Foundation
import GrokBasics
import GrokCommandLine
import GrokFleet

/// `provision --watch` (and `rollout`, `verify`): a station that works each Grokker as it is
/// plugged in, until Ctrl-C or SIGTERM (``FleetSession/watch(_:statusFile:pollInterval:handle:)``);
/// this shows it: a live line per port and the tally at a terminal, a line per event
/// otherwise, the events with stable codes under `--json`, and the session's summary.
struct FleetWatch {
    let session: FleetSession
    let prepared: FleetSession.Prepared
    let context: CommandContext

    func run() throws -> ExitCode {
        let console = context.console
        let localizer = context.localizer
        let statusFile = WatchStatus.path(stateDirectory: StateDirectory.path(environment: context.environment))
        let live = !console.isJSON && !console.isQuiet && console.isTerminal(.standardOutput)
        // Step lines as a run prints them (plain output), for every port (a card's when it comes).
        var lines = FleetRunPresenter(devices: DeviceSpec.emulatedRange.map { "sim:\($0)" }, context: context, liveBars: false,
                                      smokeTestSeconds: 0)
        var named = Set(DeviceSpec.emulatedRange.map { "sim:\($0)" })
        var drawn = 0
        _ = StopSignals.install(StopSignals.fleetSignals)
        if !console.isJSON, !console.isQuiet { console.print(localizer.text(.watchStarted, session.profile.name, statusFile)) }
        let summary = try session.watch(prepared, statusFile: statusFile, cardsHeard: { by in
            if console.isJSON { console.json(WatchCardsObject(by: by)) }
            else if !console.isQuiet { console.print(MessageKey(rawValue: "watch.cards." + by).map { localizer.text($0) } ?? by) }
        }) { event in
            switch event {
            case .fleet(let event):
                if console.isJSON {
                    // The session's own device_finished (with its result) stands for the worker's.
                    if event.event != "device_finished" { console.write(event.jsonLine() + "\n") }
                    if event.event == "step_finished", event.data["step"] == "identify", event.data["result"] == "done" {
                        console.json(WatchEventObject(event: "grokker_recognised", port: event.device, serial: event.serial,
                                                      firmware: event.data["firmware_before"]?.string))
                    }
                } else if !live {
                    if named.insert(event.device).inserted {
                        lines = FleetRunPresenter(devices: named.sorted(), context: context, liveBars: false, smokeTestSeconds: 0)
                    }
                    lines.handle(event)
                }
            case .grokkerPlugged(let port, _):
                if console.isJSON { console.json(WatchEventObject(event: "grokker_plugged", port: port)) }
                else if !live, !console.isQuiet { console.print(localizer.text(.watchPlugged, port)) }
            case .portAdded(let port):
                if console.isJSON { console.json(WatchEventObject(event: "port_added", port: port)) }
                else if !live, !console.isQuiet { console.print(localizer.text(.watchPortAdded, port)) }
            case .portRemoved(let port):
                if console.isJSON { console.json(WatchEventObject(event: "port_removed", port: port)) }
                else if !live, !console.isQuiet { console.print(localizer.text(.watchPortRemoved, port)) }
            case .portEmptied(let port):
                if console.isJSON { console.json(WatchEventObject(event: "port_emptied", port: port)) }
                else if !live, !console.isQuiet { console.print(localizer.text(.watchEmptied, port)) }
            case .deviceFinished(let port, let report, let result):
                if console.isJSON {
                    console.json(WatchEventObject(event: "device_finished", port: port, serial: report.serial,
                                                  outcome: report.outcome.rawValue, result: result.rawValue, code: report.code,
                                                  arguments: report.code == nil ? nil : report.arguments))
                } else if !live, !console.isQuiet {
                    // A Grokker that failed or was left unfinished says why, and is what a
                    // station's journal is read for (a warning).
                    let fine = [.provisioned, .alreadyDone, .verified].contains(result)
                    var words = localizer.watchResult(result)
                    if !fine, let code = report.code {
                        words += ": " + localizer.fleetMessage(code: code, arguments: report.arguments, about: port)
                    }
                    console.print(localizer.text(.watchFinished, port, report.serial ?? "?", words), priority: fine ? .info : .warning)
                }
            case .status(let status):
                guard live else { return }
                let text = Self.screen(status, localizer: localizer)
                console.write(LiveTable.frame(text, previousLineCount: drawn))
                drawn = text.count
            }
        }
        if console.isJSON {
            console.json(WatchSummaryObject(summary: summary, ledger: prepared.ledger?.location ?? ""))
        } else if !console.isQuiet {
            console.print(Self.tally(summary.tally, localizer: localizer))
            let seconds = summary.ended.timeIntervalSince(summary.started)
            console.print(localizer.text(.watchSummary, summary.runID, localizer.runOutcome(summary.outcome),
                                         LocaleFormat.decimal(seconds, digits: 1, localizer.language)))
            console.print(localizer.text(.fleetLedgerAt, prepared.ledger?.location ?? ""))
        }
        if let failure = summary.ledgerFailure {
            console.report(failure)
            return .failure
        }
        // A stop ends every session: what it left interrupted is picked up by the next.
        return FleetExit.code(for: summary.outcome)
    }

    /// The live screen: one line per port that holds a Grokker or is being worked (its port,
    /// serial, step, the step's percentage where one is known, the Grokker's ETA, what it is
    /// doing; "–" for what is not known), then the tally.
    static func screen(_ status: WatchStatus, localizer: Localizer) -> [String] {
        let rows = status.ports.map { port -> [String] in
            let step = port.step.flatMap(FleetStep.init(rawValue:)).map(localizer.stepName) ?? "–"
            // Down to the tenth: 100 % only once the step is through.
            let percent = port.progress.map {
                localizer.text(.watchPercent, LocaleFormat.decimal(($0.fraction * 1000).rounded(.down) / 10, digits: 1, localizer.language))
            }
            let eta = port.etaSeconds.map { ProgressBoard.clock($0) }
            return [port.port, port.serial ?? "–", step, percent ?? "–", eta ?? "–", localizer.watchDoing(port.doing)]
        }
        let headers = [localizer.text(.fleetColumnDevice), localizer.text(.fleetColumnSerial), localizer.text(.fleetColumnStep),
                       localizer.text(.watchColumnProgress), localizer.text(.watchColumnEta), localizer.text(.watchColumnDoing)]
        let table = Table(headers: headers, rows: rows, alignments: [.left, .left, .left, .right, .right, .left])
        var lines = rows.isEmpty ? [localizer.text(.watchNothingPlugged)] : table.lines()
        lines.append(tally(status.tally, localizer: localizer))
        return lines
    }

    /// The running tally, in words (each count with its plural).
    static func tally(_ tally: WatchTally, localizer: Localizer) -> String {
        [localizer.text(.watchTallyProvisioned, String(tally.provisioned)),
         localizer.text(.watchTallyAlreadyDone, String(tally.alreadyDone)),
         localizer.text(.watchTallyVerified, String(tally.verified)),
         localizer.text(.watchTallyFailed, String(tally.failed)),
         localizer.text(.watchTallyInterrupted, String(tally.interrupted)),
         localizer.text(.watchTallyIncomplete, String(tally.incomplete))].joined(separator: " · ")
    }
}

/// A watch event under `--json` (its code in `event`).
struct WatchEventObject: Encodable {
    let event: String
    let port: String
    var serial: String? = nil
    var firmware: String? = nil
    var outcome: String? = nil
    var result: String? = nil
    var code: String? = nil
    var arguments: [String]? = nil
}

/// How the station hears sound cards come and go, under `--json` (`udev`, `inotify`, `poll`).
struct WatchCardsObject: Encodable {
    let event = "cards_heard"
    let by: String
}

/// The last line of `provision --watch --json`.
struct WatchSummaryObject: Encodable {
    let event = "watch_finished"
    let runID: String
    let outcome: String
    let counts: WatchTally
    let ledger: String

    init(summary: WatchSummary, ledger: String) {
        runID = summary.runID
        outcome = summary.outcome.rawValue
        counts = summary.tally
        self.ledger = ledger
    }

    enum CodingKeys: String, CodingKey {
        case event, outcome, counts, ledger
        case runID = "run_id"
    }
}

extension Localizer {
    func watchResult(_ result: WatchResult) -> String {
        MessageKey(rawValue: "watch.result." + result.rawValue).map { text($0) } ?? result.rawValue
    }

    /// What a port is doing, from its latest event's code.
    func watchDoing(_ code: String) -> String {
        MessageKey(rawValue: "watch.doing." + code).map { text($0) } ?? text(.watchDoingWorking)
    }
}
