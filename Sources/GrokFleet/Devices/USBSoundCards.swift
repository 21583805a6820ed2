import Foundation

/// A USB sound card as the kernel's sysfs shows it: which ALSA card it is now, and the USB
/// port it sits on, which stays the same across reboots, re-plugs and identical dongles
/// (`usb:1-1.4`, docs/bench.md "Names").
public struct USBSoundCard: Sendable, Hashable {
    /// The ALSA card number it has now (`hw:N`).
    public var card: Int
    /// The USB port path: bus, then the port on each hub (`1-1.4`).
    public var path: String
    /// The USB vendor and product id, `0d8c:0014`: the card's model (``model(card:sysfs:)``).
    public var vendorProduct: String
    /// The manufacturer's and product's names as the device gives them; `nil` when it gives none.
    public var name: String?

    public init(card: Int, path: String, vendorProduct: String, name: String?) {
        self.card = card
        self.path = path
        self.vendorProduct = vendorProduct
        self.name = name
    }

    /// Every ALSA card under `sysfs` (`/sys`) whose device is a USB interface
    /// (`class/sound/cardN/device` → `.../1-1.4/1-1.4:1.0`), by card number.
    public static func list(sysfs: String = "/sys") -> [USBSoundCard] {
        let classDirectory = sysfs + "/class/sound"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: classDirectory)) ?? []
        return names.compactMap { name -> USBSoundCard? in
            guard name.hasPrefix("card"), let card = Int(name.dropFirst(4)), name == "card\(card)" else { return nil }
            let interface = URL(fileURLWithPath: classDirectory + "/" + name + "/device").resolvingSymlinksInPath()
            let device = interface.deletingLastPathComponent()
            let path = device.lastPathComponent
            guard interface.lastPathComponent.hasPrefix(path + ":"), isPortPath(path),
                  let vendor = read(device, "idVendor"), let product = read(device, "idProduct")
            else { return nil }
            let label = [read(device, "manufacturer"), read(device, "product")].compactMap { $0 }.joined(separator: " ")
            return USBSoundCard(card: card, path: path, vendorProduct: vendor + ":" + product, name: label.isEmpty ? nil : label)
        }.sorted { $0.card < $1.card }
    }

    /// The USB sound card on port `path` (`1-1.4`), if one is plugged in there now.
    public static func find(path: String, sysfs: String = "/sys") -> USBSoundCard? {
        list(sysfs: sysfs).first { $0.path == path }
    }

    /// The model of ALSA card `card`: its USB vendor and product id (`0d8c:0014`); `nil` for a
    /// card that is not on USB. What a per-model record of settings is keyed on.
    public static func model(card: Int, sysfs: String = "/sys") -> String? {
        list(sysfs: sysfs).first { $0.card == card }?.vendorProduct
    }

    /// Whether `text` is a USB port path: a bus number, `-`, then port numbers joined by `.`.
    public static func isPortPath(_ text: String) -> Bool {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        let ports = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return ports.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    private static func read(_ directory: URL, _ file: String) -> String? {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(file).path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
