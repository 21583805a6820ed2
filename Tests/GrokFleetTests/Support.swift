import Foundation
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokFleet
import GrokLedger
import GrokkerEmulator
import GrokProtocol
import GrokTestSupport
import GrokTUF
import Synchronization
import Testing
import UGrokIt

/// The repository's root (for the shipped profiles and the demo firmware).
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// A fresh directory, removed when the bench goes away.
final class FleetBench: @unchecked Sendable {
    private let directory = TemporaryDirectory("grokfleet")
    var path: String { directory.path }
    var lockDirectory: String { path + "/locks" }

    /// Creates emulated Grokker `index` out of the box with serial `serial`, the demo scene
    /// (so the reference tags are there), and `battery` percent. (The vendor host reads the
    /// percent byte only from board revisions above 3; below, it maps the raw reading through
    /// its curves, which the emulated unit's reading does not follow: battery tests use
    /// revision 6.)
    @discardableResult
    func prepare(_ index: Int, serial: UInt32, battery: UInt8 = 100, revision: UInt8? = nil) throws -> DeviceStateStore {
        let store = try DeviceStateStore.openOrCreate(directory: path, index: index)
        try store.update {
            $0.serialNumber = serial
            $0.batteryPercent = battery
            if let revision { $0.hardwareRevision = revision }
        }
        let scene = repositoryRoot + "/profiles/scenes/demo.json"
        try FileManager.default.copyItem(atPath: scene, toPath: store.deviceDirectory + "/scene.json")
        return store
    }

    /// The state of emulated Grokker `index` as saved.
    func state(_ index: Int) throws -> DeviceState {
        try DeviceStateStore.openOrCreate(directory: path, index: index).state
    }

    /// Emulated Grokker `index` behind a clean simulated cable; with `powerCutAt`, its power
    /// goes off at that sample of its clock (the unit then stays silent for this port).
    func device(_ index: Int, powerCutAt: Int64? = nil) -> FleetDevice {
        let path = self.path
        let unit = DeviceStateStore.deviceDirectory(in: path, index: index)
        return FleetDevice(name: "sim:\(index)", portKey: "sim:" + unit, cardModel: "emulated") {
            let grokker = try EmulatedGrokker(benchDirectory: path, index: index)
            grokker.powerCutAt = powerCutAt
            return SimulatedCablePort(name: "sim:\(index)", sampleRate: 44_100, configuration: .clean, peer: grokker)
        }
    }

    func options(_ mode: FleetMode, cancellation: CancelSwitch = CancelSwitch(), concurrency: Int? = nil) -> FleetRunOptions {
        FleetRunOptions(mode: mode, lockDirectory: lockDirectory, station: "test", operatorName: "tester",
                        maxConcurrentDevices: concurrency, cancellation: cancellation)
    }
}

/// A fleet owner's TUF repository (one Ed25519 key per role, channel `release`) served
/// from a directory, with small `.ugif` images (a 256-byte loader 1.1.0 at 0x0000, a
/// 2048-byte application at 0x1000 that names its version after `GROKVER:`, as the emulated
/// unit reads it), read by a station into a ``FleetFirmware``.
struct FirmwareFixture {
    let fleet: FleetFirmware
    /// The `.ugif` bytes of each version.
    let images: [FirmwareVersion: [UInt8]]
    let served: String
    let rootFile: String

    static let v180 = FirmwareVersion(major: 1, minor: 8, build: 0)
    static let v170 = FirmwareVersion(major: 1, minor: 7, build: 0)

