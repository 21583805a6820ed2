import Foundation
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokkerEmulator
import GrokNet
import GrokProtocol
import NetTestSupport
import Testing
import UGrokIt

/// The 16 KiB application image the channel tests publish.
enum TestFirmware {
    static let code: [UInt8] = {
        let url = Bundle.module.url(forResource: "Fixtures/code-16k", withExtension: "bin")!
        return [UInt8](try! Data(contentsOf: url))
    }()
}

/// A signed channel listing one package of the 16 KiB code fixture, served by a scripted
/// upstream behind a real nginx over HTTPS (a test CA made by openssl).
struct ChannelFixture {
    let key: Ed25519PrivateKey
    let trusted: TrustedKeys
    let package: FirmwarePackage
    let envelope: [UInt8]
    let name = "grokker-1.8.0"

    init() throws {
        key = try Ed25519PrivateKey.generate()
        trusted = try TrustedKeys(keys: [.init(name: "fleet", publicKey: key.publicKey)], threshold: 1)
        let descriptor = FirmwareDescriptor(
            hardwareType: .grokker1, hardwareRevisions: [3], version: FirmwareVersion("1.8.0")!,
            buildDate: Date(timeIntervalSince1970: 1_790_000_000), readerProtocolVersion: 20,
            appliesTo: [try VersionRange(min: FirmwareVersion("1.0.0")!, max: FirmwareVersion("1.8.0")!)])
        package = try FirmwarePackage(descriptor: descriptor, loader: nil,
                                      application: FirmwareSegment(kind: .application, address: 0x0800_8000, bytes: TestFirmware.code))
        let entry = FirmwarePublisher.entry(for: package, name: name, file: "grokker-1.8.0.grokfw",
                                            notes: ["en": "Demo", "es": "Demo", "fr": "Démo", "de": "Demo"])
        let metadata = ChannelMetadata(channel: "release", version: 1, expires: Date().addingTimeInterval(365 * 86_400), updates: [entry])
        envelope = try FirmwarePublisher.envelope(for: metadata).signed(by: [key]).encoded()
    }

    func cache(in directory: String) throws -> FirmwareCache {
        try FirmwareCache(directory: directory, verifier: MetadataVerifier(trustedKeys: trusted))
    }

    /// What the cache holds that counts: metadata, images and state, byte for byte.
    static func snapshot(_ directory: String) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for sub in ["metadata", "images"] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + sub)) ?? [] {
                files[sub + "/" + name] = FileManager.default.contents(atPath: directory + "/" + sub + "/" + name).map { [UInt8]($0) }
            }
        }
        files["state.json"] = FileManager.default.contents(atPath: directory + "/state.json").map { [UInt8]($0) }
        return files
    }
}

func channelOptions(_ server: NginxServer) -> TransferOptions {
    TransferOptions(trust: .pinned(caBundle: server.pki.caCertificate), connectTimeout: .seconds(2), lowSpeedLimit: 1024,
                    stallTime: .seconds(2), maxRetries: 2, backoff: Backoff(initial: .milliseconds(10), multiplier: 2, maximum: .milliseconds(40)),
                    maxRedirects: 3, proxy: .direct)
}

