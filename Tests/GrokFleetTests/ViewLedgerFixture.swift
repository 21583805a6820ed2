import Foundation
import GrokLedger
import GrokTestSupport

/// A station's SQLite ledger for the views' tests, written through the ledger's own API as
/// runs write it: one provision run on two Grokkers (steps, a firmware and a region change,
/// a smoke test), and optionally a rollout stage with one unit's result.
struct ViewLedgerFixture {
    let directory = TemporaryDirectory("grok-views")
    var path: String { directory.file("ledger.sqlite") }
    let serials = ["00000041", "00000042"]
    let runKey = "20261201-100000-aaaa"
    static let base = Date(timeIntervalSince1970: 1_796_000_000)   // 2026-11-30T00:53:20Z

    static func at(_ minute: Double) -> Date { base.addingTimeInterval(minute * 60) }

    /// The ledger with the provision run.
    func make() throws -> Ledger {
        let ledger = try Ledger.open(path: path, heartbeatInterval: nil)
        let run = try ledger.beginRun(RunStart(kind: .provision, profileName: "bench-us", profileSHA256: String(repeating: "ab", count: 32),
                                               station: "bench-a", operatorName: "Zoë", startedAt: Self.at(0), key: runKey))
        for serial in serials {
            try ledger.upsertDevice(DeviceSighting(serial: serial, hardwareType: "grokker", hardwareRevision: "3", firmware: "1.8.0",
                                                   region: "FCC", provisioned: true, seenAt: Self.at(1)))
        }
        let serial = serials[0]
        try ledger.recordStep(StepRecord(run: run, serial: serial, step: "connect", startedAt: Self.at(1), endedAt: Self.at(1.1), result: .done))
        try ledger.recordStep(StepRecord(run: run, serial: serial, step: "region", startedAt: Self.at(2), endedAt: Self.at(2.1), result: .done,
                                         regionBefore: nil, regionAfter: "FCC"))
        try ledger.recordStep(StepRecord(run: run, serial: serial, step: "firmware", startedAt: Self.at(3), endedAt: Self.at(3.5), result: .done,
                                         firmwareBefore: "1.7.3", firmwareAfter: "1.8.0"))
        try ledger.recordSmokeTest(SmokeTestRecord(run: run, serial: serial, afterStep: "firmware", startedAt: Self.at(4), durationMilliseconds: 3000,
                                                   expectedTags: ["A"], foundTags: ["A"], readsPerSecond: 41.5, minRSSI: -50, passed: true))
        try ledger.recordStep(StepRecord(run: run, serial: serials[1], step: "connect", startedAt: Self.at(5), endedAt: Self.at(5.1),
                                         result: .failed, code: "reader_timeout"))
        try ledger.finishRun(run, outcome: .failed, endedAt: Self.at(6), reportPath: "/r/run.json")
        return ledger
    }

    /// The stage a rollout run makes before its first unit (`percentage`, by `ops`), and,
    /// with `failed`, the first Grokker's failed result in it.
    func addRollout(_ ledger: Ledger, _ id: String, percentage: Double = 100, failed: Bool) throws {
        let check = StageCheck(rolloutID: id, release: "1.8.0", profilePercentage: percentage, rule: nil, station: "bench-a", actor: "ops",
                               runKey: runKey, now: Self.at(10))
        _ = try ledger.checkRolloutStage(check)
        guard failed else { return }
        _ = try ledger.recordRolloutResult(RolloutResult(rolloutID: id, runKey: runKey, station: "bench-a", serial: serials[0],
                                                         percentage: percentage, outcome: .failed, hardwareRevision: "3",
                                                         firmwareAfter: "1.7.3", finishedAt: Self.at(11)), check)
    }
}

/// `value`'s JSON as an object.
func jsonObject(_ value: some Encodable) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any] ?? [:]
}
