import Foundation
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Synchronization
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// grokctl on a terminal, as a technician sees it: run under `script`, which gives it a
/// pseudo-terminal of its own (its standard input and output are a tty, and Ctrl-C typed
/// there is the terminal's interrupt: SIGINT to grokctl). Keys are sent when the screen
/// shows what a person would wait for, never after a fixed delay.
final class TerminalSession: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private final class Screen: Sendable {
        let bytes = Mutex(Data())
    }
    private let screenBox = Screen()

    init(_ arguments: [String], environment: [String: String]) throws {
        let command = ([try grokctlExecutable().path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            .joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        process.environment = ["PATH": "/usr/bin:/bin", "TERM": "xterm"].merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let screen = screenBox
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            screen.bytes.withLock { $0.append(data) }
        }
        try process.run()
    }

    var text: String { String(decoding: screenBox.bytes.withLock { $0 }, as: UTF8.self) }

    /// Waits until the screen shows `wanted` `count` times (or the program ended).
    @discardableResult
    func waitFor(_ wanted: String, count: Int = 1, seconds: Double = 300) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if text.components(separatedBy: wanted).count - 1 >= count { return true }
            if !process.isRunning { return text.components(separatedBy: wanted).count - 1 >= count }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// Types `keys` (`\u{03}` is Ctrl-C).
    func type(_ keys: String) { input.fileHandleForWriting.write(Data(keys.utf8)) }

    /// Waits for the end (a program still running after `seconds` is ended: -1); the exit status.
    func finish(seconds: Double = 300) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            output.fileHandleForReading.readabilityHandler = nil
            return -1
        }
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        screenBox.bytes.withLock { $0.append(rest) }
        return process.terminationStatus
    }
}

@Suite("The technician's terminal")
struct TerminalPromptTests {
    let outOfBox = FirmwareVersion(major: 1, minor: 7, build: 3)

    func session(_ world: FleetWorld, devices: String, profile: String = FleetWorld.profile) throws -> TerminalSession {
        try TerminalSession(["provision", "--profile", profile, "--device", devices] + world.common, environment: world.environment)
    }

    @Test("Ctrl-C at a prompt aborts at once (exit 130): no other question is asked, nothing more is changed, and the other device's lines wait until the prompt is gone")
    func controlCAtThePrompt() throws {
        let world = try FleetWorld(devices: 2)
        let terminal = try session(world, devices: "sim:0-1")
        let choices = text(.promptFirmwareChoices, .en)
        #expect(terminal.waitFor(choices))
        // The question is open: wait for its prompt line and for the other unit to have
        // finished its smoke test too (its lines are then due on the screen), then interrupt.
        #expect(terminal.waitFor(text(.promptChoice, .en, "1")))
        let deadline = Date().addingTimeInterval(300)
        while Date() < deadline, ((try? Ledger.open(path: world.ledger).steps())?.filter { $0.step == "smoke_test" }.count ?? 0) < 2 {
            Thread.sleep(forTimeInterval: 0.1)
        }
        Thread.sleep(forTimeInterval: 0.5)
        terminal.type("\u{03}")
        // At once: well before the run could have ended by itself (it waits at the prompt).
        let status = terminal.finish(seconds: 60)
        let screen = terminal.text
        #expect(status == 130, "\(screen)")
        // Nothing was flashed on either unit; only one question was ever asked.
        #expect(try world.device(0).firmwareVersion == outOfBox)
        #expect(try world.device(1).firmwareVersion == outOfBox)
        #expect(screen.components(separatedBy: choices).count - 1 == 1, "\(screen)")
        // While the prompt was open nothing was printed after it: the next thing on the
        // screen is the ^C the terminal echoes; the other unit's lines come after.
        let prompt = text(.promptChoice, .en, "1")
        let afterPrompt = screen.components(separatedBy: prompt).dropFirst().first ?? ""
        #expect(afterPrompt.hasPrefix(" ^C") || afterPrompt.hasPrefix("^C"), "\(screen)")
        // The other unit's lines are on the screen (before the question when its smoke
        // test ended first, else held and shown after it).
        #expect(screen.contains(text(.fleetStepSmokeTest, .en)), "\(screen)")
        #expect(screen.contains(text(.fleetRunOutcomeInterrupted, .en)))
    }

