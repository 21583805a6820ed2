import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol
import GrokTestSupport
import GrokTUF
import Testing

/// The repository root (three levels above this file).

/// The committed demo image, `firmware/demo/GR-1_1-8-0_demo.ugif`.
func demoUgif() throws -> [UInt8] { try readFile(packageRoot + "/firmware/demo/GR-1_1-8-0_demo.ugif") }

/// The demo image's description (the same as scripts/make-demo-channel.sh writes).
func demoDescription(version: String = "1.8.0", revisions: [UInt8] = [3], serials: Cohort? = nil) -> FirmwareReleaseMetadata {
    FirmwareReleaseMetadata(version: v(version), hardwareType: .grokker1, hardwareRevisions: revisions,
                            appliesTo: [range("1.0.0", "1.7.65535")], buildDate: Date(timeIntervalSince1970: 1_793_534_400),
                            readerProtocol: 20, notes: ["en": "Demo release.", "de": "Demo-Version."], serials: serials)
}

func device(revision: UInt8 = 3, running: String = "1.7.0", serial: UInt32 = 1234, type: HardwareType = .grokker1) -> DeviceIdentity {
    DeviceIdentity(hardwareType: type, hardwareRevision: revision, firmwareVersion: v(running), readerProtocolVersion: 20,
                   serialNumber: serial)
}

extension FleetRepository {
    /// Lists `bytes` (a `.ugif`) as target `name` of `channel` with `description`, signed by the channel key.
    func add(ugif bytes: [UInt8], as name: String, description: FirmwareReleaseMetadata, channel: String = "release") throws {
        try repository.addTarget(channel: channel, name: name, bytes: bytes, custom: description.custom(), now: now)
        try repository.sign(role: channel, with: keys[channel]!)
    }

    /// A station that reads the served repository at `url` with the clock at `when`.
    func station(at when: GrokTUF.UTCTime, url: String? = nil, fetcher: any TUFFetching = LocalFileFetcher()) -> StationRepository {
        StationRepository(stateDirectory: state, trustedRootFile: rootFile, repositoryURL: url ?? "file://" + served,
                          fetcher: fetcher, clock: { when })
    }
}

func tufCode(_ body: () async throws -> Void) async -> String? {
    do { try await body(); return nil } catch let error as TUFError { return error.code } catch let error as FirmwareError {
        return error.code
    } catch { return "\(error)" }
}

@Suite("Firmware releases: .ugif images described by signed TUF targets")
struct FirmwareReleaseTests {
    @Test("a description survives the target's custom object, and a bad one is refused naming the field")
    func descriptionRoundTrip() throws {
        let description = demoDescription(serials: Cohort(serials: [7], ranges: [Cohort.SerialRange(from: 100, through: 200)]))
        let bytes = try demoUgif()
        func target(_ custom: JSON) throws -> TargetInfo {
            let json = obj(("length", .integer(Int64(bytes.count))), ("hashes", obj(("sha256", .string(SHA256.hash(bytes).hex)))),
                           ("custom", custom))
            return try TargetInfo(path: "release/GR-1_1-8-0_demo.ugif", json: json.object!, role: "release")
        }
        let listing = try #require(try FirmwareListing(try target(description.custom())))
        #expect(listing.metadata == description)
        #expect(listing.name == "GR-1_1-8-0_demo.ugif" && listing.length == bytes.count)
        // Not firmware: no listing.
        #expect(try FirmwareListing(try target(obj(("kind", .string("region-catalogue"))))) == nil)
        // No English notes; revisions out of order; an unknown hardware type.
        for (field, value) in [("notes", obj(("de", .string("x")))), ("hardware_revisions", .array([.integer(3), .integer(2)])),
                               ("hardware_type", .integer(9))] {
            var custom = description.custom().object!
            custom[field] = value
            #expect(throws: FirmwareError.self) { _ = try FirmwareListing(try target(.object(custom))) }
            do { _ = try FirmwareListing(try target(.object(custom))) } catch let error as FirmwareError {
                #expect(error.code == "firmware_metadata_malformed" && error.arguments.contains(field), "\(field): \(error)")
            }
        }
    }

