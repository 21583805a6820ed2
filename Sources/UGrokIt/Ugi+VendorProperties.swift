import GrokBasics
import GrokProtocol
import Synchronization

extension VendorVersionRequest {
    /// The protocol this host speaks (GetVersion's first field): the vendor SDK 1.7.16's.
    public static let hostProtocolVersion = 20
}

/// What a reader is busy with (vendor SDK 1.15 `UgiOngoingOperations`, reported with the
/// connection state and battery).
public enum UgiOngoingOperation: Int, Sendable, Hashable, CaseIterable {
    /// UGI_ONGOING_OPERATION_INACTIVE.
    case inactive = 0
    /// UGI_ONGOING_OPERATION_INVENTORY.
    case inventory = 1
    /// UGI_ONGOING_OPERATION_FIRMWARE_UPDATE: a ``FirmwareUpdater`` runs on a
    /// ``ReaderSession``, not through a ``Reader``, so a reader never reports it.
    case firmwareUpdate = 2
    /// UGI_ONGOING_OPERATION_OTHER: a command asked of the reader's thread (battery,
    /// region, sounds, tuning...) has not completed.
    case other = 3
}

/// The vendor's plural name for ``UgiOngoingOperation``.
public typealias UgiOngoingOperations = UgiOngoingOperation

extension Reader {
    /// What the reader is busy with now: a running (not paused) inventory, else a command
    /// not yet completed, else nothing.
    public var ongoingOperation: UgiOngoingOperation {
        if let inventory = activeInventory, inventory.isScanning, !inventory.isPaused { return .inventory }
        return shared.withLock { $0.operationsInFlight } > 0 ? .other : .inactive
    }

    /// Vendor `inOpenConnection`: ``openConnection()`` was called and ``closeConnection()``
    /// has not been since.
    public var inOpenConnection: Bool { shared.withLock { $0.running && !$0.closing } }

    /// Vendor `isUpdateRequired`: the connected reader's protocol is older than this host
    /// accepts (``ConnectionState/incompatible``), so only a firmware update makes it usable.
    public var isUpdateRequired: Bool { connectionState == .incompatible }

    /// The logger (vendor `loggingStatus`, `loggingTimestamp`, `setLoggingDestination`):
    /// a change takes effect at the reader thread's next step, also while connected.
    public var logger: UgiLogger {
        get { shared.withLock { $0.logger } }
        set {
            shared.withLock { s in
                s.logger = newValue
                s.loggerChanged = true
            }
        }
    }
}

extension Ugi {
    /// Vendor `inOpenConnection`.
    public var inOpenConnection: Bool { reader.inOpenConnection }

    /// Vendor `requiredProtocolVersion`: the lowest reader protocol this host accepts
    /// (the vendor's host requires more than 10; docs/vendor-protocol.md, GetVersion).
    public var requiredProtocolVersion: Int { VendorReaderVersion.minimumAcceptedProtocol }

    /// Vendor `supportedProtocolVersion`: the protocol this host speaks (sent in GetVersion).
    public var supportedProtocolVersion: Int { VendorVersionRequest.hostProtocolVersion }

    /// Vendor `isUpdateRequired`.
    public var isUpdateRequired: Bool { reader.isUpdateRequired }

    /// What the reader is busy with (vendor 1.15 `UgiOngoingOperations`).
    public var ongoingOperation: UgiOngoingOperation { reader.ongoingOperation }

    /// Vendor `sdkVersionMajor`.
    public static var sdkVersionMajor: Int { sdkVersion.major }
    /// Vendor `sdkVersionMinor`.
    public static var sdkVersionMinor: Int { sdkVersion.minor }
    /// Vendor `sdkVersionBuild`.
    public static var sdkVersionBuild: Int { sdkVersion.build }
    /// Vendor `sdkVersionDateTime`: when this SDK version was released; `nil` while the
    /// version has no release (0.1.0 has none yet), never a made-up date.
    public static let sdkVersionDateTime: Date? = nil

    /// Vendor `loggingStatus`: the categories logged, changeable at any time.
    public var loggingStatus: UgiLoggingCategory {
        get { reader.logger.categories }
        set { reader.logger.categories = newValue }
    }

    /// Vendor `loggingTimestamp`: each line starts with the audio time.
    public var loggingTimestamp: Bool {
        get { reader.logger.timestamps }
        set { reader.logger.timestamps = newValue }
    }

    /// Vendor `setLoggingDestination:withParam:`: where log records go from now on (the
    /// vendor's `param` is the destination's own state).
    public func setLoggingDestination(_ destination: any UgiLogDestination) {
        reader.logger.destination = destination
    }

    /// Vendor `tuneAntennaWithOneFrequencyTunedCompletion:withCompletion:`.
    public func tuneAntenna(_ progress: @escaping @Sendable (UgiAntennaTuningProgress) -> Bool) async throws(ReaderError) -> Int {
        try await reader.tuneAntenna(progress)
    }

    /// Vendor `getAntennaTuning:dynamicAverage:`.
    public func antennaTuning() async throws(ReaderError) -> UgiAntennaTuning { try await reader.antennaTuning() }

    /// Vendor `getBatteryInfoWithCompletion:` (SDK 1.15): asks the reader; `completion` runs
    /// on the callback queue with the answer or why there is none.
    public func getBatteryInfoWithCompletion(_ completion: @escaping @Sendable (Result<BatteryInfo, ReaderError>) -> Void) {
        let reader = self.reader
        Task {
            do throws(ReaderError) {
                let info = try await reader.batteryInfo()
                reader.callbackQueue.async { completion(.success(info)) }
            } catch {
                reader.callbackQueue.async { completion(.failure(error)) }
            }
        }
    }
}

extension Ugi {
    /// Vendor 1.15 `localizedRegionNameForName:`: a region's name (vendor name, code or
    /// number, as ``RegionNames/region(named:)`` and friends take it) in `language` (`en`,
    /// `es`, `fr`, `de`), as grokctl's catalogs write it; the vendor's name for a language
    /// without a translation, and `name` itself when no region has it.
    public static func localizedRegionNameForName(_ name: String, language: String) -> String {
        let region = RegionNames.region(named: name) ?? RegionNames.region(code: name) ?? Int(name).flatMap(RegionNames.region(number:))
        guard let region else { return name }
        return MessageCatalog.regionNames[language]?[region.code] ?? region.name
    }
}
