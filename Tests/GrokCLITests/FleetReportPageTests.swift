import Foundation
import GrokFleet
import GrokLedger
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The report page as rendered from a view made by hand (no process, no browser): what it
/// says about a halt, its stage history, its failed units, its throughput and its dates, and
/// how its time charts are laid out. The browser's rendering is `FleetReportChromiumTests`.
@Suite("Fleet report page")
struct FleetReportPageTests {
    static let base = Date(timeIntervalSince1970: 1_796_000_000)   // 2026-11-30T00:53:20Z

    static func result(_ serial: String, _ outcome: RolloutUnitOutcome, station: String, seconds: Double) -> RolloutResult {
        RolloutResult(rolloutID: "eu-1.8", runKey: "run-\(station)", station: station, serial: serial, percentage: 100, outcome: outcome,
                      hardwareRevision: "3", firmwareAfter: nil, finishedAt: base.addingTimeInterval(seconds))
    }

    /// A rollout halted after three failures in a few seconds (a bench's usual pace), then
    /// resumed with a note; ten Grokkers in the ledger, six of them without a result.
    static func view(_ zone: TimeZone) -> FleetStatusView {
        var snapshot = FleetSnapshot()
        let halt = RolloutHalt(failed: 3, finished: 3, threshold: 0.2, trippedBy: "bench-1", stationFailures: 3,
                               rule: RolloutHaltRule(afterDevices: 3, maxFailureRate: 0.2))
        snapshot.rollouts.stages = [RolloutStage(rolloutID: "eu-1.8", release: "1.8.0", percentage: 100, state: .halted,
                                                 reasonCode: "fleet_halted", reasonDetail: halt.json, trippedBy: "bench-1",
                                                 updatedAt: base.addingTimeInterval(9), updatedBy: "bench-1")]
        snapshot.rollouts.events = [
            StageEvent(rolloutID: "eu-1.8", action: .created, percentageBefore: nil, percentageAfter: 100, station: "bench-1", actor: "Zoë",
                       note: "run-1", at: base),
            StageEvent(rolloutID: "eu-1.8", action: .paused, percentageBefore: 100, percentageAfter: 100, station: nil, actor: "Ann",
                       note: "lunch break", at: base.addingTimeInterval(2)),
            StageEvent(rolloutID: "eu-1.8", action: .resumed, percentageBefore: 100, percentageAfter: 100, station: nil, actor: "Ann",
                       note: "back", at: base.addingTimeInterval(3)),
            StageEvent(rolloutID: "eu-1.8", action: .halted, percentageBefore: 100, percentageAfter: 100, station: "bench-1",
                       actor: "bench-1", note: "run-1", at: base.addingTimeInterval(9)),
        ]
        snapshot.rollouts.results = [Self.result("00000001", .succeeded, station: "bench-0", seconds: 4)]
            + (2...4).map { Self.result("0000000\($0)", .failed, station: "bench-1", seconds: 5 + Double($0)) }
        snapshot.failedSteps = (2...4).map {
            FleetSnapshot.FailedStep(runKey: "run-bench-1", serial: "0000000\($0)", step: "smoke_test", code: "fleet_smoke_test_failed",
                                     detail: "missing reference tags", endedAt: base.addingTimeInterval(5 + Double($0)),
                                     usbPath: $0 == 2 ? "1-1.4" : nil)
        }
        snapshot.devices = (0..<10).map { FleetSnapshot.Device(serial: String(format: "%08d", $0 + 1), station: "bench-0") }
        return FleetStatusView(snapshot, selects: { _, _, _ in true },
                               profiles: ["eu-1.8": .init(halt: RolloutPolicy.HaltRule(afterDevices: 2, maxFailureRate: 0.1))],
                               timeZone: zone, now: base.addingTimeInterval(60))
    }

    /// The table with `id`, whole.
    static func table(_ page: String, _ id: String) -> String? {
        guard let start = page.range(of: "<table id=\"\(id)\">"), let end = page.range(of: "</table>", range: start.upperBound..<page.endIndex)
        else { return nil }
        return String(page[start.lowerBound..<end.upperBound])
    }

