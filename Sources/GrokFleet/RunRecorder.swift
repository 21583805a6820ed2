import Foundation
import GrokLedger

/// A run as the ledger keeps it.
public struct RunInfo: Sendable, Hashable, Codable {
    /// Unique per run: its key (``RunKey``, `20250115-120000-3fa2`), printed in the summary,
    /// named in the report and `--json`, and the ledger's key for the run.
    public var id: String
    public var mode: FleetMode
    /// The profile's name and the file it was read from.
    public var profileName: String
    public var profileFile: String
    /// Where and by whom (free text from the caller).
    public var station: String
    public var operatorName: String
    public var started: Date

    public init(id: String, mode: FleetMode, profileName: String, profileFile: String, station: String,
                operatorName: String, started: Date) {
        self.id = id
        self.mode = mode
        self.profileName = profileName
        self.profileFile = profileFile
        self.station = station
        self.operatorName = operatorName
        self.started = started
    }
}

/// One step of one device in one run.
public struct StepRecord: Sendable, Hashable, Codable {
    public var runID: String
    /// The Grokker's serial number (8 digits).
    public var serial: String
    /// The port it was on.
    public var device: String
    public var step: FleetStep
    public var result: StepResult
    public var code: String
    public var arguments: [String]
    public var detail: String
    public var firmwareBefore: String?
    public var firmwareAfter: String?
    public var regionBefore: String?
    public var regionAfter: String?
    public var started: Date
    /// Seconds.
    public var duration: Double

    public init(runID: String, serial: String, device: String, outcome: StepOutcome) {
        self.runID = runID
        self.serial = serial
        self.device = device
        step = outcome.step
        result = outcome.result
        code = outcome.code
        arguments = outcome.arguments
        detail = outcome.detail
        firmwareBefore = outcome.firmwareBefore
        firmwareAfter = outcome.firmwareAfter
        regionBefore = outcome.regionBefore
        regionAfter = outcome.regionAfter
        started = outcome.started
        duration = outcome.duration
    }
}

/// What a smoke test measured.
public struct SmokeTestRecord: Sendable, Hashable, Codable {
    public var runID: String
    public var serial: String
    public var device: String
    /// ``FleetStep/smokeTest`` or ``FleetStep/finalSmokeTest``.
    public var step: FleetStep
    public var passed: Bool
    /// Stable reason codes when it failed: `missing_tags`, `reads_per_second`, `rssi`, `no_reads`.
    public var reasons: [String]
    /// The inventory type's code (`inventory_short_range`).
    public var inventoryType: String
    /// Seconds of audio the inventory ran.
    public var duration: Double
    public var reads: Int
    public var readsPerSecond: Double
    /// Distinct EPCs seen.
    public var uniqueTags: Int
    public var expectedTags: [String]
    public var missingTags: [String]
    /// The strongest read, dBm.
    public var strongestRSSI: Double?
    /// The weakest of the reference tags' strongest reads, dBm.
    public var weakestReferenceRSSI: Double?
    public var firmware: String
    public var region: String?
    public var time: Date

    public init(runID: String, serial: String, device: String, step: FleetStep, passed: Bool, reasons: [String],
                inventoryType: String, duration: Double, reads: Int, readsPerSecond: Double, uniqueTags: Int,
                expectedTags: [String], missingTags: [String], strongestRSSI: Double?, weakestReferenceRSSI: Double?,
                firmware: String, region: String?, time: Date) {
        self.runID = runID
        self.serial = serial
        self.device = device
        self.step = step
        self.passed = passed
        self.reasons = reasons
        self.inventoryType = inventoryType
        self.duration = duration
        self.reads = reads
        self.readsPerSecond = readsPerSecond
        self.uniqueTags = uniqueTags
        self.expectedTags = expectedTags
        self.missingTags = missingTags
        self.strongestRSSI = strongestRSSI
        self.weakestReferenceRSSI = weakestReferenceRSSI
        self.firmware = firmware
        self.region = region
        self.time = time
    }
}

/// A Grokker as last seen.
public struct DeviceRecord: Sendable, Hashable, Codable {
    public var serial: String
    public var hardwareModel: String
    public var hardwareRevision: Int
    public var firmware: String
    public var loader: String
    /// The region's vendor name; `nil` when not set.
    public var region: String?
    public var provisioned: Bool
    public var antennaType: Int?
    /// ``ProvisioningStatus`` name, when read.
    public var provisioningStatus: String?
    /// The port it was last on, the run that last saw it, and when.
    public var lastDevice: String
    public var lastRunID: String
    public var lastOutcome: DeviceOutcome
    public var updated: Date

