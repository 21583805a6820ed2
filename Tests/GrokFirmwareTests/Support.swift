import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol
import Testing

func v(_ text: String) -> FirmwareVersion { FirmwareVersion(text)! }

func range(_ low: String, _ high: String) -> VersionRange { try! VersionRange(min: v(low), max: v(high)) }

/// Fixed instants, so no test reads the wall clock.
let january2025 = Date(timeIntervalSince1970: 1_735_689_600)  // 2025-01-01T00:00:00Z
let june2025 = Date(timeIntervalSince1970: 1_748_736_000)  // 2025-06-01T00:00:00Z
let january2026 = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

/// A small, deterministic, non-repeating byte pattern.
func pattern(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}

func descriptor(version: String = "1.8.0", hardware: HardwareType = .grokker1, revisions: [UInt8] = [1, 2],
                protocolVersion: UInt16 = 20, appliesTo: [VersionRange] = [range("1.0.0", "1.7.65535")]) -> FirmwareDescriptor {
    FirmwareDescriptor(hardwareType: hardware, hardwareRevisions: revisions, version: v(version), buildDate: january2025,
                       readerProtocolVersion: protocolVersion, appliesTo: appliesTo)
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func readFile(_ path: String) throws -> [UInt8] {
    try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
}

/// The file names under `directory`, recursively, relative to it, sorted.
func listing(_ directory: String) -> [String] {
    (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []).sorted()
}

/// Listing plus contents, to prove a directory did not change.
func snapshot(_ directory: String) -> [String: [UInt8]] {
    var result: [String: [UInt8]] = [:]
    for name in listing(directory) {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory)
        result[name] = isDirectory.boolValue ? [] : (try? readFile(directory + "/" + name)) ?? []
    }
    return result
}
