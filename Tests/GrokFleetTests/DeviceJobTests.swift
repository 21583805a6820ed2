import Foundation
import Synchronization
import GrokBasics
import GrokFleet
import GrokkerEmulator
import Testing
import UGrokIt

/// The device commands' use cases (info, inventory, tag, locate, region) on emulated
/// Grokkers out of the box (the default bench scene: 28 tags in reach), through the ports
/// the command line opens (under their locks).
@Suite("Device jobs")
struct DeviceJobTests {
    /// The ports as the command line opens them: under their locks, with the station's
    /// remembered link settings (so a unit configured by one job is connected at its setting by the next).
    static func access(_ bench: FleetBench) -> DeviceAccess {
        DeviceAccess(ports: DevicePortContext(bench: Bench(directory: bench.path), lockDirectory: bench.lockDirectory,
                                              linkSettings: LinkSettingFile(path: bench.path + "/state/link-settings.json")))
    }

    static func sim(_ indices: ClosedRange<Int>) -> [DeviceSpec] { indices.map { .emulated(index: $0) } }

    /// The serial numbers the bench's state files hold, by index.
    static func serials(_ bench: FleetBench, _ indices: ClosedRange<Int>) throws -> [String] {
        try indices.map { String(format: "%08d", try bench.state($0).serialNumber) }
    }

    static func code(_ error: (any Error)?) -> String? { (error as? any CodedError)?.code }

    /// Sets FCC on `devices` (an inventory needs a region).
    static func setFCC(_ bench: FleetBench, _ devices: [DeviceSpec]) throws {
        let region = try #require(RegionCatalog.find("fcc"))
        let results = RegionJob(access: access(bench), region: region).run(devices)
        #expect(results.allSatisfy { $0.error == nil }, "\(results.map { String(describing: $0.error) })")
    }

    // MARK: info

    @Test("info: four Grokkers at once, each its serial, firmware 1.7.3, GROKKER_1, no region (none was set), the link's figures")
    func infoOfFour() throws {
        let bench = FleetBench()
        let results = InfoJob(access: Self.access(bench)).run(Self.sim(0...3))
        #expect(results.map(\.device) == Self.sim(0...3))
        let serials = try Self.serials(bench, 0...3)
        for (index, result) in results.enumerated() {
            let identity = try #require(result.identity, "\(String(describing: result.error))")
            #expect(identity.info.serialNumberText == serials[index])
            #expect(identity.info.firmwareVersion.description == "1.7.3")
            #expect(identity.info.hardwareType.vendorName == "GROKKER_1")
            // Out of the box GetVersion says index 0 with "user has set region" off: no region,
            // though revision 3 does not oblige the user to set one.
            #expect(identity.info.region == nil && !identity.info.regionSet && identity.info.userMustSetRegion == false)
            // Met for the first time: AutoConfig keeps 8 samples per bit, and the connection it
            // kept (handshake and GetVersion) took under a second of audio.
            #expect(identity.connectMilliseconds <= 1000)
            #expect(identity.linkBitRate == 5512.5 && identity.samplesPerBit == 8 && identity.settingSource == .autoconfig)
            let link = try #require(result.link)
            #expect(link.packetsSent >= 1 && link.retries == 0)
            #expect(link.bytesSent > 0 && link.bytesReceived > 0 && link.packetsReceived >= 1)
        }
    }

    @Test("info: a second run sees the same Grokker")
    func infoIsPersistent() throws {
        let bench = FleetBench()
        let job = InfoJob(access: Self.access(bench))
        let first = try #require(job.query(.emulated(index: 5)).identity)
        let second = try #require(job.query(.emulated(index: 5)).identity)
        #expect(first.info.serialNumber == second.info.serialNumber)
    }

    @Test("info: a missing ALSA device fails that device with audio_device_not_found; the others answer")
    func infoOfAMissingDevice() throws {
        let bench = FleetBench()
        let results = InfoJob(access: Self.access(bench)).run([.emulated(index: 0), .alsa(name: "hw:29,0")])
        #expect(results[0].identity != nil)
        #expect(Self.code(results[1].error) == "audio_device_not_found")
        #expect(results[1].link == nil)
    }

    // MARK: region

