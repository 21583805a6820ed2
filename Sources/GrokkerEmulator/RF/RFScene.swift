import GrokProtocol
import Foundation

/// A field of EPC Gen2 tags around an emulated Grokker, as written in a scene file (JSON,
/// documented in docs/scene.md): the reader's antenna and receiver, the tags' default
/// activation threshold, and each tag's memory, locks and place.
///
/// A scene is the starting point; what happens to the tags afterwards (memory written,
/// locks, kills) is the ``RFField``'s state, saved separately.
public struct RFScene: Sendable, Hashable, Codable {
    /// The newest `format` this build reads and the one it writes.
    public static let currentFormat = 1
    /// Scene files larger than this are refused (bounded input).
    public static let maxFileBytes = 16 << 20

    /// Reader antenna gain, dBi (default 0).
    public var antennaGainDBi: Double
    /// Weakest backscatter the reader decodes, dBm (default −80).
    public var readerSensitivityDBm: Double
    /// What the tag's backscatter modulation loses, dB (default 8).
    public var backscatterLossDB: Double
    /// Power a tag needs to wake, dBm, unless the tag says otherwise (default −18).
    public var tagActivationThresholdDBm: Double
    /// The tags' chip, unless a tag says otherwise (default Monza R6).
    public var tagChip: TagChip
    /// Other transmitters the reader hears (listen before talk finds their channels busy).
    public var interferers: [Interferer]
    /// The tags, in file order (a tag's index is its place in this list).
    public var tags: [Tag]

    /// Creates a scene.
    public init(
        antennaGainDBi: Double = 0, readerSensitivityDBm: Double = -80, backscatterLossDB: Double = 8,
        tagActivationThresholdDBm: Double = -18, tagChip: TagChip = .monzaR6, interferers: [Interferer] = [], tags: [Tag]
    ) {
        self.interferers = interferers
        self.antennaGainDBi = antennaGainDBi
        self.readerSensitivityDBm = readerSensitivityDBm
        self.backscatterLossDB = backscatterLossDB
        self.tagActivationThresholdDBm = tagActivationThresholdDBm
        self.tagChip = tagChip
        self.tags = tags
    }

    /// One tag of a scene.
    public struct Tag: Sendable, Hashable, Codable {
        /// A label for people (optional).
        public var name: String?
        /// The EPC, 2...31 words.
        public var epc: [UInt8]
        /// The PC word; `nil` computes it from the EPC length (and UMI from USER memory).
        public var pc: UInt16?
        /// EPC words the EPC bank has room for; `nil`: max(8, EPC words).
        public var epcCapacityWords: Int?
        /// TID bank bytes; `nil` makes one up from the tag's index (`E2801160` + serial).
        public var tid: [UInt8]?
        /// USER bank bytes (possibly none).
        public var user: [UInt8]
        /// Access password (0: none).
        public var accessPassword: UInt32
        /// Kill password (0: cannot be killed).
        public var killPassword: UInt32
        /// Lock state.
        public var lock: Gen2LockState
        /// Where the tag is.
        public var placement: TagPlacement
        /// This tag's activation threshold, dBm; `nil` uses the scene's.
        public var activationThresholdDBm: Double?
        /// This tag's chip; `nil` uses the scene's.
        public var chip: TagChip?

        /// Creates a tag.
        public init(
            name: String? = nil, epc: [UInt8], pc: UInt16? = nil, epcCapacityWords: Int? = nil, tid: [UInt8]? = nil,
            user: [UInt8] = [], accessPassword: UInt32 = 0, killPassword: UInt32 = 0,
            lock: Gen2LockState = Gen2LockState(), placement: TagPlacement, activationThresholdDBm: Double? = nil,
            chip: TagChip? = nil
        ) {
            self.name = name
            self.epc = epc
            self.pc = pc
            self.epcCapacityWords = epcCapacityWords
            self.tid = tid
            self.user = user
            self.accessPassword = accessPassword
            self.killPassword = killPassword
            self.lock = lock
            self.placement = placement
            self.activationThresholdDBm = activationThresholdDBm
            self.chip = chip
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, epc, pc, tid, user, lock, motion, chip
            case epcCapacityWords = "epc_capacity_words"
            case accessPassword = "access_password"
            case killPassword = "kill_password"
            case distance = "distance_m"
            case pathLoss = "path_loss_db"
            case activationThresholdDBm = "activation_threshold_dbm"
        }

