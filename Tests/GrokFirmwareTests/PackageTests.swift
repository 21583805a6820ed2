import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol
import Testing

@Suite("Firmware packages")
struct PackageTests {
    @Test("A package round-trips byte for byte, with and without a loader")
    func roundTrip() throws {
        for loader in [true, false] {
            let package = try makePackage(loader: loader)
            let bytes = package.encoded()
            let again = try FirmwarePackage.parse(bytes, file: "p.grokfw")
            #expect(again == package)
            #expect(again.encoded() == bytes)
            #expect(again.sha256 == SHA256.hash(bytes))
            #expect(again.size == bytes.count)
            #expect(again.application.address == 0x0800_4000)
            #expect(again.application.crc32 == CRC32.checksum(pattern(96, seed: 1)))
            #expect((again.loader != nil) == loader)
            #expect(Array(bytes.prefix(8)) == FirmwarePackage.magic)
        }
    }

    @Test("Flipping any bit of any byte, anywhere in the package, is refused")
    func everyCorruptionRefused() throws {
        let bytes = try makePackage().encoded()
        for index in bytes.indices {
            for bit in [0, 7] {
                var bent = bytes
                bent[index] ^= UInt8(1 << bit)
                #expect(throws: FirmwareError.self, "byte \(index) bit \(bit)") { try FirmwarePackage.parse(bent, file: "p") }
            }
        }
    }

