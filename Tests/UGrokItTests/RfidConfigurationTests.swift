import GrokProtocol
import Foundation
import Testing
import UGrokIt

/// One change to a valid configuration and the error it must cause.
struct InvalidCase: Sendable, CustomTestStringConvertible {
    let label: String
    let change: @Sendable (inout UgiRfidConfiguration) -> Void
    let expected: ConfigurationError

    init(_ label: String, _ expected: ConfigurationError, _ change: @escaping @Sendable (inout UgiRfidConfiguration) -> Void) {
        self.label = label
        self.change = change
        self.expected = expected
    }

    var testDescription: String { label }
}

/// One change to a valid configuration that puts a field exactly on a limit.
struct BoundaryCase: Sendable, CustomTestStringConvertible {
    let label: String
    let change: @Sendable (inout UgiRfidConfiguration) -> Void

    init(_ label: String, _ change: @escaping @Sendable (inout UgiRfidConfiguration) -> Void) {
        self.label = label
        self.change = change
    }

    var testDescription: String { label }
}

/// What docs/inventory.md promises for each preset.
struct PresetValues: Sendable, CustomTestStringConvertible {
    let type: UgiInventoryType
    let power: (initial: Double, min: Double, max: Double)
    let q: (initial: Int, min: Int, max: Int)
    let session: Int
    let toggleAB: Int
    let sensitivity: Int
    let reportRssi: Bool
    let reportSubsequentFinds: Bool
    let sound: UgiSoundType
    let singleFind: Bool
    let ramp: UgiSingleFindRampPowerMode

    var testDescription: String { type.vendorName }
}

private func outOfRange(_ field: String, _ value: String, _ minimum: String, _ maximum: String, _ unit: String = "")
    -> ConfigurationError
{
    .outOfRange(field: field, value: value, minimum: minimum, maximum: maximum, unit: unit)
}

@Suite("UgiRfidConfiguration")
struct RfidConfigurationTests {
    /// A valid configuration with room on both sides of every ordered pair: power 20 in
    /// 10...30, Q 4 in 2...12.
    static var base: UgiRfidConfiguration {
        var c = UgiRfidConfiguration()
        c.initialPowerLevel = 20
        c.minPowerLevel = 10
        c.maxPowerLevel = 30
        return c
    }

    @Test func theBaseAndTheDefaultAreValid() throws {
        try Self.base.validate()
        try UgiRfidConfiguration().validate()
        #expect(UgiRfidConfiguration().validationErrors.isEmpty)
    }

    @Test func defaultsAreTheVendorsDocumentedOnes() {
        let c = UgiRfidConfiguration()
        #expect(c.historyIntervalMSec == 500)
        #expect(c.historyDepth == 20)
        #expect(c.continual)
        #expect(!c.reportRssi)
        #expect(!c.detailedPerReadData)
        #expect(!c.setListenBeforeTalk && !c.listenBeforeTalk)
        #expect(c.selectMask == nil)
        #expect(c.selectBank == .epc)
        #expect(c.maxTidBytes == 0 && c.maxUserBytes == 0 && c.maxReservedBytes == 0)
    }

    @Test func limitsAreTheVendorLibrarysOwn() {
        // RfidConfigurationGetLimits of the vendor library: power 5-30 dBm, Q 2-12, toggle 250.
        #expect(UgiRfidConfiguration.minAllowablePowerLevel == 5)
        #expect(UgiRfidConfiguration.maxAllowablePowerLevel == 30)
        #expect(UgiRfidConfiguration.minAllowableQValue == 2)
        #expect(UgiRfidConfiguration.maxAllowableQValue == 12)
        #expect(UgiRfidConfiguration.maxAllowableRoundsWithNoFindsToToggleAB == 250)
        #expect(UgiRfidConfiguration.maxAllowableMemoryBankBytes == 208)
        #expect(UgiRfidConfiguration.maxSelectMaskBytes == 32)
        #expect(UgiRfidConfiguration.maxDetailedPerReadWordOffset == 103)
    }

