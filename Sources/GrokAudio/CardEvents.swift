internal import CUdev
import Foundation
import Glibc
import Synchronization

/// How a station hears of sound cards plugged in and pulled out (``CardEvents/open(udevControl:soundDirectory:cardsFile:)``).
public enum CardEventKind: String, Sendable, Codable, CaseIterable {
    /// udevd's events (its `udev` netlink group, subsystem `sound`), through libudev.
    case udev
    /// inotify on `/dev/snd`: the kernel's devtmpfs makes and removes a card's nodes there,
    /// udevd or not (and udevd changes their permissions: attribute events).
    case inotify
    /// `/proc/asound/cards` read on every look and compared with the last text.
    case poll
}

/// What a card event source heard: the list of cards may have changed.
public struct CardChange: Sendable, Hashable {
    /// The card's index where the event names it (`controlC5`: 5); `nil` when unknown.
    public var card: Int?

    public init(card: Int?) {
        self.card = card
    }
}

/// Tells when the station's sound cards may have changed, without blocking: asked on every
/// look at the ports, it answers from what its file descriptors hold.
public protocol CardEventSource: AnyObject, Sendable {
    var kind: CardEventKind { get }
    /// What was heard since the last call (empty: nothing); never blocks.
    func changes() -> [CardChange]
}

public enum CardEvents {
    /// The best source this machine offers, in order: udevd's events when udevd runs (its
    /// control socket `udevControl` exists: libudev's own test before it subscribes a
    /// monitor), else inotify on `soundDirectory` (or on its parent until it appears: no
    /// sound module is loaded before the first card), else reading `cardsFile` every time.
    public static func open(udevControl: String = "/run/udev/control", soundDirectory: String = "/dev/snd",
                            cardsFile: String = "/proc/asound/cards") -> any CardEventSource {
        if access(udevControl, F_OK) == 0, let monitor = UdevSoundMonitor() { return monitor }
        if let watch = SoundDirectoryWatch(directory: soundDirectory) { return watch }
        return CardsFilePoll(file: cardsFile)
    }

    /// The card a sound device node or device belongs to, by its name: `controlC5`,
    /// `pcmC5D0p`, `hwC5D0`, `midiC5D0` and udev's `card5` give 5; `seq`, `timer` and
    /// udev's `by-path` give `nil`.
    public static func card(ofNode name: String) -> Int? {
        var rest = Substring(name)
        if rest.hasPrefix("card") {
            rest = rest.dropFirst(4)
        } else {
            let letters = rest.prefix { $0.isLowercase }
            guard !letters.isEmpty, rest.dropFirst(letters.count).first == "C" else { return nil }
            rest = rest.dropFirst(letters.count + 1)
        }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count == rest.count || rest.dropFirst(digits.count).first == "D" else { return nil }
        return Int(digits)
    }
}

// MARK: - udev

/// udevd's events for subsystem `sound` through a libudev monitor: a non-blocking netlink
/// socket that hears a card's devices after udevd has handled them (nodes made, permissions
/// set). Unsubscribed by libudev (it hears nothing) when udevd does not run and `/dev` is
/// no devtmpfs. Frees the monitor (and closes its socket) in `deinit`.
public final class UdevSoundMonitor: CardEventSource, @unchecked Sendable {
    public var kind: CardEventKind { .udev }
    private let lock = Mutex(())
    private let udev: OpaquePointer
    private let monitor: OpaquePointer
    /// The monitor's socket (non-blocking).
    public let fileDescriptor: Int32

    /// `nil` when libudev cannot make or start the monitor.
    /// - Parameter subsystem: the devices heard (`sound`; another only to test the monitor
    ///   where there is no sound card, scripts/udev-events.sh).
    public init?(subsystem: String = "sound") {
        guard let udev = udev_new() else { return nil }
        guard let monitor = udev_monitor_new_from_netlink(udev, "udev") else {
            udev_unref(udev)
            return nil
        }
        guard udev_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, nil) >= 0,
              udev_monitor_enable_receiving(monitor) >= 0 else {
            udev_monitor_unref(monitor)
            udev_unref(udev)
            return nil
        }
        self.udev = udev
        self.monitor = monitor
        fileDescriptor = udev_monitor_get_fd(monitor)
    }

    deinit {
        udev_monitor_unref(monitor)
        udev_unref(udev)
    }

    public func changes() -> [CardChange] {
        var heard: [CardChange] = []
        // Bounded: a storm of events is taken over several looks.
        while heard.count < 256, let change = receive() { heard.append(change) }
        return heard
    }

    /// The next event waiting, or `nil` at once when none is.
    public func receive() -> CardChange? {
        lock.withLock { _ in
            var ready = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 0) == 1, ready.revents & Int16(POLLIN) != 0,
                  let device = udev_monitor_receive_device(monitor) else { return nil }
            defer { udev_device_unref(device) }
            let name = udev_device_get_sysname(device).map { String(cString: $0) } ?? ""
            return CardChange(card: CardEvents.card(ofNode: name))
        }
    }
}

