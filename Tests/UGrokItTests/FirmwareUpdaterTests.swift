import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokLink
import GrokProtocol
import GrokTestSupport
import GrokkerEmulator
import Testing
import UGrokIt

/// The device side for these tests: a device ``VendorLink`` with a ``VendorLoader`` behind
/// it, answering GetVersion from what the loader runs, ProgramReader and ChangeSoftwareType
/// through the loader, and resetting (silent, then the handshake again) when it asks.
final class LoaderDevice: CablePeer {
    let link: VendorLink
    let loader: VendorLoader
    /// Requests as they arrived (retries included once each: duplicates are not executed).
    private(set) var requests: [RequestPacket] = []
    /// Samples processed (the device's clock).
    private(set) var now: Int64 = 0
    private var resetAt: Int64?
    private var restartAt: Int64?
    private var down = false
    let sampleRate: Int
    /// Seconds from the reset until the unit's request tone (its boot).
    var bootSeconds = 0.3

    init(loader: VendorLoader, sampleRate: Int = 44_100) throws {
        self.loader = loader
        self.sampleRate = sampleRate
        link = try VendorLink(role: .device, sampleRate: sampleRate)
        try link.start()
        link.packets.onRequest = { [unowned self] request in answer(request) }
    }

    func version() -> VendorReaderVersion {
        VendorReaderVersion(protocolVersion: 20, hardwareType: 5, hardwareRevision: 6, firmwareMajor: loader.runningVersion.major,
                            firmwareMinor: loader.runningVersion.minor, firmwareBuild: loader.runningVersion.build, antennaType: 1,
                            maxPowerByte: 250, minusMaxSensitivity: 85, volumeLevels: 4, deviceFlags: 0x80,
                            softwareType: loader.softwareType?.rawValue ?? 0, maxProgramBytes: loader.maxProgramBytes,
                            provisioningStatus: 0, internalId: 0x8877_6655_4433_2211, serialNumber: 1_234_567, initStatus: 0,
                            maxTones: 8, regionIndex: 0)
    }

    private func answer(_ packet: RequestPacket) -> VendorReply? {
        requests.append(packet)
        guard !loader.isPoweredOff else { return nil }
        guard let request = try? VendorRequest(opcode: packet.command, payload: packet.payload) else { return .nack }
        switch request {
        case .getVersion:
            return VendorReply(ResponsePacket(id: 0, data: try! version().encode()))
        case .programReader(let program):
            return loader.programReader(program)
        case .changeSoftwareType(let change):
            guard let answer = loader.changeSoftwareType(change) else { return nil }
            if answer.reset { resetAt = now + Int64(sampleRate / 10) }
            return answer.reply
        default:
            return .ack
        }
    }

    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        link.process(input: input, output: output)
        _ = link.drainEvents()
        now += Int64(input.count)
        // Power: a unit switched off goes silent; switched on again, it sends its request tone.
        if loader.isPoweredOff, resetAt == nil, restartAt == nil {
            if !down {
                down = true
                link.stop()
            }
        } else if down {
            down = false
            try? link.start()
        }
        if let at = resetAt, now >= at {
            resetAt = nil
            link.stop()
            loader.reset()
            restartAt = now + Int64(bootSeconds * Double(sampleRate))
        }
        if let at = restartAt, now >= at {
            restartAt = nil
            try? link.start()
        }
    }
}

/// A ``FirmwareSession`` on a host ``VendorLink`` over a ``LinkDriver``: handshake,
/// GetVersion, requests through the packet layer.
final class LinkFirmwareSession: FirmwareSession {
    let driver: LinkDriver<VendorLink>
    let samplesPerBit: Int
    private(set) var readerVersion: VendorReaderVersion?
    var link: VendorLink { driver.engine }
    var audioSeconds: Double { Double(link.now) / Double(link.sampleRate) }

    init(port: any AudioPort, samplesPerBit: Int = 12) throws {
        driver = LinkDriver(port: port, engine: try VendorLink(role: .host, sampleRate: port.sampleRate))
        self.samplesPerBit = samplesPerBit
    }

