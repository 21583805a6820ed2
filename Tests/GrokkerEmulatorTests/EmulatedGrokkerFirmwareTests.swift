import Foundation
import GrokAudio
import GrokBasics
import GrokLink
import GrokProtocol
import GrokTestSupport
import Testing
@testable import GrokkerEmulator

/// The vendor host's update procedure, driven with the GrokProtocol codecs over the host's
/// VendorLink (docs/vendor-protocol.md, 7.2): per image ProgramReader start, chunks of the
/// unit's max program bytes, ChangeSoftwareType, then the reset and a new handshake.
extension VendorHostBench {
    enum Step: Equatable { case done, refused, noAnswer }

    /// GetVersion as the host reads it.
    func readerVersion() throws -> VendorReaderVersion? {
        guard let answer = try call(.getVersion(VendorVersionRequest())), answer.id == 0 else { return nil }
        return try VendorReaderVersion(decoding: answer.data)
    }

    /// Sends one image; after an accepted ChangeSoftwareType waits for the unit's reset and
    /// handshakes again.
    func send(_ image: TestImage, samplesPerBit: Int = 8) throws -> Step {
        func ask(_ request: VendorRequest) throws -> Step {
            guard let answer = try call(request) else { return .noAnswer }
            return answer.id == 0 && answer.data.isEmpty ? .done : .refused
        }
        let start = try ask(.programReader(try VendorProgramReader(address: image.address)))
        guard start == .done else { return start }
        let size = Int(EmulatedGrokker.maxProgramBytes)
        for offset in stride(from: 0, to: image.bytes.count, by: size) {
            let chunk = Array(image.bytes[offset..<min(offset + size, image.bytes.count)])
            let step = try ask(.programReader(try VendorProgramReader(address: image.address + UInt16(offset), data: chunk)))
            guard step == .done else { return step }
        }
        let resets = grokker.resets
        let change = try ask(.changeSoftwareType(image.change))
        guard change == .done else { return change }
        // The host's link reset: it hands the line back and handshakes again when the unit's
        // request tone comes back.
        try run(seconds: 2) { grokker.resets > resets || abandon() }
        guard grokker.resets > resets else { return .noAnswer }
        host.close()
        try host.open(samplesPerBit: samplesPerBit)
        try run(seconds: 5) { (host.isConnected && grokker.link.isConnected) || abandon() }
        return host.isConnected ? .done : .noAnswer
    }

    /// The whole procedure: the loader image first when the unit runs its application.
    func update(loader: TestImage, reader: TestImage) throws -> Step {
        guard let version = try readerVersion() else { return .noAnswer }
        if version.software == .application {
            let first = try send(loader)
            guard first == .done else { return first }
            guard try readerVersion()?.software == .loader else { return .refused }
        }
        return try send(reader)
    }
}

/// Small images for the audio tests: a loader at 0 and an application at 0x1000, as the demo `.ugif` places them.
let linkLoader = TestImage(address: 0, bytes: vendorImage(300, seed: 21, version: .init(1, 1, 0)), target: .loader)
let linkReader = TestImage(address: 0x1000, bytes: vendorImage(700, seed: 22, version: .init(1, 9, 0)), target: .application)

