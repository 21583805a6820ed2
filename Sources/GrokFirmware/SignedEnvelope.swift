import Foundation
import GrokCrypto

/// Signed channel metadata as served: `{"payload": "<base64 of the metadata JSON bytes>",
/// "signatures": [{"keyid": "<hex>", "sig": "<base64>"}]}`. Signatures are over the exact
/// payload bytes, so no JSON canonicalisation is involved.
public struct SignedEnvelope: Sendable, Hashable {
    /// One signature.
    public struct Signature: Sendable, Hashable {
        /// The signing key's id (hex SHA-256 of its raw public key).
        public var keyID: String
        /// The 64-byte Ed25519 signature.
        public var signature: [UInt8]

        /// Creates a signature record.
        public init(keyID: String, signature: [UInt8]) {
            self.keyID = keyID
            self.signature = signature
        }
    }

    /// The most signatures one envelope may carry.
    public static let maxSignatures = 64

    /// The signed bytes (channel metadata JSON).
    public var payload: [UInt8]
    /// The signatures, in the order given.
    public var signatures: [Signature]

    /// Creates an envelope.
    public init(payload: [UInt8], signatures: [Signature] = []) {
        self.payload = payload
        self.signatures = signatures
    }

    private struct Wire: Codable {
        struct Sig: Codable {
            var keyid: String
            var sig: String
        }
        var payload: String
        var signatures: [Sig]
    }

    /// Parses an envelope: JSON shape, base64 fields, at most ``maxSignatures`` signatures
    /// and ``ChannelMetadata/maxEnvelopeSize`` bytes. Does not check signatures.
    public static func parse(_ bytes: [UInt8], file: String) throws(FirmwareError) -> SignedEnvelope {
        guard bytes.count <= ChannelMetadata.maxEnvelopeSize else {
            throw .envelopeMalformed(file: file, detail: "larger than \(ChannelMetadata.maxEnvelopeSize) bytes")
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(bytes))
        } catch {
            let (field, detail) = describe(error)
            throw .envelopeMalformed(file: file, detail: "\(field) \(detail)")
        }
        guard let payload = Data(base64Encoded: wire.payload) else {
            throw .envelopeMalformed(file: file, detail: "payload is not base64")
        }
        guard wire.signatures.count <= maxSignatures else {
            throw .envelopeMalformed(file: file, detail: "more than \(maxSignatures) signatures")
        }
        var signatures: [Signature] = []
        for (index, sig) in wire.signatures.enumerated() {
            guard let bytes = Data(base64Encoded: sig.sig) else {
                throw .envelopeMalformed(file: file, detail: "signatures[\(index)].sig is not base64")
            }
            signatures.append(Signature(keyID: sig.keyid, signature: Array(bytes)))
        }
        return SignedEnvelope(payload: Array(payload), signatures: signatures)
    }

    /// The envelope as JSON (sorted keys, one trailing newline).
    public func encoded() -> [UInt8] {
        let wire = Wire(payload: Data(payload).base64EncodedString(),
                        signatures: signatures.map { .init(keyid: $0.keyID, sig: Data($0.signature).base64EncodedString()) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try! encoder.encode(wire)) + [0x0A]
    }

    /// A copy signed by each of `keys` as well: a key's earlier signature is replaced, so k
    /// key holders can each add theirs in turn.
    public func signed(by keys: [Ed25519PrivateKey]) throws(FirmwareError) -> SignedEnvelope {
        var copy = self
        for key in keys {
            let id = key.publicKey.keyID
            let signature: [UInt8]
            do { signature = try key.signature(for: payload) } catch { throw .crypto(detail: error.description) }
            copy.signatures.removeAll { $0.keyID == id }
            copy.signatures.append(Signature(keyID: id, signature: signature))
        }
        return copy
    }
}

