// grokbench: measured figures for docs/benchmarks.md. Run in release builds:
//   swift run -c release grokbench link --json
//   swift run -c release grokbench vendor-demod --json   (link's vendor comparison alone; needs GROKCTL_VENDOR_SDK)
//   swift run -c release grokbench cable --json
//   swift run -c release grokbench flash --json
//   swift run -c release grokbench fleet --json [--devices N]   (grokctl provision, built beside it)
//   swift run -c release grokbench sessions --json
//   swift run -c release grokbench ledger --json [--stations N] [--runs R]   (= fleet --stations N; starts its own PostgreSQL)
// Link figures but the CPU ones (`*_us_per_audio_s`, `demod_cpu_vs_*`) are counted in
// samples (audio time), so they repeat exactly on any machine; CPU figures and realtime
// factors depend on the machine.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let suites: [String: () -> Figures] = ["link": LinkBenchmark.run, "vendor-demod": VendorComparison.alone, "cable": CableBenchmark.run, "inventory": InventoryBenchmark.run,
                                             "flash": FlashBenchmark.run, "fleet": ProvisionBenchmark.run,
                                             "sessions": FleetBenchmark.run, "ledger": LedgerBenchmark.run]
guard let name = arguments.first, let suite = suites[name] else {
    FileHandle.standardError.write(Data("usage: grokbench link|vendor-demod|cable|inventory|flash|fleet|sessions|ledger [--json] (fleet: [--devices N] | [--stations N]; ledger: [--stations N] [--runs R])\n".utf8))
    exit(64)
}
// `fleet --stations N`: many stations on one shared ledger (issue 14's name for it).
let figures = name == "fleet" && arguments.contains("--stations") ? LedgerBenchmark.run() : suite()
if arguments.contains("--json") {
    print(figures.json)
} else {
    for (key, value) in figures.entries { print("\(key): \(value)") }
}
if !figures.failures.isEmpty {
    let lines = figures.failures.map { "grokbench \(name): failed: \($0)\n" }.joined()
    FileHandle.standardError.write(Data(lines.utf8))
    exit(1)
}