    func connect(timeoutSeconds: Double = 5) throws(ReaderError) -> VendorReaderVersion {
        readerVersion = nil
        try? link.open(samplesPerBit: samplesPerBit)
        let up = (try? driver.run(forAtMost: timeoutSeconds) { link.isConnected }) ?? false
        guard up else { throw .cannotHandshake(port: "test", seconds: timeoutSeconds) }
        guard case .version(let v) = try firmwareCall(.getVersion(VendorVersionRequest())) else { throw .cannotGetInfo(port: "test") }
        readerVersion = v
        return v
    }

    func firmwareCall(_ request: VendorRequest) throws(ReaderError) -> VendorResponse {
        let payload = try! request.encodePayload()
        _ = link.drainEvents()
        do {
            try link.send(command: request.opcode.rawValue, payload: payload)
        } catch {
            throw .lostConnection(port: "test")
        }
        var outcome: Result<ResponsePacket, VendorPacketError>?
        _ = try? driver.run(forAtMost: 30) {
            for event in link.drainEvents() {
                if case .packet(.completed(_, let response)) = event { outcome = .success(response) }
                if case .packet(.failed(_, let error)) = event { outcome = .failure(error) }
            }
            return outcome != nil
        }
        switch outcome {
        case .some(.success(let response)) where response.isNack:
            throw .rejected(port: "test", command: "\(request.opcode)", status: "ACK_7 (NACK)")
        case .some(.success(let response)):
            do {
                return try request.decodeResponse(response.data)
            } catch {
                throw .malformedResponse(port: "test", detail: ErrorDetail("undecodable_answer", ["\(request.opcode)"]))
            }
        default:
            throw .timeout(port: "test", command: "\(request.opcode)", seconds: 30, recovery: ErrorDetail("no_reset"))
        }
    }

    func reconnect(receiveDisabledSeconds: Double, timeoutSeconds: Double) throws(ReaderError) -> VendorReaderVersion {
        link.close()
        _ = try? driver.run(forAtMost: receiveDisabledSeconds) { false }
        return try connect(timeoutSeconds: timeoutSeconds)
    }
}

struct UpdaterBench {
    let dir: TemporaryDirectory
    let loader: VendorLoader
    let device: LoaderDevice
    let session: LinkFirmwareSession

    init(maxProgramBytes: UInt8 = 64, samplesPerBit: Int = 12, loaderImage: [UInt8], application: [UInt8]) throws {
        dir = TemporaryDirectory("vendor-fw")
        loader = try VendorLoader(flashPath: dir.file("vendor-flash.bin"), configuration: .init(maxProgramBytes: maxProgramBytes))
        try loader.manufacture(loader: (0, loaderImage), application: (0x1000, application))
        device = try LoaderDevice(loader: loader)
        let port = SimulatedCablePort(name: "firmware", sampleRate: 44_100, configuration: .clean, peer: device)
        session = try LinkFirmwareSession(port: port, samplesPerBit: samplesPerBit)
        _ = try session.connect()
    }
}

func versionText(_ v: VendorReaderVersion) -> String { "\(v.firmwareMajor).\(v.firmwareMinor).\(v.firmwareBuild)" }

/// A seeded image with our version marker (`GROKVER:` maj min build) inside.
func markedImage(_ count: Int, seed: UInt64, _ major: UInt8, _ minor: UInt8, _ build: UInt8) -> [UInt8] {
    var state = seed
    var bytes = (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
    bytes.replaceSubrange(8..<19, with: VendorLoader.versionMarker + [major, minor, build])
    return bytes
}

func ugif(loader: [UInt8]?, reader: [UInt8], _ major: UInt8, _ minor: UInt8, _ build: UInt8) throws -> UgifImage {
    try UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: major, minor: minor, build: build), date: "2026-12-01",
                  loader: loader.map { try UgifSection(address: 0, bytes: $0) }, reader: UgifSection(address: 0x1000, bytes: reader))
}

