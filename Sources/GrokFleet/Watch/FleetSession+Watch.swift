import Foundation
import GrokBasics

extension FleetSession {
    /// Watches the station's bench until a stop (``Configuration/stopRequested``): each
    /// Grokker plugged into a port is worked through the profile by the profile's policy
    /// (a station asks no one), all of it one run in the ledger (``WatchSession``).
    /// `handle` hears every event on the calling thread.
    ///
    /// - Parameter statusFile: where the station's status is kept (``WatchStatus/path(stateDirectory:)``).
    /// - Throws: ``FleetError/recorderFailed(operation:subject:cause:)`` when the session cannot
    ///   be begun in the ledger; the bench's errors when it cannot be read at the start.
    public func watch(_ prepared: Prepared, statusFile: String?, pollInterval: Double = 0.25,
                      handle: (WatchSession.Event) -> Void) throws(FleetError) -> WatchSummary {
        guard let opened = prepared.ledger else {
            preconditionFailure("a dry run's preparation is for plan(_:interactive:)")
        }
        let session = WatchSession(profile: profile, firmware: prepared.firmware, decider: prepared.policy, recorder: opened.ledger,
                                   options: runOptions, source: Self.watchSource(configuration),
                                   ports: configuration.ports, pollInterval: pollInterval, statusFile: statusFile,
                                   stopRequested: configuration.stopRequested)
        let summary = try session.run(handle: handle)
        configuration.devicesFinished()
        return summary
    }

    /// What a station watches: the emulated bench's ports and the sound cards.
    static func watchSource(_ configuration: Configuration) -> any WatchSource {
        let ports = configuration.ports
        let probe = ProbeJob(access: DeviceAccess(ports: ports, readerOptions: configuration.readerOptions))
        return CombinedWatchSource([BenchWatchSource(bench: ports.bench),
                                    CardWatchSource(probe: probe) { SoundCard.list(alsaConfig: ports.alsaConfig, sysfs: ports.sysfs) }])
    }
}
