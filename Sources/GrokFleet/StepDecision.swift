import Foundation
import GrokBasics
import GrokFirmware
import GrokLedger
import GrokProtocol
import UGrokIt

/// What one step will do, decided before any I/O of the step: the action, a stable reason
/// code and its arguments (the `step_*` codes and the ``FleetError`` codes of docs/fleet.md).
///
/// The same pure function (``StepDecider``) decides for the real run, for `verify` and for
/// `--dry-run`; only the run then performs the action (as swift-nio's protocol state
/// machines return an action for their handler to carry out), so a plan and a run cannot
/// disagree about a step.
struct StepDecision: Sendable {
    var step: FleetStep
    var action: PlannedStep.Action
    /// Why (a `step_*` code for run and skip, a ``FleetError`` code otherwise).
    var code: String
    var arguments: [String] = []
    /// English detail for logs.
    var detail: String = ""
    /// What the step works toward: the region to set, the firmware version to install.
    var target: String? = nil
    /// The regions to offer when the action is ``PlannedStep/Action/ask`` (region step).
    var choices: [String] = []
    /// The error of a refusal or a known failure.
    var error: FleetError? = nil

    static func run(_ step: FleetStep, _ code: String, _ arguments: [String] = [], detail: String = "", target: String? = nil) -> StepDecision {
        StepDecision(step: step, action: .run, code: code, arguments: arguments, detail: detail, target: target)
    }

    static func skip(_ step: FleetStep, _ code: String, _ arguments: [String] = [], detail: String = "") -> StepDecision {
        StepDecision(step: step, action: .skip, code: code, arguments: arguments, detail: detail)
    }

    static func refuse(_ step: FleetStep, _ error: FleetError) -> StepDecision {
        StepDecision(step: step, action: .refuse, code: error.code, arguments: error.arguments, detail: error.description, error: error)
    }

    static func postpone(_ step: FleetStep, _ code: String, _ arguments: [String]) -> StepDecision {
        StepDecision(step: step, action: .postpone, code: code, arguments: arguments)
    }

    static func fail(_ step: FleetStep, _ error: FleetError) -> StepDecision {
        StepDecision(step: step, action: .fail, code: error.code, arguments: error.arguments, detail: error.description, error: error)
    }

    /// The failures `verify` reports and goes past: a mismatch, a smoke test that failed or cannot run.
    static let verifyGoesOn: Set<String> = ["fleet_verify_mismatch", "fleet_smoke_test_failed"]

    var planned: PlannedStep {
        PlannedStep(step: step, action: action, code: code, arguments: arguments, detail: detail)
    }
}

/// What is known when a step is decided: the device's facts read so far, the ledger's
/// history, the channel, the delegate's kind and the policy's clock. Nothing in it does I/O.
struct StepFacts: Sendable {
    var mode: FleetMode
    var device: String
    /// What the unit said it is (GetVersion, identify), as it stands now.
    var info: ReaderInfo
    /// The unit answered from its loader.
    var inLoader: Bool
    /// The unit's provisioning record (`nil`: not read, or unreadable).
    var provisioning: ProvisioningRecord?
    /// The unit's battery (`nil`: not read; a loader answers no battery request).
    var batteryPercent: Int?
    var externalPower: Bool = false
    /// The ledger's completed steps for this serial, oldest first.
    var history: [StepOutcome] = []
    /// Steps that changed the unit earlier in this run (or, in a plan, would have).
    var changed: Set<FleetStep> = []
    /// The regions the unit may choose (the channel's signed catalogue, else the vendor's 22).
    var regionsOffered: [String] = RegionCatalog.all.map(\.name)
    /// The channel's listings, newest first (`nil`: the run was given no channel).
    var listings: [FirmwareListing]?
    /// Whether the delegate's answers are not known in advance (a person at a terminal).
    var interactive: Bool = false
    /// The delegate's `doAutomaticFirmwareUpdate` answer.
    var automaticFirmwareUpdate: Bool = true
    /// Why a rollout's stage leaves the unit out (``ConfigurationDelegate/stageLeavesOut(_:)``):
    /// every step after identify but the record is skipped with its code.
    var leftOut: FleetError? = nil
    /// The policy's answer to an update on offer (``ConfigurationDelegate/firmwarePolicy(_:offer:)``:
    /// a ``PolicyDelegate`` judges it by ``StepDecider/firmwarePolicy(mode:device:serial:batteryPercent:externalPower:now:halt:)``).
    var policy: @Sendable (FirmwareOffer) -> FirmwareUpdateDecision = { _ in .update }

