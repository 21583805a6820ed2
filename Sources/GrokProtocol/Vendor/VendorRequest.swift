/// Every request the vendor host library sends, typed: the host encodes it, the emulated
/// device decodes it. `payload` is what goes between the packet's length byte and its crc8
/// (GetBatteryLevel, GetAntennaTuning, GetTemperature, TuneAntenna and GetTestFlags go as the
/// one-byte form with no payload).
public enum VendorRequest: Sendable, Hashable {
    case getVersion(VendorVersionRequest)
    case programReader(VendorProgramReader)
    case changeSoftwareType(VendorChangeSoftwareType)
    case getBatteryLevel
    case provisioning(VendorProvisioning)
    /// No payload; the reader then sends ``VendorEchoMasterPacket``s.
    case echoMaster
    case getDiagnostics(reset: Bool)
    /// The select form depends on the reader's protocol; see ``VendorSelectForm``.
    case inventory(VendorInventoryStart, VendorSelectForm)
    /// `[ms LE16]`: the requested pause plus the platform's pause latency.
    case pauseConnection(ms: UInt16)
    /// `[sound]`: 0 is the found-last-item sound (`UGI_PLAY_SOUND_FOUND_LAST`).
    case playSound(UInt8)
    case getConfiguration(VendorGetConfiguration)
    case setConfiguration(VendorConfiguration)
    case echo(VendorEcho)
    /// No payload; 10 s timeout; the reader reports progress while it tunes.
    case tuneAntenna
    case getDetailedAntennaTuning(maxChannels: UInt8)
    case speakerTest(VendorSpeakerTest)
    case getAntennaTuning
    case setRegion(VendorSetRegion)
    case continuousTest(VendorContinuousTest)
    case setTestFlags(UInt8, UInt8)
    case getTestFlags
    case scanAllFrequencies(maxChannels: UInt8)
    case getTemperature
    case scanWide(VendorScanWide)

    public var opcode: VendorOpcode {
        switch self {
        case .getVersion: .getVersion
        case .programReader: .programReader
        case .changeSoftwareType: .changeSoftwareType
        case .getBatteryLevel: .getBatteryLevel
        case .provisioning: .provisioning
        case .echoMaster: .echoMaster
        case .getDiagnostics: .getDiagnostics
        case .inventory: .inventory
        case .pauseConnection: .pauseConnection
        case .playSound: .playSound
        case .getConfiguration: .getConfiguration
        case .setConfiguration: .setConfiguration
        case .echo: .echo
        case .tuneAntenna: .tuneAntenna
        case .getDetailedAntennaTuning: .getDetailedAntennaTuning
        case .speakerTest: .speakerTest
        case .getAntennaTuning: .getAntennaTuning
        case .setRegion: .setRegion
        case .continuousTest: .continuousTest
        case .setTestFlags, .getTestFlags: .testFlags
        case .scanAllFrequencies: .scanAllFrequencies
        case .getTemperature: .getTemperature
        case .scanWide: .scanWide
        }
    }

    public func encodePayload() throws(VendorCommandError) -> [UInt8] {
        var w = VendorWriter()
        switch self {
        case .getVersion(let request): return try request.encode()
        case .programReader(let request): return request.encode()
        case .changeSoftwareType(let request): return request.encode()
        case .getBatteryLevel, .echoMaster, .tuneAntenna, .getAntennaTuning, .getTestFlags, .getTemperature: return []
        case .provisioning(let request): return request.encode()
        case .getDiagnostics(let reset): w.bool(reset)
        case .inventory(let start, let form): return try start.encode(form: form)
        case .pauseConnection(let ms): w.u16(ms)
        case .playSound(let sound): w.u8(sound)
        case .getConfiguration(let request):
            w.u8(request.kind.rawValue)
            w.u8(request.refresh)
        case .setConfiguration(let configuration):
            w.u8(configuration.kind.rawValue)
            w.raw(try configuration.encodeContent())
        case .echo(let echo): return echo.data
        case .getDetailedAntennaTuning(let count), .scanAllFrequencies(let count): w.u8(count)
        case .speakerTest(let test):
            w.u16(test.frequencyHz)
            w.u16(test.durationMs)
            w.u8(test.volumeLevel)
        case .setRegion(let region): return region.encode()
        case .continuousTest(let test):
            w.u8(test.a)
            w.u8(test.b)
            w.u16(test.c)
            w.u8(test.powerByte)
            w.u8(test.volumeLevel)
        case .setTestFlags(let a, let b):
            w.u8(a)
            w.u8(b)
        case .scanWide(let scan):
            w.u16(scan.startMHz)
            w.u16(scan.endMHz)
            w.u8(scan.stepMHz)
            w.u8(scan.mode)
        }
        return w.bytes
    }