    @Test("Truncation at every length and trailing bytes are refused")
    func lengths() throws {
        let bytes = try makePackage().encoded()
        for count in 0..<bytes.count {
            #expect(throws: FirmwareError.self) { try FirmwarePackage.parse(Array(bytes.prefix(count)), file: "p") }
        }
        #expect(throws: FirmwareError.packageTrailingBytes(file: "p", count: 1)) { try FirmwarePackage.parse(bytes + [0], file: "p") }
        #expect(throws: FirmwareError.packageTruncated(file: "p", field: "magic", needed: 8, available: 3)) {
            try FirmwarePackage.parse([0x89, 0x47, 0x52], file: "p")
        }
    }

    @Test("A damaged segment with a recomputed final hash is still caught by its CRC")
    func crcCaught() throws {
        let package = try makePackage()
        var bytes = package.encoded()
        bytes.removeLast(32)
        bytes[bytes.count - 1] ^= 0x40  // last application byte
        bytes += SHA256.hash(bytes).bytes
        let expected = String(format: "0x%08X", package.application.crc32)
        #expect(throws: FirmwareError.self) { try FirmwarePackage.parse(bytes, file: "p") }
        do {
            _ = try FirmwarePackage.parse(bytes, file: "p")
        } catch {
            guard case .packageSegmentCRC(_, let segment, let recorded, _) = error else {
                Issue.record("expected a CRC error, got \(error)")
                return
            }
            #expect(segment == "application")
            #expect(recorded == expected)
        }
    }

    @Test("Fields out of range are refused when building a package")
    func invalidFields() throws {
        let application = try FirmwareSegment(kind: .application, address: 0x1000, bytes: [1, 2, 3])
        #expect(throws: FirmwareError.self) {
            try FirmwarePackage(descriptor: descriptor(hardware: .unknown), loader: nil, application: application)
        }
        #expect(throws: FirmwareError.self) {
            try FirmwarePackage(descriptor: descriptor(revisions: []), loader: nil, application: application)
        }
        #expect(throws: FirmwareError.self) {
            try FirmwarePackage(descriptor: descriptor(appliesTo: []), loader: nil, application: application)
        }
        let overlapping = try FirmwareSegment(kind: .loader, address: 0x1002, bytes: [9, 9])
        #expect(throws: FirmwareError.self) {
            try FirmwarePackage(descriptor: descriptor(), loader: overlapping, application: application)
        }
        #expect(throws: FirmwareError.self) { try FirmwareSegment(kind: .application, address: 0xFFFF_FFFF, bytes: [1, 2]) }
        #expect(throws: FirmwareError.self) { try FirmwareSegment(kind: .application, address: 0, bytes: []) }
        #expect(throws: FirmwareError.self) { try VersionRange(min: v("2.0.0"), max: v("1.0.0")) }
    }

    @Test("pack builds a package from Intel HEX and a JSON description")
    func pack() throws {
        let dir = try scratchDirectory()
        defer { cleanup(dir) }
        let code = pattern(700, seed: 42)
        let hex = try IntelHex(segments: [MemorySegment(address: 0x0800_4000, bytes: Array(code[0..<500])),
                                          MemorySegment(address: 0x0800_4200, bytes: Array(code[500...]))])
        try writeFile(dir + "/app.hex", Array(hex.encoded().utf8))
        let loader = try IntelHex(segments: [MemorySegment(address: 0x0800_0000, bytes: pattern(64, seed: 5))])
        try writeFile(dir + "/loader.hex", Array(loader.encoded().utf8))
        try writeFile(dir + "/description.json", Array("""
            {"hardware_type": 5, "hardware_revisions": [2, 1], "version": "1.8.3",
             "build_date": "2025-01-31T12:00:00Z", "reader_protocol": 20,
             "applies_to": [{"min": "1.0.0", "max": "1.8.2"}]}
            """.utf8))
        let package = try FirmwarePublisher.pack(applicationHexFile: dir + "/app.hex", loaderHexFile: dir + "/loader.hex",
                                                 descriptionFile: dir + "/description.json", output: dir + "/out.grokfw")
        #expect(try FirmwarePackage.parse(readFile(dir + "/out.grokfw")) == package)
        #expect(package.descriptor.hardwareRevisions == [1, 2])
        #expect(package.descriptor.version == v("1.8.3"))
        #expect(package.application.address == 0x0800_4000)
        #expect(package.application.bytes.count == 0x200 + 200)
        #expect(Array(package.application.bytes[500..<512]) == [UInt8](repeating: 0xFF, count: 12))
        #expect(Array(package.application.bytes[512...]) == Array(code[500...]))
        #expect(package.loader?.bytes == pattern(64, seed: 5))

        try writeFile(dir + "/bad.json", Array(#"{"hardware_type": 9, "hardware_revisions": [1]}"#.utf8))
        #expect(throws: FirmwareError.self) {
            try FirmwarePublisher.pack(applicationHexFile: dir + "/app.hex", loaderHexFile: nil,
                                       descriptionFile: dir + "/bad.json", output: dir + "/bad.grokfw")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/bad.grokfw"))
    }
}

@Suite("Compatibility")
struct CompatibilityTests {
    static let device = DeviceIdentity(hardwareType: .grokker1, hardwareRevision: 2, firmwareVersion: v("1.5.0"),
                                       readerProtocolVersion: 20, serialNumber: 1234)

    @Test("The vendor's compatibility values", arguments: [
        (descriptor(version: "1.8.0"), FirmwareCompatibility.upgrade),
        (descriptor(version: "1.5.0", appliesTo: [range("1.5.0", "1.5.0")]), .sameVersion),
        (descriptor(version: "1.4.0", appliesTo: [range("1.0.0", "1.9.0")]), .downgrade),
        (descriptor(version: "1.8.0", revisions: [1, 3]), .incompatible),
        (descriptor(version: "1.8.0", appliesTo: [range("1.6.0", "1.7.0"), range("1.0.0", "1.4.9")]), .incompatible),
        (descriptor(version: "1.8.0", protocolVersion: 21), .incompatible),
        (descriptor(version: "1.8.0", hardware: .unknown), .invalid),
        (descriptor(version: "1.8.0", revisions: []), .invalid),
        (descriptor(version: "1.8.0", appliesTo: []), .invalid),
    ])
    func table(firmware: FirmwareDescriptor, expected: FirmwareCompatibility) {
        #expect(Compatibility.check(firmware, against: Self.device) == expected)
        #expect(expected.rawValue == ["INVALID", "INCOMPATIBLE", "DOWNGRADE", "SAME_VERSION", "UPGRADE"].firstIndex(of: expected.vendorName))
    }

    @Test("An unknown device is INVALID; a protocol the host speaks is fine")
    func deviceSide() {
        var unknown = Self.device
        unknown.hardwareType = .unknown
        #expect(Compatibility.check(descriptor(), against: unknown) == .invalid)
        #expect(Compatibility.check(descriptor(protocolVersion: 21), against: Self.device, hostProtocols: 20...21) == .upgrade)
    }

    @Test("mayApply: upgrades always, downgrade and same version only when allowed, never the others")
    func mayApply() {
        for allowDowngrade in [false, true] {
            for allowSame in [false, true] {
                #expect(FirmwareCompatibility.upgrade.mayApply(allowDowngrade: allowDowngrade, allowSameVersion: allowSame))
                #expect(FirmwareCompatibility.downgrade.mayApply(allowDowngrade: allowDowngrade, allowSameVersion: allowSame) == allowDowngrade)
                #expect(FirmwareCompatibility.sameVersion.mayApply(allowDowngrade: allowDowngrade, allowSameVersion: allowSame) == allowSame)
                #expect(!FirmwareCompatibility.incompatible.mayApply(allowDowngrade: allowDowngrade, allowSameVersion: allowSame))
                #expect(!FirmwareCompatibility.invalid.mayApply(allowDowngrade: allowDowngrade, allowSameVersion: allowSame))
            }
        }
    }

    @Test("Targeting: serials and cohorts (serial ranges) narrow an entry to some devices")
    func targeting() throws {
        let package = try makePackage()
        let cohorts = ["pilot": Cohort(serials: [77], ranges: [.init(from: 1000, through: 1999)])]
        let meta = metadata(packages: [package], cohorts: cohorts, targets: Targeting(serials: [42], cohorts: ["pilot"]))
        let entry = meta.updates[0]
        var device = Self.device
        for (serial, expected) in [(42 as UInt32, FirmwareCompatibility.upgrade), (77, .upgrade), (1000, .upgrade), (1999, .upgrade),
                                   (2000, .incompatible), (5, .incompatible)] {
            device.serialNumber = serial
            #expect(Compatibility.check(entry, in: meta, against: device) == expected, "serial \(serial)")
        }
        let untargeted = metadata(packages: [package])
        device.serialNumber = 5
        #expect(Compatibility.check(untargeted.updates[0], in: untargeted, against: device) == .upgrade)
    }
}