/// The keys a client trusts to sign channel metadata, and how many of them must sign (k of
/// n). The file (see docs/firmware-format.md):
///
/// ```json
/// {"type": "grokctl-trusted-keys", "threshold": 2,
///  "keys": [{"name": "alice", "keyid": "<optional hex>", "public_key": "-----BEGIN PUBLIC KEY-----\n..."}]}
/// ```
public struct TrustedKeys: Sendable, Hashable {
    /// One trusted key.
    public struct Key: Sendable, Hashable {
        /// A name for people (who holds the key).
        public var name: String
        /// The public key.
        public var publicKey: Ed25519PublicKey

        /// Creates a trusted key.
        public init(name: String, publicKey: Ed25519PublicKey) {
            self.name = name
            self.publicKey = publicKey
        }
    }

    /// The `type` of a trusted-keys file.
    public static let typeMarker = "grokctl-trusted-keys"

    /// The keys, by key id.
    public let keys: [String: Key]
    /// How many distinct trusted keys must sign.
    public let threshold: Int

    /// A key set; throws when a key appears twice or the threshold is not 1...n.
    public init(keys: [Key], threshold: Int, file: String = "<trusted keys>") throws(FirmwareError) {
        var byID: [String: Key] = [:]
        for key in keys {
            guard byID.updateValue(key, forKey: key.publicKey.keyID) == nil else {
                throw .trustedKeysInvalid(file: file, detail: "key \(key.publicKey.keyID) is listed twice")
            }
        }
        guard threshold >= 1, threshold <= byID.count else {
            throw .trustedKeysInvalid(file: file, detail: "threshold \(threshold) must be between 1 and the number of keys (\(byID.count))")
        }
        self.keys = byID
        self.threshold = threshold
    }

    private struct Wire: Codable {
        struct Entry: Codable {
            var name: String
            var keyid: String?
            var public_key: String
        }
        var type: String
        var threshold: Int
        var keys: [Entry]
    }