    /// A `.ugif` of `version` (application `applicationBytes` long).
    static func ugif(_ version: FirmwareVersion, applicationBytes: Int = 2048) throws -> (name: String, bytes: [UInt8]) {
        func marked(_ v: (UInt8, UInt8, UInt8), _ count: Int, seed: UInt64) -> [UInt8] {
            var bytes = Array("GROKVER:".utf8) + [v.0, v.1, v.2]
            var state = seed
            while bytes.count < count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            return bytes
        }
        let application = (UInt8(version.major), UInt8(version.minor), UInt8(version.build))
        let image = try UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: application.0, minor: application.1, build: application.2),
                                  date: "2026-11-01", loader: UgifSection(address: 0, bytes: marked((1, 1, 0), 256, seed: 7)),
                                  reader: UgifSection(address: 0x1000, bytes: marked(application, applicationBytes, seed: UInt64(version.minor) + 11)))
        return (image.fileName(name: "test"), Array(image.encoded().utf8))
    }

    /// - Parameter regions: when given, a region catalogue letting board revision 3 choose
    ///   only these region codes is listed too.
    init(directory: String, versions: [FirmwareVersion] = [v180, v170], regions: [String]? = nil,
         applicationBytes: Int = 2048) async throws {
        let now = UTCTime(secondsSince1970: Int64(Date().timeIntervalSince1970))
        let work = directory + "/owner"
        served = directory + "/served"
        rootFile = directory + "/root.json"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        var keys: [String: TUFSigningKey] = [:]
        for role in ["root", "timestamp", "snapshot", "targets", "release"] { keys[role] = try .ed25519() }
        func set(_ role: String) -> TUFRepository.RoleKeySet {
            TUFRepository.RoleKeySet(keys: [(keys[role]!.publicKeyJSON, keys[role]!.keyID)], threshold: 1)
        }
        let repository = try TUFRepository.create(at: work, root: set("root"), timestamp: set("timestamp"), snapshot: set("snapshot"),
                                                  targets: set("targets"), channels: [("release", set("release"))], now: now)
        var images: [FirmwareVersion: [UInt8]] = [:]
        for version in versions {
            let (name, bytes) = try Self.ugif(version, applicationBytes: applicationBytes)
            let description = FirmwareReleaseMetadata(
                version: version, hardwareType: .grokker1, hardwareRevisions: [3, 6],
                appliesTo: [try VersionRange(min: FirmwareVersion(major: 1, minor: 0, build: 0), max: FirmwareVersion(major: 1, minor: 9, build: 0))],
                buildDate: Date(timeIntervalSince1970: 1_790_000_000), readerProtocol: 20, notes: ["en": "Demo \(version)"], serials: nil)
            try repository.addTarget(channel: "release", name: name, bytes: bytes, custom: description.custom(), now: now)
            images[version] = bytes
        }
        if let regions {
            let catalogue = try RegionPublisher.catalogue(
                version: 1, expires: Date().addingTimeInterval(365 * 86_400),
                eligibility: [RegionEligibility(hardwareRevisions: [3], regions: regions)])
            try repository.addTarget(channel: "release", name: "regions.json", bytes: catalogue.payload(),
                                     custom: FirmwareTarget.custom(for: catalogue), now: now)
        }
        for role in ["root", "targets", "release"] { try repository.sign(role: role, with: keys[role]!) }
        try repository.timestamp(with: [keys["timestamp"]!], snapshotKeys: [keys["snapshot"]!], now: now)
        try repository.publish(to: served, now: now)
        try Data(contentsOf: URL(fileURLWithPath: served + "/metadata/1.root.json")).write(to: URL(fileURLWithPath: rootFile))
        let station = StationRepository(stateDirectory: directory + "/state", trustedRootFile: rootFile,
                                        repositoryURL: "file://" + served, fetcher: LocalFileFetcher())
        fleet = try await FleetFirmware.load(FirmwareChannel(repository: station, name: "release"))
        self.images = images
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
                 minimumBattery: Int = 20, firmwareRetries: Int = 0, revision: UInt8 = 3) throws -> Profile {
    Profile(name: "test", region: Profile.RegionPolicy(set: try require(RegionCatalog.find("fcc")), allowed: [try require(RegionCatalog.find("fcc"))]),
            firmware: Profile.FirmwarePolicy(channel: "release", target: target, allowDowngrade: allowDowngrade),
            minimumBatteryPercent: minimumBattery, maintenanceWindows: windows, rollout: rollout,
            provisioning: Profile.ProvisioningPolicy(registerSerial: true, antennaType: 2, hardwareRevision: revision, status: .complete),
            retries: Profile.Retries(connect: 1, region: 0, firmware: firmwareRetries, smokeTest: 0),
            smokeTest: Profile.SmokeTestPolicy(referenceTags: try referenceTags.map { try UgiEpc(hex: $0) }, inventoryType: .inventoryShortRange,
                                               duration: 1.5, minReadsPerSecond: 5, minRSSI: -75))
}

