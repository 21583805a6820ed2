import Foundation
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
        func card(_ number: Int, interface: String, files: [String: String]) throws {
            let device = root.path + "/devices/" + interface
            try fm.createDirectory(atPath: device, withIntermediateDirectories: true)
            for (name, text) in files {
                try (text + "\n").write(toFile: (device as NSString).deletingLastPathComponent + "/" + name, atomically: true, encoding: .utf8)
            }
            try fm.createDirectory(atPath: root.path + "/class/sound/card\(number)", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: root.path + "/class/sound/card\(number)/device", withDestinationPath: device)
        }
        try card(0, interface: "pci0000:00/0000:00:1f.3", files: [:])
        try card(1, interface: "pci0000:00/0000:00:14.0/usb1/1-1/1-1.4/1-1.4:1.0",
                 files: ["idVendor": "0d8c", "idProduct": "0014", "manufacturer": "C-Media Electronics Inc.", "product": "USB Audio Device"])
        try card(2, interface: "pci0000:00/0000:00:14.0/usb1/1-1/1-1.2/1-1.2:1.0", files: ["idVendor": "0d8c", "idProduct": "0014"])
        return root
    }

    @Test("each USB sound card is listed with its port path and model; a card on PCI is not")
    func listsUSBCards() throws {
        let sysfs = try Self.fakeSysfs()
        let cards = USBSoundCard.list(sysfs: sysfs.path)
        #expect(cards == [
            USBSoundCard(card: 1, path: "1-1.4", vendorProduct: "0d8c:0014", name: "C-Media Electronics Inc. USB Audio Device"),
            USBSoundCard(card: 2, path: "1-1.2", vendorProduct: "0d8c:0014", name: nil),
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
