import Foundation
import GrokBasics
import GrokLedger

/// What the provisioning ledger holds, read without writing (`grokctl ledger show` and
/// `ledger export`): the latest runs and every device, one run with its steps, one device
/// with its history across runs and stations. The rows are shaped for showing; each one's
/// `Encodable` form is its `--json` line (stable codes, ISO 8601 times).
public struct LedgerQuery {
    private let reading: LedgerReading

    /// Where the ledger is, as people are shown it (a database without its password).
    public var location: String { reading.location }

    /// Opens the ledger at `location` (a file, or `postgresql://...`) read-only.
    /// - Throws: ``FleetError/ledgerMissing(path:)`` when nothing was recorded there yet, or the ledger's error.
    public init(location: String) throws {
        reading = try LedgerReading(location: location)
    }

    /// The `limit` latest runs and every device the ledger has seen.
    public func overview(limit: Int) throws -> (runs: [LedgerRunRow], devices: [LedgerDeviceRow]) {
        (try reading.store.runs(limit: limit).map(LedgerRunRow.init), try reading.store.devices().map(LedgerDeviceRow.init))
    }

    /// The run `key` (as its summary printed it) and its steps, oldest first.
    /// - Throws: ``GrokLedger/LedgerError/noSuchRun(path:run:)`` when the ledger has no such run.
    public func run(key: String) throws -> (run: LedgerRunRow, steps: [LedgerHistoryItem]) {
        guard let run = try reading.store.run(key: key) else { throw LedgerError.noSuchRun(path: location, run: key) }
        let steps = try reading.store.steps(run: run.id, serial: nil)
        return (LedgerRunRow(run), steps.map { LedgerHistoryItem(HistoryEntry(run: run, event: .step($0))) })
    }

    /// The Grokker `serial` and its history, oldest first, every station's.
    /// - Throws: ``FleetError/ledgerNoDevice(serial:path:)`` when the ledger never saw it.
    public func device(serial: String) throws -> (device: LedgerDeviceRow, history: [LedgerHistoryItem]) {
        guard let device = try reading.device(serial: serial) else { throw FleetError.ledgerNoDevice(serial: serial, path: location) }
        return (LedgerDeviceRow(device), try reading.history(serial: serial).map(LedgerHistoryItem.init))
    }

    // MARK: Export

    /// Writes one table (nil: `steps` for CSV, every table for JSON) as `format` to the file `path`.
    public func export(_ format: LedgerExportFormat, table: LedgerExportTable?, to path: String) throws {
        try reading.export(format: format.ledgerFormat, to: path, table: table?.table)
    }