    @Test("the demo .ugif published in a channel is listed, downloaded, verified and judged against readers")
    func channelGivesAVerifiedRelease() async throws {
        let fleet = try FleetRepository()
        try fleet.add(ugif: try demoUgif(), as: "GR-1_1-8-0_demo.ugif", description: demoDescription(serials: Cohort(ranges: [.init(from: 1, through: 9999)])))
        try fleet.publish()
        let channel = FirmwareChannel(repository: fleet.station(), name: "release")
        let listings = try await channel.listings()
        #expect(listings.map(\.path) == ["release/GR-1_1-8-0_demo.ugif"])
        let release = try await channel.target(named: "GR-1_1-8-0_demo.ugif")
        let demo = try demoUgif()
        #expect(release.version == v("1.8.0") && release.bytes == demo)
        #expect(release.sha256 == SHA256.hash(demo) && release.length == 127_286)
        #expect(release.ugif.loader?.bytes.count == 1024 && release.ugif.reader.bytes.count == 61_440)
        #expect(release.notes(in: "de") == "Demo-Version." && release.notes(in: "fr") == "Demo release.")
        #expect(release.compatibility(with: device()) == .upgrade)
        #expect(release.compatibility(with: device(revision: 2)) == .incompatible)
        #expect(release.compatibility(with: device(running: "1.8.0")) == .incompatible)  // outside applies-to
        #expect(release.compatibility(with: device(serial: 10_000)) == .incompatible)  // not a targeted serial
        #expect(release.compatibility(with: device(type: .unknown)) == .invalid)
        func latest(_ identity: DeviceIdentity) -> FirmwareChoice {
            FirmwareChoice.choose(.latest, listings: listings, unit: FirmwareUnit(identity: identity, inLoader: false, hardwareTypeName: "GR-1"),
                                  allowDowngrade: false, allowSameVersion: false)
        }
        #expect(latest(device()) == .send(.listing(listings[0]), .upgrade))
        #expect(latest(device(revision: 1)) == .upToDate)
        // A second call uses the verified image in the state directory.
        #expect(try await channel.target(named: "release/GR-1_1-8-0_demo.ugif") == release)
        await #expect(throws: FirmwareError.updateNotListed(channel: "release", name: "GR-1_9-9-9_x.ugif")) {
            _ = try await channel.target(named: "GR-1_9-9-9_x.ugif")
        }
    }

    @Test("a reader's GetVersion answer gives the identity compatibility is judged on")
    func identityFromGetVersion() {
        let reader = VendorReaderVersion(protocolVersion: 20, hardwareType: 5, hardwareRevision: 3, firmwareMajor: 1, firmwareMinor: 7,
                                         firmwareBuild: 4, antennaType: 0, maxPowerByte: 0, minusMaxSensitivity: 0, volumeLevels: 0,
                                         deviceFlags: 0, softwareType: 0, maxProgramBytes: 0, provisioningStatus: 0, internalId: 0,
                                         serialNumber: 4242, initStatus: 0, maxTones: 0, regionIndex: 0)
        #expect(DeviceIdentity(reader) == device(running: "1.7.4", serial: 4242))
        var other = reader
        other.hardwareType = 3  // ProtoMicro: unknown to the firmware descriptions
        #expect(DeviceIdentity(other).hardwareType == .unknown)
    }

    @Test("a .ugif whose header disagrees with its signed description is refused")
    func headerMustMatchDescription() async throws {
        let fleet = try FleetRepository()
        try fleet.add(ugif: try demoUgif(), as: "GR-1_1-8-0_demo.ugif", description: demoDescription(version: "1.8.1"))
        try fleet.publish()
        let channel = FirmwareChannel(repository: fleet.station(), name: "release")
        await #expect(throws: FirmwareError.imageHeaderMismatch(file: "release/GR-1_1-8-0_demo.ugif", field: "version",
                                                                 expected: "1.8.1", found: "1.8.0")) {
            _ = try await channel.target(named: "GR-1_1-8-0_demo.ugif")
        }
    }

    @Test("a tampered .ugif on the server is refused by its signed hash and nothing is committed")
    func tamperedImageRefused() async throws {
        let fleet = try FleetRepository()
        let bytes = try demoUgif()
        try fleet.add(ugif: bytes, as: "GR-1_1-8-0_demo.ugif", description: demoDescription())
        try fleet.publish()
        let served = fleet.served + "/targets/release/" + SHA256.hash(bytes).hex + ".GR-1_1-8-0_demo.ugif"
        var tampered = try readFile(served)
        // One hex digit of the application changed: still a valid .ugif, a different one.
        let at = tampered.count - 10
        tampered[at] = tampered[at] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        try writeFile(served, tampered)
        let channel = FirmwareChannel(repository: fleet.station(), name: "release")
        #expect(await tufCode { _ = try await channel.target(named: "GR-1_1-8-0_demo.ugif") } == "tuf_length_or_hash")
        #expect(listing(fleet.state + "/images").isEmpty)
    }

    @Test("an expired channel is refused with tuf_expired, a rolled-back one with tuf_rollback")
    func expiredAndRolledBack() async throws {
        let fleet = try FleetRepository()
        try fleet.add(ugif: try demoUgif(), as: "GR-1_1-8-0_demo.ugif", description: demoDescription())
        try fleet.publish()
        // The timestamp lasts a day by default: two days later the channel is stale.
        let later = fleet.now.adding(2 * 86_400)
        #expect(await tufCode { _ = try await FirmwareChannel(repository: fleet.station(at: later), name: "release").listings() }
            == "tuf_expired")
        // Rollback: the station trusts timestamp 3, a mirror serves the validly signed 2.
        _ = try await FirmwareChannel(repository: fleet.station(), name: "release").listings()
        let stale = fleet.scratch.directory("stale")
        try FileManager.default.removeItem(atPath: stale)
        try FileManager.default.copyItem(atPath: fleet.served, toPath: stale)
        try fleet.publish()
        _ = try await FirmwareChannel(repository: fleet.station(), name: "release").listings()
        #expect(fleet.trustedVersion("timestamp") == 3)
        #expect(await tufCode {
            _ = try await FirmwareChannel(repository: fleet.station(at: fleet.now, url: "file://" + stale), name: "release").listings()
        } == "tuf_rollback")
        #expect(fleet.trustedVersion("timestamp") == 3)
    }

    @Test("plain http is refused unless asked for, naming the URL")
    func httpRefused() async throws {
        let fleet = try FleetRepository()
        let station = fleet.station(at: fleet.now, url: "http://127.0.0.1:9/repo", fetcher: CurlTUFFetcher())
        do {
            _ = try await FirmwareChannel(repository: station, name: "release").listings()
            Issue.record("http was fetched")
        } catch let error as TUFError {
            #expect(error.code == "tuf_insecure_transport")
            #expect(error.arguments.contains { $0.hasPrefix("http://127.0.0.1:9/repo/metadata/") })
        }
    }

    @Test("a channel's region catalogue target is verified by TUF and by the catalogue rules")
    func regionCatalogueTarget() async throws {
        let fleet = try FleetRepository()
        let catalogue = try RegionPublisher.catalogue(version: 4, expires: january2026, eligibility: RegionPublisher.everywhere(hardwareRevisions: [3]))
        try fleet.repository.addTarget(channel: "release", name: "regions.json", bytes: catalogue.payload(),
                                       custom: FirmwareTarget.custom(for: catalogue), now: fleet.now)
        try fleet.repository.sign(role: "release", with: fleet.keys["release"]!)
        try fleet.publish()
        let channel = FirmwareChannel(repository: fleet.station(), name: "release")
        #expect(try await channel.regionCatalogue() == catalogue)
        #expect(try await channel.listings().isEmpty)  // a catalogue is not firmware
        await #expect(throws: FirmwareError.updateNotListed(channel: "development", name: "region catalogue")) {
            _ = try await FirmwareChannel(repository: fleet.station(), name: "development").regionCatalogue()
        }
    }
}
