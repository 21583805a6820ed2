import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokFleet
import GrokkerEmulator
import GrokProtocol
import Testing
import UGrokIt

/// Where a seeded fault falls in a fleet firmware update: after the progress callback that
/// reports at least `byte` bytes sent, and either a power cut `samples` samples later on the
/// unit's clock (which reaches into flash writes, the ChangeSoftwareType resets and the
/// power-on checks) or the cable pulled there and then (the unit keeps its battery and
/// goes on with whatever it was doing).
struct FaultPoint: CustomTestStringConvertible, Sendable {
    var seed: UInt64
    var byte: Int
    var samples: Int64
    var unplug: Bool

    /// The update's size: the fixture's 256-byte loader and a 512-byte application.
    static let totalBytes = 256 + 512

    init(seed: UInt64) {
        // The seed moved one step on, as the moments drawn always were.
        var generator = SplitMix64(seed: seed &+ 0x9E37_79B9_7F4A_7C15)
        func next() -> UInt64 { generator.next() }
        self.seed = seed
        byte = Int(next() % UInt64(Self.totalBytes + 1))
        samples = Int64(next() % 120_000)  // up to 2.7 s of the unit's clock
        unplug = seed % 3 == 2
    }

    var testDescription: String { "seed \(seed): \(unplug ? "unplug" : "power cut") \(samples) samples after byte \(byte)" }

    /// 27 seeded faults (18 power cuts, 9 unplugs: about 35 s of CPU, the suite's share); the
    /// long campaign sets `GROKCTL_FIRMWARE_CHAOS_SEEDS` (scripts/chaos.sh, `firmware` campaign).
    static let all = (0..<(Int(ProcessInfo.processInfo.environment["GROKCTL_FIRMWARE_CHAOS_SEEDS"] ?? "") ?? 27))
        .map { FaultPoint(seed: UInt64($0)) }
}

@Suite("Power cuts and unplugs during a fleet firmware update")
struct FirmwareChaosTests {
    /// A profile that only updates firmware (no provisioning, region or smoke test), with
    /// short reconnect waits so a dead unit is given up quickly.
    static func profile() throws -> Profile {
        var profile = try testProfile()
        profile.provisioning = nil
        profile.region = nil
        profile.smokeTest = nil
        profile.timeouts.reconnect = 2
        return profile
    }

    @Test("after a power cut or an unplug at a seeded point of the update, the unit answers and a re-run updates it",
          arguments: FaultPoint.all)
    func faultThenRerun(_ fault: FaultPoint) async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 70_000_000 + UInt32(fault.seed))
        let firmware = try await FirmwareFixture(directory: bench.path + "/cache", versions: [FirmwareFixture.v180], applicationBytes: 512)
        let profile = try Self.profile()
        let units = UnitRegistry()
        let faulted = Fired()
        let delegate = EventStreamDelegate(decider: PolicyDelegate(profile: profile, mode: .provision)) { event in
            guard event.event == "firmware_progress", !faulted.value else { return }
            // `done` counts both images' bytes.
            guard event.data["done"]?.integer ?? 0 >= fault.byte else { return }
            faulted.value = true
            if fault.unplug {
                units.unplug(event.device)
            } else {
                units.cutPower(event.device, after: fault.samples)
            }
        }
        let first = try await FleetRunner(profile: profile, firmware: firmware.fleet, delegate: delegate, recorder: try TestLedger(),
                                          options: bench.options(.provision))
            .run([units.device(bench, 0, keepPower: fault.unplug)])
        #expect(faulted.value, "the fault was armed")
        // The fault lands before the run ends (at the latest in the reconnect after the update).
        #expect(first.devices[0].outcome == .failed, "\(first.devices[0].steps.map { "\($0.step) \($0.result) \($0.code)" })")

        // Power back (a new unit on the same flash) or the cable plugged in again (the same unit).
        let rerun = try await FleetRunner(profile: profile, firmware: firmware.fleet, delegate: PolicyDelegate(profile: profile, mode: .provision),
                                          recorder: try TestLedger(), options: bench.options(.provision))
            .run([units.device(bench, 0, keepPower: fault.unplug)])
        let steps = rerun.devices[0].steps.map { "\($0.step) \($0.result) \($0.code) \($0.detail)" }
        #expect(rerun.devices[0].outcome == .done, "first: \(first.devices[0].steps.map { "\($0.step) \($0.result) \($0.code)" }) rerun: \(steps)")
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
        // It answers on the new version, in its application.
        let unit = try #require(units.grokker("sim:0"))
        #expect(unit.softwareType == .application)
        let session = try ReaderSession(port: SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: unit))
        let info = try session.connect()
        #expect(info.firmwareVersion == FirmwareFixture.v180)
        session.close()
    }
}

/// A flag set once from a device thread.
final class Fired: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    var value: Bool {
        get { lock.lock(); defer { lock.unlock() }; return fired }
        set { lock.lock(); fired = newValue; lock.unlock() }
    }
}
