import Foundation
import GrokTestSupport
@testable import GrokLedger

/// A fresh directory per test, with the ledger two levels down so `open` must create them.
struct Scratch: ~Copyable {
    private let temporary = TemporaryDirectory("grokledger")

    var directory: URL { temporary.url }

    var ledgerPath: String { directory.appendingPathComponent("state/ledgers/ledger.sqlite").path }

    func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

let profileDigest = String(repeating: "ab", count: 32)
let otherDigest = String(repeating: "cd", count: 32)

/// A fixed instant plus `seconds`, so stored times are exact to the millisecond.
func at(_ seconds: Double) -> Date { Date(timeIntervalSince1970: 1_714_560_000 + seconds) }

func start(_ kind: RunKind = .provision, digest: String = profileDigest, at time: Double = 0) -> RunStart {
    RunStart(kind: kind, profileName: "bench-eu", profileSHA256: digest, station: "bench-1", operatorName: "Zoë",
             startedAt: at(time))
}

func step(_ run: RunID, _ serial: String, _ name: String, _ result: StepResult = .done, from: Double = 1, to: Double = 2,
          detail: String = "") -> StepRecord {
    StepRecord(run: run, serial: serial, step: name, startedAt: at(from), endedAt: at(to), result: result,
               firmwareBefore: "1.4.0", firmwareAfter: "1.5.2", regionBefore: nil, regionAfter: "EU",
               code: result == .failed ? "link_timeout" : nil, detail: detail)
}

/// Splits RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF record ends) into records.
func parseCSV(_ text: String) -> [[String]] {
    var records: [[String]] = []
    var record: [String] = []
    var field = ""
    var quoted = false
    var chars = Array(text)[...]
    while let c = chars.popFirst() {
        if quoted {
            if c == "\"" {
                if chars.first == "\"" { field.append("\""); chars.removeFirst() } else { quoted = false }
            } else {
                field.append(c)
            }
        } else if c == "\"" {
            quoted = true
        } else if c == "," {
            record.append(field); field = ""
        } else if c == "\r\n" || c == "\n" {
            record.append(field); field = ""
            records.append(record); record = []
        } else {
            field.append(c)
        }
    }
    if !field.isEmpty || !record.isEmpty { record.append(field); records.append(record) }
    return records
}

/// A ledger file at `path` as a grokctl of schema `version` made it (the first `version`
/// migrations, WAL), for a test to fill with that version's rows before a newer open.
func olderLedger(at path: String, version: Int) throws -> SQLiteConnection {
    try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
    let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1000, create: true)
    try connection.setCheckpointOnClose(true)
    try Schema.migrate(connection, migrations: Array(Schema.migrations.prefix(version)))
    _ = try connection.queryText("PRAGMA journal_mode = WAL")
    return connection
}
