import Foundation
import GrokBasics
import GrokCrypto
import GrokFirmware
import GrokProtocol
import GrokTestSupport
import GrokTUF
import NetTestSupport
import Testing
import UGrokIt

@testable import GrokFleet

/// The shipped demo channel (scripts/make-demo-channel.sh), its trust root and its image.
private let demoChannel = repositoryRoot + "/firmware/demo-channel"
private let demoImage = repositoryRoot + "/firmware/demo/GR-1_1-8-0_demo.ugif"

/// A station of its own (state directory, no trust root installed anywhere) on the demo
/// channel or a copy of it.
private func station(_ directory: TemporaryDirectory, channel: String = demoChannel, trustedRoot: String? = demoChannel + "/root.json",
                     url: String? = nil) throws -> FirmwareChannel {
    try FirmwareChannelLocation(repositoryURL: url ?? "file://" + channel, channel: "release", trustedRootFile: trustedRoot,
                                stateDirectory: directory.path + "/state")
        .open(environment: ["HOME": directory.path, "XDG_CONFIG_HOME": directory.path + "/config"])
}

/// The code a thrown error carries.
private func code(of body: () async throws -> Void) async -> String? {
    do { try await body(); return nil } catch { return (error as? any CodedError)?.code ?? "\(error)" }
}

@Suite("A station's firmware channel: list, check, download and verify through TUF")
struct FirmwareQueryTests {
    @Test("the shipped demo channel verifies: list and download through TUF give the committed demo image, and the cache says so")
    func demoChannelVerifies() async throws {
        let directory = TemporaryDirectory("firmware-query")
        let query = FirmwareQuery(channel: try station(directory))
        let list = try await query.list()
        #expect(list.rows.map(\.listing.name) == ["GR-1_1-8-0_demo.ugif"])
        #expect(list.rows.first?.listing.metadata.version == FirmwareVersion("1.8.0") && list.rows.first?.cache == .absent)
        #expect(list.timestampVersion > 0 && list.devices.isEmpty && list.failures.isEmpty)
        let wanted = try await query.listings(named: nil)
        #expect(wanted.count == 1)
        let done = try await query.download(try #require(wanted.first))
        let committed = try Data(contentsOf: URL(fileURLWithPath: demoImage))
        #expect(done.sha256 == SHA256.hash([UInt8](committed)).hex && !done.alreadyCached && done.version == FirmwareVersion("1.8.0"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: done.path)) == committed)
        #expect(try await query.list().rows.first?.cache == .held)
        #expect(try await query.download(try #require(wanted.first)).alreadyCached)
        await #expect(throws: FirmwareError.updateNotListed(channel: "release", name: "GR-1_9-9-9_x.ugif")) {
            _ = try await query.listings(named: "GR-1_9-9-9_x.ugif")
        }
    }

    @Test("a corrupt cached image is corrupt, not held; downloading fetches it again")
    func corruptImageIsCorrupt() async throws {
        let directory = TemporaryDirectory("firmware-query")
        let query = FirmwareQuery(channel: try station(directory))
        let listing = try #require(try await query.listings(named: nil).first)
        let done = try await query.download(listing)
        var bytes = try #require(FileManager.default.contents(atPath: done.path))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: done.path))
        #expect(query.cacheState(listing) == .corrupt)
        #expect(try await query.list().rows.first?.cache == .corrupt)
        #expect(try await !query.download(listing).alreadyCached)
        #expect(query.cacheState(listing) == .held)
    }

    @Test("check and list judge an emulated Grokker (revision 3, 1.7.3) against the demo channel: UPGRADE")
    func checkAgainstDemoChannel() async throws {
        let directory = TemporaryDirectory("firmware-query")
        let bench = FleetBench()
        let query = FirmwareQuery(channel: try station(directory))
        let checks = try await query.check([bench.device(0)])
        let unit = try #require(try checks.first?.result.get())
        #expect(checks.first?.device == "sim:0" && unit.running == FirmwareVersion("1.7.3"))
        #expect(unit.serial.count == 8)
        let update = try #require(unit.update)
        #expect(update.name == "GR-1_1-8-0_demo.ugif" && update.compatibility == .upgrade && !update.cached)
        let list = try await query.list([bench.device(0)])
        #expect(list.devices == ["sim:0"] && list.rows.first?.compatibility == [.upgrade])
    }

    @Test("a device that cannot be opened is a per-device failure of check and list, not an error of the query")
    func unreachableDevice() async throws {
        let directory = TemporaryDirectory("firmware-query")
        let query = FirmwareQuery(channel: try station(directory))
        struct Unplugged: Error {}
        let gone = FleetDevice(name: "alsa:gone") { throw Unplugged() }
        let checks = try await query.check([gone])
        #expect(checks.count == 1 && (try? checks[0].result.get()) == nil)
        let list = try await query.list([gone])
        #expect(list.devices.isEmpty && list.failures.map(\.device) == ["alsa:gone"] && list.rows.first?.compatibility == [])
    }