    /// The same export as text (for standard output), made in a private temporary directory.
    public func export(_ format: LedgerExportFormat, table: LedgerExportTable?) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grokctl-export-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/export." + format.rawValue
        try export(format, table: table, to: file)
        guard let data = FileManager.default.contents(atPath: file) else {
            throw LedgerError.exportFailed(path: file, detail: ErrorDetail("export_unreadable"))
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The formats of `grokctl ledger export`.
public enum LedgerExportFormat: String, Sendable, CaseIterable {
    /// RFC 4180 CSV, one table, a header row of column names.
    case csv
    /// One JSON object holding an array of row objects per table.
    case json

    var ledgerFormat: ExportFormat {
        switch self {
        case .csv: .csv
        case .json: .json
        }
    }
}

/// A table `grokctl ledger export --table` can name.
public struct LedgerExportTable: Sendable, Hashable {
    let table: LedgerTable

    /// Its SQL name (`runs`, `smoke_tests`, ...), as `--table` takes it.
    public var name: String { table.rawValue }

    /// Every table, in the ledger's order.
    public static let all = LedgerTable.allCases.map(LedgerExportTable.init(table:))

    /// The table named `name`; nil when the ledger has none of that name.
    public init?(name: String) {
        guard let table = LedgerTable(rawValue: name) else { return nil }
        self.table = table
    }

    private init(table: LedgerTable) { self.table = table }
}

/// A run as `ledger show` lists it. `--json`: `{"record":"run", ...}`.
public struct LedgerRunRow: Sendable, Equatable, Encodable {
    /// The run's key: the id its summary, report and `--json` gave it.
    public var key: String
    /// `provision`, `rollout` or `verify`.
    public var kind: String
    public var profile: String
    public var station: String
    /// Empty when nobody was named.
    public var operatorName: String
    public var startedAt: Date
    /// Nil while the run is open, or when its process died before it finished.
    public var endedAt: Date?
    /// The run's outcome code (`succeeded`, `failed`, ...); nil while unfinished.
    public var outcome: String?
    public var reportPath: String?

    init(_ run: RunRecord) {
        key = run.key
        kind = run.kind.rawValue
        profile = run.profileName
        station = run.station
        operatorName = run.operatorName
        startedAt = run.startedAt
        endedAt = run.endedAt
        outcome = run.outcome?.rawValue
        reportPath = run.reportPath
    }

    enum CodingKeys: String, CodingKey {
        case record, id, kind, profile, station, started, ended, outcome, report
        case operatorName = "operator"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("run", forKey: .record)
        try container.encode(key, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(profile, forKey: .profile)
        try container.encode(station, forKey: .station)
        try container.encode(operatorName, forKey: .operatorName)
        try container.encode(Timestamp.iso8601(startedAt), forKey: .started)
        try container.encodeIfPresent(endedAt.map { Timestamp.iso8601($0) }, forKey: .ended)
        try container.encodeIfPresent(outcome, forKey: .outcome)
        try container.encodeIfPresent(reportPath, forKey: .report)
    }
}

/// A Grokker as the ledger knows it. `--json`: `{"record":"device", ...}`.
public struct LedgerDeviceRow: Sendable, Equatable, Encodable {
    public var serial: String
    public var firmware: String?
    public var region: String?
    public var hardwareType: String?
    public var hardwareRevision: String?
    public var provisioned: Bool
    public var firstSeen: Date
    public var lastSeen: Date

    init(_ device: DeviceRecord) {
        serial = device.serial
        firmware = device.firmware
        region = device.region
        hardwareType = device.hardwareType
        hardwareRevision = device.hardwareRevision
        provisioned = device.provisioned
        firstSeen = device.firstSeen
        lastSeen = device.lastSeen
    }

    enum CodingKeys: String, CodingKey {
        case record, serial, firmware, region, provisioned
        case firstSeen = "first_seen", lastSeen = "last_seen"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("device", forKey: .record)
        try container.encode(serial, forKey: .serial)
        try container.encodeIfPresent(firmware, forKey: .firmware)
        try container.encodeIfPresent(region, forKey: .region)
        try container.encode(provisioned, forKey: .provisioned)
        try container.encode(Timestamp.iso8601(firstSeen), forKey: .firstSeen)
        try container.encode(Timestamp.iso8601(lastSeen), forKey: .lastSeen)
    }
}

/// One step or smoke test of a run on a Grokker. `--json`: `{"record":"step", ...}` or
/// `{"record":"smoke_test", ...}`.
public struct LedgerHistoryItem: Sendable, Equatable, Encodable {
    /// What changed on the unit, when the step changed something people look for.
    public enum Change: Sendable, Equatable {
        /// The firmware step moved the unit from one version to another.
        case firmware(from: String, to: String)
        /// The region step set a region (`from` nil: none was set).
        case region(from: String?, to: String)
    }

    public enum Event: Sendable, Equatable {
        /// A step: its name (`connect`, `firmware`, ...), its result code (`done`, `failed`, ...)
        /// and the error or policy code that came with it.
        case step(name: String, result: String, code: String?, change: Change?)
        /// A smoke test after the step `afterStep`.
        case smokeTest(afterStep: String, passed: Bool, readsPerSecond: Double)
    }

    /// The run's key and kind.
    public var run: String
    public var kind: String
    public var serial: String
    public var at: Date
    public var event: Event
    // The step record's own before and after values, for `--json`.
    private var firmwareBefore, firmwareAfter, regionBefore, regionAfter: String?

    init(_ entry: HistoryEntry) {
        run = entry.run.key
        kind = entry.run.kind.rawValue
        at = entry.at
        switch entry.event {
        case .step(let record):
            serial = record.serial
            (firmwareBefore, firmwareAfter) = (record.firmwareBefore, record.firmwareAfter)
            (regionBefore, regionAfter) = (record.regionBefore, record.regionAfter)
            var change: Change?
            if record.step == "firmware", let before = record.firmwareBefore, let after = record.firmwareAfter, before != after {
                change = .firmware(from: before, to: after)
            }
            if record.step == "region", record.regionBefore != record.regionAfter, let after = record.regionAfter {
                change = .region(from: record.regionBefore, to: after)
            }
            event = .step(name: record.step, result: record.result.rawValue, code: record.code, change: change)
        case .smokeTest(let test):
            serial = test.serial
            event = .smokeTest(afterStep: test.afterStep, passed: test.passed, readsPerSecond: test.readsPerSecond)
        }
    }

    enum CodingKeys: String, CodingKey {
        case record, run, kind, at, step, result, code
        case firmwareBefore = "firmware_before", firmwareAfter = "firmware_after"
        case regionBefore = "region_before", regionAfter = "region_after", readsPerSecond = "reads_per_second"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(run, forKey: .run)
        try container.encode(kind, forKey: .kind)
        try container.encode(Timestamp.iso8601(at), forKey: .at)
        switch event {
        case .step(let name, let result, let code, _):
            try container.encode("step", forKey: .record)
            try container.encode(name, forKey: .step)
            try container.encode(result, forKey: .result)
            try container.encodeIfPresent(code, forKey: .code)
            try container.encodeIfPresent(firmwareBefore, forKey: .firmwareBefore)
            try container.encodeIfPresent(firmwareAfter, forKey: .firmwareAfter)
            try container.encodeIfPresent(regionBefore, forKey: .regionBefore)
            try container.encodeIfPresent(regionAfter, forKey: .regionAfter)
        case .smokeTest(let afterStep, let passed, let readsPerSecond):
            try container.encode("smoke_test", forKey: .record)
            try container.encode(afterStep, forKey: .step)
            try container.encode(passed ? "passed" : "failed", forKey: .result)
            try container.encode(readsPerSecond, forKey: .readsPerSecond)
        }
    }
}
