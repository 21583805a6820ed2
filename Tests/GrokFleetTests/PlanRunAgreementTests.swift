import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokFleet
import GrokLedger
import GrokkerEmulator
import GrokProtocol
import Synchronization
import Testing
import UGrokIt

/// A technician with answers fixed in advance: the firmware question and the region menu
/// (the policy still overrules before anything is offered, as the terminal's does).
struct ScriptedPerson: ConfigurationDelegate {
    let policy: PolicyDelegate
    let firmwareAnswer: FirmwareUpdateDecision
    /// The index chosen in the menu offered (`nil`: no choice).
    let regionAnswer: Int?

    var isInteractive: Bool { true }
    func firmwarePolicy(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision {
        policy.firmwareDecision(context, offer: offer)
    }
    func promptForFirmwareUpdate(_ context: FleetDeviceContext, offer: FirmwareOffer) -> FirmwareUpdateDecision { firmwareAnswer }
    func chooseRegionFromRegions(_ context: FleetDeviceContext, names: [String], selected: Int?) -> Int? { regionAnswer }
    func shouldStartDevice(_ context: FleetDeviceContext) -> FleetError? { policy.shouldStartDevice(context) }
    func deviceFinished(_ context: FleetDeviceContext, outcome: DeviceOutcome, steps: [StepOutcome]) {
        policy.deviceFinished(context, outcome: outcome, steps: steps)
    }
}

/// One generated situation: a profile, a mode, a unit's state, the channel, the history,
/// and who answers.
struct Situation: CustomStringConvertible {
    var seed: UInt64
    var mode: FleetMode
    var profile: Profile
    var battery: UInt8
    var revision: UInt8
    /// A run with the same profile before (the ledger's history, a unit already changed).
    var priorRun: Bool
    /// The unit's region changed after that run, behind the ledger's back.
    var changedElsewhere: Bool
    /// 0: no channel; 1: the channel; 2: the channel with a catalogue of FCC and ETSI; 3: ETSI only.
    var channel: Int
    var person: (firmware: FirmwareUpdateDecision, region: Int?)?
    var now: Date

    var description: String {
        "seed \(seed): \(mode) region \(profile.region.map { "\($0.set?.code ?? "-")/\($0.allowed.map(\.code))" } ?? "none") "
            + "firmware \(profile.firmware.map { "\($0.target) downgrade \($0.allowDowngrade)" } ?? "none") min battery \(profile.minimumBatteryPercent) "
            + "window \(profile.maintenanceWindows != nil) rollout \(profile.rollout?.percentage ?? -1) provisioning \(profile.provisioning != nil) "
            + "smoke \(profile.smokeTest != nil) battery \(battery) rev \(revision) prior \(priorRun) elsewhere \(changedElsewhere) "
            + "channel \(channel) person \(person.map { "\($0.firmware.name)/\($0.region.map(String.init) ?? "-")" } ?? "policy")"
    }

    static func generate(seed: UInt64) throws -> Situation {
        var rng = SplitMix64(seed: seed)
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &rng)] }
        let revision: UInt8 = pick([3, 6])
        var profile = try testProfile(target: pick([.latest, .version(FirmwareFixture.v170), .version(FirmwareFixture.v180)]),
                                      allowDowngrade: pick([false, true]), minimumBattery: pick([20, 60]), revision: revision)
        let fcc = try require(RegionCatalog.find("fcc"))
        let etsi = try require(RegionCatalog.find("etsi"))
        let australia = try require(RegionCatalog.find("australia"))
        profile.region = pick([
            Profile.RegionPolicy(set: fcc, allowed: [fcc]), Profile.RegionPolicy(set: fcc, allowed: [fcc]),
            Profile.RegionPolicy(set: fcc, allowed: [fcc, etsi]), Profile.RegionPolicy(set: etsi, allowed: [etsi, fcc]),
            Profile.RegionPolicy(set: nil, allowed: [fcc]), Profile.RegionPolicy(set: nil, allowed: [fcc, australia]),
            Profile.RegionPolicy(set: nil, allowed: [australia]), nil,
        ])
        if pick([true, true, true, false]) == false { profile.firmware = nil }
        if pick([true, true, false]) == false { profile.provisioning = nil }
        if pick([true, true, true, false]) == false { profile.smokeTest = nil }
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        if pick([false, false, true]) {
            // 22:00-06:00 in Berlin.
            profile.maintenanceWindows = MaintenanceWindows(
                timeZone: berlin, windows: [.init(days: Set(MaintenanceWindows.Day.allCases), startMinute: 22 * 60, endMinute: 6 * 60)])
        }
        let mode: FleetMode = pick([.provision, .provision, .rollout, .verify])
        if mode == .rollout { profile.rollout = RolloutPolicy(id: "r\(seed)", percentage: pick([0, 50, 100])) }
        let priorRun = pick([false, false, true])
        let interactive = mode == .provision && pick([false, true])
        return Situation(
            seed: seed, mode: mode, profile: profile, battery: pick([10, 45, 90]), revision: revision, priorRun: priorRun,
            changedElsewhere: priorRun && pick([false, true]), channel: pick([0, 1, 1, 1, 2, 3]),
            person: interactive ? (pick([.update, .postpone(reason: "fleet_update_declined", arguments: ["sim:0", "postponed"]),
                                         .cancel(reason: "fleet_update_declined", arguments: ["sim:0", "cancelled"])]),
                                   pick([0, 1, nil, 7])) : nil,
            now: pick([wednesdayNoonUTC, wednesdayNoonUTC.addingTimeInterval(10.5 * 3600)]))
    }
}

