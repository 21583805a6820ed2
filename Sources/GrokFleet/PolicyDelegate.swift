import Foundation
import GrokCrypto
import GrokProtocol
import GrokLedger
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

/// A rollout's stage as the ledger keeps it (docs/fleet.md, "Rollout stages across
/// stations"): what a rollout run's policy asks before each unit starts and before each
/// firmware decision (the stage's state, the halt rule over the fleet's results, the
/// stage's percentage), and where it records how each unit it started ended. Every call is
/// one transaction of the ledger (``GrokLedger/RolloutStageStore``): SQLite, one station's
/// runs; PostgreSQL, every station's. Thread-safe: every device thread of a run shares it.
public final class RolloutStageTracker: Sendable {
    public let store: any RolloutStageStore
    public let rollout: RolloutPolicy
    /// The profile's firmware target, recorded with the stage.
    public let release: String?
    public let station: String
    public let operatorName: String
    /// The run's key (``FleetRunOptions/runID``).
    public let runKey: String
    /// A dry run's view: the stage is read, never made or halted, and nothing is recorded.
    public let readOnly: Bool
    /// A result the ledger did not take: no further unit starts (the rule would miscount).
    private let lost = Mutex<FleetError?>(nil)

    public init(store: any RolloutStageStore, rollout: RolloutPolicy, release: String? = nil, station: String,
                operatorName: String, runKey: String, readOnly: Bool = false) {
        self.store = store
        self.rollout = rollout
        self.release = release
        self.station = station
        self.operatorName = operatorName
        self.runKey = runKey
        self.readOnly = readOnly
    }

    func check(at now: Date) -> StageCheck {
        StageCheck(rolloutID: rollout.id, release: release, profilePercentage: rollout.percentage,
                   rule: rollout.halt.map { RolloutHaltRule(afterDevices: $0.afterDevices, maxFailureRate: $0.maxFailureRate,
                                                              windowDevices: $0.windowDevices, windowMinutes: $0.windowMinutes) },
                   station: station, actor: operatorName, runKey: runKey, now: now)
    }

    /// The stage now: made when missing (not in a dry run), halted when the rule trips.
    public func stage(at now: Date) -> Result<RolloutStage, FleetError> {
        if let lost = lost.withLock({ $0 }) { return .failure(lost) }
        do throws(LedgerError) {
            return .success(readOnly ? try store.previewRolloutStage(check(at: now)) : try store.checkRolloutStage(check(at: now)))
        } catch {
            return .failure(.recorderFailed(operation: "check_stage", subject: rollout.id, error: error))
        }
    }

    /// Why no unit may start in `stage` (halted, paused), or nil.
    public static func stop(_ stage: RolloutStage) -> FleetError? {
        switch stage.state {
        case .active: return nil
        case .paused: return .stagePaused(rollout: stage.rolloutID, by: stage.updatedBy)
        case .halted:
            let halt = stage.halt
            return .halted(rollout: stage.rolloutID, failed: halt?.failed ?? 0, finished: halt?.finished ?? 0,
                           threshold: halt?.threshold ?? 0, trippedBy: halt?.trippedBy ?? stage.trippedBy ?? "",
                           stationFailures: halt?.stationFailures ?? 0)
        }
    }

    /// Records how a unit this run started ended (units never started, interrupted, not
    /// identified or not selected by the stage are not counted), and judges the rule with it.
    public func record(_ context: FleetDeviceContext, outcome: DeviceOutcome, steps: [StepOutcome], percentage: Double, at now: Date) {
        guard !readOnly, let serial = context.serial else { return }
        let counted: RolloutUnitOutcome
        switch outcome {
        case .done: counted = .succeeded
        case .postponed, .refused: counted = .incomplete
        case .failed: counted = .failed
        case .halted, .interrupted, .notInStage: return
        }
        guard RolloutSelection.place(serial: serial, rolloutID: rollout.id) < percentage else { return }
        let result = RolloutResult(rolloutID: rollout.id, runKey: runKey, station: station, serial: serial, percentage: percentage,
                                   outcome: counted, hardwareRevision: context.info.map { String($0.hardwareRevision) },
                                   firmwareAfter: steps.last(where: { $0.firmwareAfter != nil })?.firmwareAfter, finishedAt: now)
        do throws(LedgerError) {
            _ = try store.recordRolloutResult(result, check(at: now))
        } catch {
            lost.withLock { $0 = .recorderFailed(operation: "record_rollout_result", subject: serial, error: error) }
        }
    }
}

