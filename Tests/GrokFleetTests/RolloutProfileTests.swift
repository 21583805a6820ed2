import Foundation
import GrokFleet
import Testing

/// The halt rule's window in a profile (`rollout.halt.window_devices`, `window_minutes`).
@Suite("Profiles: the halt rule's window")
struct RolloutProfileTests {
    static func parse(_ halt: String) throws(FleetError) -> Profile {
        try Profile.parse(Array(#"{"format": 1, "name": "t", "rollout": {"id": "r", "percentage": 10, "halt": \#(halt)}}"#.utf8), file: "p.json")
    }

    @Test("window_devices and window_minutes are read; without them the window is every unit since the last resume")
    func read() throws {
        #expect(try Self.parse(#"{"after_devices": 4, "max_failure_rate": 0.2, "window_devices": 8, "window_minutes": 90}"#).rollout?.halt
                == .init(afterDevices: 4, maxFailureRate: 0.2, windowDevices: 8, windowMinutes: 90))
        #expect(try Self.parse(#"{"after_devices": 4, "max_failure_rate": 0.2}"#).rollout?.halt
                == .init(afterDevices: 4, maxFailureRate: 0.2, windowDevices: nil, windowMinutes: nil))
    }

    @Test("a window that could never hold after_devices units, or a bad value, is refused naming the key", arguments: [
        (#"{"after_devices": 10, "max_failure_rate": 0.2, "window_devices": 8}"#, "rollout.halt.window_devices"),
        (#"{"after_devices": 1, "max_failure_rate": 0.2, "window_devices": 0}"#, "rollout.halt.window_devices"),
        (#"{"after_devices": 1, "max_failure_rate": 0.2, "window_devices": "all"}"#, "rollout.halt.window_devices"),
        (#"{"after_devices": 1, "max_failure_rate": 0.2, "window_minutes": 0}"#, "rollout.halt.window_minutes"),
        (#"{"after_devices": 1, "max_failure_rate": 0.2, "window_hours": 2}"#, "rollout.halt.window_hours"),
    ])
    func refused(_ halt: String, _ keyPath: String) {
        #expect {
            try Self.parse(halt)
        } throws: { error in
            guard let error = error as? FleetError else { return false }
            return error.arguments.count > 1 && error.arguments[0] == "p.json" && error.arguments[1] == keyPath
        }
    }
}
