import Foundation
import GrokLedger

/// `grokctl ledger check` and `ledger recover`: the read-only check of a ledger (the whole
/// file, or what makes sense on a server) and the salvage of a damaged file into a new one.
/// Each result's `Encodable` form is its `--json` line.
public enum LedgerCheck {
    /// What the check found, by the kind of ledger.
    public enum Finding: Sendable, Equatable {
        case file(LedgerFileCheck)
        case shared(SharedLedgerCheck)
    }

    /// Checks the ledger at `location`. A file is checked whole (pages, log, rows, schema);
    /// a shared ledger for its schema version, runs left open and rows naming what does not exist.
    /// - Throws: ``FleetError/ledgerMissing(path:)``, or the ledger's error naming the damage
    ///   and the way to recover.
    public static func check(location: String) throws -> Finding {
        if LedgerLocation.isShared(location) {
            let reading = try LedgerReading(location: location)
            guard let shared = reading.shared else { throw FleetError.ledgerMissing(path: location) }
            return .shared(SharedLedgerCheck(try shared.check()))
        }
        guard FileManager.default.fileExists(atPath: location) else { throw FleetError.ledgerMissing(path: location) }
        return .file(LedgerFileCheck(try Ledger.check(path: location)))
    }

    /// Salvages what is readable of the ledger file `location` into `output`.
    /// - Throws: ``FleetError/ledgerMissing(path:)``, or the ledger's error when nothing can be read.
    public static func recover(location: String, to output: String) throws -> LedgerRecovery {
        guard FileManager.default.fileExists(atPath: location) else { throw FleetError.ledgerMissing(path: location) }
        return LedgerRecovery(try Ledger.recover(from: location, to: output))
    }

    static func names(_ counts: [LedgerTable: Int]) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) })
    }
}

/// A sound ledger file: its schema, size, rows by table (SQL names), runs left open, commits in its log.
public struct LedgerFileCheck: Sendable, Equatable, Encodable {
    public var path: String
    public var schemaVersion: Int
    public var pages: Int
    public var rows: [String: Int]
    public var openRuns: Int
    public var walCommits: Int

    init(_ report: LedgerCheckReport) {
        path = report.path
        schemaVersion = report.schemaVersion
        pages = report.pages
        rows = LedgerCheck.names(report.rows)
        openRuns = report.openRuns
        walCommits = report.walCommits
    }

    enum CodingKeys: String, CodingKey {
        case record, path, pages, rows
        case schemaVersion = "schema_version", openRuns = "open_runs", walCommits = "wal_commits"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("check", forKey: .record)
        try container.encode(path, forKey: .path)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(pages, forKey: .pages)
        try container.encode(rows, forKey: .rows)
        try container.encode(openRuns, forKey: .openRuns)
        try container.encode(walCommits, forKey: .walCommits)
    }
}

/// A shared ledger as checked: rows by table, runs left open by live stations, by stations
/// that are gone, not seen for over ten minutes, and rows naming what does not exist.
public struct SharedLedgerCheck: Sendable, Equatable, Encodable {
    /// The database, without its password.
    public var target: String
    public var schemaVersion: Int
    public var rows: [String: Int]
    public var openRunsAlive: Int
    /// The keys of runs left open by a station whose process is gone.
    public var openRunsDead: [String]
    public var staleRuns: [String]
    /// By table: rows naming a run or device that does not exist.
    public var foreignRows: [String: Int]
    /// Whether nothing calls for action.
    public var isSound: Bool

    init(_ report: SharedLedgerCheckReport) {
        target = report.target
        schemaVersion = report.schemaVersion
        rows = LedgerCheck.names(report.rows)
        openRunsAlive = report.openRunsAlive
        openRunsDead = report.openRunsDead
        staleRuns = report.staleRuns
        foreignRows = report.foreignRows
        isSound = report.isSound
    }

    enum CodingKeys: String, CodingKey {
        case record, target, rows, sound
        case schemaVersion = "schema_version", openRunsAlive = "open_runs_alive", openRunsDead = "open_runs_dead"
        case staleRuns = "stale_runs", foreignRows = "foreign_rows"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("check", forKey: .record)
        try container.encode(target, forKey: .target)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(rows, forKey: .rows)
        try container.encode(openRunsAlive, forKey: .openRunsAlive)
        try container.encode(openRunsDead, forKey: .openRunsDead)
        try container.encode(staleRuns, forKey: .staleRuns)
        try container.encode(foreignRows, forKey: .foreignRows)
        try container.encode(isSound, forKey: .sound)
    }
}

/// What `ledger recover` salvaged into a new file and what it lost.
public struct LedgerRecovery: Sendable, Equatable, Encodable {
    /// Rows of one table that could not be read, as ranges of row ids.
    public struct Lost: Sendable, Equatable {
        public var table: String
        public var count: Int64
        public var ranges: [ClosedRange<Int64>]
    }

    public var source: String
    public var output: String
    /// Why the file needed recovering (nil: it was only salvaged).
    public var problem: LedgerError?
    /// Rows recovered by table.
    public var recovered: [String: Int]
    /// The runs, steps, smoke tests and intents lost, in that order, the tables with losses only.
    public var lostRows: [Lost]
    /// The rows of `devices` lost (a device is seen again on its next run).
    public var lostDevices: [ClosedRange<Int64>]
    /// Runs recreated empty so that the steps that name them are kept.
    public var placeholderRuns: [Int64]
    public var walCommitsLost: Int
    /// Whether nothing was lost.
    public var isComplete: Bool
    private var lost: [String: [ClosedRange<Int64>]]

    init(_ report: LedgerRecoveryReport) {
        source = report.source
        output = report.output
        problem = report.problem
        recovered = LedgerCheck.names(report.recovered)
        lostRows = [LedgerTable.runs, .steps, .smokeTests, .intents].filter { report.lostCount($0) > 0 }.map {
            Lost(table: $0.rawValue, count: report.lostCount($0), ranges: report.lost[$0] ?? [])
        }
        lostDevices = report.lost[.devices] ?? []
        placeholderRuns = report.placeholderRuns
        walCommitsLost = report.walCommitsLost
        isComplete = report.isComplete
        lost = Dictionary(uniqueKeysWithValues: report.lost.filter { !$0.value.isEmpty }.map { ($0.key.rawValue, $0.value) })
    }

    enum CodingKeys: String, CodingKey {
        case record, source, output, problem, recovered, lost, complete
        case placeholderRuns = "placeholder_runs", walCommitsLost = "wal_commits_lost"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("recovery", forKey: .record)
        try container.encode(source, forKey: .source)
        try container.encode(output, forKey: .output)
        try container.encodeIfPresent(problem?.code, forKey: .problem)
        try container.encode(recovered, forKey: .recovered)
        try container.encode(lost.mapValues { $0.map { [$0.lowerBound, $0.upperBound] } }, forKey: .lost)
        try container.encode(placeholderRuns, forKey: .placeholderRuns)
        try container.encode(walCommitsLost, forKey: .walCommitsLost)
        try container.encode(isComplete, forKey: .complete)
    }
}
