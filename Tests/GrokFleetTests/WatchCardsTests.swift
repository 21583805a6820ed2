import Foundation
import GrokAudio
import GrokTestSupport
import Synchronization
import Testing

@testable import GrokFleet

/// Card events told by the test.
final class ScriptedCardEvents: CardEventSource, Sendable {
    let kind: CardEventKind = .udev
    private let pending = Mutex<[CardChange]>([])

    func post(_ change: CardChange) { pending.withLock { $0.append(change) } }

    func changes() -> [CardChange] { pending.withLock { changes in defer { changes = [] }; return changes } }
}

@Suite("Sound cards as watched ports")
struct WatchCardsTests {
    static let usbCard = SoundCard(device: .alsa(name: "hw:63,0"), description: "USB Audio", canPlay: true, canCapture: true,
                                   mixer: nil, levels: nil, jackPlugged: nil, usb: nil)

    @Test("the card list is read at the start and again only after a card event: a card plugged in is watched, one pulled out is gone; a card where no Grokker answers holds nothing")
    func cardsComeAndGo() throws {
        let directory = TemporaryDirectory("watch-cards")
        let cards = Mutex<[SoundCard]>([])
        let reads = Mutex(0)
        let events = ScriptedCardEvents()
        let ports = DevicePortContext(bench: Bench(directory: directory.path + "/bench"))
        let source = CardWatchSource(probe: ProbeJob(access: DeviceAccess(ports: ports)), probeInterval: 0, events: events) {
            reads.withLock { $0 += 1 }
            return cards.withLock { $0 }
        }
        #expect(try source.scan(busy: []).isEmpty)
        #expect(reads.withLock { $0 } == 1, "read once at the start")
        // A duplex card that is not there to open: probed, nothing answers.
        cards.withLock { $0 = [Self.usbCard] }
        #expect(try source.scan(busy: []).map(\.spec) == [], "the list is not read again before an event")
        #expect(try source.scan(busy: []).map(\.spec) == [])
        #expect(reads.withLock { $0 } == 1)
        events.post(CardChange(card: 63))
        #expect(try source.scan(busy: []) == [WatchedPort(spec: .alsa(name: "hw:63,0"), holds: nil)])
        #expect(try source.scan(busy: []) == [WatchedPort(spec: .alsa(name: "hw:63,0"), holds: nil)])
        #expect(reads.withLock { $0 } == 2, "read once for the event")
        cards.withLock { $0 = [] }
        events.post(CardChange(card: nil))
        #expect(try source.scan(busy: []).isEmpty)
        #expect(reads.withLock { $0 } == 3)
    }

    @Test("a node made in the (stand-in) sound directory makes the source read its cards again, through inotify")
    func inotifyTellsTheSource() throws {
        let directory = TemporaryDirectory("watch-cards")
        let snd = directory.directory("snd")
        let events = try #require(SoundDirectoryWatch(directory: snd))
        let cards = Mutex<[SoundCard]>([])
        let reads = Mutex(0)
        let ports = DevicePortContext(bench: Bench(directory: directory.path + "/bench"))
        let source = CardWatchSource(probe: ProbeJob(access: DeviceAccess(ports: ports)), probeInterval: 0, events: events) {
            reads.withLock { $0 += 1 }
            return cards.withLock { $0 }
        }
        #expect(try source.scan(busy: []).isEmpty)
        cards.withLock { $0 = [Self.usbCard] }
        #expect(try source.scan(busy: []).isEmpty)
        #expect(FileManager.default.createFile(atPath: snd + "/controlC63", contents: nil))
        #expect(try source.scan(busy: []).map(\.spec) == [.alsa(name: "hw:63,0")])
        #expect(reads.withLock { $0 } == 2)
    }
}