@Suite("FirmwareUpdater: the vendor procedure over a VendorLink pair to the emulated loader")
struct VendorFirmwareUpdaterTests {
    @Test("an update sends the loader, resets into it, sends the reader image, and the unit answers on the new version")
    func updatesEndToEnd() throws {
        let bench = try UpdaterBench(loaderImage: markedImage(3000, seed: 1, 1, 0, 0), application: markedImage(9000, seed: 2, 1, 8, 0))
        defer { bench.dir.remove() }
        let image = try ugif(loader: markedImage(3300, seed: 3, 1, 1, 0), reader: markedImage(8000, seed: 4, 1, 9, 0), 1, 9, 0)
        var seen: [FirmwareUpdateProgress] = []
        let report = FirmwareUpdater(session: bench.session).update(to: image) { seen.append($0) }
        #expect(report.result == .success, "\(report.detail)")
        #expect(report.finalVersion?.software == .application)
        #expect(report.finalVersion.map(versionText) == "1.9.0")
        #expect(seen.last == FirmwareUpdateProgress(done: 11_300, total: 11_300, secondImage: true))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.done <= $1.done })
        #expect(bench.loader.softwareType == .application && bench.loader.runningVersion == .init(1, 9, 0))
    }

    @Test("the product's ReaderSession drives the update itself: connect, update, and its info says the new version")
    func readerSessionUpdates() throws {
        let dir = TemporaryDirectory("vendor-fw")
        defer { dir.remove() }
        let loader = try VendorLoader(flashPath: dir.file("vendor-flash.bin"), configuration: .init(maxProgramBytes: 64))
        try loader.manufacture(loader: (0, markedImage(3000, seed: 1, 1, 0, 0)), application: (0x1000, markedImage(9000, seed: 2, 1, 8, 0)))
        let device = try LoaderDevice(loader: loader)
        let session = try ReaderSession(port: SimulatedCablePort(name: "firmware", sampleRate: 44_100, configuration: .clean, peer: device))
        let before = try session.connect()
        #expect(before.firmwareVersion.description == "1.8.0")
        let image = try ugif(loader: markedImage(3300, seed: 3, 1, 1, 0), reader: markedImage(8000, seed: 4, 1, 9, 0), 1, 9, 0)
        let report = FirmwareUpdater(session: session).update(to: image)
        #expect(report.result == .success, "\(report.detail)")
        #expect(session.info?.firmwareVersion.description == "1.9.0")
        #expect(session.connectionState == .connected)
        #expect(loader.softwareType == .application && loader.runningVersion == .init(1, 9, 0))
    }

    @Test("our packets for the harness update equal the vendor host's (the firmware-update fixture)")
    func packetsEqualTheVendorHosts() throws {
        let vendor = try vendorFixtureRequests()
        let loaderImage = try #require(vendor.images.first)
        let readerImage = try #require(vendor.images.last)
        // The harness images hold no version marker: this unit knows them by CRC-32.
        let dir = TemporaryDirectory("vendor-fw")
        defer { dir.remove() }
        let catalogue: [UInt32: VendorLoader.Version] = [VendorChecksums.crc32MPEG2(loaderImage.bytes): .init(1, 1, 0),
                                                         VendorChecksums.crc32MPEG2(readerImage.bytes): .init(1, 9, 0)]
        let loader = try VendorLoader(flashPath: dir.file("vendor-flash.bin"),
                                      configuration: .init(maxProgramBytes: 64, catalogue: catalogue))
        try loader.manufacture(loader: (0, markedImage(1000, seed: 5, 1, 0, 0)), application: (0x1000, markedImage(2000, seed: 6, 1, 8, 0)))
        let device = try LoaderDevice(loader: loader)
        let session = try LinkFirmwareSession(port: SimulatedCablePort(name: "fixture", sampleRate: 44_100, configuration: .clean,
                                                                       peer: device))
        _ = try session.connect()
        let image = try ugif(loader: loaderImage.bytes, reader: readerImage.bytes, 1, 9, 0)
        let report = FirmwareUpdater(session: session).update(to: image)
        #expect(report.result == .success, "\(report.detail)")
        let ours = device.requests.dropFirst().map { [$0.command] + $0.payload }
        #expect(ours == vendor.requests)
    }

