// grokbench: measured figures for docs/benchmarks.md. Run in release builds:
//   swift run -c release grokbench link --json
// Every figure but demod_realtime_factor is counted in samples (audio time), so it repeats
// exactly on any machine; demod_realtime_factor divides audio time by CPU time.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = "usage: grokbench link [--json]"
guard let suite = arguments.first, suite == "link" else {
    FileHandle.standardError.write(Data("\(usage)\n".utf8))
    exit(64)
}
let json = arguments.contains("--json")
let figures = LinkBenchmark.run()
if json {
    print(figures.json)
} else {
    for (key, value) in figures.entries { print("\(key): \(value)") }
}