    @Test("'3) cancel' is recorded as declined and the run is incomplete (exit 2), not a success")
    func cancelIsDeclined() throws {
        let world = try FleetWorld(devices: 1)
        let terminal = try session(world, devices: "sim:0")
        #expect(terminal.waitFor(text(.promptChoice, .en, "1")))
        terminal.type("3\n")
        let status = terminal.finish()
        #expect(status == 2, "\(terminal.text)")
        #expect(!terminal.text.contains(text(.fleetRunOutcomeSucceeded, .en) + ";"), "\(terminal.text)")
        #expect(try world.device(0).firmwareVersion == outOfBox)
        let steps = try Ledger.open(path: world.ledger).steps()
        // Its own result, not a postponement by policy; the decision is kept as a code, not as words.
        let firmware = try #require(steps.first { $0.step == "firmware" }, "\(steps)")
        #expect(firmware.result == .declined && firmware.code == "fleet_update_declined", "\(steps)")
        // `ledger show RUN` names it in the user's language.
        let run = try #require(try Ledger.open(path: world.ledger).runs().first)
        let shown = try world.run(["ledger", "show", run.key, "--ledger", world.ledger, "--lang", "de"])
        #expect(shown.standardOutput.contains(text(.fleetResultDeclined, .de)), "\(shown.standardOutput)")
    }