    @Test("a unit that lost power mid-update comes back in its loader and the same update repairs it")
    func repairsAfterPowerCut() throws {
        let bench = try UpdaterBench(loaderImage: markedImage(3000, seed: 1, 1, 0, 0), application: markedImage(9000, seed: 2, 1, 8, 0))
        defer { bench.dir.remove() }
        let image = try ugif(loader: markedImage(3300, seed: 3, 1, 1, 0), reader: markedImage(8000, seed: 4, 1, 9, 0), 1, 9, 0)
        // Cut the power while the reader image is being written.
        var cut = false
        let first = FirmwareUpdater(session: bench.session).update(to: image) { p in
            if p.secondImage, p.done > 3300 + 4000, !cut {
                cut = true
                bench.loader.powerOff()
            }
        }
        #expect(first.result != .success)
        bench.loader.powerOn()
        let version = try bench.session.reconnect(receiveDisabledSeconds: 1, timeoutSeconds: 5)
        #expect(version.software == .loader)
        #expect(versionText(version) == "1.1.0")
        let again = FirmwareUpdater(session: bench.session).update(to: image)
        #expect(again.result == .success, "\(again.detail)")
        #expect(bench.loader.softwareType == .application && bench.loader.runningVersion == .init(1, 9, 0))
    }

    @Test("a power cut at a seeded point of the update (either image) leaves a unit that answers and the same update repairs it",
          arguments: 0..<12)
    func seededPowerCuts(seed: Int) throws {
        let bench = try UpdaterBench(loaderImage: markedImage(3000, seed: 1, 1, 0, 0), application: markedImage(9000, seed: 2, 1, 8, 0))
        defer { bench.dir.remove() }
        let image = try ugif(loader: markedImage(3300, seed: 3, 1, 1, 0), reader: markedImage(8000, seed: 4, 1, 9, 0), 1, 9, 0)
        var state = UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15
        state ^= state >> 31
        let cutAfter = Int(state % 11_300)
        var cut = false
        let first = FirmwareUpdater(session: bench.session).update(to: image) { p in
            if p.done >= cutAfter, !cut {
                cut = true
                bench.loader.powerOff()
            }
        }
        #expect(cut && first.result != .success)
        bench.loader.powerOn()
        let version = try bench.session.reconnect(receiveDisabledSeconds: 1, timeoutSeconds: 5)
        if version.software == .loader {
            #expect(["1.0.0", "1.1.0"].contains(versionText(version)), "a loader's version, never an application's")
        } else {
            #expect(versionText(version) == "1.8.0")
        }
        let again = FirmwareUpdater(session: bench.session).update(to: image)
        #expect(again.result == .success, "\(again.detail)")
        #expect(bench.loader.softwareType == .application && bench.loader.runningVersion == .init(1, 9, 0))
    }

    @Test("the vendor's refusals: other hardware 102, older or same version 103, low battery 107, cancel 106")
    func refusals() throws {
        let bench = try UpdaterBench(loaderImage: markedImage(3000, seed: 1, 1, 0, 0), application: markedImage(9000, seed: 2, 1, 8, 0))
        defer { bench.dir.remove() }
        let updater = FirmwareUpdater(session: bench.session)
        let other = try UgifImage(hardwareTypeName: "ProtoMicro", version: UgifVersion(major: 1, minor: 9, build: 0), date: "d",
                                  loader: nil, reader: UgifSection(address: 0x1000, bytes: [1, 2, 3]))
        #expect(updater.update(to: other).result == .incompatibleHardware)
        #expect(updater.update(to: try ugif(loader: nil, reader: [1], 1, 8, 0)).result == .incompatibleVersion)
        #expect(updater.update(to: try ugif(loader: nil, reader: [1], 1, 7, 9)).result == .incompatibleVersion)
        let newer = try ugif(loader: markedImage(3300, seed: 3, 1, 1, 0), reader: markedImage(8000, seed: 4, 1, 9, 0), 1, 9, 0)
        updater.options.batteryPercent = 5
        #expect(updater.update(to: newer).result == .batteryTooLow)
        updater.options.batteryPercent = nil
        var chunks = 0
        let cancelled = updater.update(to: newer, progress: { _ in chunks += 1 }, shouldCancel: { chunks > 10 })
        #expect(cancelled.result == .cancelled)
        // Nothing was switched: the unit still runs its application.
        #expect(bench.loader.softwareType == .application && bench.loader.runningVersion == .init(1, 8, 0))
        #expect(FirmwareUpdateResult.allCases.map(\.rawValue) == [0, 3, 100, 101, 102, 103, 104, 105, 106, 107])
    }

