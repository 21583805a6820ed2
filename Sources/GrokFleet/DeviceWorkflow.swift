import GrokFirmware
import GrokLedger
import GrokProtocol
import UGrokIt

/// The order of one Grokker's steps, and when it stops: the one place the workflow's shape
/// is written (docs/fleet.md, "Steps").
///
/// A state machine in the shape of swift-nio's protocol state machines: the caller reports
/// an ``Event`` (a step ended, the run was interrupted) and performs the ``Action`` it gets
/// back. The real run (``DeviceWorker/run()``) performs each step with the device; the dry
/// run (``DeviceWorker/plan(policy:interactive:)``) decides each step and reports it as
/// ended the way the decision says, assuming a step it would run succeeds, with the effect
/// ``assumeDone(_:in:)`` declares. Both walk this machine, so a plan and a run take the same
/// steps in the same order and stop at the same place.
///
/// The order: connect, identify, then provision, region, smoke test, firmware, reconnect,
/// final smoke test; a unit found in its loader (and a profile with firmware, outside
/// `verify`) can do nothing else, so its firmware and reconnect come first. After a step
/// that stops the device, the steps left are not reached, and a unit that was connected is
/// recorded as it stands.
struct DeviceWorkflow: Sendable {
    enum State: Sendable, Equatable {
        /// Nothing performed yet.
        case idle
        /// `step` is being performed; `rest` follow it.
        case performing(FleetStep, rest: [FleetStep])
        /// An earlier step stopped the device: `step` is not reached, nor are `rest`.
        case passingOver(FleetStep, rest: [FleetStep])
        /// The device is being recorded as it stands.
        case recording
        case finished
    }

    /// What the caller does next.
    enum Action: Sendable, Equatable {
        /// Perform `step` (decide it, then do what the decision says).
        case perform(FleetStep)
        /// `step` is not reached (an earlier step stopped the device): a plan lists it, a run
        /// does nothing; either answers ``Event/passedOver``.
        case notReached(FleetStep)
        /// Nothing more for this device.
        case finish
    }

    /// How a step ended, as the machine needs it.
    struct Ending: Sendable, Equatable {
        var step: FleetStep
        var result: StepResult
        /// The outcome's code (`verify` goes past the differences it reports).
        var code: String
        /// After identify: the unit answered from its loader.
        var inLoader: Bool = false
    }

    enum Event: Sendable, Equatable {
        /// The device's turn begins.
        case start
        /// The step being performed ended.
        case ended(Ending)
        /// A step shown as not reached was passed over.
        case passedOver
        /// The run was stopped (a stop signal, Ctrl-C at a question): nothing more is done,
        /// not even the record.
        case interrupted
    }

    /// The steps that change a Grokker: each records its intent before sending the change.
    static let changingSteps: Set<FleetStep> = [.provision, .region, .firmware]

    /// The steps after identify: a unit in its loader is repaired first.
    static func stepsAfterIdentify(repairFirst: Bool) -> [FleetStep] {
        repairFirst ? [.firmware, .reconnect, .provision, .region, .smokeTest, .finalSmokeTest]
                    : [.provision, .region, .smokeTest, .firmware, .reconnect, .finalSmokeTest]
    }

    /// The run's mode (a unit found already done may go on in `verify`'s, before its steps
    /// after identify: ``DeviceWorker/alreadyAsTheProfileWants()``).
    var mode: FleetMode
    /// The profile has a firmware section.
    let firmwareConfigured: Bool
    private(set) var state = State.idle
    /// Steps that changed the unit in this run (in a plan: that would have); the smoke
    /// tests and reconnect are decided on it.
    private(set) var changed: Set<FleetStep> = []
    /// The unit was connected: it is known, and recorded at the end.
    private(set) var connected = false

    init(mode: FleetMode, firmwareConfigured: Bool) {
        self.mode = mode
        self.firmwareConfigured = firmwareConfigured
    }

