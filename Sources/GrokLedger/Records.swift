import Foundation

/// The ledger's identifier of one run (the `runs.id` column).
public struct RunID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static func < (a: RunID, b: RunID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { String(rawValue) }
}

/// What a run does (the `runs.kind` column).
public enum RunKind: String, Sendable, CaseIterable {
    /// `grokctl provision`: a technician sets up new Grokkers.
    case provision
    /// `grokctl rollout`: an unattended firmware rollout under a profile's policy.
    case rollout
    /// `grokctl verify`: proves a batch without changing it.
    case verify
}

/// How a run ended (the `runs.outcome` column; NULL while the run is open). The one
/// vocabulary of run outcomes: the fleet's summary line, its report file, `--json` and the
/// ledger all use these codes (docs/fleet.md, "Outcomes"); the words people read are the
/// catalog's `fleet.run_outcome.<code>`.
public enum RunOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// Every Grokker ended done.
    case succeeded
    /// Some Grokkers were postponed, refused or halted by policy; none failed.
    case incomplete
    /// At least one Grokker failed.
    case failed
    /// A stop signal (Ctrl-C, SIGTERM, ...) ended the run before every Grokker finished;
    /// the run itself closed it. Run it again to finish.
    case interrupted
    /// The run's process died without closing it (kill -9, a crash, a power cut); a later
    /// process that opened the ledger closed it, ending it when it was last seen alive.
    case abandoned
}

/// The identifier of a run as people see it: printed in the summary line, the report file's
/// name and `run_id`, `--json`, `ledger show` (the `runs.run_key` column, unique).
/// `20250115-120000-3fa2`: the UTC start time to the second and four random hex digits.
public enum RunKey {
    /// A new key for a run starting at `time`.
    public static func make(at time: Date = Date()) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: time)
        func two(_ value: Int?) -> String { let v = value ?? 0; return v < 10 ? "0\(v)" : String(v) }
        let hex = String(UInt16.random(in: 0 ... .max), radix: 16)
        return String(c.year ?? 0) + two(c.month) + two(c.day) + "-" + two(c.hour) + two(c.minute) + two(c.second) + "-"
            + String(repeating: "0", count: 4 - hex.count) + hex
    }

    /// The SQL expression that names a run recorded before schema version 4 (which kept no
    /// key): its start time as a key has it, then `r` and its old number (`20241201-104003-r7`),
    /// which no new key can equal (new keys end in four hex digits).
    static func legacySQL(id: String = "id", startedAt: String = "started_at") -> String {
        "coalesce(strftime('%Y%m%d-%H%M%S', \(startedAt)), 'run') || '-r' || \(id)"
    }
}

/// How a step on one device ended (the `steps.result` column): the one vocabulary of step
/// results, of the fleet's step outcomes, its events, its report and the ledger alike; the
/// words people read are the catalog's `fleet.result.<code>`.
public enum StepResult: String, Sendable, Hashable, Codable, CaseIterable {
    /// The step changed (or, in verify mode, checked) the device and succeeded.
    case done
    /// Already satisfied, not configured or not applicable: nothing was sent that changes the device.
    case skipped
    /// The step was tried and did not succeed.
    case failed
    /// A stop signal (Ctrl-C, SIGTERM, ...) ended the step before it finished: not a
    /// failure of the unit; it may be part-way (a firmware update left in the unit's
    /// loader), and the same command run again finishes it.
    case interrupted
    /// Policy deferred the step (outside the maintenance window, low battery, a halt); a later run does it.
    case postponed
    /// Policy forbade the step (a downgrade not allowed, a region outside the allowed list, a lock held).
    case refused
    /// The person at the terminal said no ("cancel" at the firmware question, "no" at the
    /// region's confirmation): nothing was changed, not a failure, but the device is not as
    /// the profile wants (the run is incomplete); a later run asks again.
    case declined
}