/// A step as the ledger recorded it, read back for a test: its run by key, its step typed.
struct RecordedStep: Sendable {
    var runID: String
    var serial: String
    var step: FleetStep
    var result: StepResult
    var code: String
    var detail: String
}

/// A SQLite ledger of its own (a fresh file) that runs record into, with hooks a test sets
/// on the step records: counting them (to stop a run mid-way), or failing one (the disk
/// filled right after the change was made). Everything else goes to the ledger as it is.
final class TestLedger: LedgerStore {
    let inner: any LedgerStore
    /// Called after each step is recorded, with how many were recorded so far.
    let afterStep: (@Sendable (Int) -> Void)?
    /// The error a step's record fails with instead of being written (`nil`: written).
    let refuseStep: (@Sendable (StepRecord) -> LedgerError?)?
    private let count = Mutex(0)

    init(_ inner: (any LedgerStore)? = nil, afterStep: (@Sendable (Int) -> Void)? = nil,
         refuseStep: (@Sendable (StepRecord) -> LedgerError?)? = nil) throws {
        self.inner = try inner ?? Ledger.open(path: TemporaryDirectory.untilExit("grok-test-ledger") + "/ledger.sqlite")
        self.afterStep = afterStep
        self.refuseStep = refuseStep
    }

    /// What the ledger holds now.
    struct Contents {
        var steps: [RecordedStep]
        var smokeTests: [SmokeTestRecord]
        var devices: [String: DeviceRecord]
        /// The outcome of the latest run.
        var lastOutcome: GrokLedger.RunOutcome?
    }

    var snapshot: Contents {
        get throws {
            let runs = try inner.runs(limit: nil)
            let keys = Dictionary(runs.map { ($0.id, $0.key) }) { first, _ in first }
            let steps = try inner.steps(run: nil, serial: nil).map { record in
                RecordedStep(runID: keys[record.run] ?? "", serial: record.serial, step: try #require(FleetStep(rawValue: record.step)),
                             result: record.result, code: record.code ?? "", detail: record.detail)
            }
            let smokeTests = try (inner as? Ledger)?.smokeTests() ?? []
            let devices = Dictionary(try inner.devices().map { ($0.serial, $0) }) { _, last in last }
            return Contents(steps: steps, smokeTests: smokeTests, devices: devices, lastOutcome: runs.max { $0.id < $1.id }?.outcome ?? nil)
        }
    }

