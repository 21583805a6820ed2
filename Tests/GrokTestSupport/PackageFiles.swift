import Foundation

/// The package's root directory (for the shipped profiles, scenes and demo firmware).
public let packageRoot: String = {
    // Tests/GrokTestSupport/PackageFiles.swift -> the package root.
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// The id of a process that has exited and been reaped: a writer that is gone, for the
/// tests of stale temporary files.
public func exitedProcessID() throws -> Int32 {
    let process = try Process.run(URL(fileURLWithPath: "/bin/true"), arguments: [])
    process.waitUntilExit()
    return process.processIdentifier
}

/// Bytes from a hex string; white space is ignored.
public func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}
