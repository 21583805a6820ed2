import Foundation
import GrokFirmware
import GrokLedger
import GrokProtocol
import Synchronization
import UGrokIt

/// The Grokker a delegate call is about: the port it is on and, once it has said, what it is.
public struct FleetDeviceContext: Sendable, Hashable {
    /// The device as named to the run (`sim:3`, `alsa:hw:1,0`).
    public var device: String
    /// What the reader said it is, once identified.
    public var info: ReaderInfo?

    public init(device: String, info: ReaderInfo? = nil) {
        self.device = device
        self.info = info
    }

    /// The serial number, 8 digits, once identified.
    public var serial: String? { info?.serialNumberText }
}

/// A firmware update on offer (vendor `UgiFirmwareUpdateInfo`), with what a policy needs
/// to decide on it.
public struct FirmwareOffer: Sendable, Hashable {
    /// The update's name in the channel.
    public var name: String
    /// The channel it comes from.
    public var channel: String
    /// The version it installs.
    public var version: FirmwareVersion
    /// The version the reader runs.
    public var running: FirmwareVersion
    /// Vendor compatibility value (UPGRADE, SAME_VERSION, DOWNGRADE ...).
    public var compatibility: FirmwareCompatibility
    /// The reader protocol it implements.
    public var readerProtocol: UInt16
    /// Release notes by language (`en` always).
    public var notes: [String: String]
    /// The build date.
    public var buildDate: Date
    /// The battery charge, percent, when the reader said.
    public var batteryPercent: Int?
    /// Whether external power is connected.
    public var externalPower: Bool

    public init(name: String, channel: String, version: FirmwareVersion, running: FirmwareVersion,
                compatibility: FirmwareCompatibility, readerProtocol: UInt16, notes: [String: String], buildDate: Date,
                batteryPercent: Int?, externalPower: Bool) {
        self.name = name
        self.channel = channel
        self.version = version
        self.running = running
        self.compatibility = compatibility
        self.readerProtocol = readerProtocol
        self.notes = notes
        self.buildDate = buildDate
        self.batteryPercent = batteryPercent
        self.externalPower = externalPower
    }
}

/// The answer to ``ConfigurationDelegate/promptForFirmwareUpdate(_:offer:)`` (vendor
/// update / cancel / postpone). A postponement or cancellation carries a stable reason
/// code (a ``FleetError`` code such as `fleet_outside_window`) and its arguments.
public enum FirmwareUpdateDecision: Sendable, Hashable {
    /// Update now.
    case update
    /// Not now; the device is left as it is and a later run asks again.
    case postpone(reason: String, arguments: [String])
    /// Not this update for this device.
    case cancel(reason: String, arguments: [String])

    /// `update`, `postpone` or `cancel`.
    public var name: String {
        switch self {
        case .update: "update"
        case .postpone: "postpone"
        case .cancel: "cancel"
        }
    }
}

/// Retry after a failure, or give up (vendor `notifyFirmwareUpdateFailure(retry, cancel)`,
/// `notifyLoadRegionFailure(retry)`).
public enum RetryDecision: String, Sendable, Hashable {
    case retry
    case giveUp = "give_up"
}

/// Why a background action runs (vendor `startBackgroundAction` causes).
public enum BackgroundAction: String, Sendable, Hashable {
    case generic
    case loadingFirmwareUpdate = "loading_firmware_update"
    case loadingRegions = "loading_regions"
    case settingRegion = "setting_region"
}

/// A switch the delegate may flip to cancel the firmware update on show (vendor
/// `displayFirmwareUpdateProgress(cancel)`); the update stops between blocks while it can.
public final class CancelSwitch: Sendable {
    private let flag = Atomic(false)

    public init() {}

    /// Asks for the cancellation.
    public func cancel() { flag.store(true, ordering: .relaxed) }
    /// Whether it was asked for.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}

/// The per-device steps of the workflow, in order (docs/fleet.md).
public enum FleetStep: String, Sendable, Hashable, Codable, CaseIterable {
    case connect
    case identify
    case provision
    case region
    case smokeTest = "smoke_test"
    case firmware
    case reconnect
    case finalSmokeTest = "final_smoke_test"
    case record
}

/// What one step did, as recorded and reported.
public struct StepOutcome: Sendable, Hashable {
    public var step: FleetStep
    public var result: StepResult
    /// A stable code: `fleet_*` for refusals, failures and postponements, else a
    /// `step_*` code saying why it was done or skipped (docs/fleet.md lists them).
    public var code: String
    /// Values for a localized message, in order.
    public var arguments: [String]
    /// English detail for logs.
    public var detail: String
    public var firmwareBefore: String?
    public var firmwareAfter: String?
    public var regionBefore: String?
    public var regionAfter: String?
    public var started: Date
    /// Wall-clock seconds the step took.
    public var duration: Double

