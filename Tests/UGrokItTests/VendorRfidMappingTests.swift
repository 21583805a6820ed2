import Foundation
import GrokLink
import GrokProtocol
import Testing
@testable import UGrokIt

@Suite("UgiRfidConfiguration on the vendor wire: the vendor's presets and limits, every field sent or refused")
struct VendorRfidMappingTests {
    @Test("presets 1-5 are the vendor's rfidConfigurations table", arguments: VendorInventoryType.allCases)
    func presetsAreTheVendors(type: VendorInventoryType) throws {
        let ours = UgiRfidConfiguration.config(inventoryType: UgiInventoryType(rawValue: type.rawValue)!)
        let vendor = VendorRfidPresets.configuration(type)
        #expect(try ours.vendorConfiguration() == vendor)
        #expect(ours.validationErrors.isEmpty)
    }

    @Test("each preset's inventory start is byte for byte what the vendor host sent (4 volume levels)",
          arguments: 1...5)
    func presetInventoryStartEqualsTheCapture(type: Int) throws {
        let fixture = try VendorFixture.scenario("inventory-presets").first { $0.step == "inventory" && $0.args[1] == String(type) }!
        let start = try UgiRfidConfiguration.config(inventoryType: UgiInventoryType(rawValue: type)!).vendorInventoryStart(volumeLevels: 4)
        let packet = try RequestPacket(command: VendorOpcode.inventory.rawValue, payload: start.encode(form: .full)).encoded()
        #expect(hexText(packet) == fixture.hostSends[0])
    }

    @Test("the limits are the vendor's: power 5-30 dBm, Q 2-12, A/B toggle up to 250, 208 bank bytes")
    func limitsAreTheVendors() {
        #expect(UgiRfidConfiguration.minAllowablePowerLevel == VendorRfidLimits.powerDBm.lowerBound)
        #expect(UgiRfidConfiguration.maxAllowablePowerLevel == VendorRfidLimits.powerDBm.upperBound)
        #expect(UgiRfidConfiguration.minAllowableQValue == VendorRfidLimits.qValue.lowerBound)
        #expect(UgiRfidConfiguration.maxAllowableQValue == VendorRfidLimits.qValue.upperBound)
        #expect(UgiRfidConfiguration.maxAllowableRoundsWithNoFindsToToggleAB == VendorRfidLimits.roundsWithNoFindsToToggleAB.upperBound)
        #expect(UgiRfidConfiguration.maxAllowableMemoryBankBytes == VendorRfidLimits.memoryBankBytes.upperBound)
        #expect(UgiRfidConfiguration().validationErrors.isEmpty)
    }

    typealias Edit = @Sendable (inout UgiRfidConfiguration) -> Void

