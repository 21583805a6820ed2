import Foundation
import GrokTestSupport
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// All GrokCLI tests; `swift test --filter CLI` runs them.
@Suite("CLI")
struct CLI {}

/// What one run of grokctl printed and returned.
struct RunResult: Sendable {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

/// Runs grokctl in this process with a clean environment plus `environment`.
func runInProcess(_ arguments: [String], environment: [String: String] = [:]) -> RunResult {
    let output = BufferSink()
    let error = BufferSink()
    let status = Grokctl.run(
        arguments: arguments, environment: environment, standardOutput: output, standardError: error)
    return RunResult(status: status, standardOutput: output.text, standardError: error.text)
}

/// The built `grokctl` executable: SwiftPM puts it in the same directory as the test
/// bundle (`.build/<config>/`).
func grokctlExecutable() throws -> URL {
    var directories = [Bundle.main.bundleURL]
    if let executable = Bundle.main.executableURL { directories.append(executable.deletingLastPathComponent()) }
    directories.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
        directories.append(bundle.bundleURL.deletingLastPathComponent())
    }
    for directory in directories {
        var candidate = directory.appendingPathComponent("grokctl")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        candidate = directory.deletingLastPathComponent().appendingPathComponent("grokctl")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw BinaryNotFound(searched: directories.map(\.path))
}

struct BinaryNotFound: Error, CustomStringConvertible {
    let searched: [String]
    var description: String {
        "grokctl executable not found next to the tests (searched \(searched)); build it with 'swift build --build-tests'"
    }
}

/// Runs the built grokctl with only `environment` (plus PATH) and no standard input.
func runBinary(_ arguments: [String], environment: [String: String] = [:]) throws -> RunResult {
    let process = Process()
    process.executableURL = try grokctlExecutable()
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
    let scratch = TemporaryDirectory("grokctl-cli-run")
    let directory = scratch.url
    let outURL = directory.appendingPathComponent("stdout")
    let errURL = directory.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    try out.close()
    try err.close()
    return RunResult(
        status: process.terminationStatus,
        standardOutput: try String(contentsOf: outURL, encoding: .utf8),
        standardError: try String(contentsOf: errURL, encoding: .utf8))
}

/// A fresh directory under the system temporary directory, removed when the tests exit.
func makeTemporaryDirectory() throws -> String { TemporaryDirectory.untilExit("grokctl-cli-test") }

/// The catalog text for `key` in `language`.
func text(_ key: MessageKey, _ language: Language, _ arguments: String...) -> String {
    Localizer(language: language).text(key, arguments: arguments)
}

/// `text` with every run of ASCII spaces and newlines made one space, so wrapped help
/// can be searched for whole sentences (no-break spaces stay).
func collapsed(_ text: String) -> String {
    text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
}