    /// Parses a trusted-keys file; `public_key` is PEM text (`openssl pkey -pubout`) or
    /// the 64 hex digits of the raw key; `keyid`, when given, must match the key.
    public static func parse(_ bytes: [UInt8], file: String) throws(FirmwareError) -> TrustedKeys {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(bytes))
        } catch {
            let (field, detail) = describe(error)
            throw .trustedKeysInvalid(file: file, detail: "\(field) \(detail)")
        }
        guard wire.type == typeMarker else {
            throw .trustedKeysInvalid(file: file, detail: "type is '\(wire.type)', expected '\(typeMarker)'")
        }
        var keys: [Key] = []
        for (index, entry) in wire.keys.enumerated() {
            let key: Ed25519PublicKey
            do {
                if let raw = Hex.decode(entry.public_key), raw.count == 32 {
                    key = try Ed25519PublicKey(rawRepresentation: raw)
                } else {
                    key = try Ed25519PublicKey(pem: entry.public_key)
                }
            } catch {
                throw .trustedKeysInvalid(file: file, detail: "keys[\(index)] (\(entry.name)): \(error.description)")
            }
            if let id = entry.keyid, id.lowercased() != key.keyID {
                throw .trustedKeysInvalid(file: file, detail: "keys[\(index)] (\(entry.name)): keyid \(id) is not the key's id \(key.keyID)")
            }
            keys.append(Key(name: entry.name, publicKey: key))
        }
        return try TrustedKeys(keys: keys, threshold: wire.threshold, file: file)
    }

    /// The file's JSON, keys sorted by name, each with its id and PEM text.
    public func encoded() throws(FirmwareError) -> [UInt8] {
        var entries: [Wire.Entry] = []
        for key in keys.values.sorted(by: { ($0.name, $0.publicKey.keyID) < ($1.name, $1.publicKey.keyID) }) {
            do {
                entries.append(.init(name: key.name, keyid: key.publicKey.keyID, public_key: try key.publicKey.pem()))
            } catch { throw .crypto(detail: error.description) }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try! encoder.encode(Wire(type: Self.typeMarker, threshold: threshold, keys: entries))) + [0x0A]
    }

    /// The distinct trusted keys with a valid signature in `envelope`, sorted. Signatures by
    /// unknown keys are ignored; several by the same key count once.
    public func validSigners(of envelope: SignedEnvelope) -> [String] {
        var valid = Set<String>()
        for signature in envelope.signatures where !valid.contains(signature.keyID) {
            if let key = keys[signature.keyID], key.publicKey.isValidSignature(signature.signature, for: envelope.payload) {
                valid.insert(signature.keyID)
            }
        }
        return valid.sorted()
    }

    /// Checks an envelope's signatures and returns its metadata, without freshness checks:
    /// at least ``threshold`` distinct trusted keys must have signed the payload, and the
    /// payload must be channel metadata for `channel`.
    /// - Throws: ``FirmwareError/untrustedKeys(file:keyIDs:)`` when no trusted key signed,
    ///   ``FirmwareError/badSignature(file:keyID:)`` when a trusted key's signature fails
    ///   and the threshold is not met, ``FirmwareError/belowThreshold(file:valid:required:)``
    ///   otherwise when too few signed; then decoding, type and channel errors.
    public func open(_ envelope: SignedEnvelope, channel: String, file: String) throws(FirmwareError) -> ChannelMetadata {
        try open(envelope, as: ChannelMetadata.self, name: channel, file: file)
    }

    /// Checks an envelope's signatures (k of n, as ``open(_:channel:file:)``), then decodes
    /// the payload as a `D` and checks that it is the document served as `name`.
    public func open<D: SignedDocument>(_ envelope: SignedEnvelope, as type: D.Type, name: String,
                                        file: String) throws(FirmwareError) -> D {
        let signers = validSigners(of: envelope)
        if signers.count < threshold {
            let trusted = envelope.signatures.filter { keys[$0.keyID] != nil }
            if trusted.isEmpty {
                throw .untrustedKeys(file: file, keyIDs: Array(Set(envelope.signatures.map(\.keyID))).sorted())
            }
            if let bad = trusted.first(where: { !signers.contains($0.keyID) }) {
                throw .badSignature(file: file, keyID: bad.keyID)
            }
            throw .belowThreshold(file: file, valid: signers.count, required: threshold)
        }
        let document = try D.decode(envelope.payload, file: file)
        guard document.documentName == name else {
            throw .channelMismatch(file: file, expected: name, found: document.documentName)
        }
        return document
    }
}

/// The highest metadata version accepted for a channel, and the SHA-256 of its payload.
public struct AcceptedVersion: Sendable, Hashable, Codable {
    /// The metadata version.
    public var version: UInt64
    /// The SHA-256 of that version's payload bytes.
    public var payloadSHA256: SHA256Digest

    /// Creates a record.
    public init(version: UInt64, payloadSHA256: SHA256Digest) {
        self.version = version
        self.payloadSHA256 = payloadSHA256
    }

    enum CodingKeys: String, CodingKey {
        case version
        case payloadSHA256 = "payload_sha256"
    }
}

/// A kind of signed metadata: a JSON payload with a `type` marker, the name it is served
/// as, a version that only rises and an expiry. ``MetadataVerifier`` checks every kind the
/// same way (signatures k of n, type, name, expiry, rollback).
public protocol SignedDocument: Sendable, Hashable {
    /// The `type` its payload carries.
    static var typeMarker: String { get }
    /// The name it must be served as: the channel, or `regions` for the region catalogue.
    var documentName: String { get }
    /// Raised by the publisher on every change, never lowered.
    var version: UInt64 { get }
    /// When it stops being trusted.
    var expires: Date { get }
    /// Decodes and checks a payload (type first, then fields, then rules JSON cannot say).
    static func decode(_ payload: [UInt8], file: String) throws(FirmwareError) -> Self
}

extension ChannelMetadata: SignedDocument {
    /// The channel.
    public var documentName: String { channel }
}

/// A signed document that passed every check. Only ``MetadataVerifier`` makes one.
public struct VerifiedDocument<D: SignedDocument>: Sendable, Hashable {
    /// The document.
    public let document: D
    /// The envelope exactly as received.
    public let envelope: [UInt8]
    /// The SHA-256 of the signed payload.
    public let payloadSHA256: SHA256Digest
    /// The trusted keys whose signatures verified.
    public let signers: [String]

