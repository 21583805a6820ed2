/// Every piece of text grokctl shows a person. The raw value is the key in each catalog
/// (`Localization/<language>.json`); placeholders in the text are numbered (`{0}`, `{1}`).
///
/// Library errors map their stable `code` to the key `error.<code>`
/// (``Localizer/message(for:)``); a code without a key falls back to the error's English
/// `description`. The tests prove that all four catalogs hold exactly these keys with the
/// same placeholders.
public enum MessageKey: String, CaseIterable, Sendable, Hashable {
    // MARK: Help layout
    case helpHeadingOverview = "help.heading.overview"
    case helpHeadingUsage = "help.heading.usage"
    case helpHeadingArguments = "help.heading.arguments"
    case helpHeadingOptions = "help.heading.options"
    case helpHeadingGlobalOptions = "help.heading.global_options"
    case helpHeadingSubcommands = "help.heading.subcommands"
    case helpDefault = "help.default"
    case helpSeeSubcommandHelp = "help.see_subcommand_help"
    case usageLine = "usage.line"
    case usageSeeHelp = "usage.see_help"
    case errorLine = "error.line"
    case warningLine = "warning.line"
    case errorDidYouMean = "error.did_you_mean"

    // MARK: Value names shown in usage (`--bench <dir>`)
    case valueSubcommand = "value.subcommand"
    case valueOptions = "value.options"
    case valueLanguage = "value.language"
    case valueDirectory = "value.directory"
    case valueFile = "value.file"
    case valuePath = "value.path"
    case valueDevice = "value.device"
    case valueRate = "value.rate"

    // MARK: Options and arguments
    case optionHelp = "option.help"
    case optionVersion = "option.version"
    case optionLang = "option.lang"
    case optionJSON = "option.json"
    case optionQuiet = "option.quiet"
    case optionBench = "option.bench"
    case optionRecordAudio = "option.record_audio"
    case optionRealtime = "option.realtime"
    case optionALSAConfig = "option.alsa_config"
    case optionDevice = "option.device"
    case optionState = "option.state"
    case optionInput = "option.input"
    case optionOutput = "option.output"
    case optionRate = "option.rate"
    case argumentWAVFile = "argument.wav_file"
    case argumentHelpSubcommand = "argument.help_subcommand"

    // MARK: Reader and link errors
    case errorReaderNotPluggedIn = "error.reader_not_plugged_in"
    case errorReaderCannotHandshake = "error.reader_cannot_handshake"
    case errorReaderCannotGetInfo = "error.reader_cannot_get_info"
    case errorReaderIncompatible = "error.reader_incompatible"
    case errorReaderTimeout = "error.reader_timeout"
    case errorReaderLostConnection = "error.reader_lost_connection"
    case errorReaderRejected = "error.reader_rejected"
    case errorReaderMalformedResponse = "error.reader_malformed_response"
    case errorLinkNotConnected = "error.link_not_connected"
    case errorLinkMessageTooLarge = "error.link_message_too_large"
    case errorLinkQueueFull = "error.link_queue_full"

    // MARK: grokctl region
    case commandRegionAbstract = "command.region.abstract"
    case commandRegionListAbstract = "command.region_list.abstract"
    case commandRegionSetAbstract = "command.region_set.abstract"
    case commandRegionSetDiscussion = "command.region_set.discussion"
    case valueRegion = "value.region"
    case argumentRegion = "argument.region"
    case regionColumnNumber = "region.column.number"
    case regionColumnCode = "region.column.code"
    case regionColumnName = "region.column.name"
    case regionSetDone = "region.set_done"
    case errorUsageInvalidRegion = "error.usage_invalid_region"
    case errorReaderUnknownRegion = "error.reader_unknown_region"
    case errorReaderRegionNotSet = "error.reader_region_not_set"
    case regionFcc = "region.fcc"
    case regionEtsi = "region.etsi"
    case regionTaiwanIndoor = "region.taiwan_indoor"
    case regionTaiwanOutdoor = "region.taiwan_outdoor"
    case regionChina = "region.china"
    case regionJapanUnlicensed = "region.japan_unlicensed"
    case regionJapanLicensed = "region.japan_licensed"
    case regionAustralia = "region.australia"
    case regionBrazil = "region.brazil"
    case regionHongKong = "region.hong_kong"
    case regionIndonesia = "region.indonesia"
    case regionIsrael = "region.israel"
    case regionSouthKorea = "region.south_korea"
    case regionLatvia = "region.latvia"
    case regionMalaysia = "region.malaysia"
    case regionNewZealand = "region.new_zealand"
    case regionPeru = "region.peru"
    case regionRussia = "region.russia"
    case regionSouthAfrica = "region.south_africa"
    case regionEtsiHigh = "region.etsi_high"
    case regionIndia = "region.india"
    case regionSingapore = "region.singapore"

    // MARK: grokctl info
    case infoColumnDevice = "info.column.device"
    case infoColumnSerial = "info.column.serial"
    case infoColumnFirmware = "info.column.firmware"
    case infoColumnHardware = "info.column.hardware"
    case infoColumnRegion = "info.column.region"
    case infoColumnLink = "info.column.link"
    case infoColumnConnect = "info.column.connect"
    case infoHardware = "info.hardware"
    case infoRegionNotSet = "info.region_not_set"
    case infoBitRate = "info.bit_rate"
    case infoMilliseconds = "info.milliseconds"
    case infoDeviceFailed = "info.device_failed"
    case infoSummary = "info.summary"