    /// The `<text>` labels of one chart with `class` `name`: their x and anchor.
    static func labels(_ page: String, chart: String, name: String) -> [(x: Double, anchor: String, text: String)] {
        guard let start = page.range(of: "data-chart=\"\(chart)\""), let end = page.range(of: "</svg>", range: start.upperBound..<page.endIndex)
        else { return [] }
        let svg = String(page[start.upperBound..<end.lowerBound])
        let pattern = try! NSRegularExpression(pattern: "<text class=\"\(name)\" x=\"([0-9.]+)\" y=\"[0-9.]+\" text-anchor=\"(\\w+)\">([^<]*)</text>")
        return pattern.matches(in: svg, range: NSRange(svg.startIndex..., in: svg)).map { match in
            func group(_ i: Int) -> String { String(svg[Range(match.range(at: i), in: svg)!]) }
            return (Double(group(1)) ?? -1, group(2), group(3))
        }
    }

    @Test("the page reads the halt by the rule that halted it, and shows the stage history, the failed units, throughput and the time zone",
          arguments: Language.allCases)
    func pageSaysWhatHappened(_ language: Language) throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let localizer = Localizer(language: language)
        let view = Self.view(zone)
        let page = FleetReportPage(localizer: localizer, ledger: "/l.sqlite", generatedAt: Self.base, timeZone: zone).html(view)
        let render = FleetReportPage(localizer: localizer, ledger: "", generatedAt: Self.base)
        // One threshold: the stage's 20 %, never the profile's 10 %.
        #expect(page.contains(render.escape(localizer.text(.fleetStatusJudgementHalted, "3", "3", "20"))), "\(language)")
        #expect(page.contains(render.escape(localizer.text(.reportThreshold, "20"))))
        #expect(!page.contains(render.escape(localizer.text(.reportThreshold, "10"))))
        // The stage history, with who, why and the notes, as `fleet status` shows it.
        let history = try #require(Self.table(page, "history"))
        for word in ["Zoë", "Ann", "lunch break", "back", "bench-1", localizer.text(.fleetActionPaused), localizer.text(.fleetActionResumed),
                     localizer.text(.fleetActionHalted)] {
            #expect(history.contains(render.escape(word)), "\(language): no '\(word)' in the history")
        }
        // The halt's row says why: its own figures and threshold.
        #expect(history.contains(render.escape(localizer.text(.fleetStatusJudgementHalted, "3", "3", "20"))), "\(language)")
        // Which units failed: serial, station, step and why.
        let failed = try #require(Self.table(page, "failed-units"))
        #expect(failed.components(separatedBy: "<tr>").count - 2 == 3, "three failed units")
        #expect(failed.contains("00000003") && failed.contains("bench-1") && failed.contains(render.escape(localizer.stepName(.smokeTest))))
        #expect(failed.contains("fleet_smoke_test_failed: missing reference tags"))
        // Where it was plugged in: the USB port of the one on a card (the others: –).
        #expect(failed.contains(render.escape(localizer.text(.fleetColumnUsbPort))) && failed.contains("usb:1-1.4"), "\(language)")
        // Throughput per station and day, and the time zone the dates are in.
        let throughput = try #require(Self.table(page, "throughput"))
        #expect(throughput.contains("2026-11-30") && throughput.contains("bench-0") && throughput.contains("bench-1"))
        #expect(page.contains(render.escape(localizer.text(.reportTimeZone, "Europe/Berlin", "+01:00"))), "\(language)")
    }

    @Test("the time axis' two labels sit at its two ends and never overlap; the Pending series ends at the pending count")
    func chartsLayOutTrue() throws {
        let zone = try #require(TimeZone(identifier: "UTC"))
        let view = Self.view(zone)
        let rollout = try #require(view.rollouts.first)
        #expect(rollout.totals.pending == 6)
        for language in Language.allCases {
            let page = FleetReportPage(localizer: Localizer(language: language), ledger: "", generatedAt: Self.base, timeZone: zone).html(view)
            for chart in ["progress", "failure-rate"] {
                let start = Self.labels(page, chart: chart, name: "time-start")
                let end = Self.labels(page, chart: chart, name: "time-end")
                #expect(start.count == 1 && end.count == 1, "\(language) \(chart): \(start) \(end)")
                guard let first = start.first, let last = end.first else { continue }
                #expect(first.anchor == "start" && last.anchor == "end")
                // The first label runs right from its x, the last left from its x: their extents must not meet.
                let firstEnd = first.x + FleetReportPage.textWidth(first.text)
                let lastStart = last.x - FleetReportPage.textWidth(last.text)
                #expect(firstEnd < lastStart, "\(language) \(chart): labels overlap (\(firstEnd) ≥ \(lastStart))")
            }
            #expect(page.contains("class=\"series-pending\" data-last=\"6\""), "\(language)")
        }
    }
}
