/// The sound-card model a device's settings are remembered under (``LinkSetup``):
/// the USB `vendor:product` of the card (``USBSoundCard``, read from sysfs, e.g. `0d8c:0014`),
/// `emulated` for the emulated bench (`sim:`), and nil where no model is known: raw PCM
/// streams (`pcm:`), a device name that names no card (`default`, `pulse`), a card that is
/// not a USB card.
///
/// An ALSA name's card is its first argument (``USBSoundCard/card(forDevice:in:)``).
/// - Parameter sysfs: where the kernel's sysfs is (tests give a tree of their own).
public func soundCardModel(_ spec: DeviceSpec, sysfs: String = "/sys") -> String? {
    switch spec {
    case .emulated: "emulated"
    case .pipe: nil
    case .usb(let path): USBSoundCard.find(path: path, sysfs: sysfs)?.vendorProduct
    case .alsa(let name): USBSoundCard.card(forDevice: name, in: USBSoundCard.list(sysfs: sysfs))?.vendorProduct
    }
}