    public init(step: FleetStep, result: StepResult, code: String, arguments: [String] = [], detail: String = "",
                firmwareBefore: String? = nil, firmwareAfter: String? = nil, regionBefore: String? = nil,
                regionAfter: String? = nil, started: Date = Date(), duration: Double = 0) {
        self.step = step
        self.result = result
        self.code = code
        self.arguments = arguments
        self.detail = detail
        self.firmwareBefore = firmwareBefore
        self.firmwareAfter = firmwareAfter
        self.regionBefore = regionBefore
        self.regionAfter = regionAfter
        self.started = started
        self.duration = duration
    }
}

/// Where a device ended.
public enum DeviceOutcome: String, Sendable, Hashable, Codable {
    /// Every step done or skipped: the device is as the profile wants.
    case done
    /// Something was postponed by policy; nothing failed.
    case postponed
    /// Something was refused; nothing failed.
    case refused
    /// A step failed.
    case failed
    /// Not started: the halt rule stopped new devices.
    case halted
    /// The run was cancelled before the device finished.
    case interrupted
    /// A rollout's stage does not select the unit (`fleet_not_in_rollout`): once identified,
    /// nothing else was done to it (no provisioning, region, smoke test or firmware), and it
    /// is not counted in the rollout's results. Code `not_in_stage`.
    case notInStage = "not_in_stage"
}

/// The vendor's configuration delegate (`UgiConfigurationDelegate`): every housekeeping
/// decision and notification of a run goes through one object, so the same workflow
/// serves a technician at a terminal, an unattended station under a policy, and a script
/// reading JSON events. Every call has a default, so an implementation overrides only what
/// it cares about.
///
/// Calls come from the device threads of a run, several devices at once: implementations
/// must be thread-safe (an interactive one serializes its prompts). Calls are synchronous:
/// a device waits for the answer.
///
/// Beyond the vendor's calls, a fleet run adds ``shouldStartDevice(_:)``,
/// ``deviceStarted(_:)``, ``stepFinished(_:outcome:)`` and ``deviceFinished(_:outcome:steps:)``.
public protocol ConfigurationDelegate: Sendable {
    // MARK: Vendor calls

