import Foundation
import GrokBasics
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokLedger
import GrokProtocol
import Synchronization
import UGrokIt

/// A Grokker to run: its name (the `--device` spec) and how to open its audio port. The
/// port is opened on the device's own thread.
public struct FleetDevice: Sendable {
    public var name: String
    /// What the port is, for its lock (``DeviceLock/acquire(directory:port:)``): the sound
    /// card, the emulated unit's directory. A run locks it before it opens the port; `nil`
    /// (a port only this process can reach) takes no port lock.
    public var portKey: String?
    public var openPort: @Sendable () throws -> any AudioPort
    /// The sound-card model its link settings are remembered under (``soundCardModel(_:sysfs:)``).
    public var cardModel: String?
    /// The USB port of its sound card (`1-1.4`, ``DevicePorts/usbPath(_:sysfs:)``), recorded
    /// beside the serial in the ledger and the report; `nil` when the port is not on a USB
    /// sound card.
    public var usbPath: String?

    public init(name: String, portKey: String? = nil, cardModel: String? = nil, usbPath: String? = nil,
                openPort: @escaping @Sendable () throws -> any AudioPort) {
        self.name = name
        self.portKey = portKey
        self.cardModel = cardModel
        self.usbPath = usbPath
        self.openPort = openPort
    }
}

/// How a run is carried out (the profile says what it does).
public struct FleetRunOptions: Sendable {
    public var mode: FleetMode
    /// Where the per-serial lock files live (`<directory>/<serial>.lock`).
    public var lockDirectory: String
    public var runID: String
    public var station: String
    public var operatorName: String
    /// Link options; the profile's timeouts replace the handshake and command timeouts.
    public var readerOptions: ReaderOptions
    /// Devices handled at once (`nil`: all, one thread each). With fewer, devices start in
    /// the order given, so the halt rule stops the later ones.
    public var maxConcurrentDevices: Int?
    /// Flipped to stop the run: each device stops before its next step (and a firmware
    /// upload between blocks); a re-run finishes what is left.
    public var cancellation: CancelSwitch
    /// The wall clock (step times, the ledger).
    public var clock: @Sendable () -> Date
    /// Called on the device's thread right after a step changed a Grokker and before the
    /// change is recorded (`grokctl`'s chaos hook kills the process there; see
    /// scripts/chaos.sh). `nil`: nothing.
    public var afterChange: (@Sendable (FleetStep) -> Void)? = nil
    /// Where each unit's reader-image upload is noted, so that a re-run resumes a stopped one
    /// (``UploadJournalFile`` in the station's state directory); `nil`: from the first byte.
    public var uploadJournal: (any UploadJournal)? = nil
    /// The station's remembered link settings (the state directory's); the ledger's are read
    /// and written besides. `nil`: the ledger's only.
    public var linkSettings: LinkSettingFile? = nil
    /// No cues on the units' speakers (`--quiet-readers`): the profile's `cues` are not
    /// played (``ReaderCue``).
    public var quietReaders = false
    /// A Grokker pulled out of its port during a step ends that step `interrupted`
    /// (``FleetError/unplugged(device:step:)``), not failed: a watching station
    /// (``WatchSession``) picks it up again when it is plugged back in, on any port.
    public var unplugInterrupts = false
    /// A Grokker found already as the profile wants (every step after identify would be
    /// skipped) is verified instead of left alone: `verify`'s checks and smoke test, recorded
    /// `step_verified` (a watching station whose profile says `station.already_done: verify`).
    public var verifyAlreadyDone = false

    public init(mode: FleetMode, lockDirectory: String, runID: String = UUID().uuidString,
                station: String = ProcessInfo.processInfo.hostName, operatorName: String = "",
                readerOptions: ReaderOptions = ReaderOptions(), maxConcurrentDevices: Int? = nil,
                cancellation: CancelSwitch = CancelSwitch(), clock: @escaping @Sendable () -> Date = { Date() }) {
        self.mode = mode
        self.lockDirectory = lockDirectory
        self.runID = runID
        self.station = station
        self.operatorName = operatorName
        self.readerOptions = readerOptions
        self.maxConcurrentDevices = maxConcurrentDevices
        self.cancellation = cancellation
        self.clock = clock
    }
}

