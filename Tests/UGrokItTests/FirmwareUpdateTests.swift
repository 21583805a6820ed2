import Foundation
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// 16 KiB of real machine code (the start of libasound's x86-64 `.text`), the short
/// payload these tests flash; the 64 KiB benchmark image is in firmware/demo.
enum TestFirmware {
    static let code: [UInt8] = {
        let url = Bundle.module.url(forResource: "Fixtures/code-16k", withExtension: "bin")!
        return [UInt8](try! Data(contentsOf: url))
    }()

    static func image(_ version: String, bytes: [UInt8] = code, hardware: HardwareType = .grokker1,
                      revisions: [UInt8] = [3], appliesTo: String = "0.0.0") -> FirmwareImage {
        let range = try! VersionRange(min: FirmwareVersion(appliesTo)!, max: FirmwareVersion(major: 255, minor: 255, build: 65535))
        let firmware = FirmwareDescriptor(hardwareType: hardware, hardwareRevisions: revisions, version: FirmwareVersion(version)!,
                                          buildDate: Date(timeIntervalSince1970: 1_790_000_000), readerProtocolVersion: 20,
                                          appliesTo: [range])
        return FirmwareImage(firmware: firmware, loadAddress: 0x0800_8000, bytes: bytes)
    }

    /// A second build: the same code with some of it changed.
    static var other: [UInt8] {
        var bytes = code
        for i in stride(from: 100, to: bytes.count, by: 997) { bytes[i] ^= 0x5A }
        return bytes
    }
}

/// A bench of one emulated Grokker whose power can be cut and restored, and whose host
/// can be restarted (a new session on a new cable, as a re-run of grokctl would).
final class FlashRig {
    let bench = TempBench()
    private(set) var grokker: EmulatedGrokker
    private(set) var cable: SimulatedCablePort
    private(set) var session: ReaderSession

    init(_ configuration: CableConfiguration = .clean) throws {
        grokker = try EmulatedGrokker(benchDirectory: bench.path, index: 0)
        cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: configuration, peer: grokker)
        session = ReaderSession(port: cable)
    }

    /// Power comes back (the unit boots from its flash) and the host starts over.
    func restorePowerAndRestartHost() throws {
        grokker = try EmulatedGrokker(benchDirectory: bench.path, index: 0)
        restartHost()
    }

    /// A new host process on the same unit.
    func restartHost() {
        cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker)
        session = ReaderSession(port: cable)
    }

    func update(_ image: FirmwareImage, options: FirmwareUpdateOptions = FirmwareUpdateOptions(),
                shouldCancel: @escaping () -> Bool = { false }) throws -> FirmwareUpdateReport {
        try session.connect()
        return try FirmwareUpdater(session: session, options: options).update(to: image, shouldCancel: shouldCancel)
    }

    var runningVersion: FirmwareVersion? {
        grokker.firmwareStatus.runningSlot?.image?.version
    }
}

@Suite("Firmware update over the audio link")
struct FirmwareUpdateTests {
    @Test("A new image is uploaded compressed, verified, booted on trial and confirmed; it survives a restart")
    func cleanUpdate() throws {
        let rig = try FlashRig()
        let image = TestFirmware.image("1.8.0")
        let report = try rig.update(image)
        #expect(report.from == FirmwareVersion("1.7.3"))
        #expect(report.to == FirmwareVersion("1.8.0"))
        #expect(report.resumedFrom == 0)
        #expect(report.imageBytesSent == image.bytes.count)
        #expect(report.encoding != .raw)
        #expect(report.encodedBytesSent < image.bytes.count * 7 / 10)
        let status = rig.grokker.firmwareStatus
        #expect(status.mode == .application)
        #expect(status.runningSlot?.image == image.descriptor)
        #expect(status.runningSlot?.pendingConfirm == false)
        #expect(try rig.session.identify().firmwareVersion == FirmwareVersion("1.8.0"))
        // Power-cycled, the unit boots the new image (it was confirmed).
        try rig.restorePowerAndRestartHost()
        #expect(try rig.session.connect().firmwareVersion == FirmwareVersion("1.8.0"))
        #expect(rig.runningVersion == FirmwareVersion("1.8.0"))
        // Running the same update again sends nothing.
        let again = try rig.update(image)
        #expect(again.alreadyInstalled)
        #expect(again.imageBytesSent == 0)
    }

