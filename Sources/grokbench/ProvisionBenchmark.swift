import Foundation

/// A real fleet provision, as a bench run does it: `grokctl provision --profile
/// profiles/bench-us.json --device sim:0-(N-1)` (the grokctl built beside grokbench) on a
/// fresh bench whose N emulated Grokkers each hold the demo scene file
/// (`profiles/scenes/demo.json` as `sim-K/scene.json`) and sit behind a clock-offset
/// cable (each unit's crystal error, -200...+200 ppm drawn from its serial, as grokctl's
/// `sim:N` always has), unattended, from the shipped demo channel: region, firmware
/// 1.7.3 → 1.8.0, smoke tests, ledger, report. Peak RSS is the grokctl process's own
/// (`wait4`'s `ru_maxrss`, what `/usr/bin/time -v` prints), per-device times are the
/// report's step durations summed per Grokker.
enum ProvisionBenchmark {
    /// `--devices N` (default 64).
    static func run() -> Figures {
        var figures = Figures()
        let arguments = CommandLine.arguments
        var devices = 64
        if let i = arguments.firstIndex(of: "--devices"), i + 1 < arguments.count, let n = Int(arguments[i + 1]), (1...64).contains(n) {
            devices = n
        }
        let root = packageRoot()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("grokbench-provision-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: work) }
        do {
            for index in 0..<devices {
                let unit = work + "/bench/sim-\(index)"
                try FileManager.default.createDirectory(atPath: unit, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: root + "/profiles/scenes/demo.json", toPath: unit + "/scene.json")
            }
        } catch {
            fail("cannot make the bench in \(work): \(error)")
        }
        let report = work + "/report.json"
        let arguments_ = ["--bench", work + "/bench", "--json", "provision", "--profile", root + "/profiles/bench-us.json",
                          "--device", "sim:0-\(devices - 1)", "--unattended", "--ledger", work + "/ledger.sqlite",
                          "--report", report, "--repository", root + "/firmware/demo-channel",
                          "--trusted-root", root + "/firmware/demo-channel/root.json", "--state", work + "/tuf-state",
                          "--station", "grokbench"]
        let start = monotonic()
        let (status, usage) = spawn(grokctl(), arguments_, environment: ["HOME=" + work, "XDG_STATE_HOME=" + work + "/state",
                                                                         "PATH=/usr/bin:/bin"],
                                    output: work + "/events.jsonl")
        let wall = monotonic() - start
        var perDevice: [Double] = []
        var done = 0
        if let data = FileManager.default.contents(atPath: report),
           let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
           let units = object["devices"] as? [[String: Any]] {
            for unit in units {
                let steps = unit["steps"] as? [[String: Any]] ?? []
                perDevice.append(steps.reduce(0) { $0 + (($1["duration_s"] as? Double) ?? 0) })
                if unit["outcome"] as? String == "done" { done += 1 }
            }
        }
        perDevice.sort()
        figures.set("devices", Double(devices))
        figures.set("done", Double(done))
        figures.set("exit_status", Double(status))
        figures.set("wall_s", wall, digits: 2)
        figures.set("peak_rss_mb", Double(usage.ru_maxrss) / 1024, digits: 1)
        let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        figures.set("cpu_s", cpu, digits: 2)
        // What one more Grokker costs: flat as the fleet grows when nothing is shared.
        figures.set("cpu_s_per_device", cpu / Double(devices), digits: 3)
        if !perDevice.isEmpty {
            figures.set("device_s_min", perDevice[0], digits: 2)
            figures.set("device_s_median", perDevice[perDevice.count / 2], digits: 2)
            figures.set("device_s_max", perDevice[perDevice.count - 1], digits: 2)
        }
        return figures
    }

    /// The checkout this grokbench was built from (where `profiles/` is), else the current directory.
    static func packageRoot() -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        if FileManager.default.fileExists(atPath: source + "/profiles/bench-us.json") { return source }
        return FileManager.default.currentDirectoryPath
    }

    /// grokctl beside this executable.
    static func grokctl() -> String {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let path = here.appendingPathComponent("grokctl").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            fail("no grokctl beside grokbench (\(path)); build it: swift build -c release --product grokctl")
        }
        return path
    }

    /// Runs `path` with `arguments`, stdin from /dev/null, stdout to `output`, stderr
    /// inherited; the exit status and the child's resource usage.
    static func spawn(_ path: String, _ arguments: [String], environment: [String], output: String) -> (Int32, rusage) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let words: [String] = [path] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard rc == 0 else { fail("cannot start \(path): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), usage)
    }

    static func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }

    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("grokbench fleet: \(message)\n".utf8))
        exit(1)
    }
}
