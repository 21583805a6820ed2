import Foundation
import GrokAudio
import GrokBasics

extension FleetSession {
    /// Watches the station's bench until a stop (``Configuration/stopRequested``): each
    /// Grokker plugged into a port is worked through the profile by the profile's policy
    /// (a station asks no one), all of it one run in the ledger (``WatchSession``).
    /// `handle` hears every event on the calling thread.
    ///
    /// - Parameters:
    ///   - statusFile: where the station's status is kept (``WatchStatus/path(stateDirectory:)``).
    ///   - cardsHeard: told once, before the session starts, how sound cards coming and going
    ///     are heard: `udev`, `inotify` (on /dev/snd) or `poll` (/proc/asound/cards), a
    ///     ``CardEventKind``'s code.
    /// - Throws: ``FleetError/recorderFailed(operation:subject:cause:)`` when the session cannot
    ///   be begun in the ledger; the bench's errors when it cannot be read at the start.
    public func watch(_ prepared: Prepared, statusFile: String?, pollInterval: Double = 0.25,
                      cardsHeard: (String) -> Void = { _ in }, handle: (WatchSession.Event) -> Void) throws(FleetError) -> WatchSummary {
        guard let opened = prepared.ledger else {
            preconditionFailure("a dry run's preparation is for plan(_:interactive:)")
        }
        let cards = Self.cardSource(configuration)
        cardsHeard(cards.events.kind.rawValue)
        let session = WatchSession(profile: profile, firmware: prepared.firmware, decider: prepared.policy, recorder: opened.ledger,
                                   options: runOptions, source: CombinedWatchSource([BenchWatchSource(bench: configuration.ports.bench), cards]),
                                   ports: configuration.ports, pollInterval: pollInterval, statusFile: statusFile,
                                   stopRequested: configuration.stopRequested)
        let summary = try session.run(handle: handle)
        configuration.devicesFinished()
        return summary
    }

    /// What a station watches besides the emulated bench's ports: the sound cards, heard
    /// through the best card events this machine offers (``CardEvents``).
    static func cardSource(_ configuration: Configuration) -> CardWatchSource {
        let ports = configuration.ports
        let probe = ProbeJob(access: DeviceAccess(ports: ports, readerOptions: configuration.readerOptions))
        return CardWatchSource(probe: probe) { SoundCard.list(alsaConfig: ports.alsaConfig, sysfs: ports.sysfs) }
    }
}
