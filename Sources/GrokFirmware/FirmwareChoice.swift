import GrokProtocol

// Which image a unit gets, decided once for every caller: a fleet run (provision, rollout,
// verify), `firmware flash`, the vendor-shaped channel calls and the updater's own check.

/// A unit as the firmware choice sees it: what it said about itself (GetVersion) and whether
/// it answered from its loader.
public struct FirmwareUnit: Sendable, Hashable {
    /// Hardware, revision, running version, reader protocol and serial number.
    public var identity: DeviceIdentity
    /// The unit answered as its loader (software type 1): it runs no application, and the
    /// version it reports is the loader's.
    public var inLoader: Bool
    /// The vendor library's name of its hardware type (what a `.ugif` header names).
    public var hardwareTypeName: String

    public init(identity: DeviceIdentity, inLoader: Bool, hardwareTypeName: String) {
        self.identity = identity
        self.inLoader = inLoader
        self.hardwareTypeName = hardwareTypeName
    }

    /// The unit by its GetVersion answer (vendor stack).
    public init(_ version: VendorReaderVersion) {
        self.init(identity: DeviceIdentity(version), inLoader: version.software == .loader,
                  hardwareTypeName: version.hardwareTypeName)
    }

    /// The unit by its reader information; `inLoader` as its session found it.
    public init(_ info: ReaderInfo, inLoader: Bool) {
        self.init(identity: DeviceIdentity(info), inLoader: inLoader,
                  hardwareTypeName: FirmwareRelease.hardwareTypeName(info.hardwareType))
    }
}

/// What a caller asks for.
public enum FirmwareWanted: Sendable, Hashable {
    /// The newest listing that may go on the unit (a fleet policy's `latest`, `firmware flash`
    /// without a target).
    case latest
    /// A listing of this version.
    case version(FirmwareVersion)
    /// The listing of this name or path.
    case named(String)
    /// This image, from a file (no listing describes it: judged on its header).
    case package(UgifImage)
}

/// An image the choice may send: a channel's listing, or an image from a file.
public enum FirmwareCandidate: Sendable, Hashable {
    case listing(FirmwareListing)
    case package(UgifImage)

    /// The application version it installs.
    public var version: FirmwareVersion {
        switch self {
        case .listing(let listing): listing.metadata.version
        case .package(let image): FirmwareVersion(major: image.version.major, minor: image.version.minor, build: UInt16(image.version.build))
        }
    }
}

/// The one decision on a unit's firmware, each with a stable code.
public enum FirmwareChoice: Sendable, Hashable {
    /// Send this image (an upgrade, an allowed downgrade or same version, or any fitting image
    /// for a unit in its loader).
    case send(FirmwareCandidate, FirmwareCompatibility)
    /// Nothing newer fits the unit (``FirmwareWanted/latest``).
    case upToDate
    /// The unit runs the version asked for, and the same version is not allowed again.
    case runsTarget(FirmwareVersion)
    /// What was asked for is older than what the unit runs, and downgrades are not allowed.
    case downgradeRefused(FirmwareCandidate)
    /// The channel lists nothing of the version or name asked for.
    case notListed
    /// What was asked for does not fit the unit (``FirmwareCompatibility/invalid`` or
    /// ``FirmwareCompatibility/incompatible``: hardware, revision, applies-to, protocol, targeting).
    case incompatible(FirmwareCandidate, FirmwareCompatibility)

    /// `firmware_send`, `firmware_up_to_date`, `firmware_runs_target`,
    /// `firmware_downgrade_refused`, `firmware_not_listed`, `firmware_incompatible`.
    public var code: String {
        switch self {
        case .send: "firmware_send"
        case .upToDate: "firmware_up_to_date"
        case .runsTarget: "firmware_runs_target"
        case .downgradeRefused: "firmware_downgrade_refused"
        case .notListed: "firmware_not_listed"
        case .incompatible: "firmware_incompatible"
        }
    }

    /// Decides which image `unit` gets. `listings` are the channel's, newest first (unused for
    /// a package). A unit in its loader runs no application: any image for its hardware
    /// (type, revision, protocol, targeted serials) repairs it, so neither "downgrade" nor
    /// "same version" applies to it.
    public static func choose(_ wanted: FirmwareWanted, listings: [FirmwareListing], unit: FirmwareUnit,
                              allowDowngrade: Bool, allowSameVersion: Bool) -> FirmwareChoice {
        let running = unit.identity.firmwareVersion
        func judged(_ candidate: FirmwareCandidate) -> FirmwareChoice {
            let value = judge(candidate, for: unit)
            switch value {
            case .invalid, .incompatible: return .incompatible(candidate, value)
            case .downgrade where !allowDowngrade: return .downgradeRefused(candidate)
            case .sameVersion where !allowSameVersion: return .runsTarget(candidate.version)
            default: return .send(candidate, value)
            }
        }
        switch wanted {
        case .latest:
            for listing in listings {
                let value = judge(.listing(listing), for: unit)
                if value.mayApply(allowDowngrade: allowDowngrade, allowSameVersion: allowSameVersion) {
                    return .send(.listing(listing), value)
                }
            }
            return .upToDate
        case .version(let version):
            let matching = listings.filter { $0.metadata.version == version }
            let fits = matching.first { judge(.listing($0), for: unit).mayApply(allowDowngrade: true, allowSameVersion: true) }
            if let fits { return judged(.listing(fits)) }
            // Nothing of that version fits: a unit that runs it has it.
            if running == version, !unit.inLoader { return .runsTarget(version) }
            guard let first = matching.first else { return .notListed }
            return .incompatible(.listing(first), judge(.listing(first), for: unit))
        case .named(let name):
            guard let listing = listings.first(where: { $0.name == name || $0.path == name }) else { return .notListed }
            return judged(.listing(listing))
        case .package(let image):
            return judged(.package(image))
        }
    }

    /// How `candidate` relates to `unit`. A listing is judged on its signed description
    /// (hardware, revision, applies-to, protocol, serials); an image from a file on its header
    /// (hardware type name, version). In the loader the reported version means nothing: a
    /// listing is judged as if the unit ran the lowest version it applies to, and whatever
    /// fits is an upgrade.
    public static func judge(_ candidate: FirmwareCandidate, for unit: FirmwareUnit) -> FirmwareCompatibility {
        let value: FirmwareCompatibility
        switch candidate {
        case .listing(let listing):
            var identity = unit.identity
            if unit.inLoader {
                guard let lowest = listing.metadata.appliesTo.map(\.min).min() else { return .invalid }
                identity.firmwareVersion = lowest
            }
            value = listing.compatibility(with: identity)
        case .package(let image):
            let running = unit.identity.firmwareVersion
            if image.hardwareTypeName != unit.hardwareTypeName { return .incompatible }
            let version = candidate.version
            value = version < running ? .downgrade : version == running ? .sameVersion : .upgrade
        }
        switch value {
        case .invalid, .incompatible: return value
        default: return unit.inLoader ? .upgrade : value
        }
    }
}
