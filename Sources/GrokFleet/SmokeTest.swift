import GrokBasics
import GrokProtocol
import UGrokIt

/// What one smoke-test inventory measured, and whether it passed.
public struct SmokeTestMeasurement: Sendable, Hashable {
    public var passed: Bool
    /// Stable codes of what fell short: `missing_tags`, `reads_per_second`, `rssi`, `no_reads`.
    public var reasons: [String]
    public var reads: Int
    /// Seconds of audio the inventory ran.
    public var duration: Double
    public var readsPerSecond: Double
    public var uniqueTags: Int
    public var missingTags: [String]
    /// The strongest read, dBm (the stronger of the I and Q channels).
    public var strongestRSSI: Double?
    /// The weakest of the reference tags' strongest reads, dBm.
    public var weakestReferenceRSSI: Double?

    /// A measurement with these figures.
    public init(passed: Bool, reasons: [String], reads: Int, duration: Double, readsPerSecond: Double, uniqueTags: Int,
                missingTags: [String], strongestRSSI: Double?, weakestReferenceRSSI: Double?, measured: Bool = true) {
        self.passed = passed
        self.reasons = reasons
        self.reads = reads
        self.duration = duration
        self.readsPerSecond = readsPerSecond
        self.uniqueTags = uniqueTags
        self.missingTags = missingTags
        self.strongestRSSI = strongestRSSI
        self.weakestReferenceRSSI = weakestReferenceRSSI
        self.measured = measured
    }

    /// A test that could not run because the reader has no region: no figures.
    public static func regionNotSet() -> SmokeTestMeasurement {
        SmokeTestMeasurement(passed: false, reasons: ["region_not_set"], reads: 0, duration: 0, readsPerSecond: 0,
                             uniqueTags: 0, missingTags: [], strongestRSSI: nil, weakestReferenceRSSI: nil,
                             measured: false)
    }

    /// Whether an inventory ran (false: the test could not start, so there are no figures).
    public var measured = true

    /// The arguments of the catalog's `error.fleet_smoke_test_failed` after the device:
    /// the reasons (comma-separated codes, shown through `fleet.smoke_reason.<code>`), then
    /// the figures of `fleet.smoke_figures` (empty when nothing was measured): reads,
    /// seconds, reads per second, tags, the missing tags, the weakest reference tag's
    /// strongest read and, without reference tags, the strongest read (dBm; each empty when
    /// it does not apply). Numbers are in English form; the message localizes them.
    public var messageArguments: [String] {
        guard measured else { return [reasons.joined(separator: ","), "", "", "", "", "", "", ""] }
        return [
            reasons.joined(separator: ","), String(reads), NumberText.plain(duration), NumberText.plain(readsPerSecond),
            String(uniqueTags), missingTags.joined(separator: " "), weakestReferenceRSSI.map(NumberText.plain) ?? "",
            weakestReferenceRSSI == nil ? strongestRSSI.map(NumberText.plain) ?? "" : "",
        ]
    }

    /// The figures in English, from the catalog (`fleet.smoke_figures`), for logs and the report.
    public var detail: String {
        MessageCatalog.english.text("fleet.smoke_figures", Array(messageArguments.dropFirst()))
    }
}

/// The smoke test: an inventory of the profile's type and length that must find every
/// reference tag, at the minimum read rate, each reference tag's strongest read at least
/// the minimum RSSI (without reference tags: the strongest read). Durations are seconds of
/// audio, so the result does not depend on the host's speed. It changes nothing on the reader.
public enum SmokeTest {
    /// Runs the test on a connected session (the reader's region must be set).
    public static func run(_ policy: Profile.SmokeTestPolicy, on session: ReaderSession) throws(ReaderError) -> SmokeTestMeasurement {
        var configuration = UgiRfidConfiguration.config(inventoryType: policy.inventoryType)
        configuration.soundType = .none
        // RSSI is asked for on every run: `min_rssi_dbm` judges it, the ledger records it.
        configuration.reportRssi = true
        // Dual target: tags still quiet from an inventory just before (a re-run, a retry)
        // are read on the other target, so every test sees every tag.
        configuration.roundsWithNoFindsToToggleAB = max(configuration.roundsWithNoFindsToToggleAB, 2)
        _ = session.takeReports()
        let start = session.elapsedMilliseconds
        try session.startInventory(configuration)
        var reports: [TagReport] = []
        do {
            try session.collect(forAtMost: policy.duration)
            reports = session.takeReports()
            try session.stopInventory()
        } catch {
            if session.inventoryRunning { _ = try? session.stopInventory() }
            throw error
        }
        let duration = max((session.elapsedMilliseconds - start) / 1000, 0.001)
        return judge(policy, reports: reports, duration: duration)
    }

    /// Judges a set of reads against the policy.
    public static func judge(_ policy: Profile.SmokeTestPolicy, reports: [TagReport], duration: Double) -> SmokeTestMeasurement {
        // Each tag's strongest read, dBm; nil for a tag read only without RSSI.
        var strongest: [[UInt8]: Double?] = [:]
        for report in reports {
            let known = strongest[report.epc] ?? nil
            switch (known, report.rssiDBm) {
            case let (a?, b?): strongest[report.epc] = max(a, b)
            case let (a, b): strongest[report.epc] = .some(a ?? b)
            }
        }
        let readsPerSecond = Double(reports.count) / duration
        let missing = policy.referenceTags.filter { strongest[$0.bytes] == nil }
        let referenceRSSI = policy.referenceTags.compactMap { strongest[$0.bytes] }
        let weakestReference = referenceRSSI.contains { $0 == nil } ? nil : referenceRSSI.compactMap { $0 }.min()
        let best = strongest.values.compactMap { $0 }.max()
        var reasons: [String] = []
        if reports.isEmpty { reasons.append("no_reads") }
        if !missing.isEmpty { reasons.append("missing_tags") }
        if readsPerSecond < policy.minReadsPerSecond { reasons.append("reads_per_second") }
        if let minimum = policy.minRSSI, !reports.isEmpty {
            // A read without RSSI cannot show the minimum was reached: it fails the test.
            let judged = policy.referenceTags.isEmpty ? best : weakestReference
            let unmeasured = policy.referenceTags.isEmpty ? best == nil : referenceRSSI.contains { $0 == nil }
            if unmeasured || (judged.map { $0 < minimum } ?? false) { reasons.append("rssi") }
        }
        return SmokeTestMeasurement(passed: reasons.isEmpty, reasons: reasons, reads: reports.count, duration: duration,
                                    readsPerSecond: readsPerSecond, uniqueTags: strongest.count,
                                    missingTags: missing.map(\.description), strongestRSSI: best, weakestReferenceRSSI: weakestReference)
    }
}