    // MARK: Validation, one failing value each side of each limit

    static let invalid: [InvalidCase] = [
        InvalidCase("initialPowerLevel below", outOfRange("initialPowerLevel", "4.9", "5", "30", "dBm")) { $0.initialPowerLevel = 4.9 },
        InvalidCase("initialPowerLevel above", outOfRange("initialPowerLevel", "30.1", "5", "30", "dBm")) { $0.initialPowerLevel = 30.1 },
        InvalidCase("initialPowerLevel NaN", outOfRange("initialPowerLevel", "nan", "5", "30", "dBm")) { $0.initialPowerLevel = .nan },
        InvalidCase("minPowerLevel below", outOfRange("minPowerLevel", "4.5", "5", "30", "dBm")) { $0.minPowerLevel = 4.5 },
        InvalidCase("minPowerLevel above", outOfRange("minPowerLevel", "31", "5", "30", "dBm")) { $0.minPowerLevel = 31 },
        InvalidCase("maxPowerLevel below", outOfRange("maxPowerLevel", "4", "5", "30", "dBm")) { $0.maxPowerLevel = 4 },
        InvalidCase("maxPowerLevel above", outOfRange("maxPowerLevel", "30.5", "5", "30", "dBm")) { $0.maxPowerLevel = 30.5 },
        InvalidCase("minPowerLevel over initial",
                    .misordered(field: "minPowerLevel", value: "25", limitField: "initialPowerLevel", limit: "20")) { $0.minPowerLevel = 25 },
        InvalidCase("initialPowerLevel over max",
                    .misordered(field: "initialPowerLevel", value: "20", limitField: "maxPowerLevel", limit: "15.5")) { $0.maxPowerLevel = 15.5 },
        InvalidCase("powerLevelWrite below", outOfRange("powerLevelWrite", "4.9", "5", "30", "dBm")) { $0.powerLevelWrite = 4.9 },
        InvalidCase("powerLevelWrite above", outOfRange("powerLevelWrite", "30.1", "5", "30", "dBm")) { $0.powerLevelWrite = 30.1 },

        InvalidCase("initialQValue below", outOfRange("initialQValue", "1", "2", "12")) { $0.initialQValue = 1 },
        InvalidCase("initialQValue above", outOfRange("initialQValue", "13", "2", "12")) { $0.initialQValue = 13 },
        InvalidCase("minQValue below", outOfRange("minQValue", "1", "2", "12")) { $0.minQValue = 1 },
        InvalidCase("minQValue above", outOfRange("minQValue", "13", "2", "12")) { $0.minQValue = 13 },
        InvalidCase("maxQValue below", outOfRange("maxQValue", "1", "2", "12")) { $0.maxQValue = 1 },
        InvalidCase("maxQValue above", outOfRange("maxQValue", "13", "2", "12")) { $0.maxQValue = 13 },
        InvalidCase("minQValue over initial",
                    .misordered(field: "minQValue", value: "5", limitField: "initialQValue", limit: "4")) { $0.minQValue = 5 },
        InvalidCase("initialQValue over max",
                    .misordered(field: "initialQValue", value: "4", limitField: "maxQValue", limit: "3")) { $0.maxQValue = 3 },

        InvalidCase("session below", outOfRange("session", "-1", "0", "3")) { $0.session = -1 },
        InvalidCase("session above", outOfRange("session", "4", "0", "3")) { $0.session = 4 },
        InvalidCase("roundsWithNoFindsToToggleAB below",
                    outOfRange("roundsWithNoFindsToToggleAB", "-1", "0", "250", "rounds")) { $0.roundsWithNoFindsToToggleAB = -1 },
        InvalidCase("roundsWithNoFindsToToggleAB above",
                    outOfRange("roundsWithNoFindsToToggleAB", "251", "0", "250", "rounds")) { $0.roundsWithNoFindsToToggleAB = 251 },
        InvalidCase("sensitivity below", outOfRange("sensitivity", "-86", "-85", "-30", "dBm")) { $0.sensitivity = -86 },
        InvalidCase("sensitivity above", outOfRange("sensitivity", "-29", "-85", "-30", "dBm")) { $0.sensitivity = -29 },
        InvalidCase("sensitivityWrite below", outOfRange("sensitivityWrite", "-86", "-85", "-30", "dBm")) { $0.sensitivityWrite = -86 },
        InvalidCase("sensitivityWrite above", outOfRange("sensitivityWrite", "0", "-85", "-30", "dBm")) { $0.sensitivityWrite = 0 },
        InvalidCase("listenBeforeTalk without setListenBeforeTalk",
                    .requires(field: "listenBeforeTalk", value: "true",
                              requirement: "setListenBeforeTalk is false, so it would be ignored: set setListenBeforeTalk to true as well")) {
            $0.listenBeforeTalk = true
        },
        InvalidCase("maxRoundsPerSecond below",
                    outOfRange("maxRoundsPerSecond", "-1", "0", "500", "rounds per second")) { $0.maxRoundsPerSecond = -1 },
        InvalidCase("maxRoundsPerSecond above",
                    outOfRange("maxRoundsPerSecond", "501", "0", "500", "rounds per second")) { $0.maxRoundsPerSecond = 501 },

        InvalidCase("minTidBytes below", outOfRange("minTidBytes", "-1", "0", "208", "bytes")) { $0.minTidBytes = -1 },
        InvalidCase("minTidBytes above", outOfRange("minTidBytes", "209", "0", "208", "bytes")) { $0.minTidBytes = 209 },
        InvalidCase("maxTidBytes below", outOfRange("maxTidBytes", "-1", "0", "208", "bytes")) { $0.maxTidBytes = -1 },
        InvalidCase("maxTidBytes above", outOfRange("maxTidBytes", "209", "0", "208", "bytes")) { $0.maxTidBytes = 209 },
        InvalidCase("minTidBytes over max", .misordered(field: "minTidBytes", value: "12", limitField: "maxTidBytes", limit: "8")) {
            $0.minTidBytes = 12
            $0.maxTidBytes = 8
        },
        InvalidCase("minUserBytes below", outOfRange("minUserBytes", "-1", "0", "208", "bytes")) { $0.minUserBytes = -1 },
        InvalidCase("minUserBytes above", outOfRange("minUserBytes", "209", "0", "208", "bytes")) { $0.minUserBytes = 209 },
        InvalidCase("maxUserBytes below", outOfRange("maxUserBytes", "-1", "0", "208", "bytes")) { $0.maxUserBytes = -1 },
        InvalidCase("maxUserBytes above", outOfRange("maxUserBytes", "209", "0", "208", "bytes")) { $0.maxUserBytes = 209 },
        InvalidCase("minUserBytes over max", .misordered(field: "minUserBytes", value: "64", limitField: "maxUserBytes", limit: "0")) {
            $0.minUserBytes = 64
        },
        InvalidCase("minReservedBytes below", outOfRange("minReservedBytes", "-1", "0", "208", "bytes")) { $0.minReservedBytes = -1 },
        InvalidCase("minReservedBytes above", outOfRange("minReservedBytes", "209", "0", "208", "bytes")) { $0.minReservedBytes = 209 },
        InvalidCase("maxReservedBytes below", outOfRange("maxReservedBytes", "-1", "0", "208", "bytes")) { $0.maxReservedBytes = -1 },
        InvalidCase("maxReservedBytes above", outOfRange("maxReservedBytes", "209", "0", "208", "bytes")) { $0.maxReservedBytes = 209 },
        InvalidCase("minReservedBytes over max",
                    .misordered(field: "minReservedBytes", value: "8", limitField: "maxReservedBytes", limit: "4")) {
            $0.minReservedBytes = 8
            $0.maxReservedBytes = 4
        },

        InvalidCase("selectMask too long", outOfRange("selectMask", "33", "0", "32", "bytes")) {
            $0.selectMask = [UInt8](repeating: 0xAA, count: 33)
        },
        InvalidCase("selectMaskBitLength below", outOfRange("selectMaskBitLength", "-1", "0", "16", "bits")) {
            $0.selectMask = [0x30, 0x74]
            $0.selectMaskBitLength = -1
        },
        InvalidCase("selectMaskBitLength above", outOfRange("selectMaskBitLength", "17", "0", "16", "bits")) {
            $0.selectMask = [0x30, 0x74]
            $0.selectMaskBitLength = 17
        },
        InvalidCase("selectMaskBitLength without a mask",
                    .requires(field: "selectMaskBitLength", value: "8",
                              requirement: "no selectMask is set: set selectMask, or set selectMaskBitLength to 0")) {
            $0.selectMaskBitLength = 8
        },
        InvalidCase("selectOffset below", outOfRange("selectOffset", "-1", "0", "16383", "bits")) { $0.selectOffset = -1 },
        InvalidCase("selectOffset above", outOfRange("selectOffset", "16384", "0", "16383", "bits")) { $0.selectOffset = 16_384 },

        InvalidCase("detailedPerReadNumReads below", outOfRange("detailedPerReadNumReads", "-1", "0", "2", "words")) {
            $0.detailedPerReadData = true
            $0.detailedPerReadNumReads = -1
        },
        InvalidCase("detailedPerReadNumReads above", outOfRange("detailedPerReadNumReads", "3", "0", "2", "words")) {
            $0.detailedPerReadData = true
            $0.detailedPerReadNumReads = 3
        },
        InvalidCase("detailedPerReadNumReads without detailedPerReadData",
                    .requires(field: "detailedPerReadNumReads", value: "1",
                              requirement: "detailedPerReadData is false, so no words would be reported: set detailedPerReadData to true or this to 0")) {
            $0.detailedPerReadNumReads = 1
        },
        InvalidCase("detailedPerReadWordOffset1 below", outOfRange("detailedPerReadWordOffset1", "-1", "0", "103", "words")) {
            $0.detailedPerReadWordOffset1 = -1
        },
        InvalidCase("detailedPerReadWordOffset1 above", outOfRange("detailedPerReadWordOffset1", "104", "0", "103", "words")) {
            $0.detailedPerReadWordOffset1 = 104
        },
        InvalidCase("detailedPerReadWordOffset2 below", outOfRange("detailedPerReadWordOffset2", "-1", "0", "103", "words")) {
            $0.detailedPerReadWordOffset2 = -1
        },
        InvalidCase("detailedPerReadWordOffset2 above", outOfRange("detailedPerReadWordOffset2", "104", "0", "103", "words")) {
            $0.detailedPerReadWordOffset2 = 104
        },

        InvalidCase("singleFindContinueInventory without singleFindMode",
                    .requires(field: "singleFindContinueInventory", value: "true",
                              requirement: "singleFindMode is false: set singleFindMode to true as well, or this to false")) {
            $0.singleFindContinueInventory = true
        },
        InvalidCase("singleFindRampPowerMode without singleFindMode",
                    .requires(field: "singleFindRampPowerMode", value: "SLOW",
                              requirement: "singleFindMode is false: set singleFindMode to true as well, or this to NO_RAMP")) {
            $0.singleFindRampPowerMode = .slow
        },
        InvalidCase("singleFindRampPowerMode with nothing to ramp over",
                    .requires(field: "singleFindRampPowerMode", value: "SLOW",
                              requirement: "minPowerLevel and maxPowerLevel are both 20 dBm, leaving nothing to ramp over: give a power range or use NO_RAMP")) {
            $0.singleFindMode = true
            $0.singleFindRampPowerMode = .slow
            $0.minPowerLevel = 20
            $0.maxPowerLevel = 20
        },

        InvalidCase("volume below", outOfRange("volume", "-0.1", "0", "1")) { $0.volume = -0.1 },
        InvalidCase("volume above", outOfRange("volume", "1.1", "0", "1")) { $0.volume = 1.1 },
        InvalidCase("volume NaN", outOfRange("volume", "nan", "0", "1")) { $0.volume = .nan },
        InvalidCase("historyIntervalMSec below", outOfRange("historyIntervalMSec", "49", "50", "60000", "ms")) {
            $0.historyIntervalMSec = 49
        },
        InvalidCase("historyIntervalMSec above", outOfRange("historyIntervalMSec", "60001", "50", "60000", "ms")) {
            $0.historyIntervalMSec = 60_001
        },
        InvalidCase("historyDepth below", outOfRange("historyDepth", "0", "1", "1000", "intervals")) { $0.historyDepth = 0 },
        InvalidCase("historyDepth above", outOfRange("historyDepth", "1001", "1", "1000", "intervals")) { $0.historyDepth = 1_001 },
    ]

