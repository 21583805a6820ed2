/// A Grokker named on the command line: `sim:N` (emulated Grokker N on the bench) or
/// `alsa:NAME` (the USB sound card a real one is plugged into).
public enum DeviceSpec: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// Emulated Grokker number `index` (0...63), with its state under the bench directory.
    case emulated(index: Int)
    /// A real Grokker on the ALSA device `name` (`hw:1,0`, `plughw:CARD=Device`, `default`).
    case alsa(name: String)

    /// The numbers emulated Grokkers may have.
    public static let emulatedRange = 0...63

    /// The spec as typed: `sim:3`, `alsa:hw:1,0`.
    public var description: String {
        switch self {
        case .emulated(let index): "sim:\(index)"
        case .alsa(let name): "alsa:\(name)"
        }
    }

    /// Parses one spec; `sim:A-B` gives every emulated Grokker from A to B.
    ///
    /// - Throws: ``CLIError/invalidDevice(_:)`` for anything but `sim:N`, `sim:A-B` (A ≤ B)
    ///   and `alsa:NAME`; ``CLIError/deviceOutOfRange(index:spec:)`` for numbers past 63.
    public static func parse(_ spec: String) throws(CLIError) -> [DeviceSpec] {
        if spec.hasPrefix("sim:") {
            let body = spec.dropFirst(4)
            let parts = body.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            let numbers = try parts.map { part throws(CLIError) in try emulatedIndex(part, in: spec) }
            if numbers.count == 2, numbers[0] > numbers[1] { throw .invalidDevice(spec) }
            return (numbers[0]...numbers[numbers.count - 1]).map { .emulated(index: $0) }
        }
        if spec.hasPrefix("alsa:") {
            let name = spec.dropFirst(5)
            let valid = !name.isEmpty && name.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
            guard valid else { throw .invalidDevice(spec) }
            return [.alsa(name: String(name))]
        }
        throw .invalidDevice(spec)
    }

    /// Parses the values of a repeatable `--device` option, each of which may itself be a
    /// comma-separated list. A comma splits only where a new spec begins (`sim:` or
    /// `alsa:`), because ALSA names contain commas: `alsa:hw:1,0,sim:2` is two devices.
    ///
    /// - Returns: the devices in the order given.
    /// - Throws: a usage ``CLIError`` for a bad spec or a device named twice.
    public static func parseList(_ values: [String]) throws(CLIError) -> [DeviceSpec] {
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
    static func split(_ value: String) -> [String] {
        var specs: [String] = []
        var current = ""
        var rest = value[...]
        while let comma = rest.firstIndex(of: ",") {
            let after = rest[rest.index(after: comma)...]
            current += rest[..<comma]
            if after.hasPrefix("sim:") || after.hasPrefix("alsa:") || after.isEmpty || current.isEmpty {
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

    private static func emulatedIndex(_ text: Substring, in spec: String) throws(CLIError) -> Int {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .invalidDevice(spec)
        }
        guard let index = Int(text), emulatedRange.contains(index) else {
            throw .deviceOutOfRange(index: String(text), spec: spec)
        }
        return index
    }

    /// ALSA devices by name, then emulated Grokkers by number (the order `devices` lists).
    public static func < (lhs: DeviceSpec, rhs: DeviceSpec) -> Bool {
        switch (lhs, rhs) {
        case (.emulated(let a), .emulated(let b)): a < b
        case (.alsa(let a), .alsa(let b)): a < b
        case (.alsa, .emulated): true
        case (.emulated, .alsa): false
        }
    }
}