/// The start of a run, given to ``RunRecorder/beginRun(_:)``.
public struct RunStart: Sendable, Equatable {
    public var kind: RunKind
    /// The profile's name (its file name without `.json`, or its `name` key).
    public var profileName: String
    /// SHA-256 of the profile file's bytes, 64 hex digits; ``RunRecorder/completedSteps(serial:profileSHA256:)``
    /// only counts runs of the same profile content.
    public var profileSHA256: String
    /// The machine (bench) the run ran on.
    public var station: String
    /// The person (or service account) who started it.
    public var operatorName: String
    public var startedAt: Date
    /// The run's key (``RunKey``), the identifier printed for it; nil: the ledger makes one.
    public var key: String?

    public init(kind: RunKind, profileName: String, profileSHA256: String, station: String, operatorName: String,
                startedAt: Date, key: String? = nil) {
        self.key = key
        self.kind = kind
        self.profileName = profileName
        self.profileSHA256 = profileSHA256
        self.station = station
        self.operatorName = operatorName
        self.startedAt = startedAt
    }
}

/// A run as stored (one row of `runs`).
public struct RunRecord: Sendable, Equatable {
    /// The ledger's row number of the run (what steps and smoke tests refer to).
    public var id: RunID
    /// The run's key (``RunKey``): the identifier people see, in the summary, the report,
    /// `--json` and `ledger show`.
    public var key: String
    public var kind: RunKind
    public var profileName: String
    public var profileSHA256: String
    public var station: String
    public var operatorName: String
    public var startedAt: Date
    /// Nil while the run is open, or if its process died before finishing it.
    public var endedAt: Date?
    public var outcome: RunOutcome?
    /// The JSON report written at the end of the run.
    public var reportPath: String?
    /// The last time the run's process was seen alive (its heartbeat, or its latest record).
    public var lastSeenAt: Date?
}

/// What a run learned about a device, given to ``RunRecorder/upsertDevice(_:)``. Nil fields
/// keep what the ledger already holds.
public struct DeviceSighting: Sendable, Equatable {
    public var serial: String
    public var hardwareType: String?
    public var hardwareRevision: String?
    public var antennaType: String?
    public var firmware: String?
    public var region: String?
    /// Whether factory provisioning has been completed; nil keeps the stored flag (false for a new device).
    public var provisioned: Bool?
    public var seenAt: Date

    public init(serial: String, hardwareType: String? = nil, hardwareRevision: String? = nil, antennaType: String? = nil,
                firmware: String? = nil, region: String? = nil, provisioned: Bool? = nil, seenAt: Date) {
        self.serial = serial
        self.hardwareType = hardwareType
        self.hardwareRevision = hardwareRevision
        self.antennaType = antennaType
        self.firmware = firmware
        self.region = region
        self.provisioned = provisioned
        self.seenAt = seenAt
    }
}

/// A device as stored (one row of `devices`).
public struct DeviceRecord: Sendable, Equatable {
    public var serial: String
    public var hardwareType: String?
    public var hardwareRevision: String?
    public var antennaType: String?
    public var firstSeen: Date
    public var lastSeen: Date
    public var firmware: String?
    public var region: String?
    public var provisioned: Bool
}

/// One step on one device in one run (one row of `steps`).
public struct StepRecord: Sendable, Equatable {
    public var run: RunID
    public var serial: String
    /// The workflow's step name (`connect`, `identify`, `provision`, `region`, `smoke_test`, `firmware`, ...).
    public var step: String
    public var startedAt: Date
    public var endedAt: Date
    public var result: StepResult
    public var firmwareBefore: String?
    public var firmwareAfter: String?
    public var regionBefore: String?
    public var regionAfter: String?
    /// A stable machine code for the result (an error's `code`, or a policy reason such as
    /// `policy_outside_window`); nil when there is nothing to add.
    public var code: String?
    /// Free text for people: the error message, the reason, the numbers.
    public var detail: String
    /// The USB port of the sound card the Grokker was on (`1-1.4`, the `usb:` name without
    /// its scheme); nil when the port is not on a USB sound card or it is not known.
    public var usbPath: String?

