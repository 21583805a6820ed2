import Foundation
import GrokBasics

/// What a watching station watches: its ports and what each holds now (``WatchSession``).
public protocol WatchSource: Sendable {
    /// Every watched port and what it holds. Called a few times a second; a source keeps it
    /// cheap (the bench reads ports.json only when it changed).
    /// - Parameter busy: the ports a worker is on now (a source that probes leaves them alone).
    func scan(busy: Set<String>) throws(FleetError) -> [WatchedPort]
}

/// One watched port and what is in it.
public struct WatchedPort: Sendable, Hashable {
    /// The port (`sim:3`, `usb:1-1.4`).
    public var spec: DeviceSpec
    /// What it holds, as a token that stays the same while the same Grokker stays plugged in
    /// (`unit 3`, a serial); `nil`: nothing (the jack is empty, nothing answers).
    public var holds: String?

    public init(spec: DeviceSpec, holds: String?) {
        self.spec = spec
        self.holds = holds
    }
}

/// The emulated bench as a hub of sound cards: ports `sim:0` to `sim:63`, what each holds
/// read from the bench (``Bench/content(ofPort:)``: a Grokker plugged into another port than
/// its own, or its own Grokker once it has state), re-read only when ports.json or the
/// bench's directory changed.
public final class BenchWatchSource: WatchSource, @unchecked Sendable {
    public let bench: Bench
    private let lock = NSLock()
    private var stamp: [Int64]?
    private var last: [WatchedPort] = []

    public init(bench: Bench) {
        self.bench = bench
    }

    public func scan(busy: Set<String>) throws(FleetError) -> [WatchedPort] {
        lock.lock()
        defer { lock.unlock() }
        var info = stat()
        let directory: [Int64] = stat(bench.directory, &info) == 0
            ? [Int64(info.st_ino), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec)] : []
        let now = directory + (bench.portsStamp() ?? [])
        if now == stamp, !last.isEmpty { return last }
        var ports: [WatchedPort] = []
        for port in DeviceSpec.emulatedRange {
            var holds: String?
            // A port holds its own Grokker once that one has state (a fresh bench's 64 ports
            // are not 64 Grokkers); one plugged into another port is there, used or not.
            if case .unit(let unit) = try bench.content(ofPort: port),
               unit != port || FileManager.default.fileExists(atPath: bench.stateDirectory(for: unit)) {
                holds = "unit \(unit)"
            }
            ports.append(WatchedPort(spec: .emulated(index: port), holds: holds))
        }
        stamp = now
        last = ports
        return ports
    }
}
