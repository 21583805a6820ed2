import Foundation
import GrokFleet
import GrokkerEmulator
import GrokProtocol
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The commands outside the fleet engine (`info`, `region`, `inventory`, `locate`, `tag`,
/// `firmware flash`) take the same port lock a fleet run takes, so two grokctl never talk
/// to one Grokker at once: the second waits a bounded time, then is refused naming the holder.
@Suite("One Grokker, one command at a time")
struct DeviceLockCommandTests {
    @Test("info on a Grokker a provision run is working on is refused, naming that run's process; once it ended, info answers")
    func infoWaitsForTheFleetRun() throws {
        let world = try FleetWorld(devices: 1)
        // The run stops at the firmware question, holding the unit's port.
        let terminal = try TerminalSession(["provision", "--profile", FleetWorld.profile, "--device", "sim:0"] + world.common,
                                           environment: world.environment)
        #expect(terminal.waitFor(text(.promptChoice, .en, "1")))
        let refused = try world.run(["info", "--device", "sim:0", "--bench", world.bench])
        let said = refused.standardOutput + refused.standardError
        #expect(refused.status == 1, "\(said)")
        let lockFile = world.state + "/grokctl/locks/"
        #expect(said.contains("sim:0 is in use by another grokctl (process "), "\(said)")
        #expect(said.contains("'grokctl provision'"), "\(said)")
        #expect(said.contains(lockFile), "\(said)")
        // Nothing was sent: the run goes on as if info had never been tried.
        terminal.type("2\n")
        #expect(terminal.finish() == 2, "\(terminal.text)")
        let answered = try world.run(["info", "--device", "sim:0", "--bench", world.bench])
        #expect(answered.status == 0, "\(answered.standardError)")
    }

    @Test("every device command is refused on a held port, in the user's language, with the stable code in --json",
          arguments: [["info", "--device", "sim:0"], ["region", "set", "fcc", "--device", "sim:0"],
                      ["inventory", "--device", "sim:0", "--duration", "0.2"], ["locate", "3074257BF7194E4000001A85", "--device", "sim:0"],
                      ["tag", "read", "--epc", "3074257BF7194E4000001A85", "--device", "sim:0"]])
    func heldPortRefusesEveryCommand(_ command: [String]) throws {
        let world = try FleetWorld(devices: 1)
        let ports = DevicePortContext(bench: Bench(directory: world.bench))
        let locks = world.state + "/grokctl/locks"
        let held = try #require(try DeviceLock.acquire(directory: locks, port: DevicePorts.portKey(.emulated(index: 0), context: ports)))
        defer { held.unlock() }
        // --lock-wait 0.2: refused after a fifth of a second instead of the default 3 s.
        let german = try world.run(command + ["--bench", world.bench, "--lang", "de", "--lock-wait", "0.2"])
        let germanText = german.standardOutput + german.standardError
        #expect(german.status == 1, "\(command): \(germanText)")
        #expect(germanText.contains("wird von einem anderen grokctl verwendet (Prozess \(getpid())"), "\(germanText)")
        let json = try world.run(command + ["--bench", world.bench, "--json", "--lock-wait", "0.2"])
        #expect(json.status == 1)
        #expect((json.standardOutput + json.standardError).contains(#""code":"device_busy""#), "\(json.standardOutput)\(json.standardError)")
        // The unit was never opened: a new unit's state file is not even created.
        #expect(!FileManager.default.fileExists(atPath: world.bench + "/sim-0/state.json"))
    }
}
