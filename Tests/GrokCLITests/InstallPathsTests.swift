import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("Install layout")
    struct InstallPathsTests {
        struct Line: Decodable {
            let name: String
            let path: String?
            let source: String
            let exists: Bool
        }

        struct Listing: Decodable {
            let paths: [Line]
        }

        /// `grokctl paths --json` run from `directory`.
        static func paths(in directory: String, environment: [String: String]) throws -> [String: Line] {
            let result = try runProgram(try grokctlExecutable().path, ["paths", "--json"], in: directory, environment: environment)
            #expect(result.status == 0, "\(result.standardError)")
            let listing = try JSONDecoder().decode(Listing.self, from: Data(result.standardOutput.utf8))
            return Dictionary(uniqueKeysWithValues: listing.paths.map { ($0.name, $0) })
        }

        @Test func outsideTheCheckoutTheDefaultsResolveAndNothingIsCreatedInTheCurrentDirectory() throws {
            let cwd = try makeTemporaryDirectory(), home = try makeTemporaryDirectory()
            let paths = try Self.paths(in: cwd, environment: ["HOME": home])
            #expect(paths["data"]?.path == packageRoot && paths["data"]?.source == "checkout")
            #expect(paths["profiles"]?.exists == true && paths["demo_channel"]?.exists == true && paths["scenes"]?.exists == true)
            #expect(paths["user_config"]?.path == home + "/.config/grokctl")
            #expect(paths["state"]?.path == home + "/.local/state/grokctl")
            #expect(paths["ledger"]?.path == home + "/.local/state/grokctl/ledger.sqlite")
            #expect(paths["bench"]?.path == home + "/.local/state/grokctl/bench")
            for line in paths.values {
                #expect(!(line.path ?? "/").hasPrefix(cwd), "\(line.name) is in the current directory")
            }
            // A fleet command from here: the shipped profile by its name, and the README's
            // relative `profiles/bench-us.json`, both found beside the program, as is the
            // shipped demo channel (`--repository demo`).
            for profile in ["bench-us", "profiles/bench-us.json"] {
                let run = try runProgram(
                    try grokctlExecutable().path,
                    ["provision", "--profile", profile, "--device", "sim:0", "--dry-run", "--repository", "demo", "--json"],
                    in: cwd, environment: ["HOME": home])
                #expect(run.status == 0, "\(profile): \(run.standardError)")
                #expect(run.standardOutput.contains(#""event":"plan""#), "\(profile): \(run.standardOutput)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: cwd).isEmpty)
        }

        @Test("a shared ledger named in GROKCTL_LEDGER is listed without its password")
        func sharedLedgerPasswordIsMasked() throws {
            let paths = InstallPaths(environment: [
                "HOME": "/nonexistent-home",
                "GROKCTL_LEDGER": "postgresql://station:s3cret@db.example/fleet?sslmode=require&password=other",
            ])
            let ledger = PathsCommand.lines(paths, settings: try paths.stationSettings(), bench: "/b", benchFromOption: false).first { $0.name == "ledger" }
            #expect(ledger?.path == "postgresql://station:***@db.example/fleet?sslmode=require&password=***")
            #expect(ledger?.source == "environment")
        }

        @Test func xdgDirectoriesAndEnvironmentOverridesAreShownWithTheirSource() throws {
            let cwd = try makeTemporaryDirectory(), base = try makeTemporaryDirectory()
            let paths = try Self.paths(in: cwd, environment: [
                "HOME": base + "/home", "XDG_CONFIG_HOME": base + "/config", "XDG_STATE_HOME": base + "/state",
                "GROKCTL_LEDGER": base + "/l.sqlite", "GROKCTL_DATA_DIR": base + "/data",
            ])
            #expect(paths["user_config"]?.path == base + "/config/grokctl" && paths["user_config"]?.source == "xdg")
            #expect(paths["state"]?.path == base + "/state/grokctl" && paths["state"]?.source == "xdg")
            #expect(paths["ledger"]?.path == base + "/l.sqlite" && paths["ledger"]?.source == "environment")
            #expect(paths["data"]?.path == base + "/data" && paths["data"]?.source == "environment")
            #expect(paths["profiles"]?.path == base + "/data/profiles")
            // A relative XDG value is ignored, as the XDG specification says.
            let relative = try Self.paths(in: cwd, environment: ["HOME": base + "/home", "XDG_STATE_HOME": "state"])
            #expect(relative["state"]?.path == base + "/home/.local/state/grokctl" && relative["state"]?.source == "home")
        }

        @Test func installedDataIsFoundUnderThePrefixBesideTheBinary() throws {
            let prefix = try makeTemporaryDirectory()
            try FileManager.default.createDirectory(atPath: prefix + "/share/grokctl/profiles", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
            let paths = InstallPaths(environment: ["HOME": "/nonexistent"], executable: prefix + "/bin/grokctl")
            #expect(paths.data == InstallPaths.Entry(path: prefix + "/share/grokctl", source: .prefix))
            #expect(paths.profiles.path == prefix + "/share/grokctl/profiles")
            try "{}".write(toFile: prefix + "/share/grokctl/profiles/line-7.json", atomically: true, encoding: .utf8)
            #expect(try paths.profile("line-7", option: "--profile") == prefix + "/share/grokctl/profiles/line-7.json")
            #expect(try paths.knownProfiles() == ["line-7"])
        }

        @Test("the README's relative paths of shipped data (the demo image, the hex) are found beside an installed program from any folder; a file in the current directory wins")
        func shippedFilesAreFoundFromAnyFolder() throws {
            let prefix = try makeTemporaryDirectory()
            let demo = prefix + "/share/grokctl/firmware/demo"
            try FileManager.default.createDirectory(atPath: demo, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
            // A name the current directory (the package, in tests) does not have.
            try "x".write(toFile: demo + "/GR-1_9-9-9_installed.ugif", atomically: true, encoding: .utf8)
            let paths = InstallPaths(environment: ["HOME": "/nonexistent"], executable: prefix + "/bin/grokctl")
            #expect(paths.shippedFile("firmware/demo/GR-1_9-9-9_installed.ugif") == demo + "/GR-1_9-9-9_installed.ugif")
            #expect(paths.shippedFile("firmware/demo/none.ugif") == "firmware/demo/none.ugif")
            #expect(paths.shippedFile("-") == "-" && paths.shippedFile("/abs/x.ugif") == "/abs/x.ugif")
            #expect(paths.docs == InstallPaths.Entry(path: prefix + "/share/doc/grokctl", source: .prefix))
            // A relative file that exists where the user is, is theirs.
            let cwd = FileManager.default.currentDirectoryPath
            let mine = "grokctl-test-\(getpid()).ugif"
            try "y".write(toFile: cwd + "/" + mine, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: cwd + "/" + mine) }
            #expect(paths.shippedFile(mine) == mine)
        }

        @Test func aProfileNameNotFoundNamesWhereItLookedAndWhatIsThere() throws {
            let home = try makeTemporaryDirectory()
            let user = home + "/.config/grokctl/profiles"
            try FileManager.default.createDirectory(atPath: user, withIntermediateDirectories: true)
            try "{}".write(toFile: user + "/mine.json", atomically: true, encoding: .utf8)
            let paths = InstallPaths(environment: ["HOME": home], executable: packageRoot + "/.build/debug/grokctl")
            #expect(try paths.profile("mine", option: "--profile") == user + "/mine.json")
            #expect(try paths.profile("bench-us", option: "--profile") == packageRoot + "/profiles/bench-us.json")
            #expect(throws: CLIError.self) { try paths.profile("bench-eu", option: "--profile") }
            do {
                _ = try paths.profile("bench-eu", option: "--profile")
            } catch {
                let message = Localizer.english.message(for: error)
                #expect(message.contains(user) && message.contains("/etc/grokctl/profiles") && message.contains(packageRoot + "/profiles"))
                #expect(message.contains("bench-us, mine, rollout-eu-night, verify-us"), "\(message)")
            }
        }

        @Test func setupInstallsBinaryDataCompletionsAndManPagesIdempotently() throws {
            let prefix = try makeTemporaryDirectory(), home = try makeTemporaryDirectory()
            let environment = ["HOME": home, "GROKCTL_BIN_DIR": try grokctlExecutable().deletingLastPathComponent().path]
            let first = try runProgram("/usr/bin/bash", [packageRoot + "/scripts/setup.sh", "--install", prefix], environment: environment)
            #expect(first.status == 0, "\(first.standardError)")
            #expect(first.standardError.contains("setup: installed \(prefix)/bin/grokctl"))
            let again = try runProgram("/usr/bin/bash", [packageRoot + "/scripts/setup.sh", "--install", prefix], environment: environment)
            #expect(again.status == 0 && !again.standardError.contains("installed \(prefix)"), "\(again.standardError)")
            #expect(again.standardError.contains("up to date"))

            // The installed grokctl finds its data under the prefix, from any folder.
            let cwd = try makeTemporaryDirectory()
            let paths = try runProgram(prefix + "/bin/grokctl", ["paths", "--json"], in: cwd, environment: ["HOME": home])
            let listing = try JSONDecoder().decode(Listing.self, from: Data(paths.standardOutput.utf8))
            let data = listing.paths.first { $0.name == "data" }
            #expect(data?.path == prefix + "/share/grokctl" && data?.source == "prefix", "\(paths.standardOutput)")
            #expect(listing.paths.first { $0.name == "demo_channel" }?.exists == true)
            // The documentation messages point at is installed, where paths says.
            let docs = listing.paths.first { $0.name == "docs" }
            #expect(docs?.path == prefix + "/share/doc/grokctl" && docs?.exists == true)
            #expect(FileManager.default.fileExists(atPath: prefix + "/share/doc/grokctl/profiles.md"))
            // The README's image, by the README's relative name from another folder, and the
            // channel's own copy named by its hash, verify as listed by the shipped demo channel.
            let verify = try runProgram(prefix + "/bin/grokctl", ["firmware", "verify", "firmware/demo/GR-1_1-8-0_demo.ugif",
                                                                  "--repository", "demo", "--state", home + "/tuf", "--json"],
                                        in: cwd, environment: ["HOME": home])
            #expect(verify.status == 0 && verify.standardOutput.contains(#""listed_as":"GR-1_1-8-0_demo.ugif""#), "\(verify.standardError)\(verify.standardOutput)")
            let targets = prefix + "/share/grokctl/firmware/demo-channel/targets/release"
            let hashed = try #require(try FileManager.default.contentsOfDirectory(atPath: targets).first { $0.hasSuffix(".ugif") })
            let byHash = try runProgram(prefix + "/bin/grokctl", ["firmware", "verify", targets + "/" + hashed, "--repository", "demo",
                                                                  "--state", home + "/tuf"], in: cwd, environment: ["HOME": home])
            #expect(byHash.status == 0, "\(byHash.standardError)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: cwd).isEmpty)

            let man = try runProgram("/usr/bin/man", ["-M", prefix + "/share/man", "grokctl-provision"],
                                     environment: ["MANPAGER": "cat", "MANWIDTH": "300", "LANG": "C.UTF-8"])
            #expect(man.status == 0, "\(man.standardError)")
            #expect(collapsed(man.standardOutput).contains(text(.commandProvisionAbstract, .en)), "\(man.standardOutput)")
            let completion = try runProgram("/usr/bin/bash", ["--norc", "-c", """
                source '\(prefix)/share/bash-completion/completions/grokctl'
                COMP_WORDS=(grokctl led); COMP_CWORD=1; COMP_LINE='grokctl led'; COMP_POINT=${#COMP_LINE}
                _grokctl; echo "${COMPREPLY[@]}"
                """])
            #expect(completion.standardOutput == "ledger\n")
            #expect(FileManager.default.fileExists(atPath: prefix + "/share/zsh/site-functions/_grokctl"))
            #expect(FileManager.default.fileExists(atPath: prefix + "/share/fish/vendor_completions.d/grokctl.fish"))

            // The watching station's unit: a system unit under the prefix as root (systemd
            // would need `systemctl link` there), a user unit otherwise; grokctl's path filled in,
            // and valid for systemd where systemd-analyze is installed.
            let unit = getuid() == 0 ? prefix + "/lib/systemd/system/grokctl-watch@.service"
                                     : home + "/.config/systemd/user/grokctl-watch@.service"
            let text = try String(contentsOfFile: unit, encoding: .utf8)
            #expect(text.contains("ExecStart=\(prefix)/bin/grokctl provision --watch --profile %i") && !text.contains("@BINDIR@"))
            #expect(text.contains("Restart=on-failure") && text.contains("KillSignal=SIGTERM"))
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
                let units = try makeTemporaryDirectory()
                try text.replacingOccurrences(of: "User=grokctl\n", with: "").write(toFile: units + "/grokctl-watch@.service",
                                                                                    atomically: true, encoding: .utf8)
                let verify = try runProgram("/usr/bin/systemd-analyze", ["verify", "--man=no", units + "/grokctl-watch@bench-us.service"],
                                            environment: ["HOME": home, "SYSTEMD_LOG_LEVEL": "warning"])
                #expect(verify.status == 0 && verify.standardError.isEmpty, "\(verify.standardError)")
            }
        }

        @Test func pathsInTextNamesEverySourceInTheUsersLanguage() throws {
            let home = try makeTemporaryDirectory()
            let result = try runProgram(try grokctlExecutable().path, ["--lang", "fr", "paths"], environment: ["HOME": home])
            #expect(result.status == 0)
            #expect(result.standardOutput.contains(text(.pathsSourceCheckout, .fr)))
            #expect(result.standardOutput.contains(text(.pathsHeadingSource, .fr)))
        }
    }
}
