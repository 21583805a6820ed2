import GrokFleet
import Testing

/// The wall-clock bounds a profile sets or derives (docs/profiles.md, "Wall-clock bounds").
@Suite("Profile: wall-clock bounds")
struct WallClockBoundsProfileTests {
    private let base = #"{"format": 1, "name": "t", "timeouts": "#

    @Test("without stall_s, step_s or device_run_s the bounds are derived from the link timeouts")
    func derived() throws {
        let profile = try Profile.parse(Array((base + #"{"handshake_s": 2, "command_s": 4, "reconnect_s": 10}}"#).utf8), file: "p.json")
        let timeouts = profile.timeouts
        #expect(timeouts.stallBound == 6)
        #expect(timeouts.stepBound == 240)
        #expect(timeouts.bound(of: .region) == 240)
        #expect(timeouts.bound(of: .firmware) == 960)
        #expect(timeouts.deviceRunBound == Double(FleetStep.allCases.count - 1) * 240 + 960)
    }

    @Test("the profile sets each bound")
    func set() throws {
        let profile = try Profile.parse(Array((base + #"{"stall_s": 1.5, "step_s": 30, "device_run_s": 600}}"#).utf8), file: "p.json")
        #expect(profile.timeouts.stallBound == 1.5)
        #expect(profile.timeouts.bound(of: .smokeTest) == 30)
        #expect(profile.timeouts.bound(of: .firmware) == 120)
        #expect(profile.timeouts.deviceRunBound == 600)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        var timeouts: String
        var keyPath: String
        /// The rule the error gives (code, then its values); empty: not checked.
        var expected: [String]
        var testDescription: String { timeouts }
    }

    static let bad: [Bad] = [
        Bad(timeouts: #"{"stall_s": 0}"#, keyPath: "timeouts.stall_s", expected: ["number_range_seconds", "0.1", "600"]),
        Bad(timeouts: #"{"step_s": 0.5}"#, keyPath: "timeouts.step_s", expected: ["number_range_seconds", "1", "86400"]),
        Bad(timeouts: #"{"device_run_s": "long"}"#, keyPath: "timeouts.device_run_s", expected: ["number_range_seconds", "1", "604800"]),
        Bad(timeouts: #"{"stall_s": 10, "step_s": 5}"#, keyPath: "timeouts.step_s",
            expected: ["more_than_stall", "10"]),
        Bad(timeouts: #"{"step_s": 100, "device_run_s": 50}"#, keyPath: "timeouts.device_run_s",
            expected: ["at_least_step", "100"]),
        Bad(timeouts: #"{"step": 100}"#, keyPath: "timeouts.step", expected: []),
    ]

    @Test("a bound out of range, or one that leaves no room for the one inside it, is refused naming the key", arguments: bad)
    func refused(_ bad: Bad) {
        do {
            _ = try Profile.parse(Array((base + bad.timeouts + "}").utf8), file: "p.json")
            Issue.record("accepted \(bad.timeouts)")
        } catch {
            #expect(error.arguments.count > 1 && error.arguments[1] == bad.keyPath, "\(error)")
            // After file, key path and the value found: the rule, as a code and its values.
            if !bad.expected.isEmpty { #expect(Array(error.arguments.dropFirst(3)) == bad.expected, "\(error)") }
        }
    }
}
