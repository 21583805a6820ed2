import Foundation
import GrokAudio
import GrokBasics
import GrokkerEmulator

/// The emulated bench's ports, as a hub of sound cards is: port `sim:N` holds an emulated
/// Grokker or nothing, and a Grokker can be unplugged from one port and plugged into another
/// (it is known by its serial, kept in its own state directory `sim-K`).
///
/// Nothing to configure on a bench that never changed: port N holds Grokker N. What changed is
/// kept in `<bench>/ports.json` (`{"format": 1, "ports": {"3": null, "5": 3}}`: port 3 is
/// empty, port 5 holds Grokker 3), written whole under a lock and renamed into place, so a
/// reader (a run, a watching station) never sees half of it. A port that is opened sees its
/// Grokker unplugged at once when the file says so (``BenchPort``).
extension Bench {
    /// What a port of the bench holds.
    public enum PortContent: Sendable, Hashable {
        /// Emulated Grokker `K` (its state in `sim-K`).
        case unit(Int)
        /// Nothing: the port's card is there, its jack is empty.
        case empty
    }

    /// Where the bench keeps what was plugged and unplugged.
    public var portsFile: String { directory + "/ports.json" }

    /// What port `port` holds now.
    ///
    /// - Throws: ``FleetError/benchPortsUnreadable(path:detail:)`` when ports.json exists and
    ///   cannot be read or is not the bench's.
    public func content(ofPort port: Int) throws(FleetError) -> PortContent {
        let changed = try readPorts()
        guard let entry = changed[port] else { return .unit(port) }
        return entry.map(PortContent.unit) ?? .empty
    }

    /// The port that holds Grokker `unit`, if any.
    public func port(holding unit: Int) throws(FleetError) -> Int? {
        let changed = try readPorts()
        if let moved = changed.first(where: { $0.value == unit })?.key { return moved }
        return changed[unit] == nil ? unit : nil
    }

    /// Plugs Grokker `unit` into `port`; a Grokker never used is made then, out of the box.
    ///
    /// - Throws: ``FleetError/benchPortOccupied(port:unit:)`` when the port holds a Grokker
    ///   (unplug it first), ``FleetError/benchUnitPluggedElsewhere(unit:port:)`` when the
    ///   Grokker sits in another port, ``FleetError/deviceOutOfRange(index:spec:)`` for a
    ///   number outside the bench, and the errors of reading and writing ports.json.
    public func plug(port: Int, unit: Int) throws(FleetError) {
        try checkRange(port)
        try checkRange(unit)
        try changePorts { changed throws(FleetError) in
            let holding = changed[port] ?? port
            if let holding {
                if holding == unit { return }
                // A port's own Grokker that was never used is not there yet: the port is free.
                let unused = changed[port] == nil && !hasState(holding)
                if !unused { throw .benchPortOccupied(port: "sim:\(port)", unit: String(holding)) }
            }
            let elsewhere = changed.first(where: { $0.value == unit })?.key ?? (changed[unit] == nil ? unit : nil)
            if let elsewhere { throw .benchUnitPluggedElsewhere(unit: String(unit), port: "sim:\(elsewhere)") }
            changed[port] = .some(unit)
        }
        // A Grokker plugged in exists: one never used is made now, out of the box (its serial
        // drawn), so a watching station sees it as it would a real one.
        do {
            var random = SystemRandomNumberGenerator()
            _ = try DeviceStateStore.openOrCreate(deviceDirectory: stateDirectory(for: unit), using: &random)
        } catch {
            throw .benchUnreadable(path: stateDirectory(for: unit), detail: "\(error)")
        }
    }

    /// Unplugs whatever `port` holds (nothing to do when it is empty).
    public func unplug(port: Int) throws(FleetError) {
        try checkRange(port)
        try changePorts { changed throws(FleetError) in changed[port] = .some(nil) }
    }

