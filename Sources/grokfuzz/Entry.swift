// grokfuzz: fuzz entry points for the decoders (see docs/fuzzing.md).
//
// Built normally, grokfuzz is a command that replays input files through the same entry
// point libFuzzer uses (to reproduce a crash or run a corpus in CI). Built with
// `-sanitize=fuzzer -DFUZZING` (scripts/fuzz.sh), it exports
// `LLVMFuzzerInitialize`/`LLVMFuzzerTestOneInput` and its `main` runs libFuzzer's driver.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GrokBasics

/// The target chosen by `GROKFUZZ_TARGET` (default `packet`), or the error to report.
func targetFromEnvironment() -> Result<FuzzTarget, UnknownTarget> {
    let name = getenv("GROKFUZZ_TARGET").map { String(cString: $0) } ?? FuzzTarget.defaultName
    guard let target = FuzzTarget.named(name) else { return .failure(UnknownTarget(name: name)) }
    return .success(target)
}

struct UnknownTarget: Error {
    var name: String
    var message: String { "Error: unknown fuzz target '\(name)'; choose one of: \(FuzzTarget.names)." }
}

/// Writes `target`'s seeds into `directory` as `seed-<target>-<n>` files, keeping existing ones.
/// Returns how many files were written, or `nil` if one could not be written.
func writeSeeds(of target: FuzzTarget, to directory: String) -> Int? {
    mkdir(directory, 0o755)
    var written = 0
    for (index, seed) in target.seeds().enumerated() {
        let path = directory + "/seed-\(target.name)-\(index)"
        // Created whole or not at all (never a half-written seed); an existing one is kept.
        guard let created = try? AtomicFile.write(seed, to: path, options: AtomicFile.Options(exclusive: true)) else { return nil }
        if created { written += 1 }
    }
    return written
}

func writeStderr(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

#if FUZZING

/// libFuzzer's driver (compiler-rt, linked by `-sanitize=fuzzer`). SwiftPM names every
/// executable's entry point `<module>_main` and aliases `main` to it, so libFuzzer's own
/// `main` is never linked; our `main` calls the driver instead. Declared with `@_extern(c)`
/// (scripts/fuzz.sh enables the `Extern` feature) because libFuzzer ships no header.
@_extern(c, "LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The target for this process, chosen once in `LLVMFuzzerInitialize` before any input.
nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> Int32 {
    switch targetFromEnvironment() {
    case .success(let target):
        selected = target
        writeStderr("grokfuzz: target \(target.name): \(target.summary)")
        if let directory = getenv("GROKFUZZ_SEED_DIR").map({ String(cString: $0) }) {
            guard writeSeeds(of: target, to: directory) != nil else {
                writeStderr("Error: cannot write seeds into '\(directory)'; check that it is a writable directory.")
                exit(1)
            }
        }
    case .failure(let error):
        writeStderr(error.message)
        exit(64)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let target = selected else { return 0 }
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    target.run(bytes)
    return 0
}

@main
struct GrokFuzz {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzerTestOneInput(data, size) })
    }
}

#else

@main
struct GrokFuzz {
    static let usage = """
        OVERVIEW: Replay fuzz inputs through grokfuzz's decoders (build with scripts/fuzz.sh to fuzz).

        USAGE: grokfuzz [--target <name>] <path> ...
               grokfuzz [--target <name>] --write-seeds <directory>
               grokfuzz --list

        ARGUMENTS:
          <path>                  A file, or a directory whose files are each one input.

        OPTIONS:
          --target <name>         The decoder to feed (default: $GROKFUZZ_TARGET, else packet).
          --write-seeds <directory>
                                  Write valid messages for the target into <directory>
                                  to start a corpus (existing files are kept).
          --list                  Print the targets.
          -h, --help              Show help information.
        """

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.contains("-h") || arguments.contains("--help") {
            print(usage)
            return
        }
        if arguments == ["--list"] {
            for target in FuzzTarget.all { print("\(target.name)\t\(target.summary)") }
            return
        }
        var chosen = targetFromEnvironment()
        if let at = arguments.firstIndex(of: "--target") {
            guard at + 1 < arguments.count else { usageError("--target needs a name") }
            let name = arguments[at + 1]
            chosen = FuzzTarget.named(name).map { .success($0) } ?? .failure(UnknownTarget(name: name))
            arguments.removeSubrange(at...(at + 1))
        }
        let target: FuzzTarget
        switch chosen {
        case .success(let t): target = t
        case .failure(let error):
            writeStderr(error.message)
            exit(64)
        }
        if let at = arguments.firstIndex(of: "--write-seeds") {
            guard at + 1 < arguments.count, arguments.count == 2 else { usageError("--write-seeds needs one directory") }
            guard let count = writeSeeds(of: target, to: arguments[at + 1]) else {
                writeStderr("Error: cannot write seeds into '\(arguments[at + 1])'; check that it is a writable directory.")
                exit(1)
            }
            print("grokfuzz: \(target.name): wrote \(count) seeds into \(arguments[at + 1])")
            return
        }
        guard !arguments.isEmpty else { usageError("give at least one file or directory") }
        var count = 0
        for path in arguments {
            for file in inputFiles(path) {
                guard let bytes = readFile(file) else {
                    writeStderr("Error: cannot read '\(file)'; check that it exists and is readable.")
                    exit(1)
                }
                target.run(bytes)
                count += 1
            }
        }
        print("grokfuzz: \(target.name): replayed \(count) inputs, no failures")
    }

    static func usageError(_ message: String) -> Never {
        writeStderr("Error: \(message)\n\(usage)\nSee 'grokfuzz --help'.")
        exit(64)
    }

    /// `path` itself, or the regular files directly inside it (sorted) when it is a directory.
    static func inputFiles(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [path] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let full = path.hasSuffix("/") ? path + name : path + "/" + name
            var info = stat()
            if stat(full, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG { names.append(full) }
        }
        return names.sorted()
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return ferror(file) == 0 ? bytes : nil
    }
}

#endif
