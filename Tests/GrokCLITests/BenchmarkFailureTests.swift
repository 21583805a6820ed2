import Foundation
import Testing

/// grokbench's comparisons fail loudly (issue 23 item 8): a side that was asked for and did
/// not run makes its figure `"failed: …"` and grokbench exit 1, never a figure left out.
@Suite("Benchmarks fail loudly")
struct BenchmarkFailureTests {
    @Test("a vendor library that is named but cannot be used fails the vendor comparison: 'failed: …' and exit 1, not a skip")
    func namedButUnusableVendorFails() throws {
        let grokbench = try grokctlExecutable().deletingLastPathComponent().appendingPathComponent("grokbench").path
        try #require(FileManager.default.isExecutableFile(atPath: grokbench), "grokbench is built beside grokctl")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let harness = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: harness) }
        // /etc/hostname is no ELF library: the harness does not build, so the comparison
        // cannot run although it was asked for.
        let run = try runProgram(grokbench, ["vendor-demod", "--json"], in: root,
                                 environment: ["GROKCTL_VENDOR_SDK": "/etc/hostname", "GROKCTL_VENDOR_HARNESS": harness])
        #expect(run.status == 1, "\(run.standardOutput)\(run.standardError)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect((figures["demod_cpu_vs_vendor"] as? String)?.hasPrefix("failed: ") == true, "\(figures)")
        #expect(run.standardError.contains("grokbench vendor-demod: failed: demod_cpu_vs_vendor"), "\(run.standardError)")

        // Not asked for (no library named): skipped, said so, exit 0.
        let skipped = try runProgram(grokbench, ["vendor-demod", "--json"], in: root)
        #expect(skipped.status == 0, "\(skipped.standardError)")
        #expect(skipped.standardOutput.contains("\"demod_cpu_vs_vendor\": \"skipped: GROKCTL_VENDOR_SDK is not set\""))
    }
}
