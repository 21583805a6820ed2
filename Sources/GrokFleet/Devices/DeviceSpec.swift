/// A Grokker as a person names it (`--device`): `sim:N` (emulated Grokker N on the bench),
/// `alsa:NAME` (the USB sound card a real one is plugged into) or `pcm:IN,OUT` (raw PCM
/// streams: signed 16-bit little-endian mono, read from IN and written to OUT, e.g. the
/// FIFOs of a `grokctl emulate` in another process or of any outside peer).
public enum DeviceSpec: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// Emulated Grokker number `index` (0...63), with its state under the bench directory.
    case emulated(index: Int)
    /// A real Grokker on the ALSA device `name` (`hw:1,0`, `plughw:CARD=Device`, `default`).
    case alsa(name: String)
    /// Raw PCM: samples read from `input`, written to `output` (FIFOs or files).
    case pipe(input: String, output: String)
    /// A real Grokker on the USB sound card plugged into USB port `path` (`1-1.4`), whatever
    /// ALSA card number it has now (``USBSoundCard``).
    case usb(path: String)

    /// The numbers emulated Grokkers may have.
    public static let emulatedRange = 0...63

    /// The spec as typed: `sim:3`, `alsa:hw:1,0`.
    public var description: String {
        switch self {
        case .emulated(let index): "sim:\(index)"
        case .alsa(let name): "alsa:\(name)"
        case .pipe(let input, let output): "pcm:\(input),\(output)"
        case .usb(let path): "usb:\(path)"
        }
    }

    /// Parses one spec; `sim:A-B` gives every emulated Grokker from A to B.
    ///
    /// - Throws: ``FleetError/invalidDevice(_:)`` for anything but `sim:N`, `sim:A-B` (A ≤ B)
    ///   `alsa:NAME` and `pcm:IN,OUT` (two non-empty paths without a comma);
    ///   ``FleetError/deviceOutOfRange(index:spec:)`` for numbers past 63.
    public static func parse(_ spec: String) throws(FleetError) -> [DeviceSpec] {
        if spec.hasPrefix("sim:") {
            let body = spec.dropFirst(4)
            let parts = body.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            let numbers = try parts.map { part throws(FleetError) in try emulatedIndex(part, in: spec) }
            if numbers.count == 2, numbers[0] > numbers[1] { throw .invalidDevice(spec) }
            return (numbers[0]...numbers[numbers.count - 1]).map { .emulated(index: $0) }
        }
        if spec.hasPrefix("alsa:") {
            let name = spec.dropFirst(5)
            let valid = !name.isEmpty && name.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
            guard valid else { throw .invalidDevice(spec) }
            return [.alsa(name: String(name))]
        }
        if spec.hasPrefix("usb:") {
            let path = String(spec.dropFirst(4))
            guard USBSoundCard.isPortPath(path) else { throw .invalidDevice(spec) }
            return [.usb(path: path)]
        }
        if spec.hasPrefix("pcm:") {
            let paths = spec.dropFirst(4).split(separator: ",", omittingEmptySubsequences: false)
            guard paths.count == 2, paths.allSatisfy({ !$0.isEmpty }), paths[0] != paths[1] else { throw .invalidDevice(spec) }
            return [.pipe(input: String(paths[0]), output: String(paths[1]))]
        }
        if let meant = withScheme(spec) { throw .deviceWithoutScheme(spec: spec, suggestion: meant) }
        throw .invalidDevice(spec)
    }

    /// The spec `spec` most likely means when its scheme was left out: an ALSA name
    /// (`hw:1,0`, `plughw:1`, `default`) under `alsa:`, an emulated unit's number (`3`,
    /// `sim3`, `sim-3`) under `sim:`; `nil` when it looks like neither.
    static func withScheme(_ spec: String) -> String? {
        let alsaPrefixes = ["hw:", "plughw:", "sysdefault:", "front:", "dmix:", "dsnoop:"]
        if alsaPrefixes.contains(where: { spec.hasPrefix($0) && spec.count > $0.count }) || ["default", "sysdefault"].contains(spec) {
            return "alsa:" + spec
        }
        var number = Substring(spec)
        if number.hasPrefix("sim") { number = number.dropFirst(3) }
        if number.hasPrefix("-") && spec.hasPrefix("sim") { number = number.dropFirst() }
        if !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber), let index = Int(number),
           emulatedRange.contains(index) {
            return "sim:\(index)"
        }
        return nil
    }

    /// Parses the values of a repeatable `--device` option, each of which may itself be a
    /// comma-separated list. A comma splits only where a new spec begins (`sim:`, `alsa:` or
    /// `pcm:`), because ALSA names and `pcm:IN,OUT` contain commas: `alsa:hw:1,0,sim:2` is two
    /// devices.
    ///
    /// - Returns: the devices in the order given.
    /// - Throws: ``FleetError/invalidDevice(_:)``, ``FleetError/deviceOutOfRange(index:spec:)`` or ``FleetError/duplicateDevice(_:)`` for a bad spec or a device named twice.
    public static func parseList(_ values: [String]) throws(FleetError) -> [DeviceSpec] {
        var devices: [DeviceSpec] = []
        var seen = Set<DeviceSpec>()
        for value in values {
            for spec in split(value) {
                for device in try parse(spec) {
                    guard seen.insert(device).inserted else { throw .duplicateDevice(device.description) }
                    devices.append(device)
                }
            }
        }
        return devices
    }

    /// `value` cut at each comma that starts a new spec.
    public static func split(_ value: String) -> [String] {
        var specs: [String] = []
        var current = ""
        var rest = value[...]
        while let comma = rest.firstIndex(of: ",") {
            let after = rest[rest.index(after: comma)...]
            current += rest[..<comma]
            if after.hasPrefix("sim:") || after.hasPrefix("alsa:") || after.hasPrefix("pcm:") || after.hasPrefix("usb:") || after.isEmpty
                || current.isEmpty {
                specs.append(current)
                current = ""
            } else {
                current += ","
            }
            rest = after
        }
        specs.append(current + rest)
        return specs
    }

    private static func emulatedIndex(_ text: Substring, in spec: String) throws(FleetError) -> Int {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .invalidDevice(spec)
        }
        guard let index = Int(text), emulatedRange.contains(index) else {
            throw .deviceOutOfRange(index: String(text), spec: spec)
        }
        return index
    }

    /// ALSA devices by name, then raw PCM streams by path, then emulated Grokkers by number
    /// (the order `devices` lists).
    public static func < (lhs: DeviceSpec, rhs: DeviceSpec) -> Bool {
        switch (lhs, rhs) {
        case (.emulated(let a), .emulated(let b)): a < b
        case (.alsa(let a), .alsa(let b)): a < b
        case (.pipe(let a, _), .pipe(let b, _)): a < b
        case (.usb(let a), .usb(let b)): a < b
        default: lhs.rank < rhs.rank
        }
    }

    private var rank: Int {
        switch self {
        case .usb: 0
        case .alsa: 1
        case .pipe: 2
        case .emulated: 3
        }
    }
}
