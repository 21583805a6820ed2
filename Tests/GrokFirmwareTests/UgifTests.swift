import Foundation
import GrokFirmware
import GrokProtocol
import GrokTestSupport
import Testing

/// What the vendor host sent updating grokpeer with the harness's `GR-1_1-9-0_harness.ugif`
/// (Tests/VendorInterop/Fixtures/firmware-update): the request packets, as hex.
func vendorFirmwareUpdatePackets() throws -> [[UInt8]] {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("VendorInterop/Fixtures/firmware-update/01-firmware-update-GR-1_1-9-0_harness.ugif-120.json")
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any]
    let sends = try #require(object?["host_sends"] as? [String])
    return sends.map { hex in
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            bytes.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        return bytes
    }
}

/// The two images the vendor host uploaded, rebuilt from its ProgramReader chunks
/// (`81 len [addr LE16][data] crc8`), each with the ChangeSoftwareType payload that closed it.
func vendorUploadedImages() throws -> [(address: UInt16, bytes: [UInt8], change: [UInt8])] {
    var images: [(address: UInt16, bytes: [UInt8], change: [UInt8])] = []
    var current: (address: UInt16, bytes: [UInt8])?
    for packet in try vendorFirmwareUpdatePackets() {
        let payload = Array(packet[2..<(packet.count - 1)])
        switch packet[0] & 0x3F {
        case 0x01 where payload.count == 2:
            current = (UInt16(payload[0]) | UInt16(payload[1]) << 8, [])
        case 0x01:
            current!.bytes += payload[2...]
        case 0x02:
            images.append((current!.address, current!.bytes, payload))
            current = nil
        default:
            break
        }
    }
    return images
}

func harnessImage(reader: [UInt8] = pattern(600, seed: 2), loader: [UInt8]? = pattern(200, seed: 1)) throws -> UgifImage {
    try UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: 1, minor: 9, build: 0), date: "2026-12-01",
                  loader: loader.map { try UgifSection(address: 0, bytes: $0) }, reader: UgifSection(address: 0x1000, bytes: reader))
}

/// Replaces line `n` (1-based) of `text`.
func replacingLine(_ text: String, _ n: Int, with line: String) -> String {
    var lines = text.components(separatedBy: "\n")
    lines[n - 1] = line
    return lines.joined(separator: "\n")
}

@Suite("Ugif: the vendor's .ugif firmware image")
struct UgifTests {
    @Test("the CRCs and ChangeSoftwareType of each image equal what the vendor host sent for the same bytes")
    func checksumsMatchTheVendorHost() throws {
        let images = try vendorUploadedImages()
        #expect(images.count == 2)
        let targets: [VendorSoftwareType] = [.loader, .application]
        for (image, target) in zip(images, targets) {
            let section = try UgifSection(address: image.address, bytes: image.bytes)
            #expect(section.changeSoftwareType(to: target).encode() == image.change)
        }
        #expect(images[0].bytes.count == 200 && images[0].address == 0)
        #expect(images[1].bytes.count == 600 && images[1].address == 0x1000)
        #expect(try UgifSection(address: 0, bytes: images[0].bytes).crc16 == 0x4C3E)
        #expect(try UgifSection(address: 0, bytes: images[0].bytes).crc32 == 0x4F69_B517)
    }