    @Test("The update logs its phases and outcome under the FIRMWARE_UPDATE category only when asked")
    func logging() throws {
        let bench = TempBench()
        let grokker = try EmulatedGrokker(benchDirectory: bench.path, index: 0)
        let destination = CollectingLogDestination()
        var options = ReaderOptions()
        options.logger = UgiLogger(categories: [.firmwareUpdate], destination: destination)
        let session = ReaderSession(port: SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker),
                                    options: options)
        try session.connect()
        _ = try FirmwareUpdater(session: session).update(to: TestFirmware.image("1.8.0", bytes: Array(TestFirmware.code.prefix(4096))))
        let messages = destination.records.map(\.message)
        #expect(destination.records.allSatisfy { $0.category == .firmwareUpdate })
        for phase in ["checking", "loader", "uploading", "verifying", "switching", "confirming"] {
            #expect(messages.contains { $0.hasPrefix(phase + ":") }, "\(phase): \(messages)")
        }
        #expect(messages.last?.hasPrefix("1.7.3 -> 1.8.0") == true)
    }

    @Test("Refusals before anything is sent: downgrade, same version, other hardware, low battery, too large")
    func refusals() throws {
        let rig = try FlashRig()
        try rig.session.connect()
        let updater = FirmwareUpdater(session: rig.session)
        let cases: [(FirmwareImage, FirmwareUpdateResult)] = [
            (TestFirmware.image("1.6.0"), .incompatibleVersion),
            (TestFirmware.image("1.7.3"), .incompatibleVersion),
            (TestFirmware.image("1.8.0", revisions: [2]), .incompatibleHardware),
            (TestFirmware.image("1.8.0", appliesTo: "1.7.4"), .incompatibleVersion),
            (TestFirmware.image("1.8.0", bytes: [UInt8](repeating: 0x90, count: 200_000)), .protocolFailure),
        ]
        for (image, result) in cases {
            #expect {
                _ = try updater.update(to: image)
            } throws: { error in
                (error as? FirmwareUpdateError)?.result == result
            }
        }
        try rig.grokker.handler.store.update { $0.batteryPercent = 10 }
        #expect(throws: FirmwareUpdateError.batteryTooLow(port: "sim:0", percent: 10, minimum: 20)) {
            _ = try updater.update(to: TestFirmware.image("1.8.0"))
        }
        let status = rig.grokker.firmwareStatus
        #expect(status.mode == .application)
        #expect(status.upload == nil, "nothing was uploaded")
        #expect(rig.runningVersion == FirmwareVersion("1.7.3"))
        // Allowed explicitly, a downgrade goes through.
        var options = FirmwareUpdateOptions()
        options.allowDowngrade = true
        options.minimumBatteryPercent = 5
        #expect(try FirmwareUpdater(session: rig.session, options: options).update(to: TestFirmware.image("1.6.0")).to
                == FirmwareVersion("1.6.0"))
    }

    @Test("An image that does not start is rolled back: the unit runs its previous image")
    func bootFailureRollsBack() throws {
        let rig = try FlashRig()
        let image = TestFirmware.image("1.8.0")
        rig.grokker.failingImages = [image.descriptor.sha256]
        #expect(throws: FirmwareUpdateError.bootFailed(port: "sim:0", image: FirmwareVersion("1.8.0")!, running: FirmwareVersion("1.7.3")!)) {
            _ = try rig.update(image)
        }
        #expect(rig.runningVersion == FirmwareVersion("1.7.3"))
        #expect(rig.grokker.firmwareStatus.runningSlot?.pendingConfirm == false)
        // After a restart too.
        try rig.restorePowerAndRestartHost()
        #expect(try rig.session.connect().firmwareVersion == FirmwareVersion("1.7.3"))
    }

    @Test("Cancelled mid-upload, the unit keeps its image; the next update goes on from where it stopped")
    func cancelAndResume() throws {
        let rig = try FlashRig()
        let image = TestFirmware.image("1.8.0", bytes: TestFirmware.other)
        var asked = 0
        #expect(throws: FirmwareUpdateError.cancelled(port: "sim:0")) {
            _ = try rig.update(image) {
                asked += 1
                return asked > 3
            }
        }
        let status = rig.grokker.firmwareStatus
        #expect(status.mode == .application)
        #expect(rig.runningVersion == FirmwareVersion("1.7.3"))
        let held = Int(status.upload?.offset ?? 0)
        #expect(held > 0)
        let report = try rig.update(image)
        #expect(report.resumedFrom > 0)
        #expect(report.resumedFrom <= held)
        #expect(report.imageBytesSent == image.bytes.count - report.resumedFrom)
        #expect(rig.runningVersion == FirmwareVersion("1.8.0"))
    }

    @Test("Unplugged for good mid-upload and re-run by a new host, the update finishes from where it stopped")
    func unplugAndRerun() throws {
        let rig = try FlashRig()
        let image = TestFirmware.image("1.8.0")
        var options = FirmwareUpdateOptions()
        options.reconnectTimeout = 3
        try rig.session.connect()
        let cable = rig.cable
        #expect(throws: FirmwareUpdateError.self) {
            _ = try FirmwareUpdater(session: rig.session, options: options).update(to: image, progress: { progress in
                if progress.phase == .uploading, progress.done >= 8192 { cable.plugged = false }
            })
        }
        #expect(rig.runningVersion == FirmwareVersion("1.7.3"))
        rig.restartHost()
        let report = try rig.update(image)
        #expect(report.resumedFrom >= 4096)
        #expect(rig.runningVersion == FirmwareVersion("1.8.0"))
    }

    @Test("Unplugged briefly mid-upload, the same update reconnects and finishes")
    func brieflyUnplugged() throws {
        let bench = TempBench()
        let grokker = try EmulatedGrokker(benchDirectory: bench.path, index: 0)
        let plug = Unplugger(grokker)
        let cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: plug)
        let session = ReaderSession(port: cable)
        try session.connect()
        let image = TestFirmware.image("1.8.0")
        let report = try FirmwareUpdater(session: session).update(to: image, progress: { progress in
            if progress.phase == .uploading, progress.done >= 8192, plug.unplugs == 0 { plug.unplug(seconds: 2.5) }
        })
        #expect(plug.unplugs == 1)
        #expect(report.to == FirmwareVersion("1.8.0"))
        #expect(grokker.firmwareStatus.runningSlot?.image == image.descriptor)
    }
}