@Suite("The emulated Grokker's flash: factory images, updates over the link, power cuts")
struct EmulatedGrokkerFirmwareTests {
    @Test("a new unit's flash holds the demo loader (1.0.0, the bytes of firmware/demo/grokker-loader-1.0.0.hex) and a factory application of state.json's version")
    func factoryFlash() throws {
        let root = URL(fileURLWithPath: packageRoot)
        var hexBytes: [UInt8] = []
        for line in try String(contentsOf: root.appendingPathComponent("firmware/demo/grokker-loader-1.0.0.hex"), encoding: .utf8)
            .split(whereSeparator: \.isNewline) where line.hasPrefix(":") && line.dropFirst(7).prefix(2) == "00" {
            let hex = Array(line.dropFirst(9).dropLast(2))
            hexBytes += stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0...$0 + 1]), radix: 16)! }
        }
        #expect(FactoryFirmware.loader == hexBytes)
        // The demo .ugif's READER image (the first 61440 bytes of the application hex) is 1.8.0.
        var app: [UInt8] = []
        for line in try String(contentsOf: root.appendingPathComponent("firmware/demo/grokker-app-1.8.0.hex"), encoding: .utf8)
            .split(whereSeparator: \.isNewline) where line.hasPrefix(":") && line.dropFirst(7).prefix(2) == "00" {
            let hex = Array(line.dropFirst(9).dropLast(2))
            app += stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0...$0 + 1]), radix: 16)! }
        }
        #expect(VendorLoader.version(of: Array(app.prefix(61_440)), catalogue: FactoryFirmware.catalogue) == .init(1, 8, 0))

        let bench = try VendorHostBench()
        let unit = bench.grokker
        #expect(unit.softwareType == .application)
        #expect(unit.loader.loaderRecord?.version == .init(1, 0, 0))
        #expect(unit.loader.loaderRecord?.address == FactoryFirmware.loaderAddress)
        #expect(unit.loader.applicationRecord?.version == .init(1, 7, 3))
        #expect(bench.store.state.firmwareVersion == DeviceState.outOfBoxFirmware)
        #expect(bench.store.state.loaderVersion == FirmwareVersion(major: 1, minor: 0, build: 0))
        try bench.connect()
        let version = try #require(try bench.readerVersion())
        #expect(version.software == .application && version.maxProgramBytes == 64)
        #expect((version.firmwareMajor, version.firmwareMinor, version.firmwareBuild) == (1, 7, 3))
    }

    @Test("an update over the link: the loader image, a reset into the loader (software type 1, its new version), the application image, a reset into the new application; state.json follows")
    func updateOverTheLink() throws {
        let bench = try VendorHostBench()
        try bench.connect(samplesPerBit: 8)
        #expect(try bench.send(linkLoader) == .done)
        let inLoader = try #require(try bench.readerVersion())
        #expect(inLoader.software == .loader)
        #expect((inLoader.firmwareMajor, inLoader.firmwareMinor, inLoader.firmwareBuild) == (1, 1, 0))
        #expect(bench.grokker.firmwareUpdateRunning && bench.grokker.ongoingOperation == .firmwareUpdate)
        // The loader answers nothing but who it is, echo and the firmware commands.
        #expect(try bench.call(opcode: VendorOpcode.getBatteryLevel.rawValue, payload: [], retries: false)?.isNack == true)
        #expect(try bench.send(linkReader) == .done)
        let updated = try #require(try bench.readerVersion())
        #expect(updated.software == .application)
        #expect((updated.firmwareMajor, updated.firmwareMinor, updated.firmwareBuild) == (1, 9, 0))
        #expect(bench.store.state.firmwareVersion == FirmwareVersion(major: 1, minor: 9, build: 0))
        #expect(bench.store.state.loaderVersion == FirmwareVersion(major: 1, minor: 1, build: 0))
        #expect(bench.grokker.resets == 2)
        // Powered on again, the unit runs what its flash holds.
        let again = try VendorHostBench(powerOn: bench)
        #expect(again.grokker.softwareType == .application && again.grokker.loader.runningVersion == .init(1, 9, 0))
    }

    @Test("a chunk the flash refuses (into the running program's own sectors) is ACK_7, and a bad CRC in ChangeSoftwareType leaves the unit as it was")
    func refusals() throws {
        let bench = try VendorHostBench()
        try bench.connect(samplesPerBit: 8)
        // The application runs from 0x1000: it does not write there.
        #expect(try bench.call(opcode: 0x01, payload: [0x00, 0x10], retries: false)?.isNack == true)
        #expect(try bench.call(.programReader(try VendorProgramReader(address: 0)))?.id == 0)
        #expect(try bench.call(.programReader(try VendorProgramReader(address: 0, data: Array(linkLoader.bytes.prefix(64)))))?.id == 0)
        var change = linkLoader.change
        change.crc32 ^= 1
        #expect(try bench.call(opcode: 0x02, payload: change.encode(), retries: false)?.isNack == true)
        try bench.run(seconds: 1)
        #expect(bench.grokker.resets == 0 && bench.grokker.softwareType == .application)
        #expect(bench.store.state.firmwareVersion == DeviceState.outOfBoxFirmware)
    }

    @Test("a unit whose application is damaged comes up in its loader, still answers, and is repaired by an update")
    func damagedUnitIsRepairable() throws {
        let bench = try VendorHostBench()
        let flashPath = bench.grokker.flashPath
        var flash = try #require(FileManager.default.contents(atPath: flashPath))
        flash[Int(FactoryFirmware.applicationAddress) + 100] ^= 0xFF
        try flash.write(to: URL(fileURLWithPath: flashPath))
        let damaged = try VendorHostBench(powerOn: bench)
        #expect(damaged.grokker.softwareType == .loader)
        try damaged.connect(samplesPerBit: 8)
        let version = try #require(try damaged.readerVersion())
        #expect(version.software == .loader && (version.firmwareMajor, version.firmwareMinor) == (1, 0))
        #expect(try damaged.update(loader: linkLoader, reader: linkReader) == .done)
        #expect(try damaged.readerVersion()?.software == .application)
        #expect(damaged.store.state.firmwareVersion == FirmwareVersion(major: 1, minor: 9, build: 0))
    }

    @Test("a unit whose flash was erased whole comes up in the boot ROM's loader (0.0.0), state.json says 0.0.0 (not the version that is gone), and an update installs the application")
    func erasedUnitIsUpdatedByTheLoaderPath() throws {
        let bench = try VendorHostBench()
        try Data(repeating: 0xFF, count: VendorLoader.flashBytes).write(to: URL(fileURLWithPath: bench.grokker.flashPath))
        let erased = try VendorHostBench(powerOn: bench)
        #expect(erased.grokker.softwareType == .loader)
        #expect(erased.store.state.firmwareVersion == FirmwareVersion(major: 0, minor: 0, build: 0))
        #expect(erased.store.state.loaderVersion == FirmwareVersion(major: 0, minor: 0, build: 0))
        try erased.connect(samplesPerBit: 8)
        let version = try #require(try erased.readerVersion())
        #expect(version.software == .loader && (version.firmwareMajor, version.firmwareMinor, version.firmwareBuild) == (0, 0, 0))
        #expect(try erased.update(loader: linkLoader, reader: linkReader) == .done)
        let updated = try #require(try erased.readerVersion())
        #expect(updated.software == .application && (updated.firmwareMajor, updated.firmwareMinor) == (1, 9))
        #expect(erased.store.state.firmwareVersion == FirmwareVersion(major: 1, minor: 9, build: 0))
        // A power cycle agrees: the application is in flash now.
        let again = try VendorHostBench(powerOn: erased)
        #expect(again.grokker.softwareType == .application)
        #expect(again.store.state.firmwareVersion == FirmwareVersion(major: 1, minor: 9, build: 0))
    }

    @Test("a power cut at any of 64 seeded samples of an update leaves a unit that answers at the next power-on, agrees with state.json, and updates again")
    func powerCutsAtAnySample() throws {
        // How long a whole update takes on this bench, in device samples.
        let probe = try VendorHostBench()
        try probe.connect(samplesPerBit: 8)
        let begin = probe.grokker.clock
        #expect(try probe.update(loader: linkLoader, reader: linkReader) == .done)
        let length = probe.grokker.clock - begin
        #expect(length > 44_100)

        var rng = SplitMix64(seed: 0x5EED_F1A5)
        var outcomes: [String: Int] = [:]
        for trial in 0..<64 {
            let bench = try VendorHostBench()
            try bench.connect(samplesPerBit: 8)
            let cut = bench.grokker.clock + Int64.random(in: 0..<length, using: &rng)
            bench.grokker.powerCutAt = cut
            bench.abandon = { [unowned bench] in bench.grokker.poweredOff }
            _ = try bench.update(loader: linkLoader, reader: linkReader)
            try bench.run(seconds: 0.5)
            let cutDuring = bench.grokker.poweredOff
            // Power on again: the unit answers in whichever program its flash holds whole.
            let after = try VendorHostBench(powerOn: bench)
            let unit = after.grokker
            let type = try #require(unit.softwareType, "trial \(trial): the unit is dead after a cut at \(cut)")
            let key = "\(cutDuring ? "cut" : "after") \(type) \(unit.loader.runningVersion)"
            outcomes[key, default: 0] += 1
            if let app = unit.loader.applicationRecord?.version {
                #expect(after.store.state.firmwareVersion == FirmwareVersion(major: app.major, minor: app.minor, build: UInt16(app.build)),
                        "trial \(trial): state.json disagrees with the flash")
            }
            try after.connect(samplesPerBit: 8)
            let version = try #require(try after.readerVersion(), "trial \(trial): no GetVersion answer after a cut at \(cut)")
            #expect(version.software == type)
            #expect(try after.update(loader: linkLoader, reader: linkReader) == .done, "trial \(trial): cut at \(cut)")
            let final = try #require(try after.readerVersion())
            #expect(final.software == .application && (final.firmwareMajor, final.firmwareMinor) == (1, 9), "trial \(trial)")
        }
        print("power cuts: update length \(length) samples; outcomes \(outcomes.sorted { $0.key < $1.key })")
        #expect(outcomes.filter { $0.key.hasPrefix("cut") }.values.reduce(0, +) >= 48, "most cuts fall inside the update: \(outcomes)")
        // The cuts fell in both programs' updates: some units came back in their loader.
        #expect(outcomes.keys.contains { $0.contains("loader") }, "\(outcomes)")
        #expect(outcomes.keys.contains { $0.hasPrefix("cut application") }, "\(outcomes)")
    }
}
