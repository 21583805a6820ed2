import Foundation

/// The work of one Grokker's fleet run, in seconds of link time, from its events: what the
/// run's bar fills and its ETA measures (``ETAEstimate`` takes `done` and `total`, in
/// milliseconds, and measures the rate itself). Pure: it only reads the events it is given.
///
/// - A finished step counts what it measured (`step_finished`'s `duration_s`); a skipped
///   one about nothing.
/// - A step not finished counts what it is expected to cost: the smoke tests the profile's
///   `duration_s` and their setup, the firmware step the update's bytes (both images, the
///   whole update's `total` of `firmware_progress`) over the link's rate plus the reset into
///   the loader and the update's completion, the other steps their measured cost on the
///   bench (``expected``).
/// - Until a `firmware_progress` says there is an update, none is expected: the firmware
///   step then costs a version check, and the reconnect and the final smoke test (which
///   only follow an update) nothing. Once it is under way, its sent bytes count as done.
public struct FleetWork: Sendable, Hashable {
    /// Link seconds a byte of firmware takes: 64-byte chunks of about 0.2 s of audio each
    /// at the default 12 samples per bit (docs/benchmarks.md, "Flashing": 224.4 s for the
    /// 1024 chunks of a 64 KiB image, its resets included).
    public static let secondsPerFirmwareByte = 0.2 / 64
    /// After the loader image: ChangeSoftwareType, the unit's reset into the loader and the
    /// reconnect (1.8 s on the bench at real-time pace).
    public static let resetSeconds = 2.0
    /// After the last byte of the reader image: the reset into the application, its
    /// reconnect and the check of the version it runs, until the firmware step ends (3.3 s
    /// on the bench at real-time pace: 1.9 s to the unit answering on the new version, 1.4 s
    /// to the step's end).
    public static let completionSeconds = 3.3

    /// What a step not yet finished is expected to cost, in link seconds, as measured on the
    /// emulated bench at real-time pace (`--realtime`, Tests/Fixtures/fleet-eta): the
    /// handshake and GetVersion (connect), the battery and region reads (identify), the
    /// factory data and region writes; a smoke test adds its inventory's setup to the
    /// profile's duration; the firmware step without an update is a version check, the
    /// reconnect after one a GetVersion (the update's own reconnect is its completion).
    public static func expected(_ step: FleetStep) -> Double {
        switch step {
        case .connect: 0.7
        case .identify: 0.1
        case .provision: 0.9
        case .region: 0.5
        case .smokeTest, .finalSmokeTest: 0.6
        case .firmware: 0.1
        case .reconnect: 0.1
        case .record: 0.01
        }
    }

    /// The profile's smoke test length, seconds (0: no smoke test configured).
    public let smokeTestSeconds: Double
    /// Steps finished, with the seconds each measured.
    public private(set) var finished: [FleetStep: Double] = [:]
    /// The step under way.
    public private(set) var current: FleetStep?
    /// The update's bytes sent and to send, once its first `firmware_progress` came.
    public private(set) var firmwareBytes: Bytes?
    /// Whether the reader image is under way (the loader's reset is behind).
    private var secondImage = false
    public private(set) var isFinished = false

    /// Bytes sent of bytes to send.
    public struct Bytes: Sendable, Hashable {
        public var done: Int
        public var total: Int

        public init(done: Int, total: Int) {
            self.done = done
            self.total = total
        }
    }

    public init(smokeTestSeconds: Double) {
        self.smokeTestSeconds = max(0, smokeTestSeconds)
    }

    /// Takes one of the Grokker's events (others are ignored).
    public mutating func apply(_ event: FleetEvent) {
        switch event.event {
        case "step_started":
            guard let step = event.data["step"]?.string.flatMap(FleetStep.init(rawValue:)) else { return }
            current = step
        case "firmware_progress":
            guard let done = event.data["done"]?.integer, let total = event.data["total"]?.integer, total > 0 else { return }
            firmwareBytes = Bytes(done: min(max(0, done), total), total: total)
            if event.data["image"]?.string == "reader" { secondImage = true }
        case "step_finished":
            guard let step = event.data["step"]?.string.flatMap(FleetStep.init(rawValue:)) else { return }
            finished[step] = max(0, event.data["duration_s"]?.number ?? 0)
            if current == step { current = nil }
        case "device_finished", "device_halted":
            isFinished = true
            current = nil
        default:
            break
        }
    }

    /// Whether an update is (or was) under way: the reconnect and the final smoke test follow it.
    public var updating: Bool { firmwareBytes != nil }

    /// The firmware step's cost: the update's bytes over the link's rate, the reset into the
    /// loader and the completion after the reader image; a version check without an update.
    private var firmwareCost: Double {
        guard let bytes = firmwareBytes else { return Self.expected(.firmware) }
        return Double(bytes.total) * Self.secondsPerFirmwareByte + Self.resetSeconds + Self.completionSeconds
    }

    /// What an unfinished step is expected to cost, link seconds.
    public func cost(_ step: FleetStep) -> Double {
        switch step {
        case .firmware: firmwareCost
        case .smokeTest: smokeTestSeconds > 0 ? smokeTestSeconds + Self.expected(step) : 0
        case .finalSmokeTest: updating && smokeTestSeconds > 0 ? smokeTestSeconds + Self.expected(step) : 0
        case .reconnect: updating ? Self.expected(step) : 0
        default: Self.expected(step)
        }
    }

    /// Link seconds of work done: the finished steps as measured, and the update's sent bytes.
    public var done: Double {
        var sum = finished.values.reduce(0, +)
        if current == .firmware, finished[.firmware] == nil, let bytes = firmwareBytes {
            let sent = Double(bytes.done) * Self.secondsPerFirmwareByte + (secondImage ? Self.resetSeconds : 0)
            sum += min(sent, firmwareCost)
        }
        return sum
    }

    /// Link seconds of the whole run: the finished steps as measured, the others as expected
    /// (all done once the Grokker finished).
    public var total: Double {
        if isFinished { return max(done, 0.001) }
        return finished.values.reduce(0, +) + FleetStep.allCases.filter { finished[$0] == nil }.map(cost).reduce(0, +)
    }

    /// ``done`` and ``total`` in milliseconds, what the bar and ``ETAEstimate`` count.
    public var doneMilliseconds: Int { Int((done * 1000).rounded()) }
    public var totalMilliseconds: Int { max(1, Int((total * 1000).rounded())) }

    /// Steps finished, of all the steps (what the bar's amounts read).
    public var stepsDone: Int { finished.count }
    public static var stepCount: Int { FleetStep.allCases.count }
}
