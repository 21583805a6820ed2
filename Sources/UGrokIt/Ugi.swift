import Foundation
import GrokAudio
import GrokFirmware
import GrokLink
import GrokProtocol
import Synchronization

/// The vendor's `Ugi` singleton, as a compatibility facade over one default ``Reader``
/// (a phone has one jack; a workstation drives many readers, one ``Reader`` per port).
///
/// ```swift
/// Ugi.createSingleton(alsaDevice: "hw:1,0")
/// Ugi.singleton().openConnection()
/// let inventory = try Ugi.singleton().startInventory(self, withConfiguration:
///     UgiRfidConfiguration.config(inventoryType: .locateDistance))
/// Ugi.singleton().activeInventory?.stopInventory { print("stopped") }
/// ```
///
/// The configuration delegate of `createSingletonWithConfigurationDelegate:` (region and
/// firmware housekeeping) comes with the fleet tool's policy layer.
public final class Ugi: Sendable {
    private static let instance = Mutex<Ugi?>(nil)

    /// The reader behind the facade.
    public let reader: Reader

    private init(reader: Reader) {
        self.reader = reader
    }

    /// Vendor `createSingleton`: the Grokker on an ALSA device (`hw:1,0`, `default`).
    @discardableResult
    public static func createSingleton(alsaDevice: String = "default", options: ReaderOptions = ReaderOptions()) -> Ugi {
        createSingleton(reader: Reader(name: "alsa:\(alsaDevice)", options: options) {
            try ALSAPort(device: alsaDevice)
        })
    }

    /// Vendor `createSingleton`, on any reader (an emulated Grokker, a pipe).
    @discardableResult
    public static func createSingleton(reader: Reader) -> Ugi {
        let ugi = Ugi(reader: reader)
        let old = instance.withLock { current -> Ugi? in
            defer { current = ugi }
            return current
        }
        old?.closeConnection()
        return ugi
    }

    /// Vendor `singleton`. Create it first with ``createSingleton(alsaDevice:options:)``.
    public static func singleton() -> Ugi {
        guard let ugi = instance.withLock({ $0 }) else {
            preconditionFailure("Ugi.singleton() before Ugi.createSingleton(): create the singleton first")
        }
        return ugi
    }

    /// Vendor `releaseSingleton`: closes the connection and forgets the singleton.
    public static func releaseSingleton() {
        instance.withLock { current -> Ugi? in
            defer { current = nil }
            return current
        }?.closeConnection()
    }

    /// Vendor `openConnection` (returns at once).
    public func openConnection() { reader.openConnection() }
    /// Vendor `closeConnection` (returns at once).
    public func closeConnection() { reader.closeConnection() }
    /// Vendor `connectionState`.
    public var connectionState: ConnectionState { reader.connectionState }
    /// Vendor `isConnected`.
    public var isConnected: Bool { connectionState == .connected }
    /// Vendor `activeInventory`.
    public var activeInventory: UgiInventory? { reader.activeInventory }
    /// Vendor reader information (valid once connected).
    public var readerInfo: ReaderInfo? { reader.readerInfo }

    /// Vendor `addConnectionStateListener`.
    @discardableResult
    public func addConnectionStateListener(_ listener: @escaping @Sendable (ConnectionState) -> Void) -> Int {
        reader.addConnectionStateListener(listener)
    }

    /// Vendor `isAnythingPluggedIntoAudioJack`.
    public var isAnythingPluggedIntoAudioJack: Bool { reader.isAnythingPluggedIntoAudioJack }

    /// The inventory-state listener (``Reader/addInventoryStateListener(_:)``).
    @discardableResult
    public func addInventoryStateListener(_ listener: @escaping @Sendable (VendorInventoryState) -> Void) -> Int {
        reader.addInventoryStateListener(listener)
    }

    /// Vendor `testConnection`: how many of `rounds` echoes came back equal.
    public func testConnection(rounds: Int = 10) async throws(ReaderError) -> Int {
        try await reader.testConnection(rounds: rounds)
    }

    /// Vendor `startInventory:withConfiguration:`.
    @discardableResult
    public func startInventory(_ delegate: any UgiInventoryDelegate,
                               withConfiguration configuration: UgiRfidConfiguration) throws(ConfigurationError) -> UgiInventory {
        try reader.startInventory(delegate, withConfiguration: configuration)
    }

    /// Vendor `startInventory:withConfiguration:withEpc:`.
    @discardableResult
    public func startInventory(_ delegate: any UgiInventoryDelegate, withConfiguration configuration: UgiRfidConfiguration,
                               withEpc epc: UgiEpc) throws(ConfigurationError) -> UgiInventory {
        try reader.startInventory(delegate, withConfiguration: configuration, withEpc: epc)
    }

    /// Vendor `startInventory:withConfiguration:withEpcs:`.
    @discardableResult
    public func startInventory(_ delegate: any UgiInventoryDelegate, withConfiguration configuration: UgiRfidConfiguration,
                               withEpcs epcs: [UgiEpc]) throws(ConfigurationError) -> UgiInventory {
        try reader.startInventory(delegate, withConfiguration: configuration, withEpcs: epcs)
    }

    /// Vendor `startInventoryIgnoringEpcs`.
    @discardableResult
    public func startInventory(_ delegate: any UgiInventoryDelegate, withConfiguration configuration: UgiRfidConfiguration,
                               ignoringEpcs epcs: [UgiEpc]) throws(ConfigurationError) -> UgiInventory {
        try reader.startInventory(delegate, withConfiguration: configuration, ignoringEpcs: epcs)
    }

    /// Vendor `setRegion`.
    public func setRegion(_ name: String, catalogue: RegionCatalogue? = nil) async throws(ReaderError) -> ReaderInfo {
        try await reader.setRegion(name, catalogue: catalogue)
    }
    /// Vendor `getRegionNames` (with the verified region catalogue: the regions this
    /// Grokker is approved for).
    public func getRegionNames(catalogue: RegionCatalogue? = nil) async throws(ReaderError) -> (names: [String], selected: Int?) {
        try await reader.regionNames(catalogue: catalogue)
    }
    /// Vendor battery info (not while scanning).
    public func batteryInfo() async throws(ReaderError) -> BatteryInfo { try await reader.batteryInfo() }
    /// Vendor `getDiagnostics:reset:`.
    public func diagnostics(reset: Bool = false) async throws(ReaderError) -> UgiDiagnostics {
        try await reader.diagnostics(reset: reset)
    }

    /// Vendor `sdkVersionMajor/Minor/Build`.
    public static let sdkVersion = (major: 0, minor: 1, build: 0)
}

