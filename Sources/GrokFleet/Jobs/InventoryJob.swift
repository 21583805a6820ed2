import Foundation
import UGrokIt

/// `grokctl inventory`: reads the tags around each Grokker for a while (each device on a
/// thread of its own) and tells what each one found; with one device, the tags found so far
/// every quarter second (the live table).
public struct InventoryJob: Sendable {
    public var access: DeviceAccess
    public var configuration: UgiRfidConfiguration
    /// How long each Grokker collects reads, in seconds of audio (the audio clock: wall-clock
    /// time only when the audio is played live, a sound card or `--realtime`).
    public var seconds: Double

    public init(access: DeviceAccess, configuration: UgiRfidConfiguration, seconds: Double) {
        self.access = access
        self.configuration = configuration
        self.seconds = seconds
    }

    /// The configuration `grokctl inventory` runs: the vendor's preset for `type`, asking
    /// the reader for RSSI (no preset does) so each tag's RSSI is the reader's figure.
    public static func configuration(inventoryType type: UgiInventoryType) -> UgiRfidConfiguration {
        var configuration = UgiRfidConfiguration.config(inventoryType: type)
        configuration.reportRssi = true
        return configuration
    }

    /// What one Grokker found: its tags and the reads they came from. Every time is on the
    /// audio clock, counted from the inventory's start going out: a tag's
    /// ``UgiTag/firstRead`` and ``UgiTagReadState/mostRecentRead`` are that many seconds
    /// after the reference date (1970-01-01), never after ``seconds``.
    public struct Found: Sendable, Hashable {
        public var tags: [UgiTag]
        public var reads: Int
        /// How long the inventory ran, in seconds of audio: from its start going out to the
        /// reader's completion after the stop (a little more than ``InventoryJob/seconds``).
        public var seconds: Double
    }

    /// Runs every device at once; the results in the order given.
    public func run(_ devices: [DeviceSpec]) -> [DeviceResult<Found>] {
        FleetRunner.each(devices) { run($0) }
    }

    /// Runs one device on the calling thread. With `progress`, the audio goes a quarter second
    /// at a time and `progress` gets the tags found so far after each.
    public func run(_ spec: DeviceSpec, progress: (([UgiTag]) -> Void)? = nil) -> DeviceResult<Found> {
        DeviceResult(device: spec, outcome: Result { try inventory(spec, progress: progress) })
    }

    private func inventory(_ spec: DeviceSpec, progress: (([UgiTag]) -> Void)?) throws -> Found {
        try access.connected(spec) { session, _ in
            let tracker = InventoryTracker(start: Date(timeIntervalSince1970: 0), configuration: configuration)
            try session.startInventory(configuration)
            if let progress {
                var elapsed = 0.0
                while elapsed < seconds {
                    let step = min(0.25, seconds - elapsed)
                    try session.collect(forAtMost: step)
                    elapsed += step
                    for report in session.takeReports() { tracker.take(report) }
                    tracker.advance(toMilliseconds: session.inventoryElapsedMilliseconds)
                    progress(tracker.tags)
                }
            } else {
                try session.collect(forAtMost: seconds)
            }
            _ = try session.stopInventory()
            for report in session.takeReports() { tracker.take(report) }
            let ran = session.inventorySeconds ?? Double(session.inventoryElapsedMilliseconds) / 1000
            return Found(tags: tracker.tags, reads: tracker.readsTaken, seconds: ran)
        }
    }
}
