import GrokAudio
import GrokLink
import GrokProtocol

/// One AutoConfig step: the setting and the echoes it must pass.
public struct AutoConfigStep: Sendable, Hashable {
    public var samplesPerBit: Int
    public var rounds: Int
    public init(samplesPerBit: Int, rounds: Int) {
        self.samplesPerBit = samplesPerBit
        self.rounds = rounds
    }
}

/// The order AutoConfig tries its steps in, as a pure decision: given the steps tried so
/// far and whether each passed, the next step to run or the setting to keep. The steps
/// themselves (a connection and N - 1 echoes, failing at the first echo that needs a
/// retry) are the vendor's whatever the order.
public enum AutoConfigOrder: Sendable, Hashable {
    /// The vendor's: 12, 10, 8 spb while each passes, keeping the last that passed; if 12
    /// fails, 36, then 72, keeping the first that passes.
    case vendor
    /// Ours: from the first step of ``ReaderSession/autoConfigLadder`` at or slower than
    /// `startingAt` spb (a stored setting, or the fastest), one step slower each time a
    /// step fails; keeps the first that passes. Our receiver decodes about 7 dB below the
    /// vendor's, so the fastest setting usually passes and a known Grokker needs one step.
    case fastestFirst(startingAt: Int)

    /// What AutoConfig does next.
    public enum Next: Sendable, Hashable {
        /// Run this step.
        case run(AutoConfigStep)
        /// Finish, keeping this setting (`nil`: no step passed).
        case keep(Int?)
    }

    /// The next action after `tried` (each step's samples per bit and whether it passed, in order).
    public func next(after tried: [(samplesPerBit: Int, passed: Bool)]) -> Next {
        switch self {
        case .vendor:
            let faster = ReaderSession.autoConfigFaster
            var index = 0
            for step in faster {
                guard index < tried.count else { return .run(step) }
                guard tried[index].passed else { break }
                index += 1
            }
            if index > 0 { return .keep(faster[index - 1].samplesPerBit) }
            // 12 failed: slower, the first that passes.
            for (offset, step) in ReaderSession.autoConfigSlower.enumerated() {
                guard offset + 1 < tried.count else { return .run(step) }
                if tried[offset + 1].passed { return .keep(step.samplesPerBit) }
            }
            return .keep(nil)
        case .fastestFirst(let start):
            let ladder = ReaderSession.autoConfigLadder
            let first = ladder.firstIndex { $0.samplesPerBit >= start } ?? ladder.count - 1
            for (offset, step) in ladder[first...].enumerated() {
                guard offset < tried.count else { return .run(step) }
                if tried[offset].passed { return .keep(step.samplesPerBit) }
            }
            return .keep(nil)
        }
    }
}

extension ReaderSession {
    /// The vendor's AutoConfig steps at one sample rate: from 12 spb faster (12: 16 echoes,
    /// 10: 21, 8: 21) while each passes; if 12 fails, slower (36, then 72).
    public static let autoConfigFaster = [AutoConfigStep(samplesPerBit: 12, rounds: 16), AutoConfigStep(samplesPerBit: 10, rounds: 21),
                                          AutoConfigStep(samplesPerBit: 8, rounds: 21)]
    /// The slower steps (round counts ours: the vendor's were only seen failing, at rounds 11 and 5).
    public static let autoConfigSlower = [AutoConfigStep(samplesPerBit: 36, rounds: 16), AutoConfigStep(samplesPerBit: 72, rounds: 16)]
    /// Every step AutoConfig has, fastest first: the ladder a stored setting that fails
    /// drops down, one step at a time.
    public static let autoConfigLadder = (autoConfigFaster + autoConfigSlower).sorted { $0.samplesPerBit < $1.samplesPerBit }

    /// The step below `samplesPerBit` on ``autoConfigLadder`` (nil at the slowest).
    public static func autoConfigStep(below samplesPerBit: Int) -> Int? {
        autoConfigLadder.first { $0.samplesPerBit > samplesPerBit }?.samplesPerBit
    }

    /// AutoConfig (vendor `openConnection` with auto-configuration): each step of N rounds
    /// is a connection at its setting (handshake and GetVersion, the first round) and N - 1
    /// echoes of 100 random bytes; a step fails at the first echo that needs a retry. The
    /// steps come in `order`'s order. In the vendor's order it keeps the fastest setting that
    /// passed and reconnects at it (handshake and GetVersion), as the vendor's capture shows
    /// (autoconfig/00: GetVersion + 15 echoes at 12, GetVersion + 20 at 10, GetVersion + 20
    /// at 8, GetVersion at 8). In ours, a session already connected at the first step's
    /// setting counts that connection as the step's first round, and the step that passed
    /// stays connected (no second handshake).
    /// The vendor's 48 kHz steps need a port that can change its rate, which ``AudioPort``
    /// cannot: they are not run. Returns the samples per bit kept.
    /// - Throws: when no setting works, ``ReaderError/levelTooLow(port:shortfall:)`` if a
    ///   level of the port's card stands below a session's, else
    ///   ``ReaderError/cannotHandshake(port:seconds:)``.
    @discardableResult
    public func autoConfig(order: AutoConfigOrder = .vendor) throws(ReaderError) -> Int {
        var tried: [(samplesPerBit: Int, passed: Bool)] = []
        while true {
            switch order.next(after: tried) {
            case .run(let step):
                let connected = order != .vendor && tried.isEmpty && isConnected && link.samplesPerBit == step.samplesPerBit
                tried.append((step.samplesPerBit, try passes(step, alreadyConnected: connected)))
            case .keep(let kept):
                guard let kept else {
                    // No setting worked: a level that stands below a session's is the likelier
                    // cause than the settings, and the error names it (as a handshake does).
                    if let shortfall = port.levelShortfall { throw .levelTooLow(port: port.name, shortfall: shortfall) }
                    throw .cannotHandshake(port: port.name, seconds: options.handshakeTimeout)
                }
                samplesPerBit = kept
                let stillConnected = order != .vendor && isConnected && link.samplesPerBit == kept
                if !stillConnected {
                    disconnect()
                    try connect()
                }
                log(.byteProtocol, "AutoConfig kept \(kept) spb")
                return kept
            }
        }
    }

    /// One step: connected at its setting (unless already) and its echoes; false when any
    /// fails. Only a port that cannot be used (audio, nothing plugged in) ends AutoConfig.
    private func passes(_ step: AutoConfigStep, alreadyConnected: Bool) throws(ReaderError) -> Bool {
        do {
            if !alreadyConnected {
                disconnect()
                samplesPerBit = step.samplesPerBit
                try connect()
            }
            for _ in 1..<step.rounds {
                guard try echo(echoBytes(), retries: false) else { return false }
            }
            return true
        } catch .audio(let error) {
            throw .audio(error)
        } catch .notPluggedIn(let p) {
            throw .notPluggedIn(port: p)
        } catch {
            log(.connectionErrors, "AutoConfig step \(step.samplesPerBit) spb failed: \(error)")
            return false
        }
    }
}