    @Test(arguments: invalid)
    func eachRuleRejectsWithAPreciseError(_ testCase: InvalidCase) {
        var configuration = Self.base
        testCase.change(&configuration)
        #expect(throws: testCase.expected) { try configuration.validate() }
        #expect(configuration.validationErrors.first == testCase.expected)
    }

    @Test func everyRuleIsCoveredOnBothSidesOfItsRangeLimits() {
        // Each out-of-range field has a "below" and an "above" case.
        var sides: [String: Set<String>] = [:]
        for testCase in Self.invalid {
            guard case .outOfRange(let field, _, _, _, _) = testCase.expected else { continue }
            if testCase.label.hasSuffix(" below") { sides[field, default: []].insert("below") }
            if testCase.label.hasSuffix(" above") || testCase.label.hasSuffix(" too long") {
                sides[field, default: []].insert("above")
            }
        }
        for (field, found) in sides where field != "selectMask" {
            #expect(found == ["below", "above"], "\(field)")
        }
        #expect(sides.count == 27)
    }

    static let boundaries: [BoundaryCase] = [
        BoundaryCase("power all at the minimum") { $0.initialPowerLevel = 5; $0.minPowerLevel = 5; $0.maxPowerLevel = 5 },
        BoundaryCase("power all at the maximum") { $0.initialPowerLevel = 30; $0.minPowerLevel = 30; $0.maxPowerLevel = 30 },
        BoundaryCase("powerLevelWrite at the minimum") { $0.powerLevelWrite = 5 },
        BoundaryCase("Q all 2") { $0.initialQValue = 2; $0.minQValue = 2; $0.maxQValue = 2 },
        BoundaryCase("Q all 12") { $0.initialQValue = 12; $0.minQValue = 12; $0.maxQValue = 12 },
        BoundaryCase("session 0") { $0.session = 0 },
        BoundaryCase("session 3") { $0.session = 3 },
        BoundaryCase("toggle 250") { $0.roundsWithNoFindsToToggleAB = 250 },
        BoundaryCase("sensitivity -85 and -30") { $0.sensitivity = -85; $0.sensitivityWrite = -30 },
        BoundaryCase("sensitivity -30 and -85") { $0.sensitivity = -30; $0.sensitivityWrite = -85 },
        BoundaryCase("listen before talk set") { $0.setListenBeforeTalk = true; $0.listenBeforeTalk = true },
        BoundaryCase("listen before talk set off") { $0.setListenBeforeTalk = true; $0.listenBeforeTalk = false },
        BoundaryCase("maxRoundsPerSecond 500") { $0.maxRoundsPerSecond = 500 },
        BoundaryCase("all banks 208 bytes") {
            ($0.minTidBytes, $0.maxTidBytes, $0.minUserBytes, $0.maxUserBytes) = (208, 208, 208, 208)
            ($0.minReservedBytes, $0.maxReservedBytes) = (208, 208)
        },
        BoundaryCase("select mask 32 bytes, 256 bits, last offset") {
            $0.selectMask = [UInt8](repeating: 0xFF, count: 32)
            $0.selectMaskBitLength = 256
            $0.selectOffset = 16_383
            $0.selectBank = .user
        },
        BoundaryCase("empty select mask") { $0.selectMask = [] },
        BoundaryCase("detailed per-read 2 words at the last offsets") {
            $0.detailedPerReadData = true
            $0.detailedPerReadNumReads = 2
            $0.detailedPerReadMemoryBank1 = .tid
            $0.detailedPerReadWordOffset1 = 103
            $0.detailedPerReadMemoryBank2 = .user
            $0.detailedPerReadWordOffset2 = 103
        },
        BoundaryCase("single find ramping over a range") {
            $0.singleFindMode = true
            $0.singleFindContinueInventory = true
            $0.singleFindRampPowerMode = .slow
        },
        BoundaryCase("volume 0") { $0.volume = 0 },
        BoundaryCase("volume 1") { $0.volume = 1 },
        BoundaryCase("shortest history") { $0.historyIntervalMSec = 50; $0.historyDepth = 1 },
        BoundaryCase("longest history") { $0.historyIntervalMSec = 60_000; $0.historyDepth = 1_000 },
        BoundaryCase("sensor tag options") { $0.forceTari25 = true; $0.delayAfterSelect = true },
    ]

