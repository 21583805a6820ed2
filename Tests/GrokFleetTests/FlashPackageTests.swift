import Foundation
import GrokBasics
import GrokFirmware
import GrokFleet
import GrokTestSupport
import GrokTUF
import Testing
import UGrokIt

/// `firmware flash --package` and `firmware verify` on a local image: "intact" only for what a
/// trusted listing's SHA-256 says; an image nobody vouches for only on the technician's word
/// (`--allow-unlisted`), and never one that fails a check the format allows (issue 23, item 3).
@Suite("A local image: what is known of its integrity")
struct FlashPackageTests {
    /// The fixture's `.ugif` of `version` with one hex digit of the READER's data changed (past
    /// its version marker): it still parses, and nothing in the file shows the change.
    static func damaged(_ version: FirmwareVersion) throws -> (name: String, bytes: [UInt8]) {
        let (name, bytes) = try FirmwareFixture.ugif(version)
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        let row = try #require(lines.indices.last { lines[$0].count == 64 })
        var digits = Array(lines[row])
        digits[20] = digits[20] == "0" ? "1" : "0"
        lines[row] = String(digits)
        return (name, Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    static func channel(_ fixture: FirmwareFixture, directory: String) -> FirmwareChannel {
        let station = StationRepository(stateDirectory: directory + "/package-state", trustedRootFile: fixture.rootFile,
                                        repositoryURL: "file://" + fixture.served, fetcher: LocalFileFetcher())
        return FirmwareChannel(repository: station, name: "release")
    }

    @Test("a copy of a listed image with one changed digit: damaged against the channel, unvouched without one, taken only with allowUnlisted")
    func damagedCopy() async throws {
        let directory = TemporaryDirectory("flash-package")
        let fixture = try await FirmwareFixture(directory: directory.path + "/firmware")
        let (name, bytes) = try Self.damaged(FirmwareFixture.v180)
        let channel = Self.channel(fixture, directory: directory.path)
        await #expect(throws: FirmwareError.self) {
            _ = try await FlashJob.preparePackage(bytes, file: name, shownAs: name, fileName: name, channel: channel, allowUnlisted: true)
        }
        do {
            _ = try await FlashJob.preparePackage(bytes, file: name, shownAs: name, fileName: name, channel: channel, allowUnlisted: true)
        } catch let error as FirmwareError {
            guard case .imageHashMismatch(let file, _, _) = error else { Issue.record("\(error)"); return }
            #expect(file == name)
        }
        do {
            _ = try await FlashJob.preparePackage(bytes, file: name, shownAs: name, fileName: name, channel: nil, allowUnlisted: false)
            Issue.record("an image nobody vouches for was taken")
        } catch let error as FlashPackageUnlisted {
            #expect(error.code == "flash_package_not_vouched" && error.arguments == [name])
        }
        let taken = try await FlashJob.preparePackage(bytes, file: name, shownAs: name, fileName: name, channel: nil, allowUnlisted: true)
        guard case .package(_, _, let listedAs) = taken else { Issue.record("not a package"); return }
        #expect(listedAs == nil)

        // Without a channel, verify calls it well-formed and nothing more.
        let verified = try await FirmwareVerification.verify(bytes, file: name, shownAs: name, fileName: name)
        #expect(verified.integrity == .notChecked)
    }

    @Test("the listed image itself is vouched for by the channel (intact), also under another file name; one the channel does not list is refused without allowUnlisted")
    func listedImage() async throws {
        let directory = TemporaryDirectory("flash-package")
        let fixture = try await FirmwareFixture(directory: directory.path + "/firmware")
        let (name, bytes) = try FirmwareFixture.ugif(FirmwareFixture.v180)
        let channel = Self.channel(fixture, directory: directory.path)
        let source = try await FlashJob.preparePackage(bytes, file: name, shownAs: name, fileName: name, channel: channel, allowUnlisted: false)
        guard case .package(let shown, let image, let listedAs) = source else { Issue.record("not a package"); return }
        #expect(shown == name && image.version.description == "1.8.0" && listedAs == name)
        let verified = try await FirmwareVerification.verify(bytes, file: "-", shownAs: "standard input", fileName: nil, channel: channel)
        #expect(verified.integrity == .listed)

        let (other, otherBytes) = try FirmwareFixture.ugif(FirmwareVersion(major: 1, minor: 9, build: 0))
        do {
            _ = try await FlashJob.preparePackage(otherBytes, file: other, shownAs: other, fileName: other, channel: channel,
                                                  allowUnlisted: false)
            Issue.record("an unlisted image was taken")
        } catch let error as FlashPackageUnlisted {
            #expect(error.code == "flash_package_not_listed" && error.arguments == [other, "release"])
        }
        let unlisted = try await FirmwareVerification.verify(otherBytes, file: other, shownAs: other, fileName: other, channel: channel)
        #expect(unlisted.integrity == .unlisted)
    }

    @Test("a READER that carries another version inside than its header is refused, even with allowUnlisted")
    func versionInside() async throws {
        let (_, bytes) = try FirmwareFixture.ugif(FirmwareFixture.v180)
        let image = try UgifImage.parse(String(decoding: bytes, as: UTF8.self), fileName: "GR-1_1-8-0_test.ugif")
        let relabelled = try UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: 1, minor: 9, build: 0), date: image.date,
                                       loader: image.loader, reader: image.reader)
        let name = relabelled.fileName(name: "test")
        #expect(throws: UgifError.innerVersionMismatch(section: "READER", inImage: "1.8.0", inHeader: "1.9.0")) {
            try relabelled.checkContents()
        }
        do {
            _ = try await FlashJob.preparePackage(Array(relabelled.encoded().utf8), file: name, shownAs: name, fileName: name, channel: nil,
                                                  allowUnlisted: true)
            Issue.record("a relabelled image was taken")
        } catch let error as FirmwareError {
            guard case .invalidInput(let file, let detail) = error else { Issue.record("\(error)"); return }
            #expect(file == name && detail.flattened.contains("ugif_inner_version_mismatch"))
        }
    }

    @Test("an image the unit comes back from on another version than its header (no version inside to check): failed with advice that does not say run again")
    func wrongVersionAfterUpdate() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 1001)
        let (_, bytes) = try FirmwareFixture.ugif(FirmwareFixture.v180)
        let image = try UgifImage.parse(String(decoding: bytes, as: UTF8.self), fileName: "GR-1_1-8-0_test.ugif")
        // The READER without its marker: the emulated unit knows no version for it and reports 0.0.0.
        var reader = image.reader
        reader.bytes.replaceSubrange(0..<8, with: Array("NOTAVER:".utf8))
        let unmarked = try UgifImage(hardwareTypeName: "GR-1", version: image.version, date: image.date, loader: image.loader, reader: reader)
        try unmarked.checkContents()
        let report = await FlashJob(source: .package(name: "GR-1_1-8-0_test.ugif", unmarked)).run([bench.device(0)])
        guard case .failed(let error) = report.outcomes[0] else { Issue.record("\(report.outcomes)"); return }
        let wrong = try #require(error as? FlashWrongVersion, "\(error)")
        #expect(wrong.code == "flash_unit_runs_other_version" && wrong.arguments == ["sim:0", "0.0.0", "1.8.0"])
        #expect(!wrong.description.contains("re-run") && !wrong.description.lowercased().contains("run it again"))
        #expect(report.failed == 1)
    }
}