    @Test("a written image parses back to the same image, under its vendor file name, every line at most 99 characters")
    func writeThenParse() throws {
        let image = try harnessImage()
        let text = image.encoded(comments: ["made by a test"])
        #expect(image.fileName(name: "demo") == "GR-1_1-9-0_demo.ugif")
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= UgifImage.maxLineLength })
        #expect(text.hasPrefix("# made by a test\nREADER_HARDWARE_TYPE = GR-1\nSOFTWARE_VERSION_MAJOR = 1\n"))
        #expect(text.contains("\nLOADER\n0000 200\n") && text.contains("\nREADER\n1000 600\n"))
        let parsed = try UgifImage.parse(text, fileName: "/some/dir/GR-1_1-9-0_demo.ugif")
        #expect(parsed == image)
    }

    @Test("a file without a LOADER section parses (the vendor host accepts it and sends only the reader image)")
    func loaderIsOptional() throws {
        let image = try harnessImage(loader: nil)
        let parsed = try UgifImage.parse(image.encoded(), fileName: "GR-1_1-9-0_x.ugif")
        #expect(parsed.loader == nil && parsed.reader.bytes.count == 600)
    }

    @Test("lower-case hex, KEY=value without spaces and comments between sections are read")
    func lenientWhereTheVendorIs() throws {
        let image = try harnessImage()
        var text = image.encoded().replacingOccurrences(of: " = ", with: "=")
        text = text.replacingOccurrences(of: "\nREADER\n", with: "\n# the application\nREADER\n")
        let lower = text.split(separator: "\n").map { line in
            line.allSatisfy(\.isHexDigit) ? line.lowercased() : String(line)
        }.joined(separator: "\n") + "\n"
        #expect(try UgifImage.parse(lower, fileName: "GR-1_1-9-0_x.ugif") == image)
    }

    @Test("each refusal names its line", arguments: [
        (4, String(repeating: "#", count: 100), "ugif_line_too_long"),
        (4, "SOFTWARE_VERSION_MINOR = 9\r", "ugif_unexpected_line"),
        (4, "", "ugif_unexpected_line"),
        (4, "SOFTWARE_VERSION_BUILD = nine", "ugif_invalid_header"),
        (4, "SOFTWARE_COLOUR = 9", "ugif_invalid_header"),
        (7, "0000", "ugif_unexpected_line"),
        (9, "ZZ", "ugif_bad_hex"),
        (9, "ABC", "ugif_bad_hex"),
    ])
    func refusalsNameTheLine(line: Int, replacement: String, code: String) throws {
        let text = replacingLine(try harnessImage().encoded(), line, with: replacement)
        do {
            _ = try UgifImage.parse(text, fileName: "GR-1_1-9-0_x.ugif")
            Issue.record("parsed a damaged file")
        } catch {
            #expect(error.code == code)
            #expect(error.line == line)
            #expect(error.description.contains("line \(line)"))
        }
    }

    @Test("a section with fewer or more bytes than it declares is refused (the vendor host would send what follows in its buffer)")
    func sectionLengthIsChecked() throws {
        let text = try harnessImage().encoded()
        let short = text.replacingOccurrences(of: "\n1000 600\n", with: "\n1000 601\n")
        #expect(throws: UgifError.sectionLength(section: "READER", line: 16, declared: 601, found: 600)) {
            try UgifImage.parse(short, fileName: "GR-1_1-9-0_x.ugif")
        }
        let long = text.replacingOccurrences(of: "\n0000 200\n", with: "\n0000 199\n")
        #expect(throws: UgifError.self) { try UgifImage.parse(long, fileName: "GR-1_1-9-0_x.ugif") }
    }

    @Test("the file name must carry the header's hardware type and version")
    func nameMustMatch() throws {
        let text = try harnessImage().encoded()
        #expect(throws: UgifError.nameMismatch(fileName: "GR-1_1-9-1_x.ugif", field: "version", inName: "1.9.1", inFile: "1.9.0")) {
            try UgifImage.parse(text, fileName: "GR-1_1-9-1_x.ugif")
        }
        #expect(throws: UgifError.self) { try UgifImage.parse(text, fileName: "ProtoMicro_1-9-0_x.ugif") }
        #expect(throws: UgifError.self) { try UgifImage.parse(text, fileName: "GR-1_1-9-0.ugif") }
        #expect(throws: UgifError.self) { try UgifImage.parse(text, fileName: "GR-1_1-9-0_x.hex") }
    }

    @Test("an image without a file name (standard input) parses to the named file's image; everything but the name is still checked")
    func unnamedImage() throws {
        let image = try harnessImage()
        let text = image.encoded()
        #expect(try UgifImage.parseUnnamed(text) == UgifImage.parse(text, fileName: "GR-1_1-9-0_demo.ugif"))
        let short = replacingLine(text, text.split(separator: "\n").count - 1, with: "00")
        #expect(throws: UgifError.self) { try UgifImage.parseUnnamed(short) }
        #expect(throws: UgifError.self) { try UgifImage.parseUnnamed("READER_HARDWARE_TYPE = GR-1\n") }
    }

    @Test("a file without READER, with two READERs or with overlapping sections is refused")
    func structure() throws {
        let text = try harnessImage().encoded()
        let noReader = String(text[..<text.range(of: "READER\n1000")!.lowerBound])
        #expect(throws: UgifError.missingSection(section: "READER")) { try UgifImage.parse(noReader, fileName: "GR-1_1-9-0_x.ugif") }
        let readerPart = String(text[text.range(of: "READER\n1000")!.lowerBound...])
        #expect(throws: UgifError.duplicateSection(section: "READER", line: 36)) {
            try UgifImage.parse(text + readerPart, fileName: "GR-1_1-9-0_x.ugif")
        }
        let overlapping = text.replacingOccurrences(of: "\n1000 600\n", with: "\n00C0 600\n")
        #expect(throws: UgifError.sectionsOverlap(loader: 0, reader: 0xC0)) {
            try UgifImage.parse(overlapping, fileName: "GR-1_1-9-0_x.ugif")
        }
    }

    @Test("an image larger than 65535 bytes is refused: ChangeSoftwareType carries a 16-bit length")
    func sixteenBitLength() throws {
        #expect(throws: UgifError.self) { try UgifSection(address: 0, bytes: [UInt8](repeating: 0, count: 65536)) }
        #expect(throws: UgifError.self) { try UgifSection(address: 0x1000, bytes: [UInt8](repeating: 0, count: 0xF001)) }
        #expect(try UgifSection(address: 0, bytes: [UInt8](repeating: 0, count: 65535)).bytes.count == 65535)
    }

    @Test("an oversized file is refused before it is read line by line")
    func bounded() throws {
        let big = String(repeating: "#\n", count: UgifImage.maxFileBytes / 2 + 1)
        #expect(throws: UgifError.fileTooLarge(bytes: big.utf8.count, limit: UgifImage.maxFileBytes)) {
            try UgifImage.parse(big, fileName: "GR-1_1-9-0_x.ugif")
        }
    }

    @Test("compatibility is 0 unparsable, 1 other hardware, 2 older, 3 same, 4 newer than the unit runs")
    func compatibility() throws {
        let image = try harnessImage()
        let text = image.encoded()
        func c(_ hw: String, _ a: UInt8, _ b: UInt8, _ d: UInt8) -> Int {
            UgifImage.compatibility(fileName: "GR-1_1-9-0_x.ugif", text: text, hardwareTypeName: hw,
                                    running: UgifVersion(major: a, minor: b, build: d)).rawValue
        }
        #expect(c("GR-1", 1, 8, 0) == 4)
        #expect(c("GR-1", 1, 9, 0) == 3)
        #expect(c("GR-1", 1, 9, 1) == 2)
        #expect(c("GR-1", 2, 0, 0) == 2)
        #expect(c("ProtoMicro", 1, 8, 0) == 1)
        #expect(UgifImage.compatibility(fileName: "GR-1_1-9-1_x.ugif", text: text, hardwareTypeName: "GR-1",
                                        running: UgifVersion(major: 1, minor: 8, build: 0)) == .unparsable)
    }

    @Test("an image made from Intel HEX holds each file's bytes at its address less the base, gaps FF")
    func fromIntelHex() throws {
        let app = try IntelHex(segments: [MemorySegment(address: 0x0800_1000, bytes: pattern(300, seed: 3)),
                                          MemorySegment(address: 0x0800_1200, bytes: [1, 2, 3])])
        let loader = try IntelHex(segments: [MemorySegment(address: 0x0800_0000, bytes: pattern(100, seed: 4))])
        let image = try UgifImage.make(application: app, loader: loader, base: 0x0800_0000, hardwareTypeName: "GR-1",
                                       version: UgifVersion(major: 1, minor: 8, build: 0), date: "2026-12-01")
        #expect(image.reader.address == 0x1000 && image.reader.bytes.count == 0x203)
        #expect(image.reader.bytes[300..<0x200].allSatisfy { $0 == 0xFF })
        #expect(Array(image.reader.bytes[0x200...]) == [1, 2, 3])
        #expect(image.loader?.address == 0 && image.loader?.bytes == pattern(100, seed: 4))
        let reparsed = try UgifImage.parse(image.encoded(), fileName: image.fileName(name: "x"))
        #expect(reparsed == image)
    }

    @Test("Intel HEX outside the 16-bit space from the base, or too large, is refused")
    func fromIntelHexRefusals() throws {
        let app = try IntelHex(segments: [MemorySegment(address: 0x0800_8000, bytes: [UInt8](repeating: 0, count: 0x10000))])
        #expect(throws: UgifError.self) {
            try UgifImage.make(application: app, loader: nil, base: 0x0800_0000, hardwareTypeName: "GR-1",
                               version: UgifVersion(major: 1, minor: 8, build: 0), date: "d")
        }
        #expect(throws: UgifError.self) {
            try UgifImage.make(application: app, loader: nil, base: 0x0800_8000, hardwareTypeName: "GR-1",
                               version: UgifVersion(major: 1, minor: 8, build: 0), date: "d")
        }
    }

    @Test("the demo image is UgifImage.make of the demo loader and application hex files, and parses")
    func demoImage() throws {
        let demo = URL(fileURLWithPath: packageRoot + "/firmware/demo")
        let app = try IntelHex.parse(String(contentsOf: demo.appendingPathComponent("grokker-app-1.8.0.hex"), encoding: .utf8))
        let loader = try IntelHex.parse(String(contentsOf: demo.appendingPathComponent("grokker-loader-1.0.0.hex"), encoding: .utf8))
        // The whole 64 KiB application does not fit beside a loader: the demo takes what does.
        #expect(throws: UgifError.self) {
            try UgifImage.make(application: app, loader: loader, base: 0x0800_7000, hardwareTypeName: "GR-1",
                               version: UgifVersion(major: 1, minor: 8, build: 0), date: "2026-12-01")
        }
        let flat = try #require(app.flattened())
        let fitting = try IntelHex(segments: [MemorySegment(address: flat.address, bytes: Array(flat.bytes.prefix(61_440)))])
        let image = try UgifImage.make(application: fitting, loader: loader, base: 0x0800_7000, hardwareTypeName: "GR-1",
                                       version: UgifVersion(major: 1, minor: 8, build: 0), date: "2026-12-01")
        let comments = [
            "demo channel image. LOADER: grokker-loader-1.0.0.hex; READER: the first 61440 bytes",
            "of grokker-app-1.8.0.hex (base 0x08007000: the 64 KiB application does not fit",
            "the vendor format's 16-bit address space beside a loader)",
        ]
        let committed = try String(contentsOf: demo.appendingPathComponent("GR-1_1-8-0_demo.ugif"), encoding: .utf8)
        #expect(committed == image.encoded(comments: comments))
        #expect(try UgifImage.parse(committed, fileName: "GR-1_1-8-0_demo.ugif") == image)
        #expect(image.loader?.bytes.count == 1024 && image.reader.bytes.count == 61_440)
        // What the vendor host sent for this file updating grokpeer (harness trace, docs/vendor-protocol.md).
        #expect(image.loader?.changeSoftwareType(to: .loader).encode() == [0x00, 0x04, 0x93, 0xA5, 0x01, 0xA8, 0xF5, 0x8F, 0xD1, 0x00])
        #expect(image.reader.changeSoftwareType(to: .application).encode() == [0x00, 0xF0, 0x58, 0x5F, 0x00, 0x64, 0xF5, 0x74, 0x7C, 0x00])
    }
}