/// Whether the plan predicted the step the run took. `nil` when it did; else what differs.
func disagreement(_ planned: PlannedStep?, _ taken: StepOutcome) -> String? {
    guard let planned else { return "\(taken.step): not in the plan, the run \(taken.result) (\(taken.code))" }
    let same: Bool
    switch planned.action {
    case .run:
        // A smoke test's result is known only once it ran.
        same = taken.result == .done || (taken.result == .failed && taken.code == "fleet_smoke_test_failed")
    case .skip: same = taken.result == .skipped && taken.code == planned.code
    case .refuse: same = taken.result == .refused && taken.code == planned.code
    case .postpone: same = taken.result == .postponed && taken.code == planned.code
    case .fail: same = taken.result == .failed && taken.code == planned.code
    case .ask: same = true
    }
    return same ? nil : "\(taken.step): planned \(planned.action) (\(planned.code)), the run \(taken.result) (\(taken.code) \(taken.detail))"
}

@Suite("Plan and run agree")
struct PlanRunAgreementTests {
    /// 32 seeded situations in the suite (about 30 s of CPU); `GROKCTL_PLAN_SITUATIONS` runs
    /// more (seeds 1000 on), as a longer campaign.
    static let situationCount = Int(ProcessInfo.processInfo.environment["GROKCTL_PLAN_SITUATIONS"] ?? "") ?? 32

    /// The channels of the situations (built once per case: a TUF repository each).
    static func channel(_ kind: Int, _ bench: FleetBench) async throws -> FirmwareFixture? {
        switch kind {
        case 1: try await FirmwareFixture(directory: bench.path + "/channel")
        case 2: try await FirmwareFixture(directory: bench.path + "/channel", regions: ["fcc", "etsi"])
        case 3: try await FirmwareFixture(directory: bench.path + "/channel", regions: ["etsi"])
        default: nil
        }
    }

    @Test("for generated situations (profiles, modes, unit states, channels, history, answers) the plan predicts every step the run takes and flags every refusal it could know",
          arguments: (0..<situationCount).map { UInt64(1000 + $0) })
    func planPredictsRun(seed: UInt64) async throws {
        let situation = try Situation.generate(seed: seed)
        let bench = FleetBench()
        try bench.prepare(0, serial: 50_000_000 + UInt32(seed % 1000), battery: situation.battery, revision: situation.revision)
        let firmware = try await Self.channel(situation.channel, bench)
        let recorder = try TestLedger()
        let now = situation.now
        if situation.priorRun {
            var prior = situation.profile
            prior.maintenanceWindows = nil
            prior.rollout = nil
            _ = try await runner(bench, prior, firmware, recorder: recorder, now: { now }).run([bench.device(0)])
            if situation.changedElsewhere {
                let store = try DeviceStateStore.openOrCreate(directory: bench.path, index: 0)
                let australia = try require(RegionCatalog.find("australia")).setting
                // As `grokctl region set` leaves it: the region and the unit's "user has set region" flag.
                try store.update {
                    $0.region = australia
                    $0.provisioning.userHasSetRegion = true
                }
            }
        }
        let policy = PolicyDelegate(profile: situation.profile, mode: situation.mode, now: { now })
        let delegate: any ConfigurationDelegate = situation.person.map {
            ScriptedPerson(policy: policy, firmwareAnswer: $0.firmware, regionAnswer: $0.region)
        } ?? policy
        let run = FleetRunner(profile: situation.profile, firmware: firmware?.fleet, delegate: delegate, recorder: recorder,
                              options: bench.options(situation.mode))
        let before = try bench.state(0)
        let plan = try #require(run.plan([bench.device(0)], policy: policy, interactive: delegate.isInteractive).first)
        #expect(try bench.state(0) == before, "the plan changed the unit: \(situation)")
        #expect(plan.error == nil, "\(situation): \(String(describing: plan.error))")
        let report = try await run.run([bench.device(0)])
        let device = report.devices[0]
        var differences: [String] = []
        for taken in device.steps {
            if let difference = disagreement(plan.steps.first { $0.step == taken.step }, taken) { differences.append(difference) }
            // After a question answered otherwise than yes, the plan's assumption (the change made) no longer holds.
            if plan.steps.first(where: { $0.step == taken.step })?.action == .ask, taken.result != .done { break }
        }
        #expect(differences.isEmpty, "\(situation)\n\(differences.joined(separator: "\n"))\nplan: \(plan.steps.map { "\($0.step) \($0.action) \($0.code)" })")
    }

