import GrokBasics

/// Everything that can go wrong with firmware files, channel metadata and the cache. Each
/// case names the file (or channel) and carries what a person needs to act; `code` is
/// stable for `--json` output and for the localized catalog (`error.<code>`), and
/// `arguments` are the values the localized message fills in, in order.
public enum FirmwareError: Error, Sendable, Equatable, CodedError {
    // MARK: Intel HEX

    /// Line `line` of an Intel HEX file is not a valid record: `detail` says what is wrong
    /// (no colon, not hex, wrong length, an unknown record type, data after the end record),
    /// as a code under `firmware.detail` in the catalog.
    case hexRecord(file: String, line: Int, detail: ErrorDetail)
    /// The checksum byte of line `line` is `found`, but the record's bytes need `expected`.
    case hexChecksum(file: String, line: Int, expected: UInt8, found: UInt8)
    /// Line `line` writes bytes at `address` that line `otherLine` already wrote.
    case hexOverlap(file: String, line: Int, otherLine: Int, address: UInt32)
    /// The file has no end-of-file record (`:00000001FF`): it was cut short.
    case hexMissingEnd(file: String)
    /// The data spans more than `limit` bytes: not a firmware image for this device.
    case hexTooLarge(file: String, limit: Int)

    // MARK: Firmware packages

    /// The file does not start with the package magic: it is not a grokctl firmware package.
    case packageBadMagic(file: String)
    /// The package is in format version `found`, which this build cannot read.
    case packageUnsupportedFormat(file: String, found: Int)
    /// The package ends inside `field`: `needed` bytes were needed, `available` were left.
    case packageTruncated(file: String, field: String, needed: Int, available: Int)
    /// The value of `field` is `found`, but the format allows only `expected`.
    case packageInvalidField(file: String, field: String, expected: String, found: String)
    /// `count` bytes follow the package's final hash.
    case packageTrailingBytes(file: String, count: Int)
    /// The `segment` segment's bytes have CRC-32 `found`, the header says `expected` (hex).
    case packageSegmentCRC(file: String, segment: String, expected: String, found: String)
    /// The SHA-256 over the package is `found`, its last 32 bytes say `expected`.
    case packageHashMismatch(file: String, expected: String, found: String)

    // MARK: Keys, envelopes and metadata

    /// A key file or key text cannot be used: `detail` says why.
    case invalidKey(file: String, detail: ErrorDetail)
    /// The trusted-keys file is not valid: `detail` says what is wrong.
    case trustedKeysInvalid(file: String, detail: ErrorDetail)
    /// The signed envelope is not the JSON shape `{"payload": ..., "signatures": [...]}`.
    case envelopeMalformed(file: String, detail: ErrorDetail)
    /// The metadata inside the envelope is not valid channel metadata: its `field` is wrong
    /// as `detail` says (a code under `firmware.detail`).
    case metadataMalformed(file: String, field: String, detail: ErrorDetail)
    /// A signature by trusted key `keyID` does not verify: the metadata was changed after
    /// signing, or the signature was damaged.
    case badSignature(file: String, keyID: String)
    /// None of the signatures is by a trusted key (`keyIDs` are the ones found).
    case untrustedKeys(file: String, keyIDs: [String])
    /// Only `valid` distinct trusted keys signed; the trusted-keys file requires `required`.
    case belowThreshold(file: String, valid: Int, required: Int)
    /// The metadata's `type` is `found`, not `expected`: a different kind of file.
    case typeMismatch(file: String, expected: String, found: String)
    /// The metadata is for channel `found`, but was served as channel `expected`.
    case channelMismatch(file: String, expected: String, found: String)
    /// The metadata expired at `expires` (now is `now`, both ISO 8601 UTC): the server is
    /// stale or someone is replaying old metadata (freeze).
    case metadataExpired(file: String, expires: String, now: String)
    /// The metadata is version `found`, older than version `highest` already accepted for
    /// `channel` (rollback).
    case metadataRollback(file: String, channel: String, found: UInt64, highest: UInt64)
    /// The metadata reuses version `version` of `channel` with different contents.
    case metadataVersionReused(file: String, channel: String, version: UInt64)
    /// A channel name that cannot be used as a file name.
    case invalidChannelName(name: String)
    /// The region catalogue's entry for `region` breaks a rule: its `field` should be
    /// `expected` but is `found` (a channel outside the band, power above the limit, ...).
    case regionInvalid(file: String, region: String, field: String, expected: String, found: String)

