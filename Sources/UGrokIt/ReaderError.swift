import GrokBasics
import GrokAudio
import GrokProtocol

/// Everything that can go wrong talking to a Grokker. `code` is stable (`--json`, message
/// catalog `error.<code>`); `arguments` fill the localized message in order.
public enum ReaderError: Error, Sendable, Equatable, CodedError {
    /// The jack reports nothing plugged in (the vendor's NOT_PLUGGED_IN).
    case notPluggedIn(port: String)
    /// No handshake answer within the time allowed (CANNOT_HANDSHAKE).
    case cannotHandshake(port: String, seconds: Double)
    /// No handshake answer, and a control of the card's mixer stands below what a session
    /// sets (muted, or under its level): the control to raise.
    case levelTooLow(port: String, shortfall: LevelShortfall)
    /// Connected, but the reader never said what it is (CANNOT_GET_INFO).
    case cannotGetInfo(port: String)
    /// The reader speaks a link or reader protocol we don't (INCOMPATIBLE_READER).
    /// `detail` is a code under `reader.detail` (`protocol_too_old`).
    case incompatibleReader(port: String, detail: ErrorDetail)
    /// A command got no answer in time. `recovery` is a code under `reader.detail` saying
    /// what was tried after the packet layer's tries: `reset_failed` (the link was reset and
    /// the Grokker did not connect again), `reset_unanswered` (it reconnected, and the
    /// command sent again got no answer either), `resets_used_up` (no reset: the
    /// connection's allowance is spent) or `no_reset` (none applies to this wait).
    case timeout(port: String, command: String, seconds: Double, recovery: ErrorDetail)
    /// `command` got no answer; the link was reset and the Grokker reconnected, but the
    /// command was not sent again because it may already have taken effect (a counter
    /// reset, a firmware write): look at the reader's state before repeating it.
    case outcomeUnknown(port: String, command: String)
    /// The ``Reader`` is not open (``Reader/openConnection()`` was not called, or the
    /// connection was closed): nothing was sent.
    case notOpen(port: String)
    /// The link dropped while waiting.
    case lostConnection(port: String)
    /// The reader answered with an error status.
    case rejected(port: String, command: String, status: String)
    /// The audio port failed.
    case audio(AudioError)
    /// The vendor protocol (host library 1.7.16) has no wire form for `feature`, so the
    /// Grokker cannot be asked for it (nothing was sent).
    case notSupported(port: String, feature: String)
    /// The reader's answer could not be decoded.
    /// `detail` is a code under `reader.detail`: `undecodable_answer` or `unexpected_answer`
    /// with the command's name.
    case malformedResponse(port: String, detail: ErrorDetail)
    /// A region name that is not one of the vendor's (nothing was sent).
    case unknownRegion(String)
    /// The reader must have its region set before it runs inventory (REGION_NOT_SET).
    case regionNotSet(port: String)
    /// The reader's firmware (`firmware`) is too old to set a region (vendor "firmware does
    /// not support set region"): update the firmware first.
    case firmwareDoesNotSupportSetRegion(port: String, firmware: String)
    /// The region catalogue does not let this reader (its hardware revision and serial
    /// number) choose `region` (nothing was sent).
    case regionNotApproved(port: String, region: String)
    /// The reader refused every allocation of `region` (`allocations`, one per hardware
    /// band, e.g. `866.3-867.5 MHz, 916.25-920.75 MHz`): its radio tunes none of them.
    case regionNotForHardware(port: String, region: String, allocations: String)
    /// The configuration asks listen before talk `on` (or off) where `region`'s `rule` does
    /// not let a configuration change it (nothing was sent).
    case listenBeforeTalkNotAllowed(port: String, region: String, on: Bool, rule: String)
    /// Tag access needs a running inventory (nothing was sent).
    case noInventoryRunning(port: String)
    /// Not while an inventory runs (battery); stop it first (nothing was sent).
    case inventoryRunning(port: String)
    /// Tag memory is addressed in 16-bit words: a byte offset or a data length was odd
    /// (nothing was sent).
    case oddTagMemoryBytes(field: String, value: Int)
    /// A value the SDK refuses before sending anything: `field` is `value`, `allowed` says
    /// what it may be.
    case invalidArgument(field: String, value: String, allowed: String)
    /// The Grokker has a password and this connection has not authenticated
    /// (vendor REQUIRES_AUTHENTICATION); call `authenticateGrokker` first.
    case authenticationRequired(port: String)

    public var code: String {
        switch self {
        case .notPluggedIn: "reader_not_plugged_in"
        case .cannotHandshake: "reader_cannot_handshake"
        case .levelTooLow(_, let s): "reader_\(s.side)_\(s.muted ? "muted" : "level_low")"
        case .cannotGetInfo: "reader_cannot_get_info"
        case .incompatibleReader: "reader_incompatible"
        case .timeout: "reader_timeout"
        case .outcomeUnknown: "reader_outcome_unknown"
        case .notOpen: "reader_not_open"
        case .lostConnection: "reader_lost_connection"
        case .rejected: "reader_rejected"
        case .audio(let e): e.code
        case .notSupported: "reader_not_supported"
        case .malformedResponse: "reader_malformed_response"
        case .unknownRegion: "reader_unknown_region"
        case .regionNotSet: "reader_region_not_set"
        case .firmwareDoesNotSupportSetRegion: "reader_set_region_not_supported"
        case .regionNotApproved: "reader_region_not_approved"
        case .regionNotForHardware: "reader_region_not_for_hardware"
        case .listenBeforeTalkNotAllowed(_, _, let on, _): on ? "reader_lbt_on_not_allowed" : "reader_lbt_off_not_allowed"
        case .noInventoryRunning: "reader_no_inventory"
        case .inventoryRunning: "reader_inventory_running"
        case .oddTagMemoryBytes: "reader_odd_tag_memory_bytes"
        case .invalidArgument: "reader_invalid_argument"
        case .authenticationRequired: "reader_authentication_required"
        }
    }

    public var arguments: [String] {
        switch self {
        case .notPluggedIn(let p), .cannotGetInfo(let p), .lostConnection(let p), .regionNotSet(let p),
             .noInventoryRunning(let p), .inventoryRunning(let p), .authenticationRequired(let p), .notOpen(let p): [p]
        case .oddTagMemoryBytes(let field, let value): [field, String(value)]
        case .invalidArgument(let field, let value, let allowed): [field, value, allowed]
        case .cannotHandshake(let p, let s): [p, seconds(s)]
        case .levelTooLow(let p, let s):
            s.muted ? [p, s.control, s.loudestInputDBFS] : [p, s.control, String(s.percent ?? 0), s.loudestInputDBFS]
        case .incompatibleReader(let p, let d): [p] + d.flattened
        case .timeout(let p, let c, let s, let r): [p, c, seconds(s)] + r.flattened
        case .outcomeUnknown(let p, let c): [p, c]
        case .rejected(let p, let c, let s): [p, c, s]
        case .audio(let e): e.arguments
        case .notSupported(let p, let f): [p, f]
        case .malformedResponse(let p, let d): [p] + d.flattened
        case .unknownRegion(let name): [name]
        case .firmwareDoesNotSupportSetRegion(let p, let f): [p, f]
        case .regionNotApproved(let p, let r): [p, r]
        case .regionNotForHardware(let p, let r, let a): [p, r, a]
        case .listenBeforeTalkNotAllowed(let p, let r, _, let rule): [p, r, rule]
        }
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }
}

private func seconds(_ s: Double) -> String {
    s == s.rounded() ? String(Int(s)) : String((s * 10).rounded() / 10)
}
