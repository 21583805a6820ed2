import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import GrokTestSupport
import UGrokIt

/// A recorded session between our host (``ReaderSession``) and our emulated Grokker
/// (``EmulatedGrokker``) over a clean simulated cable, recorded by ``RecordingPort`` as
/// `--record-audio` records (left: played, right: captured): the recordings `audio decode`
/// is tested on.
public struct LinkRecording {
    /// Holds the recording; removed when the last copy goes.
    public let directory: TemporaryDirectory
    /// Its path.
    public var directoryPath: String { directory.path }
    /// The WAV file.
    public let wav: String
    /// What the host's packet layer counted: requests it put on the line (resends included),
    /// and answers it received.
    public let sent: Int
    public let received: Int

    /// Connects, asks the battery level, with `inventory` runs an inventory until the reader
    /// has sent three packets of it, idles 0.2 s and hangs up; the unit has its region set
    /// and one tag half a metre away.
    public static func record(samplesPerBit spb: Int = 12, sampleRate: Int = 44_100, inventory: Bool = false) throws -> LinkRecording {
        let directory = TemporaryDirectory("link-recording")
        let store = try DeviceStateStore.openOrCreate(directory: directory.path + "/bench", index: 0)
        try store.update { s in
            s.region = RegionSetting(name: "FCC (US), IC (Canada)", number: 1)
            s.provisioning.userHasSetRegion = true
        }
        let scene = RFScene(tags: [RFScene.Tag(epc: [0x30, 0x08, 0x33, 0xb2, 0xdd, 0xd9, 0x01, 0x40, 0, 0, 0, 1],
                                               placement: .distance(meters: 0.5))])
        let grokker = try EmulatedGrokker(store: store, sampleRate: sampleRate, scene: scene)
        let cable = SimulatedCablePort(name: "decode", sampleRate: sampleRate, configuration: .clean, peer: grokker)
        let recording = try RecordingPort(wrapping: cable, directory: directory.path + "/recordings")
        let session = try ReaderSession(port: recording, samplesPerBit: spb)
        _ = try session.connect()
        _ = try session.batteryInfo()
        if inventory {
            try session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance))
            try session.collect(forAtMost: 10) { session.inventory!.packetsAnswered >= 3 }
            _ = try session.stopInventory()
        }
        try session.idle(forAtMost: 0.2)
        let statistics = session.link.packets.statistics
        session.close()
        return LinkRecording(directory: directory, wav: recording.recordingPath,
                             sent: statistics.packetsSent + statistics.sendRetries, received: statistics.responsesReceived)
    }
}