    /// One change of each field that goes on the wire: a setup applied to both sides (what
    /// the field needs to matter), then the change of that field alone.
    static let wireChanges: [(String, Edit, Edit)] = [
        ("initialPowerLevel", { _ in }, { $0.initialPowerLevel = 20 }), ("minPowerLevel", { _ in }, { $0.minPowerLevel = 12 }),
        ("maxPowerLevel", { _ in }, { $0.maxPowerLevel = 29 }), ("initialQValue", { _ in }, { $0.initialQValue = 5 }),
        ("minQValue", { _ in }, { $0.minQValue = 3 }), ("maxQValue", { _ in }, { $0.maxQValue = 9 }),
        ("session", { _ in }, { $0.session = 2 }),
        ("roundsWithNoFindsToToggleAB", { _ in }, { $0.roundsWithNoFindsToToggleAB = 7 }),
        ("sensitivity", { _ in }, { $0.sensitivity = -70 }), ("powerLevelWrite", { _ in }, { $0.powerLevelWrite = 27 }),
        ("sensitivityWrite", { _ in }, { $0.sensitivityWrite = -50 }),
        ("setListenBeforeTalk", { _ in }, { $0.setListenBeforeTalk = true }),
        ("listenBeforeTalk", { $0.setListenBeforeTalk = true }, { $0.listenBeforeTalk = true }),
        ("maxRoundsPerSecond", { _ in }, { $0.maxRoundsPerSecond = 20 }),
        ("minTidBytes", { $0.maxTidBytes = 12 }, { $0.minTidBytes = 4 }), ("maxTidBytes", { _ in }, { $0.maxTidBytes = 12 }),
        ("minUserBytes", { $0.maxUserBytes = 8 }, { $0.minUserBytes = 2 }), ("maxUserBytes", { _ in }, { $0.maxUserBytes = 8 }),
        ("minReservedBytes", { $0.maxReservedBytes = 8 }, { $0.minReservedBytes = 8 }),
        ("maxReservedBytes", { _ in }, { $0.maxReservedBytes = 8 }), ("selectMask", { _ in }, { $0.selectMask = [0x30, 0x08] }),
        ("selectMaskBitLength", { $0.selectMask = [0x30, 0x08] }, { $0.selectMaskBitLength = 12 }),
        ("selectOffset", { $0.selectMask = [0x30] }, { $0.selectOffset = 32 }),
        ("selectBank", { $0.selectMask = [0x30] }, { $0.selectBank = .tid }), ("continual", { _ in }, { $0.continual = false }),
        ("reportRssi", { _ in }, { $0.reportRssi = true }), ("detailedPerReadData", { _ in }, { $0.detailedPerReadData = true }),
        ("detailedPerReadNumReads", { $0.detailedPerReadData = true }, { $0.detailedPerReadNumReads = 1 }),
        ("detailedPerReadMemoryBank1", { $0.detailedPerReadData = true; $0.detailedPerReadNumReads = 1 },
         { $0.detailedPerReadMemoryBank1 = .tid }),
        ("detailedPerReadWordOffset1", { $0.detailedPerReadData = true; $0.detailedPerReadNumReads = 1 },
         { $0.detailedPerReadWordOffset1 = 3 }),
        ("detailedPerReadMemoryBank2", { $0.detailedPerReadData = true; $0.detailedPerReadNumReads = 2 },
         { $0.detailedPerReadMemoryBank2 = .tid }),
        ("detailedPerReadWordOffset2", { $0.detailedPerReadData = true; $0.detailedPerReadNumReads = 2 },
         { $0.detailedPerReadWordOffset2 = 5 }),
        ("reportSubsequentFinds", { _ in }, { $0.reportSubsequentFinds = true }),
        ("singleFindRampPowerMode", { $0.singleFindMode = true }, { $0.singleFindRampPowerMode = .slow }),
        ("soundType", { _ in }, { $0.soundType = .geigerCounter }), ("volume", { _ in }, { $0.volume = 0.5 }),
    ]

    static var baseline: UgiRfidConfiguration {
        var c = UgiRfidConfiguration()
        c.initialPowerLevel = 25
        c.minPowerLevel = 15
        c.maxPowerLevel = 30
        return c
    }

    @Test("the wire changes cover every field routed to the wire")
    func everyWireFieldIsExercised() {
        let routed = UgiRfidConfiguration.vendorFieldRoutes.filter { $0.route == .wire }.map(\.field)
        #expect(Set(routed) == Set(Self.wireChanges.map(\.0)))
    }

    @Test("every field routed to the wire changes the inventory-start bytes",
          arguments: wireChanges.map(\.0))
    func wireFieldReachesTheReader(field: String) throws {
        let (_, setup, change) = Self.wireChanges.first { $0.0 == field }!
        var base = Self.baseline
        setup(&base)
        var changed = base
        change(&changed)
        let before = try base.vendorInventoryStart(volumeLevels: 8).encode(form: .full)
        let after = try changed.vendorInventoryStart(volumeLevels: 8).encode(form: .full)
        #expect(before != after)
        // And the device side reads back what was meant.
        let decoded = try VendorInventoryStart(decoding: after, form: .full)
        #expect(decoded == (try changed.vendorInventoryStart(volumeLevels: 8)))
    }

    @Test("continual = false clears flags bit 4; report RSSI sets bit 3")
    func flagBits() throws {
        var c = Self.baseline
        c.continual = false
        c.reportRssi = true
        let bytes = try c.vendorInventoryStart(volumeLevels: 4).encode(form: .full)
        #expect(bytes[0] & 0x10 == 0)
        #expect(bytes[0] & 0x08 == 0x08)
    }

