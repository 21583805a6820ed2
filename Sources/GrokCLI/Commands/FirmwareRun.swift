import Foundation
import GrokFleet
import GrokBasics
import GrokCrypto
import GrokFirmware
import GrokNet
import GrokProtocol
import UGrokIt

/// One device's identity, or why it could not be read.
struct DeviceIdentification: Sendable {
    let spec: DeviceSpec
    let result: Result<ReaderInfo, any Error>

    var info: ReaderInfo? { try? result.get() }
}

/// Connecting to devices to learn what they run (`firmware list --device`, `check`, `flash`).
enum FirmwareDevices {
    /// Connects to every device at once (a thread each), reads its identity and hangs up.
    static func identify(_ specs: [DeviceSpec], _ context: CommandContext) -> [DeviceIdentification] {
        let ports = portContext(context)
        let options = readerOptions(context)
        return FleetRunner.each(specs) { spec in
            var session: ReaderSession?
            do {
                let opened = try ReaderSession(port: try DevicePorts.open(spec, context: ports), options: options)
                session = opened
                let info = try opened.connect()
                opened.close()
                return DeviceIdentification(spec: spec, result: .success(info))
            } catch {
                session?.close()
                return DeviceIdentification(spec: spec, result: .failure(error))
            }
        }
    }

    static func portContext(_ context: CommandContext) -> DevicePortContext {
        context.ports
    }

    static func readerOptions(_ context: CommandContext) -> ReaderOptions {
        var options = ReaderOptions()
        options.realtime = context.globals.realtime
        return options
    }
}

/// A per-device failure in `--json` form.
struct DeviceProblem: Encodable {
    let device: String
    let status = "error"
    let error: Problem

    struct Problem: Encodable {
        let code: String
        let message: String
    }

    init(device: String, error: any Error) {
        self.device = device
        self.error = Problem(code: Localizer.code(for: error), message: Localizer.english.message(for: error))
    }
}

// MARK: list

/// One update as `firmware list --json` prints it.
struct UpdateListing: Encodable {
    let channel: String
    let name: String
    let version: String
    let buildDate: String
    let size: Int
    let sha256: String
    let cached: Bool
    /// `held`, `absent` or `corrupt`.
    let cache: CacheState
    let notes: String
    let compatibility: [String: String]?

    enum CodingKeys: String, CodingKey {
        case channel, name, version, size, sha256, cached, cache, notes, compatibility
        case buildDate = "build_date"
    }
}

// MARK: check

/// One device's answer to `firmware check`; also its `--json` form.
struct CheckReport: Encodable {
    struct Update: Encodable {
        let name: String
        let version: String
        let compatibility: String
        let cached: Bool
    }
    let device: String
    let status = "ok"
    let serial: String
    let running: String
    let updateAvailable: Bool
    let update: Update?

    enum CodingKeys: String, CodingKey {
        case device, status, serial, running, update
        case updateAvailable = "update_available"
    }
}

// MARK: download

/// One image `firmware download` made sure of; its `--json` form.
struct DownloadReport: Encodable {
    let event = "download_done"
    let channel: String
    let name: String
    let version: String
    let size: Int
    let sha256: String
    let alreadyCached: Bool
    let path: String

    enum CodingKeys: String, CodingKey {
        case event, channel, name, version, size, sha256, path
        case alreadyCached = "already_cached"
    }
}


// MARK: verify

/// A `.ugif` image's facts, as `firmware verify` prints them; also their `--json` form.
struct UgifFileFacts: Encodable, Sendable {
    struct Section: Encodable, Sendable {
        let kind: String
        let address: String
        let length: Int
        let crc32: String
    }
    /// The file as given (`-`: standard input), as `--json` reports it.
    let file: String
    /// The file as a person reads it (standard input by its name in the reader's language).
    let shownAs: String
    let size: Int
    let sha256: String
    let version: String
    let hardwareName: String
    let date: String
    let sections: [Section]

    enum CodingKeys: String, CodingKey {
        case file, size, sha256, version, date, sections
        case hardwareName = "hardware_name"
    }

