// swift-tools-version: 6.0
// grokctl and the UGrokIt library: run a fleet of Grokker RFID readers from Linux.
// Layers and allowed imports are described in docs/architecture.md.
import Foundation
import PackageDescription

let package = Package(
    name: "grokctl",
    products: [
        .library(name: "UGrokIt", targets: ["UGrokIt"]),
        .executable(name: "grokctl", targets: ["grokctl"]),
        .executable(name: "grokbench", targets: ["grokbench"]),
        .executable(name: "grokfuzz", targets: ["grokfuzz"]),
    ],
    targets: [
        // MARK: Basics (below every library)

        /// Coded errors and the message catalog's rules (placeholders, plurals, numbers);
        /// the English text comes from Sources/GrokCommandLine/Localization/en.json, built in.
        .target(name: "GrokBasics", plugins: ["CatalogCodegen"]),
        /// Generates the English table (GrokBasics) and `MessageKey` (GrokCommandLine) from the catalog.
        .executableTarget(name: "catalog-codegen"),
        .plugin(name: "CatalogCodegen", capability: .buildTool(), dependencies: ["catalog-codegen"]),

        // MARK: C libraries (module map + header only; Debian packages provide them)

        /// ALSA: the sound cards a Grokker plugs into.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        /// libudev: udevd's events when a sound card is plugged in or pulled out.
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        /// zlib: deflate-compressed firmware blocks.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        /// OpenSSL libcrypto: SHA-256/512, Ed25519, ECDSA and RSA-PSS signatures.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        /// libcurl: HTTPS downloads from update servers.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        /// SQLite: the provisioning ledger.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        /// libpq: the PostgreSQL client, for a ledger shared by many stations.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),

        // MARK: The audio link

        /// Audio ports: ALSA, WAV recording, the in-memory cable with impairments; sound cards
        /// coming and going (udev, inotify) and their jacks' events.
        .target(name: "GrokAudio", dependencies: ["GrokBasics", "CALSA", "CUdev"]),
        /// The modem ("byte protocol") and the packet protocol, counted in samples.
        .target(name: "GrokLink", dependencies: ["GrokBasics", "GrokAudio"]),
        /// Typed commands and responses shared by host and emulated device.
        .target(name: "GrokProtocol", dependencies: ["GrokBasics"]),

        // MARK: Firmware

        /// SHA-256/512, Ed25519, ECDSA P-256 and RSA-PSS through OpenSSL, deflate and CRC-32 through zlib; no C type escapes.
        .target(name: "GrokCrypto", dependencies: ["GrokBasics", "COpenSSL", "CZlib"]),
        /// HTTPS (and file://) downloads from update servers and USB sticks, on libcurl.
        .target(name: "GrokNet", dependencies: ["GrokBasics", "CCurl"]),
        /// Firmware packages, Intel HEX, signed channel metadata (k of n), the verified cache, publishing.
        .target(name: "GrokFirmware", dependencies: ["GrokBasics", "GrokCrypto", "GrokProtocol", "GrokTUF"]),

        // MARK: Updates (The Update Framework)

        /// A TUF client (specification 1.0): strict and canonical JSON, ed25519/ECDSA/RSA-PSS keys, the client workflow.
        .target(name: "GrokTUF", dependencies: ["GrokBasics", "GrokCrypto", "GrokNet"]),
        /// The client CLI the TUF conformance suite drives (scripts/tuf-conformance-client).
        .executableTarget(name: "tuf-conformance-client", dependencies: ["GrokTUF", "GrokNet"]),

        // MARK: Devices and the SDK

        /// The emulated Grokker: reachable only through audio samples.
        .target(name: "GrokkerEmulator", dependencies: ["GrokBasics", "GrokProtocol", "GrokLink", "GrokAudio"]),
        /// The SDK: one Reader per audio port, the Ugi facade.
        .target(name: "UGrokIt", dependencies: ["GrokBasics", "GrokProtocol", "GrokLink", "GrokAudio", "GrokCrypto", "GrokFirmware", "GrokNet"]),

        // MARK: Fleet

        /// The provisioning ledger: devices, runs, steps and smoke tests in SQLite; CSV/JSON export.
        .target(name: "GrokLedger", dependencies: ["GrokBasics", "CSQLite", "GrokPostgres", "GrokCrypto"]),
        /// A PostgreSQL client on libpq: connections, parameterized statements, transactions,
        /// advisory locks; no libpq type escapes.
        .target(name: "GrokPostgres", dependencies: ["CLibPQ"]),
        /// The publisher's work: the fleet owner's TUF repository (`grokctl repo`) and `.ugif`
        /// images packed from Intel HEX (`grokctl firmware pack`).
        .target(name: "GrokPublish", dependencies: ["GrokBasics", "GrokCrypto", "GrokTUF", "GrokFirmware", "GrokProtocol"]),
        /// Fleet runs: profiles, the configuration delegate and its policy, the per-device
        /// workflow (provision, region, firmware, smoke tests), locking, the run recorder seam;
        /// the fleet session (prepare, run, report); devices and their ports (sim:, alsa:, pcm:).
        .target(name: "GrokFleet", dependencies: ["GrokBasics", "UGrokIt", "GrokkerEmulator", "GrokFirmware", "GrokLedger", "GrokProtocol", "GrokAudio", "GrokLink", "GrokCrypto", "GrokTUF", "GrokNet"]),

        // MARK: Command line and benchmarks

        /// The command-line toolkit (as swift-argument-parser is to its tools): declarations,
        /// parsing, help, man pages and completions; the console, tables and live boards; the
        /// languages, the message catalogs and their `MessageKey`.
        .target(
            name: "GrokCommandLine",
            dependencies: ["GrokBasics"],
            resources: [.copy("Localization")],
            plugins: ["CatalogCodegen"]
        ),
        /// grokctl's commands, their declarations and the use cases' rendering.
        .target(
            name: "GrokCLI",
            dependencies: ["GrokBasics", "GrokCommandLine", "UGrokIt", "GrokkerEmulator", "GrokProtocol", "GrokLink", "GrokAudio", "GrokFirmware", "GrokNet", "GrokCrypto",
                           "GrokFleet", "GrokLedger", "GrokTUF", "GrokPublish"]
        ),
        /// The grokctl executable: an entry point only.
        .executableTarget(name: "grokctl", dependencies: ["GrokCLI"]),
        /// Benchmarks; run in release builds, print JSON.
        .executableTarget(
            name: "grokbench",
            dependencies: ["UGrokIt", "GrokkerEmulator", "GrokProtocol", "GrokLink", "GrokAudio", "GrokCrypto", "GrokFirmware",
                           "GrokLedger", "GrokFleet", "PostgresTestSupport"]
        ),
        // MARK: Examples (the vendor guide's snippets, on Linux)

        .target(name: "ExampleBench", dependencies: ["UGrokIt", "GrokkerEmulator", "GrokProtocol", "GrokAudio"],
                path: "Examples/ExampleBench"),
        .executableTarget(name: "InventoryAllTags", dependencies: ["ExampleBench", "UGrokIt"], path: "Examples/InventoryAllTags"),
        .executableTarget(name: "FindTags", dependencies: ["ExampleBench", "UGrokIt"], path: "Examples/FindTags"),
        .executableTarget(name: "ProgramTag", dependencies: ["ExampleBench", "UGrokIt"], path: "Examples/ProgramTag"),
        .executableTarget(name: "TagEvents", dependencies: ["ExampleBench", "UGrokIt"], path: "Examples/TagEvents"),

        /// Fuzz entry points for the packet, command and firmware decoders (see docs/fuzzing.md).
        .executableTarget(name: "grokfuzz", dependencies: ["GrokProtocol", "GrokLink", "GrokAudio", "GrokFirmware", "GrokCrypto"]),

        // MARK: Tests (one target per source target)

        .testTarget(name: "SystemLibraryTests", dependencies: ["CALSA", "CUdev", "CZlib", "COpenSSL", "CCurl", "CSQLite", "CLibPQ"]),
        /// What the test targets share: temporary directories made and removed, seeded test bytes.
        .target(name: "GrokTestSupport", dependencies: ["GrokBasics"], path: "Tests/GrokTestSupport"),
        /// A host and an emulated Grokker on a recorded simulated cable, for the `audio decode` tests.
        .target(name: "DeviceTestSupport", dependencies: ["GrokTestSupport", "GrokAudio", "GrokLink", "GrokkerEmulator", "GrokProtocol", "UGrokIt"],
                path: "Tests/DeviceTestSupport"),
        .testTarget(name: "GrokBasicsTests", dependencies: ["GrokBasics", "GrokTestSupport"]),
        /// A real nginx on loopback with a test CA and a scripted faulty upstream, for the
        /// download tests (GrokNet's and the firmware channels').
        .target(name: "NetTestSupport", dependencies: ["GrokTestSupport"], path: "Tests/NetTestSupport"),
        .testTarget(name: "GrokNetTests", dependencies: ["GrokNet", "NetTestSupport"]),
        .testTarget(name: "GrokAudioTests", dependencies: ["GrokBasics", "GrokAudio", "GrokTestSupport"], resources: [.copy("Fixtures")]),
        .testTarget(name: "GrokLinkTests", dependencies: ["GrokBasics", "GrokLink", "GrokAudio", "GrokTestSupport"]),
        .testTarget(name: "GrokCryptoTests", dependencies: ["GrokCrypto", "GrokTestSupport"]),
        .testTarget(name: "GrokTUFTests", dependencies: ["GrokBasics", "GrokTUF", "GrokCrypto", "GrokTestSupport"]),
        .testTarget(name: "GrokFirmwareTests", dependencies: ["GrokFirmware", "GrokCrypto", "GrokProtocol", "GrokTUF", "GrokTestSupport"]),
        .testTarget(name: "GrokProtocolTests", dependencies: ["GrokBasics", "GrokProtocol", "GrokAudio", "GrokTestSupport"]),
        .testTarget(name: "GrokkerEmulatorTests", dependencies: ["GrokBasics", "GrokkerEmulator", "GrokProtocol", "GrokLink", "GrokAudio", "GrokTestSupport"]),
        .testTarget(name: "VendorInteropTests", dependencies: ["GrokBasics", "GrokkerEmulator", "GrokProtocol", "GrokLink", "GrokAudio", "GrokTestSupport"]),
        .testTarget(name: "UGrokItTests", dependencies: ["UGrokIt", "GrokkerEmulator", "GrokAudio", "GrokLink", "GrokProtocol", "GrokCrypto", "GrokFirmware", "GrokNet", "NetTestSupport",
                                                  "GrokBasics", "GrokTestSupport"],
                    exclude: ["Interop"], resources: [.copy("Fixtures")]),
        .testTarget(name: "GrokCLITests", dependencies: ["GrokBasics", "GrokCommandLine", "GrokCLI", "GrokTUF", "GrokAudio", "GrokLink", "GrokFirmware", "GrokNet", "GrokCrypto", "GrokProtocol", "UGrokIt",
                                                         "GrokFleet", "GrokLedger", "GrokkerEmulator", "PostgresTestSupport", "NetTestSupport", "DeviceTestSupport", "GrokTestSupport"]),
        .testTarget(name: "GrokLedgerTests", dependencies: ["GrokBasics", "GrokLedger", "GrokPostgres", "PostgresTestSupport", "GrokTestSupport"]),
        /// A throwaway PostgreSQL cluster (initdb in a temp dir, pg_ctl on a Unix socket) for the tests
        /// and for `grokbench ledger` (which starts its own server).
        .target(name: "PostgresTestSupport", path: "Tests/PostgresTestSupport"),
        .testTarget(name: "GrokPostgresTests", dependencies: ["GrokPostgres", "PostgresTestSupport"]),
        .testTarget(name: "GrokFleetTests", dependencies: ["GrokBasics", "GrokFleet", "GrokLedger", "UGrokIt", "GrokkerEmulator", "GrokAudio", "GrokProtocol", "GrokFirmware", "GrokCrypto", "GrokTUF",
                                                           "GrokTestSupport", "DeviceTestSupport", "PostgresTestSupport", "NetTestSupport"]),
        .testTarget(name: "GrokPublishTests", dependencies: ["GrokBasics", "GrokPublish", "GrokTUF", "GrokFirmware", "GrokCrypto", "GrokProtocol", "GrokTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

/// Modules the suite builds without optimization (see below).
let suiteUnoptimized: Set<String> = ["GrokCLI", "GrokCommandLine", "GrokFleet", "GrokLedger", "GrokPostgres", "GrokTUF", "GrokNet",
                                     "GrokPublish", "grokbench", "grokfuzz", "tuf-conformance-client", "ExampleBench",
                                     "InventoryAllTags", "FindTags", "ProgramTag", "TagEvents", "catalog-codegen"]

// Package-wide strictness, set once.
for target in package.targets where target.type != .system && target.type != .plugin {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableExperimentalFeature("StrictConcurrency"))
    // The tests' own code is built without optimization even in a release build: the
    // libraries under test keep -O (the DSP tests push minutes of audio through them), and
    // the suite's build is most of its time (issue 21: the README's test command).
    if target.type == .test || target.path?.hasPrefix("Tests/") == true {
        settings.append(.unsafeFlags(["-Onone"], .when(configuration: .release)))
    }
    // The suite's own build (scripts/test.sh sets GROKCTL_SUITE_BUILD=1) compiles the modules
    // whose speed no test depends on without optimization too: the DSP, the emulated Grokker
    // and the crypto keep -O. Installs and benchmarks (no variable) keep -O everywhere.
    if ProcessInfo.processInfo.environment["GROKCTL_SUITE_BUILD"] == "1", suiteUnoptimized.contains(target.name) {
        settings.append(.unsafeFlags(["-Onone"], .when(configuration: .release)))
    }
    target.swiftSettings = settings
}
