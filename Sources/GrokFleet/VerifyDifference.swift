import GrokBasics
import GrokProtocol

/// One factory-data field a profile's `provisioning` section wants different from what the
/// unit holds: the field's code and both values as codes or numbers (never words), so the
/// dry run's plan and `verify` read whole in the user's language (`fleet.provisioning_change.<field>`).
public struct ProvisioningChange: Sendable, Hashable {
    /// `serial_number`, `antenna_type`, `hardware_revision` or `provisioning_status`.
    public var field: String
    /// The value the unit holds: `not_registered` for a serial number, a number, or a
    /// provisioning status's name (`none`, `tested`, `complete`, `returned`, `status_N`).
    public var found: String
    /// The value the profile wants, in the same form (`registered` for a serial number).
    public var wanted: String

    public init(field: String, found: String, wanted: String) {
        self.field = field
        self.found = found
        self.wanted = wanted
    }

    /// The changes in message form: field, found, wanted, for each change in turn, then an
    /// empty end mark (the catalog's `{n@fleet.provisioning_change}` reads one change and
    /// goes on to the next until it meets the mark).
    static func arguments(_ changes: [ProvisioningChange]) -> [String] {
        changes.flatMap { [$0.field, $0.found, $0.wanted] } + [""]
    }

    /// For logs and the ledger's detail: `serial_number not_registered → registered, ...`.
    static func summary(_ changes: [ProvisioningChange]) -> String {
        changes.map { "\($0.field) \($0.found) → \($0.wanted)" }.joined(separator: ", ")
    }
}

/// What `verify` found different from the profile, as data: region codes, versions and
/// factory-data codes, which the catalog's `fleet.verify.<kind>` entries put in words.
public enum VerifyDifference: Sendable, Hashable {
    /// The unit's region (`found`, a region code; `nil`: none set) is not what the profile
    /// sets (`allowedOnly` false: `expected` is the one region of `region.set`) or allows
    /// (`allowedOnly` true: `expected` are the codes of `region.allowed`).
    case region(expected: [String], allowedOnly: Bool, found: String?)
    /// The unit runs `found` where the profile expects `expected` (`nil`: the newest the
    /// channel offers it); `inLoader`: the unit is in its loader, `found` is the loader's version.
    case firmware(expected: String?, found: String, inLoader: Bool)
    /// The factory data differ, every differing field in order.
    case provisioning([ProvisioningChange])

    /// The entry under `fleet.verify` that says it.
    public var kind: String {
        switch self {
        case .region(_, let allowedOnly, let found): (allowedOnly ? "region_allowed" : "region_set") + (found == nil ? "_not_set" : "")
        case .firmware(let expected, _, let inLoader): inLoader ? "firmware_in_loader" : expected == nil ? "firmware_latest" : "firmware"
        case .provisioning: "provisioning"
        }
    }

    /// The kind, then its values (for `{n@fleet.verify}`).
    public var arguments: [String] {
        switch self {
        case .region(let expected, _, let found): [kind, expected.joined(separator: ",")] + (found.map { [$0] } ?? [])
        case .firmware(let expected, let found, _): [kind] + (expected.map { [$0] } ?? []) + [found]
        case .provisioning(let changes): [kind] + ProvisioningChange.arguments(changes)
        }
    }
}