    init(file: String, shownAs: String? = nil, bytes: [UInt8], image: UgifImage) {
        self.file = file
        self.shownAs = shownAs ?? file
        size = bytes.count
        sha256 = SHA256.hash(bytes).hex
        version = image.version.description
        hardwareName = image.hardwareTypeName
        date = image.date
        var sections: [Section] = []
        for (kind, section) in [("loader", image.loader), ("reader", Optional(image.reader))] {
            guard let section else { continue }
            sections.append(Section(kind: kind, address: FirmwareText.hex32(UInt32(section.address)), length: section.bytes.count,
                                    crc32: FirmwareText.hex32(section.crc32)))
        }
        self.sections = sections
    }

    /// The facts as labelled lines in `localizer`'s language.
    func lines(_ localizer: Localizer, revisions: [UInt8]?) -> [String] {
        var lines = [
            localizer.text(.packageFactFile, shownAs),
            localizer.text(.packageFactSize, String(size)),
            localizer.text(.packageFactSHA256, sha256),
            localizer.text(.packageFactVersion, version),
            localizer.text(.packageFactHardware, hardwareName, revisions.map { $0.map(String.init).joined(separator: ", ") } ?? "-"),
            localizer.text(.packageFactBuildDate, date),
        ]
        for section in sections {
            lines.append(localizer.text(.packageFactSegment, section.kind, section.address, String(section.length), section.crc32))
        }
        return lines
    }
}

/// The `.ugif` image in `bytes`, parsed as the vendor's host parses it; a file's name must
/// agree with its header, an image on standard input has no name to check (with `--name`,
/// the channel's listing checks the target's name). Errors name the input as `name`.
///
/// - Throws: ``FirmwareError/invalidInput(file:detail:)`` (exit 1, as for any bad file).
func parseUgif(_ bytes: [UInt8], input: InputFile, name: String) throws -> UgifImage {
    // `firmware verify` and `firmware flash --package` alike: bytes that are not UTF-8 fail the parse.
    let text = String(decoding: bytes, as: UTF8.self)
    do throws(UgifError) {
        switch input {
        case .path(let path): return try UgifImage.parse(text, fileName: (path as NSString).lastPathComponent)
        case .standardInput: return try UgifImage.parseUnnamed(text)
        }
    } catch {
        throw FirmwareError.invalidInput(file: name, detail: .ugif(error))
    }
}

/// `firmware verify --json`: the image's facts and where the channel lists it.
struct VerifyReport: Encodable {
    let status = "ok"
    let image: UgifFileFacts
    let channel: String?
    let listedAs: String?
    let targetsVersion: UInt64?

    enum CodingKeys: String, CodingKey {
        case status, image, channel
        case listedAs = "listed_as"
        case targetsVersion = "targets_version"
    }
}

/// `grokctl firmware verify [FILE.ugif] [--name NAME] [--repository URL]`: parses a local
/// `.ugif` as the vendor's host does and prints its facts; with `--repository`, says whether
/// the channel lists it (by its SHA-256) and, with `--name`, checks it against that
/// target's signed length, hash and description. `--name` alone verifies the channel's
/// target through TUF (downloading it into the state directory when needed).
func runFirmwareVerify(_ command: FirmwareVerifyCommand, _ context: CommandContext) throws -> ExitCode {
    let console = context.console
    let localizer = context.localizer
    let channel = try command.firmware.openStationIfGiven()
    if command.updateName != nil, channel == nil {
        throw CLIError.missingOption(option: FirmwareOptions.repository.spelling)
    }
    var listedAs: String?
    var targetsVersion: UInt64?
    var revisions: [UInt8]?
    let facts: UgifFileFacts
    if let input = command.packageFile {
        // Read once, at its size and at most a .ugif's limit, then parsed from memory: a file
        // or standard input alike.
        let name = input.name(localizer)
        let bytes = try input.readAll(limit: UgifImage.maxFileBytes, localizer: localizer)
        let image = try parseUgif(bytes, input: input, name: name)
        facts = UgifFileFacts(file: input.argument, shownAs: name, bytes: bytes, image: image)
        if let channel {
            let name = channel.name
            let update = try Blocking.run { try await channel.repository.update(channels: [name]) }
            targetsVersion = update.versions[name] ?? update.versions["targets"]
            let listings = update.updates[name] ?? []
            let sha256 = SHA256.hash(bytes)
            if let wanted = command.updateName {
                guard let listing = listings.first(where: { $0.name == wanted || $0.path == wanted }) else {
                    throw FirmwareError.updateNotListed(channel: name, name: wanted)
                }
                // Length, hash and the description's hardware and version, as a station checks a download.
                let release = try FirmwareRelease(listing: listing, bytes: bytes)
                listedAs = listing.name
                revisions = release.hardwareRevisions
            } else if let listing = listings.first(where: { $0.sha256 == sha256 && $0.length == bytes.count }) {
                let release = try FirmwareRelease(listing: listing, bytes: bytes)
                listedAs = listing.name
                revisions = release.hardwareRevisions
            }
        }
    } else {
        let channel = channel!
        let name = command.updateName!
        let release = try Blocking.run { try await channel.target(named: name) }
        listedAs = (release.path as NSString).lastPathComponent
        revisions = release.hardwareRevisions
        facts = UgifFileFacts(file: channel.repository.stateDirectory + "/images/" + release.sha256.hex, bytes: release.bytes,
                              image: release.ugif)
    }
    if console.isJSON {
        console.json(VerifyReport(image: facts, channel: channel?.name, listedAs: listedAs, targetsVersion: targetsVersion))
    } else {
        console.print(localizer.text(.verifyOK, facts.shownAs))
        for line in facts.lines(localizer, revisions: revisions) { console.print("  " + line) }
        if let channel {
            if let listedAs {
                console.print(localizer.text(.verifyListed, listedAs, channel.name, targetsVersion.map(String.init) ?? "-"))
            } else {
                console.print(localizer.text(.verifyNotListed, channel.name))
            }
        }
    }
    return .success
}

