import Foundation
import GrokFirmware
import GrokProtocol
import Testing
import UGrokIt

@testable import GrokFleet

/// One firmware choice: every case a unit and a target can make, decided once
/// (``FirmwareChoice``), and reached the same way by a provision, a rollout, a verification
/// run (through the fleet's step decision) and `firmware flash` (through the flash job).
@Suite("The firmware choice")
struct FirmwareChoiceTests {
    /// What the choice should answer, by kind (the listing's or image's version where one is sent).
    enum Expected: Sendable, CustomStringConvertible {
        case send(String, FirmwareCompatibility)
        case upToDate
        case runsTarget
        case downgradeRefused
        case notListed
        case incompatible(FirmwareCompatibility)

        var description: String {
            switch self {
            case .send(let version, let value): "send \(version) (\(value))"
            case .upToDate: "up to date"
            case .runsTarget: "runs the target"
            case .downgradeRefused: "downgrade refused"
            case .notListed: "not listed"
            case .incompatible(let value): "incompatible (\(value))"
            }
        }

        func matches(_ choice: FirmwareChoice) -> Bool {
            switch (self, choice) {
            case (.send(let version, let value), .send(let candidate, let judged)): "\(candidate.version)" == version && judged == value
            case (.upToDate, .upToDate), (.runsTarget, .runsTarget), (.downgradeRefused, .downgradeRefused), (.notListed, .notListed): true
            case (.incompatible(let value), .incompatible(_, let judged)): judged == value
            default: false
            }
        }
    }

    /// The target as asked for: a fleet policy's (latest, a version) or a command's (a name, a file).
    enum Target: Sendable, CustomStringConvertible {
        case latest, version(String), named(String), package(String, hardware: String)

        var description: String {
            switch self {
            case .latest: "latest"
            case .version(let v): "version \(v)"
            case .named(let n): "name \(n)"
            case .package(let v, let hardware): "package \(hardware) \(v)"
            }
        }

        var wanted: FirmwareWanted {
            switch self {
            case .latest: .latest
            case .version(let v): .version(FirmwareVersion(v)!)
            case .named(let n): .named(n)
            case .package(let v, let hardware): .package(FirmwareChoiceTests.image(v, hardware: hardware))
            }
        }

        /// The fleet's policy target, when a profile can say it.
        var policy: Profile.FirmwareTarget? {
            switch self {
            case .latest: .latest
            case .version(let v): .version(FirmwareVersion(v)!)
            case .named, .package: nil
            }
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var running = "1.7.0"
        var inLoader = false
        var revision: UInt8 = 3
        var hardware: HardwareType = .grokker1
        var serial: UInt32 = 1234
        var target: Target
        var allowDowngrade = false
        var allowSameVersion = false
        var expected: Expected

        var description: String { name }
    }