/// How a run ended. The codes are the ledger's (``GrokLedger/RunOutcome``, which adds
/// `abandoned` for a run whose process died): the summary, the report, `--json` and the
/// ledger share one vocabulary (docs/fleet.md, "Outcomes").
public enum RunOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// Every device done.
    case succeeded
    /// Some devices postponed, refused or halted; none failed.
    case incomplete
    /// At least one device failed.
    case failed
    /// A stop signal ended the run before every device finished.
    case interrupted

    /// The ledger's code of the same outcome (one vocabulary; the ledger adds `abandoned`).
    var ledgerOutcome: GrokLedger.RunOutcome {
        switch self {
        case .succeeded: .succeeded
        case .incomplete: .incomplete
        case .failed: .failed
        case .interrupted: .interrupted
        }
    }
}

/// What a smoke test of one Grokker measured, and after which step.
@dynamicMemberLookup
public struct SmokeTestReport: Sendable, Hashable {
    /// ``FleetStep/smokeTest`` or ``FleetStep/finalSmokeTest``.
    public var step: FleetStep
    public var measurement: SmokeTestMeasurement

    public subscript<Value>(dynamicMember path: KeyPath<SmokeTestMeasurement, Value>) -> Value { measurement[keyPath: path] }
}

/// What happened to one Grokker.
public struct DeviceReport: Sendable, Hashable {
    public var device: String
    /// The USB port of the device's sound card (``FleetDevice/usbPath``); `nil` when not on USB.
    public var usbPath: String?
    /// Once identified.
    public var serial: String?
    public var outcome: DeviceOutcome
    /// Why, when not done (a ``FleetError`` code), with its arguments.
    public var code: String?
    public var arguments: [String]
    public var steps: [StepOutcome]
    public var smokeTests: [SmokeTestReport]
    public var firmwareBefore: String?
    public var firmwareAfter: String?
    public var regionBefore: String?
    public var regionAfter: String?
    /// Whether the unit was last seen in its loader: an update stopped mid-way, not finished
    /// (``firmwareAfter`` is then `nil`: the application is not whole); the same command run
    /// again finishes it.
    public var inLoader = false

    /// The outcome of `step`, if it ran.
    public func step(_ step: FleetStep) -> StepOutcome? { steps.first { $0.step == step } }

    /// Whether the smoke test was skipped because an earlier run's passed test still holds
    /// (nothing changed on the unit since): the summary says so instead of a dash.
    public var smokeTestPassedEarlier: Bool {
        guard let smoke = step(.smokeTest) else { return false }
        return smoke.result == .skipped && smoke.code == "step_already_satisfied"
    }
}

/// What a run did.
public struct FleetReport: Sendable, Hashable {
    public var runID: String
    public var mode: FleetMode
    public var outcome: RunOutcome
    public var started: Date
    public var ended: Date
    /// In the order the devices were given.
    public var devices: [DeviceReport]
    /// Set when the run could not be closed in the ledger (a full disk, a lost file): the
    /// devices' reports still say what was done to them.
    public var ledgerFailure: FleetError? = nil
}

/// What a dry run found for one step.
public struct PlannedStep: Sendable, Hashable {
    public enum Action: String, Sendable, Hashable {
        /// The step would change (or check) the device; whether it succeeds is known once it ran.
        case run
        /// Already satisfied or not configured.
        case skip
        /// The profile, the channel or a lock refuses it (known before anything is sent).
        case refuse
        /// The policy says not now (maintenance window, battery, halt).
        case postpone
        /// It would fail before anything is sent (a verify mismatch, no region for a smoke test).
        case fail
        /// A person decides when the run gets there (the terminal's questions).
        case ask
    }

    public var step: FleetStep
    public var action: Action
    /// A stable code (as in ``StepOutcome/code``).
    public var code: String
    public var arguments: [String]
    public var detail: String
}

/// The plan for one device: what a run would do, from what the reader says about itself.
public struct DevicePlan: Sendable, Hashable {
    public var device: String
    public var serial: String?
    /// Set when the device could not be reached.
    public var error: FleetError?
    public var steps: [PlannedStep]
}

