import Foundation
import GrokBasics
import GrokCrypto
import GrokFirmware
import GrokTestSupport
import Testing

@testable import GrokPublish

@Suite("firmware pack: Intel HEX and a description make a .ugif and its custom object")
struct FirmwarePackTests {
    static let description = """
        {"hardware_type": 5, "hardware_revisions": [3], "version": "1.8.0", "build_date": "2026-12-01T00:00:00Z",
         "reader_protocol": 20, "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}], "notes": {"en": "Demo."}}
        """

    static func input(_ file: String) throws -> FirmwarePack.Input {
        FirmwarePack.Input(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))), name: file)
    }

    @Test("the committed demo .ugif is made byte for byte from the demo Intel HEX, with its custom JSON; its --json form holds the facts and the custom object")
    func packMakesTheDemoImage() throws {
        let directory = TemporaryDirectory("firmware-pack")
        let demo = packageRoot + "/firmware/demo"
        var pack = FirmwarePack(application: try Self.input(demo + "/grokker-app-1.8.0.hex"), loader: try Self.input(demo + "/grokker-loader-1.0.0.hex"),
                                description: .init(bytes: Array(Self.description.utf8), name: "desc.json"),
                                output: directory.file("GR-1_1-8-0_demo.ugif"), customOutput: directory.file("custom.json"))
        pack.base = 0x0800_7000
        pack.readerBytes = 61_440
        pack.comments = ["demo channel image. LOADER: grokker-loader-1.0.0.hex; READER: the first 61440 bytes",
                         "of grokker-app-1.8.0.hex (base 0x08007000: the 64 KiB application does not fit",
                         "the vendor format's 16-bit address space beside a loader)"]
        let made = try pack.make()
        let written = try Data(contentsOf: URL(fileURLWithPath: directory.file("GR-1_1-8-0_demo.ugif")))
        let committed = try Data(contentsOf: URL(fileURLWithPath: demo + "/GR-1_1-8-0_demo.ugif"))
        #expect(written == committed)
        #expect(made.image.sha256 == SHA256.hash([UInt8](committed)).hex && made.image.version == "1.8.0")
        #expect(made.image.sections.map(\.kind) == ["loader", "reader"] && made.image.sections.last?.length == 61_440)
        let custom = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.file("custom.json")))) as? [String: Any])
        #expect(custom["kind"] as? String == "firmware" && custom["hardware_revisions"] as? [Int] == [3])
        #expect(made.customJSON.contains("\"kind\": \"firmware\""), "\(made.customJSON)")
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(made)) as? [String: Any])
        #expect(json["sha256"] as? String == made.image.sha256 && json["hardware_name"] as? String == "GR-1")
        #expect((json["custom"] as? [String: Any])?["kind"] as? String == "firmware")
    }

    @Test("the demo's 64 KiB application without --reader-bytes: refused naming the hex and the --reader-bytes that fits (61440), nothing written")
    func tooLongSaysWhichReaderBytesFit() throws {
        let directory = TemporaryDirectory("firmware-pack")
        let demo = packageRoot + "/firmware/demo"
        let output = directory.file("GR-1_1-8-0_fleet.ugif")
        var pack = FirmwarePack(application: try Self.input(demo + "/grokker-app-1.8.0.hex"), loader: try Self.input(demo + "/grokker-loader-1.0.0.hex"),
                                description: .init(bytes: Array(Self.description.utf8), name: "desc.json"), output: output)
        pack.base = 0x0800_7000
        #expect(throws: FirmwareError.invalidInput(file: demo + "/grokker-app-1.8.0.hex", detail: ErrorDetail("reader_too_long", ["61440"]))) {
            try pack.make()
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("a file name that does not say the description's version is refused naming the file, and nothing is written")
    func nameMustAgree() throws {
        let directory = TemporaryDirectory("firmware-pack")
        let output = directory.file("GR-1_1-9-0_demo.ugif")
        let pack = FirmwarePack(application: try Self.input(packageRoot + "/firmware/demo/grokker-loader-1.0.0.hex"),
                                description: .init(bytes: Array(Self.description.utf8), name: "desc.json"), output: output)
        do {
            _ = try pack.make()
            Issue.record("packed under a name that disagrees")
        } catch let error as FirmwareError {
            guard case .invalidInput(let file, let detail) = error else { Issue.record("\(error)"); return }
            #expect(file == output && error.code == "firmware_invalid_input", "\(detail)")
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("a description whose build does not fit the image's byte is refused naming the description")
    func buildTooLarge() throws {
        let directory = TemporaryDirectory("firmware-pack")
        let description = Self.description.replacingOccurrences(of: "\"1.8.0\"", with: "\"1.8.300\"")
        let pack = FirmwarePack(application: try Self.input(packageRoot + "/firmware/demo/grokker-loader-1.0.0.hex"),
                                description: .init(bytes: Array(description.utf8), name: "desc.json"), output: directory.file("GR-1_1-8-300_demo.ugif"))
        #expect(throws: FirmwareError.invalidInput(file: "desc.json", detail: ErrorDetail("build_too_large", ["1.8.300"]))) { _ = try pack.make() }
    }
}
