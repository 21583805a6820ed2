import Foundation
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokFleet
import GrokkerEmulator
import GrokProtocol
import Synchronization
import UGrokIt

/// The repository's root (for the shipped profiles and the demo firmware).
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// A fresh directory, removed when the bench goes away.
final class FleetBench: @unchecked Sendable {
    let path: String
    let lockDirectory: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("grokfleet-\(UUID().uuidString)").path
        lockDirectory = path + "/locks"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Creates emulated Grokker `index` out of the box with serial `serial`, the demo scene
    /// (so the reference tags are there), and `battery` percent.
    @discardableResult
    func prepare(_ index: Int, serial: UInt32, battery: UInt8 = 100) throws -> DeviceStateStore {
        let store = try DeviceStateStore.openOrCreate(directory: path, index: index)
        try store.update {
            $0.serialNumber = serial
            $0.batteryPercent = battery
        }
        let scene = repositoryRoot + "/profiles/scenes/demo.json"
        try FileManager.default.copyItem(atPath: scene, toPath: store.deviceDirectory + "/scene.json")
        return store
    }

    /// The state of emulated Grokker `index` as saved.
    func state(_ index: Int) throws -> DeviceState {
        try DeviceStateStore.openOrCreate(directory: path, index: index).state
    }

    /// Emulated Grokker `index` behind a clean simulated cable; images in `failing` crash at boot.
    func device(_ index: Int, failing: Set<[UInt8]> = []) -> FleetDevice {
        let path = self.path
        let unit = DeviceStateStore.deviceDirectory(in: path, index: index)
        return FleetDevice(name: "sim:\(index)", portKey: "sim:" + unit) {
            let grokker = try EmulatedGrokker(benchDirectory: path, index: index)
            grokker.failingImages = failing
            return SimulatedCablePort(name: "sim:\(index)", sampleRate: 44_100, configuration: .clean, peer: grokker)
        }
    }

    func options(_ mode: FleetMode, cancellation: CancelSwitch = CancelSwitch(), concurrency: Int? = nil) -> FleetRunOptions {
        FleetRunOptions(mode: mode, lockDirectory: lockDirectory, station: "test", operatorName: "tester",
                        maxConcurrentDevices: concurrency, cancellation: cancellation)
    }
}

/// A signed release channel with small packages built from firmware/demo/grokker-app-1.8.0.hex
/// (its first 4 KiB), in a verified cache.
struct FirmwareFixture {
    let channels: FirmwareChannels
    /// SHA-256 of each version's application image.
    let imageHashes: [FirmwareVersion: [UInt8]]

    static let v180 = FirmwareVersion(major: 1, minor: 8, build: 0)
    static let v170 = FirmwareVersion(major: 1, minor: 7, build: 0)