/// The workflow engine. For each Grokker, on a thread of its own: connect -> identify (and
/// lock it by serial) -> provision -> region -> smoke test -> firmware -> reconnect -> smoke
/// test -> record. Each step is skipped when the device already satisfies it (judged from
/// the device itself; the recorder's completed steps decide only whether a smoke test is
/// still owed), so a run stopped at any moment can be re-run and finishes only what is
/// left. Every step is recorded in the ledger (``LedgerStore``) before the next begins, and
/// every decision goes through the ``ConfigurationDelegate`` (docs/fleet.md).
public final class FleetRunner: Sendable {
    public let profile: Profile
    /// The firmware channel's verified state; `nil` when the profile has no firmware section.
    public let firmware: FleetFirmware?
    public let delegate: any ConfigurationDelegate
    /// The ledger the run records into and reads history from (docs/ledger.md); `nil`: a
    /// dry run's runner without a ledger yet (it plans without history and runs nothing).
    public let recorder: (any LedgerStore)?
    /// The ledger's run, once begun.
    private let ledgerRun = Mutex<RunID?>(nil)
    public let options: FleetRunOptions

    /// - Parameter firmware: the profile's firmware channel, read through TUF before the run
    ///   (``FleetFirmware/load(_:prefetch:)``); `nil` when the profile has no firmware section
    ///   (its region catalogue, if any, also serves the region step).
    public init(profile: Profile, firmware: FleetFirmware?, delegate: any ConfigurationDelegate,
                recorder: (any LedgerStore)?, options: FleetRunOptions) {
        self.profile = profile
        self.firmware = firmware
        self.delegate = delegate
        self.recorder = recorder
        self.options = options
    }

    var readerOptions: ReaderOptions {
        var reader = options.readerOptions
        reader.handshakeTimeout = profile.timeouts.handshake
        // The command timeout has no vendor form: the packet layer's timing bounds each
        // request (and the wall-clock bounds each step).
        return reader
    }

    // MARK: Running

    /// Runs every device (blocking the calling thread; see ``run(_:)-async`` for async
    /// callers) and returns the report.
    /// - Throws: ``FleetError/recorderFailed(operation:subject:cause:)`` when the run cannot be
    ///   begun in the ledger (nothing was done). A run that cannot be finished there is
    ///   still reported, with ``FleetReport/ledgerFailure`` set. Per-device problems are in
    ///   the report.
    public func runBlocking(_ devices: [FleetDevice]) throws(FleetError) -> FleetReport {
        let started = options.clock()
        let recording = try beginLedgerRun(at: started)
        let reports = Self.each(devices, concurrency: options.maxConcurrentDevices) { device in
            DeviceWorker(runner: self, device: device, recording: recording).run()
        }
        let outcome = Self.outcome(of: reports, cancelled: options.cancellation.isCancelled)
        let ended = options.clock()
        let failure = finishLedgerRun(recording, outcome: outcome, at: ended)
        return FleetReport(runID: options.runID, mode: options.mode, outcome: outcome, started: started, ended: ended,
                           devices: reports, ledgerFailure: failure)
    }

    /// Begins this runner's run in the ledger (a run, or a whole watch session: one run).
    func beginLedgerRun(at started: Date) throws(FleetError) -> DeviceWorker.Recording {
        guard let recorder else {
            throw .recorderFailed(operation: "begin_run", subject: options.runID, cause: ErrorCause(code: "fleet_dry_run_records_nothing"))
        }
        let run: RunID
        do {
            run = try recorder.beginRun(RunStart(kind: options.mode.runKind, profileName: profile.name, profileSHA256: Self.digest(of: profile),
                                                 station: options.station, operatorName: options.operatorName, startedAt: started,
                                                 key: options.runID))
        } catch {
            throw .recorderFailed(operation: "begin_run", subject: options.runID, error: error)
        }
        ledgerRun.withLock { $0 = run }
        return DeviceWorker.Recording(ledger: recorder, run: run)
    }

    /// Closes the run in the ledger; the failure when it could not be.
    func finishLedgerRun(_ recording: DeviceWorker.Recording, outcome: RunOutcome, at ended: Date) -> FleetError? {
        do {
            try recording.store.finishRun(recording.run, outcome: outcome.ledgerOutcome, endedAt: ended, reportPath: nil)
            return nil
        } catch {
            return .recorderFailed(operation: "finish_run", subject: options.runID, error: error)
        }
    }

