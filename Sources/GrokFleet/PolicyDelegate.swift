import Foundation
import GrokCrypto
import GrokProtocol
import Synchronization

/// What a run does (docs/fleet.md).
public enum FleetMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Bring each Grokker to the profile: provision, region, firmware, smoke tests. Every
    /// unit on the bench is done: the staged rollout and its halt rule do not apply.
    case provision
    /// Unattended: the policy decides; the staged rollout and the halt rule apply.
    case rollout
    /// Check identity, firmware, region and a smoke test; change nothing.
    case verify
}

/// Staged-rollout selection: a serial number's place in a rollout is the first 8 bytes of
/// SHA-256("<rollout id>:<8-digit serial>") read as a big-endian integer, scaled to
/// 0 ..< 100. A device is selected when its place is below the percentage, so the same
/// devices are chosen every time, raising the percentage only adds devices, and a new
/// rollout id draws a new, independent sample.
public enum RolloutSelection {
    /// The place of `serial` in rollout `id`, 0 ..< 100.
    public static func place(serial: String, rolloutID id: String) -> Double {
        let digest = SHA256.hash(Array("\(id):\(serial)".utf8)).bytes
        var value: UInt64 = 0
        for byte in digest.prefix(8) { value = value << 8 | UInt64(byte) }
        return Double(value >> 11) / Double(UInt64(1) << 53) * 100
    }

    /// Whether rollout `policy` selects `serial`.
    public static func selects(_ policy: RolloutPolicy, serial: String) -> Bool {
        place(serial: serial, rolloutID: policy.id) < policy.percentage
    }
}

/// Counts how the devices of a run ended, for the halt rule. Thread-safe: every device
/// thread of a run reports to the one tracker.
public final class RolloutTracker: Sendable {
    private let counts = Mutex<(finished: Int, failed: Int)>((0, 0))

    public init() {}

    /// Notes how a started device ended (devices never started are not counted).
    public func record(_ outcome: DeviceOutcome) {
        guard outcome != .halted, outcome != .interrupted else { return }
        counts.withLock {
            $0.finished += 1
            if outcome == .failed { $0.failed += 1 }
        }
    }

    /// Devices finished and failed so far.
    public var tally: (finished: Int, failed: Int) { counts.withLock { $0 } }

    /// The halt, when `rule` says to stop starting devices: at least `afterDevices`
    /// finished and more than `maxFailureRate` of them failed.
    public func halt(_ rule: RolloutPolicy.HaltRule) -> FleetError? {
        let (finished, failed) = tally
        guard finished >= rule.afterDevices, finished > 0 else { return nil }
        guard Double(failed) / Double(finished) > rule.maxFailureRate else { return nil }
        return .halted(failed: failed, finished: finished, threshold: rule.maxFailureRate)
    }
}

/// The unattended delegate: every decision comes from a profile. Firmware updates are
/// postponed outside the maintenance windows, below the minimum battery and once the
/// rollout halted; cancelled for serial numbers the staged rollout does not select; the
/// region is the profile's (or the only one allowed); failures are retried as many times as
/// the profile's `retries` say.
public struct PolicyDelegate: ConfigurationDelegate {
    public let profile: Profile
    public let mode: FleetMode
    /// The clock maintenance windows are judged by.
    public let now: @Sendable () -> Date
    /// Shared by every device of the run (the halt rule).
    public let tracker: RolloutTracker

    public init(profile: Profile, mode: FleetMode, tracker: RolloutTracker = RolloutTracker(),
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.profile = profile
        self.mode = mode
        self.tracker = tracker
        self.now = now
    }

    /// The policy's answer for a firmware update of the device in `context`, first rule first:
    /// halted, outside the windows, battery low, not selected by the rollout.
    public func firmwareDecision(_ context: FleetDeviceContext, offer: FirmwareOffer?) -> FirmwareUpdateDecision {
        var halt: FleetError?
        if mode == .rollout, let rule = profile.rollout?.halt { halt = tracker.halt(rule) }
        return StepDecider(profile: profile).firmwarePolicy(mode: mode, device: context.device, serial: context.serial,
                                                            batteryPercent: offer?.batteryPercent,
                                                            externalPower: offer?.externalPower ?? false, now: now(), halt: halt)
    }

    public func firmwarePolicy(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision {
        firmwareDecision(context, offer: offer)
    }

    public func promptForFirmwareUpdate(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision {
        firmwareDecision(context, offer: offer)
    }

    public func notifyFirmwareUpdateFailure(_ context: FleetDeviceContext, error: FleetError, mustRetry: Bool, attempt: Int) -> RetryDecision {
        attempt <= profile.retries.firmware ? .retry : .giveUp
    }

    public func notifyLoadRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision {
        attempt <= profile.retries.region ? .retry : .giveUp
    }

    public func notifySetRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision {
        attempt <= profile.retries.region ? .retry : .giveUp
    }

    /// The profile's region; without one, the region already selected, or the only one offered.
    public func chooseRegionFromRegions(_ context: FleetDeviceContext, names: [String], selected: Int?) -> Int? {
        if let wanted = profile.region?.set { return names.firstIndex(of: wanted.name) }
        if let selected { return selected }
        return names.count == 1 ? 0 : nil
    }

    /// Yes for the profile's region (or, without one, any region it allows).
    public func confirmRegion(_ context: FleetDeviceContext, name: String) -> Bool {
        guard let policy = profile.region else { return false }
        if let wanted = policy.set { return wanted.name == name }
        return policy.allowed.contains { $0.name == name }
    }

    public func shouldStartDevice(_ context: FleetDeviceContext) -> FleetError? {
        guard mode == .rollout, let rule = profile.rollout?.halt else { return nil }
        return tracker.halt(rule)
    }

    public func deviceFinished(_ context: FleetDeviceContext, outcome: DeviceOutcome, steps: [StepOutcome]) {
        tracker.record(outcome)
    }
}
