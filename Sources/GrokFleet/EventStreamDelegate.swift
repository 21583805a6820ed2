import GrokBasics
import Foundation
import GrokFirmware
import GrokLedger
import GrokProtocol
import Synchronization
import UGrokIt

/// One structured event of a run: what `--json` prints, one object per line. `event` is a
/// stable code (docs/fleet.md lists them); `data` holds the event's values under stable
/// keys, each as the JSON value it is (``EventValue``: counts are integers, seconds numbers,
/// yes/no booleans, codes and names strings).
public struct FleetEvent: Sendable, Hashable, Codable {
    public var event: String
    public var device: String
    public var serial: String?
    /// ISO 8601 UTC.
    public var time: String
    public var data: [String: EventValue]
    /// The values of the code in `data["code"]` or `data["reason"]`, for a localized message.
    public var arguments: [String]

    public init(event: String, device: String, serial: String?, time: Date, data: [String: EventValue] = [:], arguments: [String] = []) {
        self.event = event
        self.device = device
        self.serial = serial
        self.time = Timestamp.iso8601(time)
        self.data = data
        self.arguments = arguments
    }

    /// The event as one line of JSON (sorted keys, no newline).
    public func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings and event values always encode (a non-finite number is carried as 0).
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

}

/// The delegate behind `--json`: every call becomes a ``FleetEvent`` handed to `sink`, and
/// every decision is taken by `decider` (a ``PolicyDelegate`` for unattended runs; the
/// decision taken is part of the event).
public struct EventStreamDelegate: ConfigurationDelegate {
    public let decider: any ConfigurationDelegate
    public let sink: @Sendable (FleetEvent) -> Void
    public let now: @Sendable () -> Date
    /// Each device's firmware when its update started: the engine refreshes the context's
    /// facts from the unit before it reports success, so `from` is taken at the start.
    private let versionsAtStart = VersionsAtStart()

    public init(decider: any ConfigurationDelegate, now: @escaping @Sendable () -> Date = { Date() },
                sink: @escaping @Sendable (FleetEvent) -> Void) {
        self.decider = decider
        self.sink = sink
        self.now = now
    }

    private func emit(_ event: String, _ context: FleetDeviceContext, _ data: [String: EventValue] = [:], arguments: [String] = []) {
        sink(FleetEvent(event: event, device: context.device, serial: context.serial, time: now(), data: data, arguments: arguments))
    }

    private func errorData(_ error: FleetError) -> [String: EventValue] {
        ["code": .string(error.code), "detail": .string(error.description)].merging(error.eventData) { kept, _ in kept }
    }

    public func requestMicrophonePermission(_ context: FleetDeviceContext) -> Bool {
        let answer = decider.requestMicrophonePermission(context)
        emit("microphone_permission", context, ["granted": .bool(answer)])
        return answer
    }

    public func doAutomaticFirmwareUpdate(_ context: FleetDeviceContext) -> Bool {
        let answer = decider.doAutomaticFirmwareUpdate(context)
        emit("automatic_firmware_update", context, ["enabled": .bool(answer)])
        return answer
    }

    public var isInteractive: Bool { decider.isInteractive }