// MARK: - inotify

/// inotify on the sound device directory (`/dev/snd`): a node made, removed or given new
/// permissions there is a change of its card. While the directory does not exist, its parent
/// is watched for it to be made; then the directory is (and a change of unknown card is
/// told: nodes may have been made before the watch was). Closes its descriptor in `deinit`.
public final class SoundDirectoryWatch: CardEventSource, @unchecked Sendable {
    public var kind: CardEventKind { .inotify }
    public let directory: String
    private let parent: String
    private let base: String
    private let fileDescriptor: Int32
    private struct Watches {
        var directory: Int32 = -1
        var parent: Int32 = -1
    }
    private let watches = Mutex(Watches())

    /// `nil` when inotify cannot be had or neither the directory nor its parent can be watched.
    public init?(directory: String) {
        self.directory = directory
        let slash = directory.lastIndex(of: "/")
        parent = slash.map { $0 == directory.startIndex ? "/" : String(directory[..<$0]) } ?? "."
        base = slash.map { String(directory[directory.index(after: $0)...]) } ?? directory
        fileDescriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fileDescriptor >= 0 else { return nil }
        let started = watches.withLock { watches in
            Self.watch(fileDescriptor, directory: directory, parent: parent, &watches)
            return watches.directory >= 0 || watches.parent >= 0
        }
        if !started {
            close(fileDescriptor)
            return nil
        }
    }

    deinit {
        close(fileDescriptor)
    }

    /// Watches the directory if it exists, else its parent for it to be made.
    private static func watch(_ fd: Int32, directory: String, parent: String, _ watches: inout Watches) {
        watches.directory = inotify_add_watch(fd, directory, UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_TO | IN_MOVED_FROM
                                                                   | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR))
        if watches.directory >= 0 {
            if watches.parent >= 0 { inotify_rm_watch(fd, watches.parent) }
            watches.parent = -1
        } else if watches.parent < 0 {
            watches.parent = inotify_add_watch(fd, parent, UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR))
        }
    }

    public func changes() -> [CardChange] {
        watches.withLock { watches in
            var heard: [CardChange] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            // Bounded, as the udev source: a storm is taken over several looks.
            for _ in 0..<16 {
                let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                var offset = 0
                while offset + 16 <= count {
                    func word(_ at: Int) -> UInt32 {
                        buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + at, as: UInt32.self) }
                    }
                    let wd = Int32(bitPattern: word(0))
                    let mask = word(4)
                    let length = Int(word(12))
                    let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                    let name = String(decoding: nameBytes, as: UTF8.self)
                    offset += 16 + length
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        heard.append(CardChange(card: nil))
                    } else if wd == watches.directory, watches.directory >= 0 {
                        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 {
                            // The directory went (the last sound module unloaded): wait for it again.
                            inotify_rm_watch(fileDescriptor, watches.directory)
                            watches.directory = -1
                            Self.watch(fileDescriptor, directory: directory, parent: parent, &watches)
                            heard.append(CardChange(card: nil))
                        } else if let card = CardEvents.card(ofNode: name) {
                            heard.append(CardChange(card: card))
                        }
                    } else if wd == watches.parent, watches.parent >= 0, name == base {
                        Self.watch(fileDescriptor, directory: directory, parent: parent, &watches)
                        heard.append(CardChange(card: nil))
                    }
                }
            }
            return heard
        }
    }
}

// MARK: - /proc/asound/cards

/// The last resort: the cards file read on every look, a change of its text told as a change
/// of unknown card.
public final class CardsFilePoll: CardEventSource, @unchecked Sendable {
    public var kind: CardEventKind { .poll }
    public let file: String
    private let last: Mutex<[UInt8]>

    public init(file: String) {
        self.file = file
        last = Mutex(Self.contents(of: file))
    }

    public func changes() -> [CardChange] {
        let now = Self.contents(of: file)
        return last.withLock { last in
            guard now != last else { return [] }
            last = now
            return [CardChange(card: nil)]
        }
    }

    /// The file's bytes (read to its end: procfs files say size 0); empty when it cannot be
    /// read (no sound module loaded).
    private static func contents(of file: String) -> [UInt8] {
        FileManager.default.contents(atPath: file).map(Array.init) ?? []
    }
}
