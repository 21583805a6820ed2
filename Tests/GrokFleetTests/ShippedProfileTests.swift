import Foundation
import GrokProtocol
import GrokTestSupport
import Testing

@testable import GrokFleet

/// The shipped profiles on the README's bench (README, "Fleet"): the EU rollout takes EU
/// units, and says which region it refuses on the US bench's.
@Suite("The shipped profiles")
struct ShippedProfileTests {
    static func info(region: String?) -> ReaderInfo {
        ReaderInfo(hardwareType: .grokker1, hardwareModel: "GR-1", hardwareRevision: 3, firmwareVersion: FirmwareVersion("1.7.3")!,
                   loaderVersion: FirmwareVersion("1.0.0")!, serialNumber: 48_700_893, readerProtocolVersion: 20,
                   region: region.flatMap { RegionCatalog.find($0)?.setting }, userMustSetRegion: false, userCanSetRegion: true,
                   provisioned: true, enforceRegion: false, maxPowerTenthsDBm: 300, maxSensitivityTenthsDBm: -800,
                   numVolumeLevels: 4, maxTonesInSound: 8, hasBattery: true, hasExternalPower: false,
                   batteryCapacityMinutes: 600, batteryCapacityMAh: 2000, deviceInitializedSuccessfully: true)
    }

    @Test("rollout-eu-night: an EU unit's region is satisfied; a US unit is refused naming its region; a unit without one, for having none")
    func rolloutRegion() throws {
        let profile = try Profile.load(path: packageRoot + "/profiles/rollout-eu-night.json")
        let decider = StepDecider(profile: profile)
        func decision(_ region: String?) -> StepDecision {
            decider.region(StepFacts(mode: .rollout, device: "sim:4", info: Self.info(region: region), inLoader: false,
                                     provisioning: nil, batteryPercent: 100, listings: []))
        }
        #expect(decision("etsi").action == .skip)
        let us = decision("fcc")
        let fcc = try #require(RegionCatalog.find("fcc")?.name)
        #expect(us.action == .refuse && us.error?.code == "fleet_region_not_allowed", "\(us)")
        #expect(us.error?.arguments.dropFirst().first == fcc, "\(String(describing: us.error))")
        #expect(decision(nil).error == .regionNotChosen(device: "sim:4"))
    }

    @Test("bench-us with no repository named anywhere: refused before any unit, naming the profile and its channel")
    func noRepository() async throws {
        let directory = TemporaryDirectory()
        let profile = packageRoot + "/profiles/bench-us.json"
        let session = try FleetSession(FleetSession.Configuration(
            mode: .provision, profileFile: profile, devices: [.emulated(index: 0)],
            ports: DevicePortContext(bench: Bench(directory: directory.path + "/bench"), lockDirectory: directory.path + "/locks"),
            defaultLedger: directory.path + "/l.sqlite", spoolDirectory: directory.path + "/spool", lockDirectory: directory.path + "/locks",
            reportsDirectory: directory.path + "/reports", dryRun: true))
        await #expect(throws: FleetError.noRepository(profile: profile, channel: "release")) { _ = try await session.prepare() }
        // Nothing was made on the bench.
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/bench"))
    }
}