    /// The version this document represents, for the rollback state.
    public var accepted: AcceptedVersion { AcceptedVersion(version: document.version, payloadSHA256: payloadSHA256) }
}

/// Channel metadata that passed every check: signatures (k of n), type, channel, expiry
/// and rollback. Only ``MetadataVerifier`` makes one, so holding one proves the checks ran.
public struct VerifiedChannel: Sendable, Hashable {
    /// The metadata.
    public let metadata: ChannelMetadata
    /// The envelope exactly as received.
    public let envelope: [UInt8]
    /// The SHA-256 of the signed payload.
    public let payloadSHA256: SHA256Digest
    /// The trusted keys whose signatures verified.
    public let signers: [String]

    /// The channel's name.
    public var channel: String { metadata.channel }
    /// The version this metadata represents, for the rollback state.
    public var accepted: AcceptedVersion { AcceptedVersion(version: metadata.version, payloadSHA256: payloadSHA256) }
}

/// Verifies signed channel metadata against trusted keys, a clock and the highest version
/// already accepted.
public struct MetadataVerifier: Sendable {
    /// The keys and threshold.
    public var trustedKeys: TrustedKeys
    /// The current time (injected so tests can move it).
    public var clock: @Sendable () -> Date

    /// Creates a verifier.
    public init(trustedKeys: TrustedKeys, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.trustedKeys = trustedKeys
        self.clock = clock
    }

    /// Verifies `bytes`, an envelope served as channel `channel`.
    /// - Parameters:
    ///   - highest: the highest version already accepted for the channel, if any.
    ///   - file: the name used in errors (a URL or path).
    /// - Throws: the errors of ``TrustedKeys/open(_:channel:file:)``; then
    ///   ``FirmwareError/metadataExpired(file:expires:now:)`` (freeze),
    ///   ``FirmwareError/metadataRollback(file:channel:found:highest:)`` and
    ///   ``FirmwareError/metadataVersionReused(file:channel:version:)``.
    public func verify(_ bytes: [UInt8], channel: String, highest: AcceptedVersion?, file: String) throws(FirmwareError) -> VerifiedChannel {
        guard ChannelMetadata.isValidChannelName(channel) else { throw .invalidChannelName(name: channel) }
        let verified = try verify(bytes, as: ChannelMetadata.self, name: channel, highest: highest, file: file)
        return VerifiedChannel(metadata: verified.document, envelope: verified.envelope,
                               payloadSHA256: verified.payloadSHA256, signers: verified.signers)
    }

    /// Verifies `bytes`, an envelope holding a `D` served as `name`: the same signature,
    /// threshold, type, name, expiry (freeze) and rollback checks for every kind of signed
    /// document (channel metadata, the region catalogue).
    public func verify<D: SignedDocument>(_ bytes: [UInt8], as type: D.Type, name: String, highest: AcceptedVersion?,
                                          file: String) throws(FirmwareError) -> VerifiedDocument<D> {
        let envelope = try SignedEnvelope.parse(bytes, file: file)
        let document = try trustedKeys.open(envelope, as: D.self, name: name, file: file)
        let now = clock()
        guard now < document.expires else {
            throw .metadataExpired(file: file, expires: UTCTime.format(document.expires), now: UTCTime.format(now))
        }
        let digest = SHA256.hash(envelope.payload)
        if let highest {
            guard document.version >= highest.version else {
                throw .metadataRollback(file: file, channel: name, found: document.version, highest: highest.version)
            }
            guard document.version > highest.version || digest == highest.payloadSHA256 else {
                throw .metadataVersionReused(file: file, channel: name, version: document.version)
            }
        }
        return VerifiedDocument(document: document, envelope: bytes, payloadSHA256: digest,
                                signers: trustedKeys.validSigners(of: envelope))
    }
}