// MARK: Through the TUF repository (--repository)

/// Whether the verified image of `listing` is already in the station's state directory.
private func isHeld(_ listing: FirmwareListing, _ channel: FirmwareChannel) -> Bool {
    cacheState(listing, channel) == .held
}

/// What the station's cache holds of a listing's image: the image (its length and SHA-256
/// as the signed listing says), nothing, or a corrupt file (it would fail at the firmware
/// step: `firmware download` fetches it again).
enum CacheState: String, Encodable {
    case held, absent, corrupt
}

func cacheState(_ listing: FirmwareListing, _ channel: FirmwareChannel) -> CacheState {
    let path = channel.repository.stateDirectory + "/images/" + listing.sha256.hex
    guard FileManager.default.fileExists(atPath: path) else { return .absent }
    guard let data = FileManager.default.contents(atPath: path), data.count == listing.length,
          SHA256.hash(Array(data)) == listing.sha256 else { return .corrupt }
    return .held
}

/// `grokctl firmware list --repository URL`: refreshes the trusted metadata (TUF) and lists
/// the channel's `.ugif` targets, with each device's compatibility when devices are given.
func runFirmwareList(_ command: FirmwareListCommand, _ context: CommandContext) throws -> ExitCode {
    let channel = try command.firmware.openStation()
    let name = channel.name
    let update = try Blocking.run { try await channel.repository.update(channels: [name]) }
    let listings = (update.updates[name] ?? []).sorted { ($0.metadata.version, $0.path) > ($1.metadata.version, $1.path) }
    let identities = FirmwareDevices.identify(command.devices, context)
    let reachable = identities.compactMap { id in id.info.map { (id.spec, $0) } }
    let compatibility = reachable.map { _, info in listings.map { $0.compatibility(with: DeviceIdentity(info)) } }
    let language = context.localizer.language.rawValue
    let console = context.console
    let localizer = context.localizer
    func notes(_ listing: FirmwareListing) -> String { listing.metadata.notes[language] ?? listing.metadata.notes["en"] ?? "" }
    if console.isJSON {
        for (i, listing) in listings.enumerated() {
            var perDevice: [String: String]?
            if !command.devices.isEmpty {
                perDevice = [:]
                for (d, (spec, _)) in reachable.enumerated() { perDevice?[spec.description] = compatibility[d][i].vendorName }
            }
            console.json(UpdateListing(
                channel: name, name: listing.name, version: listing.metadata.version.description,
                buildDate: FirmwareText.timestamp(listing.metadata.buildDate), size: listing.length, sha256: listing.sha256.hex,
                cached: isHeld(listing, channel), cache: cacheState(listing, channel), notes: notes(listing),
                compatibility: perDevice))
        }
        for id in identities { if case .failure(let error) = id.result { console.json(DeviceProblem(device: id.spec.description, error: error)) } }
    } else {
        console.say(.listHeadingTUF, name, channel.repository.metadataURL.replacingOccurrences(of: "/metadata", with: ""),
                    String(update.versions["timestamp"] ?? 0))
        var headers = [MessageKey.listColumnName, .listColumnVersion, .listColumnDate, .listColumnSize, .listColumnCached]
            .map { localizer.text($0) }
        headers += reachable.map { $0.0.description }
        headers.append(localizer.text(.listColumnNotes))
        let rows = listings.enumerated().map { i, listing in
            [listing.name, listing.metadata.version.description, FirmwareText.day(listing.metadata.buildDate), String(listing.length),
             localizer.text([CacheState.held: MessageKey.listCachedYes, .absent: .listCachedNo, .corrupt: .listCachedCorrupt][cacheState(listing, channel)]!)]
                + compatibility.map { $0[i].vendorName }
                + [notes(listing)]
        }
        if rows.isEmpty { console.say(.listEmpty, name) } else { console.table(Table(headers: headers, rows: rows)) }
        for id in identities {
            if case .failure(let error) = id.result {
                console.print(localizer.text(.infoDeviceFailed, id.spec.description, localizer.message(for: error)))
            }
        }
    }
    return reachable.count == identities.count ? .success : .failure
}