    @Test("an image that would overwrite the running program is refused chunk by chunk: PROTOCOL_FAILURE 104, the unit keeps running")
    func runningProgramIsProtected() throws {
        let bench = try UpdaterBench(loaderImage: markedImage(3000, seed: 1, 1, 0, 0), application: markedImage(9000, seed: 2, 1, 8, 0))
        defer { bench.dir.remove() }
        // A "loader" at 0x2000, inside the application the unit runs (0x1000-0x3327).
        let image = try UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: 1, minor: 9, build: 0), date: "d",
                                  loader: UgifSection(address: 0x2000, bytes: markedImage(500, seed: 3, 1, 1, 0)),
                                  reader: UgifSection(address: 0x4000, bytes: markedImage(100, seed: 4, 1, 9, 0)))
        let report = FirmwareUpdater(session: bench.session).update(to: image)
        #expect(report.result == .protocolFailure)
        #expect(bench.loader.softwareType == .application && bench.loader.runningVersion == .init(1, 8, 0))
    }
}

@Suite("FirmwareUpdater figures: audio seconds of a 64 KiB update")
struct VendorFirmwareFigures {
    @Test("a 64 KiB update (4 KiB loader + 60 KiB reader) completes at each setting within 15 % of the bytes' air time (248-byte chunks) or 25 % (64)",
          arguments: [(UInt8(64), 12)] + VendorModemSetting.supportedSamplesPerBit.map { (UInt8(248), $0) })
    func sixtyFourKiB(maxProgramBytes: UInt8, samplesPerBit: Int) throws {
        let bench = try UpdaterBench(maxProgramBytes: maxProgramBytes, samplesPerBit: samplesPerBit,
                                     loaderImage: markedImage(3000, seed: 1, 1, 0, 0), application: markedImage(9000, seed: 2, 1, 8, 0))
        defer { bench.dir.remove() }
        let image = try ugif(loader: markedImage(4096, seed: 3, 1, 1, 0), reader: markedImage(61_440, seed: 4, 1, 9, 0), 1, 9, 0)
        let report = FirmwareUpdater(session: bench.session).update(to: image)
        #expect(report.result == .success, "\(report.detail)")
        // Audio time is bounded below by the bytes on the air at this setting.
        let airSeconds = Double(65_536 * 10 * samplesPerBit) / 44_100  // UART: 10 bits a byte
        #expect(report.audioSeconds > airSeconds)
        #expect(report.audioSeconds < airSeconds * (maxProgramBytes == 248 ? 1.15 : 1.25))
        print("FIGURE vendor_update_64KiB spb=\(samplesPerBit) max_program_bytes=\(maxProgramBytes) audio_seconds=\(report.audioSeconds) chunks=\(report.chunks)")
    }
}

/// The vendor host's requests in the firmware-update fixture, as command + payload, and the
/// two images it uploaded.
func vendorFixtureRequests() throws -> (requests: [[UInt8]], images: [(address: UInt16, bytes: [UInt8])]) {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("VendorInterop/Fixtures/firmware-update/01-firmware-update-GR-1_1-9-0_harness.ugif-120.json")
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any]
    let sends = try #require(object?["host_sends"] as? [String])
    var requests: [[UInt8]] = []
    var images: [(address: UInt16, bytes: [UInt8])] = []
    for hex in sends {
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            bytes.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        let command = bytes[0] & 0x3F
        let payload = bytes[0] & 0x80 != 0 ? Array(bytes[2..<(bytes.count - 1)]) : []
        requests.append([command] + payload)
        if command == 1, payload.count == 2 { images.append((UInt16(payload[0]) | UInt16(payload[1]) << 8, [])) }
        if command == 1, payload.count > 2 { images[images.count - 1].bytes += payload[2...] }
    }
    return (requests, images)
}
