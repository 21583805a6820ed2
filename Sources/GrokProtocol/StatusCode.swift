/// Why a Grokker refused or failed a request. On the wire the first payload byte of every
/// response is a status: 0 means success (the opcode's result follows), anything else is
/// one of these codes (a message string follows; see ``Response/failure(opcode:status:message:)``).
///
/// Codes this build does not know (from a newer minor) decode as ``unrecognized(_:)``.
public enum StatusCode: Sendable, Hashable, CustomStringConvertible {
    /// The Grokker does not implement the opcode (1).
    case unsupportedOpcode
    /// The request's protocol major is not the Grokker's (2).
    case unsupportedVersion
    /// The request could not be decoded (3).
    case malformedRequest
    /// The request decoded but a value is out of range for this Grokker (4).
    case invalidArgument
    /// Another operation (inventory, firmware update) is running (5).
    case busy
    /// The command is not available in the current software (loader vs application) (6).
    case wrongMode
    /// The reader is not provisioned (vendor NOT_PROVISIONED) (7).
    case notProvisioned
    /// The region is not set and the hardware requires it (vendor REGION_NOT_SET) (8).
    case regionNotSet
    /// The request is understood but this unit does not permit it (e.g. its user may not
    /// choose the region) (9).
    case notAllowed
    /// The Grokker has a password and this link session has not authenticated
    /// (``Command/authenticateGrokker(_:)``) (10).
    case authenticationRequired
    /// The application firmware is too old to set the region (vendor "firmware does not
    /// support set region", `notifyFirmwareDoesNotSupportSetRegion`): update it first (11).
    case setRegionNotSupported
    /// The Grokker could not save its state (254).
    case storageFailure
    /// Anything else that went wrong inside the Grokker (255).
    case internalError
    /// A code this build does not know. `unrecognized(0)` is not a failure code and is
    /// sent as ``internalError``.
    case unrecognized(UInt8)

    private static let known: [StatusCode] = [
        .unsupportedOpcode, .unsupportedVersion, .malformedRequest, .invalidArgument, .busy,
        .wrongMode, .notProvisioned, .regionNotSet, .notAllowed, .authenticationRequired, .setRegionNotSupported, .storageFailure, .internalError,
    ]

    /// The status for a wire code (never called with 0, which means success).
    public init(code: UInt8) {
        self = Self.known.first { $0.code == code } ?? .unrecognized(code)
    }

    /// The status a Grokker answers a request with when the request failed to decode.
    public init(for error: ProtocolError) {
        switch error {
        case .unsupportedVersion: self = .unsupportedVersion
        case .unknownOpcode: self = .unsupportedOpcode
        default: self = .malformedRequest
        }
    }

    /// The wire code (1...255).
    public var code: UInt8 {
        switch self {
        case .unsupportedOpcode: 1
        case .unsupportedVersion: 2
        case .malformedRequest: 3
        case .invalidArgument: 4
        case .busy: 5
        case .wrongMode: 6
        case .notProvisioned: 7
        case .regionNotSet: 8
        case .notAllowed: 9
        case .authenticationRequired: 10
        case .setRegionNotSupported: 11
        case .storageFailure: 254
        case .internalError: 255
        case .unrecognized(let code): code == 0 ? 255 : code
        }
    }

    /// A stable name for machines and the message catalog (`status.<name>`).
    public var name: String {
        switch self {
        case .unsupportedOpcode: "unsupported_opcode"
        case .unsupportedVersion: "unsupported_version"
        case .malformedRequest: "malformed_request"
        case .invalidArgument: "invalid_argument"
        case .busy: "busy"
        case .wrongMode: "wrong_mode"
        case .notProvisioned: "not_provisioned"
        case .regionNotSet: "region_not_set"
        case .notAllowed: "not_allowed"
        case .authenticationRequired: "authentication_required"
        case .setRegionNotSupported: "set_region_not_supported"
        case .storageFailure: "storage_failure"
        case .internalError: "internal_error"
        case .unrecognized(let code): "status_\(code)"
        }
    }

    public var description: String { "\(name) (\(code))" }
}