    @Test("a tampered image in a copy of the demo channel is refused by its signed hash")
    func tamperedImageRefused() async throws {
        let directory = TemporaryDirectory("firmware-query")
        try FileManager.default.copyItem(atPath: demoChannel, toPath: directory.path + "/channel")
        let targets = directory.path + "/channel/targets/release"
        let image = try #require(try FileManager.default.contentsOfDirectory(atPath: targets).first { $0.hasSuffix(".ugif") })
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: targets + "/" + image)))
        bytes[bytes.count - 3] = bytes[bytes.count - 3] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        try Data(bytes).write(to: URL(fileURLWithPath: targets + "/" + image))
        let query = FirmwareQuery(channel: try station(directory, channel: directory.path + "/channel",
                                                       trustedRoot: directory.path + "/channel/root.json"))
        let listing = try #require(try await query.listings(named: nil).first)
        #expect(await code { _ = try await query.download(listing) } == "tuf_length_or_hash")
    }

    @Test("a channel that closes without answering is tried once with --network-retries 0 and twice with 1, then named in the error")
    func networkRetriesAreTheStationsChoice() async throws {
        let directory = TemporaryDirectory("firmware-query")
        for retries in [0, 1] {
            let silent = try ScriptedUpstream { _, _ in }  // closes every connection without a byte
            defer { silent.stop() }
            let location = FirmwareChannelLocation(
                repositoryURL: "http://127.0.0.1:\(silent.port)/fleet", channel: "release", trustedRootFile: demoChannel + "/root.json",
                stateDirectory: directory.path + "/state-\(retries)", allowInsecureHTTP: true, networkRetries: retries)
            let query = FirmwareQuery(channel: try location.open())
            let failure = await code { _ = try await query.listings(named: nil) }
            #expect(failure == "tuf_fetch", "\(failure ?? "no error")")
            #expect(silent.requests.count == retries + 1, "\(retries) retries: \(silent.requests.map(\.path))")
        }
    }

    @Test("plain http is refused unless allowed, naming the URL; no trust root installed is refused naming where it was looked for")
    func openingRefusals() throws {
        let directory = TemporaryDirectory("firmware-query")
        let url = "http://127.0.0.1:9/fleet"
        #expect(throws: TUFError.insecureTransport(url: url)) { _ = try station(directory, url: url) }
        var location = FirmwareChannelLocation(repositoryURL: url, channel: "release", trustedRootFile: demoChannel + "/root.json",
                                               stateDirectory: directory.path + "/state", allowInsecureHTTP: true)
        #expect(try location.open().repository.metadataURL.hasPrefix(url))
        guard !FileManager.default.fileExists(atPath: "/etc/grokctl/root.json") else { return }
        location.trustedRootFile = nil
        do {
            _ = try location.open(environment: ["HOME": directory.path, "XDG_CONFIG_HOME": directory.path + "/config"])
            Issue.record("opened without a trust root")
        } catch let error as FirmwareError {
            #expect(error.code == "firmware_no_trust_root")
            #expect(error.description.contains(directory.path + "/config/grokctl/root.json") && error.description.contains("--trusted-root"))
        }
    }

    @Test("verify: a local image's facts; with the channel, listed as the demo target; a changed digit is damaged under the target's name, unlisted without a name, refused when bound by name; a cut file does not parse")
    func verifyAndTampering() async throws {
        let directory = TemporaryDirectory("firmware-query")
        let committed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: demoImage)))
        let name = "GR-1_1-8-0_demo.ugif"
        let local = try await FirmwareVerification.verify(committed, file: demoImage, shownAs: demoImage, fileName: name)
        #expect(local.facts.sha256 == SHA256.hash(committed).hex && local.facts.version == "1.8.0" && local.facts.hardwareName == "GR-1")
        #expect(local.facts.sections.map(\.kind) == ["loader", "reader"] && local.listedAs == nil && local.channel == nil)

        let channel = try station(directory)
        let listed = try await FirmwareVerification.verify(committed, file: demoImage, shownAs: demoImage, fileName: name, channel: channel)
        #expect(listed.listedAs == name && listed.channel == "release" && listed.revisions == [3] && listed.targetsVersion != nil)
        let byName = try await FirmwareVerification.verify(named: name, in: channel)
        #expect(byName.listedAs == name && byName.facts.sha256 == local.facts.sha256)
        #expect(byName.facts.file == channel.repository.stateDirectory + "/images/" + local.facts.sha256)

        // A .ugif carries no checksum of its own (the host computes the CRCs it sends), so a
        // changed data digit still parses: only the channel's signed hash catches it.
        var lines = String(decoding: committed, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let index = try #require(lines.indices.last { lines[$0].count > 40 && lines[$0].allSatisfy(\.isHexDigit) })
        var line = Array(lines[index])
        line[10] = line[10] == "0" ? "1" : "0"
        lines[index] = String(line)
        let changed = Array(lines.joined(separator: "\n").utf8)
        // Under the listed image's name it is a damaged copy; without a name (standard input)
        // the channel does not list it, and nothing says it is intact.
        let damaged = await code { _ = try await FirmwareVerification.verify(changed, file: "changed", shownAs: "changed", fileName: name, channel: channel) }
        #expect(damaged == "firmware_image_hash_mismatch", "\(damaged ?? "no error")")
        let unlisted = try await FirmwareVerification.verify(changed, file: "-", shownAs: "standard input", fileName: nil, channel: channel)
        #expect(unlisted.listedAs == nil && unlisted.channel == "release" && unlisted.integrity == .unlisted)
        let bound = await code { _ = try await FirmwareVerification.verify(changed, file: "c", shownAs: "c", fileName: name, channel: channel, name: name) }
        #expect(bound?.hasPrefix("firmware_") == true, "\(bound ?? "no error")")
        await #expect(throws: FirmwareError.updateNotListed(channel: "release", name: "GR-1_9-9-9_x.ugif")) {
            _ = try await FirmwareVerification.verify(committed, file: "f", shownAs: "f", fileName: name, channel: channel, name: "GR-1_9-9-9_x.ugif")
        }

        let cut = Array(lines.prefix(lines.count / 2).joined(separator: "\n").utf8)
        #expect(await code { _ = try await FirmwareVerification.verify(cut, file: "cut", shownAs: "cut", fileName: name) } == "firmware_invalid_input")
        #expect(throws: FirmwareError.self) { _ = try UgifImage.read(cut, fileName: nil, shownAs: "standard input") }
    }
}
