@testable import GrokCLI
@testable import GrokCommandLine
import GrokAudio
import GrokkerEmulator
import GrokLink
import Testing
@testable import UGrokIt
import GrokCrypto
import GrokFirmware
import GrokNet
import GrokProtocol
import GrokFleet
import GrokLedger
import GrokTUF
import GrokBasics

/// Every library error a command can surface has a catalog key in all four languages, with
/// exactly the placeholders its arguments fill.
@Suite("Library error messages")
struct LibraryErrorTests {
    static func check(_ samples: [any CodedError]) {
        for sample in samples {
            let key = MessageKey(errorCode: sample.code)
            #expect(key != nil, "no catalog key error.\(sample.code)")
            guard let key else { continue }
            // Every argument is used: by its own placeholder, or by one that takes the rest
            // (`{n:key}` and `{n@prefix}` pass arguments n... on to a nested message).
            let placeholders = Catalogs.placeholders(in: Localizer.english.text(key))
            #expect(placeholders.allSatisfy { $0 < sample.arguments.count }, "\(sample.code)")
            #expect(placeholders == Set(0..<sample.arguments.count) || Localizer.english.text(key).contains(where: { ":@".contains($0) }),
                    "\(sample.code)")
            for language in Language.allCases {
                let localizer = Localizer(language: language)
                let message = localizer.message(for: sample)
                // Codes (`missing_tags`, `region`, `reader_timeout`) are shown through their own entries.
                for argument in sample.arguments where !argument.isEmpty && !argument.allSatisfy({ $0.isLowercase || "_,".contains($0) }) {
                    // Decimal numbers appear in the language's own form (12,5 in de/es/fr).
                    #expect(message.contains(localizer.localizedNumber(argument)), "\(language) \(sample.code)")
                }
                #expect(!message.contains("{"), "\(language) \(sample.code): \(message)")
            }
        }
    }

    @Test func readerErrors() {
        let samples: [ReaderError] = [
            .notPluggedIn(port: "sim:1"), .cannotHandshake(port: "sim:1", seconds: 3), .cannotGetInfo(port: "sim:1"),
            .incompatibleReader(port: "sim:1", detail: ErrorDetail("protocol_too_old", ["10", "11"])), .timeout(port: "sim:1", command: "identify", seconds: 5, recovery: ErrorDetail("reset_failed")),
            .lostConnection(port: "sim:1"), .rejected(port: "sim:1", command: "identify", status: "busy"),
            .audio(.closed(port: "sim:1")), .notSupported(port: "sim:1", feature: "kill"), .malformedResponse(port: "sim:1", detail: ErrorDetail("unexpected_answer", ["GetConfiguration"])), .unknownRegion("mars"), .regionNotSet(port: "sim:4"),
            .firmwareDoesNotSupportSetRegion(port: "sim:4", firmware: "1.4.2"), .regionNotApproved(port: "sim:4", region: "China"), .noInventoryRunning(port: "sim:4"), .inventoryRunning(port: "sim:4"),
            .oddTagMemoryBytes(field: "offset", value: 3), .invalidArgument(field: "volume", value: "1.5", allowed: "0 to 1"),
            .authenticationRequired(port: "sim:2"),
            .timeout(port: "sim:1", command: "GetBatteryLevel", seconds: 20, recovery: ErrorDetail("reset_unanswered")),
            .timeout(port: "sim:1", command: "GetBatteryLevel", seconds: 20, recovery: ErrorDetail("resets_used_up")),
            .timeout(port: "sim:1", command: "stop inventory", seconds: 5, recovery: ErrorDetail("no_reset")),
            .outcomeUnknown(port: "sim:1", command: "GetDiagnostics"), .notOpen(port: "sim:1"),
            .regionNotForHardware(port: "sim:4", region: "FCC (US), IC (Canada)", allocations: "902.75-927.25 MHz"),
            .listenBeforeTalkNotAllowed(port: "sim:4", region: "Japan (unlicensed)", on: false, rule: "ARIB STD-T107"),
            .listenBeforeTalkNotAllowed(port: "sim:4", region: "Japan (unlicensed)", on: true, rule: "ARIB STD-T107"),
            .levelTooLow(port: "alsa:pulse", shortfall: LevelShortfall(control: "Master", side: "playback", percent: 5, muted: false, loudestInputDBFS: "-inf")),
            .levelTooLow(port: "alsa:pulse", shortfall: LevelShortfall(control: "Master", side: "playback", percent: 80, muted: true, loudestInputDBFS: "-inf")),
            .levelTooLow(port: "alsa:hw:1,0", shortfall: LevelShortfall(control: "Mic", side: "capture", percent: 12, muted: false, loudestInputDBFS: "-61")),
            .levelTooLow(port: "alsa:hw:1,0", shortfall: LevelShortfall(control: "Mic", side: "capture", percent: nil, muted: true, loudestInputDBFS: "-90")),
        ]
        // Exhaustive: a new case fails to compile here until it gets a sample and keys.
        for sample in samples {
            switch sample {
            case .notPluggedIn, .cannotHandshake, .cannotGetInfo, .incompatibleReader, .timeout, .lostConnection,
                .rejected, .audio, .notSupported, .malformedResponse, .unknownRegion, .regionNotSet, .firmwareDoesNotSupportSetRegion, .regionNotApproved, .noInventoryRunning, .inventoryRunning, .oddTagMemoryBytes, .invalidArgument,
                .authenticationRequired, .levelTooLow, .outcomeUnknown, .notOpen, .regionNotForHardware, .listenBeforeTalkNotAllowed: break
            }
        }
        Self.check(samples)
        #expect(Localizer(language: .es).message(for: ReaderError.cannotHandshake(port: "alsa:hw:1,0", seconds: 3))
            .hasPrefix("Ningún Grokker respondió en alsa:hw:1,0"))
    }

    @Test func emulatorErrors() {
        let samples: [EmulatorError] = [
            .directory(path: "/b/sim-0", detail: ErrorDetail("mkdir_failed", ["EACCES"])),
            .stateUnreadable(path: "/b/sim-0/state.json", detail: ErrorDetail("vanished")),
            .stateCorrupt(path: "/b/sim-0/state.json", detail: ErrorDetail("not_json")),
            .stateTooNew(path: "/b/sim-0/state.json", format: 9, supported: 1),
            .stateWriteFailed(path: "/b/sim-0/state.json", detail: ErrorDetail("power_cut")),
            .scene(path: "/b/sim-0/scene.json", detail: "tags[3].epc: expected hex"),
            .flash(path: "/b/sim-0/flash.bin", detail: ErrorDetail("flash_write_failed")),
        ]
        for sample in samples {
            switch sample {
            case .directory, .stateUnreadable, .stateCorrupt, .stateTooNew, .stateWriteFailed, .scene, .flash: break
            }
        }
        Self.check(samples)
    }

    @Test func firmwareErrors() {
        let f = "pkg.ugif"
        let samples: [FirmwareError] = [
            .hexRecord(file: "a.hex", line: 3, detail: ErrorDetail("byte_count_mismatch", ["3", "1"])), .hexChecksum(file: "a.hex", line: 4, expected: 0x12, found: 0x13),
            .hexOverlap(file: "a.hex", line: 9, otherLine: 2, address: 0x0800_8000), .hexMissingEnd(file: "a.hex"),
            .hexTooLarge(file: "a.hex", limit: 16_777_216), .packageBadMagic(file: f), .packageUnsupportedFormat(file: f, found: 9),
            .packageTruncated(file: f, field: "segment table", needed: 13, available: 2),
            .packageInvalidField(file: f, field: "hardware type", expected: "5", found: "0"), .packageTrailingBytes(file: f, count: 7),
            .packageSegmentCRC(file: f, segment: "application", expected: "0x1", found: "0x2"),
            .packageHashMismatch(file: f, expected: "aa", found: "bb"), .invalidKey(file: "k.pem", detail: ErrorDetail("unreadable")),
            .trustedKeysInvalid(file: "keys.json", detail: ErrorDetail("not_json")), .envelopeMalformed(file: "c.json", detail: ErrorDetail("not_json")),
            .metadataMalformed(file: "c.json", field: "updates[0].size", detail: ErrorDetail("wrong_type", ["number"])),
            .metadataMalformed(file: "c.json", field: "regions[2].number", detail: ErrorDetail("region_twice", ["7"])),
            .metadataMalformed(file: "c.json", field: "build_date", detail: ErrorDetail("not_utc_time", ["yesterday"])),
            .badSignature(file: "c.json", keyID: "abcd"), .untrustedKeys(file: "c.json", keyIDs: ["ef01"]),
            .belowThreshold(file: "c.json", valid: 1, required: 2), .typeMismatch(file: "c.json", expected: "x", found: "y"),
            .channelMismatch(file: "c.json", expected: "release", found: "development"),
            .metadataExpired(file: "c.json", expires: "2020-01-01T00:00:00Z", now: "2025-01-01T00:00:00Z"),
            .metadataRollback(file: "c.json", channel: "release", found: 3, highest: 7),
            .metadataVersionReused(file: "c.json", channel: "release", version: 7), .invalidChannelName(name: "Rel"),
            .imageSizeMismatch(file: f, expected: 10, found: 11), .imageHashMismatch(file: f, expected: "aa", found: "bb"),
            .imageHeaderMismatch(file: f, field: "version", expected: "1.8.0", found: "1.9.0"),
            .updateNotListed(channel: "release", name: "x"), .noCachedMetadata(channel: "release"),
            .noTrustRoot(searched: "/etc/grokctl/root.json"), .noStateDirectory,
            .imageNotCached(name: "x", sha256: "aa"), .invalidInput(file: "d.json", detail: ErrorDetail("range_backwards", ["2.0.0", "1.0.0"])),
            .invalidInput(file: "x.ugif", detail: .ugif(.badHex(line: 9, detail: ErrorDetail("odd_hex_digits")))),
            .io(path: "/c", operation: "rename", detail: ErrorDetail("system", ["EXDEV"])), .crypto(detail: ErrorDetail("system", ["ENOMEM"])),
            .regionInvalid(file: "regions.json", region: "fcc", field: "max_power_dbm", expected: "at most 36", found: "40"),
        ]
        for sample in samples {
            switch sample {
            case .hexRecord, .hexChecksum, .hexOverlap, .hexMissingEnd, .hexTooLarge, .packageBadMagic, .packageUnsupportedFormat,
                .packageTruncated, .packageInvalidField, .packageTrailingBytes, .packageSegmentCRC, .packageHashMismatch,
                .invalidKey, .trustedKeysInvalid, .envelopeMalformed, .metadataMalformed, .badSignature, .untrustedKeys,
                .belowThreshold, .typeMismatch, .channelMismatch, .metadataExpired, .metadataRollback, .metadataVersionReused,
                .invalidChannelName, .imageSizeMismatch, .imageHashMismatch, .imageHeaderMismatch, .updateNotListed,
                .noCachedMetadata, .imageNotCached, .invalidInput, .io, .crypto, .regionInvalid, .noTrustRoot, .noStateDirectory: break
            }
        }
        Self.check(samples)
    }

    @Test("every .ugif refusal has its message, with its detail code's words, in all four languages")
    func ugifErrors() {
        let samples: [UgifError] = [
            .fileTooLarge(bytes: 300_000, limit: 262_144), .badFileName(name: "x.bin", detail: ErrorDetail("no_ugif_suffix")),
            .badFileName(name: "GR-1_demo.ugif", detail: ErrorDetail("bad_name_shape")),
            .badFileName(name: "GR-1_1-x-0_demo.ugif", detail: ErrorDetail("bad_name_version")),
            .lineTooLong(line: 3, length: 300, limit: 256), .unexpectedLine(line: 2, detail: ErrorDetail("carriage_return")),
            .unexpectedLine(line: 2, detail: ErrorDetail("blank_line")), .unexpectedLine(line: 9, detail: ErrorDetail("loader_after_reader")),
            .unexpectedLine(line: 4, detail: ErrorDetail("not_header_or_section")),
            .unexpectedLine(line: 7, detail: ErrorDetail("bad_section_start")),
            .invalidHeader(line: 4, key: "SOFTWARE_COLOUR", detail: ErrorDetail("unknown_key")),
            .invalidHeader(line: 5, key: "SOFTWARE_VERSION_BUILD", detail: ErrorDetail("given_twice")),
            .invalidHeader(line: 4, key: "SOFTWARE_VERSION_BUILD", detail: ErrorDetail("not_a_byte")),
            .invalidHeader(line: 6, key: "SOFTWARE_VERSION_DATE", detail: ErrorDetail("date_too_long", ["232"])),
            .invalidHeader(line: 1, key: "READER_HARDWARE_TYPE", detail: ErrorDetail("bad_hardware_name")),
            .missingHeader(key: "SOFTWARE_VERSION_DATE"),
            .nameMismatch(fileName: "GR-1_1-9-0_x.ugif", field: "hardware_type", inName: "GR-1", inFile: "GR-2"),
            .nameMismatch(fileName: "GR-1_1-9-0_x.ugif", field: "version", inName: "1.9.0", inFile: "1.8.0"),
            .badHex(line: 9, detail: ErrorDetail("odd_hex_digits")), .badHex(line: 9, detail: ErrorDetail("not_hex_digit")),
            .sectionLength(section: "READER", line: 8, declared: 100, found: 98),
            .sectionTooLarge(section: "READER", line: 8, length: 70_000, limit: 65_535), .duplicateSection(section: "READER", line: 12),
            .missingSection(section: "READER"), .emptyImage(section: "LOADER"), .addressOutOfRange(section: "READER", address: 0xFFF0, base: 0),
            .sectionsOverlap(loader: 0x7000, reader: 0x7800),
            .innerVersionMismatch(section: "READER", inImage: "1.8.0", inHeader: "1.9.0"),
        ]
        Self.check(samples)
        Self.check(samples.map { FirmwareError.invalidInput(file: "x.ugif", detail: .ugif($0)) })
    }

    @Test func netErrors() {
        let u = "https://fw.example/release/channel.json"
        let samples: [NetError] = [
            .invalidURL(url: "ftp://x", detail: ErrorDetail("unsupported_scheme")), .resolveFailed(url: u, detail: ErrorDetail("host_not_found")),
            .connectFailed(url: u, detail: ErrorDetail("connect_timeout", ["15"])),
            .connectFailed(url: u, detail: ErrorDetail("connect_failed_errno", ["EACCES"])),
            .untrustedServer(url: u, caBundle: "ca.pem", detail: ErrorDetail("self_signed")),
            .untrustedServer(url: u, caBundle: nil, detail: ErrorDetail("certificate_rejected", ["7"])),
            .tls(url: u, detail: ErrorDetail("handshake_failed", ["wrong version number"])),
            .stalled(url: u, received: 100, limit: 1024, seconds: 30),
            .connectionLost(url: u, received: 5000, detail: ErrorDetail("connection_reset")), .httpStatus(url: u, status: 500),
            .tooManyRedirects(url: u, limit: 5), .sizeCapExceeded(url: u, cap: 100, size: 200, announced: true),
            .longerThanExpected(url: u, expected: 100, size: 150, announced: false), .truncated(url: u, received: 10, expected: 20),
            .badRange(url: u, detail: ErrorDetail("wrong_range_start", ["5", "9"])), .rangeNotSatisfiable(url: u, offset: 42),
            .cancelled(url: u, received: 3), .file(path: "/tmp/x.partial", detail: ErrorDetail("system_call_failed", ["ftruncate", "ENOSPC"])),
            .transfer(url: u, curlCode: 56, detail: ErrorDetail("option_refused", ["CURLOPT_URL"])),
            .deadline(url: u, seconds: 900),
        ]
        for sample in samples {
            switch sample {
            case .invalidURL, .resolveFailed, .connectFailed, .untrustedServer, .tls, .stalled, .connectionLost, .httpStatus,
                .tooManyRedirects, .sizeCapExceeded, .longerThanExpected, .truncated, .badRange, .rangeNotSatisfiable,
                .cancelled, .file, .transfer, .deadline: break
            }
        }
        Self.check(samples)
    }

    @Test func tufErrors() {
        let u = "https://fw.example/metadata/timestamp.json"
        let samples: [TUFError] = [
            .json(detail: ErrorDetail("duplicate_key", ["sha256"]), offset: 120), .metadata(role: "release", detail: ErrorDetail("missing_field", ["keyval"])),
            .threshold(role: "root", valid: 1, threshold: 2), .threshold(role: "timestamp", valid: 0, threshold: 1), .expired(role: "timestamp", expires: "2026-12-02T00:00:00Z"),
            .rollback(role: "timestamp", trusted: 9, offered: 3), .versionMismatch(role: "snapshot", expected: 4, found: 3),
            .lengthOrHash(what: "release/a.ugif", detail: ErrorDetail("wrong_hash", ["sha256", "aa", "bb"])), .notFound(url: u),
            .fetch(url: u, detail: ErrorDetail("not_modified")), .tooLarge(url: u, limit: 16_384),
            .storage(path: "/var/lib/grokctl/tuf", detail: ErrorDetail("symbolic_link")), .unknownTarget(target: "release/x.ugif"),
            .workflow(detail: ErrorDetail("no_trusted_snapshot")), .publisher(detail: ErrorDetail("not_signed", ["root (1/2)"])),
            .insecureTransport(url: "http://fw.example/metadata/"),
        ]
        for sample in samples {
            switch sample {
            case .json, .metadata, .threshold, .expired, .rollback, .versionMismatch, .lengthOrHash, .notFound, .fetch, .tooLarge,
                .storage, .unknownTarget, .workflow, .publisher, .insecureTransport: break
            }
        }
        Self.check(samples)
    }

    @Test func cryptoErrors() {
        let samples: [CryptoError] = [
            .openssl(function: "EVP_DigestSign"), .zlib(function: "inflate", status: -3), .corruptStream(detail: ErrorDetail("zlib_said", ["incorrect header check"])),
            .outputLimitExceeded(limit: 65_536), .invalidKey(detail: ErrorDetail("not_pem", ["public", "Ed25519", "'openssl genpkey -algorithm ed25519'"])),
        ]
        for sample in samples {
            switch sample {
            case .openssl, .zlib, .corruptStream, .outputLimitExceeded, .invalidKey: break
            }
        }
        Self.check(samples)
    }

    @Test("every vendor firmware update result but SUCCESS has a flash message naming the device")
    func flashFailures() {
        var options = FirmwareUpdateOptions()
        options.minimumBatteryPercent = 20
        var samples: [any CodedError] = []
        for result in FirmwareUpdateResult.allCases where result != .success {
            for image in ["1.7.3", "1.6.0"] {
                samples.append(FlashFailure(device: "sim:0", result: result, detail: "detail of \(result.vendorName)", running: "1.7.3",
                                            image: image, imageHardware: "GR-1", unitHardware: "GR-2", battery: 10, options: options))
            }
        }
        let codes = Set(samples.map(\.code))
        // The flash job's refusals before any update: not for this unit, a version not listed.
        samples.append(UpdateNotForDevice(device: "sim:0", name: "GR-1_1-8-0_demo.ugif", compatibility: .incompatible))
        samples.append(FlashWrongVersion(device: "sim:0", running: "0.0.0", image: "1.8.0"))
        // A --package image nothing vouches for is refused before any device: it names the file.
        Self.check(samples + [FirmwareVersionNotListed(channel: "release", version: "1.9.0"),
                              FlashPackageUnlisted(file: "GR-1_1-8-0_demo.ugif", channel: nil),
                              FlashPackageUnlisted(file: "GR-1_1-8-0_demo.ugif", channel: "release")])
        // The same version again is no failure but "already up to date" (FlashOutcome.skipped).
        #expect(codes.count == 9, "\(codes.sorted())")
        #expect(!codes.contains("flash_same_version_not_allowed") && codes.contains("flash_downgrade_not_allowed"))
        for sample in samples { #expect(sample.arguments.first == "sim:0") }
    }

    @Test func fleetErrors() {
        let samples: [FleetError] = [
            .profileUnreadable(file: "p.json", detail: "no_such_file"), .profileNotJSON(file: "p.json", line: 3, column: 7, detail: ErrorDetail("duplicate_key", ["set"])),
            .profileInvalid(file: "p.json", keyPath: "region.set", expected: ErrorDetail("region"), found: "\"mars\""),
            .profileInvalid(file: "p.json", keyPath: "smoke_test.min_reads_per_second", expected: ErrorDetail("number_range", ["0", "100000"]),
                            found: "\"many\""),
            .profileInvalid(file: "p.json", keyPath: "region.allowed", expected: ErrorDetail("non_empty_list", ["region"]), found: "[…]"),
            .profileMissingKey(file: "p.json", keyPath: "name", expected: ErrorDetail("profile_name")),
            .profileMissingKey(file: "p.json", keyPath: "format", expected: ErrorDetail("format", ["1"])),
            .profileUnknownKey(file: "p.json", keyPath: "regoin", known: ["region", "firmware"]),
            .portUnavailable(device: "sim:0", cause: ErrorCause(code: "audio_device_busy", arguments: ["hw:1,0"])), .deviceLocked(device: "sim:0", serial: "12345678", lockFile: "/l/12345678.lock"),
            .portLocked(device: "sim:0", lockFile: "/l/port-sim-0.lock"),
            .lockFailed(path: "/l", detail: "EROFS"), .levelsNotSaved(mixer: "hw:1", path: "/s/levels/hw_1.json", detail: "EROFS"), .usbCardNotFound(path: "1-1.4", plugged: ["usb:1-1.2"]), .reader(device: "sim:0", step: "region", cause: ErrorCause(ReaderError.timeout(port: "sim:0", command: "identify", seconds: 5, recovery: ErrorDetail("reset_unanswered")))),
            .regionNotAllowed(device: "sim:0", region: "ETSI", allowed: ["FCC"]), .regionNotChosen(device: "sim:0"), .regionDeclined(device: "sim:0"),
            .regionUnsupported(device: "sim:0", firmware: "1.4.2"), .downgradeNotAllowed(device: "sim:0", running: "1.8.0", target: "1.7.3"),
            .sameVersionNotAllowed(device: "sim:0", version: "1.8.0"), .firmwareNotAvailable(device: "sim:0", channel: "release", version: "1.9.0"),
            .firmwareCache(channel: "release", cause: ErrorCause(code: "fleet_no_channel")),
            .firmwareUpdateFailed(device: "sim:0", code: "firmware_update_crc_mismatch", detail: "y"),
            .firmwareNotRunning(device: "sim:0", expected: "1.8.0", found: "1.7.3"),
            .smokeTestFailed(device: "sim:0", measurement: SmokeTestMeasurement(
                passed: false, reasons: ["missing_tags", "rssi"], reads: 123, duration: 3.013, readsPerSecond: 40.826, uniqueTags: 13,
                missingTags: ["3074257BF7194E4000001A85"], strongestRSSI: -40.5, weakestReferenceRSSI: -71.25)),
            .smokeTestFailed(device: "sim:0", measurement: .regionNotSet()),
            .verifyMismatch(device: "sim:0", difference: .firmware(expected: "1.8.0", found: "1.7.3", inLoader: false)),
            .verifyMismatch(device: "sim:0", difference: .firmware(expected: nil, found: "1.7.3", inLoader: false)),
            .verifyMismatch(device: "sim:0", difference: .firmware(expected: "1.8.0", found: "0.0.0", inLoader: true)),
            .verifyMismatch(device: "sim:0", difference: .region(expected: ["fcc"], allowedOnly: false, found: "etsi")),
            .verifyMismatch(device: "sim:0", difference: .region(expected: ["fcc"], allowedOnly: false, found: nil)),
            .verifyMismatch(device: "sim:0", difference: .region(expected: ["etsi", "fcc"], allowedOnly: true, found: "japan_licensed")),
            .verifyMismatch(device: "sim:0", difference: .region(expected: ["etsi", "fcc"], allowedOnly: true, found: nil)),
            .verifyMismatch(device: "sim:0", difference: .provisioning([
                ProvisioningChange(field: "serial_number", found: "not_registered", wanted: "registered"),
                ProvisioningChange(field: "antenna_type", found: "0", wanted: "2"),
                ProvisioningChange(field: "hardware_revision", found: "2", wanted: "3"),
                ProvisioningChange(field: "provisioning_status", found: "none", wanted: "complete")])),
            .outsideMaintenanceWindow(device: "sim:0", timeZone: "Europe/Paris"), .batteryLow(device: "sim:0", percent: 10, minimum: 30),
            .notInRollout(device: "sim:0", serial: "12345678", percentage: 25),
            .notInRollout(device: "sim:0", serial: "12345678", percentage: 12.5, source: "ledger", profilePercentage: 10),
            .halted(rollout: "fw-1.8", failed: 3, finished: 8, threshold: 0.2, trippedBy: "bench-3", stationFailures: 3),
            .stagePaused(rollout: "fw-1.8", by: "Zoë"),
            .updateDeclined(device: "sim:0", decision: "postponed"), .interrupted(device: "sim:0"),
            .readerFrozen(device: "sim:0", step: "region", seconds: "8"),
            .timedOut(device: "sim:0", step: "firmware", what: "step firmware", seconds: "1200"),
            .recorderFailed(operation: "begin_run", subject: "20250115-120000-3fa2", cause: ErrorCause(code: "ledger_disk_full", arguments: ["/l.sqlite"])),
            .ledgerOffline(database: "postgresql://grokstation:***@db/fleet", detail: "Connection refused"),
            .ledgerOfflineRollout(database: "postgresql://grokstation:***@db/fleet", detail: "Connection refused"),
            .ledgerMissing(path: "/l.sqlite"), .ledgerNoDevice(serial: "12345678", path: "/l.sqlite"),
            .noSuchRollout(ledger: "/l.sqlite", rollout: "fw-1.8"),
            .reportNotWritable(path: "/r/run.json", detail: "read-only"), .reportDirectoryMissing(path: "/r/x/run.json", directory: "/r/x"),
            .sceneLacksReferenceTags(device: "sim:0", scene: "/b/sim-0/scene.json", missing: ["3034257BF4789000000003E8"]),
            .reportNotWritten(path: "/r/run.json", detail: "ENOSPC"),
            .invalidDevice("x"), .deviceWithoutScheme(spec: "hw:1,0", suggestion: "alsa:hw:1,0"), .deviceOutOfRange(index: "64", spec: "sim:64"), .duplicateDevice("sim:1"),
            .emulatorEndsMixed(input: "alsa:pulse", output: "from-grokker"),
            .benchUnreadable(path: "/x", detail: "y"), .benchNotDirectory(path: "/x"), .noDevices(bench: "/b"),
            .deviceBusy(device: "sim:0", pid: "4242", command: "grokctl provision", lockFile: "/l/port-sim.lock"),
            .updateUnfinished(device: "sim:0"),
            .unplugged(device: "sim:1", step: "firmware"), .watchStatusUnreadable(path: "/state/watch/status.json"),
            .noRepository(profile: "p.json", channel: "release"),
            .stationSettingsUnreadable(file: "/etc/grokctl/station.json", detail: "permission_denied"),
            .stationSettingsNotJSON(file: "/s.json", line: 3, column: 7, detail: ErrorDetail("duplicate_key", ["ledger"])),
            .stationSettingsNotObject(file: "/s.json"),
            .stationSettingsUnknownKey(file: "/s.json", key: "repo", known: ["repository", "ledger"]),
            .stationSettingsInvalid(file: "/s.json", key: "trusted_root", found: "\"root.json\"", rule: "absolute_path"),
            .stationSettingsInvalid(file: "/s.json", key: "repository", found: "\"ftp://x\"", rule: "repository"),
            .stationSettingsInvalid(file: "/s.json", key: "ledger", found: "3", rule: "ledger"),
            .stationSettingsInvalid(file: "/s.json", key: "station", found: "\" x\"", rule: "station"),
            .stationSettingsInvalid(file: "/s.json", key: "trusted_root", found: "\"/r.json\"", rule: "existing_file"),
            .stationSettingsInvalid(file: "/s.json", key: "profile_directory", found: "\"/p\"", rule: "existing_directory"),
            .stationSettingsExists(file: "/s.json"), .stationSettingsNotWritten(file: "/s.json", detail: "EACCES"),
            .linkSettingsNotWritten(file: "/state/link-settings.json", detail: "EROFS"),
            .benchPortsUnreadable(path: "/b/ports.json", detail: "not_a_ports_file"),
            .benchPortsUnreadable(path: "/b/ports.json", detail: "read_error"),
            .benchPortOccupied(port: "sim:5", unit: "5"), .benchUnitPluggedElsewhere(unit: "3", port: "sim:3"),
        ]
        for sample in samples {
            switch sample {
            case .profileUnreadable, .profileNotJSON, .profileInvalid, .profileMissingKey, .profileUnknownKey, .portUnavailable,
                .deviceLocked, .portLocked, .lockFailed, .levelsNotSaved, .usbCardNotFound, .reader, .regionNotAllowed, .regionNotChosen, .regionDeclined, .regionUnsupported, .downgradeNotAllowed,
                .sameVersionNotAllowed, .firmwareNotAvailable, .firmwareCache, .firmwareUpdateFailed, .firmwareNotRunning,
                .smokeTestFailed, .verifyMismatch, .outsideMaintenanceWindow, .batteryLow, .notInRollout, .halted, .stagePaused, .updateDeclined,
                .interrupted, .updateUnfinished, .unplugged, .watchStatusUnreadable, .readerFrozen, .timedOut, .recorderFailed, .ledgerOffline, .ledgerOfflineRollout,
                .ledgerMissing, .ledgerNoDevice, .noSuchRollout, .reportNotWritable, .reportDirectoryMissing,
                .sceneLacksReferenceTags, .reportNotWritten, .invalidDevice, .deviceWithoutScheme, .deviceOutOfRange, .duplicateDevice, .emulatorEndsMixed,
                .benchUnreadable, .benchNotDirectory, .noDevices, .deviceBusy, .noRepository, .stationSettingsUnreadable,
                .stationSettingsNotJSON, .stationSettingsNotObject, .stationSettingsUnknownKey, .stationSettingsInvalid,
                .stationSettingsExists, .stationSettingsNotWritten, .linkSettingsNotWritten,
                .benchPortsUnreadable, .benchPortOccupied, .benchUnitPluggedElsewhere: break
            }
        }
        Self.check(samples)
    }

    @Test("verify's differences read whole in the user's language: region names as the region table says them, factory data in words, no English keys (issue 24 item 4)")
    func verifyDifferencesInEveryLanguage() {
        let region = FleetError.verifyMismatch(device: "sim:0", difference: .region(expected: ["fcc"], allowedOnly: false, found: "etsi"))
        #expect(region.description == "sim:0: the region is ETSI (EU), the profile expects FCC (US), IC (Canada); run provision with this profile to correct it.",
                "\(region.description)")
        let german = Localizer(language: .de).message(for: region)
        #expect(german.contains("die Funkregion ist ETSI (EU), das Profil erwartet FCC (USA), IC (Kanada);"), "\(german)")
        let factory = FleetError.verifyMismatch(device: "sim:0", difference: .provisioning([
            ProvisioningChange(field: "serial_number", found: "not_registered", wanted: "registered"),
            ProvisioningChange(field: "provisioning_status", found: "none", wanted: "complete")]))
        #expect(factory.description.contains("(unit → profile): serial number not registered → registered, provisioning status none → complete;"),
                "\(factory.description)")
        #expect(Localizer(language: .es).message(for: factory)
                    .contains("número de serie sin registrar → registrado, estado de aprovisionamiento ninguno → completo;"))
        let plan = Localizer(language: .fr).fleetMessage(code: "step_provision_needed",
                                                         arguments: ["serial_number", "not_registered", "registered", "antenna_type", "0", "2", ""])
        #expect(plan == "données d’usine à écrire : numéro de série non enregistré → enregistré, type d’antenne 0 → 2", "\(plan)")
        let loader = FleetError.verifyMismatch(device: "sim:0", difference: .firmware(expected: "1.8.0", found: "0.0.0", inLoader: true))
        for language in [Language.es, .fr, .de] {
            for error in [region, factory, loader] {
                let message = Localizer(language: language).message(for: error)
                for english in ["serial_number", "registered", "the ", "loader", "expects", "(US)", "not set", "firmware_"] {
                    #expect(!message.contains(english), "\(language): \(english) in \(message)")
                }
            }
        }
    }

    @Test("a profile's errors read whole in the user's language: what a value must be too (issue 24 item 4: 'muss smoke_test.min_reads_per_second a number from 0 to 100000 sein')")
    func profileRulesInEveryLanguage() {
        let samples: [FleetError] = [
            .profileInvalid(file: "p.json", keyPath: "smoke_test.min_reads_per_second", expected: ErrorDetail("number_range", ["0", "100000"]),
                            found: "\"viel\""),
            .profileInvalid(file: "p.json", keyPath: "region.allowed", expected: ErrorDetail("non_empty_list", ["region"]), found: "[…]"),
            .profileMissingKey(file: "p.json", keyPath: "format", expected: ErrorDetail("format", ["1"])),
            // The Grokker's cues (docs/profiles.md, `cues`; rule `cue` is left out: its key path holds the word).
            .profileInvalid(file: "p.json", keyPath: "cues.done", expected: ErrorDetail("cue_length", ["3000"]), found: "3001 ms"),
            .profileInvalid(file: "p.json", keyPath: "cues.done[0].frequency_hz", expected: ErrorDetail("tone_frequency", ["200", "8000"]),
                            found: "100"),
        ]
        for sample in samples {
            // The rule is the arguments' tail: after file, key path and found value (missing: after file and key path).
            guard case .profileInvalid = sample else { continue }
            let rule = Array(sample.arguments.dropFirst(3))
            let englishRule = Localizer(language: .en).catalog.fill("{0@profile.rule}", rule)
            #expect(!englishRule.contains(rule[0]), "no English words for \(rule[0])")
            for language in Language.allCases where language != .en {
                let message = Localizer(language: language).message(for: sample)
                #expect(!message.contains(englishRule), "\(language): \(message)")
                #expect(!message.contains("profile.rule") && !message.contains(rule[0]), "\(language): \(message)")
            }
        }
        #expect(Localizer(language: .fr).message(for: samples[2]).contains("le nombre 1 (le format de profil de cette version)"))
        let german = Localizer(language: .de).message(for: samples[0])
        #expect(german.contains("muss smoke_test.min_reads_per_second eine Zahl von 0 bis 100000 sein, ist aber \"viel\""), "\(german)")
        #expect(Localizer(language: .de).message(for: samples[1]).contains("eine nicht leere Liste, jedes Element ein Name, Code oder eine Nummer einer Region"))
    }

    @Test func ledgerErrors() {
        let p = "/var/lib/grokctl/ledger.sqlite"
        let samples: [LedgerError] = [
            .cannotOpen(path: p, detail: "denied"), .locked(path: p, waitedMilliseconds: 5000), .corrupt(path: p, damage: LedgerDamage("wal_frame", ["3", "12", "2"])),
            .empty(path: p), .notSQLite(path: p),
            .notALedger(path: p, applicationID: 42), .newerSchema(path: p, found: 9, supported: 1), .diskFull(path: p),
            .readOnly(path: p, detail: ErrorDetail("system_call", ["open", "EROFS"])), .readOnly(path: p, detail: ErrorDetail("opened_read_only")),
            .invalidRecord(path: p, detail: ErrorDetail("step_ends_before_start", ["region", "GK-7"])),
            .invalidRecord(path: p, detail: ErrorDetail("sqlite_call", ["SQLITE_CONSTRAINT_NOTNULL", "INSERT INTO devices"])), .unknownRun(path: p, run: 7),
            .runFinished(path: p, run: 7), .exportFailed(path: "/x.csv", detail: ErrorDetail("system_call", ["write", "ENOSPC"])),
            .exportFailed(path: "/x.csv", detail: ErrorDetail("mkdir_failed", ["/x", "EACCES"])),
            .sqlite(path: p, sqliteCode: 10, detail: ErrorDetail("nested_transaction", ["BEGIN IMMEDIATE"])),
            .duplicateRun(path: p, run: "20250115-120000-3fa2"), .noSuchRun(path: p, run: "20250115-120000-3fa2"),
            .server(path: "postgresql://ledger@db/fleet", state: "08006", detail: ErrorDetail("server_said", ["server closed the connection unexpectedly"])),
            .noSuchStage(path: p, rollout: "fw-1.8"), .stageNotChangeable(path: p, rollout: "fw-1.8", state: "halted", change: "advance"),
            .stageNotChangeable(path: p, rollout: "fw-1.8", state: "paused", change: "pause"),
            .stageNotChangeable(path: p, rollout: "fw-1.8", state: "active", change: "resume"),
            .stageNotUpward(path: p, rollout: "fw-1.8", percentage: 25, requested: 12.5),
            .syncNeedsShared(path: p),
            .spoolRefused(path: "/s/bench-3.sqlite", table: "steps", row: 2, run: "20250115-120000-3fa2",
                          problem: ErrorDetail("seal_mismatch", ["/s/bench-3.key"])),
            .spoolRefused(path: "/s/bench-3.sqlite", table: "steps", row: 4, run: "20250115-120000-3fa2",
                          problem: ErrorDetail("unsealed", ["/s/bench-3.key"])),
            .spoolRefused(path: "/s/bench-5.sqlite", table: "runs", row: 1, run: "20250115-120000-3fa2",
                          problem: ErrorDetail("key_new", ["/s/bench-5.key"])),
            .spoolRefused(path: "/s/bench-3.sqlite", table: "devices", row: 1, run: "20250115-120000-3fa2", problem: ErrorDetail("missing")),
            .spoolKey(path: "/s/bench-3.key", problem: ErrorDetail("not_private", ["644"])),
            .spoolKey(path: "/s/bench-3.key", problem: ErrorDetail("not_regular")),
            .spoolKey(path: "/s/bench-3.key", problem: ErrorDetail("not_owned", ["1000", "0"])),
            .spoolKey(path: "/s/bench-3.key", problem: ErrorDetail("malformed")),
            .spoolKey(path: "/s/bench-3.key", problem: ErrorDetail("system_call", ["open", "EACCES"])),
        ]
        for sample in samples {
            switch sample {
            case .cannotOpen, .locked, .corrupt, .empty, .notSQLite, .notALedger, .newerSchema, .diskFull, .readOnly, .invalidRecord, .unknownRun,
                .runFinished, .exportFailed, .sqlite, .duplicateRun, .noSuchRun, .server, .noSuchStage, .stageNotChangeable,
                .stageNotUpward, .syncNeedsShared, .spoolRefused, .spoolKey: break
            }
        }
        Self.check(samples)
    }

    @Test("a recording without a whole packet (GrokFleet's recording decoder) reads in every language")
    func decodeErrors() {
        Self.check([AudioDecodeFailure(path: "/tmp/session.wav", seconds: 1.5, damagedPackets: 2),
                    AudioDecodeFailure(path: "-", seconds: 0, damagedPackets: 0)])
    }

    @Test("why a ledger cannot be opened or reached reads in the reader's language, not as a code or libpq's English")
    func openFailuresInEveryLanguage() {
        let missing = LedgerError.cannotOpen(path: "postgresql:///grok", detail: "database_missing")
        let down = FleetError.ledgerOffline(database: "postgresql:///grok", detail: "server_not_answering")
        let spool = FleetError.ledgerOfflineRollout(database: "/var/spool/bench.sqlite", detail: "no_stages")
        let expected: [Language: [String]] = [
            .en: ["no such database", "does not answer", "keeps no rollout stages"],
            .es: ["no tiene esa base de datos", "no responde", "no guarda etapas de despliegue"],
            .fr: ["n’a pas cette base de données", "ne répond pas", "ne garde pas de paliers de déploiement"],
            .de: ["keine solche Datenbank", "antwortet nicht", "keine Rollout-Stufen"],
        ]
        for language in Language.allCases {
            let localizer = Localizer(language: language)
            let messages = [missing as any Error, down, spool].map { localizer.message(for: $0) }
            for (message, words) in zip(messages, expected[language] ?? []) {
                #expect(message.contains(words), "\(language): \(message)")
                #expect(!message.contains("_missing") && !message.contains("_answering") && !message.contains("no_stages")
                        && !message.contains("()"), "\(language): \(message)")
            }
        }
    }
}
