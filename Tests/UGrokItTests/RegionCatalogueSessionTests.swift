import Foundation
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokNet
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

@Suite("Regions from the signed catalogue")
struct RegionCatalogueSessionTests {
    /// A catalogue signed by one key, published under a `file://` root, with the trust to
    /// check it.
    struct Published {
        let root: String
        let trusted: TrustedKeys
        let catalogue: RegionCatalogue

        init(directory: String, serial: UInt32, version: UInt64 = 1) throws {
            let key = try Ed25519PrivateKey.generate()
            trusted = try TrustedKeys(keys: [.init(name: "fleet", publicKey: key.publicKey)], threshold: 1)
            // This unit's revision and serial: FCC and ETSI; everyone else of revision 3: all.
            catalogue = try RegionPublisher.catalogue(
                version: version, expires: Date().addingTimeInterval(30 * 86_400),
                eligibility: [RegionEligibility(hardwareRevisions: [3], serials: Cohort(serials: [serial]), regions: ["fcc", "etsi"])])
            root = directory + "/www"
            try RegionPublisher.publish(envelope: RegionPublisher.envelope(for: catalogue).signed(by: [key]).encoded(),
                                        root: root, trustedKeys: trusted)
        }
    }

    @Test("reloadRegions fetches and caches regions.json; getRegionNames lists what this unit may choose; setRegion refuses the rest")
    func catalogueDrivesTheChoices() async throws {
        let rig = try Rig()
        let info = try rig.session.connect()
        let published = try Published(directory: rig.bench.path, serial: info.serialNumber)
        let cache = try FirmwareCache(directory: rig.bench.path + "/cache", verifier: MetadataVerifier(trustedKeys: published.trusted))
        let channels = FirmwareChannels(cache: cache)
        let server = FirmwareServer(root: "file://" + published.root)
        #expect(try await channels.reloadRegions(from: server) == .updated(version: 1))
        #expect(FileManager.default.fileExists(atPath: rig.bench.path + "/cache/regions.json"))
        let catalogue = try channels.regionCatalogue()
        #expect(catalogue == published.catalogue)

        let choices = try channels.regionChoices(for: info)
        #expect(choices.names == ["FCC (US), IC (Canada)", "ETSI (EU)"] && choices.selected == nil)
        #expect(choices.entries.map(\.channelsKHz.count) == [50, 4])
        #expect(rig.session.regionNames(catalogue: catalogue).names == choices.names)

        let sent = rig.session.engine.statistics.messagesSent
        #expect(throws: ReaderError.regionNotApproved(port: "sim:0", region: "China")) {
            try rig.session.setRegion("china", catalogue: catalogue)
        }
        #expect(rig.session.engine.statistics.messagesSent == sent)
        let fresh = try rig.session.setRegion("etsi", catalogue: catalogue)
        #expect(fresh.region?.number == 2)
        #expect(rig.session.regionNames(catalogue: catalogue).selected == 1)
        // Another unit (another serial) gets none of the listed rules' regions.
        var other = info
        other.serialNumber &+= 1
        #expect(try channels.regionChoices(for: other).names.isEmpty)
    }

    @Test("firmware older than 1.5.0 answers 'firmware does not support set region' and keeps no region")
    func oldFirmware() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.grokker.handler.store.update { $0.firmwareVersion = FirmwareVersion(major: 1, minor: 4, build: 2) }
        #expect(try rig.session.identify().firmwareVersion == FirmwareVersion(major: 1, minor: 4, build: 2))
        #expect(throws: ReaderError.firmwareDoesNotSupportSetRegion(port: "sim:0", firmware: "1.4.2")) {
            try rig.session.setRegion("fcc")
        }
        #expect(rig.grokker.handler.store.state.region == nil)
    }
}