extension FleetError {
    /// What `--json` events add to an error's code and detail: the halt's rollout and the
    /// station that tripped it, under stable keys.
    public var eventData: [String: EventValue] {
        switch self {
        case .halted(let rollout, let failed, let finished, let threshold, let station, let stationFailures):
            ["rollout": .string(rollout), "failed": .integer(failed), "finished": .integer(finished), "threshold": .number(threshold),
             "tripped_by": .string(station), "station_failures": .integer(stationFailures)]
        case .stagePaused(let rollout, let by): ["rollout": .string(rollout), "paused_by": .string(by)]
        default: [:]
        }
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
    /// The rollout's stage in the ledger (rollout mode): its state and halt rule stop units,
    /// its percentage selects them. `nil`: no ledger to read (a dry run before any ledger
    /// exists): the profile's percentage, and no halt.
    public let stage: RolloutStageTracker?

    public init(profile: Profile, mode: FleetMode, stage: RolloutStageTracker? = nil,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.profile = profile
        self.mode = mode
        self.stage = stage
        self.now = now
    }

    /// The stage's answer now: what stops units (halted, paused, the ledger failing) and the
    /// percentage that selects them (the stage's; the profile's before the stage exists).
    private func stageNow(_ time: Date) -> (stop: FleetError?, percentage: Double, fromLedger: Bool)? {
        guard mode == .rollout, let rollout = profile.rollout else { return nil }
        guard let stage else { return (nil, rollout.percentage, false) }
        switch stage.stage(at: time) {
        case .success(let found): return (RolloutStageTracker.stop(found), found.percentage, found.inLedger)
        case .failure(let error): return (error, rollout.percentage, false)
        }
    }

    /// The policy's answer for a firmware update of the device in `context`, first rule first:
    /// halted or paused, outside the windows, battery low, not selected by the rollout stage.
    public func firmwareDecision(_ context: FleetDeviceContext, offer: FirmwareOffer?) -> FirmwareUpdateDecision {
        let time = now()
        var effective = profile
        let stageNow = stageNow(time)
        if let stageNow { effective.rollout?.percentage = stageNow.percentage }
        let decision = StepDecider(profile: effective).firmwarePolicy(mode: mode, device: context.device, serial: context.serial,
                                                                      batteryPercent: offer?.batteryPercent,
                                                                      externalPower: offer?.externalPower ?? false, now: time,
                                                                      halt: stageNow?.stop)
        // Not selected: say whose percentage it was (the stage's rules once it exists).
        if case .cancel(let reason, _) = decision, reason == "fleet_not_in_rollout", let stageNow,
           let error = leftOut(context, percentage: stageNow.percentage, fromLedger: stageNow.fromLedger) {
            return .cancel(reason: error.code, arguments: error.arguments)
        }
        return decision
    }

    /// Why the stage's `percentage` leaves the unit in `context` out, saying whose percentage
    /// it is (the stage's once it exists, else the profile's); nil when it selects the unit.
    private func leftOut(_ context: FleetDeviceContext, percentage: Double, fromLedger: Bool) -> FleetError? {
        guard let rollout = profile.rollout, let serial = context.serial,
              RolloutSelection.place(serial: serial, rolloutID: rollout.id) >= percentage else { return nil }
        return .notInRollout(device: context.device, serial: serial, percentage: percentage, source: fromLedger ? "ledger" : "profile",
                             profilePercentage: percentage != rollout.percentage ? rollout.percentage : nil)
    }

    /// A rollout's unit the stage's percentage does not select is left out once identified:
    /// nothing is done to it (the same selection its firmware decision and its result use).
    public func stageLeavesOut(_ context: FleetDeviceContext) -> FleetError? {
        guard let stageNow = stageNow(now()) else { return nil }
        return leftOut(context, percentage: stageNow.percentage, fromLedger: stageNow.fromLedger)
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

    /// A rollout's unit starts only while its stage is active (and the halt rule, judged
    /// over the fleet's results, does not trip).
    public func shouldStartDevice(_ context: FleetDeviceContext) -> FleetError? {
        stageNow(now())?.stop
    }

    /// A rollout's unit that ran is recorded in the stage's results (the halt rule counts them).
    public func deviceFinished(_ context: FleetDeviceContext, outcome: DeviceOutcome, steps: [StepOutcome]) {
        guard mode == .rollout, let stage, let rollout = profile.rollout else { return }
        // Selected by the percentage the stage has now (the one its firmware decision used).
        let percentage = (try? stage.store.rolloutStage(rollout.id))??.percentage ?? rollout.percentage
        stage.record(context, outcome: outcome, steps: steps, percentage: percentage, at: now())
    }
}