    /// Vendor `requestMicrophonePermission`: may the audio port be used? (Linux: yes.)
    func requestMicrophonePermission(_ context: FleetDeviceContext) -> Bool
    /// Vendor `doAutomaticFirmwareUpdate`: should firmware be checked and offered at all?
    func doAutomaticFirmwareUpdate(_ context: FleetDeviceContext) -> Bool
    /// Vendor `promptForFirmwareUpdate`: update, postpone or cancel.
    func promptForFirmwareUpdate(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision
    /// Vendor `notifyFirmwareUpdateErrorLoadingUpdate`: the image could not be loaded.
    func notifyFirmwareUpdateErrorLoadingUpdate(_ context: FleetDeviceContext, error: FleetError)
    /// Vendor `notifyFirmwareUpdateErrorStartingUpdate`: the update could not start (refused before anything was sent).
    func notifyFirmwareUpdateErrorStartingUpdate(_ context: FleetDeviceContext, error: FleetError)
    /// Vendor `displayFirmwareUpdateProgress(cancel)`: the update starts; flip `cancel` to stop it.
    func displayFirmwareUpdateProgress(_ context: FleetDeviceContext, cancel: CancelSwitch)
    /// Vendor `updateFirmwareUpdateProgress(done, total, canCancel)`.
    func updateFirmwareUpdateProgress(_ context: FleetDeviceContext, progress: FirmwareUpdateProgress)
    /// Vendor `notifyFirmwareUpdateSuccess(seconds)`: seconds of audio the update took.
    func notifyFirmwareUpdateSuccess(_ context: FleetDeviceContext, report: FirmwareUpdateReport)
    /// Vendor `notifyFirmwareUpdateFailure(mustRetry, retry, cancel)`: `attempt` counts from 1;
    /// `mustRetry` when the reader cannot be used without the update.
    func notifyFirmwareUpdateFailure(_ context: FleetDeviceContext, error: FleetError, mustRetry: Bool, attempt: Int) -> RetryDecision
    /// Vendor `abortFirmwareUpdateInteraction`: the reader went away during the update.
    func abortFirmwareUpdateInteraction(_ context: FleetDeviceContext)
    /// Vendor `afterFirmwareUpdate(updated)`.
    func afterFirmwareUpdate(_ context: FleetDeviceContext, updated: Bool)
    /// Vendor `notifyLoadRegionFailure(retry)`: the region list could not be loaded.
    func notifyLoadRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision
    /// Vendor `chooseRegionFromRegions(names, selected index)`: the index chosen in
    /// `names`, or `nil` to cancel (then ``setRegionCancelled(_:)`` follows).
    func chooseRegionFromRegions(_ context: FleetDeviceContext, names: [String], selected: Int?) -> Int?
    /// Vendor `setRegionCancelled`.
    func setRegionCancelled(_ context: FleetDeviceContext)
    /// Vendor `confirmRegion(name) -> yes/no`.
    func confirmRegion(_ context: FleetDeviceContext, name: String) -> Bool
    /// Vendor `notifySetRegionSuccess`.
    func notifySetRegionSuccess(_ context: FleetDeviceContext, name: String)
    /// Vendor `afterSetRegionSuccess`.
    func afterSetRegionSuccess(_ context: FleetDeviceContext)
    /// Vendor `notifySetRegionFailure` (with a retry answer, as the interactive delegate offers).
    func notifySetRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision
    /// Vendor `notifyFirmwareDoesNotSupportSetRegion`.
    func notifyFirmwareDoesNotSupportSetRegion(_ context: FleetDeviceContext)
    /// Vendor `startBackgroundAction(cause)`.
    func startBackgroundAction(_ context: FleetDeviceContext, cause: BackgroundAction)
    /// Vendor `finishBackgroundAction`.
    func finishBackgroundAction(_ context: FleetDeviceContext, cause: BackgroundAction)

    // MARK: Fleet calls

    /// Whether the answers are not known in advance (a person at a terminal): a plan then
    /// shows the questions as ``PlannedStep/Action/ask``; otherwise the run takes the
    /// policy's answers without asking (default `false`).
    var isInteractive: Bool { get }
    /// What the profile's policy says of an update on offer, before anyone is asked: a
    /// postponement or cancellation here is final (an update the policy would overrule, at
    /// low battery, is never offered). Default: update.
    func firmwarePolicy(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision

    /// Whether to start the next device (the halt rule answers no); `nil` = start, else the reason.
    func shouldStartDevice(_ context: FleetDeviceContext) -> FleetError?
    /// Once the device is identified: why a rollout's stage leaves it out
    /// (``FleetError/notInRollout(device:serial:percentage:source:profilePercentage:)``), or
    /// `nil` when the stage selects it or no stage applies. A unit left out is not touched.
    func stageLeavesOut(_ context: FleetDeviceContext) -> FleetError?
    /// A device is being started.
    func deviceStarted(_ context: FleetDeviceContext)
    /// A step is about to run.
    func stepStarted(_ context: FleetDeviceContext, step: FleetStep)
    /// A step ended.
    func stepFinished(_ context: FleetDeviceContext, outcome: StepOutcome)
    /// A device ended.
    func deviceFinished(_ context: FleetDeviceContext, outcome: DeviceOutcome, steps: [StepOutcome])
}

extension ConfigurationDelegate {
    public func requestMicrophonePermission(_ context: FleetDeviceContext) -> Bool { true }
    public func doAutomaticFirmwareUpdate(_ context: FleetDeviceContext) -> Bool { true }
    public func promptForFirmwareUpdate(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision { .update }
    public func notifyFirmwareUpdateErrorLoadingUpdate(_ context: FleetDeviceContext, error: FleetError) {}
    public func notifyFirmwareUpdateErrorStartingUpdate(_ context: FleetDeviceContext, error: FleetError) {}
    public func displayFirmwareUpdateProgress(_ context: FleetDeviceContext, cancel: CancelSwitch) {}
    public func updateFirmwareUpdateProgress(_ context: FleetDeviceContext, progress: FirmwareUpdateProgress) {}
    public func notifyFirmwareUpdateSuccess(_ context: FleetDeviceContext, report: FirmwareUpdateReport) {}
    public func notifyFirmwareUpdateFailure(_ context: FleetDeviceContext, error: FleetError, mustRetry: Bool, attempt: Int) -> RetryDecision { .giveUp }
    public func abortFirmwareUpdateInteraction(_ context: FleetDeviceContext) {}
    public func afterFirmwareUpdate(_ context: FleetDeviceContext, updated: Bool) {}
    public func notifyLoadRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision { .giveUp }
    public func chooseRegionFromRegions(_ context: FleetDeviceContext, names: [String], selected: Int?) -> Int? { selected }
    public func setRegionCancelled(_ context: FleetDeviceContext) {}
    public func confirmRegion(_ context: FleetDeviceContext, name: String) -> Bool { true }
    public func notifySetRegionSuccess(_ context: FleetDeviceContext, name: String) {}
    public func afterSetRegionSuccess(_ context: FleetDeviceContext) {}
    public func notifySetRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision { .giveUp }
    public func notifyFirmwareDoesNotSupportSetRegion(_ context: FleetDeviceContext) {}
    public func startBackgroundAction(_ context: FleetDeviceContext, cause: BackgroundAction) {}
    public func finishBackgroundAction(_ context: FleetDeviceContext, cause: BackgroundAction) {}
    public func shouldStartDevice(_ context: FleetDeviceContext) -> FleetError? { nil }
    public func stageLeavesOut(_ context: FleetDeviceContext) -> FleetError? { nil }
    public var isInteractive: Bool { false }
    public func firmwarePolicy(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision { .update }
    public func deviceStarted(_ context: FleetDeviceContext) {}
    public func stepStarted(_ context: FleetDeviceContext, step: FleetStep) {}
    public func stepFinished(_ context: FleetDeviceContext, outcome: StepOutcome) {}
    public func deviceFinished(_ context: FleetDeviceContext, outcome: DeviceOutcome, steps: [StepOutcome]) {}
}