    @Test("'no' at the region's confirmation is declined: nothing set, nothing after it tried, the run incomplete (exit 2)")
    func regionNoIsDeclined() throws {
        let world = try FleetWorld(devices: 1)
        var profile = try String(contentsOfFile: FleetWorld.profile, encoding: .utf8)
        profile = profile.replacingOccurrences(of: #""region": { "set": "fcc", "allowed": ["fcc"] }"#,
                                               with: #""region": { "allowed": ["fcc", "australia"] }"#)
        let file = world.root + "/two-regions.json"
        try profile.write(toFile: file, atomically: true, encoding: .utf8)
        let terminal = try session(world, devices: "sim:0", profile: file)
        #expect(terminal.waitFor(text(.promptChoiceNoDefault, .en)))
        terminal.type("2\n")
        #expect(terminal.waitFor("[Y/n]"))
        terminal.type("n\n")
        let status = terminal.finish()
        #expect(status == 2, "\(terminal.text)")
        #expect(try world.device(0).region == nil, "\(terminal.text)")
        let steps = try Ledger.open(path: world.ledger).steps()
        #expect(steps.contains { $0.step == "region" && $0.result == .declined && $0.code == "fleet_region_declined" }, "\(steps)")
        #expect(!steps.contains { $0.step == "smoke_test" || $0.step == "firmware" }, "\(steps)")
    }

    @Test("an update the policy overrules (low battery) is not offered: no question, postponed, exit 2")
    func noOfferAtLowBattery() throws {
        let world = try FleetWorld(devices: 1)
        let store = try DeviceStateStore.openOrCreate(directory: world.bench, index: 0)
        try store.update { $0.batteryPercent = 10 }
        let terminal = try session(world, devices: "sim:0")
        let status = terminal.finish()
        #expect(status == 2, "\(terminal.text)")
        #expect(!terminal.text.contains(text(.promptFirmwareChoices, .en)), "\(terminal.text)")
        // The reason once, without repeating the device its line already names.
        let reason = Localizer(language: .en).fleetMessage(code: "fleet_battery_low", arguments: ["sim:0", "10", "30"], about: "sim:0")
        #expect(terminal.text.contains(": " + reason), "\(terminal.text)")
        #expect(!terminal.text.contains(text(.errorFleetBatteryLow, .en, "sim:0", "10", "30")), "\(terminal.text)")
    }

    @Test("only the regions the profile allows are offered, and a wrong choice is asked again")
    func regionMenu() throws {
        let world = try FleetWorld(devices: 1)
        var profile = try String(contentsOfFile: FleetWorld.profile, encoding: .utf8)
        profile = profile.replacingOccurrences(of: #""region": { "set": "fcc", "allowed": ["fcc"] }"#,
                                               with: #""region": { "allowed": ["fcc", "australia"] }"#)
        #expect(profile.contains(#""allowed": ["fcc", "australia"]"#))
        let file = world.root + "/two-regions.json"
        try profile.write(toFile: file, atomically: true, encoding: .utf8)
        let terminal = try session(world, devices: "sim:0", profile: file)
        let menu = text(.promptChoiceNoDefault, .en)
        #expect(terminal.waitFor(menu))
        let shown = terminal.text
        #expect(shown.contains("1) FCC (US), IC (Canada)") && shown.contains("2) Australia"), "\(shown)")
        #expect(!shown.contains("3) "), "\(shown)")
        // 7 is not on the menu: asked again; 2 is Australia; Enter confirms; then postpone the update.
        terminal.type("7\n")
        #expect(terminal.waitFor(text(.promptInvalid, .en)))
        #expect(terminal.waitFor(menu, count: 2))
        terminal.type("2\n")
        #expect(terminal.waitFor("[Y/n]"))
        terminal.type("\n")
        #expect(terminal.waitFor(text(.promptFirmwareChoices, .en)))
        terminal.type("2\n")
        let status = terminal.finish()
        #expect(status == 2, "\(terminal.text)")
        #expect(try world.device(0).region?.number == 8, "\(terminal.text)")
    }

    @Test("'5' answers the update question for the remaining Grokkers too: asked once, the others postponed without a question")
    func sameForTheRemaining() throws {
        let world = try FleetWorld(devices: 3)
        let terminal = try session(world, devices: "sim:0-2")
        #expect(terminal.waitFor(text(.promptFirmwareChoicesRemaining, .en)))
        #expect(terminal.waitFor(text(.promptChoice, .en, "1")))
        terminal.type("5\n")
        let status = terminal.finish()
        let screen = terminal.text
        #expect(status == 2, "\(screen)")
        #expect(screen.components(separatedBy: text(.promptFirmwareChoices, .en)).count - 1 == 1, "\(screen)")
        #expect(screen.components(separatedBy: text(.promptAnswerPostpone, .en) + " (").count - 1 == 2, "\(screen)")
        for n in 0..<3 { #expect(try world.device(n).firmwareVersion == outOfBox) }
        let steps = try Ledger.open(path: world.ledger).steps().filter { $0.step == "firmware" }
        #expect(steps.count == 3 && steps.allSatisfy { $0.result == .postponed && $0.code == "fleet_update_declined" }, "\(steps)")
    }

    @Test("firmware flash at a terminal asks first: a bad answer is asked again, 'n' flashes nothing (exit 1)")
    func flashAsksFirst() throws {
        let world = try FleetWorld(devices: 1)
        let image = FlashTerminalTests.root + "/firmware/demo/GR-1_1-8-0_demo.ugif"
        let terminal = try TerminalSession(["--bench", world.bench, "firmware", "flash", "--device", "sim:0", "--package", image,
                                            "--allow-unlisted"], environment: world.environment)
        #expect(terminal.waitFor(text(.flashConfirmPrompt, .en)))
        #expect(terminal.text.contains(text(.flashConfirm, .en, "1", "GR-1_1-8-0_demo.ugif", "sim:0")), "\(terminal.text)")
        terminal.type("perhaps\n")
        #expect(terminal.waitFor(text(.flashConfirmPrompt, .en), count: 2))
        terminal.type("n\n")
        let status = terminal.finish()
        #expect(status == 1, "\(terminal.text)")
        #expect(terminal.text.contains(text(.promptInvalid, .en)) && terminal.text.contains(text(.flashNotConfirmed, .en)), "\(terminal.text)")
        #expect(try world.device(0).firmwareVersion == outOfBox)
    }
}
