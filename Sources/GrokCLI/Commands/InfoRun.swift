import GrokCommandLine
import GrokFleet
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
    /// The application's version; `nil` while the unit is in its loader.
    var firmware: String?
    /// GetVersion's version while the unit runs its loader (the loader's), else `nil`: an
    /// application does not report its loader's version.
    var loader: String?
    /// The unit is in its loader: an update stopped mid-way, not finished.
    var updateUnfinished: Bool?
    var readerProtocol: Int?
    var region: String?
    var regionSet: Bool?
    var userMustSetRegion: Bool?
    var maxPowerDBm: Double?
    var hasBattery: Bool?
    var batteryCapacityMinutes: Int?
    var linkBitRate: Double?
    var samplesPerBit: Int?
    var sampleRate: Int?
    /// `stored` or `autoconfig` (GrokFleet's `LinkSetup.Source`).
    var linkSetting: String?
    var linkSetupMs: Double?
    var connectMs: Double?
    // The host's link counters for this session (`--json` only; GrokFleet's `LinkCounters`).
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
        case updateUnfinished = "update_unfinished"
        case maxPowerDBm = "max_power_dbm"
        case hasBattery = "has_battery"
        case batteryCapacityMinutes = "battery_capacity_minutes"
        case linkBitRate = "link_bit_rate"
        case samplesPerBit = "samples_per_bit"
        case sampleRate = "sample_rate"
        case linkSetting = "link_setting"
        case linkSetupMs = "link_setup_ms"
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

    /// The report of one device's answer (its error in English and in `localizer`'s language).
    init(_ result: InfoJob.Result, localizer: Localizer) {
        device = result.device.description
        if let link = result.link {
            packetsSent = link.packetsSent
            packetsReceived = link.packetsReceived
            bytesSent = link.bytesSent
            bytesReceived = link.bytesReceived
            retries = link.retries
            timeouts = link.timeouts
            crcMismatches = link.crcMismatches
            internalCrcMismatches = link.internalCrcMismatches
            invalidPackets = link.invalidPackets
        }
        guard let identity = result.identity else {
            status = "error"
            if let error = result.error {
                self.error = Problem(error)
                localizedError = localizer.message(for: error)
            }
            return
        }
        status = "ok"
        let info = identity.info
        serial = ReaderInfo.formatSerialNumber(info.serialNumber)
        hardwareType = info.hardwareType.vendorName
        hardwareModel = info.hardwareModel
        hardwareRevision = Int(info.hardwareRevision)
        if identity.inLoader {
            loader = info.firmwareVersion.description
        } else {
            firmware = info.firmwareVersion.description
        }
        updateUnfinished = identity.inLoader
        readerProtocol = Int(info.readerProtocolVersion)
        region = info.region?.name
        regionSet = info.regionSet
        userMustSetRegion = info.userMustSetRegion
        maxPowerDBm = Double(info.maxPowerTenthsDBm) / 10
        hasBattery = info.hasBattery
        batteryCapacityMinutes = Int(info.batteryCapacityMinutes)
        linkBitRate = identity.linkBitRate
        samplesPerBit = identity.samplesPerBit
        sampleRate = identity.sampleRate
        linkSetting = identity.settingSource.rawValue
        linkSetupMs = identity.setupMilliseconds
        connectMs = identity.connectMilliseconds
    }
}

extension InfoReport.Problem {
    /// `error`'s stable code and English message (the `--json` form of any device's failure).
    init(_ error: any Error) {
        self.init(code: Localizer.code(for: error), message: Localizer.english.message(for: error))
    }
}

extension CommandContext {
    /// How the device commands open their Grokkers: the ports (under their locks) and
    /// `--realtime`.
    var deviceAccess: DeviceAccess {
        var options = ReaderOptions()
        options.realtime = globals.realtime
        return DeviceAccess(ports: ports, readerOptions: options)
    }
}

/// `grokctl info`: connect to each Grokker at once (one thread per audio port), print what
/// each one is. Exit 1 when any of them could not be reached.
func runInfo(_ command: InfoCommand, _ context: CommandContext) throws -> ExitCode {
    let localizer = context.localizer
    let reports = InfoJob(access: context.deviceAccess).run(command.devices).map { InfoReport($0, localizer: localizer) }

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
                    [r.device, r.serial ?? "",
                     r.updateUnfinished == true ? localizer.text(.infoInLoader, r.loader ?? "?") : r.firmware ?? "",
                     localizer.text(.infoHardware, r.hardwareType ?? "", String(r.hardwareRevision ?? 0)),
                     r.region.map { name in RegionCatalog.find(name).map(localizer.regionName) ?? name } ?? localizer.text(.infoRegionNotSet),
                     localizer.text(.infoLinkSetting, formatNumber(r.linkBitRate ?? 0), String(r.samplesPerBit ?? 0)),
                     localizer.text(.infoMilliseconds, String(Int((r.connectMs ?? 0).rounded())))]
                }))
        }
        for r in reports where r.status != "ok" {
            console.print(localizer.text(.infoDeviceFailed, r.device, Localizer.dropping(subject: r.device, from: r.localizedError ?? "")))
        }
        console.say(.infoSummary, String(answered.count), String(reports.count))
    }
    return reports.allSatisfy { $0.status == "ok" } ? .success : .failure
}

/// A bit rate as `info` and `devices --probe` show it: `5512.5`, `3675`.
func formatNumber(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
}