        public init(from decoder: any Decoder) throws {
            try SceneDecoding.rejectUnknownKeys(decoder, CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.sceneOptional(String.self, .name, expected: "a string")
            let epc = try c.sceneHex(.epc)
            guard epc.count % 2 == 0, (2...TagMemory.maxEPCWords).contains(epc.count / 2) else {
                throw SceneDecoding.Failure(
                    c.codingPath + [CodingKeys.epc],
                    expected: "4 to 62 bytes, a whole number of 16-bit words (a multiple of 4 hex digits)",
                    found: "\(epc.count) bytes")
            }
            self.epc = epc
            let words = epc.count / 2
            if let pcBytes = try c.sceneOptionalHex(.pc) {
                guard pcBytes.count == 2 else {
                    throw SceneDecoding.Failure(
                        c.codingPath + [CodingKeys.pc], expected: "4 hex digits (one word)", found: "\(pcBytes.count) bytes")
                }
                let pc = UInt16(pcBytes[0]) << 8 | UInt16(pcBytes[1])
                guard Int(pc >> 11) == words else {
                    throw SceneDecoding.Failure(
                        c.codingPath + [CodingKeys.pc], expected: "a PC whose length bits (15-11) say \(words) words, the EPC's length",
                        found: "a PC saying \(pc >> 11) words")
                }
                self.pc = pc
            } else {
                pc = nil
            }
            epcCapacityWords = try c.sceneOptional(Int.self, .epcCapacityWords, expected: "an integer")
            if let capacity = epcCapacityWords, !(words...TagMemory.maxEPCWords).contains(capacity) {
                throw SceneDecoding.Failure(
                    c.codingPath + [CodingKeys.epcCapacityWords], expected: "an integer from \(words) (the EPC's words) to 31",
                    found: "\(capacity)")
            }
            tid = try c.sceneOptionalHex(.tid)
            if let tid, tid.count % 2 != 0 || !(4...512).contains(tid.count) {
                throw SceneDecoding.Failure(
                    c.codingPath + [CodingKeys.tid], expected: "4 to 512 bytes, a whole number of words (a multiple of 4 hex digits)",
                    found: "\(tid.count) bytes")
            }
            user = try c.sceneOptionalHex(.user) ?? []
            if user.count % 2 != 0 || user.count > 8192 {
                throw SceneDecoding.Failure(
                    c.codingPath + [CodingKeys.user], expected: "0 to 8192 bytes, a whole number of words (a multiple of 4 hex digits)",
                    found: "\(user.count) bytes")
            }
            accessPassword = try c.scenePassword(.accessPassword)
            killPassword = try c.scenePassword(.killPassword)
            lock = try c.sceneOptional(SceneLock.self, .lock, expected: "an object")?.state ?? Gen2LockState()

            let present = [CodingKeys.distance, .pathLoss, .motion].filter { c.contains($0) }
            if present.count > 1 {
                throw SceneDecoding.Failure.conflict(c.codingPath, keys: present.map(\.stringValue))
            }
            switch present.first {
            case .distance?:
                let meters = try c.sceneValue(Double.self, .distance, expected: "a distance in metres")
                guard meters >= 0, meters <= 100_000 else {
                    throw SceneDecoding.Failure(
                        c.codingPath + [CodingKeys.distance], expected: "a distance from 0 to 100000 metres", found: "\(meters)")
                }
                placement = .distance(meters: meters)
            case .pathLoss?:
                let dB = try c.sceneValue(Double.self, .pathLoss, expected: "a path loss in dB")
                guard dB >= 0, dB <= 300 else {
                    throw SceneDecoding.Failure(
                        c.codingPath + [CodingKeys.pathLoss], expected: "a path loss from 0 to 300 dB", found: "\(dB)")
                }
                placement = .pathLoss(dB: dB)
            case .motion?:
                let points = try c.sceneValue([SceneWaypoint].self, .motion, expected: "an array of {\"t_s\", \"distance_m\"} objects")
                guard !points.isEmpty else {
                    throw SceneDecoding.Failure(
                        c.codingPath + [CodingKeys.motion], expected: "at least one waypoint", found: "an empty array")
                }
                for i in 1..<points.count where points[i].point.time < points[i - 1].point.time {
                    throw SceneDecoding.Failure(
                        c.codingPath + [CodingKeys.motion, SceneDecoding.Key(index: i), SceneDecoding.Key("t_s")],
                        expected: "a time not before the previous waypoint's \(points[i - 1].point.time) s",
                        found: "\(points[i].point.time)")
                }
                placement = .motion(points.map(\.point))
            default:
                throw SceneDecoding.Failure.missing(
                    c.codingPath + [CodingKeys.distance], expected: "one of distance_m, path_loss_db or motion: where the tag is")
            }
            activationThresholdDBm = try c.sceneOptional(Double.self, .activationThresholdDBm, expected: "a power in dBm")
            chip = try TagChip.decode(c, .chip)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(name, forKey: .name)
            try c.encode(SceneDecoding.hex(epc), forKey: .epc)
            try c.encodeIfPresent(pc.map { SceneDecoding.hex([UInt8($0 >> 8), UInt8($0 & 0xFF)]) }, forKey: .pc)
            try c.encodeIfPresent(epcCapacityWords, forKey: .epcCapacityWords)
            try c.encodeIfPresent(tid.map(SceneDecoding.hex), forKey: .tid)
            if !user.isEmpty { try c.encode(SceneDecoding.hex(user), forKey: .user) }
            try c.encode(SceneDecoding.hex(password: accessPassword), forKey: .accessPassword)
            try c.encode(SceneDecoding.hex(password: killPassword), forKey: .killPassword)
            try c.encode(SceneLock(state: lock), forKey: .lock)
            switch placement {
            case .distance(let meters): try c.encode(meters, forKey: .distance)
            case .pathLoss(let dB): try c.encode(dB, forKey: .pathLoss)
            case .motion(let points): try c.encode(points, forKey: .motion)
            }
            try c.encodeIfPresent(activationThresholdDBm, forKey: .activationThresholdDBm)
            try c.encodeIfPresent(chip, forKey: .chip)
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, tags
        case antennaGainDBi = "antenna_gain_dbi"
        case readerSensitivityDBm = "reader_sensitivity_dbm"
        case backscatterLossDB = "backscatter_loss_db"
        case tagActivationThresholdDBm = "tag_activation_threshold_dbm"
        case tagChip = "tag_chip"
        case interferers
    }

    /// Another transmitter on one channel, as the reader's receiver hears it.
    public struct Interferer: Sendable, Hashable, Codable {
        /// Half the width of the channel an interferer occupies, MHz (a 200 kHz channel, the
        /// narrowest any region's hop table uses).
        public static let halfWidthMHz = 0.1
        /// Its centre frequency, MHz.
        public var frequencyMHz: Double
        /// Its power at the reader's antenna port, dBm.
        public var powerDBm: Double

        /// Creates an interferer.
        public init(frequencyMHz: Double, powerDBm: Double) {
            self.frequencyMHz = frequencyMHz
            self.powerDBm = powerDBm
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case frequencyMHz = "frequency_mhz"
            case powerDBm = "power_dbm"
        }

        public init(from decoder: any Decoder) throws {
            try SceneDecoding.rejectUnknownKeys(decoder, CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            frequencyMHz = try c.sceneValue(Double.self, .frequencyMHz, expected: "a frequency in MHz")
            guard (1...10_000).contains(frequencyMHz) else {
                throw SceneDecoding.Failure(c.codingPath + [CodingKeys.frequencyMHz], expected: "a frequency from 1 to 10000 MHz",
                                            found: "\(frequencyMHz)")
            }
            powerDBm = try c.sceneValue(Double.self, .powerDBm, expected: "a power in dBm")
            guard (-200...60).contains(powerDBm) else {
                throw SceneDecoding.Failure(c.codingPath + [CodingKeys.powerDBm], expected: "a power from -200 to 60 dBm",
                                            found: "\(powerDBm)")
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        try SceneDecoding.rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let format = try c.sceneOptional(Int.self, .format, expected: "an integer") ?? Self.currentFormat
        guard format <= Self.currentFormat else { throw SceneDecoding.FormatTooNew(format: format) }
        guard format >= 1 else {
            throw SceneDecoding.Failure(c.codingPath + [CodingKeys.format], expected: "1", found: "\(format)")
        }
        antennaGainDBi = try c.sceneOptional(Double.self, .antennaGainDBi, expected: "a gain in dBi") ?? 0
        readerSensitivityDBm = try c.sceneOptional(Double.self, .readerSensitivityDBm, expected: "a power in dBm") ?? -80
        backscatterLossDB = try c.sceneOptional(Double.self, .backscatterLossDB, expected: "a loss in dB") ?? 8
        tagActivationThresholdDBm =
            try c.sceneOptional(Double.self, .tagActivationThresholdDBm, expected: "a power in dBm") ?? -18
        tagChip = try TagChip.decode(c, .tagChip) ?? .monzaR6
        interferers = try c.sceneOptional([Interferer].self, .interferers, expected: "an array of {\"frequency_mhz\", \"power_dbm\"} objects") ?? []
        guard c.contains(.tags) else {
            throw SceneDecoding.Failure.missing(c.codingPath + [CodingKeys.tags], expected: "an array of tags")
        }
        tags = try c.sceneValue([Tag].self, .tags, expected: "an array of tag objects")
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.currentFormat, forKey: .format)
        try c.encode(antennaGainDBi, forKey: .antennaGainDBi)
        try c.encode(readerSensitivityDBm, forKey: .readerSensitivityDBm)
        try c.encode(backscatterLossDB, forKey: .backscatterLossDB)
        try c.encode(tagActivationThresholdDBm, forKey: .tagActivationThresholdDBm)
        try c.encode(tagChip, forKey: .tagChip)
        if !interferers.isEmpty { try c.encode(interferers, forKey: .interferers) }
        try c.encode(tags, forKey: .tags)
    }

    // MARK: Files

    /// Reads and checks the scene file at `path`.
    /// - Throws: ``SceneError`` naming the file and, for a bad value, its key path.
    public static func load(path: String) throws(SceneError) -> RFScene {
        let bytes: [UInt8]?
        do {
            bytes = try UnitFile.readAll(path, limit: maxFileBytes)
        } catch UnitFile.Failure.tooLarge(let size) {
            throw .unreadable(path: path, detail: "\(size) bytes is larger than the \(maxFileBytes)-byte limit")
        } catch {
            throw .unreadable(path: path, detail: error.detail)
        }
        guard let bytes else { throw .unreadable(path: path, detail: "no such file") }
        return try decode(Data(bytes), path: path)
    }

    /// Decodes a scene from JSON; `path` names the source in errors.
    public static func decode(_ data: Data, path: String) throws(SceneError) -> RFScene {
        try SceneDecoding.decode(RFScene.self, from: data, path: path)
    }

    /// The scene as JSON (pretty-printed, keys sorted), in the documented format.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Only numbers, strings, arrays and objects: encoding cannot fail.
        return ((try? encoder.encode(self)) ?? Data()) + Data("\n".utf8)
    }
}

/// The `lock` object of a scene tag.
struct SceneLock: Codable {
    var state: Gen2LockState

    init(state: Gen2LockState) {
        self.state = state
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case epc, tid, user
        case killPassword = "kill_password"
        case accessPassword = "access_password"
    }

    init(from decoder: any Decoder) throws {
        try SceneDecoding.rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var state = Gen2LockState()
        let fields: [(CodingKeys, Gen2LockField)] = [
            (.killPassword, .killPassword), (.accessPassword, .accessPassword), (.epc, .epc), (.tid, .tid), (.user, .user),
        ]
        let names = Gen2LockAction.allCases.map(\.sceneName).joined(separator: ", ")
        for (key, field) in fields {
            guard let name = try c.sceneOptional(String.self, key, expected: "one of \(names)") else { continue }
            guard let action = Gen2LockAction(sceneName: name) else {
                throw SceneDecoding.Failure(
                    c.codingPath + [key], expected: "one of \(names)", found: SceneDecoding.quote(name))
            }
            state[field] = action
        }
        self.state = state
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(state.killPassword.sceneName, forKey: .killPassword)
        try c.encode(state.accessPassword.sceneName, forKey: .accessPassword)
        try c.encode(state.epc.sceneName, forKey: .epc)
        try c.encode(state.tid.sceneName, forKey: .tid)
        try c.encode(state.user.sceneName, forKey: .user)
    }
}

/// One `motion` waypoint, checked.
struct SceneWaypoint: Decodable {
    var point: TagPlacement.Waypoint

    enum CodingKeys: String, CodingKey, CaseIterable {
        case time = "t_s"
        case distance = "distance_m"
    }

    init(from decoder: any Decoder) throws {
        try SceneDecoding.rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let time = try c.sceneValue(Double.self, .time, expected: "a time in seconds")
        let distance = try c.sceneValue(Double.self, .distance, expected: "a distance in metres")
        guard distance >= 0, distance <= 100_000 else {
            throw SceneDecoding.Failure(
                c.codingPath + [CodingKeys.distance], expected: "a distance from 0 to 100000 metres", found: "\(distance)")
        }
        point = TagPlacement.Waypoint(time: time, distance: distance)
    }
}

/// Decoding helpers that turn every problem into a ``SceneError`` with a key path.
enum SceneDecoding {
    /// A value that is wrong, with where it is.
    struct Failure: Error {
        enum Kind {
            case invalid(expected: String, found: String)
            case missing(expected: String)
            case unknown(known: [String])
            case conflict(keys: [String])
        }

        var codingPath: [any CodingKey]
        var kind: Kind

        init(_ codingPath: [any CodingKey], expected: String, found: String) {
            self.codingPath = codingPath
            kind = .invalid(expected: expected, found: found)
        }

        init(codingPath: [any CodingKey], kind: Kind) {
            self.codingPath = codingPath
            self.kind = kind
        }

        static func missing(_ codingPath: [any CodingKey], expected: String) -> Failure {
            Failure(codingPath: codingPath, kind: .missing(expected: expected))
        }

        static func conflict(_ codingPath: [any CodingKey], keys: [String]) -> Failure {
            Failure(codingPath: codingPath, kind: .conflict(keys: keys))
        }
    }

    /// A file of a newer format.
    struct FormatTooNew: Error {
        var format: Int
    }

    /// A coding key made up on the spot (array indices, unknown keys).
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int?

        init(_ string: String) {
            stringValue = string
            intValue = nil
        }

        init(index: Int) {
            stringValue = "Index \(index)"
            intValue = index
        }

        init?(stringValue: String) {
            self.init(stringValue)
        }

        init?(intValue: Int) {
            self.init(index: intValue)
        }
    }

    /// Describes whatever JSON value sits somewhere, for "but is ..." messages.
    struct Found: Decodable {
        var description: String

        init(from decoder: any Decoder) throws {
            if let c = try? decoder.singleValueContainer() {
                if c.decodeNil() {
                    description = "null"
                    return
                }
                if let b = try? c.decode(Bool.self) {
                    description = b ? "true" : "false"
                    return
                }
                if let d = try? c.decode(Double.self) {
                    description = "the number \(SceneDecoding.number(d))"
                    return
                }
                if let s = try? c.decode(String.self) {
                    description = "the string \(SceneDecoding.quote(s))"
                    return
                }
            }
            if (try? decoder.unkeyedContainer()) != nil {
                description = "an array"
            } else {
                description = "an object"
            }
        }
    }

    /// `tags[3].epc` from a coding path.
    static func keyPath(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue, key.stringValue.hasPrefix("Index ") || key.stringValue == String(index) {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text.isEmpty ? "(top level)" : text
    }

    /// Refuses keys not in `Keys` (typos would otherwise be silently ignored).
    static func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ decoder: any Decoder, _: Keys.Type) throws {
        let c: KeyedDecodingContainer<Key>
        do {
            c = try decoder.container(keyedBy: Key.self)
        } catch {
            let found = (try? Found(from: decoder))?.description ?? "something else"
            throw Failure(decoder.codingPath, expected: "an object", found: found)
        }
        let known = Keys.allCases.map(\.stringValue)
        for key in c.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !known.contains(key.stringValue) {
            throw Failure(codingPath: decoder.codingPath + [key], kind: .unknown(known: known.sorted()))
        }
    }

    /// Decodes `type` from JSON, turning every failure into a ``SceneError`` about `path`.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, path: String) throws(SceneError) -> T {
        // Syntax first, so "not JSON" is told apart from "JSON of the wrong shape".
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw .notJSON(path: path, detail: describeSyntaxError(error))
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let failure as Failure {
            let key = keyPath(failure.codingPath)
            switch failure.kind {
            case .invalid(let expected, let found):
                throw .invalidValue(path: path, key: key, expected: expected, found: found)
            case .missing(let expected):
                throw .missingKey(path: path, key: key, expected: expected)
            case .unknown(let known):
                throw .unknownKey(path: path, key: key, known: known)
            case .conflict(let keys):
                throw .conflictingKeys(path: path, key: key, keys: keys)
            }
        } catch let tooNew as FormatTooNew {
            throw .tooNew(path: path, format: tooNew.format, supported: RFScene.currentFormat)
        } catch let error as DecodingError {
            switch error {
            case .keyNotFound(let key, let context):
                throw .missingKey(path: path, key: keyPath(context.codingPath + [key]), expected: "a value")
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                throw .invalidValue(
                    path: path, key: keyPath(context.codingPath), expected: "a value of another type",
                    found: context.debugDescription)
            @unknown default:
                throw .invalidValue(path: path, key: "(unknown)", expected: "a valid value", found: "\(error)")
            }
        } catch {
            throw .invalidValue(path: path, key: "(unknown)", expected: "a valid value", found: "\(error)")
        }
    }