    static let cases: [Case] = [
        // The application runs: older, the same, newer than the channel's newest.
        Case(name: "older application, latest: the newest", target: .latest, expected: .send("1.8.0", .upgrade)),
        Case(name: "same application, latest: up to date", running: "1.8.0", target: .latest, expected: .upToDate),
        Case(name: "same application, latest, same allowed: sent again", running: "1.8.0", target: .latest, allowSameVersion: true,
             expected: .send("1.8.0", .sameVersion)),
        Case(name: "newer application, latest: up to date", running: "1.8.5", target: .latest, expected: .upToDate),
        Case(name: "newer application, latest, downgrade allowed: the newest listed", running: "1.8.5", target: .latest,
             allowDowngrade: true, expected: .send("1.8.0", .downgrade)),
        Case(name: "older application, a version: sent", target: .version("1.8.0"), expected: .send("1.8.0", .upgrade)),
        Case(name: "same application, a version: runs it", running: "1.8.0", target: .version("1.8.0"), expected: .runsTarget),
        Case(name: "same application, a version, same allowed: sent", running: "1.8.0", target: .version("1.8.0"),
             allowSameVersion: true, expected: .send("1.8.0", .sameVersion)),
        Case(name: "newer application, an older version: downgrade refused", running: "1.8.0", target: .version("1.7.0"),
             expected: .downgradeRefused),
        Case(name: "newer application, an older version, downgrade allowed: sent", running: "1.8.0", target: .version("1.7.0"),
             allowDowngrade: true, expected: .send("1.7.0", .downgrade)),
        Case(name: "a version not listed", target: .version("2.0.0"), expected: .notListed),
        Case(name: "a version not listed that the unit runs: runs it", running: "2.0.0", target: .version("2.0.0"), expected: .runsTarget),
        // In the loader: whatever fits the hardware repairs it (no downgrade, no same version).
        Case(name: "in the loader, latest: the newest", running: "1.1.0", inLoader: true, target: .latest, expected: .send("1.8.0", .upgrade)),
        Case(name: "in the loader reporting a version outside applies-to: still the newest", running: "3.0.0", inLoader: true,
             target: .latest, expected: .send("1.8.0", .upgrade)),
        Case(name: "in the loader, an older version: a repair, not a downgrade", running: "1.9.9", inLoader: true,
             target: .version("1.7.0"), expected: .send("1.7.0", .upgrade)),
        Case(name: "in the loader reporting the version asked for: a repair", running: "1.8.0", inLoader: true,
             target: .version("1.8.0"), expected: .send("1.8.0", .upgrade)),
        Case(name: "in the loader, another revision: incompatible", running: "1.1.0", inLoader: true, revision: 5,
             target: .version("1.8.0"), expected: .incompatible(.incompatible)),
        // Hardware, revision, applies-to, targeting.
        Case(name: "another revision, latest: up to date (nothing fits)", revision: 5, target: .latest, expected: .upToDate),
        Case(name: "another revision, a version: incompatible", revision: 5, target: .version("1.8.0"), expected: .incompatible(.incompatible)),
        Case(name: "unknown hardware, a version: invalid", hardware: .unknown, target: .version("1.8.0"), expected: .incompatible(.invalid)),
        Case(name: "a running version outside applies-to, a version: incompatible", running: "0.9.0", target: .version("1.8.0"),
             expected: .incompatible(.incompatible)),
        Case(name: "a serial the targeted release does not target: the release for everyone", serial: 99, target: .latest,
             expected: .send("1.8.0", .upgrade)),
        Case(name: "a targeted serial: the targeted release", serial: 5000, target: .latest, expected: .send("1.9.0", .upgrade)),
        Case(name: "a serial not targeted, the targeted version: incompatible", serial: 99, target: .version("1.9.0"),
             expected: .incompatible(.incompatible)),
        // A command's own targets: a name, a file.
        Case(name: "a name: sent", target: .named("GR-1_1-8-0_test.ugif"), expected: .send("1.8.0", .upgrade)),
        Case(name: "a name by path, older than running: downgrade refused", running: "1.8.0", target: .named("release/GR-1_1-7-0_test.ugif"),
             expected: .downgradeRefused),
        Case(name: "a name not listed", target: .named("GR-1_9-9-9_x.ugif"), expected: .notListed),
        Case(name: "a file: sent", target: .package("1.8.0", hardware: "GR-1"), expected: .send("1.8.0", .upgrade)),
        Case(name: "a file of the version running: runs it", running: "1.8.0", target: .package("1.8.0", hardware: "GR-1"),
             expected: .runsTarget),
        Case(name: "a file, older, downgrade allowed: sent", running: "1.8.0", target: .package("1.7.0", hardware: "GR-1"),
             allowDowngrade: true, expected: .send("1.7.0", .downgrade)),
        Case(name: "a file for the loader: a repair", running: "1.8.0", inLoader: true, target: .package("1.7.0", hardware: "GR-1"),
             expected: .send("1.7.0", .upgrade)),
        Case(name: "a file for other hardware: incompatible", target: .package("1.8.0", hardware: "ProtoMicro"),
             expected: .incompatible(.incompatible)),
    ]

    /// A `.ugif` of `version` for `hardware` (content does not matter to the choice).
    static func image(_ version: String, hardware: String) -> UgifImage {
        let v = FirmwareVersion(version)!
        return try! UgifImage(hardwareTypeName: hardware, version: UgifVersion(major: v.major, minor: v.minor, build: UInt8(v.build)),
                              date: "2026-11-01", loader: UgifSection(address: 0, bytes: [1, 2, 3, 4]),
                              reader: UgifSection(address: 0x1000, bytes: [5, 6, 7, 8]))
    }