@Suite("Firmware channels over HTTPS")
struct FirmwareChannelTests {
    @Test("metadata and image come through nginx over HTTPS; a dropped image download resumes; the image then flashes")
    func downloadResumeAndFlash() async throws {
        let fixture = try ChannelFixture()
        let image = fixture.package.encoded()
        let envelope = fixture.envelope
        let upstream = try ScriptedUpstream { request, connection in
            if request.path.hasSuffix("/channel.json") {
                connection.sendHead("200 OK", ["Content-Length": "\(envelope.count)", "ETag": "\"v1\""])
                connection.send(envelope)
            } else if let range = request.headers["range"], range.hasPrefix("bytes="), let start = Int(range.dropFirst(6).dropLast()) {
                connection.sendHead("206 Partial Content", ["Content-Length": "\(image.count - start)",
                                                            "Content-Range": "bytes \(start)-\(image.count - 1)/\(image.count)"])
                connection.send(Array(image[start...]))
            } else {
                connection.sendHead("200 OK", ["Content-Length": "\(image.count)"])
                connection.send(Array(image[..<(image.count / 2)]))  // and the connection drops
            }
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        let bench = TempBench()
        let channels = FirmwareChannels(cache: try fixture.cache(in: bench.path + "/cache"), transfer: channelOptions(server))
        let origin = FirmwareServer(root: server.base + "/up/")

        #expect(try await channels.reload("release", from: origin) == .updated(version: 1))
        let package = try await channels.load(fixture.name, channel: "release", from: origin)
        #expect(package == fixture.package)
        let imageRequests = upstream.requests.filter { $0.path.hasSuffix(".grokfw") }
        #expect(imageRequests.count == 2)
        #expect(imageRequests.last?.headers["range"]?.hasPrefix("bytes=") == true)
        #expect(server.accessLog().contains { $0.hasPrefix("GET /up/release/grokker-1.8.0.grokfw 206") })

        // Offline from here: the cache alone lists and serves it. (Flashing a .grokfw into
        // the emulated Grokker went with the old FM0 updater: the vendor protocol's
        // FirmwareUpdater takes .ugif images, see FirmwareUpdaterTests.)
        let info = ReaderInfo(hardwareType: .grokker1, hardwareModel: "GR-1", hardwareRevision: 3,
                              firmwareVersion: FirmwareVersion("1.6.0")!, loaderVersion: FirmwareVersion("1.6.0")!,
                              serialNumber: 1, readerProtocolVersion: 20, region: nil, userMustSetRegion: true,
                              userCanSetRegion: true, provisioned: true, enforceRegion: true, maxPowerTenthsDBm: 300,
                              maxSensitivityTenthsDBm: -900, numVolumeLevels: 4, maxTonesInSound: 20, hasBattery: true,
                              hasExternalPower: true, batteryCapacityMinutes: 140, batteryCapacityMAh: 1800,
                              deviceInitializedSuccessfully: true)
        let best = try #require(try channels.best("release", for: info))
        #expect(best.entry.name == fixture.name)
        #expect(best.compatibility == .upgrade)
        #expect(best.cached)
        let offline = try await channels.load(fixture.name, channel: "release", from: nil)
        #expect(offline == fixture.package)

        // A second reload is conditional: the server's 304... here the upstream always sends
        // 200 with the same ETag, and the same version is accepted again.
        _ = try await channels.reload("release", from: origin)
        #expect(upstream.requests.last?.headers["if-none-match"] == "\"v1\"")
    }

    enum Fault: String, CaseIterable, Sendable {
        case metadata500, image500, truncated, longerThanSigned, redirectLoop, tampered
    }

    @Test("server faults give a clear error and leave the cache untouched", arguments: Fault.allCases)
    func faults(_ fault: Fault) async throws {
        let fixture = try ChannelFixture()
        let image = fixture.package.encoded()
        let envelope = fixture.envelope
        let upstream = try ScriptedUpstream { request, connection in
            if request.path.hasSuffix("/channel.json") {
                if fault == .metadata500 {
                    connection.sendHead("500 Internal Server Error", ["Content-Length": "0"])
                    return
                }
                connection.sendHead("200 OK", ["Content-Length": "\(envelope.count)"])
                connection.send(envelope)
                return
            }
            switch fault {
            case .metadata500:
                break
            case .image500:
                connection.sendHead("500 Internal Server Error", ["Content-Length": "0"])
            case .truncated:
                connection.sendHead("200 OK", ["Content-Length": "\(image.count)"])
                connection.send(Array(image[..<100]))
            case .longerThanSigned:
                connection.sendHead("200 OK", ["Content-Length": "\(image.count + 100)"])
                connection.send(image + [UInt8](repeating: 0, count: 100))
            case .redirectLoop:
                connection.sendHead("302 Found", ["Location": request.path, "Content-Length": "0"])
            case .tampered:
                var bad = image
                bad[bad.count / 2] ^= 0x01
                connection.sendHead("200 OK", ["Content-Length": "\(bad.count)"])
                connection.send(bad)
            }
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        let bench = TempBench()
        let cacheDirectory = bench.path + "/cache"
        let channels = FirmwareChannels(cache: try fixture.cache(in: cacheDirectory), transfer: channelOptions(server))
        let origin = FirmwareServer(root: server.base + "/up")
        if fault == .metadata500 {
            let before = ChannelFixture.snapshot(cacheDirectory)
            do {
                try await channels.reload("release", from: origin)
                Issue.record("a 500 was taken as metadata")
            } catch let error as NetError {
                #expect(error.description.contains("/up/release/channel.json"))
            }
            #expect(ChannelFixture.snapshot(cacheDirectory) == before)
            return
        }
        try await channels.reload("release", from: origin)
        let before = ChannelFixture.snapshot(cacheDirectory)
        do {
            _ = try await channels.load(fixture.name, channel: "release", from: origin)
            Issue.record("\(fault): the image was accepted")
        } catch let error as NetError {
            #expect(fault != .tampered, "\(error)")
            #expect(error.description.contains("grokker-1.8.0.grokfw"), "\(error.description)")
        } catch let error as FirmwareError {
            #expect(fault == .tampered, "\(error)")
        }
        #expect(ChannelFixture.snapshot(cacheDirectory) == before, "\(fault): the cache changed")
        #expect(throws: FirmwareError.self) { try fixture.cache(in: cacheDirectory).image(named: fixture.name, in: try fixture.cache(in: cacheDirectory).channel("release")) }
    }
}
