import Foundation
import GrokCommandLine
import GrokFleet
import Synchronization
import UGrokIt

/// Where the terminal delegate reads answers: standard input, or a script in tests.
protocol LineSource: Sendable {
    /// The next line without its newline; `nil` at end of input.
    func readLine() -> String?
}

/// Open while a question waits for its answer: the run's other output (other devices'
/// lines) is held meanwhile and shown once it is answered, so nothing lands on the prompt.
final class PromptGate: Sendable {
    /// Questions asked or waiting to be asked.
    private let questions = Mutex(0)

    init() {}

    var isOpen: Bool { questions.withLock { $0 > 0 } }

    func open() { questions.withLock { $0 += 1 } }
    func close() { questions.withLock { $0 -= 1 } }
}

/// The technician's configuration delegate: asks at the terminal, in the user's language,
/// whether to update now, postpone or cancel; which region to set and to confirm it; and
/// whether to retry after a failure. The profile's policy still says what it would do (its
/// advice is shown), and the engine still refuses what the profile forbids (a region
/// outside the allowed list, a downgrade).
///
/// Several device threads call at once: each question is asked and answered whole, behind
/// one lock, with the device and serial number in it. At the end of input every question
/// takes its safe answer (postpone, cancel, do not retry).
final class TerminalDelegate: ConfigurationDelegate {
    let localizer: Localizer
    let policy: PolicyDelegate
    private let input: any LineSource
    private let output: any OutputSink & Sendable
    private let lock = Mutex(())
    /// Open while a question is asked (the run holds other output meanwhile).
    let gate: PromptGate
    /// Whether the run was stopped: no question is asked any more (each has no answer).
    private let isCancelled: @Sendable () -> Bool
    /// How many times an unreadable answer is asked again before the safe answer is taken.
    private let attempts = 3
    /// The update question's answer given "for the remaining Grokkers" (choices 4 to 6):
    /// 1, 2 or 3, then taken for every later unit without asking.
    private let remainingAnswer = Mutex<Int?>(nil)

    init(localizer: Localizer, policy: PolicyDelegate, input: any LineSource, output: any OutputSink & Sendable,
         gate: PromptGate = PromptGate(), isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.isCancelled = isCancelled
        self.localizer = localizer
        self.policy = policy
        self.input = input
        self.output = output
        self.gate = gate
    }

    private func who(_ context: FleetDeviceContext) -> String {
        localizer.text(.promptDevice, context.device, context.serial ?? "?")
    }

    /// Asks `question` until an answer `parse` accepts (up to ``attempts`` times); `nil` at
    /// the end of input or after too many unreadable answers. `given`, checked once the
    /// terminal is this question's, is an answer already given (for the remaining Grokkers):
    /// then nothing is asked.
    private func ask<Answer>(_ lines: [String], prompt: String, given: () -> Answer? = { nil }, parse: (String) -> Answer?) -> Answer? {
        gate.open()
        defer { gate.close() }
        return lock.withLock { _ in
            if isCancelled() { return nil }
            if let answer = given() { return answer }
            output.write(lines.map { $0 + "\n" }.joined())
            for _ in 0..<attempts {
                output.write(prompt + " ")
                guard let line = input.readLine() else {
                    output.write("\n")
                    return nil
                }
                if let answer = parse(line.trimmingCharacters(in: .whitespaces)) { return answer }
                output.write(localizer.text(.promptInvalid) + "\n")
            }
            return nil
        }
    }

    /// Yes or no in this language (`y`/`n`, `s`/`n`, `o`/`n`, `j`/`n`; English letters too);
    /// an empty answer is `defaultAnswer`.
    func yesNo(_ answer: String, defaultAnswer: Bool) -> Bool? {
        Self.yesNo(answer, defaultAnswer: defaultAnswer, localizer: localizer)
    }

