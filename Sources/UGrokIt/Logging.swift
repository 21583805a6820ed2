import Foundation
import Synchronization

/// What the SDK logs, as the vendor's bit mask (`UGI_LOGGING_*`): each bit turns on the
/// messages of one part of the SDK.
public struct UgiLoggingCategory: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The modem: negotiated bit rate and clock skew (vendor `BYTE_PROTOCOL`, 0x1).
    public static let byteProtocol = UgiLoggingCategory(rawValue: 0x1)
    /// Failed connection attempts and lost connections (vendor `CONNECTION_ERRORS`, 0x2).
    public static let connectionErrors = UgiLoggingCategory(rawValue: 0x2)
    /// Connection state changes (vendor `CONNECTION_STATE`, 0x4).
    public static let connectionState = UgiLoggingCategory(rawValue: 0x4)
    /// Packet protocol statistics: packets, retries, CRC failures (vendor `PACKET_PROTOCOL`, 0x8).
    public static let packetProtocol = UgiLoggingCategory(rawValue: 0x8)
    /// Every command sent and its answer (vendor `COMMAND`, 0x10).
    public static let command = UgiLoggingCategory(rawValue: 0x10)
    /// Inventories started and stopped (vendor `INVENTORY`, 0x20).
    public static let inventory = UgiLoggingCategory(rawValue: 0x20)
    /// Firmware updates (vendor `FIRMWARE_UPDATE`, 0x40).
    public static let firmwareUpdate = UgiLoggingCategory(rawValue: 0x40)
    /// Raw battery readings (vendor `BATTERY_STATUS_INTERNAL`, 0x80).
    public static let batteryStatusInternal = UgiLoggingCategory(rawValue: 0x80)
    /// Platform details: audio ports, threads (vendor `PLATFORM_SPECIFIC`, 0x100).
    public static let platformSpecific = UgiLoggingCategory(rawValue: 0x100)
    /// The SDK's own state: sessions opened and closed (vendor `STATE`, 0x1000).
    public static let state = UgiLoggingCategory(rawValue: 0x1000)
    /// Inventory events: batches of reads, stops by the reader (vendor `INVENTORY` 0x2000).
    public static let inventoryEvents = UgiLoggingCategory(rawValue: 0x2000)
    /// Every read of every tag (vendor `INVENTORY_DETAIL`, 0x4000).
    public static let inventoryDetail = UgiLoggingCategory(rawValue: 0x4000)
    /// Battery state as the host sees it (vendor `BATTERY_STATUS`, 0x8000).
    public static let batteryStatus = UgiLoggingCategory(rawValue: 0x8000)

    /// Every category.
    public static let all: UgiLoggingCategory = [
        .byteProtocol, .connectionErrors, .connectionState, .packetProtocol, .command, .inventory, .firmwareUpdate,
        .batteryStatusInternal, .platformSpecific, .state, .inventoryEvents, .inventoryDetail, .batteryStatus,
    ]

    private static let names: [(UgiLoggingCategory, String)] = [
        (.byteProtocol, "byteProtocol"), (.connectionErrors, "connectionErrors"), (.connectionState, "connectionState"),
        (.packetProtocol, "packetProtocol"), (.command, "command"), (.inventory, "inventory"),
        (.firmwareUpdate, "firmwareUpdate"), (.batteryStatusInternal, "batteryStatusInternal"),
        (.platformSpecific, "platformSpecific"), (.state, "state"), (.inventoryEvents, "inventoryEvents"),
        (.inventoryDetail, "inventoryDetail"), (.batteryStatus, "batteryStatus"),
    ]

    /// The names of the bits set, joined with `|`.
    public var description: String {
        Self.names.filter { contains($0.0) }.map(\.1).joined(separator: "|")
    }
}

/// One log message.
public struct UgiLogRecord: Sendable, Hashable {
    /// The one category it belongs to.
    public var category: UgiLoggingCategory
    /// What happened, in English (logs are for developers).
    public var message: String
    /// The port it is about (`sim:0`, `alsa:hw:1,0`).
    public var port: String
    /// Seconds of audio since the session started: the SDK's own clock.
    public var audioSeconds: Double
    /// The line a text destination writes: `[12.345 s] sim:0 command: ...` with timestamps,
    /// `sim:0 command: ...` without.
    public var line: String
}

/// Where log records go (swift-log's `LogHandler` style): injected through
/// ``ReaderOptions/logger``, so an app chooses its backend and tests collect.
public protocol UgiLogDestination: Sendable {
    func write(_ record: UgiLogRecord)
}

/// Writes each record's line to standard error: the default destination.
public struct StandardErrorLogDestination: UgiLogDestination {
    public init() {}
    public func write(_ record: UgiLogRecord) {
        FileHandle.standardError.write(Data((record.line + "\n").utf8))
    }
}

/// Keeps every record in memory (for tests and for showing a log in an app).
public final class CollectingLogDestination: UgiLogDestination {
    private let stored = Mutex<[UgiLogRecord]>([])
    public init() {}
    public func write(_ record: UgiLogRecord) { stored.withLock { $0.append(record) } }
    /// The records so far, oldest first.
    public var records: [UgiLogRecord] { stored.withLock { $0 } }
}

/// Which categories to log, with or without timestamps, and where (vendor `setLoggingStatus`
/// and `setLoggingTimestamp`; the destination is the vendor's pluggable log callback).
public struct UgiLogger: Sendable {
    /// The categories logged; empty (the default) logs nothing.
    public var categories: UgiLoggingCategory
    /// Prefix each line with the audio time (vendor `setLoggingTimestamp`).
    public var timestamps: Bool
    /// Where records go.
    public var destination: any UgiLogDestination

    public init(categories: UgiLoggingCategory = [], timestamps: Bool = false,
                destination: any UgiLogDestination = StandardErrorLogDestination()) {
        self.categories = categories
        self.timestamps = timestamps
        self.destination = destination
    }

    /// Whether anything of `category` is logged.
    public func isEnabled(_ category: UgiLoggingCategory) -> Bool { !categories.isDisjoint(with: category) }

    /// Logs `message` (built only when `category` is on).
    public func log(_ category: UgiLoggingCategory, port: String, audioSeconds: Double, _ message: @autoclosure () -> String) {
        guard isEnabled(category) else { return }
        let text = message()
        var line = "\(port) \(category): \(text)"
        if timestamps { line = "[" + String(format: "%.3f", audioSeconds) + " s] " + line }
        destination.write(UgiLogRecord(category: category, message: text, port: port, audioSeconds: audioSeconds, line: line))
    }
}