/// A target file of a TUF repository with consistent snapshots is named `<sha256>.<name>`
/// (the demo channel's `targets/release/ba51….GR-1_1-8-0_demo.ugif`): its image name is the target's.
@Suite("The image name of a TUF target file")
struct UgifTargetFileNameTests {
    @Test("the hash prefix is not part of the name; the installed demo channel's image reads under its own name")
    func hashPrefix() throws {
        let hash = String(repeating: "ba51", count: 16)
        #expect(UgifImage.imageName(ofFile: "/x/targets/release/\(hash).GR-1_1-8-0_demo.ugif") == "GR-1_1-8-0_demo.ugif")
        #expect(UgifImage.imageName(ofFile: "GR-1_1-8-0_demo.ugif") == "GR-1_1-8-0_demo.ugif")
        // Not 64 lower-case hex digits and a dot: the name as it is.
        #expect(UgifImage.imageName(ofFile: "\(hash.uppercased()).GR-1_1-8-0_demo.ugif") == "\(hash.uppercased()).GR-1_1-8-0_demo.ugif")
        #expect(UgifImage.imageName(ofFile: "\(hash.dropLast()).GR-1_1-8-0_demo.ugif") == "\(hash.dropLast()).GR-1_1-8-0_demo.ugif")
        let directory = packageRoot + "/firmware/demo-channel/targets/release"
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".ugif") })
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file)))
        let image = try UgifImage.read(bytes, fileName: file, shownAs: file)
        #expect(image.version == UgifVersion(major: 1, minor: 8, build: 0) && image.hardwareTypeName == "GR-1")
    }
}
