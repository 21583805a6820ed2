import GrokCommandLine
import GrokFleet
import UGrokIt

/// `grokctl __complete <source>`: what the completion scripts offer for a value that
/// depends on the station (``CompletionSource``), one candidate a line. Hidden: no help, no
/// man page, no usage error (a shell completing shows nothing rather than a message).
enum CompletionCandidates {
    /// The candidates for `source` on this station, in the order offered.
    ///
    /// - device: the emulated Grokkers on the bench (`sim:N`) and the sound cards
    ///   (`alsa:hw:N,0`) a Grokker can be plugged into;
    /// - profile: the profiles' names in the per-user, system and shipped directories;
    /// - region: the region codes (`region set` also takes names and numbers).
    static func list(_ source: CompletionSource, environment: [String: String]) -> [String] {
        switch source {
        case .device:
            let bench = Bench(directory: GlobalOptions.defaultBench(environment: environment))
            let emulated = ((try? bench.emulatedDevices()) ?? []).map { DeviceSpec.emulated(index: $0).description }
            return emulated + SoundCard.list().map(\.device.description)
        case .profile:
            // A broken station settings file completes nothing (the command itself will say why).
            return (try? InstallPaths(environment: environment).knownProfiles()) ?? []
        case .region:
            return RegionCatalog.all.map(\.code)
        }
    }

    /// Prints the candidates for `arguments` (`[source]`); an unknown source lists nothing.
    static func run(_ arguments: [String], environment: [String: String], console: Console) -> ExitCode {
        guard arguments.count == 1, let source = CompletionSource(rawValue: arguments[0]) else { return .usageError }
        for candidate in list(source, environment: environment) { console.print(candidate) }
        return .success
    }
}
