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
    /// ALSA's id of the card (`Device`, `CARD=Device`), from `class/sound/cardN/id`; `nil`
    /// when sysfs gives none. Identical dongles may share it (ALSA then numbers the later
    /// ones, `Device_1`), so it names a card only beside the port path.
    public var cardID: String?

    public init(card: Int, path: String, vendorProduct: String, name: String?, cardID: String? = nil) {
        self.card = card
        self.path = path
        self.vendorProduct = vendorProduct
        self.name = name
        self.cardID = cardID
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
                  let vendor = read(device, "idVendor").flatMap(usbID), let product = read(device, "idProduct").flatMap(usbID)
            else { return nil }
            let label = [read(device, "manufacturer"), read(device, "product")].compactMap { $0 }.joined(separator: " ")
            return USBSoundCard(card: card, path: path, vendorProduct: vendor + ":" + product, name: label.isEmpty ? nil : label,
                                cardID: read(URL(fileURLWithPath: classDirectory + "/" + name), "id"))
        }.sorted { $0.card < $1.card }
    }

    /// The USB sound card an ALSA device name leads to (``cardArgument(of:)``: by number or
    /// id); `nil` for names that name no card (`default`, `pulse`) and for cards not on USB.
    /// `cards` is ``list(sysfs:)``'s answer.
    public static func card(forDevice name: String, in cards: [USBSoundCard]) -> USBSoundCard? {
        switch cardArgument(of: name) {
        case .number(let number)?: cards.first { $0.card == number }
        case .id(let id)?: cards.first { $0.cardID == id }
        case nil: nil
        }
    }

    /// How an ALSA device name names its card.
    public enum CardArgument: Sendable, Hashable {
        /// By number (`hw:1,0`).
        case number(Int)
        /// By ALSA's id (`plughw:Device`, `hw:CARD=Device,DEV=0`).
        case id(String)
    }

    /// The card an ALSA device name names, read from the name's first argument: a card number
    /// or id, positional (`hw:1,0`, `plughw:Device`) or `CARD=` (`hw:CARD=Device,DEV=0`,
    /// `sysdefault:CARD=1`); `nil` for names that name no card (`default`, `pulse`).
    public static func cardArgument(of name: String) -> CardArgument? {
        guard let colon = name.firstIndex(of: ":") else { return nil }
        let arguments = name[name.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        let named = arguments.first { $0.hasPrefix("CARD=") }.map { String($0.dropFirst(5)) }
        guard var card = named ?? arguments.first.map(String.init), !card.isEmpty, !card.contains("=") else { return nil }
        if card.hasPrefix("\""), card.hasSuffix("\""), card.count >= 2 { card = String(card.dropFirst().dropLast()) }
        if card.allSatisfy({ $0.isASCII && $0.isNumber }) { return Int(card).map(CardArgument.number) }
        return .id(card)
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

    /// A USB id as sysfs writes it (four hex digits), lowercased; `nil` for anything else.
    private static func usbID(_ text: String) -> String? {
        text.count == 4 && text.allSatisfy(\.isHexDigit) ? text.lowercased() : nil
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
