import Foundation
import GrokAudio
import GrokLink
import GrokProtocol
@testable import UGrokIt

/// One capture of `Tests/VendorInterop/Fixtures/` (what the vendor host library sent for one
/// call, and what the device peer answered it), read from the repository.
struct VendorFixture {
    let name: String
    let step: String
    let args: [String]
    /// The packets the vendor host sent, in order, as hex.
    let hostSends: [String]
    /// The packets the vendor host received (the device's answers and, in slave mode, its
    /// requests), in order, as hex.
    let hostReceived: [String]

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("VendorInterop/Fixtures")

    /// The fixtures of one scenario directory, in file order.
    static func scenario(_ name: String) throws -> [VendorFixture] {
        let folder = directory.appendingPathComponent(name)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        return try files.map { try load(folder.appendingPathComponent($0)) }
    }

    static func load(_ url: URL) throws -> VendorFixture {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        let received = (object["host_received"] as? [[String: Any]] ?? []).compactMap { $0["bytes"] as? String }
        return VendorFixture(name: url.lastPathComponent, step: object["step"] as? String ?? "",
                             args: object["args"] as? [String] ?? [], hostSends: object["host_sends"] as? [String] ?? [],
                             hostReceived: received)
    }
}

func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        bytes.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

func hexText(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// A packet the device sends: an answer to the host, or (in slave mode) a request of its own.
enum ScriptedPacket {
    case response(ResponsePacket)
    case request(RequestPacket)

    /// Decodes a packet of a capture: a first byte whose nibbles are complements is a
    /// response (the reader's own requests in slave mode are commands 0-6, never such a byte).
    init(hex: String) {
        let bytes = hexBytes(hex)
        let first = bytes[0]
        let isResponse = (first >> 4) == (~first & 0x0f)
        var decoder = VendorPacketDecoder(expecting: isResponse ? .responses : .requests)
        switch decoder.feed(bytes).last {
        case .response(let r)?: self = .response(r)
        case .request(let r)?: self = .request(r)
        default: fatalError("fixture packet \(hex) does not decode")
        }
    }
}

/// A device-side ``VendorLink`` behind the simulated cable that plays back what the
/// vendor's peer sent in a capture: each request of the host is answered with the next
/// scripted answer, and in slave mode it sends the scripted reader packets one after the
/// other, each once the host answered the one before. It records every packet the host put
/// on the wire (requests in normal mode, answers in slave mode), as the captures do.
final class ScriptedGrokker: CablePeer {
    let link: VendorLink
    var script: [ScriptedPacket]
    /// Answer echoes with their own payload instead of the script (AutoConfig, test connection).
    var echoes = false
    /// Refuse echoes (ACK_7) while the link runs faster than this many samples per bit.
    var refuseEchoesBelowSamplesPerBit = 0
    /// Every packet the host sent, hex, in order.
    private(set) var hostPackets: [String] = []
    /// Samples per bit of each echo answered.
    private(set) var echoSettings: [Int] = []
    private var waiting = false

    convenience init(sampleRate: Int = 44_100, script: [String]) throws {
        try self.init(sampleRate: sampleRate, packets: script.map(ScriptedPacket.init(hex:)))
    }

    init(sampleRate: Int = 44_100, packets: [ScriptedPacket]) throws {
        link = try VendorLink(role: .device, sampleRate: sampleRate)
        self.script = packets
        try link.start()
        link.packets.onRequest = { [unowned self] request in answer(request) }
    }

    private func answer(_ request: RequestPacket) -> VendorReply {
        hostPackets.append(hexText((try? request.encoded()) ?? []))
        if request.command == VendorOpcode.echo.rawValue, echoes {
            echoSettings.append(link.samplesPerBit)
            if link.samplesPerBit < refuseEchoesBelowSamplesPerBit { return .nack }
            return VendorReply(ResponsePacket(id: 0, data: request.payload))
        }
        guard case .response(let response)? = script.first else { return .nack }
        script.removeFirst()
        let startsSlaveMode = [VendorOpcode.inventory.rawValue, VendorOpcode.tuneAntenna.rawValue].contains(request.command)
            && response.id == 0 && response.data.isEmpty
        return VendorReply(response, entersSlaveMode: startsSlaveMode)
    }

    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        link.process(input: input, output: output)
        for event in link.drainEvents() {
            switch event {
            case .packet(.completed(_, let response)):
                hostPackets.append(hexText((try? response.encoded()) ?? []))
                waiting = false
            case .packet(.failed):
                waiting = false
            default:
                break
            }
        }
        sendNext()
    }

    private func sendNext() {
        guard link.packets.isInSlaveMode, !waiting, !link.packets.isSending, case .request(let request)? = script.first else { return }
        script.removeFirst()
        do {
            // No retries: like the vendor's peer, a NACKed packet is done with and the next one follows.
            try link.send(command: request.command, payload: request.payload, retries: false, endsSlaveMode: request.command == 0)
            waiting = true
        } catch {
            fatalError("scripted reader packet \(request) could not be sent: \(error)")
        }
    }
}

/// A vendor session over a clean simulated cable to a scripted Grokker.
struct VendorBench {
    let device: ScriptedGrokker
    let session: ReaderSession

    init(script: [String]) throws {
        device = try ScriptedGrokker(script: script)
        let port = SimulatedCablePort(name: "vendor-grokker", sampleRate: 44_100, configuration: .clean, peer: device)
        session = try ReaderSession(port: port)
    }

    /// A bench whose script is everything the vendor host received in these captures.
    init(fixtures: [VendorFixture]) throws {
        try self.init(script: fixtures.flatMap(\.hostReceived))
    }
}
