import Foundation
import GrokCrypto
import GrokFirmware
import GrokNet
import GrokProtocol
import Testing
import UGrokIt

@testable import GrokCLI

/// A publisher's world made at test time: a throwaway Ed25519 key (openssl), a trusted-keys
/// file, a package of real x86 code sliced from firmware/demo, signed metadata published
/// to a `file://` server tree, and an empty cache and bench.
final class FirmwareWorld {
    let root: String
    var key: String { root + "/alice.pem" }
    var keys: String { root + "/keys.json" }
    var package: String { root + "/app.grokfw" }
    var server: String { root + "/srv" }
    var cache: String { root + "/cache" }
    var bench: String { root + "/bench" }

    static let demoHex = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("firmware/demo/grokker-app-1.8.0.hex").path

    init(version: String = "1.8.0", hexLines: Int = 700) throws {
        root = try makeTemporaryDirectory()
        try Self.openssl(["genpkey", "-algorithm", "ed25519", "-out", key])
        try Self.openssl(["pkey", "-in", key, "-pubout", "-out", root + "/alice.pub"])
        let publicKey = try String(contentsOfFile: root + "/alice.pub", encoding: .utf8)
        try Self.writeJSON(["type": "grokctl-trusted-keys", "threshold": 1,
                            "keys": [["name": "alice", "public_key": publicKey]]], to: keys)
        // About 16 KiB of the demo image's code (each line holds 16 bytes) and the end record.
        let lines = try String(contentsOfFile: Self.demoHex, encoding: .utf8).split(whereSeparator: \.isNewline)
        try (lines.prefix(hexLines).joined(separator: "\n") + "\n:00000001FF\n").write(toFile: root + "/app.hex", atomically: true, encoding: .utf8)
        try pack(version: version, output: package)
        try publish(packages: [(package, "grokker-\(version)")], metadataVersion: 1)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func pack(version: String, output: String) throws {
        try Self.writeJSON(["hardware_type": 5, "hardware_revisions": [1, 2, 3], "version": version,
                            "build_date": "2025-01-31T12:00:00Z", "reader_protocol": 20,
                            "applies_to": [["min": "1.0.0", "max": "9.9.9"]]], to: root + "/desc.json")
        // `firmware pack` now makes .ugif images; the flash path these tests cover still takes
        // the old package, made here by the library until the flash path moves to .ugif.
        _ = try FirmwarePublisher.pack(applicationHexFile: root + "/app.hex", loaderHexFile: nil,
                                       descriptionFile: root + "/desc.json", output: output)
    }

    /// Writes channel metadata listing `packages`, signs it with the key and publishes it.
    func publish(packages: [(path: String, name: String)], metadataVersion: Int, key: String? = nil) throws {
        var updates: [[String: Any]] = []
        for (path, name) in packages {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let parsed = try FirmwarePackage.parse(bytes)
            updates.append([
                "name": name, "file": "images/\(name).grokfw", "version": parsed.descriptor.version.description,
                "build_date": "2025-01-31T12:00:00Z", "reader_protocol": 20, "hardware_type": 5,
                "hardware_revisions": [1, 2, 3], "applies_to": [["min": "1.0.0", "max": "9.9.9"]],
                "size": bytes.count, "sha256": SHA256.hash(bytes).hex,
                "notes": ["en": "Faster inventory.", "fr": "Inventaire plus rapide."],
            ])
        }
        try Self.writeJSON(["type": "grokctl-firmware-channel", "channel": "release", "version": metadataVersion,
                            "expires": "2099-01-01T00:00:00Z", "updates": updates], to: root + "/release.json")
        var result = run(["channel", "sign", "--metadata", root + "/release.json", "--key", key ?? self.key,
                          "--output", root + "/release.signed.json"])
        #expect(result.status == 0, "\(result.standardError)")
        result = run(["channel", "publish", "--metadata", root + "/release.signed.json", "--root", server,
                      "--trusted-keys", keys] + packages.flatMap { ["--package", $0.path] })
        #expect(result.status == 0, "\(result.standardError)")
    }

    /// The built grokctl. Not in this process: the network commands wait for async work
    /// on a thread of their own, which must not be one of the test runner's few pool threads.
    func run(_ arguments: [String], environment: [String: String] = [:]) -> RunResult {
        do {
            return try runBinary(arguments, environment: environment)
        } catch {
            Issue.record(error)
            return RunResult(status: -1, standardOutput: "", standardError: "\(error)")
        }
    }

    func technician(_ arguments: [String], server: Bool = false) -> RunResult {
        run(arguments + ["--cache", cache, "--trusted-keys", keys, "--bench", bench]
            + (server ? ["--server", "file://" + self.server] : []))
    }

    /// Every file under the cache with its bytes, to prove a refusal changed nothing.
    func cacheSnapshot() -> [String: Data] {
        var snapshot: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: cache)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: cache + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                snapshot[path] = FileManager.default.contents(atPath: cache + "/" + path)
            }
        }
        return snapshot
    }

    static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "openssl \(arguments)")
    }

    static func writeJSON(_ value: Any, to path: String) throws {
        try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
    }
}

