import Foundation
import GrokLink
import GrokProtocol
import GrokTestSupport
import GrokkerEmulator
import Testing

/// Bytes of a test image: a seeded pattern with `GROKVER:` and the version inside, as our
/// test and demo images carry it.
func vendorImage(_ count: Int, seed: UInt64, version: VendorLoader.Version) -> [UInt8] {
    var state = seed
    var bytes = (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
    let marker = VendorLoader.versionMarker + [version.major, version.minor, version.build]
    bytes.replaceSubrange(16..<(16 + marker.count), with: marker)
    return bytes
}

/// One image of an update as the vendor host sends it: start, chunks of the unit's max
/// program bytes from the start address, ChangeSoftwareType with both CRCs.
struct TestImage {
    var address: UInt16
    var bytes: [UInt8]
    var target: VendorSoftwareType

    var change: VendorChangeSoftwareType { try! VendorChangeSoftwareType(image: bytes, target: target) }
}

/// A ChangeSoftwareType outcome as "ack true", "nack false", or "no answer".
func described(_ outcome: (reply: VendorReply, reset: Bool)?) -> String {
    guard let outcome else { return "no answer" }
    return "\(outcome.reply == .ack ? "ack" : outcome.reply == .nack ? "nack" : "other") \(outcome.reset)"
}

enum UpdateOutcome: Equatable { case done, powerCut, refused }

/// Sends `image` to `unit` as the vendor host does; resets the unit when it asks.
func send(_ image: TestImage, to unit: VendorLoader) -> UpdateOutcome {
    guard let start = unit.programReader(try! VendorProgramReader(address: image.address)) else { return .powerCut }
    guard start == .ack else { return .refused }
    let size = Int(unit.maxProgramBytes)
    for offset in stride(from: 0, to: image.bytes.count, by: size) {
        let chunk = Array(image.bytes[offset..<min(offset + size, image.bytes.count)])
        guard let reply = unit.programReader(try! VendorProgramReader(address: image.address + UInt16(offset), data: chunk)) else {
            return .powerCut
        }
        guard reply == .ack else { return .refused }
    }
    guard let answer = unit.changeSoftwareType(image.change) else { return .powerCut }
    guard answer.reply == .ack, answer.reset else { return .refused }
    unit.reset()
    return unit.isPoweredOff ? .powerCut : .done
}

/// The vendor's whole procedure: the loader image first when the unit runs its application.
func update(_ unit: VendorLoader, loader: TestImage, reader: TestImage) -> UpdateOutcome {
    if unit.softwareType == .application {
        let first = send(loader, to: unit)
        guard first == .done else { return first }
        guard unit.softwareType == .loader else { return .refused }
    }
    return send(reader, to: unit)
}

let factoryLoader = vendorImage(3000, seed: 1, version: .init(1, 0, 0))
let factoryApplication = vendorImage(20_000, seed: 2, version: .init(1, 8, 0))
let newLoader = TestImage(address: 0, bytes: vendorImage(3500, seed: 3, version: .init(1, 1, 0)), target: .loader)
let newReader = TestImage(address: 0x1000, bytes: vendorImage(24_000, seed: 4, version: .init(1, 9, 0)), target: .application)

func manufacturedUnit(_ dir: TemporaryDirectory, maxProgramBytes: UInt8 = 64) throws -> VendorLoader {
    let unit = try VendorLoader(flashPath: dir.file("vendor-flash.bin"), configuration: .init(maxProgramBytes: maxProgramBytes))
    try unit.manufacture(loader: (0, factoryLoader), application: (0x1000, factoryApplication))
    return unit
}

@Suite("VendorLoader: the emulated unit's loader and flash on the vendor procedure")
struct VendorLoaderTests {
    @Test("a new unit runs its application and reports the version inside it and its max program bytes")
    func manufactured() throws {
        let dir = TemporaryDirectory("grok-emulator-tests")
        defer { dir.remove() }
        let unit = try manufacturedUnit(dir)
        #expect(unit.softwareType == .application)
        #expect(unit.runningVersion == .init(1, 8, 0))
        #expect(unit.maxProgramBytes == 64)
    }

    @Test("the vendor sequence resets the unit into its new loader (type 1), then into the new application")
    func vendorSequence() throws {
        let dir = TemporaryDirectory("grok-emulator-tests")
        defer { dir.remove() }
        let unit = try manufacturedUnit(dir)
        #expect(send(newLoader, to: unit) == .done)
        #expect(unit.softwareType == .loader)
        #expect(unit.runningVersion == .init(1, 1, 0))
        #expect(send(newReader, to: unit) == .done)
        #expect(unit.softwareType == .application)
        #expect(unit.runningVersion == .init(1, 9, 0))
        // The flash file is the state: a unit opened again from it runs the same.
        let reopened = try VendorLoader(flashPath: dir.file("vendor-flash.bin"), configuration: .init(maxProgramBytes: 64))
        #expect(reopened.softwareType == .application && reopened.runningVersion == .init(1, 9, 0))
    }

    @Test("the running program never writes its own sectors: such a start or chunk is refused")
    func runningProgramIsProtected() throws {
        let dir = TemporaryDirectory("grok-emulator-tests")
        defer { dir.remove() }
        let unit = try manufacturedUnit(dir)
        // The application occupies 0x1000...; a start there is refused.
        #expect(unit.programReader(try VendorProgramReader(address: 0x1000)) == .nack)
        #expect(unit.programReader(try VendorProgramReader(address: 0)) == .ack)
        #expect(unit.programReader(try VendorProgramReader(address: 0x1000, data: [1, 2, 3])) == .nack)
        #expect(unit.programReader(try VendorProgramReader(address: 0x0FFF, data: [1, 2])) == .nack)
        #expect(unit.softwareType == .application && unit.runningVersion == .init(1, 8, 0))
    }

    @Test("chunks before a start, before its address, or longer than max program bytes are refused")
    func chunkRefusals() throws {
        let dir = TemporaryDirectory("grok-emulator-tests")
        defer { dir.remove() }
        let unit = try manufacturedUnit(dir)
        #expect(unit.programReader(try VendorProgramReader(address: 0, data: [1])) == .nack)
        #expect(unit.programReader(try VendorProgramReader(address: 0x100)) == .ack)
        #expect(unit.programReader(try VendorProgramReader(address: 0xFF, data: [1])) == .nack)
        #expect(unit.programReader(try VendorProgramReader(address: 0x100, data: [UInt8](repeating: 7, count: 65))) == .nack)
        #expect(unit.programReader(try VendorProgramReader(address: 0x100, data: [UInt8](repeating: 7, count: 64))) == .ack)
    }

    @Test("a chunk the unit already has is acknowledged without writing; a changed resend is refused, not merged")
    func resentChunk() throws {
        let dir = TemporaryDirectory("grok-emulator-tests")
        defer { dir.remove() }
        let unit = try manufacturedUnit(dir)
        let chunk = Array(newLoader.bytes[0..<64])
        #expect(unit.programReader(try VendorProgramReader(address: 0)) == .ack)
        #expect(unit.programReader(try VendorProgramReader(address: 0, data: chunk)) == .ack)
        let before = unit.clock
        #expect(unit.programReader(try VendorProgramReader(address: 0, data: chunk)) == .ack)
        #expect(unit.clock == before, "no flash time was spent: nothing was written")
        // Other bytes at the same address cannot be programmed over (bits only clear): NACK.
        let other = chunk.map { ~$0 }
        #expect(unit.programReader(try VendorProgramReader(address: 0, data: other)) == .nack)
    }

    @Test("ChangeSoftwareType with a wrong CRC-16, CRC-32, length or type is refused and does not reset")
    func changeRefusals() throws {
        let dir = TemporaryDirectory("grok-emulator-tests")
        defer { dir.remove() }
        let unit = try manufacturedUnit(dir)
        let good = newLoader.change
        #expect(described(unit.changeSoftwareType(good)) == "nack false", "no upload yet")
        #expect(unit.programReader(try VendorProgramReader(address: 0)) == .ack)
        for offset in stride(from: 0, to: newLoader.bytes.count, by: 64) {
            let chunk = Array(newLoader.bytes[offset..<min(offset + 64, newLoader.bytes.count)])
            #expect(unit.programReader(try VendorProgramReader(address: UInt16(offset), data: chunk)) == .ack)
        }
        var bad = good
        bad.crc16 ^= 1
        #expect(described(unit.changeSoftwareType(bad)) == "nack false")
        bad = good
        bad.crc32 ^= 1
        #expect(described(unit.changeSoftwareType(bad)) == "nack false")
        bad = good
        bad.length -= 1
        #expect(described(unit.changeSoftwareType(bad)) == "nack false")
        bad = good
        bad.targetType = 0
        #expect(described(unit.changeSoftwareType(bad)) == "nack false", "the application cannot install an application")
        #expect(unit.softwareType == .application)
        #expect(described(unit.changeSoftwareType(good)) == "ack true")
    }

    @Test("a unit whose application was erased comes back in its loader, type 1, the loader's version")
    func cutAfterErase() throws {
        let dir = TemporaryDirectory("grok-emulator-tests")
        defer { dir.remove() }
        let unit = try manufacturedUnit(dir)
        #expect(send(newLoader, to: unit) == .done)
        #expect(unit.programReader(try VendorProgramReader(address: 0x1000)) == .ack)
        #expect(unit.programReader(try VendorProgramReader(address: 0x1000, data: Array(newReader.bytes[0..<64]))) == .ack)
        unit.powerOff()
        unit.powerOn()
        #expect(unit.softwareType == .loader)
        #expect(unit.runningVersion == .init(1, 1, 0))
        #expect(update(unit, loader: newLoader, reader: newReader) == .done)
        #expect(unit.softwareType == .application && unit.runningVersion == .init(1, 9, 0))
    }

    @Test("60 seeded power cuts during an update each leave a unit that answers and can be updated again",
          arguments: 0..<60)
    func powerCuts(seed: Int) throws {
        let dir = TemporaryDirectory("grok-emulator-tests")
        defer { dir.remove() }
        // The whole update's length in device samples, measured on an uncut unit.
        let reference = TemporaryDirectory("grok-emulator-tests")
        defer { reference.remove() }
        let timing = try manufacturedUnit(reference)
        let begin = timing.clock
        #expect(update(timing, loader: newLoader, reader: newReader) == .done)
        let duration = timing.clock - begin

        let unit = try manufacturedUnit(dir)
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        state ^= state >> 29
        let cut = unit.clock + Int64(state % UInt64(duration))
        unit.powerCutAt = cut
        let outcome = update(unit, loader: newLoader, reader: newReader)
        #expect(outcome == .powerCut || outcome == .done)
        unit.powerCutAt = nil
        unit.powerOn()
        let type = try #require(unit.softwareType, "the unit answers after the cut at \(cut)")
        switch type {
        case .loader:
            #expect([VendorLoader.Version(1, 0, 0), .init(1, 1, 0)].contains(unit.runningVersion), "a loader's version, never an application's")
        case .application:
            #expect([VendorLoader.Version(1, 8, 0), .init(1, 9, 0)].contains(unit.runningVersion))
        }
        #expect(update(unit, loader: newLoader, reader: newReader) == .done)
        #expect(unit.softwareType == .application && unit.runningVersion == .init(1, 9, 0))
        // And once more from a reopened flash file.
        let reopened = try VendorLoader(flashPath: dir.file("vendor-flash.bin"), configuration: .init(maxProgramBytes: 64))
        #expect(reopened.softwareType == .application && reopened.runningVersion == .init(1, 9, 0))
    }

    @Test("the largest chunk the unit announces (248 bytes) updates it too")
    func largestChunks() throws {
        let dir = TemporaryDirectory("grok-emulator-tests")
        defer { dir.remove() }
        let unit = try manufacturedUnit(dir, maxProgramBytes: 248)
        #expect(update(unit, loader: newLoader, reader: newReader) == .done)
        #expect(unit.runningVersion == .init(1, 9, 0))
    }
}
