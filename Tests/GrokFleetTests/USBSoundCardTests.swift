import Foundation
import GrokAudio
import GrokFleet
import GrokTestSupport
import Testing

/// Names per USB port (issue 22, item 6), over a sysfs tree of the test's own (no real USB here).
@Suite("USB port names")
struct USBSoundCardTests {
    /// `<root>/class/sound/cardN/device` → the interface `<usb device>/<path>:1.0`, as the kernel lays it out.
    static func fakeSysfs() throws -> TemporaryDirectory {
        let root = TemporaryDirectory("grok-sysfs")
        let fm = FileManager.default
        func card(_ number: Int, id: String, interface: String, files: [String: String]) throws {
            let device = root.path + "/devices/" + interface
            try fm.createDirectory(atPath: device, withIntermediateDirectories: true)
            for (name, text) in files {
                try (text + "\n").write(toFile: (device as NSString).deletingLastPathComponent + "/" + name, atomically: true, encoding: .utf8)
            }
            try fm.createDirectory(atPath: root.path + "/class/sound/card\(number)", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: root.path + "/class/sound/card\(number)/device", withDestinationPath: device)
            try (id + "\n").write(toFile: root.path + "/class/sound/card\(number)/id", atomically: true, encoding: .utf8)
        }
        try card(0, id: "PCH", interface: "pci0000:00/0000:00:1f.3", files: [:])
        try card(1, id: "Device", interface: "pci0000:00/0000:00:14.0/usb1/1-1/1-1.4/1-1.4:1.0",
                 files: ["idVendor": "0D8C", "idProduct": "0014", "manufacturer": "C-Media Electronics Inc.", "product": "USB Audio Device"])
        try card(2, id: "Device_1", interface: "pci0000:00/0000:00:14.0/usb1/1-1/1-1.2/1-1.2:1.0", files: ["idVendor": "0d8c", "idProduct": "0014"])
        return root
    }

    @Test("each USB sound card is listed with its port path and model; a card on PCI is not")
    func listsUSBCards() throws {
        let sysfs = try Self.fakeSysfs()
        let cards = USBSoundCard.list(sysfs: sysfs.path)
        #expect(cards == [
            USBSoundCard(card: 1, path: "1-1.4", vendorProduct: "0d8c:0014", name: "C-Media Electronics Inc. USB Audio Device", cardID: "Device"),
            USBSoundCard(card: 2, path: "1-1.2", vendorProduct: "0d8c:0014", name: nil, cardID: "Device_1"),
        ])
        #expect(USBSoundCard.find(path: "1-1.2", sysfs: sysfs.path)?.card == 2)
        #expect(USBSoundCard.model(card: 1, sysfs: sysfs.path) == "0d8c:0014")
        #expect(USBSoundCard.model(card: 0, sysfs: sysfs.path) == nil)
    }

    @Test("usb:PATH is a device name wherever --device is, in comma lists too; a malformed path is refused")
    func parsesUSBNames() throws {
        #expect(try DeviceSpec.parse("usb:1-1.4") == [.usb(path: "1-1.4")])
        #expect(try DeviceSpec.parseList(["usb:1-1.4,sim:2,usb:3-2"]) == [.usb(path: "1-1.4"), .emulated(index: 2), .usb(path: "3-2")])
        for bad in ["usb:", "usb:1", "usb:1-", "usb:1-1..4", "usb:a-1"] {
            #expect(throws: FleetError.invalidDevice(bad)) { _ = try DeviceSpec.parse(bad) }
        }
    }

    @Test("the USB port a device leads to, recorded beside the serial: a usb: name's own, an ALSA name's card's; none off USB")
    func usbPathOfDevices() throws {
        let sysfs = try Self.fakeSysfs()
        #expect(DevicePorts.usbPath(.alsa(name: "hw:1,0"), sysfs: sysfs.path) == "1-1.4")
        #expect(DevicePorts.usbPath(.alsa(name: "plughw:CARD=Device_1,DEV=0"), sysfs: sysfs.path) == "1-1.2")
        #expect(DevicePorts.usbPath(.usb(path: "3-1"), sysfs: sysfs.path) == "3-1")
        for spec in [DeviceSpec.alsa(name: "hw:0,0"), .alsa(name: "pulse"), .emulated(index: 0), .pipe(input: "a", output: "b")] {
            #expect(DevicePorts.usbPath(spec, sysfs: sysfs.path) == nil, "\(spec)")
        }
        var context = DevicePortContext(bench: Bench(directory: sysfs.path + "/bench"))
        context.sysfs = sysfs.path
        #expect(DevicePorts.fleetDevice(.alsa(name: "hw:1,0"), context: context).usbPath == "1-1.4")
    }

    @Test("one card is one port lock however it is named: usb:, hw:N, CARD=id; a device that is no card's keeps its name")
    func oneLockPerCard() throws {
        let sysfs = try Self.fakeSysfs()
        var context = DevicePortContext(bench: Bench(directory: sysfs.path + "/bench"))
        context.sysfs = sysfs.path
        func key(_ spec: DeviceSpec) -> String { DevicePorts.portKey(spec, context: context) }
        #expect(key(.usb(path: "1-1.4")) == "usb:1-1.4")
        for name in ["hw:1,0", "plughw:1,0", "hw:CARD=Device,DEV=0", "plughw:Device", "sysdefault:CARD=1"] {
            #expect(key(.alsa(name: name)) == "usb:1-1.4", "\(name)")
        }
        #expect(key(.alsa(name: "hw:Device_1,0")) == "usb:1-1.2")
        // A card not on USB: by ALSA's id, whichever way it is named.
        #expect(key(.alsa(name: "hw:0,0")) == "card:PCH" && key(.alsa(name: "plughw:CARD=PCH,DEV=0")) == "card:PCH")
        for name in ["pulse", "default", "hw:7,0", "hw:Nothing,0"] {
            #expect(key(.alsa(name: name)) == "alsa:" + name, "\(name)")
        }
    }

    @Test("opening a port with no card on it names the port and the ports that have one")
    func missingPortIsNamed() throws {
        let sysfs = try Self.fakeSysfs()
        var context = DevicePortContext(bench: Bench(directory: sysfs.path + "/bench"))
        context.sysfs = sysfs.path
        #expect(throws: FleetError.usbCardNotFound(path: "1-1.3", plugged: ["usb:1-1.4", "usb:1-1.2"])) {
            _ = try DevicePorts.openUnlocked(.usb(path: "1-1.3"), context: context)
        }
    }
}

