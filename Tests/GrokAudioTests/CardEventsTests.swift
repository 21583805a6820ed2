import Foundation
import GrokTestSupport
import Testing

@testable import GrokAudio

@Suite("Sound cards coming and going (udev, inotify, /proc/asound/cards)")
struct CardEventsTests {
    private func make(_ path: String) {
        #expect(FileManager.default.createFile(atPath: path, contents: nil), "\(path)")
    }

    @Test("a node's name gives its card: controlC5, pcmC5D0p, hwC5D0, card5; seq, timer and by-path give none")
    func cardOfNode() {
        #expect(CardEvents.card(ofNode: "controlC5") == 5)
        #expect(CardEvents.card(ofNode: "pcmC12D0p") == 12)
        #expect(CardEvents.card(ofNode: "hwC5D0") == 5)
        #expect(CardEvents.card(ofNode: "midiC3D1") == 3)
        #expect(CardEvents.card(ofNode: "card7") == 7)
        for name in ["seq", "timer", "by-path", "by-id", "controlC", "Controlc5", "controlC5x", ""] {
            #expect(CardEvents.card(ofNode: name) == nil, "\(name)")
        }
    }

    @Test("inotify: a node made in the sound directory, given new permissions and removed is heard, with its card; other names are not")
    func inotifyNodes() throws {
        let directory = TemporaryDirectory("card-events")
        let snd = directory.directory("snd")
        let watch = try #require(SoundDirectoryWatch(directory: snd))
        #expect(watch.kind == .inotify)
        #expect(watch.changes().isEmpty)
        make(snd + "/controlC5")
        #expect(watch.changes() == [CardChange(card: 5)])
        #expect(watch.changes().isEmpty, "told once")
        #expect(chmod(snd + "/controlC5", 0o660) == 0)
        #expect(watch.changes() == [CardChange(card: 5)], "udevd setting a node's permissions")
        make(snd + "/timer")
        #expect(watch.changes().isEmpty, "no card's node")
        try FileManager.default.removeItem(atPath: snd + "/controlC5")
        #expect(watch.changes() == [CardChange(card: 5)])
    }

    @Test("inotify: a sound directory missing at the start is watched once it is made, and again after it went and came back")
    func inotifyDirectoryAppears() throws {
        let directory = TemporaryDirectory("card-events")
        let snd = directory.file("snd")
        let watch = try #require(SoundDirectoryWatch(directory: snd))
        #expect(watch.changes().isEmpty)
        make(directory.file("other"))
        #expect(watch.changes().isEmpty, "another file in the parent")
        try FileManager.default.createDirectory(atPath: snd, withIntermediateDirectories: false)
        #expect(watch.changes() == [CardChange(card: nil)], "nodes may be in it already")
        make(snd + "/controlC1")
        #expect(watch.changes() == [CardChange(card: 1)])
        try FileManager.default.removeItem(atPath: snd)
        #expect(watch.changes().contains(CardChange(card: nil)), "the directory went")
        try FileManager.default.createDirectory(atPath: snd, withIntermediateDirectories: false)
        #expect(watch.changes() == [CardChange(card: nil)])
        make(snd + "/pcmC2D0c")
        #expect(watch.changes() == [CardChange(card: 2)])
    }

    @Test("the source is chosen in order: udev while udevd's control socket exists, else inotify, else polling the cards file")
    func chosenInOrder() {
        let directory = TemporaryDirectory("card-events")
        let control = directory.file("control")
        let snd = directory.directory("snd")
        let cards = directory.file("cards")
        #expect(CardEvents.open(udevControl: control, soundDirectory: snd, cardsFile: cards).kind == .inotify)
        #expect(CardEvents.open(udevControl: control, soundDirectory: directory.file("none/snd"), cardsFile: cards).kind == .poll,
                "neither the directory nor its parent")
        make(control)
        #expect(CardEvents.open(udevControl: control, soundDirectory: snd, cardsFile: cards).kind == .udev)
    }

    // Without udevd (the suite's machines run none): the monitor is made, its socket is open
    // and non-blocking, and asking it returns at once with nothing. Events from a running
    // udevd: `udevEventsFromUdevd` below.
    @Test("udev: a monitor is made, its socket is valid and non-blocking, and receive on nothing returns nil at once")
    func udevMonitorWithoutEvents() throws {
        let monitor = try #require(UdevSoundMonitor())
        #expect(monitor.kind == .udev)
        let flags = fcntl(monitor.fileDescriptor, F_GETFL)
        #expect(flags >= 0 && flags & O_NONBLOCK != 0)
        let started = Date()
        #expect(monitor.receive() == nil)
        #expect(monitor.changes().isEmpty)
        #expect(Date().timeIntervalSince(started) < 0.2)
    }

    // A running udevd is needed: scripts/udev-events.sh starts one in a private namespace and
    // runs this test there (GROKCTL_UDEVD_TEST=1). There is no sound card where it was written,
    // so the monitor listens to `net` and the loopback device is made to send a change: what
    // is checked is libudev's way from udevd to the monitor, which a sound card's takes too.
    @Test("udev: an event from a running udevd reaches the monitor, without blocking (scripts/udev-events.sh)",
          .enabled(if: ProcessInfo.processInfo.environment["GROKCTL_UDEVD_TEST"] == "1",
                   "needs a running udevd: run scripts/udev-events.sh"))
    func udevEventsFromUdevd() throws {
        #expect(CardEvents.open().kind == .udev, "udevd's control socket is there")
        let monitor = try #require(UdevSoundMonitor(subsystem: "net"))
        #expect(monitor.receive() == nil)
        let trigger = Process()
        trigger.executableURL = URL(fileURLWithPath: "/bin/udevadm")
        trigger.arguments = ["trigger", "--action=change", "--subsystem-match=net", "--sysname-match=lo"]
        try trigger.run()
        trigger.waitUntilExit()
        #expect(trigger.terminationStatus == 0)
        var heard: [CardChange] = []
        let deadline = Date().addingTimeInterval(5)
        while heard.isEmpty, Date() < deadline {
            heard = monitor.changes()
            if heard.isEmpty { usleep(20_000) }
        }
        // `lo` is no card's: a change of an unknown card, as a sound device without a card number is.
        #expect(heard == [CardChange(card: nil)])
        #expect(monitor.changes().isEmpty)
    }

    @Test("polling: a change of the cards file's text is told once; the same text is not")
    func cardsFilePoll() throws {
        let directory = TemporaryDirectory("card-events")
        let file = directory.file("cards")
        try "--- no soundcards ---\n".write(toFile: file, atomically: true, encoding: .utf8)
        let poll = CardsFilePoll(file: file)
        #expect(poll.changes().isEmpty)
        try " 0 [Device ]: USB-Audio - USB Audio Device\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(poll.changes() == [CardChange(card: nil)])
        #expect(poll.changes().isEmpty)
        try FileManager.default.removeItem(atPath: file)
        #expect(poll.changes() == [CardChange(card: nil)], "the file went (the sound modules unloaded)")
    }

    @Test("jack events: a device that is no card's, or a card that is not there, gives no control events (its jack is read on every look)")
    func jackEventsWithoutCard() {
        #expect(ALSAJackEvents(device: "pulse") == nil)
        #expect(ALSAJackEvents(device: "hw:63,0") == nil)
    }
}
