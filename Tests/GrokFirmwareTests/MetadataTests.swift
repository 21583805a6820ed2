import Foundation
import GrokCrypto
import GrokFirmware
import Testing

@Suite("Signed channel metadata")
struct MetadataTests {
    let ring: KeyRing
    let meta: ChannelMetadata

    init() throws {
        ring = try KeyRing(count: 3, threshold: 2)
        meta = metadata(packages: [try makePackage()])
    }

    func verifier(now: Date = june2025) -> MetadataVerifier {
        MetadataVerifier(trustedKeys: ring.trusted, clock: { now })
    }

    @Test("Two of three trusted keys verify; any pair works; the metadata decodes back")
    func goodThreshold() throws {
        for pair in [[0, 1], [1, 2], [0, 2], [0, 1, 2]] {
            let bytes = try signedEnvelope(meta, by: pair.map { ring.keys[$0] })
            let verified = try verifier().verify(bytes, channel: "release", highest: nil, file: "channel.json")
            #expect(verified.metadata == meta)
            #expect(verified.signers == pair.map { ring.keys[$0].publicKey.keyID }.sorted())
            #expect(verified.envelope == bytes)
        }
    }

    @Test("Only untrusted keys: refused as untrusted")
    func untrusted() throws {
        let strangers = try KeyRing(count: 2, threshold: 1)
        let bytes = try signedEnvelope(meta, by: strangers.keys)
        #expect(throws: FirmwareError.untrustedKeys(file: "c", keyIDs: strangers.keys.map(\.publicKey.keyID).sorted())) {
            try verifier().verify(bytes, channel: "release", highest: nil, file: "c")
        }
        // An untrusted signature next to enough trusted ones is ignored.
        let mixed = try FirmwarePublisher.envelope(for: meta).signed(by: strangers.keys + [ring.keys[0], ring.keys[2]]).encoded()
        #expect(try verifier().verify(mixed, channel: "release", highest: nil, file: "c").signers.count == 2)
    }

    @Test("One trusted key of a 2-of-3 set is below the threshold")
    func belowThreshold() throws {
        let bytes = try signedEnvelope(meta, by: [ring.keys[1]])
        #expect(throws: FirmwareError.belowThreshold(file: "c", valid: 1, required: 2)) {
            try verifier().verify(bytes, channel: "release", highest: nil, file: "c")
        }
    }

    @Test("The same key signing twice counts once")
    func duplicateSignatures() throws {
        var envelope = try FirmwarePublisher.envelope(for: meta).signed(by: [ring.keys[0]])
        envelope.signatures.append(envelope.signatures[0])
        envelope.signatures.append(envelope.signatures[0])
        #expect(throws: FirmwareError.belowThreshold(file: "c", valid: 1, required: 2)) {
            try verifier().verify(envelope.encoded(), channel: "release", highest: nil, file: "c")
        }
        // Re-signing with the same key replaces, never duplicates.
        let again = try envelope.signed(by: [ring.keys[0]])
        #expect(again.signatures.filter { $0.keyID == ring.keys[0].publicKey.keyID }.count == 1)
    }

    @Test("A payload changed after signing is refused as a bad signature")
    func tamperedPayload() throws {
        var envelope = try FirmwarePublisher.envelope(for: meta).signed(by: [ring.keys[0], ring.keys[1]])
        var changed = meta
        changed.updates[0].size += 1
        envelope.payload = changed.payload()
        #expect(throws: FirmwareError.badSignature(file: "c", keyID: envelope.signatures[0].keyID)) {
            try verifier().verify(envelope.encoded(), channel: "release", highest: nil, file: "c")
        }
        // One bent byte of the base64 payload text.
        var text = try signedEnvelope(meta, by: [ring.keys[0], ring.keys[1]])
        let payloadStart = text.firstIndex(of: UInt8(ascii: ":"))! + 40
        text[payloadStart] = text[payloadStart] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: FirmwareError.self) { try verifier().verify(text, channel: "release", highest: nil, file: "c") }
    }

    @Test("Expired metadata is refused (freeze), by the injected clock")
    func expired() throws {
        let bytes = try signedEnvelope(meta, by: [ring.keys[0], ring.keys[1]])
        #expect(throws: FirmwareError.metadataExpired(file: "c", expires: "2026-01-01T00:00:00Z", now: "2026-01-01T00:00:00Z")) {
            try verifier(now: january2026).verify(bytes, channel: "release", highest: nil, file: "c")
        }
        #expect(throws: Never.self) {
            try verifier(now: january2026.addingTimeInterval(-1)).verify(bytes, channel: "release", highest: nil, file: "c")
        }
    }

    @Test("An older version than the highest accepted is a rollback; the same version must be the same payload")
    func rollback() throws {
        let v5 = try signedEnvelope(ChannelMetadata(channel: "release", version: 5, expires: january2026, updates: meta.updates), by: ring.keys)
        let accepted = try verifier().verify(v5, channel: "release", highest: nil, file: "c").accepted
        var older = meta
        older.version = 4
        #expect(throws: FirmwareError.metadataRollback(file: "c", channel: "release", found: 4, highest: 5)) {
            try verifier().verify(signedEnvelope(older, by: ring.keys), channel: "release", highest: accepted, file: "c")
        }
        #expect(try verifier().verify(v5, channel: "release", highest: accepted, file: "c").metadata.version == 5)
        var sameNumber = meta
        sameNumber.version = 5
        sameNumber.updates[0].notes["en"] = "Different notes."
        #expect(throws: FirmwareError.metadataVersionReused(file: "c", channel: "release", version: 5)) {
            try verifier().verify(signedEnvelope(sameNumber, by: ring.keys), channel: "release", highest: accepted, file: "c")
        }
    }

    @Test("Release metadata served as development is a channel mismatch; other files are a type mismatch")
    func mismatches() throws {
        let bytes = try signedEnvelope(meta, by: ring.keys)
        #expect(throws: FirmwareError.channelMismatch(file: "c", expected: "development", found: "release")) {
            try verifier().verify(bytes, channel: "development", highest: nil, file: "c")
        }
        let keysFile = try ring.trusted.encoded()
        let wrongType = try SignedEnvelope(payload: keysFile).signed(by: ring.keys).encoded()
        #expect(throws: FirmwareError.typeMismatch(file: "c", expected: ChannelMetadata.typeMarker, found: TrustedKeys.typeMarker)) {
            try verifier().verify(wrongType, channel: "release", highest: nil, file: "c")
        }
        #expect(throws: FirmwareError.invalidChannelName(name: "../etc")) {
            try verifier().verify(bytes, channel: "../etc", highest: nil, file: "c")
        }
    }

    @Test("Malformed envelopes and metadata are refused with a clear error")
    func malformed() throws {
        for text in ["", "[]", #"{"payload": 3, "signatures": []}"#, #"{"payload": "!!", "signatures": []}"#,
                     #"{"payload": "", "signatures": [{"keyid": "a", "sig": "%%"}]}"#] {
            #expect(throws: FirmwareError.self) { try SignedEnvelope.parse(Array(text.utf8), file: "c") }
        }
        var unsafe = meta
        unsafe.updates[0].file = "../../etc/passwd"
        #expect(throws: FirmwareError.self) { try ChannelMetadata.decode(unsafe.payload(), file: "c") }
        var noEnglish = meta
        noEnglish.updates[0].notes = ["de": "Nur Deutsch."]
        #expect(throws: FirmwareError.self) { try ChannelMetadata.decode(noEnglish.payload(), file: "c") }
        var unknownCohort = meta
        unknownCohort.updates[0].targets = Targeting(cohorts: ["nobody"])
        #expect(throws: FirmwareError.self) { try ChannelMetadata.decode(unknownCohort.payload(), file: "c") }
        let missing = Array(#"{"type": "grokctl-firmware-channel", "channel": "release", "version": 1, "updates": []}"#.utf8)
        #expect(throws: FirmwareError.metadataMalformed(file: "c", field: "expires", detail: "is missing")) {
            try ChannelMetadata.decode(missing, file: "c")
        }
    }

    @Test("The metadata JSON carries every field; localized notes fall back to English")
    func payloadShape() throws {
        let text = String(decoding: meta.payload(), as: UTF8.self)
        for key in ["\"type\"", "\"channel\"", "\"version\"", "\"expires\" : \"2026-01-01T00:00:00Z\"", "\"build_date\" : \"2025-01-01T00:00:00Z\"",
                    "\"reader_protocol\"", "\"hardware_type\" : 5", "\"hardware_revisions\"", "\"applies_to\"", "\"size\"", "\"sha256\"", "\"notes\""] {
            #expect(text.contains(key), "\(key)")
        }
        #expect(try ChannelMetadata.decode(meta.payload(), file: "c") == meta)
        #expect(meta.updates[0].notes(in: "fr") == "Inventaire plus rapide.")
        #expect(meta.updates[0].notes(in: "it") == "Faster inventory.")
    }

    @Test("Trusted-keys file: PEM from openssl or raw hex, keyid checked, threshold 1...n, no duplicates")
    func trustedKeysFile() throws {
        let encoded = try ring.trusted.encoded()
        #expect(try TrustedKeys.parse(encoded, file: "k") == ring.trusted)
        let raw = Hex.encode(ring.keys[0].publicKey.rawRepresentation)
        let hexFile = #"{"type": "grokctl-trusted-keys", "threshold": 1, "keys": [{"name": "a", "public_key": "\#(raw)"}]}"#
        #expect(try TrustedKeys.parse(Array(hexFile.utf8), file: "k").keys.keys.first == ring.keys[0].publicKey.keyID)
        let wrongID = #"{"type": "grokctl-trusted-keys", "threshold": 1, "keys": [{"name": "a", "keyid": "00", "public_key": "\#(raw)"}]}"#
        #expect(throws: FirmwareError.self) { try TrustedKeys.parse(Array(wrongID.utf8), file: "k") }
        let tooHigh = #"{"type": "grokctl-trusted-keys", "threshold": 2, "keys": [{"name": "a", "public_key": "\#(raw)"}]}"#
        #expect(throws: FirmwareError.self) { try TrustedKeys.parse(Array(tooHigh.utf8), file: "k") }
        let twice = #"{"type": "grokctl-trusted-keys", "threshold": 1, "keys": [{"name": "a", "public_key": "\#(raw)"}, {"name": "b", "public_key": "\#(raw)"}]}"#
        #expect(throws: FirmwareError.self) { try TrustedKeys.parse(Array(twice.utf8), file: "k") }
    }

    @Test("Every error has a distinct stable code and names its file")
    func errorCodes() {
        let samples: [FirmwareError] = [
            .badSignature(file: "f", keyID: "k"), .untrustedKeys(file: "f", keyIDs: ["k"]), .belowThreshold(file: "f", valid: 1, required: 2),
            .metadataExpired(file: "f", expires: "e", now: "n"), .metadataRollback(file: "f", channel: "c", found: 1, highest: 2),
            .channelMismatch(file: "f", expected: "a", found: "b"), .imageHashMismatch(file: "f", expected: "a", found: "b"),
            .hexChecksum(file: "f", line: 3, expected: 1, found: 2),
        ]
        #expect(Set(samples.map(\.code)).count == samples.count)
        for error in samples {
            #expect(error.arguments.first == "f")
            #expect(error.description.contains("'f'"))
        }
    }
}