    // MARK: grokctl audio decode
    case decodeColumnTime = "decode.column.time"
    case decodeColumnDirection = "decode.column.direction"
    case decodeColumnBitRate = "decode.column.bit_rate"
    case decodeColumnFrame = "decode.column.frame"
    case decodeColumnStatus = "decode.column.status"
    case decodeColumnQuality = "decode.column.quality"
    case decodeDirectionHostToDevice = "decode.direction.host_to_device"
    case decodeDirectionDeviceToHost = "decode.direction.device_to_host"
    case decodeDirectionChannel = "decode.direction.channel"
    case decodeFrame = "decode.frame"
    case decodeFrameDamaged = "decode.frame_damaged"
    case decodeStatusOK = "decode.status.ok"
    case decodeStatusBadCRC = "decode.status.bad_crc"
    case decodeSummaryChannel = "decode.summary.channel"
    case decodeSummaryAudio = "decode.summary.audio"

    // MARK: grokctl emulate
    case emulateStarted = "emulate.started"
    case emulateWaiting = "emulate.waiting"
    case emulateStoppedHostClosed = "emulate.stopped.host_closed"
    case emulateStoppedSignal = "emulate.stopped.signal"
    case emulateRecordingFailed = "emulate.recording_failed"

    // MARK: Commands
    case commandRootAbstract = "command.root.abstract"
    case commandRootDiscussion = "command.root.discussion"
    case commandDevicesAbstract = "command.devices.abstract"
    case commandDevicesDiscussion = "command.devices.discussion"
    case commandInfoAbstract = "command.info.abstract"
    case commandInfoDiscussion = "command.info.discussion"
    case commandAudioAbstract = "command.audio.abstract"
    case commandAudioDecodeAbstract = "command.audio_decode.abstract"
    case commandAudioDecodeDiscussion = "command.audio_decode.discussion"
    case commandEmulateAbstract = "command.emulate.abstract"
    case commandEmulateDiscussion = "command.emulate.discussion"
    case commandHelpAbstract = "command.help.abstract"

    // MARK: devices
    case devicesColumnDevice = "devices.column.device"
    case devicesColumnKind = "devices.column.kind"
    case devicesColumnDescription = "devices.column.description"
    case devicesKindPlayback = "devices.kind.playback"
    case devicesKindCapture = "devices.kind.capture"
    case devicesKindDuplex = "devices.kind.duplex"
    case devicesKindEmulated = "devices.kind.emulated"
    case devicesNoALSA = "devices.no_alsa"
    case devicesNoBench = "devices.no_bench"
    case devicesEmulatedDescription = "devices.emulated_description"

    // MARK: Usage errors (exit 64); raw value is "error." + CLIError.code
    case errorUnknownOption = "error.usage_unknown_option"
    case errorUnknownSubcommand = "error.usage_unknown_subcommand"
    case errorMissingValue = "error.usage_missing_value"
    case errorMissingOption = "error.usage_missing_option"
    case errorMissingArgument = "error.usage_missing_argument"
    case errorUnexpectedArgument = "error.usage_unexpected_argument"
    case errorDuplicateOption = "error.usage_duplicate_option"
    case errorFlagWithValue = "error.usage_flag_with_value"
    case errorInvalidValue = "error.usage_invalid_value"
    case errorInvalidChoice = "error.usage_invalid_choice"
    case errorInvalidDevice = "error.usage_invalid_device"
    case errorDeviceOutOfRange = "error.usage_device_out_of_range"
    case errorDuplicateDevice = "error.usage_duplicate_device"

    // MARK: Failures (exit 1)
    case errorBenchUnreadable = "error.bench_unreadable"
    case errorBenchNotDirectory = "error.bench_not_directory"
    case errorDecodeNoFrames = "error.decode_no_frames"

    // MARK: GrokAudio (AudioError.code)
    case errorAudioDeviceNotFound = "error.audio_device_not_found"
    case errorAudioDeviceBusy = "error.audio_device_busy"
    case errorAudioUnsupportedFormat = "error.audio_unsupported_format"
    case errorAudioIO = "error.audio_io"
    case errorAudioClosed = "error.audio_closed"
    case errorAudioBadWAV = "error.audio_bad_wav"
    case errorAudioFile = "error.audio_file"

    // MARK: GrokkerEmulator (EmulatorError.code)
    case errorEmulatorDirectory = "error.emulator_directory"
    case errorEmulatorStateUnreadable = "error.emulator_state_unreadable"
    case errorEmulatorStateCorrupt = "error.emulator_state_corrupt"
    case errorEmulatorStateTooNew = "error.emulator_state_too_new"
    case errorEmulatorStateWriteFailed = "error.emulator_state_write_failed"

    /// The catalog key for an error's stable code, when the catalogs have one.
    public init?(errorCode code: String) {
        self.init(rawValue: "error." + code)
    }
}