    // MARK: Images bound to metadata

    /// The image is `found` bytes; the metadata listing it says `expected`.
    case imageSizeMismatch(file: String, expected: Int, found: Int)
    /// The image's SHA-256 is `found`; the metadata listing it says `expected`.
    case imageHashMismatch(file: String, expected: String, found: String)
    /// The package header's `field` is `found`, but the metadata entry says `expected`.
    case imageHeaderMismatch(file: String, field: String, expected: String, found: String)
    /// Update `name` is not listed in the verified metadata of `channel`.
    case updateNotListed(channel: String, name: String)

    // MARK: The station's TUF client

    /// No trust root (first root.json) is installed in any of `searched` and none was given.
    case noTrustRoot(searched: String)
    /// No absolute state directory is known (no `--state`, no absolute HOME or XDG_STATE_HOME).
    case noStateDirectory

    // MARK: Cache and files

    /// There is no verified metadata for `channel` in the cache: fetch the channel first.
    case noCachedMetadata(channel: String)
    /// The image of update `name` (SHA-256 `sha256`) is not in the cache: download it first.
    case imageNotCached(name: String, sha256: String)
    /// The JSON description or input file `file` is not valid: `detail` says what is wrong
    /// (a code under `firmware.detail`; a bad `.ugif` is ``ErrorDetail/ugif(_:)``).
    case invalidInput(file: String, detail: ErrorDetail)
    /// A system call on `path` failed (`operation`; `detail` is errno's name as
    /// ``ErrorDetail/system(_:)``).
    case io(path: String, operation: String, detail: ErrorDetail)
    /// An OpenSSL or zlib call failed (`detail`, a code under `firmware.detail`).
    case crypto(detail: ErrorDetail)