    /// The channel, newest first: 1.9.0 for serials 5000-5999 only, 1.8.0 and 1.7.0 for
    /// everyone; revisions 3 and 6, applied over 1.0.0 to 1.9.0.
    static let listings: [FirmwareListing] = {
        func listing(_ version: String, serials: Cohort? = nil) -> FirmwareListing {
            let v = FirmwareVersion(version)!
            let metadata = FirmwareReleaseMetadata(
                version: v, hardwareType: .grokker1, hardwareRevisions: [3, 6],
                appliesTo: [try! VersionRange(min: FirmwareVersion("1.0.0")!, max: FirmwareVersion("1.9.0")!)],
                buildDate: Date(timeIntervalSince1970: 1_790_000_000), readerProtocol: 20, notes: ["en": version], serials: serials)
            return FirmwareListing(path: "release/GR-1_\(v.major)-\(v.minor)-\(v.build)_test.ugif", bytes: Array(version.utf8), metadata: metadata)
        }
        return [listing("1.9.0", serials: Cohort(ranges: [Cohort.SerialRange(from: 5000, through: 5999)])), listing("1.8.0"), listing("1.7.0")]
    }()

    static func info(_ testCase: Case) -> ReaderInfo {
        ReaderInfo(hardwareType: testCase.hardware, hardwareModel: "GR-1", hardwareRevision: testCase.revision,
                   firmwareVersion: FirmwareVersion(testCase.running)!, loaderVersion: FirmwareVersion("1.1.0")!,
                   serialNumber: testCase.serial, readerProtocolVersion: 20, region: nil, userMustSetRegion: false,
                   userCanSetRegion: true, provisioned: true, enforceRegion: false, maxPowerTenthsDBm: 300,
                   maxSensitivityTenthsDBm: -800, numVolumeLevels: 4, maxTonesInSound: 8, hasBattery: true, hasExternalPower: false,
                   batteryCapacityMinutes: 600, batteryCapacityMAh: 2000, deviceInitializedSuccessfully: true)
    }

    @Test("every case is decided once, and the flash job reaches the same decision", arguments: cases)
    func flashAgrees(_ testCase: Case) {
        let unit = FirmwareUnit(Self.info(testCase), inLoader: testCase.inLoader)
        let choice = FirmwareChoice.choose(testCase.target.wanted, listings: Self.listings, unit: unit,
                                           allowDowngrade: testCase.allowDowngrade, allowSameVersion: testCase.allowSameVersion)
        #expect(testCase.expected.matches(choice), "\(choice)")

        var options = FirmwareUpdateOptions()
        options.allowDowngrade = testCase.allowDowngrade
        options.allowSameVersion = testCase.allowSameVersion
        let source: FlashJob.Source = switch testCase.target {
        case .package(let version, let hardware): .package(name: "file.ugif", Self.image(version, hardware: hardware))
        default: .channel(FleetFirmware(channel: "release", listings: Self.listings) { _ in throw FixtureMissing() }, testCase.target.wanted)
        }
        #expect(FlashJob(source: source, options: options).choose(for: unit) == choice)
    }