    /// The policy's answer; one it overrules the offer with is the offer's event (the
    /// delegate is then not asked).
    public func firmwarePolicy(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision {
        let decision = decider.firmwarePolicy(context, offer: offer)
        if decision != .update { offered(context, offer: offer, decision: decision) }
        return decision
    }

    public func promptForFirmwareUpdate(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision {
        let decision = decider.promptForFirmwareUpdate(context, offer: offer)
        offered(context, offer: offer, decision: decision)
        return decision
    }

    private func offered(_ context: FleetDeviceContext, offer: FirmwareOffer, decision: FirmwareUpdateDecision) {
        var arguments: [String] = []
        var data: [String: EventValue] = [
            "name": .string(offer.name), "channel": .string(offer.channel), "version": .string("\(offer.version)"),
            "running": .string("\(offer.running)"), "compatibility": .string(offer.compatibility.vendorName),
            "decision": .string(decision.name)]
        if let percent = offer.batteryPercent { data["battery_percent"] = .integer(percent) }
        switch decision {
        case .update: break
        case .postpone(let reason, let reasonArguments), .cancel(let reason, let reasonArguments):
            data["reason"] = .string(reason)
            arguments = reasonArguments
        }
        emit("firmware_update_offered", context, data, arguments: arguments)
    }

    public func notifyFirmwareUpdateErrorLoadingUpdate(_ context: FleetDeviceContext, error: FleetError) {
        decider.notifyFirmwareUpdateErrorLoadingUpdate(context, error: error)
        emit("firmware_error_loading", context, errorData(error), arguments: error.arguments)
    }

    public func notifyFirmwareUpdateErrorStartingUpdate(_ context: FleetDeviceContext, error: FleetError) {
        decider.notifyFirmwareUpdateErrorStartingUpdate(context, error: error)
        emit("firmware_error_starting", context, errorData(error), arguments: error.arguments)
    }

    public func displayFirmwareUpdateProgress(_ context: FleetDeviceContext, cancel: CancelSwitch) {
        decider.displayFirmwareUpdateProgress(context, cancel: cancel)
        if let info = context.info { versionsAtStart.set(context.device, "\(info.firmwareVersion)") }
        emit("firmware_update_started", context)
    }

    public func updateFirmwareUpdateProgress(_ context: FleetDeviceContext, progress: FirmwareUpdateProgress) {
        decider.updateFirmwareUpdateProgress(context, progress: progress)
        // `total` is the whole update's bytes (the loader image when it goes, then the reader
        // image); the first event of each image comes before its first chunk.
        emit("firmware_progress", context, ["image": progress.secondImage ? "reader" : "first", "done": .integer(progress.done),
                                            "total": .integer(progress.total)])
    }

    public func notifyFirmwareUpdateSuccess(_ context: FleetDeviceContext, report: FirmwareUpdateReport) {
        decider.notifyFirmwareUpdateSuccess(context, report: report)
        let to = report.finalVersion.map { "\($0.firmwareMajor).\($0.firmwareMinor).\($0.firmwareBuild)" } ?? ""
        let from = versionsAtStart.get(context.device) ?? context.info.map { "\($0.firmwareVersion)" } ?? ""
        emit("firmware_update_success", context, ["from": .string(from), "to": .string(to),
                                                  "seconds": .seconds(report.audioSeconds), "chunks": .integer(report.chunks),
                                                  "resumed_chunks": .integer(report.resumedChunks)])
    }

    public func notifyFirmwareUpdateFailure(_ context: FleetDeviceContext, error: FleetError, mustRetry: Bool, attempt: Int) -> RetryDecision {
        let decision = decider.notifyFirmwareUpdateFailure(context, error: error, mustRetry: mustRetry, attempt: attempt)
        var data = errorData(error)
        data["must_retry"] = .bool(mustRetry)
        data["attempt"] = .integer(attempt)
        data["decision"] = .string(decision.rawValue)
        emit("firmware_update_failure", context, data, arguments: error.arguments)
        return decision
    }

    public func abortFirmwareUpdateInteraction(_ context: FleetDeviceContext) {
        decider.abortFirmwareUpdateInteraction(context)
        emit("firmware_update_aborted", context)
    }

    public func afterFirmwareUpdate(_ context: FleetDeviceContext, updated: Bool) {
        decider.afterFirmwareUpdate(context, updated: updated)
        emit("after_firmware_update", context, ["updated": .bool(updated)])
    }

    public func notifyLoadRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision {
        let decision = decider.notifyLoadRegionFailure(context, error: error, attempt: attempt)
        var data = errorData(error)
        data["attempt"] = .integer(attempt)
        data["decision"] = .string(decision.rawValue)
        emit("region_load_failure", context, data, arguments: error.arguments)
        return decision
    }

    public func chooseRegionFromRegions(_ context: FleetDeviceContext, names: [String], selected: Int?) -> Int? {
        let choice = decider.chooseRegionFromRegions(context, names: names, selected: selected)
        var data: [String: EventValue] = [:]
        if let choice, names.indices.contains(choice) { data["chosen"] = .string(names[choice]) }
        emit("region_choose", context, data, arguments: names)
        return choice
    }

    public func setRegionCancelled(_ context: FleetDeviceContext) {
        decider.setRegionCancelled(context)
        emit("region_cancelled", context)
    }

    public func confirmRegion(_ context: FleetDeviceContext, name: String) -> Bool {
        let answer = decider.confirmRegion(context, name: name)
        emit("region_confirm", context, ["region": .string(name), "confirmed": .bool(answer)])
        return answer
    }

    public func notifySetRegionSuccess(_ context: FleetDeviceContext, name: String) {
        decider.notifySetRegionSuccess(context, name: name)
        emit("region_set", context, ["region": .string(name)])
    }

    public func afterSetRegionSuccess(_ context: FleetDeviceContext) {
        decider.afterSetRegionSuccess(context)
        emit("after_region_set", context)
    }

    public func notifySetRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision {
        let decision = decider.notifySetRegionFailure(context, error: error, attempt: attempt)
        var data = errorData(error)
        data["attempt"] = .integer(attempt)
        data["decision"] = .string(decision.rawValue)
        emit("region_set_failure", context, data, arguments: error.arguments)
        return decision
    }

    public func notifyFirmwareDoesNotSupportSetRegion(_ context: FleetDeviceContext) {
        decider.notifyFirmwareDoesNotSupportSetRegion(context)
        emit("region_not_supported", context)
    }

    public func startBackgroundAction(_ context: FleetDeviceContext, cause: BackgroundAction) {
        decider.startBackgroundAction(context, cause: cause)
        emit("background_started", context, ["cause": .string(cause.rawValue)])
    }

    public func finishBackgroundAction(_ context: FleetDeviceContext, cause: BackgroundAction) {
        decider.finishBackgroundAction(context, cause: cause)
        emit("background_finished", context, ["cause": .string(cause.rawValue)])
    }

    public func shouldStartDevice(_ context: FleetDeviceContext) -> FleetError? {
        let halt = decider.shouldStartDevice(context)
        if let halt { emit("device_halted", context, errorData(halt), arguments: halt.arguments) }
        return halt
    }

    public func stageLeavesOut(_ context: FleetDeviceContext) -> FleetError? { decider.stageLeavesOut(context) }

    public func deviceStarted(_ context: FleetDeviceContext) {
        decider.deviceStarted(context)
        emit("device_started", context)
    }

    public func stepStarted(_ context: FleetDeviceContext, step: FleetStep) {
        decider.stepStarted(context, step: step)
        emit("step_started", context, ["step": .string(step.rawValue)])
    }

    public func stepFinished(_ context: FleetDeviceContext, outcome: StepOutcome) {
        decider.stepFinished(context, outcome: outcome)
        var data: [String: EventValue] = [
            "step": .string(outcome.step.rawValue), "result": .string(outcome.result.rawValue), "code": .string(outcome.code),
            "detail": .string(outcome.detail), "duration_s": .seconds(outcome.duration)]
        if let v = outcome.firmwareBefore { data["firmware_before"] = .string(v) }
        if let v = outcome.firmwareAfter { data["firmware_after"] = .string(v) }
        if let v = outcome.regionBefore { data["region_before"] = .string(v) }
        if let v = outcome.regionAfter { data["region_after"] = .string(v) }
        emit("step_finished", context, data, arguments: outcome.arguments)
    }

    public func deviceFinished(_ context: FleetDeviceContext, outcome: DeviceOutcome, steps: [StepOutcome]) {
        decider.deviceFinished(context, outcome: outcome, steps: steps)
        emit("device_finished", context, ["outcome": .string(outcome.rawValue)])
    }
}

/// The firmware each device ran when its update started, by device (device threads write it).
private final class VersionsAtStart: Sendable {
    private let versions = Mutex<[String: String]>([:])

    func set(_ device: String, _ version: String) { versions.withLock { $0[device] = version } }
    func get(_ device: String) -> String? { versions.withLock { $0[device] } }
}
