import Foundation
import GrokTestSupport
import Testing

@testable import GrokFleet

/// Where a run's plain-text log goes: beside its report (docs/fleet.md, "The run's log").
@Suite("The run's log")
struct RunLogPathTests {
    func session(report: String?) throws -> FleetSession {
        try FleetSession(FleetSession.Configuration(
            mode: .provision, profileFile: packageRoot + "/profiles/bench-us.json", devices: [],
            ports: DevicePortContext(bench: Bench(directory: "/b"), lockDirectory: "/l"),
            defaultLedger: "/l.sqlite", spoolDirectory: "/s", lockDirectory: "/l", reportFile: report, reportsDirectory: "/state/reports",
            runID: "20261206-152423-219f"))
    }

    @Test("--report r.json: r.log beside it; no --report or --report -: <reports>/<run id>.log")
    func beside() throws {
        #expect(try session(report: "/tmp/r.json").logPath == "/tmp/r.log")
        #expect(try session(report: "/tmp/run-report").logPath == "/tmp/run-report.log")
        #expect(try session(report: nil).logPath == "/state/reports/20261206-152423-219f.log")
        #expect(try session(report: "-").logPath == "/state/reports/20261206-152423-219f.log")
        // Nothing is made beside a device.
        #expect(try session(report: "/dev/full").logPath == "/state/reports/20261206-152423-219f.log")
    }
}
