import Foundation
import GrokBasics
import GrokFirmware
import GrokFleet
import GrokkerEmulator
import GrokProtocol
import GrokTUF
import Synchronization
import Testing
import UGrokIt

/// What a flash job told, in order.
final class FlashLog: Sendable {
    private let events = Mutex<[FlashEvent]>([])

    func record(_ event: FlashEvent) { events.withLock { $0.append(event) } }

    var all: [FlashEvent] { events.withLock { $0 } }

    func started(_ device: Int) -> (name: String, from: String, to: String, bytes: Int)? {
        for case .started(device, let name, let from, let to, let bytes) in all { return (name, from, to, bytes) }
        return nil
    }

    func phases(_ device: Int) -> [FlashPhase] {
        all.compactMap { if case .progress(device, let phase, _, _) = $0 { phase } else { nil } }
    }

    var progressCount: Int { all.count { if case .progress = $0 { true } else { false } } }
}

/// `firmware flash` as a use case: the flash job on emulated Grokkers behind simulated
/// cables, its image from a TUF channel (the fixture's small images) or from a file.
@Suite("The flash job")
struct FlashJobTests {
    /// The fixture's channel as `firmware flash` opens it (listings read, the target checked).
    static func source(_ fixture: FirmwareFixture, directory: String, wanted: FirmwareWanted = .latest) async throws -> FlashJob.Source {
        let station = StationRepository(stateDirectory: directory + "/flash-state", trustedRootFile: fixture.rootFile,
                                        repositoryURL: "file://" + fixture.served, fetcher: LocalFileFetcher())
        return try await FlashJob.prepare(FirmwareChannel(repository: station, name: "release"), wanted: wanted)
    }

    /// A bench of `units` emulated Grokkers out of the box (serials 1001, 1002, ...) and the channel.
    static func bench(units: Int = 1, revision: UInt8? = nil) async throws -> (FleetBench, FirmwareFixture) {
        let bench = FleetBench()
        for index in 0..<units { try bench.prepare(index, serial: 1001 + UInt32(index), revision: revision) }
        return (bench, try await FirmwareFixture(directory: bench.path + "/firmware"))
    }

    static func package(_ version: FirmwareVersion, hardware: String = "GR-1") throws -> FlashJob.Source {
        let (name, bytes) = try FirmwareFixture.ugif(version)
        var image = try UgifImage.parse(String(decoding: bytes, as: UTF8.self), fileName: name)
        if hardware != image.hardwareTypeName {
            image = try UgifImage(hardwareTypeName: hardware, version: image.version, date: "2026-11-01", loader: image.loader,
                                  reader: image.reader)
        }
        return .package(name: name, image)
    }

    static func options(allowDowngrade: Bool = false, allowSameVersion: Bool = false) -> FirmwareUpdateOptions {
        var options = FirmwareUpdateOptions()
        options.allowDowngrade = allowDowngrade
        options.allowSameVersion = allowSameVersion
        return options
    }

    @Test("two units from the channel (1.7.3 -> 1.8.0): loader then reader image, SUCCESS, each answers on 1.8.0; a re-run is up to date")
    func flashFromTheChannel() async throws {
        let (bench, fixture) = try await Self.bench(units: 2)
        let job = FlashJob(source: try await Self.source(fixture, directory: bench.path))
        let log = FlashLog()
        let report = await job.run([bench.device(0), bench.device(1)], events: log.record)
        #expect(report.outcome(stopped: false) == .done && report.updated == 2 && report.failed == 0)
        for device in 0..<2 {
            let started = try #require(log.started(device))
            #expect(started.from == "1.7.3" && started.to == "1.8.0" && started.name == "GR-1_1-8-0_test.ugif")
            #expect(started.bytes == 256 + 2048)
            let phases = log.phases(device)
            #expect(phases.first == .loader && phases.last == .reader, "\(phases)")
            guard case .done(let name, let from, let to, let bytes, let updated) = report.outcomes[device] else {
                Issue.record("\(report.outcomes[device])")
                continue
            }
            #expect(name == "GR-1_1-8-0_test.ugif" && from == "1.7.3" && to == "1.8.0" && bytes == 256 + 2048)
            #expect(updated.result == .success && updated.audioSeconds > 0 && updated.chunks > 0)
            #expect(report.outcomes[device].code == "flash_done")
            #expect(try bench.state(device).firmwareVersion == FirmwareFixture.v180)
        }
        // Each event came once per device, and the finished one last.
        #expect(log.all.count { if case .finished = $0 { true } else { false } } == 2)

        let again = await job.run([bench.device(0)])
        guard case .skipped(let running, let reason) = again.outcomes.first else { Issue.record("\(again.outcomes)"); return }
        #expect(running == "1.8.0" && reason == .upToDate && again.outcomes[0].code == "flash_up_to_date")
        #expect(again.outcome(stopped: false) == .done && again.skipped == 1)
    }

