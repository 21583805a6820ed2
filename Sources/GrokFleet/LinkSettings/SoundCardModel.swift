import Foundation

/// The sound-card model a device's settings are remembered under (``LinkSettingMemory``):
/// the USB `vendor:product` of the ALSA card (`/proc/asound/cardN/usbid`, e.g. `0d8c:0014`),
/// `emulated` for the emulated bench (`sim:`), and nil where no model is known: raw PCM
/// streams (`pcm:`), a device name that names no card (`default`, `pulse`), a card that is
/// not a USB card.
///
/// The card is read from the ALSA name's first argument, a number or a card id, positional
/// (`hw:1,0`, `plughw:Device`) or `CARD=` (`hw:CARD=Device,DEV=0`); an id is resolved
/// through its `/proc/asound/<id>` link to `cardN`.
/// - Parameter procRoot: where ALSA's proc files are (tests give a directory of their own).
public func soundCardModel(_ spec: DeviceSpec, procRoot: String = "/proc/asound") -> String? {
    switch spec {
    case .emulated: return "emulated"
    case .pipe: return nil
    case .usb(let path): return USBSoundCard.find(path: path)?.vendorProduct
    case .alsa(let name):
        guard let colon = name.firstIndex(of: ":") else { return nil }
        let arguments = name[name.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        let named = arguments.first { $0.hasPrefix("CARD=") }.map { String($0.dropFirst(5)) }
        guard var card = named ?? arguments.first.map(String.init), !card.isEmpty, !card.contains("=") else { return nil }
        if card.hasPrefix("\""), card.hasSuffix("\""), card.count >= 2 { card = String(card.dropFirst().dropLast()) }
        guard !card.contains("/"), card != ".", card != ".." else { return nil }
        let directory = card.allSatisfy(\.isASCIIDigit) ? "card" + card : card
        guard let text = try? String(contentsOfFile: procRoot + "/" + directory + "/usbid", encoding: .utf8) else { return nil }
        let usbid = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let parts = usbid.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 4 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return usbid
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