    init(mode: FleetMode, profile: Profile) {
        self.init(mode: mode, firmwareConfigured: profile.firmware != nil)
    }

    /// Takes `event` and says what to do next.
    mutating func next(_ event: Event) -> Action {
        switch (state, event) {
        case (.idle, .start):
            return perform(.connect, rest: [.identify])
        case (.performing(let step, let rest), .ended(let ending)):
            precondition(ending.step == step, "the workflow performs \(step), not \(ending.step)")
            if step == .connect, ending.result == .done { connected = true }
            if ending.result == .done, mode != .verify, step != .connect, step != .identify { changed.insert(step) }
            if stops(ending) { return passOver(rest) }
            var rest = rest
            if step == .identify {
                rest = Self.stepsAfterIdentify(repairFirst: ending.inLoader && mode != .verify && firmwareConfigured)
            }
            guard let next = rest.first else { return recordOrFinish() }
            return perform(next, rest: Array(rest.dropFirst()))
        case (.passingOver(_, let rest), .passedOver):
            return passOver(rest)
        case (.recording, .ended(let ending)):
            precondition(ending.step == .record, "the workflow records, not \(ending.step)")
            state = .finished
            return .finish
        case (.finished, .interrupted):
            return .finish
        case (_, .interrupted):
            state = .finished
            return .finish
        default:
            preconditionFailure("the device workflow got \(event) in state \(state)")
        }
    }

    /// Whether the device stops after this step: a failure or a refusal ends it, except a
    /// difference `verify` found (it changes nothing, so it goes on to report every one);
    /// a declined region ends it too (a smoke test cannot pass on a unit without one);
    /// after a declined update the later steps are simply not needed.
    func stops(_ ending: Ending) -> Bool {
        switch ending.result {
        case .failed: !(mode == .verify && StepDecision.verifyGoesOn.contains(ending.code))
        case .refused, .interrupted: true
        case .declined: ending.step == .region
        case .done, .skipped, .postponed: false
        }
    }

    private mutating func perform(_ step: FleetStep, rest: [FleetStep]) -> Action {
        state = .performing(step, rest: rest)
        return .perform(step)
    }

    private mutating func passOver(_ rest: [FleetStep]) -> Action {
        guard let next = rest.first else { return recordOrFinish() }
        state = .passingOver(next, rest: Array(rest.dropFirst()))
        return .notReached(next)
    }

    private mutating func recordOrFinish() -> Action {
        guard connected else {
            state = .finished
            return .finish
        }
        state = .recording
        return .perform(.record)
    }

    // MARK: What a plan assumes

    /// How a step a plan would run or ask about ends, as the plan assumes it: done (whether
    /// it succeeds is known once it ran); any other decision ends it as decided.
    static func assumedEnding(of decision: StepDecision, inLoader: Bool = false) -> Ending {
        let result: StepResult = switch decision.action {
        case .run, .ask: .done
        case .skip: .skipped
        case .refuse: .refused
        case .postpone: .postponed
        case .fail: .failed
        }
        return Ending(step: decision.step, result: result, code: decision.code, inLoader: inLoader)
    }

    /// What a step the plan assumes done changed on the unit, applied to what the plan
    /// knows: after region the unit is set to the region chosen (the profile's, or the first
    /// offered), after firmware it runs the target version from its application. `verify`
    /// changes nothing.
    func assumeDone(_ decision: StepDecision, in facts: inout StepFacts) {
        guard mode != .verify, decision.action == .run || decision.action == .ask else { return }
        switch decision.step {
        case .region:
            let name = decision.target ?? decision.choices.first
            if let region = name.flatMap(RegionCatalog.find) {
                facts.info.region = region.setting
                facts.info.userMustSetRegion = false
            }
        case .firmware:
            if let target = decision.target.flatMap({ FirmwareVersion($0) }) { facts.info.firmwareVersion = target }
            facts.inLoader = false
        default:
            break
        }
    }
}