    /// Works one Grokker through the profile's workflow on the calling thread, recording into `recording`.
    func work(_ device: FleetDevice, recording: DeviceWorker.Recording) -> DeviceReport {
        DeviceWorker(runner: self, device: device, recording: recording).run()
    }

    /// Runs every device on threads of their own (the sessions block on audio), without
    /// holding a thread of the cooperative pool, and returns the report.
    public func run(_ devices: [FleetDevice]) async throws(FleetError) -> FleetReport {
        let result: Result<FleetReport, FleetError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: Result { () throws(FleetError) -> FleetReport in try self.runBlocking(devices) })
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        return try result.get()
    }

    /// The SHA-256 of the profile file's bytes (the ledger counts a step done only for runs
    /// of the same content); a profile not read from a file is known by its name.
    static func digest(of profile: Profile) -> String {
        let bytes = FileManager.default.contents(atPath: profile.file).map { [UInt8]($0) } ?? Array("profile:\(profile.name)".utf8)
        return SHA256.hash(bytes).hex
    }

    /// Records where the report of the run this runner ran was written (after the run).
    public func recordReport(path: String) throws(LedgerError) {
        guard let recorder, let run = ledgerRun.withLock({ $0 }) else { preconditionFailure("a report is recorded after its run") }
        try recorder.recordReport(run, path: path)
    }

    static func outcome(of reports: [DeviceReport], cancelled: Bool) -> RunOutcome {
        // A unit the stage leaves out has nothing left to do in this run: it counts as done.
        let finished: Set<DeviceOutcome> = [.done, .notInStage]
        if reports.contains(where: { $0.outcome == .interrupted }) || (cancelled && reports.contains { !finished.contains($0.outcome) }) {
            return .interrupted
        }
        if reports.contains(where: { $0.outcome == .failed }) { return .failed }
        return reports.allSatisfy { finished.contains($0.outcome) } ? .succeeded : .incomplete
    }

    /// The one device fan-out (runs, dry runs, flash and every device command): runs `job`
    /// for every item on threads of their own (audio ports block, and a station drives many
    /// Grokkers), at most `concurrency` at once (`nil`: all), taking items in order; returns
    /// the results in the order given.
    public static func each<Item: Sendable, Output: Sendable>(_ items: [Item], concurrency: Int? = nil,
                                                       _ job: @escaping @Sendable (Item) -> Output) -> [Output] {
        let results = Mutex([Output?](repeating: nil, count: items.count))
        let next = Mutex(0)
        let workers = max(1, min(concurrency ?? items.count, items.count))
        let group = DispatchGroup()
        for _ in 0..<workers {
            group.enter()
            let thread = Thread {
                while true {
                    let index: Int? = next.withLock { value in
                        guard value < items.count else { return nil }
                        value += 1
                        return value - 1
                    }
                    guard let index else { break }
                    let output = job(items[index])
                    results.withLock { $0[index] = output }
                }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        return results.withLock { $0.compactMap { $0 } }
    }

    // MARK: Dry run

    /// What a run would do to each device, decided by the same function the run uses
    /// (``StepDecider``), from what the reader says about itself (identify, its provisioning
    /// record and battery; nothing is sent that changes it), the recorder's history and the
    /// channel. Nothing is recorded; each port and serial lock is held only while its device
    /// is read. `policy` (when given) gives the firmware answers; `interactive` says the run
    /// would ask a person (those questions show as ``PlannedStep/Action/ask``).
    public func plan(_ devices: [FleetDevice], policy: PolicyDelegate? = nil, interactive: Bool = false) -> [DevicePlan] {
        Self.each(devices, concurrency: options.maxConcurrentDevices) { device in
            DeviceWorker(runner: self, device: device, recording: nil).plan(policy: policy, interactive: interactive)
        }
    }
}

extension FleetMode {
    /// The ledger's kind of a run of this mode.
    var runKind: RunKind {
        switch self {
        case .provision: .provision
        case .rollout: .rollout
        case .verify: .verify
        }
    }
}