    public init(run: RunID, serial: String, step: String, startedAt: Date, endedAt: Date, result: StepResult,
                firmwareBefore: String? = nil, firmwareAfter: String? = nil, regionBefore: String? = nil,
                regionAfter: String? = nil, code: String? = nil, detail: String = "", usbPath: String? = nil) {
        self.usbPath = usbPath
        self.run = run
        self.serial = serial
        self.step = step
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.result = result
        self.firmwareBefore = firmwareBefore
        self.firmwareAfter = firmwareAfter
        self.regionBefore = regionBefore
        self.regionAfter = regionAfter
        self.code = code
        self.detail = detail
    }

    /// `endedAt - startedAt` in whole milliseconds (the `steps.duration_ms` column).
    public var durationMilliseconds: Int64 {
        LedgerTime.milliseconds(endedAt) - LedgerTime.milliseconds(startedAt)
    }
}

/// One inventory smoke test on one device (one row of `smoke_tests`).
public struct SmokeTestRecord: Sendable, Equatable {
    public var run: RunID
    public var serial: String
    /// The step after which the test ran (the step that changed the device).
    public var afterStep: String
    public var startedAt: Date
    public var durationMilliseconds: Int64
    /// The reference tags the profile expects (EPCs, hex).
    public var expectedTags: [String]
    /// Every tag the inventory read (EPCs, hex), expected or not.
    public var foundTags: [String]
    public var readsPerSecond: Double
    /// The weakest RSSI among the expected tags read (dBm); nil when none was read.
    public var minRSSI: Double?
    public var passed: Bool

    public init(run: RunID, serial: String, afterStep: String, startedAt: Date, durationMilliseconds: Int64,
                expectedTags: [String], foundTags: [String], readsPerSecond: Double, minRSSI: Double?, passed: Bool) {
        self.run = run
        self.serial = serial
        self.afterStep = afterStep
        self.startedAt = startedAt
        self.durationMilliseconds = durationMilliseconds
        self.expectedTags = expectedTags
        self.foundTags = foundTags
        self.readsPerSecond = readsPerSecond
        self.minRSSI = minRSSI
        self.passed = passed
    }

    /// The expected tags that were not found, in the expected order (the `missing_tags` column).
    public var missingTags: [String] {
        let found = Set(foundTags)
        return expectedTags.filter { !found.contains($0) }
    }
}

/// One entry of a device's history: a step or a smoke test, with the run it belongs to.
public struct HistoryEntry: Sendable, Equatable {
    public enum Event: Sendable, Equatable {
        case step(StepRecord)
        case smokeTest(SmokeTestRecord)
    }

    public var run: RunRecord
    public var event: Event

    public init(run: RunRecord, event: Event) {
        self.run = run
        self.event = event
    }

    /// When the event started.
    public var at: Date {
        switch event {
        case .step(let step): step.startedAt
        case .smokeTest(let test): test.startedAt
        }
    }
}

/// The formats of ``Ledger/export(format:to:table:)``.
public enum ExportFormat: String, Sendable, CaseIterable {
    /// RFC 4180 CSV, one table per file, a header row of column names.
    case csv
    /// One JSON object holding an array of row objects per table.
    case json
}

/// The tables of the ledger, by their SQL names.
public enum LedgerTable: String, Sendable, CaseIterable {
    case devices
    case runs
    case steps
    case smokeTests = "smoke_tests"
    /// Changes runs were about to make (schema 3 and later; empty in older files).
    case intents
    /// Rollout stages, their changes and each rollout unit's result (schema 5 and later).
    case rolloutStages = "rollout_stages"
    case stageEvents = "stage_events"
    case rolloutResults = "rollout_results"

    /// Whether a file of schema `version` has this table.
    func exists(inVersion version: Int) -> Bool {
        switch self {
        case .intents: version >= 3
        case .rolloutStages, .stageEvents, .rolloutResults: version >= 5
        default: true
        }
    }
}