/// `grokctl firmware download --repository URL [--name NAME | --all]`: each image through
/// TUF (length and SHA-256 as signed), parsed as a `.ugif` and checked against its
/// description, into the state directory's `images/SHA256`.
func runFirmwareDownload(_ command: FirmwareDownloadCommand, _ context: CommandContext) throws -> ExitCode {
    let channel = try command.firmware.openStation()
    let name = channel.name
    let listings = try Blocking.run { try await channel.listings() }
    var wanted = listings
    if let updateName = command.updateName {
        wanted = listings.filter { $0.name == updateName || $0.path == updateName }
        if wanted.isEmpty { throw FirmwareError.updateNotListed(channel: name, name: updateName) }
    }
    let console = context.console
    let localizer = context.localizer
    if wanted.isEmpty { console.say(.listEmpty, name) }
    for listing in wanted {
        let held = isHeld(listing, channel)
        let target = listing.path
        let release = try Blocking.run { try await channel.target(named: target) }
        let done = DownloadReport(channel: name, name: listing.name, version: release.version.description, size: release.length,
                                  sha256: release.sha256.hex, alreadyCached: held,
                                  path: channel.repository.stateDirectory + "/images/" + release.sha256.hex)
        if console.isJSON {
            console.json(done)
        } else {
            console.print(localizer.text(held ? .downloadAlreadyCached : .downloadDone, listing.name, release.version.description,
                                         String(release.length)))
        }
    }
    return .success
}

/// `grokctl firmware check --repository URL`: refreshes through TUF (before any device), then
/// per device what runs and the newest listing it may take. Exit 0 when no device has an update, 100 when at least one has, 1 when a device could not be checked.
func runFirmwareCheck(_ command: FirmwareCheckCommand, _ context: CommandContext) throws -> ExitCode {
    let channel = try command.firmware.openStation()
    let listings = try Blocking.run { try await channel.listings() }
    let identities = FirmwareDevices.identify(command.devices, context)
    let console = context.console
    let localizer = context.localizer
    var failed = false
    var available = false
    for id in identities {
        switch id.result {
        case .failure(let error):
            failed = true
            if console.isJSON {
                console.json(DeviceProblem(device: id.spec.description, error: error))
            } else {
                console.print(localizer.text(.infoDeviceFailed, id.spec.description, localizer.message(for: error)))
            }
        case .success(let info):
            let device = DeviceIdentity(info)
            let best = listings.first { $0.compatibility(with: device).mayApply(allowDowngrade: false, allowSameVersion: false) }
            available = available || best != nil
            let report = CheckReport(
                device: id.spec.description, serial: ReaderInfo.formatSerialNumber(info.serialNumber),
                running: info.firmwareVersion.description, updateAvailable: best != nil,
                update: best.map {
                    .init(name: $0.name, version: $0.metadata.version.description,
                          compatibility: $0.compatibility(with: device).vendorName, cached: isHeld($0, channel))
                })
            if console.isJSON {
                console.json(report)
            } else if let update = report.update {
                console.print(localizer.text(.checkUpdate, report.device, report.running, update.name, update.version,
                                             update.compatibility))
            } else {
                console.print(localizer.text(.checkUpToDate, report.device, report.running, channel.name))
            }
        }
    }
    if failed { return .failure }
    return available ? FirmwareCheckCommand.updateAvailable : .success
}
