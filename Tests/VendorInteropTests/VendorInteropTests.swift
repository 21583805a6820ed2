import GrokBasics
import Foundation
import Glibc
import GrokAudio
import GrokLink
import GrokProtocol
import GrokTestSupport
import GrokkerEmulator
import Testing

/// The proof of the device side: the vendor's own host library (`vendorhost`, built by
/// `scripts/vendor-harness.sh` around `libugrokitapi.so`) against our ``EmulatedGrokker`` over two
/// FIFOs of raw PCM (s16le mono 44.1 kHz), in real time: the library paces the audio, the
/// emulated reader answers as the blocks arrive (``DeviceRunner`` over ``RawPipePort``).
///
/// Runs only when `GROKCTL_VENDOR_SDK` names the library (the vendor library is never in the
/// repository); otherwise every test is skipped, and says why.
@Suite("The vendor host library against the emulated Grokker (needs GROKCTL_VENDOR_SDK)",
       .enabled(if: VendorInterop.sdk != nil, "GROKCTL_VENDOR_SDK is not set: the vendor interop tests need the vendor library"),
       .serialized)
struct VendorInteropTests {
    static let e1 = "300833b2ddd9014000000001", e2 = "300833b2ddd9014000000002", e3 = "e20034120000000000000abc"
    static let scene = RFScene(tags: [
        RFScene.Tag(epc: hex(e1), user: [0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7], placement: .distance(meters: 0.5)),
        RFScene.Tag(epc: hex(e2), accessPassword: 0x1234_5678, placement: .distance(meters: 0.8)),
        RFScene.Tag(epc: hex(e3), placement: .distance(meters: 1.2)),
    ])

    /// A small `.ugif` in the vendor's text form (docs/vendor-protocol.md 7.1): a 200-byte
    /// loader 1.1.0 at 0x0000 and a 600-byte application 1.9.0 at 0x1000, each carrying the
    /// `GROKVER:` marker the emulated unit reads its version from.
    static func updateFile(in directory: String) throws -> String {
        func image(_ count: Int, _ version: [UInt8], seed: UInt64) -> [UInt8] {
            var g = SplitMix64(seed: seed)
            var bytes = Array("GROKVER:".utf8) + version
            while bytes.count < count { bytes.append(UInt8(truncatingIfNeeded: g.next() >> 56)) }
            return bytes
        }
        func section(_ name: String, _ address: String, _ bytes: [UInt8]) -> String {
            let hex = bytes.map { String(format: "%02X", $0) }.joined()
            let lines = stride(from: 0, to: hex.count, by: 64).map { i -> String in
                let a = hex.index(hex.startIndex, offsetBy: i)
                return String(hex[a..<(hex.index(a, offsetBy: 64, limitedBy: hex.endIndex) ?? hex.endIndex)])
            }
            return "\(name)\n\(address) \(bytes.count)\n" + lines.joined(separator: "\n") + "\n"
        }
        let text = "# interop test image\nREADER_HARDWARE_TYPE = GR-1\nSOFTWARE_VERSION_MAJOR = 1\nSOFTWARE_VERSION_MINOR = 9\n"
            + "SOFTWARE_VERSION_BUILD = 0\nSOFTWARE_VERSION_DATE = 2026-12-01\n"
            + section("LOADER", "0000", image(200, [1, 1, 0], seed: 1)) + section("READER", "1000", image(600, [1, 9, 0], seed: 2))
        let path = directory + "/GR-1_1-9-0_interop.ugif"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("the vendor host's FirmwareUpdate updates the emulated unit: loader, reset into the loader, application, reset; it reports 1.9.0 and state.json follows the flash")
    func firmwareUpdate() throws {
        let scratch = TemporaryDirectory("grok-interop-ugif")
        let directory = scratch.path
        let file = try Self.updateFile(in: directory)
        let run = try VendorInterop.session(scene: Self.scene, steps: ["connect", "version", "firmware-update", file, "60", "version"],
                                            timeLimit: 90) {
            $0.hardwareRevision = 6
            $0.firmwareVersion = FirmwareVersion(major: 1, minor: 8, build: 0)
        }
        #expect(run.has("firmware_update_started", ["rc": 0]))
        let completed = try #require(run.events(named: "firmware_completed").last)
        #expect((completed["result"] as? Int ?? (completed["a"] as? [Int])?.first) == 0, "\(completed)")
        let version = try #require(run.events(named: "version").last)
        #expect(version["major"] as? Int == 1 && version["minor"] as? Int == 9 && version["build"] as? Int == 0, "\(version)")
        #expect(run.state.firmwareVersion == FirmwareVersion(major: 1, minor: 9, build: 0))
        #expect(run.state.loaderVersion == FirmwareVersion(major: 1, minor: 1, build: 0))
    }

    @Test("connects, reads the unit's version and battery, sets a region and reports the scene's tags with the counts sent")
    func connectVersionBatteryRegionInventory() throws {
        let run = try VendorInterop.session(scene: Self.scene, steps: ["connect", "version", "battery", "set-region", "1",
                                                                         "inventory", "3", "1", "expect-tags", "3"]) {
            $0.region = nil
            $0.provisioning.userHasSetRegion = false
            $0.hardwareRevision = 6
            $0.batteryPercent = 87
            $0.firmwareVersion = FirmwareVersion(major: 1, minor: 8, build: 0)
        }
        #expect(run.has("connection", ["name": "CONNECTED"]))
        let version = try #require(run.events(named: "version").last)
        #expect(version["protocol"] as? Int == 20)
        #expect(version["hardware_type"] as? Int == 5)
        #expect(version["hardware_revision"] as? Int == 6)
        #expect(version["major"] as? Int == 1 && version["minor"] as? Int == 8 && version["build"] as? Int == 0)
        #expect(version["serial"] as? Int == Int(run.state.serialNumber))
        #expect(version["hardware_type_name"] as? String == "GR-1")
        let battery = try #require(run.events(named: "battery").last)
        #expect(battery["percent"] as? Int == 87)
        #expect(run.has("region_set", ["index": 1, "result": 0]))
        #expect(run.state.region?.number == 2, "the unit stored the region the host set (vendor index 1)")
        let tags = run.events(named: "tag")
        for epc in [Self.e1, Self.e2, Self.e3] {
            #expect(tags.contains { $0["epc"] as? String == epc && $0["first_find"] as? Bool == true }, "first find of \(epc)")
        }
        #expect(run.has("step_result", ["step": "expect-tags", "ok": true]) || run.has("step", ["step": "expect-tags", "ok": true]))
        // The host's count of reads per tag is the sum of the finds the reader reported.
        let log = try #require(run.inventoryLog.last)
        for (epc, finds) in log.finds {
            let last = tags.last { $0["epc"] as? String == VendorInterop.hexString(epc) }
            #expect(last?["total_reads"] as? Int == finds, "total reads of \(VendorInterop.hexString(epc))")
        }
    }

    @Test("live: the entry the vendor's library sends with SetRegion is VendorRegionTable's, byte for byte",
          arguments: [0, 1, 13, 17])
    func vendorTableIsWhatTheLibrarySends(index: Int) throws {
        let run = try VendorInterop.session(scene: Self.scene, steps: ["connect", "set-region", String(index)])
        #expect(run.has("region_set", ["index": index, "result": 0]))
        // What the emulated unit received (the 119 bytes SetRegion carries, padding 0).
        let received = try #require(run.state.regionTable)
        #expect(received.encode() == VendorRegionTable.entries[index].encode(), "index \(index)")
    }

    @Test("a Geiger counter with a 40 ms history (below what the emulated unit once took) is set and clicks through a locate")
    func geigerShortHistory() throws {
        // The vendor's setGeigerCounterSound sends any value its API takes; a unit that NACKed
        // it made the vendor host retry eight times and reset, unusable to the vendor's app.
        let run = try VendorInterop.session(scene: Self.scene, steps: ["connect", "geiger-sound", "1000", "20", "2.5", "10", "40",
                                                                         "inventory-start", "1", "wait", "2", "inventory-stop"])
        #expect(run.has("step_result", ["step": "geiger-sound", "ok": true]))
        #expect(run.has("inventory_stopped", ["ok": true]))
        #expect(run.events(named: "connection").filter { $0["name"] as? String == "CONNECTED" }.count == 1,
                "the link was never reset")
        #expect(run.soundLog.clicks > 0, "the locate (Geiger sound type) clicked")
    }

