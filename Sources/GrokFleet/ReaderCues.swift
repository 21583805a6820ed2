import GrokLedger
import GrokProtocol
import UGrokIt

/// A moment a run tells the technician about through the Grokker's own speaker, so that a
/// person working a bench by ear knows where each unit stands without looking at a screen
/// (docs/fleet.md, "Cues"). The codes are the profile's `cues` keys.
public enum ReaderCue: String, Sendable, Hashable, CaseIterable {
    /// The Grokker answered and said who it is (identify done): one short blip.
    case recognised
    /// Its run ended done: a rising figure.
    case done
    /// Its run ended done and changed nothing: it already was as the profile wants (left
    /// alone, or verified when the station's profile says so): two short high blips, a
    /// greeting, so that a unit put back on the bench by mistake is told from one just done.
    case alreadyDone = "already_done"
    /// Its run ended failed, or refused: a low falling figure.
    case failed
    /// Its run ended needing a person: the battery too low for the update, the region
    /// refused or not chosen: a repeated beep.
    case attention

    /// The cue that closes a unit's run, from the run's mode, its outcome and its steps (the
    /// same rule for provision, rollout and verify); `nil`: none. A provision or rollout
    /// that ended done without changing the unit (``WatchResult/changedTheUnit(_:)``) greets
    /// it (already done); `verify` changes nothing, so its done is done. Only a unit that was recognised (its
    /// identify step done) gets one: a unit never reached cannot hear it, and one another
    /// run holds is that run's to speak to. Outcomes that ask nothing of the technician
    /// and are not done (postponed for the station's sake: a maintenance window, a halt, a
    /// declined question; left out of a rollout's stage; interrupted by a stop) close with
    /// no cue, as a halted unit (never reached) does.
    public static func closing(_ outcome: DeviceOutcome, steps: [StepOutcome], mode: FleetMode) -> ReaderCue? {
        guard steps.contains(where: { $0.step == .identify && $0.result == .done }) else { return nil }
        switch outcome {
        case .done:
            return mode == .verify || WatchResult.changedTheUnit(steps) ? .done : .alreadyDone
        case .failed:
            return .failed
        case .refused:
            let region = steps.contains { $0.result == .refused && attentionCodes.contains($0.code) }
            return region ? .attention : .failed
        case .postponed:
            return steps.contains { $0.result == .postponed && attentionCodes.contains($0.code) } ? .attention : nil
        case .halted, .interrupted, .notInStage:
            return nil
        }
    }

    /// The codes whose refusal or postponement needs a person at the unit: the battery too
    /// low for the update (charge it), the region refused or not chosen (choose one, or
    /// set the unit aside).
    static let attentionCodes: Set<String> = [
        FleetError.batteryLow(device: "", percent: 0, minimum: 0).code,
        FleetError.regionNotAllowed(device: "", region: "", allowed: []).code,
        FleetError.regionNotChosen(device: "").code,
    ]
}

/// The melody each ``ReaderCue`` plays (a profile's `cues`): tones of the vendor's sound
/// tables (frequency, length), at most ``maxTones`` and ``maxMilliseconds`` in all; a cue
/// without one is silenced.
public struct ReaderCues: Sendable, Equatable {
    /// Per cue its tones; a cue not listed plays nothing.
    public var melodies: [ReaderCue: [SoundTone]]

    public init(_ melodies: [ReaderCue: [SoundTone]]) {
        self.melodies = melodies
    }

    /// The most tones in a cue: a Grokker's sound holds 16 (GetVersion's `maxTonesInSound`);
    /// a unit that holds fewer refuses a longer cue, which is then not played.
    public static let maxTones = 16
    /// The longest cue, ms: the unit's run waits while it sounds.
    public static let maxMilliseconds = 3000
    /// The frequencies a tone may have besides 0 (a rest): what the piezo sounds.
    public static let frequencyHz = SoundLimits.frequencyHz
    /// The length of one tone, ms.
    public static let toneMilliseconds = 1...1000

    /// The cues when a profile does not say: each a different shape, so a technician tells
    /// them apart without learning pitches. Recognised: one short blip at the piezo's
    /// resonance (2.7 kHz, its loudest), "I heard you". Done: three notes rising to a held
    /// top note, the figure of "finished". Failed: two long notes falling low, far from
    /// the bright done. Already done: done's top note twice, short, with a gap: "hello again,
    /// nothing to do". Attention: three equal beeps with gaps, an alarm's "come and look".
    public static let standard = ReaderCues([
        .recognised: [SoundTone(frequencyHz: 2700, durationMs: 70)],
        .done: [SoundTone(frequencyHz: 2000, durationMs: 110), SoundTone(frequencyHz: 2700, durationMs: 110),
                SoundTone(frequencyHz: 3400, durationMs: 300)],
        .alreadyDone: [SoundTone(frequencyHz: 3400, durationMs: 60), SoundTone(frequencyHz: 0, durationMs: 80),
                       SoundTone(frequencyHz: 3400, durationMs: 60)],
        .failed: [SoundTone(frequencyHz: 1600, durationMs: 300), SoundTone(frequencyHz: 900, durationMs: 550)],
        .attention: [SoundTone(frequencyHz: 2700, durationMs: 120), SoundTone(frequencyHz: 0, durationMs: 110),
                     SoundTone(frequencyHz: 2700, durationMs: 120), SoundTone(frequencyHz: 0, durationMs: 110),
                     SoundTone(frequencyHz: 2700, durationMs: 120)],
    ])
}

extension DeviceWorker {
    /// Plays `cue` on the unit, unless the run is quiet (`--quiet-readers`), the profile
    /// silenced it, or the unit is not connected or answers from its loader (which has no
    /// sounds). A cue is a courtesy: one that cannot be played (the unit was unplugged, it
    /// refused the melody) is dropped and never fails the unit's run or its record.
    func play(_ cue: ReaderCue) {
        guard !runner.options.quietReaders, let tones = profile.cues.melodies[cue], !inLoader,
              let session, session.isConnected else { return }
        try? session.playTones(tones.map { UgiTone(frequencyHz: $0.frequencyHz, durationMs: $0.durationMs) })
    }
}