    /// The device side: the request a packet carries. `readerProtocol` picks the inventory's
    /// select form (the device knows its own protocol).
    public init(opcode: UInt8, payload: [UInt8], readerProtocol: Int = 20) throws(VendorCommandError) {
        guard let op = VendorOpcode(rawValue: opcode) else {
            throw .unknownValue(field: "request.opcode", value: Int(opcode))
        }
        // No packet carries more (the length byte's limit); whatever decodes here re-encodes.
        guard payload.count <= 250 else {
            throw .tooLong(field: "\(op) request", length: payload.count, limit: 250)
        }
        var r = VendorReader(payload)
        func done() throws(VendorCommandError) { try r.finish("\(op) request") }
        switch op {
        case .getVersion: self = .getVersion(try VendorVersionRequest(decoding: payload))
        case .programReader: self = .programReader(try VendorProgramReader(decoding: payload))
        case .changeSoftwareType: self = .changeSoftwareType(try VendorChangeSoftwareType(decoding: payload))
        case .getBatteryLevel: try done(); self = .getBatteryLevel
        case .provisioning: self = .provisioning(try VendorProvisioning(decoding: payload))
        case .echoMaster: try done(); self = .echoMaster
        case .getDiagnostics: self = .getDiagnostics(reset: try r.bool("diagnostics.reset")); try done()
        case .inventory:
            self = .inventory(try VendorInventoryStart(decoding: payload, form: VendorSelectForm(readerProtocol: readerProtocol)),
                              VendorSelectForm(readerProtocol: readerProtocol))
        case .pauseConnection: self = .pauseConnection(ms: try r.u16("pause.ms")); try done()
        case .playSound: self = .playSound(try r.u8("playSound.sound")); try done()
        case .getConfiguration:
            let kindByte = try r.u8("getConfiguration.kind")
            guard let kind = VendorConfigurationKind(rawValue: kindByte) else {
                throw .unknownValue(field: "getConfiguration.kind", value: Int(kindByte))
            }
            self = .getConfiguration(VendorGetConfiguration(kind: kind, refresh: try r.u8("getConfiguration.refresh")))
            try done()
        case .setConfiguration:
            let kindByte = try r.u8("setConfiguration.kind")
            guard let kind = VendorConfigurationKind(rawValue: kindByte) else {
                throw .unknownValue(field: "setConfiguration.kind", value: Int(kindByte))
            }
            self = .setConfiguration(try VendorConfiguration(kind: kind, decoding: r.rest()))
        case .echo: self = .echo(try VendorEcho(payload))
        case .tuneAntenna: try done(); self = .tuneAntenna
        case .getDetailedAntennaTuning: self = .getDetailedAntennaTuning(maxChannels: try r.u8("detailedTuning.max")); try done()
        case .speakerTest:
            self = .speakerTest(VendorSpeakerTest(frequencyHz: try r.u16("speakerTest.frequency"),
                                                  durationMs: try r.u16("speakerTest.durationMs"),
                                                  volumeLevel: try r.u8("speakerTest.volumeLevel")))
            try done()
        case .getAntennaTuning: try done(); self = .getAntennaTuning
        case .setRegion: self = .setRegion(try VendorSetRegion(decoding: payload))
        case .continuousTest:
            self = .continuousTest(VendorContinuousTest(a: try r.u8("continuousTest.a"), b: try r.u8("continuousTest.b"),
                                                        c: try r.u16("continuousTest.c"), powerByte: try r.u8("continuousTest.power"),
                                                        volumeLevel: try r.u8("continuousTest.volume")))
            try done()
        case .testFlags:
            if payload.isEmpty {
                self = .getTestFlags
            } else {
                self = .setTestFlags(try r.u8("testFlags.a"), try r.u8("testFlags.b"))
                try done()
            }
        case .scanAllFrequencies: self = .scanAllFrequencies(maxChannels: try r.u8("scanAll.max")); try done()
        case .getTemperature: try done(); self = .getTemperature
        case .scanWide:
            self = .scanWide(try VendorScanWide(startMHz: try r.u16("scanWide.start"), endMHz: try r.u16("scanWide.end"),
                                                stepMHz: try r.u8("scanWide.step"), mode: try r.u8("scanWide.mode")))
            try done()
        }
    }

