import Foundation
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
    var skewPPM: Double?
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
        case skewPPM = "skew_ppm"
        case retries, timeouts
        case packetsSent = "packets_sent"
        case packetsReceived = "packets_received"
        case bytesSent = "bytes_sent"
        case bytesReceived = "bytes_received"
        case crcMismatches = "crc_mismatches"
        case internalCrcMismatches = "internal_crc_mismatches"
        case invalidPackets = "invalid_packets"
    }

    /// Sets the link counters from a session's statistics.
    mutating func setLinkCounters(_ statistics: LinkStatistics) {
        packetsSent = statistics.packetsSent
        packetsReceived = statistics.packetsReceived
        bytesSent = statistics.bytesSent
        bytesReceived = statistics.bytesReceived
        retries = statistics.retries
        timeouts = statistics.timeouts
        crcMismatches = statistics.crcMismatches
        internalCrcMismatches = statistics.internalCrcMismatches
        invalidPackets = statistics.invalidPackets
    }
}

// MARK: Link counters
//
// `info --json` reports the host's link counters (packets_sent, packets_received, bytes_sent,
// bytes_received, retries, timeouts, crc_mismatches, internal_crc_mismatches,
// invalid_packets) from `LinkEngine.statistics`, read after `ReaderSession.close()` so they
// cover the session to its end. How they relate to a `--record-audio` recording of the same
// session (left: played, right: captured), as `grokctl audio decode` sees it:
// - packets_sent counts a frame when the engine starts rendering it for playback, and
//   close() renders no new frame but plays one last block (256 frames) of the one under
//   way. The recording holds everything played, so its left channel has exactly
//   packets_sent whole frames, or one fewer when a frame was still being played as the
//   port closed: then the recording ends inside that frame (its last samples are not
//   silence).
// - packets_received counts the frames the engine demodulated. The engine digests each
//   captured block on the next transfer, so the block captured by the last transfer (in
//   close()) is recorded but never demodulated: the right channel has packets_received
//   whole frames plus those that ended in that last block.

/// `grokctl info`: connect to each Grokker at once (one thread per audio port), print what
/// each one is. Exit 1 when any of them could not be reached.
func runInfo(_ command: InfoCommand, _ context: CommandContext) throws -> ExitCode {
    let ports = DevicePortContext(bench: context.bench, alsaConfig: context.globals.alsaConfig,
                                  recordAudio: context.globals.recordAudio)
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
            let opened = ReaderSession(port: port, options: options)
            session = opened
            let info = try opened.connect()
            // close() goes back to the base mode with a fresh demodulator: read these first.
            let bitRate = opened.engine.mode.bitRate
            let skew = opened.engine.statistics.skewFactor
            // Close before reading the counters, so they cover the session to its end
            // (close() renders no new frame; see "Link counters" for how they match a recording).
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
            report.skewPPM = ((skew - 1) * 1e6).rounded()
            report.setLinkCounters(opened.engine.statistics)
            return report
        } catch {
            session?.close()
            var report = InfoReport(device: spec.description, status: "error")
            if let session { report.setLinkCounters(session.engine.statistics) }
            report.error = .init(code: Localizer.code(for: error), message: Localizer.english.message(for: error))
            report.localizedError = localizer.message(for: error)
            return report
        }
    }
}
