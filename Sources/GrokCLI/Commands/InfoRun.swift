import Foundation
import GrokFleet
import GrokAudio
import GrokLink
import GrokProtocol
import Synchronization
import UGrokIt

/// What `grokctl info` learned about one Grokker; also its `--json` form.
struct InfoReport: Encodable, Sendable {
    struct Problem: Encodable, Sendable {
        let code: String
        let message: String
    }
    let device: String
    let status: String
    var serial: String?
    var hardwareType: String?
    var hardwareModel: String?
    var hardwareRevision: Int?
    var firmware: String?
    var loader: String?
    var readerProtocol: Int?
    var region: String?
    var regionSet: Bool?
    var userMustSetRegion: Bool?
    var maxPowerDBm: Double?
    var hasBattery: Bool?
    var batteryCapacityMinutes: Int?
    var linkBitRate: Double?
    var connectMs: Double?
    // The host's link counters for this session (`--json` only); see "Link counters" below.
    var packetsSent: Int?
    var packetsReceived: Int?
    var bytesSent: Int?
    var bytesReceived: Int?
    var retries: Int?
    var timeouts: Int?
    var crcMismatches: Int?
    var internalCrcMismatches: Int?
    var invalidPackets: Int?
    var error: Problem?
    /// Localized error text for the terminal (not in JSON).
    var localizedError: String?

    enum CodingKeys: String, CodingKey {
        case device, status, serial, firmware, loader, region, error
        case hardwareType = "hardware_type"
        case hardwareModel = "hardware_model"
        case hardwareRevision = "hardware_revision"
        case readerProtocol = "reader_protocol"
        case regionSet = "region_set"
        case userMustSetRegion = "user_must_set_region"
        case maxPowerDBm = "max_power_dbm"
        case hasBattery = "has_battery"
        case batteryCapacityMinutes = "battery_capacity_minutes"
        case linkBitRate = "link_bit_rate"
        case connectMs = "connect_ms"
        case retries, timeouts
        case packetsSent = "packets_sent"
        case packetsReceived = "packets_received"
        case bytesSent = "bytes_sent"
        case bytesReceived = "bytes_received"
        case crcMismatches = "crc_mismatches"
        case internalCrcMismatches = "internal_crc_mismatches"
        case invalidPackets = "invalid_packets"
    }

    /// Sets the link counters from a session's packet and modem counters.
    mutating func setLinkCounters(_ session: ReaderSession) {
        let packets = session.linkStatistics
        let modem = session.link.modem.statistics
        packetsSent = packets.packetsSent
        packetsReceived = packets.responsesReceived + packets.packetsReceived
        bytesSent = modem.bytesSent
        bytesReceived = modem.bytesReceived
        retries = packets.sendRetries
        timeouts = packets.sendTimeouts
        crcMismatches = packets.crcMismatches
        internalCrcMismatches = packets.internalCRCMismatches
        invalidPackets = packets.invalidPackets
    }
}

// MARK: Link counters
//
// `info --json` reports the host's link counters from `ReaderSession.linkStatistics` (the
// vendor packet layer's counters) and the modem's byte counters, read after
// `ReaderSession.close()` so they cover the session to its end:
// - packets_sent: requests handed to the line (a request and its resends count once);
//   retries: the resends; timeouts: the tries that got no answer in time.
// - packets_received: valid responses, plus the reader's own requests (slave mode).
// - bytes_sent / bytes_received: bytes the modem put on / took off the line while connected.
// - crc_mismatches: packets whose crc8 did not match; internal_crc_mismatches: response
//   code bytes whose nibbles are not complements; invalid_packets: packets refused for
//   their form (bad length, cut off by silence).