    /// Decodes the data of the reader's successful answer to this request (empty for an ACK).
    public func decodeResponse(_ data: [UInt8]) throws(VendorCommandError) -> VendorResponse {
        var r = VendorReader(data)
        switch self {
        case .getVersion:
            return .version(try VendorReaderVersion(decoding: data))
        case .getBatteryLevel:
            return .battery(try VendorBatteryLevel(decoding: data))
        case .getDiagnostics:
            return .diagnostics(try VendorDiagnostics(decoding: data))
        case .getConfiguration(let request):
            return .configuration(try VendorConfiguration(kind: request.kind, decoding: data))
        case .echo:
            return .echo(data)
        case .getAntennaTuning:
            let tuning = VendorAntennaTuning(staticAverage: try r.u16("antennaTuning.static"),
                                             dynamicAverage: try r.u16("antennaTuning.dynamic"))
            try r.finish("GetAntennaTuning response")
            return .antennaTuning(tuning)
        case .getDetailedAntennaTuning(let count):
            var channels: [VendorDetailedTuning] = []
            while !r.isAtEnd {
                channels.append(VendorDetailedTuning(value: try r.u16("detailedTuning.value"), a: try r.u8("detailedTuning.a"),
                                                     b: try r.u8("detailedTuning.b"), c: try r.u8("detailedTuning.c")))
            }
            try checkRange("detailedTuning.channels", channels.count, 0...Int(count))
            return .detailedAntennaTuning(channels)
        case .getTestFlags:
            let flags = (try r.u8("testFlags.a"), try r.u8("testFlags.b"))
            try r.finish("GetTestFlags response")
            return .testFlags(flags.0, flags.1)
        case .scanAllFrequencies(let count):
            var channels: [VendorChannelScan] = []
            while !r.isAtEnd {
                channels.append(VendorChannelScan(i: Int8(bitPattern: try r.u8("scan.i")), q: Int8(bitPattern: try r.u8("scan.q")),
                                                  dBm: Int8(bitPattern: try r.u8("scan.dBm"))))
            }
            try checkRange("scanAll.channels", channels.count, 0...Int(count))
            return .scanAllFrequencies(channels)
        case .getTemperature:
            let value = VendorTemperature(raw: try r.u16("temperature.raw"), degreesC: try r.u8("temperature.degreesC"))
            try r.finish("GetTemperature response")
            return .temperature(value)
        case .scanWide(let scan):
            try checkRange("scanWide.values", data.count, 0...scan.steps)
            return .scanWide(data)
        case .inventory:
            if data.isEmpty { return .ack }
            let code = try r.u8("inventory.error")
            try r.finish("inventory start response")
            return .inventoryError(VendorInventoryStartError(code: code))
        case .programReader, .changeSoftwareType, .provisioning, .echoMaster, .pauseConnection, .playSound, .setConfiguration,
             .tuneAntenna, .speakerTest, .setRegion, .continuousTest, .setTestFlags:
            try r.finish("\(opcode) response")
            return .ack
        }
    }
}

/// A reader's answer to a ``VendorRequest``, typed.
public enum VendorResponse: Sendable, Hashable {
    /// ACK_0, no data.
    case ack
    case version(VendorReaderVersion)
    case battery(VendorBatteryLevel)
    case diagnostics(VendorDiagnostics)
    case configuration(VendorConfiguration)
    case echo([UInt8])
    case antennaTuning(VendorAntennaTuning)
    case detailedAntennaTuning([VendorDetailedTuning])
    case testFlags(UInt8, UInt8)
    case scanAllFrequencies([VendorChannelScan])
    case temperature(VendorTemperature)
    /// One value per step.
    case scanWide([UInt8])
    case inventoryError(VendorInventoryStartError)

    /// The device side: the data bytes of this answer.
    public func encodeData() throws(VendorCommandError) -> [UInt8] {
        var w = VendorWriter()
        switch self {
        case .ack: break
        case .version(let version): return try version.encode()
        case .battery(let battery): return battery.encode()
        case .diagnostics(let diagnostics): return diagnostics.encode()
        case .configuration(let configuration): return try configuration.encodeContent()
        case .echo(let data): return data
        case .antennaTuning(let tuning):
            w.u16(tuning.staticAverage)
            w.u16(tuning.dynamicAverage)
        case .detailedAntennaTuning(let channels):
            for channel in channels {
                w.u16(channel.value)
                w.u8(channel.a)
                w.u8(channel.b)
                w.u8(channel.c)
            }
        case .testFlags(let a, let b):
            w.u8(a)
            w.u8(b)
        case .scanAllFrequencies(let channels):
            for channel in channels {
                w.u8(UInt8(bitPattern: channel.i))
                w.u8(UInt8(bitPattern: channel.q))
                w.u8(UInt8(bitPattern: channel.dBm))
            }
        case .temperature(let value):
            w.u16(value.raw)
            w.u8(value.degreesC)
        case .scanWide(let values): return values
        case .inventoryError(let error): w.u8(error.code)
        }
        guard w.bytes.count <= VendorWireLimits.maxResponseBytes else {
            throw .tooLong(field: "response data", length: w.bytes.count, limit: VendorWireLimits.maxResponseBytes)
        }
        return w.bytes
    }
}
