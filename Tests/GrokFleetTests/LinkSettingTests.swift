import Foundation
import GrokBasics
import GrokFleet
import GrokLedger
import GrokkerEmulator
import GrokTestSupport
import Testing
import UGrokIt

/// AutoConfig as the device commands run it (issue 22 item 4): a Grokker met for the first
/// time is configured (fastest first) and remembered by serial and sound-card model in the
/// station's state directory; the next command connects at the stored setting.
@Suite("Link settings")
struct LinkSettingTests {
    static func access(_ bench: FleetBench) -> DeviceAccess { DeviceJobTests.access(bench) }
    static func file(_ bench: FleetBench) -> LinkSettingFile { LinkSettingFile(path: bench.path + "/state/link-settings.json") }

    @Test("info: a Grokker met first is AutoConfigured to 8 spb (5512.5 bit/s) and remembered; the next info reuses it in about a second of audio")
    func firstMeetThenStored() throws {
        let bench = FleetBench()
        let job = InfoJob(access: Self.access(bench))
        let first = try #require(job.query(.emulated(index: 0)).identity)
        #expect(first.settingSource == .autoconfig)
        #expect(first.samplesPerBit == 8 && first.sampleRate == 44_100 && first.linkBitRate == 5512.5)
        // A handshake, GetVersion and 20 echoes of 100 bytes at 8 spb: several seconds of audio.
        #expect(first.setupMilliseconds > 4000)
        let book = Self.file(bench).read()
        #expect(book.samplesPerBit(.serial(first.info.serialNumberText), sampleRate: 44_100) == 8)
        #expect(book.samplesPerBit(.soundCard("emulated"), sampleRate: 44_100) == 8)
        #expect(book.samplesPerBit(.serial(first.info.serialNumberText), sampleRate: 48_000) == nil)

        let second = try #require(job.query(.emulated(index: 0)).identity)
        #expect(second.settingSource == .stored && second.samplesPerBit == 8 && second.linkBitRate == 5512.5)
        #expect(second.setupMilliseconds < 1500, "\(second.setupMilliseconds) ms")
    }

    @Test("a Grokker's own stored setting wins over its card model's: connected at 8 (the card's), then again at its 10, no AutoConfig")
    func ownSettingWins() throws {
        let bench = FleetBench()
        let file = Self.file(bench)
        let serial = String(format: "%08d", try bench.prepare(0, serial: 4242).state.serialNumber)
        try file.add([LinkSettingRecord(subject: .serial(serial), samplesPerBit: 10, sampleRate: 44_100, reason: .autoconfig,
                                        station: "other", recordedAt: Date(timeIntervalSince1970: 1_000))])
        let identity = try #require(InfoJob(access: Self.access(bench)).query(.emulated(index: 0)).identity)
        #expect(identity.settingSource == .stored && identity.samplesPerBit == 10)
        // Nothing new learned: the file still says 10 for it, learned by the other station.
        #expect(file.read().records[.serial(serial)]?.station == "other")
    }

    @Test("the file keeps the newest record of each subject; an unreadable file reads as empty and is replaced")
    func fileKeepsNewest() throws {
        let directory = TemporaryDirectory("linksettings")
        let file = LinkSettingFile(stateDirectory: directory.path)
        #expect(file.path == directory.path + "/link-settings.json")
        try "not json".write(toFile: file.path, atomically: true, encoding: .utf8)
        #expect(file.read().records.isEmpty)
        let old = LinkSettingRecord(subject: .soundCard("0d8c:0014"), samplesPerBit: 8, sampleRate: 48_000, reason: .autoconfig,
                                    station: "a", recordedAt: Date(timeIntervalSince1970: 2_000))
        var newer = old
        newer.samplesPerBit = 10
        newer.reason = .fallback
        newer.recordedAt = Date(timeIntervalSince1970: 3_000)
        try file.add([newer])
        try file.add([old])
        #expect(file.read().records[.soundCard("0d8c:0014")] == newer)
    }

    @Test("sound-card model: the USB vendor:product of the card in sysfs, by number or id, positional or CARD=; emulated for sim:, none for pipes and cards without one")
    func soundCardModels() throws {
        let sysfs = try USBSoundCardTests.fakeSysfs()
        for name in ["hw:1", "hw:1,0", "plughw:CARD=Device,DEV=0", "hw:Device", "sysdefault:CARD=1", "hw:\"Device_1\""] {
            #expect(soundCardModel(.alsa(name: name), sysfs: sysfs.path) == "0d8c:0014", "\(name)")
        }
        for name in ["hw:0", "hw:PCH", "default", "pulse", "hw:CARD=../card1", "hw:7", "hw:"] {
            #expect(soundCardModel(.alsa(name: name), sysfs: sysfs.path) == nil, "\(name)")
        }
        #expect(soundCardModel(.usb(path: "1-1.2"), sysfs: sysfs.path) == "0d8c:0014")
        #expect(USBSoundCard.card(forDevice: "plughw:CARD=Device_1,DEV=0", in: USBSoundCard.list(sysfs: sysfs.path))?.path == "1-1.2")
        #expect(soundCardModel(.emulated(index: 3)) == "emulated")
        #expect(soundCardModel(.pipe(input: "a", output: "b")) == nil)
    }
}