/// Power cuts at many points of an update: the unit must always come back on its old or
/// its new image, working, and a re-run must always finish the update.
@Suite("Firmware update under power cuts")
struct FirmwarePowerCutTests {
    /// 8 KiB of the code fixture: short, so that 52 cut-and-rerun cycles stay quick.
    static let image = TestFirmware.image("1.8.0", bytes: Array(TestFirmware.code.prefix(8192)))

    /// When each phase of a clean update begins, in device samples from the update's start.
    static let phases: [(FirmwareUpdateProgress.Phase, Int64)] = {
        let rig = try! FlashRig()
        try! rig.session.connect()
        let start = rig.grokker.clock
        var marks: [(FirmwareUpdateProgress.Phase, Int64)] = []
        let grokker = rig.grokker
        _ = try! FirmwareUpdater(session: rig.session).update(to: image, progress: { progress in
            if marks.last?.0 != progress.phase { marks.append((progress.phase, grokker.clock - start)) }
        })
        marks.append((.confirming, rig.grokker.clock - start))  // the end
        return marks
    }()

    /// 52 cut points: 36 spread over the upload, 8 over verification, 8 over the switch
    /// (activate, restart, reconnect, confirm), each a sample of the device's clock.
    static func cutPoints() -> [Int64] {
        func window(_ phase: FirmwareUpdateProgress.Phase, _ next: FirmwareUpdateProgress.Phase) -> (Int64, Int64) {
            let from = phases.first { $0.0 == phase }!.1
            let to = phases.last { $0.0 == next }!.1
            return (from, max(from + 1, to))
        }
        var generator = SplitMix64(seed: 0xC0FFEE)
        func spread(_ range: (Int64, Int64), _ count: Int) -> [Int64] {
            (0..<count).map { i in
                let width = Double(range.1 - range.0) / Double(count)
                return range.0 + Int64(width * (Double(i) + Double(generator.next() % 1000) / 1000))
            }
        }
        return spread(window(.loader, .verifying), 36) + spread(window(.verifying, .switching), 8)
            + spread(window(.switching, .confirming), 8)
    }

