import GrokBasics
import GrokLink
import GrokProtocol

// Host recovery as the vendor's host does it: when the link fails under a request (all its
// tries spent, or the carrier lost), reset the link, handshake again at the stored setting,
// ask GetVersion, send the configurations the application set, then send the request again
// (docs/vendor-protocol.md, section 4.7).

/// What a request may have done to the reader when its answer never came, so what the
/// session may do about it after a link reset.
public enum LinkRecoveryPolicy: Sendable, Equatable {
    /// Sending it twice leaves the reader as sending it once (a read, a setting written to
    /// the same value, a fresh inventory start, a measurement): reset, reconnect, send again.
    case repeatAfterReset
    /// It may have taken effect and a second one would change more (a read-and-clear of the
    /// reader's counters): reset and reconnect, so the session is usable, then report
    /// ``ReaderError/outcomeUnknown(port:command:)`` without sending it again.
    case reportAfterReset
    /// Its caller runs its own reset (the firmware update's chunks and its change of
    /// software type: ``FirmwareUpdater`` resets, reconnects and resumes at the chunk's
    /// address as the vendor's updater does); the session does not reset for it.
    case leaveToCaller

    /// The policy of `request`.
    public static func of(_ request: VendorRequest) -> LinkRecoveryPolicy {
        switch request {
        case .programReader, .changeSoftwareType: .leaveToCaller
        case .getDiagnostics(let reset): reset ? .reportAfterReset : .repeatAfterReset
        case .getVersion, .getBatteryLevel, .provisioning, .echoMaster, .inventory, .pauseConnection, .playSound,
             .getConfiguration, .setConfiguration, .echo, .tuneAntenna, .getDetailedAntennaTuning, .speakerTest,
             .getAntennaTuning, .setRegion, .continuousTest, .setTestFlags, .getTestFlags, .scanAllFrequencies,
             .getTemperature, .scanWide:
            .repeatAfterReset
        }
    }
}

/// What the session does when the link failed under a request: a pure decision from the
/// request, how it was sent and the session's allowance (the caller does the I/O).
public enum LinkRecoveryDecision: Sendable, Equatable {
    /// Reset and reconnect; send the request again when `repeat` is true.
    case reset(repeat: Bool)
    /// No reset; the failure is reported, with `reason` (a code under `reader.detail`:
    /// `no_reset`, `resets_used_up`).
    case report(reason: String)

    /// - Parameters:
    ///   - request: the request whose answer never came.
    ///   - retries: whether it was sent with the packet layer's retries (a caller that
    ///     expects a refusal sends without them, and hears the failure at once).
    ///   - nested: whether the failure happened while a connection was being set up (a
    ///     connection's GetVersion, a recovery's configurations sent again): a recovery
    ///     never starts another, and a connection's caller retries connecting itself.
    ///   - plugged: whether the jack may hold a Grokker (false only when the port knows it
    ///     is empty: a reset cannot bring anything back then).
    ///   - used: resets this session has tried so far.
    ///   - allowed: resets a session may try (``ReaderOptions/maximumLinkRecoveries``).
    public static func decide(_ request: VendorRequest, retries: Bool, nested: Bool, plugged: Bool = true,
                              used: Int, allowed: Int) -> LinkRecoveryDecision {
        let policy = LinkRecoveryPolicy.of(request)
        guard retries, !nested, plugged, policy != .leaveToCaller else { return .report(reason: "no_reset") }
        guard used < allowed else { return .report(reason: "resets_used_up") }
        return .reset(repeat: policy == .repeatAfterReset)
    }
}

/// A link recovery as the session's listeners hear it (``ReaderSession/linkRecoveryListeners``).
public enum LinkRecoveryEvent: Sendable, Equatable {
    /// The link failed under `command`; the session resets it (the vendor's CONNECTING).
    case started(command: String)
    /// The Grokker answered the new connection's GetVersion and took the configurations
    /// sent again (the vendor's CONNECTED); `command` goes again if it may.
    case reconnected(command: String)
    /// The Grokker did not come back (or another unit answered, or it refused a
    /// configuration sent again).
    case failed(command: String)
}

extension ReaderSession {
    /// Quiet between the reset and the new handshake, seconds of audio: the vendor's
    /// platform layer stops its player and recorder, sleeps 100 ms and builds them again
    /// (`0xb6c4`).
    static let resetQuietSeconds = 0.1

    /// Resets the link after `command` failed on it and connects again as the vendor's host
    /// does: quiet, the handshake at ``samplesPerBit`` (up to
    /// ``ReaderOptions/linkRecoverySeconds``), GetVersion, then every configuration the
    /// application set (the vendor's kinds 0-3, in that order); configurations only read
    /// from the reader are forgotten (read again when asked). Returns whether the same
    /// Grokker is connected again.
    func recoverLink(after command: String) throws(ReaderError) -> Bool {
        linkRecoveries += 1
        let before = version
        log(.connectionErrors, "\(command) failed on the link: resetting it (recovery \(linkRecoveries) of \(options.maximumLinkRecoveries))")
        for listener in linkRecoveryListeners { listener(.started(command: command)) }
        settingUpConnection = true
        defer { settingUpConnection = false }
        let back: Bool
        do throws(ReaderError) {
            disconnect()
            _ = try pump(forAtMost: Self.resetQuietSeconds) { false }
            let info = try connect(handshakeTimeout: options.linkRecoverySeconds)
            if let before, info.serialNumber != before.serialNumber {
                log(.connectionErrors, "another Grokker (serial \(info.serialNumber), not \(before.serialNumber)) answered after the reset")
                disconnect()
                back = false
            } else {
                for kind in VendorConfigurationKind.allCases where !configurationsSet.contains(kind) {
                    configurationCache[kind] = nil
                }
                for kind in VendorConfigurationKind.allCases where configurationsSet.contains(kind) {
                    if let configuration = configurationCache[kind] { try call(.setConfiguration(configuration)) }
                }
                back = true
            }
        } catch {
            if case .audio = error { throw error }
            log(.connectionErrors, "the link reset after \(command) did not bring the Grokker back: \(error)")
            back = false
        }
        if !back { linkRecoveriesFailed += 1 }
        for listener in linkRecoveryListeners { listener(back ? .reconnected(command: command) : .failed(command: command)) }
        return back
    }
}