    private static func describeSyntaxError(_ error: any Error) -> String {
        let ns = error as NSError
        if let detail = ns.userInfo[NSDebugDescriptionErrorKey] as? String { return detail }
        return ns.localizedDescription
    }

    /// Bytes from hex digits (either case), or a description of what is wrong.
    static func bytes(fromHex text: String) -> Result<[UInt8], HexProblem> {
        let digits = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var high: UInt8?
        for (position, digit) in digits.enumerated() {
            let value: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = digit - UInt8(ascii: "A") + 10
            default:
                return .failure(.notHex(position: position))
            }
            if let h = high {
                bytes.append(h << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        if high != nil { return .failure(.oddLength(digits: digits.count)) }
        return .success(bytes)
    }

    enum HexProblem: Error {
        case notHex(position: Int)
        case oddLength(digits: Int)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hex(password: UInt32) -> String {
        hex([UInt8(password >> 24), UInt8((password >> 16) & 0xFF), UInt8((password >> 8) & 0xFF), UInt8(password & 0xFF)])
    }

    /// A number as a person wrote it (`3`, not `3.0`).
    static func number(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    }

    /// A string shown in a message: quoted, long ones shortened.
    static func quote(_ s: String) -> String {
        let short = s.count > 40 ? String(s.prefix(37)) + "..." : s
        return "\"\(short)\""
    }
}

extension KeyedDecodingContainer {
    /// A required value; a wrong type becomes a ``SceneDecoding/Failure`` saying what was found.
    func sceneValue<T: Decodable>(_ type: T.Type, _ key: Key, expected: String) throws -> T {
        guard contains(key) else { throw SceneDecoding.Failure.missing(codingPath + [key], expected: expected) }
        do {
            return try decode(T.self, forKey: key)
        } catch let error as DecodingError {
            // Only problems with this very value; nested objects report their own paths.
            if let path = Self.path(of: error), path.count > codingPath.count + 1 { throw error }
            let found = (try? decode(SceneDecoding.Found.self, forKey: key))?.description ?? "something else"
            throw SceneDecoding.Failure(codingPath + [key], expected: expected, found: found)
        }
    }

    /// An optional value (absent or null: `nil`).
    func sceneOptional<T: Decodable>(_ type: T.Type, _ key: Key, expected: String) throws -> T? {
        guard contains(key), (try? decodeNil(forKey: key)) != true else { return nil }
        return try sceneValue(T.self, key, expected: expected)
    }

    /// Required hex digits as bytes.
    func sceneHex(_ key: Key) throws -> [UInt8] {
        let text = try sceneValue(String.self, key, expected: "a string of hex digits")
        switch SceneDecoding.bytes(fromHex: text) {
        case .success(let bytes): return bytes
        case .failure(.oddLength(let digits)):
            throw SceneDecoding.Failure(
                codingPath + [key], expected: "an even number of hex digits (whole bytes)", found: "\(digits) hex digits")
        case .failure(.notHex(let position)):
            let character = Array(text)[min(position, text.count - 1)]
            throw SceneDecoding.Failure(
                codingPath + [key], expected: "hex digits only (0-9, A-F)",
                found: "\(SceneDecoding.quote(text)), with '\(character)' at position \(position + 1)")
        }
    }

    /// Optional hex digits as bytes.
    func sceneOptionalHex(_ key: Key) throws -> [UInt8]? {
        guard contains(key), (try? decodeNil(forKey: key)) != true else { return nil }
        return try sceneHex(key)
    }

    /// A 32-bit password as 8 hex digits; absent: 0.
    func scenePassword(_ key: Key) throws -> UInt32 {
        guard let bytes = try sceneOptionalHex(key) else { return 0 }
        guard bytes.count == 4 else {
            throw SceneDecoding.Failure(
                codingPath + [key], expected: "8 hex digits (a 32-bit password)", found: "\(bytes.count * 2) hex digits")
        }
        return bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func path(of error: DecodingError) -> [any CodingKey]? {
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): c.codingPath
        case .keyNotFound(let key, let c): c.codingPath + [key]
        @unknown default: nil
        }
    }
}

/// A tag chip and the sensitivities its maker publishes (a reference dipole tag; figures and
/// sources in docs/scene.md, "Tag chips"). A chip needs more power to write its memory than to
/// be read: a tag's write threshold is its activation threshold plus ``writeMarginDB``.
public enum TagChip: String, Sendable, Hashable, CaseIterable, Codable {
    /// Impinj Monza R6 (datasheet IPJ-W1700, version 5.0, 2017).
    case monzaR6 = "monza_r6"
    /// Impinj Monza 4 (datasheet IPJ-W1510, version 10.0, 2016; single-port figures).
    case monza4 = "monza_4"
    /// NXP UCODE 7 (SL3S1204 product data sheet, rev. 3.5, 2015).
    case ucode7 = "ucode_7"
    /// NXP UCODE 8 (SL3S1205_15 product data sheet, rev. 3.6, 2021).
    case ucode8 = "ucode_8"

    /// Read sensitivity, dBm.
    public var readSensitivityDBm: Double {
        switch self {
        case .monzaR6: -22.1
        case .monza4: -19.5
        case .ucode7: -21
        case .ucode8: -23
        }
    }

    /// Write sensitivity, dBm.
    public var writeSensitivityDBm: Double {
        switch self {
        case .monzaR6: -18.8
        case .monza4: -16.7
        case .ucode7: -16
        case .ucode8: -18
        }
    }

    /// How much more power a write needs than a read, dB.
    public var writeMarginDB: Double { writeSensitivityDBm - readSensitivityDBm }

    /// The chip named at `key`, or `nil` when the key is absent.
    static func decode<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) throws -> TagChip? {
        let names = allCases.map(\.rawValue).joined(separator: ", ")
        guard let name = try c.sceneOptional(String.self, key, expected: "one of \(names)") else { return nil }
        guard let chip = TagChip(rawValue: name) else {
            throw SceneDecoding.Failure(c.codingPath + [key], expected: "one of \(names)", found: SceneDecoding.quote(name))
        }
        return chip
    }
}