/// `grokctl info`: connect to each Grokker at once (one thread per audio port), print what
/// each one is. Exit 1 when any of them could not be reached.
func runInfo(_ command: InfoCommand, _ context: CommandContext) throws -> ExitCode {
    let ports = context.ports
    var options = ReaderOptions()
    options.realtime = context.globals.realtime
    let localizer = context.localizer
    let reports = InfoGathering.gather(command.devices, ports: ports, options: options, localizer: localizer)

    let console = context.console
    if console.isJSON {
        for report in reports { console.json(report) }
    } else {
        let answered = reports.filter { $0.status == "ok" }
        if !answered.isEmpty {
            console.table(Table(
                headers: [.infoColumnDevice, .infoColumnSerial, .infoColumnFirmware, .infoColumnHardware,
                          .infoColumnRegion, .infoColumnLink, .infoColumnConnect].map { localizer.text($0) },
                rows: answered.map { r in
                    [r.device, r.serial ?? "", r.firmware ?? "",
                     localizer.text(.infoHardware, r.hardwareType ?? "", String(r.hardwareRevision ?? 0)),
                     r.region.map { name in RegionCatalog.find(name).map(localizer.regionName) ?? name } ?? localizer.text(.infoRegionNotSet),
                     localizer.text(.infoBitRate, formatNumber(r.linkBitRate ?? 0)),
                     localizer.text(.infoMilliseconds, String(Int((r.connectMs ?? 0).rounded())))]
                }))
        }
        for r in reports where r.status != "ok" {
            console.print(localizer.text(.infoDeviceFailed, r.device, r.localizedError ?? ""))
        }
        console.say(.infoSummary, String(answered.count), String(reports.count))
    }
    return reports.allSatisfy { $0.status == "ok" } ? .success : .failure
}

private func formatNumber(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
}

/// Runs one job per device at once, each on a thread of its own (audio ports block, and a
/// workstation drives many Grokkers), and returns the results in the order given.
enum DeviceThreads {
    static func each<Result: Sendable>(_ devices: [DeviceSpec], _ job: @escaping @Sendable (DeviceSpec) -> Result) -> [Result] {
        let results = Mutex([Result?](repeating: nil, count: devices.count))
        let group = DispatchGroup()
        for (i, spec) in devices.enumerated() {
            group.enter()
            let thread = Thread {
                let result = job(spec)
                results.withLock { $0[i] = result }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        return results.withLock { $0.compactMap { $0 } }
    }
}

enum InfoGathering {
    /// Queries every device concurrently, one thread each (audio ports block), and returns
    /// the reports in the order given.
    static func gather(_ devices: [DeviceSpec], ports: DevicePortContext, options: ReaderOptions,
                       localizer: Localizer) -> [InfoReport] {
        DeviceThreads.each(devices) { query($0, ports: ports, options: options, localizer: localizer) }
    }

    static func query(_ spec: DeviceSpec, ports: DevicePortContext, options: ReaderOptions,
                      localizer: Localizer) -> InfoReport {
        var session: ReaderSession?
        do {
            let port = try DevicePorts.open(spec, context: ports)
            let opened = try ReaderSession(port: port, options: options)
            session = opened
            let info = try opened.connect()
            // The negotiated bit rate, read while connected (close() drops the connection).
            let bitRate = Double(opened.link.sampleRate) / Double(max(1, opened.link.samplesPerBit))
            // Close before reading the counters, so they cover the session to its end.
            opened.close()
            session = nil
            var report = InfoReport(device: spec.description, status: "ok")
            report.serial = ReaderInfo.formatSerialNumber(info.serialNumber)
            report.hardwareType = info.hardwareType.vendorName
            report.hardwareModel = info.hardwareModel
            report.hardwareRevision = Int(info.hardwareRevision)
            report.firmware = info.firmwareVersion.description
            report.loader = info.loaderVersion.description
            report.readerProtocol = Int(info.readerProtocolVersion)
            report.region = info.region?.name
            report.regionSet = info.region != nil
            report.userMustSetRegion = info.userMustSetRegion
            report.maxPowerDBm = Double(info.maxPowerTenthsDBm) / 10
            report.hasBattery = info.hasBattery
            report.batteryCapacityMinutes = Int(info.batteryCapacityMinutes)
            report.linkBitRate = bitRate
            report.connectMs = opened.connectMilliseconds
            report.setLinkCounters(opened)
            return report
        } catch {
            session?.close()
            var report = InfoReport(device: spec.description, status: "error")
            if let session { report.setLinkCounters(session) }
            report.error = .init(code: Localizer.code(for: error), message: Localizer.english.message(for: error))
            report.localizedError = localizer.message(for: error)
            return report
        }
    }
}