    public init(serial: String, hardwareModel: String, hardwareRevision: Int, firmware: String, loader: String,
                region: String?, provisioned: Bool, antennaType: Int?, provisioningStatus: String?, lastDevice: String,
                lastRunID: String, lastOutcome: DeviceOutcome, updated: Date) {
        self.serial = serial
        self.hardwareModel = hardwareModel
        self.hardwareRevision = hardwareRevision
        self.firmware = firmware
        self.loader = loader
        self.region = region
        self.provisioned = provisioned
        self.antennaType = antennaType
        self.provisioningStatus = provisioningStatus
        self.lastDevice = lastDevice
        self.lastRunID = lastRunID
        self.lastOutcome = lastOutcome
        self.updated = updated
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
}

/// The end of a run.
public struct RunSummary: Sendable, Hashable, Codable {
    public var runID: String
    public var ended: Date
    public var outcome: RunOutcome
    /// Devices per outcome.
    public var devices: [DeviceOutcome: Int]

    public init(runID: String, ended: Date, outcome: RunOutcome, devices: [DeviceOutcome: Int]) {
        self.runID = runID
        self.ended = ended
        self.outcome = outcome
        self.devices = devices
    }
}

/// Where a run records everything: the ledger. The SQLite ledger implements it; each call
/// is one transaction, made before the run goes on, so a run killed at any moment leaves
/// a ledger that says exactly what was done. Calls come from several device threads at
/// once: implementations are thread-safe.
public protocol RunRecorder: Sendable {
    /// A run starts.
    func beginRun(_ run: RunInfo) throws
    /// A step of a device ended (any result).
    func recordStep(_ step: StepRecord) throws
    /// A smoke test ran (passed or not); recorded before its step.
    func recordSmokeTest(_ result: SmokeTestRecord) throws
    /// The device as it now stands (inserted the first time, replaced after).
    func upsertDevice(_ device: DeviceRecord) throws
    /// The run ended.
    func finishRun(_ summary: RunSummary) throws
    /// The run's report file was written at `path` (after ``finishRun(_:)``).
    func recordReport(runID: String, path: String) throws
    /// Every step of the Grokker `serial` that ended `done` or `skipped`, in any run, oldest
    /// first: the hint a re-run uses to finish only what is left.
    func completedSteps(serial: String) throws -> [StepRecord]
    /// Records a change about to be sent (see the extension's default: records nothing).
    func recordIntent(runID: String, serial: String, step: FleetStep, target: String, at time: Date) throws
    /// The intents of `serial` no step record closed.
    func openIntents(serial: String) throws -> [ChangeIntent]
    /// Resolves an open intent after asking the Grokker.
    func resolveIntent(_ intent: ChangeIntent, made: Bool, outcome: StepOutcome, by runID: String, at time: Date) throws
    /// Takes the fleet-wide lock on `serial` (a ledger shared by stations); who holds it
    /// when another station's live run does (see the extension's default: no such lock).
    func lockFleetWide(serial: String, runID: String) throws -> String?
}

/// A change a run was about to make to a Grokker, as the recorder keeps it.
public struct ChangeIntent: Sendable, Hashable {
    /// The recorder's own id of the intent.
    public var id: Int64
    /// The run that recorded it (the recorder's id for runs this process did not begin).
    public var runID: String
    public var serial: String
    public var step: FleetStep
    /// What the change was to bring about (`FCC (US), IC (Canada)`, `1.8.0`, ...).
    public var target: String

    public init(id: Int64, runID: String, serial: String, step: FleetStep, target: String) {
        self.id = id
        self.runID = runID
        self.serial = serial
        self.step = step
        self.target = target
    }
}

/// Intents (docs/ledger.md, "Intents"): a recorder that keeps them lets every change have
/// exactly one author even when the process dies between the change and its record. A
/// recorder without them (the defaults) records nothing extra and finds none open.
public extension RunRecorder {
    /// Records that run `runID` is about to change `serial` by `step` toward `target`, before
    /// the change is sent; the step's record (``recordStep(_:)``) is its outcome.
    func recordIntent(runID: String, serial: String, step: FleetStep, target: String, at time: Date) throws {}
    /// Records where the report of run `runID` was written (default: nowhere).
    func recordReport(runID: String, path: String) throws {}
    /// The intents of `serial` that no step record closed: their runs ended (killed, the
    /// ledger failed) between sending the change and recording it.
    func openIntents(serial: String) throws -> [ChangeIntent] { [] }
    /// Resolves an open intent once run `runID` asked the Grokker: `made` records `outcome`
    /// (the step as this run found it) as done by the intent's own run; otherwise the intent
    /// is closed as not done.
    func resolveIntent(_ intent: ChangeIntent, made: Bool, outcome: StepOutcome, by runID: String, at time: Date) throws {}
    /// Takes the fleet-wide lock on `serial` for run `runID` (a ledger shared by stations);
    /// returns who holds it (`station`, run key) when another station's live run does, nil
    /// when taken. A station's own ledger has no fleet-wide lock (default: nil, taken).
    func lockFleetWide(serial: String, runID: String) throws -> String? { nil }
}
