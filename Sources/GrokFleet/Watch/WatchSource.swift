import Foundation
import GrokAudio
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

/// The station's sound cards as watched ports: each duplex card once (by its `usb:` name
/// where it is on USB, ``ProbeJob/ports(cards:emulated:)``), the list read at the start and
/// again only when `events` tells a card may have come or gone (udevd's events, inotify on
/// `/dev/snd`, or `/proc/asound/cards` compared on every look: ``CardEvents``). What a card
/// holds: where it reports its jack, nothing while the jack is empty (the jack read again
/// only when the card's control events say a jack changed, ``ALSAJackEvents``, or on every
/// look where it gives none); otherwise (and to learn who is in a plugged jack) a handshake
/// probe (``ProbeJob``) every `probeInterval` seconds on its own thread, while no worker is
/// on the port: a Grokker that answers is there (known by its serial), a port where none
/// answers is empty, a port another grokctl holds keeps what it had.
public final class CardWatchSource: WatchSource, @unchecked Sendable {
    public let probe: ProbeJob
    public let probeInterval: Double
    /// What tells this source that the cards may have changed.
    public let events: any CardEventSource
    private let listCards: @Sendable () -> [SoundCard]
    private let lock = NSLock()
    private var listed = false
    /// A card that reports its jack: its ALSA name, its control events where they can be
    /// had, and the jack as last read.
    private struct Jack {
        var device: String
        var events: ALSAJackEvents?
        var plugged: Bool? = nil
        var read = false
    }
    /// The watched ports, with the jack of a card that reports one.
    private var ports: [(spec: DeviceSpec, jack: Jack?)] = []
    private var holds: [String: String] = [:]
    private var probing: Set<String> = []
    private var probed: [String: Date] = [:]

    /// - Parameter events: by default the best this machine offers (``CardEvents/open(udevControl:soundDirectory:cardsFile:)``).
    public init(probe: ProbeJob, probeInterval: Double = 3, events: any CardEventSource = CardEvents.open(),
                listCards: @escaping @Sendable () -> [SoundCard]) {
        self.probe = probe
        self.probeInterval = probeInterval
        self.events = events
        self.listCards = listCards
    }

    public func scan(busy: Set<String>) throws(FleetError) -> [WatchedPort] {
        lock.lock()
        defer { lock.unlock() }
        let heard = events.changes()
        if !listed || !heard.isEmpty {
            listed = true
            let cards = listCards()
            ports = ProbeJob.ports(cards: cards, emulated: []).map { spec in
                let card = cards.first { $0.device == spec || $0.usb.map { DeviceSpec.usb(path: $0.path) } == spec }
                guard card?.jackPlugged != nil, case .alsa(let name)? = card?.device else { return (spec, nil) }
                // Subscribed before the jack is first read: no change falls between.
                return (spec, Jack(device: name, events: ALSAJackEvents(device: name)))
            }
            let kept = Set(ports.map(\.spec.description))
            holds = holds.filter { kept.contains($0.key) }
        }
        let now = Date()
        for index in ports.indices {
            let key = ports[index].spec.description
            guard !busy.contains(key), !probing.contains(key) else { continue }
            if var jack = ports[index].jack {
                // Read again only when the card said a jack changed (or gives no events).
                let changed = jack.events?.changed()
                if changed == nil { jack.events = nil }
                if changed != false || !jack.read {
                    jack.plugged = ALSADevices.jackPlugged(device: jack.device)
                    jack.read = true
                }
                ports[index].jack = jack
                if jack.plugged == false {
                    holds[key] = nil
                    continue
                }
            }
            guard now.timeIntervalSince(probed[key] ?? .distantPast) >= probeInterval else { continue }
            probing.insert(key)
            let probe = self.probe
            let spec = ports[index].spec
            let thread = Thread { [self] in
                let finding = probe.probe(spec)
                lock.lock()
                defer { lock.unlock() }
                probing.remove(key)
                probed[key] = Date()
                switch finding.answer {
                case .grokker(let identity): holds[key] = "serial \(identity.serial)"
                case .silent, .failed: holds[key] = nil
                case .busy: break
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        return ports.map { WatchedPort(spec: $0.spec, holds: holds[$0.spec.description]) }
    }
}

/// Several sources watched as one (the emulated bench and the sound cards).
public struct CombinedWatchSource: WatchSource {
    public let sources: [any WatchSource]

    public init(_ sources: [any WatchSource]) {
        self.sources = sources
    }

    public func scan(busy: Set<String>) throws(FleetError) -> [WatchedPort] {
        var ports: [WatchedPort] = []
        for source in sources { ports += try source.scan(busy: busy) }
        return ports
    }
}