    var firmwareText: String { "\(info.firmwareVersion)" }
}

/// The one decision of each step: a pure function from ``StepFacts`` and the profile to a
/// ``StepDecision``. The run, `verify` and the dry run all call it.
struct StepDecider: Sendable {
    let profile: Profile

    func decide(_ step: FleetStep, _ facts: StepFacts) -> StepDecision {
        if let leftOut = leftOut(step, facts) { return leftOut }
        return switch step {
        case .connect: .run(.connect, "step_will_connect")
        case .identify: .run(.identify, "step_will_identify")
        case .provision: provision(facts)
        case .region: region(facts)
        case .smokeTest, .finalSmokeTest: smokeTest(step, facts)
        case .firmware: firmware(facts)
        case .reconnect: reconnect(facts)
        case .record: .run(.record, "step_will_record")
        }
    }

    /// A unit a rollout's stage leaves out: every step after identify but the record is
    /// skipped with the stage's reason (nil: the unit is in, or the step is one of those three).
    func leftOut(_ step: FleetStep, _ facts: StepFacts) -> StepDecision? {
        guard let leftOut = facts.leftOut, ![FleetStep.connect, .identify, .record].contains(step) else { return nil }
        return .skip(step, leftOut.code, leftOut.arguments, detail: leftOut.description)
    }

    // MARK: Provisioning

    func provision(_ facts: StepFacts) -> StepDecision {
        guard let policy = profile.provisioning else { return .skip(.provision, "step_not_configured") }
        guard let record = facts.provisioning else {
            // Not read yet: the step reads it, then decides (the plan reads it first).
            return .run(.provision, "step_provision_check")
        }
        let needed = DeviceWorker.provisioningChanges(policy, record: record)
        if facts.mode == .verify {
            if !needed.isEmpty {
                // Every field that differs, not only the first.
                return .fail(.provision, .verifyMismatch(device: facts.device, difference: .provisioning(needed)))
            }
            return .run(.provision, "step_verify_check", detail: "provisioning as the profile says")
        }
        guard !needed.isEmpty else { return .skip(.provision, "step_already_satisfied", detail: "provisioning as the profile says") }
        return .run(.provision, "step_provision_needed", ProvisioningChange.arguments(needed), detail: ProvisioningChange.summary(needed))
    }

    // MARK: Region

    /// The regions a unit may be set to: those the profile allows that the unit (the
    /// channel's catalogue) may choose, in the unit's order.
    func regionChoices(_ facts: StepFacts) -> [String] {
        guard let policy = profile.region else { return [] }
        return facts.regionsOffered.filter { name in RegionCatalog.find(name).map { policy.allows($0.setting) } ?? false }
    }

