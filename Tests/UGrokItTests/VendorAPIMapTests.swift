import Foundation
import GrokTestSupport
import Testing

/// docs/vendor-api.md maps every public item of the vendor's SDK onto UGrokIt; its Swift
/// column must stay true as the code changes. The references are type-checked against the
/// modules this build made (`scripts/vendor-api-map.py --typecheck`); with
/// GROKCTL_VENDOR_HEADERS naming the vendor's `src/ios/include`, the headers are walked too.
@Suite("The vendor API map")
struct VendorAPIMapTests {
    /// The build directory holding `Modules/UGrokIt.swiftmodule` (the tests' own products).
    static func buildDirectory() -> URL? {
        var directories = [Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL { directories.append(executable.deletingLastPathComponent()) }
        for directory in directories {
            var candidate = directory
            for _ in 0..<5 {
                if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("Modules/UGrokIt.swiftmodule").path) {
                    return candidate
                }
                candidate.deleteLastPathComponent()
            }
        }
        return nil
    }

    @Test("every row's Swift reference compiles, and no vendor item is missing")
    func referencesCompile() throws {
        let build = try #require(Self.buildDirectory(), "no Modules/UGrokIt.swiftmodule above the test bundle")
        var arguments = [packageRoot + "/scripts/vendor-api-map.py", "--typecheck", build.path]
        if let headers = ProcessInfo.processInfo.environment["GROKCTL_VENDOR_HEADERS"], !headers.isEmpty {
            arguments += ["--headers", headers]
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        #expect(summary["missing"] as? Int == 0, "\(text)")
        #expect(summary["references_checked"] as? Bool == true)
        // The map is not a short list that passes by leaving items out.
        #expect((summary["same"] as? Int ?? 0) + (summary["differs"] as? Int ?? 0) > 350, "\(text)")
    }
}