    /// A stable identifier for machines and for the message catalog.
    public var code: String {
        switch self {
        case .hexRecord: "firmware_hex_record"
        case .hexChecksum: "firmware_hex_checksum"
        case .hexOverlap: "firmware_hex_overlap"
        case .hexMissingEnd: "firmware_hex_missing_end"
        case .hexTooLarge: "firmware_hex_too_large"
        case .packageBadMagic: "firmware_package_bad_magic"
        case .packageUnsupportedFormat: "firmware_package_unsupported_format"
        case .packageTruncated: "firmware_package_truncated"
        case .packageInvalidField: "firmware_package_invalid_field"
        case .packageTrailingBytes: "firmware_package_trailing_bytes"
        case .packageSegmentCRC: "firmware_package_segment_crc"
        case .packageHashMismatch: "firmware_package_hash_mismatch"
        case .invalidKey: "firmware_invalid_key"
        case .trustedKeysInvalid: "firmware_trusted_keys_invalid"
        case .envelopeMalformed: "firmware_envelope_malformed"
        case .metadataMalformed: "firmware_metadata_malformed"
        case .badSignature: "firmware_bad_signature"
        case .untrustedKeys: "firmware_untrusted_keys"
        case .belowThreshold: "firmware_below_threshold"
        case .typeMismatch: "firmware_type_mismatch"
        case .channelMismatch: "firmware_channel_mismatch"
        case .metadataExpired: "firmware_metadata_expired"
        case .metadataRollback: "firmware_metadata_rollback"
        case .metadataVersionReused: "firmware_metadata_version_reused"
        case .invalidChannelName: "firmware_invalid_channel_name"
        case .regionInvalid: "firmware_region_invalid"
        case .imageSizeMismatch: "firmware_image_size_mismatch"
        case .imageHashMismatch: "firmware_image_hash_mismatch"
        case .imageHeaderMismatch: "firmware_image_header_mismatch"
        case .updateNotListed: "firmware_update_not_listed"
        case .noTrustRoot: "firmware_no_trust_root"
        case .noStateDirectory: "firmware_no_state_directory"
        case .noCachedMetadata: "firmware_no_cached_metadata"
        case .imageNotCached: "firmware_image_not_cached"
        case .invalidInput: "firmware_invalid_input"
        case .io: "firmware_io"
        case .crypto: "firmware_crypto"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .hexRecord(let f, let line, let detail): [f, String(line)] + detail.flattened
        case .hexChecksum(let f, let line, let expected, let found): [f, String(line), Self.hex(expected), Self.hex(found)]
        case .hexOverlap(let f, let line, let other, let address): [f, String(line), String(other), Self.hex32(address)]
        case .hexMissingEnd(let f): [f]
        case .hexTooLarge(let f, let limit): [f, String(limit)]
        case .packageBadMagic(let f): [f]
        case .packageUnsupportedFormat(let f, let found): [f, String(found)]
        case .packageTruncated(let f, let field, let needed, let available): [f, field, String(needed), String(available)]
        case .packageInvalidField(let f, let field, let expected, let found): [f, field, expected, found]
        case .packageTrailingBytes(let f, let count): [f, String(count)]
        case .packageSegmentCRC(let f, let segment, let expected, let found): [f, segment, expected, found]
        case .packageHashMismatch(let f, let expected, let found): [f, expected, found]
        case .invalidKey(let f, let detail): [f] + detail.flattened
        case .trustedKeysInvalid(let f, let detail): [f] + detail.flattened
        case .envelopeMalformed(let f, let detail): [f] + detail.flattened
        case .metadataMalformed(let f, let field, let detail): [f, field] + detail.flattened
        case .badSignature(let f, let key): [f, key]
        case .untrustedKeys(let f, let keys): [f, keys.joined(separator: ", ")]
        case .belowThreshold(let f, let valid, let required): [f, String(valid), String(required)]
        case .typeMismatch(let f, let expected, let found): [f, expected, found]
        case .channelMismatch(let f, let expected, let found): [f, expected, found]
        case .metadataExpired(let f, let expires, let now): [f, expires, now]
        case .metadataRollback(let f, let channel, let found, let highest): [f, channel, String(found), String(highest)]
        case .metadataVersionReused(let f, let channel, let version): [f, channel, String(version)]
        case .invalidChannelName(let name): [name]
        case .regionInvalid(let f, let region, let field, let expected, let found): [f, region, field, expected, found]
        case .imageSizeMismatch(let f, let expected, let found): [f, String(expected), String(found)]
        case .imageHashMismatch(let f, let expected, let found): [f, expected, found]
        case .imageHeaderMismatch(let f, let field, let expected, let found): [f, field, expected, found]
        case .updateNotListed(let channel, let name): [channel, name]
        case .noTrustRoot(let searched): [searched]
        case .noStateDirectory: []
        case .noCachedMetadata(let channel): [channel]
        case .imageNotCached(let name, let sha): [name, sha]
        case .invalidInput(let f, let detail): [f] + detail.flattened
        case .io(let path, let operation, let detail): [path, operation] + detail.flattened
        case .crypto(let detail): detail.flattened
        }
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }

    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "0x" + (digits.count < 2 ? "0" + digits : digits)
    }

    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}

extension ErrorDetail {
    /// A `.ugif` the vendor's host would refuse, nested whole: `firmware.detail.ugif` shows
    /// the ``UgifError``'s own message (`{0@error}`) in the reader's language.
    public static func ugif(_ error: UgifError) -> ErrorDetail { ErrorDetail("ugif", [error.code] + error.arguments) }
}