    func region(_ facts: StepFacts) -> StepDecision {
        guard let policy = profile.region else { return .skip(.region, "step_not_configured") }
        let current = facts.info.region
        let satisfied = DeviceWorker.regionSatisfied(policy, info: facts.info)
        if facts.mode == .verify {
            if satisfied { return .run(.region, "step_verify_check", detail: "region \(current?.name ?? "")") }
            let expected = policy.set.map { [$0.code] } ?? policy.allowed.map(\.code)
            return .fail(.region, .verifyMismatch(device: facts.device, difference: .region(expected: expected, allowedOnly: policy.set == nil,
                                                                                            found: current.map { RegionCatalog.named(number: $0.number)?.code ?? $0.name })))
        }
        if satisfied { return .skip(.region, "step_already_satisfied", detail: "region \(current?.name ?? "")") }
        // The region before: empty when none was set (the presenter says "not set").
        let from = current?.name ?? ""
        let choices = regionChoices(facts)
        if let wanted = policy.set {
            // The profile names the region: the unit (its catalogue) must offer it.
            guard let name = facts.regionsOffered.first(where: { RegionCatalog.find($0)?.number == wanted.number }) else {
                return .refuse(.region, .regionNotAllowed(device: facts.device, region: wanted.name, allowed: facts.regionsOffered))
            }
            return .run(.region, "step_region_needed", [from, name], detail: "\(current?.name ?? "not set") -> \(name)", target: name)
        }
        switch choices.count {
        case 0:
            return .refuse(.region, .regionNotAllowed(device: facts.device, region: policy.allowed.map(\.name).joined(separator: ", "),
                                                      allowed: facts.regionsOffered))
        case 1:
            return .run(.region, "step_region_needed", [from, choices[0]], detail: "\(current?.name ?? "not set") -> \(choices[0])", target: choices[0])
        default:
            guard facts.interactive else {
                // Unattended, nobody chooses among several: a unit already on a region the
                // profile does not allow is refused for that region (a rollout never moves a
                // unit to another country's rules), one without a region for having none.
                if let current {
                    return .refuse(.region, .regionNotAllowed(device: facts.device, region: current.name, allowed: choices))
                }
                return .refuse(.region, .regionNotChosen(device: facts.device))
            }
            var decision = StepDecision(step: .region, action: .ask, code: "step_region_ask", arguments: [String(choices.count)],
                                        detail: choices.joined(separator: " | "))
            decision.choices = choices
            return decision
        }
    }

    // MARK: Smoke tests

    /// Whether a smoke test is still owed. In this run: after a change made in this run
    /// (provision or region for the first test, firmware for the final one). From the
    /// recorder's history (a re-run): when the newest recorded change has no passed smoke
    /// test after it, the test that follows that kind of change is owed; a Grokker never
    /// smoke-tested owes the first test; a Grokker whose firmware or region differ from its
    /// last passed test (changed elsewhere) owes the first test. Returns the reason code.
    func smokeTestOwed(_ step: FleetStep, _ facts: StepFacts) -> String? {
        let ownChanges: Set<FleetStep> = step == .smokeTest ? [.provision, .region] : [.firmware]
        if !facts.changed.isDisjoint(with: ownChanges) { return "step_smoke_test_after_change" }
        let history = facts.history
        let lastSmoke = history.lastIndex { [.smokeTest, .finalSmokeTest].contains($0.step) && $0.result == .done }
        let lastChange = history.lastIndex { [.provision, .region, .firmware].contains($0.step) && $0.result == .done }
        guard let lastSmoke else { return step == .smokeTest ? "step_smoke_test_never_passed" : nil }
        if let lastChange, lastChange > lastSmoke {
            return ownChanges.contains(history[lastChange].step) ? "step_smoke_test_after_change" : nil
        }
        let proven = history[lastSmoke]
        let changedElsewhere = proven.firmwareAfter != facts.firmwareText || proven.regionAfter != facts.info.region?.name
        return step == .smokeTest && changedElsewhere ? "step_smoke_test_changed_elsewhere" : nil
    }

    func smokeTest(_ step: FleetStep, _ facts: StepFacts) -> StepDecision {
        guard profile.smokeTest != nil else { return .skip(step, "step_not_configured") }
        var reason = "step_verify_check"
        if facts.mode == .verify {
            if step == .finalSmokeTest { return .skip(step, "step_not_applicable") }
        } else if step == .smokeTest, facts.changed.contains(.firmware) {
            // A unit repaired from its loader first: the final smoke test, after every change, proves it.
            return .skip(step, "step_not_needed", detail: "the final smoke test follows the update")
        } else if let owed = smokeTestOwed(step, facts) {
            reason = owed
        } else {
            return .skip(step, "step_already_satisfied", detail: "a smoke test passed since the last change")
        }
        // A unit that enforces its region refuses an inventory until a user set one (its
        // GetVersion's "user has set region" flag): known before it runs.
        if facts.info.userMustSetRegion || (facts.info.enforceRegion && facts.info.region == nil) {
            return .fail(step, .smokeTestFailed(device: facts.device, measurement: .regionNotSet()))
        }
        // Whether it passes is known only once it ran.
        return .run(step, reason)
    }

    // MARK: Firmware

