import Foundation
import GrokTestSupport
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

    /// Runs an example against its emulated bench (paced to the wall clock like a real Grokker).
    static func run(_ name: String) throws -> (status: Int32, output: String) {
        let url = try #require(binary(name), "the \(name) example was not built next to the tests")
        let process = Process()
        process.executableURL = url
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("each guide example runs through the vendor-shaped API on an emulated Grokker",
          arguments: ["ProgramTag", "FindTags", "TagEvents"])
    func runs(_ name: String) throws {
        let (status, text) = try Self.run(name)
        #expect(status == 0, "\(text)")
        #expect(text.contains(": OK"), "\(text)")
    }

    @Test("the examples import only UGrokIt (and the bench that supplies a Grokker), as an app would")
    func importOnlyUGrokIt() throws {
        let examples = packageRoot + "/Examples"
        var checked = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: examples) where name != "ExampleBench" {
            let text = try String(contentsOfFile: examples + "/" + name + "/main.swift", encoding: .utf8)
            let imports = text.split(separator: "\n").filter { $0.hasPrefix("import ") }.map { String($0.dropFirst(7)) }
            #expect(Set(imports).isSubset(of: ["Dispatch", "ExampleBench", "Foundation", "UGrokIt"]), "\(name): \(imports)")
            checked += 1
        }
        #expect(checked >= 4)
    }
}
