import Foundation
import GrokTestSupport

/// Why a test fixture could not be set up (missing tool, failed command); a test that gets
/// one fails with its message.
public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
}

/// A fresh temporary directory (GrokTestSupport's), removed with everything in it when
/// released, with the file helpers the download tests use.
public final class NetScratch: Sendable {
    private let directory = TemporaryDirectory("groknet-test")

    public init() {}

    public var path: String { directory.path }

    public func file(_ name: String) -> String { directory.file(name) }

    /// Writes `bytes` to `name` (creating directories) and returns the path.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = file(name)
        try FileManager.default.createDirectory(
            atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    public func read(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(name)).map { [UInt8]($0) }
    }
}

/// Runs a program and returns its standard output; a non-zero exit throws with its stderr.
@discardableResult
public func runTool(_ executable: String, _ arguments: [String], in directory: String) throws -> String {
    guard FileManager.default.isExecutableFile(atPath: executable) else {
        throw HarnessError(description: "\(executable) is missing; run scripts/setup.sh --test")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let errors = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw HarnessError(
            description: "\(executable) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): "
                + String(decoding: errors, as: UTF8.self))
    }
    return String(decoding: output, as: UTF8.self)
}

/// A test CA and a server certificate for 127.0.0.1 and localhost, made with the openssl
/// command line in `directory` (EC P-256 keys: fast to generate).
public struct TestPKI {
    public static let openssl = "/usr/bin/openssl"

    public let caCertificate: String
    public let serverCertificate: String
    public let serverKey: String

    /// Makes the CA `<name>-ca.pem` and, signed by it, `<name>-server.pem` / `.key`.
    public init(in directory: String, name: String = "test") throws {
        let caKey = "\(directory)/\(name)-ca.key"
        caCertificate = "\(directory)/\(name)-ca.pem"
        serverKey = "\(directory)/\(name)-server.key"
        serverCertificate = "\(directory)/\(name)-server.pem"
        let request = "\(directory)/\(name)-server.csr"
        let extensions = "\(directory)/\(name)-server.ext"
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try runTool(
            Self.openssl,
            ["req", "-x509", "-new"] + ec + [
                "-keyout", caKey, "-out", caCertificate, "-days", "2", "-subj", "/CN=grokctl \(name) CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ], in: directory)
        try runTool(
            Self.openssl, ["req", "-new"] + ec + ["-keyout", serverKey, "-out", request, "-subj", "/CN=localhost"],
            in: directory)
        try """
            subjectAltName=DNS:localhost,IP:127.0.0.1
            basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth

            """.write(toFile: extensions, atomically: true, encoding: .utf8)
        try runTool(
            Self.openssl,
            [
                "x509", "-req", "-in", request, "-CA", caCertificate, "-CAkey", caKey,
                "-set_serial", "0x\(String(UInt32.random(in: 1...UInt32.max), radix: 16))",
                "-days", "2", "-out", serverCertificate, "-extfile", extensions,
            ], in: directory)
    }
}