    /// ``yesNo(_:defaultAnswer:)`` in `localizer`'s language (also `firmware flash`'s confirmation).
    static func yesNo(_ answer: String, defaultAnswer: Bool, localizer: Localizer) -> Bool? {
        let lower = answer.lowercased()
        if lower.isEmpty { return defaultAnswer }
        // `y,yes|n,no` in each language.
        let lists = localizer.text(.promptAnswerWords).lowercased().split(separator: "|").map {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let yes = Set((lists.first ?? []) + ["y", "yes"])
        let no = Set((lists.count > 1 ? lists[1] : []) + ["n", "no"])
        if yes.contains(lower) { return true }
        if no.contains(lower) { return false }
        return nil
    }

    // MARK: Firmware

    /// A person answers: a plan shows these questions as `ask`.
    var isInteractive: Bool { true }

    /// The policy overrules first (low battery, outside the window): such an update is not offered.
    func firmwarePolicy(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision {
        policy.firmwareDecision(context, offer: offer)
    }

    func promptForFirmwareUpdate(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision {
        var lines = [localizer.text(.promptFirmwareOffer, who(context), offer.running.description, offer.version.description,
                                    offer.name)]
        if let notes = offer.notes[localizer.language.rawValue] ?? offer.notes["en"], !notes.isEmpty {
            lines.append("  " + notes)
        }
        if let percent = offer.batteryPercent {
            lines.append(localizer.text(.promptBattery, String(percent)))
        }
        let advice = policy.firmwareDecision(context, offer: offer)
        switch advice {
        case .update: break
        case .postpone(let reason, let arguments), .cancel(let reason, let arguments):
            lines.append(localizer.text(.promptPolicyAdvice, localizer.fleetMessage(code: reason, arguments: arguments)))
        }
        let defaultChoice = advice == .update ? 1 : 2
        lines.append(localizer.text(.promptFirmwareChoices))
        lines.append(localizer.text(.promptFirmwareChoicesRemaining))
        let remembered = { () -> Int? in
            // "The same for the remaining Grokkers" (4 to 6), once given, answers without asking.
            guard let choice = self.remainingAnswer.withLock({ $0 }) else { return nil }
            self.output.write(self.localizer.text(.promptFirmwareRemembered, self.who(context),
                                                  self.localizer.text(Self.answerKey(choice))) + "\n")
            return choice
        }
        let choice = ask(lines, prompt: localizer.text(.promptChoice, String(defaultChoice)), given: remembered) { answer -> Int? in
            if answer.isEmpty { return defaultChoice }
            guard let number = Int(answer), (1...6).contains(number) else { return nil }
            // Remembered while this question still holds the terminal: a unit waiting for it
            // takes the answer instead of being asked (CI once saw it asked in between).
            if number > 3 { self.remainingAnswer.withLock { $0 = number - 3 } }
            return number
        }
        guard let choice else { return decision(2, context) }
        return decision(choice > 3 ? choice - 3 : choice, context)
    }

    /// The decision of update-question answer `choice` (1 update, 2 postpone, 3 cancel).
    private func decision(_ choice: Int, _ context: FleetDeviceContext) -> FirmwareUpdateDecision {
        switch choice {
        case 1: return .update
        // The decision as a code (shown through `fleet.decision.<code>`), never as words of
        // this terminal's language: the ledger keeps it, and a report may be read in another.
        case 3: return .cancel(reason: "fleet_update_declined", arguments: [context.device, "cancelled"])
        default: return .postpone(reason: "fleet_update_declined", arguments: [context.device, "postponed"])
        }
    }

    /// The words of update-question answer `choice`.
    static func answerKey(_ choice: Int) -> MessageKey {
        switch choice {
        case 1: .promptAnswerUpdate
        case 3: .promptAnswerCancel
        default: .promptAnswerPostpone
        }
    }

    func notifyFirmwareUpdateFailure(_ context: FleetDeviceContext, error: FleetError, mustRetry: Bool, attempt: Int) -> RetryDecision {
        retry(context, what: localizer.text(.promptFirmwareFailed, who(context), localizer.message(for: error)), attempt: attempt)
    }

    // MARK: Region

    func chooseRegionFromRegions(_ context: FleetDeviceContext, names: [String], selected: Int?) -> Int? {
        guard !names.isEmpty else { return nil }
        var lines = [localizer.text(.promptRegionChoose, who(context))]
        let width = String(names.count).count
        for (index, name) in names.enumerated() {
            let number = String(index + 1)
            lines.append("  " + String(repeating: " ", count: width - number.count) + number + ") " + localizer.regionDisplay(name))
        }
        // The default: the one selected, else the one the profile's policy would choose.
        let fallback = selected ?? policy.chooseRegionFromRegions(context, names: names, selected: nil)
        let prompt = fallback.map { localizer.text(.promptChoice, String($0 + 1)) } ?? localizer.text(.promptChoiceNoDefault)
        return ask(lines, prompt: prompt) { answer -> Int? in
            if answer.isEmpty { return fallback }
            guard let number = Int(answer), (1...names.count).contains(number) else { return nil }
            return number - 1
        }
    }

    func confirmRegion(_ context: FleetDeviceContext, name: String) -> Bool {
        ask([], prompt: localizer.text(.promptRegionConfirm, who(context), localizer.regionDisplay(name))) {
            yesNo($0, defaultAnswer: true)
        } ?? false
    }

    func notifySetRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision {
        retry(context, what: localizer.text(.promptRegionFailed, who(context), localizer.message(for: error)), attempt: attempt)
    }

    func notifyLoadRegionFailure(_ context: FleetDeviceContext, error: FleetError, attempt: Int) -> RetryDecision {
        retry(context, what: localizer.text(.promptRegionFailed, who(context), localizer.message(for: error)), attempt: attempt)
    }

    func notifyFirmwareDoesNotSupportSetRegion(_ context: FleetDeviceContext) {
        lock.withLock { _ in output.write(localizer.text(.promptRegionUnsupported, who(context)) + "\n") }
    }

    private func retry(_ context: FleetDeviceContext, what: String, attempt: Int) -> RetryDecision {
        let again = ask([what], prompt: localizer.text(.promptRetry, String(attempt))) { yesNo($0, defaultAnswer: false) }
        return again == true ? .retry : .giveUp
    }

    // MARK: The rest follows the policy

    func shouldStartDevice(_ context: FleetDeviceContext) -> FleetError? { policy.shouldStartDevice(context) }

    func stageLeavesOut(_ context: FleetDeviceContext) -> FleetError? { policy.stageLeavesOut(context) }

    func deviceFinished(_ context: FleetDeviceContext, outcome: DeviceOutcome, steps: [StepOutcome]) {
        policy.deviceFinished(context, outcome: outcome, steps: steps)
    }
}
