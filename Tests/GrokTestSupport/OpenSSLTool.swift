import Foundation

/// The `openssl` command-line tool (installed by scripts/setup.sh --test), an independent
/// peer for keys and signatures: the one way the tests run it.
public enum OpenSSLTool {
    /// It failed: its arguments and exit status.
    public struct Failure: Error, CustomStringConvertible {
        public let arguments: [String]
        public let status: Int32
        public var description: String { "openssl \(arguments.joined(separator: " ")) exited \(status)" }
    }

    /// Runs `openssl arguments` (with `input` on its standard input) and returns its standard
    /// output; a non-zero exit throws ``Failure``.
    @discardableResult
    public static func run(_ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let output = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardInput = stdin
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure(arguments: arguments, status: process.terminationStatus) }
        return String(decoding: data, as: UTF8.self)
    }

    /// A new private key `directory/NAME.pem` (`genpkey` with `algorithm`) and its public half
    /// `directory/NAME.pub`; returns the private key's path.
    @discardableResult
    public static func keyPair(_ name: String, in directory: String, algorithm: [String] = ["-algorithm", "ed25519"]) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let pem = directory + "/\(name).pem"
        try run(["genpkey"] + algorithm + ["-out", pem])
        try run(["pkey", "-in", pem, "-pubout", "-out", directory + "/\(name).pub"])
        return pem
    }
}