    @Test(arguments: boundaries)
    func valuesOnTheLimitsAreValid(_ testCase: BoundaryCase) throws {
        var configuration = Self.base
        testCase.change(&configuration)
        try configuration.validate()
    }

    @Test func validationErrorsListsEveryProblemInFieldOrder() {
        var configuration = Self.base
        configuration.volume = 2
        configuration.session = 7
        configuration.initialPowerLevel = 40
        #expect(configuration.validationErrors.map(\.field) == ["initialPowerLevel", "initialPowerLevel", "session", "volume"])
        #expect(configuration.validationErrors[1] == .misordered(
            field: "initialPowerLevel", value: "40", limitField: "maxPowerLevel", limit: "30"))
    }

    @Test func messagesNameTheFieldTheValueAndWhatIsAllowed() {
        let range = outOfRange("maxPowerLevel", "33", "10", "30", "dBm")
        #expect(range.description == "RFID configuration maxPowerLevel is 33 dBm, outside the allowed 10 to 30 dBm; set it within that range.")
        #expect(range.code == "configuration_out_of_range")
        #expect(range.arguments == ["maxPowerLevel", "33", "10", "30", "dBm"])
        let unitless = outOfRange("session", "4", "0", "3")
        #expect(unitless.description == "RFID configuration session is 4, outside the allowed 0 to 3; set it within that range.")
        let order = ConfigurationError.misordered(field: "minQValue", value: "5", limitField: "initialQValue", limit: "4")
        #expect(order.description.contains("minQValue (5) is greater than initialQValue (4)"))
        #expect(order.code == "configuration_misordered")
        #expect(order.arguments == ["minQValue", "5", "initialQValue", "4"])
        let requires = ConfigurationError.requires(field: "listenBeforeTalk", value: "true", requirement: "set it")
        #expect(requires.description == "RFID configuration listenBeforeTalk is true, but set it.")
        #expect(requires.code == "configuration_requires")
        #expect(requires.arguments == ["listenBeforeTalk", "true", "set it"])
    }

    // MARK: Presets

    @Test func inventoryTypesHaveTheVendorsNumbersAndNames() {
        #expect(UgiInventoryType.allCases.map(\.rawValue) == [1, 2, 3, 4, 5, 6])
        #expect(UgiInventoryType.numInventoryTypes == 6)
        #expect(UgiInventoryType.allCases.map(\.vendorName) == [
            "LOCATE_DISTANCE", "INVENTORY_SHORT_RANGE", "INVENTORY_DISTANCE", "LOCATE_SHORT_RANGE",
            "LOCATE_VERY_SHORT_RANGE", "SINGLE_FIND",
        ])
        #expect(UgiInventoryType.locateDistance.name == "Locate at a distance")
        #expect(UgiInventoryType.locateVeryShortRange.code == "locate_very_short_range")
        #expect(Set(UgiInventoryType.allCases.map(\.name)).count == 6)
        #expect(UgiInventoryType(code: "inventory_distance") == .inventoryDistance)
        #expect(UgiInventoryType(code: "SINGLE_FIND") == .singleFind)
        #expect(UgiInventoryType(code: "4") == .locateShortRange)
        #expect(UgiInventoryType(code: "7") == nil)
        #expect(UgiInventoryType(rawValue: 0) == nil)
    }

    @Test func soundTypesAndBanksHaveTheVendorsNumbers() {
        #expect(UgiSoundType.allCases.map(\.rawValue) == [0, 1, 2, 6])
        #expect(UgiSoundType.firstFindAndLast.description == "FIRST_FIND_AND_LAST")
        #expect(UgiMemoryBank.allCases.map(\.rawValue) == [0, 1, 2, 3])
        #expect(UgiMemoryBank.allCases.map(\.description) == ["RESERVED", "EPC", "TID", "USER"])
    }

    @Test(arguments: UgiInventoryType.allCases)
    func everyPresetValidates(_ type: UgiInventoryType) throws {
        try UgiRfidConfiguration.config(inventoryType: type).validate()
    }

    /// Types 1-5: the vendor library's rfidConfigurations table (docs/vendor-protocol.md); single
    /// find is ours (not in SDK 1.7.16).
    static let documented: [PresetValues] = [
        PresetValues(type: .locateDistance, power: (27, 23, 30), q: (4, 2, 7), session: 0, toggleAB: 0, sensitivity: -85,
                     reportRssi: false, reportSubsequentFinds: true, sound: .geigerCounter, singleFind: false, ramp: .noRamp),
        PresetValues(type: .inventoryShortRange, power: (21, 17, 24), q: (3, 2, 7), session: 1, toggleAB: 10, sensitivity: -85,
                     reportRssi: false, reportSubsequentFinds: false, sound: .firstFind, singleFind: false, ramp: .noRamp),
        PresetValues(type: .inventoryDistance, power: (27, 23, 29), q: (3, 2, 7), session: 1, toggleAB: 10, sensitivity: -85,
                     reportRssi: false, reportSubsequentFinds: false, sound: .firstFind, singleFind: false, ramp: .noRamp),
        PresetValues(type: .locateShortRange, power: (21, 17, 24), q: (4, 2, 7), session: 0, toggleAB: 0, sensitivity: -85,
                     reportRssi: false, reportSubsequentFinds: true, sound: .geigerCounter, singleFind: false, ramp: .noRamp),
        PresetValues(type: .locateVeryShortRange, power: (9, 5, 12), q: (4, 2, 7), session: 0, toggleAB: 0, sensitivity: -85,
                     reportRssi: false, reportSubsequentFinds: true, sound: .geigerCounter, singleFind: false, ramp: .noRamp),
        PresetValues(type: .singleFind, power: (10, 10, 30), q: (2, 2, 4), session: 0, toggleAB: 1, sensitivity: -80,
                     reportRssi: true, reportSubsequentFinds: false, sound: .firstFind, singleFind: true, ramp: .slow),
    ]

    @Test(arguments: documented)
    func everyPresetHasItsDocumentedValues(_ expected: PresetValues) {
        let c = UgiRfidConfiguration.config(inventoryType: expected.type)
        #expect(c.initialPowerLevel == expected.power.initial)
        #expect(c.minPowerLevel == expected.power.min)
        #expect(c.maxPowerLevel == expected.power.max)
        #expect(c.initialQValue == expected.q.initial)
        #expect(c.minQValue == expected.q.min)
        #expect(c.maxQValue == expected.q.max)
        #expect(c.session == expected.session)
        #expect(c.roundsWithNoFindsToToggleAB == expected.toggleAB)
        #expect(c.sensitivity == expected.sensitivity)
        #expect(c.reportRssi == expected.reportRssi)
        #expect(c.reportSubsequentFinds == expected.reportSubsequentFinds)
        #expect(c.soundType == expected.sound)
        #expect(c.singleFindMode == expected.singleFind)
        #expect(c.singleFindRampPowerMode == expected.ramp)
        #expect(!c.singleFindContinueInventory)
        // The vendor's rows all write at 24 dBm, -60; single find keeps the defaults.
        #expect(c.powerLevelWrite == (expected.singleFind ? 30 : 24))
        #expect(c.sensitivityWrite == (expected.singleFind ? -80 : -60))
        #expect(!c.setListenBeforeTalk && !c.listenBeforeTalk)
        #expect(c.maxRoundsPerSecond == 0)
        let bankBytes: [Int] = [c.minTidBytes, c.maxTidBytes, c.minUserBytes, c.maxUserBytes, c.minReservedBytes, c.maxReservedBytes]
        #expect(bankBytes.allSatisfy { $0 == 0 })
        #expect(c.selectMask == nil && c.selectMaskBitLength == 0 && c.selectOffset == 0)
        #expect(c.continual)
        #expect(!c.detailedPerReadData && c.detailedPerReadNumReads == 0)
        #expect(!c.forceTari25 && !c.delayAfterSelect)
        #expect(c.volume == 1)
        #expect(c.historyIntervalMSec == 500)
        #expect(c.historyDepth == 20)
    }

    @Test func presetsFollowTheirFamily() {
        let all = UgiInventoryType.allCases.map { ($0, UgiRfidConfiguration.config(inventoryType: $0)) }
        for (type, c) in all where type.vendorName.hasPrefix("LOCATE") {
            #expect(c.session == 0 && c.reportSubsequentFinds && c.soundType == .geigerCounter, "\(type)")
            #expect(c.minPowerLevel < c.initialPowerLevel && c.initialPowerLevel < c.maxPowerLevel, "\(type)")
        }
        for (type, c) in all where type.vendorName.hasPrefix("INVENTORY") {
            #expect([1, 2].contains(c.session) && c.minQValue < c.maxQValue && !c.reportRssi, "\(type)")
        }
        let locate = all.filter { $0.0.vendorName.hasPrefix("LOCATE") }.map(\.1.maxPowerLevel)
        #expect(locate == [30, 24, 12])  // Distance, short, very short: shorter range, less power.
        let inventory = UgiRfidConfiguration.config(inventoryType: .inventoryShortRange)
        #expect(inventory.maxPowerLevel < UgiRfidConfiguration.config(inventoryType: .inventoryDistance).maxPowerLevel)
    }

    // MARK: Codable

    @Test(arguments: UgiInventoryType.allCases)
    func presetsRoundTripThroughJSON(_ type: UgiInventoryType) throws {
        let configuration = UgiRfidConfiguration.config(inventoryType: type)
        let data = try JSONEncoder().encode(configuration)
        #expect(try JSONDecoder().decode(UgiRfidConfiguration.self, from: data) == configuration)
    }

    @Test func aCustomConfigurationRoundTripsUnderTheVendorsNames() throws {
        var configuration = Self.base
        configuration.selectMask = [0x30, 0x74, 0x25]
        configuration.selectMaskBitLength = 20
        configuration.selectOffset = 32
        configuration.selectBank = .epc
        configuration.detailedPerReadData = true
        configuration.detailedPerReadNumReads = 2
        configuration.detailedPerReadMemoryBank2 = .tid
        configuration.soundType = .firstFindAndLast
        configuration.volume = 0.25
        let data = try JSONEncoder().encode(configuration)
        #expect(try JSONDecoder().decode(UgiRfidConfiguration.self, from: data) == configuration)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for key in ["initialPowerLevel", "roundsWithNoFindsToToggleAB", "historyIntervalMSec", "detailedPerReadNumReads",
                    "singleFindRampPowerMode", "forceTari25", "selectMask"] {
            #expect(object[key] != nil, "\(key)")
        }
        #expect(object["soundType"] as? Int == 6)
        #expect(object["selectBank"] as? Int == 1)
        #expect(object.count == 42)
    }
}