    @Test("provision, rollout and verify reach the choice's decision through the fleet's step decision",
          arguments: cases.filter { $0.target.policy != nil })
    func fleetAgrees(_ testCase: Case) throws {
        let target = try #require(testCase.target.policy)
        var profile = try testProfile(target: target, allowDowngrade: testCase.allowDowngrade)
        profile.firmware?.allowSameVersion = testCase.allowSameVersion
        let policy = try #require(profile.firmware)
        let info = Self.info(testCase)
        // What the worker calls when it installs, and what the step decision calls.
        let resolution = FirmwareTargeting.resolve(policy, listings: Self.listings, info: info, inLoader: testCase.inLoader, device: "sim:0")
        switch (testCase.expected, resolution) {
        case (.send(let version, let value), .install(let listing, let judged)):
            #expect("\(listing.metadata.version)" == version && judged == value)
        case (.upToDate, .satisfied), (.runsTarget, .satisfied): break
        case (.downgradeRefused, .refused(let error)): #expect(error.code == "fleet_downgrade_not_allowed")
        case (.notListed, .refused(let error)), (.incompatible, .refused(let error)): #expect(error.code == "fleet_firmware_not_available")
        default: Issue.record("\(testCase.expected) resolved as \(resolution)")
        }

        for mode in FleetMode.allCases {
            let facts = StepFacts(mode: mode, device: "sim:0", info: info, inLoader: testCase.inLoader, provisioning: nil,
                                  batteryPercent: 100, listings: Self.listings)
            let decision = StepDecider(profile: profile).firmware(facts)
            let expected: PlannedStep.Action = switch (testCase.expected, mode) {
            case (.send, .verify), (.downgradeRefused, .verify), (.notListed, .verify), (.incompatible, .verify): .fail
            case (.upToDate, .verify), (.runsTarget, .verify): .run
            case (.send, _): .run
            case (.upToDate, _), (.runsTarget, _): .skip
            case (.downgradeRefused, _), (.notListed, _), (.incompatible, _): .refuse
            }
            #expect(decision.action == expected, "\(mode): \(decision.code)")
            if case .send(let version, _) = testCase.expected, mode != .verify { #expect(decision.target == version) }
        }
    }

    @Test("firmware check offers what flash and a fleet run (latest, no downgrade, not the same version) would send", arguments: cases)
    func checkAgrees(_ testCase: Case) throws {
        let unit = FirmwareUnit(Self.info(testCase), inLoader: testCase.inLoader)
        let check = FirmwareQuery.decide(unit, listings: Self.listings)
        if case .latest = testCase.target, !testCase.allowDowngrade, !testCase.allowSameVersion {
            #expect(testCase.expected.matches(check), "\(check)")
        }
        let firmware = FleetFirmware(channel: "release", listings: Self.listings) { _ in throw FixtureMissing() }
        #expect(FlashJob(source: .channel(firmware, .latest)).choose(for: unit) == check)
        let policy = try #require(try testProfile(target: .latest, allowDowngrade: false).firmware)
        switch (check, FirmwareTargeting.resolve(policy, listings: Self.listings, info: Self.info(testCase), inLoader: testCase.inLoader)) {
        case (.send(.listing(let offered), let value), .install(let listing, let judged)): #expect(offered == listing && value == judged)
        case (.upToDate, .satisfied): break
        case (let check, let resolution): Issue.record("check \(check), a fleet run \(resolution)")
        }
    }

    @Test("the vendor-shaped calls and the updater judge as the choice does: a unit in its loader takes any image for its hardware")
    func vendorCallsAgree() throws {
        var loader = VendorReaderVersion(protocolVersion: 20, hardwareType: 5, hardwareRevision: 3, firmwareMajor: 1, firmwareMinor: 9,
                                         firmwareBuild: 9, antennaType: 2, maxPowerByte: 0, minusMaxSensitivity: 80, volumeLevels: 4,
                                         deviceFlags: 0, softwareType: VendorSoftwareType.loader.rawValue, maxProgramBytes: 248,
                                         provisioningStatus: 0, internalId: 1, serialNumber: 1234, initStatus: 0, maxTones: 8,
                                         regionIndex: 0)
        let unit = FirmwareUnit(loader)
        #expect(unit.inLoader && unit.hardwareTypeName == "GR-1")
        #expect(FirmwareChoice.judge(.listing(Self.listings[2]), for: unit) == .upgrade)
        #expect(FirmwareChoice.judge(.package(Self.image("1.7.0", hardware: "GR-1")), for: unit) == .upgrade)
        #expect(FirmwareChoice.judge(.package(Self.image("1.7.0", hardware: "ProtoMicro")), for: unit) == .incompatible)
        var application = loader
        application.softwareType = VendorSoftwareType.application.rawValue
        application.firmwareMinor = 8
        application.firmwareBuild = 5
        #expect(FirmwareChoice.judge(.listing(Self.listings[2]), for: FirmwareUnit(application)) == .downgrade)
    }
}
