internal import CALSA
import Glibc

/// A card's control events, subscribed on a non-blocking control device
/// (`snd_ctl_subscribe_events`): tells whether one of its jack controls (`... Jack`) changed,
/// so a watcher reads the jacks (``ALSADevices/jackPlugged(device:)``) only then instead of on
/// every look. Closes the control device in `deinit`. Not thread-safe.
public final class ALSAJackEvents {
    /// The control device (`hw:1`).
    public let control: String
    private let handle: OpaquePointer
    private let event: OpaquePointer

    /// Subscribes to the events of the card of `device` (`hw:1,0`, `plughw:CARD=Device`);
    /// `nil` for a device that is no card's or a card whose control device cannot be opened.
    public convenience init?(device: String) {
        guard let card = ALSACard.index(ofDevice: device) else { return nil }
        self.init(control: "hw:\(card)")
    }

    /// Subscribes to the events of the control device `control` (`hw:1`); `nil` when it
    /// cannot be opened or does not give events.
    public init?(control: String) {
        ALSACall.prepare()
        var handle: OpaquePointer?
        guard snd_ctl_open(&handle, control, SND_CTL_NONBLOCK) >= 0, let handle else { return nil }
        var event: OpaquePointer?
        guard snd_ctl_subscribe_events(handle, 1) >= 0, snd_ctl_event_malloc(&event) >= 0, let event else {
            snd_ctl_close(handle)
            return nil
        }
        self.control = control
        self.handle = handle
        self.event = event
    }

    deinit {
        snd_ctl_event_free(event)
        snd_ctl_close(handle)
    }

    /// Whether an element of the card changed since the last call (its value, or it was
    /// added or removed) whose name passes `matching` (by default a jack's: ending in
    /// ` Jack`); `nil` when the control device failed (the card went away): read the jacks
    /// yourself from then on. Never blocks.
    public func changed(matching: (String) -> Bool = { $0.hasSuffix(" Jack") }) -> Bool? {
        var changed = false
        // Bounded: a storm of events is taken over several looks.
        for _ in 0..<1024 {
            let result = snd_ctl_read(handle, event)
            if result == 0 || result == -EAGAIN { break }
            if result < 0 { return nil }
            guard snd_ctl_event_get_type(event) == SND_CTL_EVENT_ELEM,
                  let name = snd_ctl_event_elem_get_name(event) else { continue }
            if matching(String(cString: name)) { changed = true }
        }
        return changed
    }
}

@available(*, unavailable) extension ALSAJackEvents: Sendable {}
