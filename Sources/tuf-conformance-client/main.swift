// The client CLI of the TUF conformance suite (theupdateframework/tuf-conformance,
// CLIENT-CLI.md) on GrokTUF: init, refresh, download. Exit 0 on success, 1 on failure.
import GrokNet
import GrokTUF
import Glibc

func fail(_ message: String) -> Never {
    FileHandleStderr.write("tuf-conformance-client: \(message)\n")
    exit(1)
}

enum FileHandleStderr {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

var metadataDir: String?
var metadataURL: String?
var targetBaseURL: String?
var targetDir: String?
var targetNames: [String] = []
var positional: [String] = []
var args = Array(CommandLine.arguments.dropFirst())
while !args.isEmpty {
    let arg = args.removeFirst()
    func value() -> String {
        guard !args.isEmpty else { fail("\(arg) needs a value") }
        return args.removeFirst()
    }
    switch arg {
    case "--metadata-dir": metadataDir = value()
    case "--metadata-url": metadataURL = value()
    case "--target-base-url": targetBaseURL = value()
    case "--target-dir": targetDir = value()
    case "--target-name": targetNames.append(value())
    default: positional.append(arg)
    }
}
guard let command = positional.first else { fail("usage: --metadata-dir DIR (init ROOT | refresh | download)") }
guard let metadataDir else { fail("--metadata-dir is required") }

func readFile(_ path: String) -> [UInt8]? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n <= 0 { break }
        out += buffer[0..<n]
    }
    return out
}

var options = TransferOptions()
options.maxRetries = 0
options.proxy = .direct
// The suite serves its repository over http on loopback.
let fetcher = CurlTUFFetcher(options: options, allowInsecureHTTP: true)

do {
    switch command {
    case "init":
        guard positional.count == 2, let root = readFile(positional[1]) else { fail("init needs a readable trusted root file") }
        try Updater.initialize(metadataDirectory: metadataDir, trustedRoot: root)
    case "refresh":
        guard let metadataURL else { fail("--metadata-url is required") }
        let updater = try Updater(metadataDirectory: metadataDir, metadataBaseURL: metadataURL, fetcher: fetcher)
        try await updater.refresh()
    case "download":
        guard let metadataURL, let targetBaseURL, let targetDir, !targetNames.isEmpty else {
            fail("download needs --metadata-url, --target-base-url, --target-dir and --target-name")
        }
        let updater = try Updater(
            metadataDirectory: metadataDir, metadataBaseURL: metadataURL, targetBaseURL: targetBaseURL, fetcher: fetcher)
        try await updater.refresh()
        for name in targetNames {
            guard let info = try await updater.targetInfo(name) else { throw TUFError.unknownTarget(target: name) }
            if await updater.cachedTarget(info, in: targetDir) != nil { continue }
            try await updater.download(info, to: targetDir)
        }
    default:
        fail("unknown command \(command)")
    }
} catch let error as TUFError {
    fail("\(error.code): \(error.description)")
} catch {
    fail("\(error)")
}
exit(0)
