import Foundation
import Testing

/// The examples under Examples/ are built with the package; this runs the one that needs no
/// wall-clock pacing, so a broken example fails the suite.
@Suite("Examples")
struct ExamplesTests {
    static func binary(_ name: String) -> URL? {
        var directories = [Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL { directories.append(executable.deletingLastPathComponent()) }
        for directory in directories {
            var candidate = directory
            for _ in 0..<4 {
                let url = candidate.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
                candidate.deleteLastPathComponent()
            }
        }
        return nil
    }

    @Test("ProgramTag programs a tag on an emulated Grokker")
    func programTag() throws {
        let url = try #require(Self.binary("ProgramTag"), "the ProgramTag example was not built next to the tests")
        let process = Process()
        process.executableURL = url
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains(": OK"))
    }
}