    @Test("completes each tag access with the field's result codes")
    func tagAccess() throws {
        let steps = ["connect", "inventory-start", "1", "wait", "1",
                     "read-tag", Self.e1, "3", "0", "4", "4",
                     "write-tag", Self.e1, "3", "0", "11112222",
                     // lock-tag EPC MASK_AND_ACTION PASSWORD (the JNI's argument order):
                     // USER writable-mask, no password; then tag 2 with a wrong password.
                     "lock-tag", Self.e1, "0x800", "0",
                     "lock-tag", Self.e2, "0x800", "0x11111111",
                     "program-tag", Self.e3, "e20034120000000000000abd",
                     "change-power", "20", "15", "25",
                     "inventory-stop"]
        let run = try VendorInterop.session(scene: Self.scene, steps: steps)
        #expect(run.has("tag_read", ["epc": Self.e1, "data": "a0a1a2a3", "result": 0]))
        let accessed = run.events(named: "tag_accessed")
        #expect(accessed.contains { $0["epc"] as? String == Self.e1 && $0["result"] as? Int == 0 }, "write and lock OK")
        #expect(accessed.filter { $0["epc"] as? String == Self.e1 && $0["result"] as? Int == 0 }.count == 2, "write and lock")
        #expect(accessed.contains { $0["epc"] as? String == Self.e2 && $0["result"] as? Int == 1 }, "lock with a wrong password")
        #expect(run.has("tag_programmed", ["new_epc": "e20034120000000000000abd", "result": 0]))
        #expect(run.has("power_changed", ["success": true]))
        #expect(run.has("inventory_stopped", ["ok": true]))
        #expect(run.fieldEPCs.contains("e20034120000000000000abd"), "the new EPC is in the field")
    }