    /// A cheap fingerprint of ports.json (its inode, size and change time), to notice that
    /// it changed without reading it; `nil` while there is none.
    func portsStamp() -> [Int64]? {
        var info = stat()
        guard stat(portsFile, &info) == 0 else { return nil }
        return [Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec)]
    }

    // MARK: ports.json

    /// The file's form: the ports that differ from "port N holds Grokker N".
    private struct PortsDocument: Codable {
        var format: Int
        var ports: [String: Int?]
    }

    static let portsFormat = 1

    /// The ports that differ from the default: port -> Grokker, or nil for an empty port.
    private func readPorts() throws(FleetError) -> [Int: Int?] {
        guard let data = FileManager.default.contents(atPath: portsFile) else {
            if FileManager.default.fileExists(atPath: portsFile) {
                throw .benchPortsUnreadable(path: portsFile, detail: "read_error")
            }
            return [:]
        }
        guard let document = try? JSONDecoder().decode(PortsDocument.self, from: data), document.format == Self.portsFormat else {
            throw .benchPortsUnreadable(path: portsFile, detail: "not_a_ports_file")
        }
        var changed: [Int: Int?] = [:]
        for (key, unit) in document.ports {
            guard let port = Int(key), DeviceSpec.emulatedRange.contains(port),
                  unit.map(DeviceSpec.emulatedRange.contains) ?? true else {
                throw .benchPortsUnreadable(path: portsFile, detail: "not_a_ports_file")
            }
            changed[port] = unit
        }
        return changed
    }

    /// Reads, changes and writes ports.json under `<bench>/ports.lock`, so two commands
    /// plugging at once do not lose each other's change. Entries equal to the default are
    /// dropped; a file with none left is removed.
    private func changePorts(_ change: (inout [Int: Int?]) throws(FleetError) -> Void) throws(FleetError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .benchUnreadable(path: directory, detail: (error as NSError).localizedDescription)
        }
        let lockPath = directory + "/ports.lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .benchUnreadable(path: lockPath, detail: String(cString: strerror(errno))) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .benchUnreadable(path: lockPath, detail: String(cString: strerror(errno))) }
        }
        var changed = try readPorts()
        try change(&changed)
        for (port, unit) in changed where unit == port { changed[port] = nil }
        do {
            if changed.isEmpty {
                if FileManager.default.fileExists(atPath: portsFile) { try FileManager.default.removeItem(atPath: portsFile) }
                return
            }
            let document = PortsDocument(format: Self.portsFormat,
                                         ports: Dictionary(uniqueKeysWithValues: changed.map { (String($0.key), $0.value) }))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            try AtomicFile.write([UInt8](try encoder.encode(document)) + [0x0A], to: portsFile)
        } catch {
            throw .benchUnreadable(path: portsFile, detail: "\(error)")
        }
    }

    /// Whether Grokker `unit` has been used (its state directory exists).
    private func hasState(_ unit: Int) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: stateDirectory(for: unit), isDirectory: &isDirectory) && isDirectory.boolValue
    }

    private func checkRange(_ number: Int) throws(FleetError) {
        guard DeviceSpec.emulatedRange.contains(number) else { throw .deviceOutOfRange(index: String(number), spec: "sim:\(number)") }
    }
}

/// A port of the emulated bench as the host sees it: the simulated cable to the Grokker the
/// port held when it was opened. Four times a second of audio it looks at ports.json; when
/// the port no longer holds that Grokker, the cable is unplugged (the jack reports empty and
/// nothing more reaches the unit), as pulling a real Grokker out of its card does; plugged
/// back into the same port, it is connected again.
final class BenchPort: AudioPort {
    private let cable: SimulatedCablePort
    private let bench: Bench
    private let port: Int
    private let unit: Int
    private let checkEvery: Int
    private var sinceCheck = 0
    private var stamp: [Int64]?

    init(_ cable: SimulatedCablePort, bench: Bench, port: Int, unit: Int) {
        self.cable = cable
        self.bench = bench
        self.port = port
        self.unit = unit
        checkEvery = max(1, cable.sampleRate / 4)
        stamp = bench.portsStamp()
    }

    var name: String { cable.name }
    var sampleRate: Int { cable.sampleRate }
    var jackPlugged: Bool? { cable.jackPlugged }
    var levelShortfall: LevelShortfall? { cable.levelShortfall }

    func transfer(output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>) throws(AudioError) {
        sinceCheck += output.count
        if sinceCheck >= checkEvery {
            sinceCheck = 0
            let now = bench.portsStamp()
            if now != stamp {
                stamp = now
                // A file being replaced that cannot be read keeps what the port had.
                if let content = try? bench.content(ofPort: port) { cable.plugged = content == .unit(unit) }
            }
        }
        try cable.transfer(output: output, input: input)
    }

    func close() { cable.close() }
}

/// The far end of an empty port: nothing answers, nothing is heard.
final class EmptyJack: CablePeer {
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        output.update(repeating: 0)
    }
}