    /// The policy's rules for an update on offer, first rule first: halted, outside the
    /// maintenance windows, battery low (without external power), not selected by the
    /// staged rollout. ``PolicyDelegate`` answers with it too.
    func firmwarePolicy(mode: FleetMode, device: String, serial: String?, batteryPercent: Int?, externalPower: Bool,
                        now: Date, halt: FleetError?) -> FirmwareUpdateDecision {
        if mode == .rollout, let halt { return .postpone(reason: halt.code, arguments: halt.arguments) }
        if let windows = profile.maintenanceWindows, !windows.contains(now) {
            let error = FleetError.outsideMaintenanceWindow(device: device, timeZone: windows.timeZone.identifier)
            return .postpone(reason: error.code, arguments: error.arguments)
        }
        if let percent = batteryPercent, !externalPower, percent < profile.minimumBatteryPercent {
            let error = FleetError.batteryLow(device: device, percent: percent, minimum: profile.minimumBatteryPercent)
            return .postpone(reason: error.code, arguments: error.arguments)
        }
        if mode == .rollout, let rollout = profile.rollout, let serial, !RolloutSelection.selects(rollout, serial: serial) {
            let error = FleetError.notInRollout(device: device, serial: serial, percentage: rollout.percentage)
            return .cancel(reason: error.code, arguments: error.arguments)
        }
        return .update
    }

    func firmware(_ facts: StepFacts) -> StepDecision {
        guard let policy = profile.firmware else { return .skip(.firmware, "step_not_configured") }
        if facts.mode != .verify, !facts.inLoader, !facts.automaticFirmwareUpdate { return .skip(.firmware, "step_firmware_check_disabled") }
        guard let listings = facts.listings else {
            return .fail(.firmware, .firmwareCache(channel: policy.channel, cause: ErrorCause(code: "fleet_no_channel")))
        }
        let info = facts.info
        switch FirmwareTargeting.resolve(policy, listings: listings, info: info, inLoader: facts.inLoader, device: facts.device) {
        case .satisfied(let detail):
            return facts.mode == .verify ? .run(.firmware, "step_verify_check", detail: detail)
                                         : .skip(.firmware, "step_already_satisfied", detail: detail)
        case .refused(let error):
            if facts.mode == .verify {
                let expected: String? = if case .version(let version) = policy.target { "\(version)" } else { nil }
                return .fail(.firmware, .verifyMismatch(device: facts.device, difference: .firmware(expected: expected, found: facts.firmwareText,
                                                                                                    inLoader: false)))
            }
            return .refuse(.firmware, error)
        case .install(let listing, let compatibility):
            let target = "\(listing.metadata.version)"
            let from = facts.inLoader ? "loader \(info.firmwareVersion)" : facts.firmwareText
            if facts.mode == .verify {
                return .fail(.firmware, .verifyMismatch(device: facts.device, difference: .firmware(expected: target, found: facts.firmwareText,
                                                                                                    inLoader: facts.inLoader)))
            }
            let offer = FirmwareOffer(name: listing.name, channel: policy.channel, version: listing.metadata.version,
                                      running: info.firmwareVersion, compatibility: compatibility,
                                      readerProtocol: listing.metadata.readerProtocol, notes: listing.metadata.notes,
                                      buildDate: listing.metadata.buildDate, batteryPercent: facts.inLoader ? nil : facts.batteryPercent,
                                      externalPower: facts.externalPower)
            switch facts.policy(offer) {
            case .postpone(let reason, let arguments):
                return .postpone(.firmware, reason, arguments)
            case .cancel(let reason, let arguments):
                return .skip(.firmware, reason, arguments)
            case .update:
                if facts.interactive {
                    return StepDecision(step: .firmware, action: .ask, code: "step_firmware_ask", arguments: [from, target],
                                        detail: "\(from) -> \(target)", target: target)
                }
                return .run(.firmware, "step_firmware_needed", [from, target], detail: "\(from) -> \(target)", target: target)
            }
        }
    }

    func reconnect(_ facts: StepFacts) -> StepDecision {
        facts.changed.contains(.firmware) ? .run(.reconnect, "step_reconnect_after_update") : .skip(.reconnect, "step_not_needed")
    }
}
