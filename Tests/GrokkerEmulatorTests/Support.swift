import GrokAudio
import Foundation

/// A deterministic generator so random cases are reproducible (the project's SplitMix64).
typealias SeededGenerator = SplitMix64

/// A fresh directory under the system temp directory, removed by ``remove()``.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("grok-emulator-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String {
        path + "/" + name
    }
}
