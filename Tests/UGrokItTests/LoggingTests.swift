import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
@testable import UGrokIt

@Suite("Logging")
struct LoggingTests {
    static func rig(_ categories: UgiLoggingCategory, timestamps: Bool = false) throws -> (Rig, CollectingLogDestination) {
        let log = CollectingLogDestination()
        var options = ReaderOptions()
        options.logger = UgiLogger(categories: categories, timestamps: timestamps, destination: log)
        let rig = try Rig(options: options)
        return (rig, log)
    }

    @Test("the vendor's bit values")
    func bits() {
        let expected: [(UgiLoggingCategory, Int)] = [
            (.byteProtocol, 0x1), (.connectionErrors, 0x2), (.connectionState, 0x4), (.packetProtocol, 0x8),
            (.command, 0x10), (.inventory, 0x20), (.firmwareUpdate, 0x40), (.batteryStatusInternal, 0x80),
            (.platformSpecific, 0x100), (.state, 0x1000), (.inventoryEvents, 0x2000), (.inventoryDetail, 0x4000),
            (.batteryStatus, 0x8000),
        ]
        for (category, value) in expected { #expect(category.rawValue == value) }
        #expect(UgiLoggingCategory.all.rawValue == 0xF1FF)
        #expect(UgiLoggingCategory([.command, .inventory]).description == "command|inventory")
    }

    @Test("only the categories asked for are logged")
    func filtering() throws {
        let (rig, log) = try Self.rig([.command])
        try rig.session.connect()
        _ = try rig.session.identify()
        let records = log.records
        #expect(!records.isEmpty)
        #expect(records.allSatisfy { $0.category == .command })
        #expect(records.contains { $0.message == "-> \(VendorOpcode.getVersion)" })
        #expect(records.contains { $0.message.hasPrefix("<- \(VendorOpcode.getVersion): ") })

        let (quiet, nothing) = try Self.rig([])
        try quiet.session.connect()
        _ = try quiet.session.identify()
        #expect(nothing.records.isEmpty)
    }

    @Test("connection state, inventory start and stop, and every read in detail")
    func inventory() throws {
        let (rig, log) = try Self.rig([.connectionState, .inventory, .inventoryEvents, .inventoryDetail])
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance))
        try rig.session.collect(forAtMost: 1)
        try rig.session.stopInventory()
        let reads = rig.session.takeReports()
        let records = log.records
        #expect(records.contains { $0.category == .connectionState && $0.message.hasSuffix("-> \(ConnectionState.connected)") })
        #expect(records.filter { $0.category == .inventory }.map(\.message).first?.hasPrefix("inventory started") == true)
        #expect(records.filter { $0.category == .inventory }.last?.message.hasPrefix("inventory stopped after") == true)
        let details = records.filter { $0.category == .inventoryDetail }
        #expect(details.count == reads.count)
        try #require(!reads.isEmpty)
        let first = hexString(reads[0].epc)
        #expect(details[0].message.hasPrefix("read \(first) at "))
        #expect(!records.contains { $0.category == .command })
    }

    @Test("timestamps are the session's audio time, on or off")
    func timestamps() throws {
        let (plain, plainLog) = try Self.rig([.command])
        try plain.session.connect()
        _ = try plain.session.identify()
        let line = try #require(plainLog.records.first?.line)
        #expect(line.hasPrefix("sim:0 command: "))

        let (stamped, stampedLog) = try Self.rig([.command], timestamps: true)
        try stamped.session.connect()
        _ = try stamped.session.identify()
        let record = try #require(stampedLog.records.first)
        #expect(record.line.hasPrefix("[" + String(format: "%.3f", record.audioSeconds) + " s] sim:0 command: "))
        #expect(record.audioSeconds > 0)
    }
}