    var location: String { inner.location }
    func beginRun(_ start: RunStart) throws(LedgerError) -> RunID { try inner.beginRun(start) }
    func upsertDevice(_ sighting: DeviceSighting) throws(LedgerError) { try inner.upsertDevice(sighting) }
    func recordStep(_ step: StepRecord) throws(LedgerError) {
        if let refused = refuseStep?(step) { throw refused }
        try inner.recordStep(step)
        let recorded = count.withLock { $0 += 1; return $0 }
        afterStep?(recorded)
    }
    func recordSmokeTest(_ test: SmokeTestRecord) throws(LedgerError) { try inner.recordSmokeTest(test) }
    func finishRun(_ run: RunID, outcome: GrokLedger.RunOutcome, endedAt: Date, reportPath: String?) throws(LedgerError) {
        try inner.finishRun(run, outcome: outcome, endedAt: endedAt, reportPath: reportPath)
    }
    func completedSteps(serial: String, profileSHA256: String) throws(LedgerError) -> Set<String> {
        try inner.completedSteps(serial: serial, profileSHA256: profileSHA256)
    }
    func recordReport(_ run: RunID, path reportPath: String) throws(LedgerError) { try inner.recordReport(run, path: reportPath) }
    func run(_ id: RunID) throws(LedgerError) -> RunRecord? { try inner.run(id) }
    func run(key: String) throws(LedgerError) -> RunRecord? { try inner.run(key: key) }
    func runs(limit: Int?) throws(LedgerError) -> [RunRecord] { try inner.runs(limit: limit) }
    func steps(run: RunID?, serial: String?) throws(LedgerError) -> [StepRecord] { try inner.steps(run: run, serial: serial) }
    func recordLinkSetting(_ record: LinkSettingRecord) throws(LedgerError) { try inner.recordLinkSetting(record) }
    func linkSettings() throws(LedgerError) -> [LinkSettingRecord] { try inner.linkSettings() }
    func devices() throws(LedgerError) -> [DeviceRecord] { try inner.devices() }
    func recordIntent(run: RunID, serial: String, step: String, target: String, at time: Date) throws(LedgerError) -> Int64 {
        try inner.recordIntent(run: run, serial: serial, step: step, target: target, at: time)
    }
    func intents(serial: String?, openOnly: Bool) throws(LedgerError) -> [IntentRecord] { try inner.intents(serial: serial, openOnly: openOnly) }
    func resolveIntent(_ id: Int64, outcome: IntentOutcome, by resolver: RunID, step: StepRecord?, at time: Date) throws(LedgerError) -> Bool {
        try inner.resolveIntent(id, outcome: outcome, by: resolver, step: step, at: time)
    }
    func lockFleetWide(serial: String, run: RunID) throws(LedgerError) -> PostgresLedger.DeviceHolder? {
        try inner.lockFleetWide(serial: serial, run: run)
    }
}

/// A fixed instant: Wednesday 2025-01-15 12:00 UTC.
let wednesdayNoonUTC = Date(timeIntervalSince1970: 1_736_942_400)

/// The emulated units and cables a run opened, by device name, so a delegate callback (on
/// the device's own thread, between two packets) can cut a unit's power or pull its cable.
final class UnitRegistry: @unchecked Sendable {
    struct Unit {
        let grokker: EmulatedGrokker
        let port: SimulatedCablePort
    }

    private let lock = NSLock()
    private var units: [String: Unit] = [:]
    /// Units kept powered across runs (an unplugged unit keeps its battery), by index.
    private var powered: [Int: EmulatedGrokker] = [:]

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Emulated Grokker `index` behind a clean cable. With `keepPower`, the same unit (its
    /// clock and state in memory) serves every run of this registry, as a unit on battery.
    func device(_ bench: FleetBench, _ index: Int, keepPower: Bool = false) -> FleetDevice {
        let path = bench.path
        let unit = DeviceStateStore.deviceDirectory(in: path, index: index)
        return FleetDevice(name: "sim:\(index)", portKey: "sim:" + unit) {
            let grokker: EmulatedGrokker
            if keepPower, let kept = self.locked({ self.powered[index] }) {
                grokker = kept
            } else {
                grokker = try EmulatedGrokker(benchDirectory: path, index: index)
                if keepPower { self.locked { self.powered[index] = grokker } }
            }
            let port = SimulatedCablePort(name: "sim:\(index)", sampleRate: 44_100, configuration: .clean, peer: grokker)
            self.locked { self.units["sim:\(index)"] = Unit(grokker: grokker, port: port) }
            return port
        }
    }

    /// Cuts the power of `device`'s unit `samples` after its clock now (once).
    func cutPower(_ device: String, after samples: Int64) {
        guard let unit = locked({ units[device] }), unit.grokker.powerCutAt == nil, !unit.grokker.poweredOff else { return }
        unit.grokker.powerCutAt = unit.grokker.clock + samples
    }

    /// Pulls `device`'s cable (the unit keeps its power).
    func unplug(_ device: String) {
        locked { units[device] }?.port.plugged = false
    }

    func grokker(_ device: String) -> EmulatedGrokker? { locked { units[device] }?.grokker }
}