    @Test("passes AutoConfig's echo test: every echo round of a setting comes back, and a completed AutoConfig succeeds")
    func autoConfig() throws {
        // A full AutoConfig takes 40-90 s of real time, depending on how many settings it
        // tries: one lost answer fails a step (seen at 12 and 36 spb on this loaded machine,
        // where the host's stream also reports underruns), and it falls back to a slower one.
        // So the check is bounded: within 60 s at least one setting passes all its rounds,
        // and if AutoConfig completes, it reports success.
        let run = try VendorInterop.session(scene: Self.scene, steps: ["autoconfig", "12", "150"], timeLimit: 60)
        let progress = run.events(named: "autoconfig_progress")
        let passedSetting = progress.contains { event in
            guard let of = event["of"] as? Int, let rounds = event["rounds"] as? Int else { return false }
            return rounds > 0 && of == rounds - 1 && event["success"] as? Bool == true
        }
        #expect(passedSetting, "a setting passed every echo round")
        #expect(run.events(named: "rx").count >= 10, "the library received the emulated reader's answers")
        if let done = run.events(named: "autoconfig_completed").last {
            #expect(done["success"] as? Bool == true)
        }
    }
}

/// One vendorhost session against a ``EmulatedGrokker``.
struct VendorInteropRun {
    var events: [[String: Any]]
    var state: DeviceState
    var inventoryLog: [InventoryLogEntry]
    var fieldEPCs: [String]
    var soundLog: SoundLog

    func events(named name: String) -> [[String: Any]] { events.filter { $0["event"] as? String == name } }

    /// Whether an event of that name has every field equal to the given values.
    func has(_ name: String, _ fields: [String: Any]) -> Bool {
        events(named: name).contains { event in
            fields.allSatisfy { key, value in
                switch value {
                case let v as Int: event[key] as? Int == v
                case let v as Bool: event[key] as? Bool == v
                case let v as String: event[key] as? String == v
                default: false
                }
            }
        }
    }
}

enum VendorInterop {
    static var sdk: String? {
        guard let path = ProcessInfo.processInfo.environment["GROKCTL_VENDOR_SDK"], !path.isEmpty else { return nil }
        return FileManager.default.isReadableFile(atPath: path) ? path : nil
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The harness, built once per test process.
    nonisolated(unsafe) private static var built: String?
    private static let lock = NSLock()

    static func harness() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let built { return built }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("grok-vendor-harness-\(getpid())").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: root + "/scripts/vendor-harness.sh")
        p.arguments = [dir]
        try p.run()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0, "scripts/vendor-harness.sh failed")
        try #require(FileManager.default.isExecutableFile(atPath: dir + "/vendorhost"), "the harness built no vendorhost")
        built = dir
        return dir
    }

    static func hexString(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Runs vendorhost with `steps` against a fresh emulated Grokker (its state set by
    /// `state`) until vendorhost exits; returns its events and the unit's state afterwards.
    static func session(scene: RFScene, steps: [String], timeLimit: Double = 60,
                        state: (inout DeviceState) -> Void = { _ in }) throws -> VendorInteropRun {
        let build = try harness()
        let scratch = TemporaryDirectory("grok-interop")
        let work = scratch.path
        defer {
            let keep = FileManager.default.temporaryDirectory.path + "/grok-interop-last-\(steps[0]).jsonl"
            try? FileManager.default.removeItem(atPath: keep)
            try? FileManager.default.copyItem(atPath: work + "/host.jsonl", toPath: keep)
        }
        let h2p = work + "/h2p", p2h = work + "/p2h", events = work + "/host.jsonl"
        try #require(mkfifo(h2p, 0o600) == 0 && mkfifo(p2h, 0o600) == 0, "mkfifo")

        var rng = SplitMix64(seed: 20)
        let store = try DeviceStateStore.openOrCreate(deviceDirectory: work + "/unit", using: &rng)
        try store.update { s in
            s.region = RegionSetting(name: "FCC (US), IC (Canada)", number: 1)
            s.provisioning.userHasSetRegion = true
            state(&s)
        }
        let grokker = try EmulatedGrokker(store: store, scene: scene)

        let host = Process()
        host.executableURL = URL(fileURLWithPath: build + "/vendorhost")
        host.arguments = ["--sdk", sdk ?? "", "--pcm-out", h2p, "--pcm-in", p2h, "--events", events, "--trace"] + steps
        host.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try host.run()
        let started = Date()
        let port = try RawPipePort(inputPath: h2p, outputPath: p2h)
        _ = try? DeviceRunner.run(grokker, on: port, shouldStop: { Date().timeIntervalSince(started) > timeLimit })
        port.close()
        if host.isRunning { host.terminate() }
        host.waitUntilExit()

        let text = (try? String(contentsOfFile: events, encoding: .utf8)) ?? ""
        let parsed = text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        return VendorInteropRun(events: parsed, state: store.state, inventoryLog: grokker.inventoryLog,
                                fieldEPCs: grokker.field.tags.map { hexString($0.epc) }, soundLog: grokker.soundLog)
    }
}