    @Test("forceTari25 and delayAfterSelect are refused by name: the vendor struct has no place for them",
          arguments: ["forceTari25", "delayAfterSelect"])
    func unsupportedFieldsAreRefused(field: String) {
        var c = Self.baseline
        if field == "forceTari25" { c.forceTari25 = true } else { c.delayAfterSelect = true }
        do {
            _ = try c.vendorInventoryStart(volumeLevels: 4)
            Issue.record("\(field) = true was accepted")
        } catch .invalidArgument(let named, _, _) {
            #expect(named == field)
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(UgiRfidConfiguration.vendorFieldRoutes.first { $0.field == field }?.route == .refused)
    }

    @Test("an invalid configuration is refused before anything is built, naming the field")
    func invalidIsRefused() {
        var c = Self.baseline
        c.maxQValue = 13
        do {
            _ = try c.vendorConfiguration()
            Issue.record("maxQValue 13 was accepted")
        } catch .invalidArgument(let named, let value, _) {
            #expect(named == "maxQValue" && value == "13")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("a ramp-up single find starts at the minimum power")
    func rampUpStartsLow() throws {
        let c = UgiRfidConfiguration.config(inventoryType: .singleFind)
        let start = try c.vendorInventoryStart(volumeLevels: 4)
        #expect(start.radio.initialPower == (try VendorUnits.powerByte(dBm: c.minPowerLevel, field: "min")))
    }
}

@Suite("The vendor inventory host: answers to reader packets as the vendor host answers them")
struct VendorInventoryHostTests {
    static func host(_ type: UgiInventoryType) throws -> VendorInventoryHost {
        VendorInventoryHost(start: try UgiRfidConfiguration.config(inventoryType: type).vendorInventoryStart(volumeLevels: 4))
    }

    static func answer(_ host: VendorInventoryHost, _ hex: String) throws -> String {
        guard case .request(let request) = ScriptedPacket(hex: hex) else { throw VendorCommandError.unknownValue(field: "hex", value: 0) }
        return hexText(try host.answer(request).response.encoded())
    }

    @Test("every reader packet of the captured inventories gets the vendor host's answer", arguments: 1...5)
    func capturedAnswers(type: Int) throws {
        let fixture = try VendorFixture.scenario("inventory-presets").first { $0.step == "inventory" && $0.args[1] == String(type) }!
        let host = try Self.host(UgiInventoryType(rawValue: type)!)
        host.started()
        // Reader packets in order (the first received packet is the ACK_0 to the start), the
        // vendor's answers in order; the last two answers are the stop and the ACK_0 to completed.
        let packets = Array(fixture.hostReceived.dropFirst())
        let answers = Array(fixture.hostSends.dropFirst())
        #expect(packets.count == answers.count)
        for (index, (packet, expected)) in zip(packets, answers).enumerated() {
            if index == answers.count - 2 { host.requestStop() }
            #expect(try Self.answer(host, packet) == expected, "packet \(index) \(packet)")
        }
        #expect(host.state == .completed(.ok))
        // The reads become what the InventoryTracker aggregates: both captured tags.
        let configuration = UgiRfidConfiguration.config(inventoryType: UgiInventoryType(rawValue: type)!)
        let tracker = InventoryTracker(start: Date(timeIntervalSince1970: 0), configuration: configuration)
        for read in host.takeReads() { tracker.take(read.report(atMilliseconds: 0)) }
        #expect(Set(tracker.tags.map(\.epc)) == [try UgiEpc(hex: "300833b2ddd9014000000001"), try UgiEpc(hex: "300833b2ddd9014000000002")])
    }

    @Test("rounds follow the reader's 8-bit counter across its wrap")
    func roundsUnwrap() throws {
        let host = try Self.host(.inventoryDistance)
        host.started()
        for rounds: UInt8 in [250, 255, 3, 9] {
            _ = host.answer(RequestPacket(command: 5, payload: [rounds]))
        }
        #expect(host.rounds == 250 + 5 + 4 + 6)
    }

    @Test("a packet that does not decode is answered ACK_7")
    func garbageIsNacked() throws {
        let host = try Self.host(.inventoryDistance)
        host.started()
        #expect(try host.answer(RequestPacket(command: 5, payload: [1, 2])).response.encoded() == [0x87])
        #expect(host.nacksSent == 1)
    }
}