    @Test("the version it runs, from a file or named on the channel, is already up to date (nothing sent, as with nothing newer); an older one named is the vendor's refusal (INCOMPATIBLE_VERSION 103); allowed, each goes")
    func sameVersionAndDowngrade() async throws {
        let (bench, fixture) = try await Self.bench()
        _ = await FlashJob(source: try await Self.source(fixture, directory: bench.path)).run([bench.device(0)])
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)

        let log = FlashLog()
        let same = await FlashJob(source: try Self.package(FirmwareFixture.v180)).run([bench.device(0)], events: log.record)
        let named = await FlashJob(source: try await Self.source(fixture, directory: bench.path, wanted: .version(FirmwareFixture.v180)))
            .run([bench.device(0)], events: log.record)
        for report in [same, named] {
            #expect(report.outcome(stopped: false) == .done && report.skipped == 1 && report.failed == 0, "\(report.outcomes)")
            guard case .skipped(let running, let reason) = report.outcomes[0] else { Issue.record("\(report.outcomes)"); return }
            #expect(running == "1.8.0" && reason == .runsTarget && report.outcomes[0].code == "flash_up_to_date")
            #expect(report.outcomes[0].vendorResult == nil)
        }
        #expect(log.started(0) == nil && log.progressCount == 0)

        let older = FlashJob(source: try await Self.source(fixture, directory: bench.path, wanted: .version(FirmwareFixture.v170)))
        let refused = await older.run([bench.device(0)])
        #expect(refused.outcomes[0].code == "flash_downgrade_not_allowed" && refused.outcomes[0].vendorResult == .incompatibleVersion)
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)

        let allowed = FlashJob(source: try await Self.source(fixture, directory: bench.path, wanted: .version(FirmwareFixture.v170)),
                               options: Self.options(allowDowngrade: true))
        let downgraded = await allowed.run([bench.device(0)])
        guard case .done(_, "1.8.0", "1.7.0", _, _) = downgraded.outcomes[0] else { Issue.record("\(downgraded.outcomes)"); return }
        let again = await FlashJob(source: try Self.package(FirmwareFixture.v170), options: Self.options(allowSameVersion: true)).run([bench.device(0)])
        #expect(again.outcomes[0].code == "flash_done", "\(again.outcomes)")
    }

    @Test("cancelled during the reader image: CANCELLED 106, counted cancelled; the unit waits in its loader, and a re-run repairs it even with an older image")
    func cancelThenRepairFromTheLoader() async throws {
        let (bench, fixture) = try await Self.bench()
        let job = FlashJob(source: try await Self.source(fixture, directory: bench.path))
        let stop = Atomic(false)
        let cancelled = await job.run([bench.device(0)], shouldCancel: { stop.load(ordering: .relaxed) }) { event in
            if case .progress(_, .reader, let done, let total) = event, done > 0, done < total { stop.store(true, ordering: .relaxed) }
        }
        #expect(cancelled.outcome(stopped: true) == .cancelled && cancelled.cancelled == 1 && cancelled.failed == 0)
        #expect(cancelled.outcomes[0].wasCancelled && cancelled.outcomes[0].code == "flash_update_cancelled")
        #expect(cancelled.outcomes[0].vendorResult == .cancelled)
        guard case .failed(let error) = cancelled.outcomes[0], let failure = error as? any CodedError else { return }
        #expect(MessageCatalog.english.message(code: failure.code, arguments: failure.arguments).contains("CANCELLED"))

        // In its loader now (the loader image went, the reader image did not): an older
        // image without --allow-downgrade repairs it.
        let repair = FlashJob(source: try await Self.source(fixture, directory: bench.path, wanted: .version(FirmwareFixture.v170)))
        let log = FlashLog()
        let repaired = await repair.run([bench.device(0)], events: log.record)
        guard case .done(_, _, "1.7.0", let bytes, _) = repaired.outcomes[0] else { Issue.record("\(repaired.outcomes)"); return }
        #expect(bytes == 2048, "the loader image is not sent to a unit in its loader")
        #expect(log.phases(0).allSatisfy { $0 == .reader })
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v170)
    }

    @Test("a unit whose flash.bin was erased whole answers in its (boot ROM) loader as 0.0.0 and is updated, the reader image only; state.json follows the flash")
    func erasedUnitIsUpdated() async throws {
        let (bench, fixture) = try await Self.bench()
        let unit = DeviceStateStore.deviceDirectory(in: bench.path, index: 0)
        try Data(repeating: 0xFF, count: VendorLoader.flashBytes).write(to: URL(fileURLWithPath: unit + "/" + EmulatedGrokker.flashFileName))
        let log = FlashLog()
        let report = await FlashJob(source: try await Self.source(fixture, directory: bench.path)).run([bench.device(0)], events: log.record)
        guard case .done(_, "0.0.0", "1.8.0", _, _) = report.outcomes[0] else { Issue.record("\(report.outcomes)"); return }
        #expect(log.phases(0).allSatisfy { $0 == .reader })
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
    }

    @Test("a cancellation before the devices are reached touches none of them; a re-run finishes the update")
    func cancelBeforeStart() async throws {
        let (bench, fixture) = try await Self.bench()
        let job = FlashJob(source: try await Self.source(fixture, directory: bench.path))
        let report = await job.run([bench.device(0)], shouldCancel: { true })
        #expect(report.outcome(stopped: true) == .cancelled && report.cancelled == 1)
        #expect(try bench.state(0).firmwareVersion != FirmwareFixture.v180)
        #expect(await job.run([bench.device(0)]).outcome(stopped: false) == .done)
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
    }

    @Test("what the channel does not list is refused before any device; what does not fit a unit is refused on it, naming the vendor's result")
    func notListedAndNotForTheDevice() async throws {
        let (bench, fixture) = try await Self.bench(revision: 5)
        await #expect(throws: FirmwareError.updateNotListed(channel: "release", name: "GR-1_9-9-9_x.ugif")) {
            _ = try await Self.source(fixture, directory: bench.path, wanted: .named("GR-1_9-9-9_x.ugif"))
        }
        do {
            _ = try await Self.source(fixture, directory: bench.path, wanted: .version(FirmwareVersion("9.9.9")!))
            Issue.record("a version not listed was accepted")
        } catch let error as FirmwareVersionNotListed {
            #expect(error.code == "firmware_version_not_listed" && error.arguments == ["release", "9.9.9"])
            #expect(error.description.contains("9.9.9") && error.description.contains("release"))
        }

        let named = FlashJob(source: try await Self.source(fixture, directory: bench.path, wanted: .named("GR-1_1-8-0_test.ugif")))
        let other = await named.run([bench.device(0)])
        #expect(other.outcomes[0].code == "flash_not_for_device" && other.outcomes[0].vendorResult == .incompatibleHardware)
        guard case .failed(let error) = other.outcomes[0], let refusal = error as? UpdateNotForDevice else { return }
        #expect(refusal.arguments == ["sim:0", "GR-1_1-8-0_test.ugif", "INCOMPATIBLE"])

        let foreign = await FlashJob(source: try Self.package(FirmwareFixture.v180, hardware: "ProtoMicro")).run([bench.device(0)])
        #expect(foreign.outcomes[0].code == "flash_incompatible_hardware" && foreign.outcomes[0].vendorResult == .incompatibleHardware)
        guard case .failed(let foreignError) = foreign.outcomes[0], let failure = foreignError as? FlashFailure else { return }
        #expect(failure.arguments == ["sim:0", "ProtoMicro", "GR-1"])
        // Latest on a revision nothing fits: nothing newer for it.
        let latest = await FlashJob(source: try await Self.source(fixture, directory: bench.path)).run([bench.device(0)])
        #expect(latest.outcomes[0].code == "flash_up_to_date")
    }

    @Test("a cancelled update's failure names the device and the vendor's CANCELLED")
    func cancelledMessage() {
        var options = FirmwareUpdateOptions()
        options.minimumBatteryPercent = 20
        let failure = FlashFailure(device: "sim:0", result: .cancelled, running: "1.7.3", image: "1.8.0", imageHardware: "GR-1",
                                   unitHardware: "GR-1", battery: nil, options: options)
        #expect(failure.code == "flash_update_cancelled" && failure.arguments == ["sim:0"])
        #expect(failure.description.contains("CANCELLED"))
    }
}
