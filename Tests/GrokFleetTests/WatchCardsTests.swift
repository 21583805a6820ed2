import Foundation
import GrokTestSupport
import Synchronization
import Testing

@testable import GrokFleet

@Suite("Sound cards as watched ports")
struct WatchCardsTests {
    @Test("the card list is read again when /proc/asound/cards changes: a card plugged in is watched, one pulled out is gone; a card where no Grokker answers holds nothing")
    func cardsComeAndGo() throws {
        let directory = TemporaryDirectory("watch-cards")
        let cardsFile = directory.path + "/cards"
        try "--- no soundcards ---\n".write(toFile: cardsFile, atomically: true, encoding: .utf8)
        let cards = Mutex<[SoundCard]>([])
        let ports = DevicePortContext(bench: Bench(directory: directory.path + "/bench"))
        let source = CardWatchSource(probe: ProbeJob(access: DeviceAccess(ports: ports)), probeInterval: 0, cardsFile: cardsFile) {
            cards.withLock { $0 }
        }
        #expect(try source.scan(busy: []).isEmpty)
        // A duplex card that is not there to open: probed, nothing answers.
        cards.withLock {
            $0 = [SoundCard(device: .alsa(name: "hw:63,0"), description: "USB Audio", canPlay: true, canCapture: true,
                            mixer: nil, levels: nil, jackPlugged: nil, usb: nil)]
        }
        #expect(try source.scan(busy: []).map(\.spec) == [], "the list is not read again while the file is the same")
        try " 0 [Device ]: USB-Audio - USB Audio Device\n".write(toFile: cardsFile, atomically: true, encoding: .utf8)
        #expect(try source.scan(busy: []) == [WatchedPort(spec: .alsa(name: "hw:63,0"), holds: nil)])
        cards.withLock { $0 = [] }
        try "--- no soundcards ---\n".write(toFile: cardsFile, atomically: true, encoding: .utf8)
        #expect(try source.scan(busy: []).isEmpty)
    }
}