/// Restore records keyed by the card, not its number (issue 22, item 6): after a re-plug that
/// renumbers the cards, a record goes back onto the card it was saved from, or waits for it.
@Suite("Level records follow their card")
struct LevelRecordCardTests {
    /// The bench of ``USBSoundCardTests/fakeSysfs()`` after a re-plug: the dongle of port 1-1.4
    /// is card 3 now (and `Device_1`), the one of 1-1.2 card 1 (`Device`), the PCI card is card 2.
    static func renumberedSysfs() throws -> TemporaryDirectory {
        let root = TemporaryDirectory("grok-sysfs-replugged")
        let fm = FileManager.default
        func card(_ number: Int, id: String, interface: String, usb: Bool) throws {
            let device = root.path + "/devices/" + interface
            try fm.createDirectory(atPath: device, withIntermediateDirectories: true)
            if usb {
                let parent = (device as NSString).deletingLastPathComponent
                try "0d8c\n".write(toFile: parent + "/idVendor", atomically: true, encoding: .utf8)
                try "0014\n".write(toFile: parent + "/idProduct", atomically: true, encoding: .utf8)
            }
            try fm.createDirectory(atPath: root.path + "/class/sound/card\(number)", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: root.path + "/class/sound/card\(number)/device", withDestinationPath: device)
            try (id + "\n").write(toFile: root.path + "/class/sound/card\(number)/id", atomically: true, encoding: .utf8)
        }
        try card(1, id: "Device", interface: "pci0000:00/0000:00:14.0/usb1/1-1/1-1.2/1-1.2:1.0", usb: true)
        try card(2, id: "PCH", interface: "pci0000:00/0000:00:1f.3", usb: false)
        try card(3, id: "Device_1", interface: "pci0000:00/0000:00:14.0/usb1/1-1/1-1.4/1-1.4:1.0", usb: true)
        return root
    }

    static func record(mixer: String, card: CardIdentity?, pid: Int32 = 1) -> LevelRecord {
        LevelRecord(saved: MixerLevels(mixer: mixer, controls: []), device: mixer + ",0",
                    holders: [.init(pid: pid, token: "t")], card: card)
    }

    @Test("a record is put back on the card it was saved from, whatever its number now; on no other card; a card not there waits")
    func recordsFollowTheirCard() throws {
        let before = try USBSoundCardTests.fakeSysfs()
        let dongle = try #require(CardIdentity.of(mixer: "hw:1", sysfs: before.path))
        #expect(dongle == CardIdentity(usbPath: "1-1.4", usbModel: "0d8c:0014", cardID: "Device"))
        let pch = try #require(CardIdentity.of(mixer: "hw:0", sysfs: before.path))
        #expect(pch == CardIdentity(cardID: "PCH"))
        #expect(CardIdentity.of(mixer: "pulse", sysfs: before.path) == nil)
        #expect(Self.record(mixer: "hw:1", card: dongle).target(cards: CardIdentity.cards(sysfs: before.path)) == "hw:1")

        let replugged = try Self.renumberedSysfs()
        let after = CardIdentity.cards(sysfs: replugged.path)
        // hw:1 is now the other dongle (even its ALSA id is the same as the saved one's): not it.
        #expect(Self.record(mixer: "hw:1", card: dongle).target(cards: after) == "hw:3")
        #expect(Self.record(mixer: "hw:0", card: pch).target(cards: after) == "hw:2")
        let unplugged = CardIdentity(usbPath: "2-1", usbModel: "0d8c:0014", cardID: "Device")
        #expect(Self.record(mixer: "hw:1", card: unplugged).target(cards: after) == nil)
        // Not a card's mixer, or a record older than card identities: the mixer of its name.
        #expect(Self.record(mixer: "pulse", card: nil).target(cards: after) == "pulse")
    }

    @Test("a record whose card is gone stays, is not applied to the card now at its number, and is listed as waiting")
    func goneCardWaits() throws {
        let sysfs = try Self.renumberedSysfs()
        let levels = TemporaryDirectory("grok-levels-waiting")
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let record = Self.record(mixer: "hw:1", card: CardIdentity(usbPath: "2-1", usbModel: "0d8c:0014", cardID: "Device"),
                                 pid: gone.processIdentifier)
        let path = levels.path + "/usb-2-1.json"
        #expect(FileManager.default.createFile(atPath: path, contents: try JSONEncoder().encode(record)))
        #expect(CardLevels.restoreAbandoned(directory: levels.path, sysfs: sysfs.path) == [])
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(CardLevels.waiting(directory: levels.path, sysfs: sysfs.path) == [record])
    }
}