/// The JSON objects of a `--json` run, one per line.
func jsonLines(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

extension CLI {
    @Suite("Firmware commands")
    struct FirmwareCommandTests {
        @Test("pack, sign, publish, download, list, check, flash sim:0, and info reports the new version")
        func wholeLifecycle() throws {
            let world = try FirmwareWorld()
            // Offline with an empty cache: a clear error naming the channel and what to do.
            var result = world.technician(["firmware", "list"])
            #expect(result.status == 1)
            #expect(result.standardError.contains("No verified metadata for channel 'release'"))
            #expect(result.standardError.contains("grokctl firmware download --server"))

            result = world.technician(["firmware", "download"], server: true)
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.contains("Downloaded and verified grokker-1.8.0"))

            result = world.technician(["firmware", "list", "--device", "sim:0", "--json"])
            #expect(result.status == 0, "\(result.standardError)")
            let listing = jsonLines(result.standardOutput)
            #expect(listing.count == 1)
            #expect(listing.first?["name"] as? String == "grokker-1.8.0")
            #expect(listing.first?["cached"] as? Bool == true)
            #expect((listing.first?["compatibility"] as? [String: String])?["sim:0"] == "UPGRADE")

            result = world.technician(["firmware", "check", "--device", "sim:0"])
            #expect(result.status == 100, "\(result.standardError)")
            #expect(result.standardOutput.contains("sim:0: runs 1.7.3; update grokker-1.8.0 (1.8.0) is available: UPGRADE."))

            result = world.technician(["firmware", "flash", "--device", "sim:0", "--json"])
            #expect(result.status == 0, "\(result.standardError)")
            let events = jsonLines(result.standardOutput)
            let kinds = events.compactMap { $0["event"] as? String }
            #expect(kinds.first == "flash_started")
            #expect(kinds.contains("flash_progress"))
            #expect(kinds.suffix(2) == ["flash_done", "flash_summary"])
            let phases = Set(events.filter { $0["event"] as? String == "flash_progress" }.compactMap { $0["phase"] as? String })
            #expect(phases.isSuperset(of: ["checking", "loader", "uploading", "verifying", "switching", "confirming"]))
            for progress in events where progress["event"] as? String == "flash_progress" {
                #expect(progress["device"] as? String == "sim:0")
                #expect((progress["done"] as? Int ?? -1) <= (progress["total"] as? Int ?? 0))
            }
            let done = try #require(events.first { $0["event"] as? String == "flash_done" })
            #expect(done["from"] as? String == "1.7.3")
            #expect(done["to"] as? String == "1.8.0")
            #expect((done["bytes"] as? Int ?? 0) > 10_000)
            #expect((done["seconds"] as? Double ?? 0) > 0)

            result = world.run(["info", "--device", "sim:0", "--json", "--bench", world.bench])
            #expect(jsonLines(result.standardOutput).first?["firmware"] as? String == "1.8.0")

            // Now up to date: check says so (exit 0) and a plain flash has nothing to do.
            result = world.technician(["firmware", "check", "--device", "sim:0", "--json"])
            #expect(result.status == 0)
            #expect(jsonLines(result.standardOutput).first?["update_available"] as? Bool == false)
            result = world.technician(["firmware", "flash", "--device", "sim:0"])
            #expect(result.status == 0)
            #expect(result.standardOutput.contains("sim:0: runs 1.8.0; the channel has no update it may take."))

            // The cache verifies clean; prune has nothing to remove.
            result = world.technician(["firmware", "cache", "verify", "--json"])
            #expect(result.status == 0)
            #expect(jsonLines(result.standardOutput).allSatisfy { $0["status"] as? String == "ok" })
            result = world.technician(["firmware", "verify", "--name", "grokker-1.8.0"])
            #expect(result.status == 0)
            #expect(result.standardOutput.contains("It is update 'grokker-1.8.0' of channel 'release'"))
        }

        @Test("A downgrade is refused without --allow-downgrade: localized error, vendor result, device unchanged")
        func downgradeRefused() throws {
            let world = try FirmwareWorld(version: "1.6.0")
            #expect(world.technician(["firmware", "download"], server: true).status == 0)
            let before = world.cacheSnapshot()
            var result = world.technician(["firmware", "flash", "--device", "sim:0", "--name", "grokker-1.6.0", "--json"])
            #expect(result.status == 1)
            let failed = try #require(jsonLines(result.standardOutput).first { $0["event"] as? String == "flash_failed" })
            #expect(failed["code"] as? String == "flash_downgrade_not_allowed")
            #expect(failed["result"] as? Int == FirmwareUpdateResult.incompatibleVersion.rawValue)
            // Refused at the check: nothing was uploaded.
            #expect(!jsonLines(result.standardOutput).contains { $0["phase"] as? String == "uploading" })

            result = world.technician(["firmware", "flash", "--device", "sim:0", "--name", "grokker-1.6.0", "--lang", "de"])
            #expect(result.status == 1)
            #expect(result.standardOutput.contains("sim:0: nicht aktualisiert: sim:0: der Leser läuft mit 1.7.3, das Image ist das ältere 1.6.0; geben Sie --allow-downgrade an"))
            #expect(world.cacheSnapshot() == before)
            result = world.run(["info", "--device", "sim:0", "--json", "--bench", world.bench])
            #expect(jsonLines(result.standardOutput).first?["firmware"] as? String == "1.7.3")
            // A best-update flash finds nothing to take (1.6.0 is a downgrade) and succeeds.
            result = world.technician(["firmware", "flash", "--device", "sim:0", "--json"])
            #expect(result.status == 0)
            #expect(jsonLines(result.standardOutput).first?["event"] as? String == "flash_skipped")
        }

        @Test("A tampered package is refused by verify, by flash --package and by download; the cache is unchanged")
        func tamperedPackage() throws {
            let world = try FirmwareWorld()
            #expect(world.technician(["firmware", "download"], server: true).status == 0)
            let before = world.cacheSnapshot()
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: world.package)))
            bytes[bytes.count / 2] ^= 0x01
            let tampered = world.root + "/tampered.grokfw"
            try Data(bytes).write(to: URL(fileURLWithPath: tampered))

            var result = world.technician(["firmware", "verify", tampered])
            #expect(result.status == 1)
            #expect(result.standardError.hasPrefix("Error: '\(tampered)'"))
            result = world.technician(["firmware", "flash", "--device", "sim:0", "--package", tampered, "--json"])
            #expect(result.status == 1)
            #expect(result.standardError.contains("\"code\":\"firmware_package"))
            #expect(world.cacheSnapshot() == before)

            // The server's image is swapped for the tampered one: the download is refused.
            try FileManager.default.removeItem(atPath: world.cache)
            try Data(bytes).write(to: URL(fileURLWithPath: world.server + "/release/images/grokker-1.8.0.grokfw"))
            result = world.technician(["firmware", "download", "--json"], server: true)
            #expect(result.status == 1)
            #expect(result.standardError.contains("\"code\":\"firmware_image_hash_mismatch\""))
            let images = (try? FileManager.default.contentsOfDirectory(atPath: world.cache + "/images")) ?? []
            #expect(images.isEmpty)
            result = world.run(["info", "--device", "sim:0", "--json", "--bench", world.bench])
            #expect(jsonLines(result.standardOutput).first?["firmware"] as? String == "1.7.3")
        }

        @Test("Metadata signed by an untrusted key is refused by publish and by download; nothing is written")
        func untrustedKey() throws {
            let world = try FirmwareWorld()
            let mallory = world.root + "/mallory.pem"
            try FirmwareWorld.openssl(["genpkey", "-algorithm", "ed25519", "-out", mallory])
            var result = world.run(["channel", "sign", "--metadata", world.root + "/release.json", "--key", mallory,
                                    "--output", world.root + "/evil.json"])
            #expect(result.status == 0)
            result = world.run(["channel", "publish", "--metadata", world.root + "/evil.json", "--package", world.package,
                                "--root", world.root + "/evil-srv", "--trusted-keys", world.keys])
            #expect(result.status == 1)
            #expect(result.standardError.contains("'\(world.root)/evil.json' is signed only by keys that are not trusted"))
            #expect(!FileManager.default.fileExists(atPath: world.root + "/evil-srv"))

            // Served anyway (the server was compromised): the cache takes nothing.
            try FileManager.default.copyItem(atPath: world.root + "/evil.json", toPath: world.root + "/evil-channel.json")
            try FileManager.default.removeItem(atPath: world.server + "/release/channel.json")
            try FileManager.default.copyItem(atPath: world.root + "/evil.json", toPath: world.server + "/release/channel.json")
            result = world.technician(["firmware", "download", "--lang", "es"], server: true)
            #expect(result.status == 1)
            #expect(result.standardError.contains("solo está firmado por claves que no son de confianza"))
            #expect(world.cacheSnapshot().keys.allSatisfy { !$0.hasPrefix("metadata/") && !$0.hasPrefix("images/") })
        }

        @Test("Usage errors name the option and what to do")
        func usageErrors() {
            var result = runInProcess(["firmware", "flash", "--device", "sim:0", "--name", "a", "--package", "b"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("'--name' and '--package' cannot be used together"))
            result = runInProcess(["firmware", "flash", "--device", "sim:0", "--min-battery", "120"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("'120' is not a percentage for '--min-battery'"))
            result = runInProcess(["firmware", "list", "--server", "ftp://example.com"])
            #expect(result.status == 64)
            result = runInProcess(["firmware", "verify"])
            #expect(result.status == 64)
            result = runInProcess(["firmware", "flash", "--device", "sim:0", "--version", "1.x", "--lang", "fr"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("« 1.x » n’est pas une version de firmware"))
        }

        @Test("The built binary shows localized help for the firmware commands")
        func binaryHelp() throws {
            var result = try runBinary(["firmware", "--help", "--lang", "es"])
            #expect(result.status == 0)
            #expect(collapsed(result.standardOutput).contains(text(.commandFirmwareAbstract, .es)))
            for sub in ["list", "check", "download", "verify", "flash", "cache", "pack"] {
                #expect(result.standardOutput.contains(sub))
            }
            result = try runBinary(["firmware", "check", "--help"])
            #expect(collapsed(result.standardOutput).contains("100 when at least one has"))
            #expect(result.standardOutput.contains("--trusted-keys"))
            result = try runBinary(["channel", "publish", "--help", "--lang", "de"])
            #expect(result.status == 0)
            #expect(result.standardOutput.contains("--root"))
        }
    }
}