    @Test("a region the channel's catalogue does not let the unit choose is refused by the plan, before the run refuses it")
    func planFlagsCatalogueRefusal() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 50_100_001)
        let etsiOnly = try await FirmwareFixture(directory: bench.path + "/channel", regions: ["etsi"])
        let profile = try testProfile()
        let run = runner(bench, profile, etsiOnly, recorder: try TestLedger())
        let plan = try #require(run.plan([bench.device(0)], policy: PolicyDelegate(profile: profile, mode: .provision)).first)
        let region = try #require(plan.steps.first { $0.step == .region })
        #expect(region.action == .refuse && region.code == "fleet_region_not_allowed")
        // The run stops there: the plan shows what follows as not reached.
        #expect(plan.steps.first { $0.step == .firmware }?.code == "step_not_reached")
        let report = try await run.run([bench.device(0)])
        #expect(report.devices[0].step(.region)?.result == .refused)
    }

    @Test("the plan reads the battery: an update the policy postpones at low battery is planned as postponed, not run")
    func planFlagsLowBattery() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 50_100_002, battery: 10, revision: 6)
        let firmware = try await FirmwareFixture(directory: bench.path + "/channel")
        let profile = try testProfile(minimumBattery: 30, revision: 6)
        let plan = try #require(runner(bench, profile, firmware, recorder: try TestLedger())
            .plan([bench.device(0)], policy: PolicyDelegate(profile: profile, mode: .provision)).first)
        let step = try #require(plan.steps.first { $0.step == .firmware })
        #expect(step.action == .postpone && step.code == "fleet_battery_low" && step.arguments == ["sim:0", "10", "30"])
        // A smoke test's result is not known in advance: the plan says it will run, and why.
        let smoke = try #require(plan.steps.first { $0.step == .smokeTest })
        #expect(smoke.action == .run && smoke.code == "step_smoke_test_after_change")
    }

    @Test("verify reports every difference, not only the first: each provisioning field, the region and the firmware, and the plan says the same")
    func verifyReportsEveryDifference() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 50_100_003)
        let firmware = try await FirmwareFixture(directory: bench.path + "/channel")
        let profile = try testProfile()
        let run = runner(bench, profile, firmware, mode: .verify, recorder: try TestLedger())
        let plan = try #require(run.plan([bench.device(0)], policy: PolicyDelegate(profile: profile, mode: .verify)).first)
        let report = try await run.run([bench.device(0)])
        let device = report.devices[0]
        #expect(device.outcome == .failed)
        let provision = try #require(device.step(.provision))
        #expect(provision.code == "fleet_verify_mismatch")
        // An out-of-the-box unit: serial not registered, antenna type, provisioning status differ.
        #expect(provision.arguments == ["sim:0", "provisioning", "serial_number", "not_registered", "registered", "antenna_type", "0", "2",
                                        "provisioning_status", "none", "complete", ""], "\(provision.arguments)")
        #expect(device.step(.region)?.code == "fleet_verify_mismatch")
        #expect(device.step(.firmware)?.code == "fleet_verify_mismatch")
        #expect(device.step(.region)?.arguments.dropFirst().first?.hasPrefix("region_") == true, "\(device.step(.region)?.arguments ?? [])")
        #expect(device.step(.firmware)?.arguments.dropFirst().first?.hasPrefix("firmware") == true, "\(device.step(.firmware)?.arguments ?? [])")
        for step in [FleetStep.provision, .region, .firmware] {
            #expect(plan.steps.first { $0.step == step }.map { $0.action == .fail && $0.code == "fleet_verify_mismatch" } == true, "\(step)")
        }
    }
}