    @Test("region: set on two Grokkers (their serials back); info shows it, the third has none")
    func regionSet() throws {
        let bench = FleetBench()
        let etsi = try #require(RegionCatalog.find("etsi"))
        let results = RegionJob(access: Self.access(bench), region: etsi).run(Self.sim(0...1))
        #expect(results.map(\.value) == (try Self.serials(bench, 0...1)).map(Optional.some))
        let info = InfoJob(access: Self.access(bench)).run(Self.sim(0...2))
        // sim:2 was not set: its GetVersion says index 0 with "user has set region" off.
        #expect(info.map { $0.identity?.info.region?.name } == ["ETSI (EU)", "ETSI (EU)", nil])
        #expect(info.map { $0.identity?.info.regionSet } == [true, true, false])
    }

    // MARK: inventory

    @Test("inventory: a Grokker without a region refuses (reader_region_not_set); with one it finds the 28 tags of the default bench")
    func inventory() throws {
        let bench = FleetBench()
        let configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        let refused = InventoryJob(access: Self.access(bench), configuration: configuration, seconds: 1).run([.emulated(index: 0)])
        #expect(Self.code(refused[0].error) == "reader_region_not_set")
        try Self.setFCC(bench, [.emulated(index: 0)])
        var updates = 0
        let result = InventoryJob(access: Self.access(bench), configuration: configuration, seconds: 2)
            .run(.emulated(index: 0)) { _ in updates += 1 }
        let found = try #require(result.value, "\(String(describing: result.error))")
        // The default bench: 24 of the standard bench in reach, the shipped profiles' 3 reference tags, the README's example tag.
        #expect(found.tags.count == 28)
        #expect(found.tags.allSatisfy { $0.epc.toTagURI().hasPrefix("urn:epc:tag:sgtin-96:") })
        #expect(found.tags.allSatisfy { $0.readState.totalReads > 0 })
        #expect(found.reads >= found.tags.count)
        // A quarter second of audio at a time: eight updates in two seconds.
        #expect(updates == 8)
        Self.expectTimesWithinTheRun(found, collected: 2)
        // Without updates, the reads are taken once after the stop: timed as they came all the same.
        let once = try #require(InventoryJob(access: Self.access(bench), configuration: configuration, seconds: 1)
            .run([.emulated(index: 0)])[0].value)
        Self.expectTimesWithinTheRun(once, collected: 1)
    }

    /// Every time of `found` is on the audio clock from the inventory's start: the tags in
    /// reach are first read within the first half second, none after the run ended, and the
    /// run lasted the seconds collected plus the start and the stop (well under a second).
    static func expectTimesWithinTheRun(_ found: InventoryJob.Found, collected: Double) {
        #expect(found.seconds >= collected && found.seconds < collected + 1, "\(found.seconds)")
        let first = found.tags.map(\.firstRead.timeIntervalSince1970)
        let last = found.tags.map(\.readState.mostRecentRead.timeIntervalSince1970)
        #expect((first.min() ?? 99) < 0.5 && (first.min() ?? -1) >= 0, "\(first.sorted())")
        #expect((last.max() ?? 99) <= found.seconds, "\(last.sorted()) in \(found.seconds) s")
        #expect(zip(first, last).allSatisfy { $0 <= $1 })
    }

    // MARK: tag

    @Test("tag: program a tag; a later job reads the new EPC back, and an inventory finds it and not the old one")
    func programPersists() throws {
        let bench = FleetBench()
        let access = Self.access(bench)
        try Self.setFCC(bench, [.emulated(index: 0)])
        let inventory = InventoryJob(access: access, configuration: .config(inventoryType: .inventoryDistance), seconds: 1)
        // The README's example tag (1 m): within the presets' write range (about 2 m at 24 dBm
        // and -60 dBm; docs/scene.md), where the bench's farthest tags are read but not written.
        let example = try UgiEpc(hex: RFScene.exampleTag.epc)
        let old = try #require(inventory.run(.emulated(index: 0)).value?.tags.first { $0.epc == example }?.epc)
        let new = try UgiEpc(hex: "3074257BF7194E4000C0FFEE")
        let programmed = try TagJob(access: access, epc: old).run(.program(newEpc: new), on: .emulated(index: 0))
        #expect(programmed.status == .ok)
        // Read at once: the reader looks for the tag over its next rounds (TagSearchTests).
        let read = try TagJob(access: access, epc: new).run(.read(bank: .epc, offset: 4, length: 12), on: .emulated(index: 0))
        #expect(read.status == .ok)
        #expect(read.data == new.bytes)
        let after = Set(try #require(inventory.run(.emulated(index: 0)).value).tags.map(\.epc))
        #expect(after.contains(new) && !after.contains(old))
    }

    @Test("tag: a read without a length reads to the end of the bank, as the tag tells it (MEMORY_OVERRUN one word on)")
    func readToTheEndOfTheBank() throws {
        let bench = FleetBench()
        let access = Self.access(bench)
        try Self.setFCC(bench, [.emulated(index: 0)])
        // The README's example tag: a 96-bit EPC in an EPC bank with room for 8 EPC words.
        let epc = try UgiEpc(hex: "3074257BF7194E4000001A85")
        let job = TagJob(access: access, epc: epc)
        let read = try job.run(.read(bank: .epc, offset: 4, length: 0), on: .emulated(index: 0))
        #expect(read.status == .ok)
        #expect(read.data == epc.bytes + [0, 0, 0, 0], "\(String(describing: read.data))")
        // RESERVED: the kill and access passwords, 0 on the bench.
        let reserved = try job.run(.read(bank: .reserved, offset: 0, length: 0), on: .emulated(index: 0))
        #expect(reserved.status == .ok && reserved.data == [UInt8](repeating: 0, count: 8))
        // One word more than it gave is past the end.
        let past = try job.run(.read(bank: .epc, offset: 4, length: 18), on: .emulated(index: 0))
        #expect(past.status == .memoryOverrun)
    }

    @Test("tag: a tag out of reach is TAG_NOT_FOUND, an outcome and not an error")
    func tagOutOfReach() throws {
        let bench = FleetBench()
        try Self.setFCC(bench, [.emulated(index: 0)])
        let job = TagJob(access: Self.access(bench), epc: try UgiEpc(hex: "000000000000000000000001"))
        let outcome = try job.run(.read(bank: .user, offset: 0, length: 0), on: .emulated(index: 0))
        #expect(outcome.status == .tagNotFound)
        #expect(outcome.status.description == "TAG_NOT_FOUND")
    }

    // MARK: locate

    @Test("locate: a tag walking towards the reader fills the bar, one reading per interval; a tag never heard is not heard")
    func locateApproaching() throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 1001)
        try Self.setFCC(bench, [.emulated(index: 0)])
        // The demo scene's moving tag comes from 5.5 m to 0.4 m over ten seconds.
        var readings: [LocateJob.Reading] = []
        let heard = try LocateJob(access: Self.access(bench), epc: try UgiEpc(hex: "3034257BF4789000000003E7"), seconds: 6)
            .run(on: .emulated(index: 0)) { readings.append($0) }
        #expect(heard)
        #expect(readings.count == 12)
        #expect(readings.last!.proximity > readings.first!.proximity + 0.1)
        #expect(readings.map(\.timeS) == (1...12).map { Double($0) / 2 })
        // The figure is dBm (the reader's scale runs from -90 to -30 dBm), rising as it nears.
        let heardRSSI = readings.compactMap(\.rssi)
        #expect(!heardRSSI.isEmpty && heardRSSI.allSatisfy { $0 >= -90 && $0 <= -30 }, "\(heardRSSI)")
        #expect(heardRSSI.last! > heardRSSI.first!)
        var silent: [LocateJob.Reading] = []
        let missing = try LocateJob(access: Self.access(bench), epc: try UgiEpc(hex: "000000000000000000000001"), seconds: 1)
            .run(on: .emulated(index: 0)) { silent.append($0) }
        #expect(!missing)
        #expect(!silent.isEmpty && silent.allSatisfy { $0.reads == 0 && $0.rssi == nil && $0.proximity == 0 })
    }

    @Test("locate: proximity is where the RSSI (dBm) lies on the reader's scale, -90 to -30 dBm, 0 when not heard")
    func proximityScale() {
        #expect(LocateJob.proximity(rssi: nil) == 0)
        #expect(LocateJob.proximity(rssi: -60) == 0.5)
        #expect(LocateJob.proximity(rssi: -30) == 1)
        #expect(LocateJob.proximity(rssi: -20) == 1)
        #expect(LocateJob.proximity(rssi: -95) == 0)
    }

    // MARK: fan-out

    @Test("the fan-out runs every item, at most so many at once, and keeps the order given")
    func fanOut() {
        let running = Mutex(0)
        let most = Mutex(0)
        let squares = FleetRunner.each(Array(0..<12), concurrency: 3) { n -> Int in
            let now = running.withLock { $0 += 1; return $0 }
            most.withLock { $0 = max($0, now) }
            Thread.sleep(forTimeInterval: 0.01)
            running.withLock { $0 -= 1 }
            return n * n
        }
        #expect(squares == (0..<12).map { $0 * $0 })
        #expect(most.withLock { $0 } <= 3)
        #expect(FleetRunner.each([Int](), concurrency: nil) { $0 }.isEmpty)
    }
}