    @Test("52 power cuts across upload, verification and switch; each unit comes back working and a re-run finishes",
          arguments: 0..<4)
    func powerCuts(part: Int) throws {
        let points = Self.cutPoints()
        #expect(points.count >= 50)
        let old = FirmwareVersion("1.7.3")!, new = Self.image.descriptor.version
        var cameBackNew = 0
        for point in points[(part * 13)..<min(points.count, part * 13 + 13)] {
            let rig = try FlashRig()
            try rig.session.connect()
            rig.grokker.powerCutAt = rig.grokker.clock + point
            var options = FirmwareUpdateOptions()
            options.reconnectTimeout = 1.5
            let finished = (try? FirmwareUpdater(session: rig.session, options: options).update(to: Self.image)) != nil
            #expect(finished || rig.grokker.poweredOff, "cut at sample \(point): the power went off")
            // Power back on: the unit runs the old or the new image, and works.
            try rig.restorePowerAndRestartHost()
            let info = try rig.session.connect()
            #expect(info.firmwareVersion == old || info.firmwareVersion == new, "cut at sample \(point)")
            if info.firmwareVersion == new { cameBackNew += 1 }
            let status = rig.grokker.firmwareStatus
            #expect(status.mode == .application, "cut at sample \(point): the unit runs an application")
            #expect(status.runningSlot?.image?.version == info.firmwareVersion, "cut at sample \(point)")
            #expect(try rig.session.call(.echo([1, 2, 3])) == .echo([1, 2, 3]), "cut at sample \(point)")
            // The re-run finishes.
            let report = try rig.update(Self.image)
            #expect(report.to == new)
            #expect(rig.runningVersion == new, "cut at sample \(point)")
            #expect(rig.grokker.firmwareStatus.runningSlot?.pendingConfirm == false)
        }
        // Cuts during the upload leave the old image; some during the switch find the new one.
        if part == 0 { #expect(cameBackNew == 0) }
        if part == 3 { #expect(cameBackNew > 0) }
    }
}

/// Passes audio between the cable and a device, except for a while after ``unplug(seconds:)``,
/// when both directions carry silence (a cable pulled out and pushed back).
final class Unplugger: CablePeer {
    let device: any CablePeer
    private var silentSamples = 0
    private(set) var unplugs = 0

    init(_ device: any CablePeer) { self.device = device }

    func unplug(seconds: Double) {
        silentSamples = Int(seconds * 44_100)
        unplugs += 1
    }

    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        if silentSamples > 0 {
            silentSamples -= input.count
            let zeros = [Float](repeating: 0, count: input.count)
            zeros.withUnsafeBufferPointer { device.process(input: $0, output: output) }
            for i in output.indices { output[i] = 0 }
        } else {
            device.process(input: input, output: output)
        }
    }
}