    /// - Parameter regions: when given, a signed region catalogue letting board revision 3
    ///   choose only these region codes is cached too.
    init(directory: String, versions: [FirmwareVersion] = [v180, v170], regions: [String]? = nil) throws {
        let text = try String(contentsOfFile: repositoryRoot + "/firmware/demo/grokker-app-1.8.0.hex", encoding: .utf8)
        let hex = try IntelHex.parse(text, file: "grokker-app-1.8.0.hex")
        let flat = try require(hex.flattened())
        let key = try Ed25519PrivateKey.generate()
        let trusted = try TrustedKeys(keys: [.init(name: "fleet", publicKey: key.publicKey)], threshold: 1)
        var packages: [(String, FirmwarePackage)] = []
        var hashes: [FirmwareVersion: [UInt8]] = [:]
        for (n, version) in versions.enumerated() {
            var bytes = Array(flat.bytes.prefix(4096))
            for i in stride(from: 64 + n, to: bytes.count, by: 509) where n > 0 { bytes[i] ^= 0x5A }
            let application = try IntelHex(segments: [MemorySegment(address: flat.address, bytes: bytes)])
            let descriptor = FirmwareDescriptor(
                hardwareType: .grokker1, hardwareRevisions: [3], version: version,
                buildDate: Date(timeIntervalSince1970: 1_790_000_000), readerProtocolVersion: 20,
                appliesTo: [try VersionRange(min: FirmwareVersion(major: 1, minor: 0, build: 0), max: FirmwareVersion(major: 1, minor: 9, build: 0))])
            let package = try FirmwarePublisher.pack(application: application, description: PackDescription(descriptor: descriptor))
            packages.append(("grokker-\(version)", package))
            hashes[version] = FirmwareImage(package: package).descriptor.sha256
        }
        let entries = packages.map { FirmwarePublisher.entry(for: $0.1, name: $0.0, file: "\($0.0).grokfw", notes: ["en": "Demo \($0.0)"]) }
        let metadata = ChannelMetadata(channel: "release", version: 1, expires: Date().addingTimeInterval(365 * 86_400), updates: entries)
        let envelope = try FirmwarePublisher.envelope(for: metadata).signed(by: [key]).encoded()
        let cache = try FirmwareCache(directory: directory, verifier: MetadataVerifier(trustedKeys: trusted))
        let verified = try cache.store(metadata: envelope, channel: "release", source: "test")
        for (name, package) in packages {
            let entry = try require(verified.metadata.entry(named: name))
            let partial = cache.partialPath(for: entry)
            try FileManager.default.createDirectory(atPath: (partial as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(package.encoded()).write(to: URL(fileURLWithPath: partial))
            try cache.addImage(partialFile: partial, name: name, in: verified)
        }
        if let regions {
            let catalogue = try RegionPublisher.catalogue(
                version: 1, expires: Date().addingTimeInterval(365 * 86_400),
                eligibility: [RegionEligibility(hardwareRevisions: [3], regions: regions)])
            try cache.storeRegions(try RegionPublisher.envelope(for: catalogue).signed(by: [key]).encoded(), source: "test")
        }
        channels = FirmwareChannels(cache: cache)
        imageHashes = hashes
    }
}

struct FixtureMissing: Error {}

func require<T>(_ value: T?) throws -> T {
    guard let value else { throw FixtureMissing() }
    return value
}

/// The reference tags of profiles/scenes/demo.json closest to the reader (0.3, 0.6, 1.2 m).
let referenceTags = ["3034257BF4789000000003E8", "3034257BF4DA1C00000003EF", "3034257BF4789040000003ED"]

/// A bench-provisioning profile for tests: FCC, firmware 1.8.0 from the release channel,
/// factory provisioning, a short smoke test.
func testProfile(target: Profile.FirmwareTarget = .latest, allowDowngrade: Bool = false,
                 windows: MaintenanceWindows? = nil, rollout: RolloutPolicy? = nil,
                 minimumBattery: Int = 20, firmwareRetries: Int = 0) throws -> Profile {
    Profile(name: "test", region: Profile.RegionPolicy(set: try require(RegionCatalog.find("fcc")), allowed: [try require(RegionCatalog.find("fcc"))]),
            firmware: Profile.FirmwarePolicy(channel: "release", target: target, allowDowngrade: allowDowngrade),
            minimumBatteryPercent: minimumBattery, maintenanceWindows: windows, rollout: rollout,
            provisioning: Profile.ProvisioningPolicy(registerSerial: true, antennaType: 2, hardwareRevision: 3, status: .complete),
            retries: Profile.Retries(connect: 1, region: 0, firmware: firmwareRetries, smokeTest: 0),
            smokeTest: Profile.SmokeTestPolicy(referenceTags: try referenceTags.map { try UgiEpc(hex: $0) }, inventoryType: .inventoryShortRange,
                                               duration: 0.5, minReadsPerSecond: 5, minRSSI: -75))
}

/// The ledger, in memory (tests only; the SQLite ledger implements the same protocol).
final class InMemoryRunRecorder: RunRecorder {
    struct Contents {
        var runs: [RunInfo] = []
        var summaries: [RunSummary] = []
        var steps: [StepRecord] = []
        var smokeTests: [SmokeTestRecord] = []
        var devices: [String: DeviceRecord] = [:]
    }

    private let contents = Mutex(Contents())
    /// Called after each step is recorded, with how many were recorded so far (to cancel a run mid-way).
    let afterStep: (@Sendable (Int) -> Void)?

    init(afterStep: (@Sendable (Int) -> Void)? = nil) {
        self.afterStep = afterStep
    }

    var snapshot: Contents { contents.withLock { $0 } }

    func beginRun(_ run: RunInfo) throws { contents.withLock { $0.runs.append(run) } }

    func recordStep(_ step: StepRecord) throws {
        let count = contents.withLock { c -> Int in
            c.steps.append(step)
            return c.steps.count
        }
        afterStep?(count)
    }

    func recordSmokeTest(_ result: SmokeTestRecord) throws { contents.withLock { $0.smokeTests.append(result) } }
    func upsertDevice(_ device: DeviceRecord) throws { contents.withLock { $0.devices[device.serial] = device } }
    func finishRun(_ summary: RunSummary) throws { contents.withLock { $0.summaries.append(summary) } }

    func completedSteps(serial: String) throws -> [StepRecord] {
        contents.withLock { $0.steps.filter { $0.serial == serial && ($0.result == .done || $0.result == .skipped) } }
    }
}

/// A fixed instant: Wednesday 2025-01-15 12:00 UTC.
let wednesdayNoonUTC = Date(timeIntervalSince1970: 1_736_942_400)
