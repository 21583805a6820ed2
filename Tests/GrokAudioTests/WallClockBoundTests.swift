import Foundation
import GrokTestSupport
import Synchronization
import Testing

@testable import GrokAudio

/// The far end of two FIFOs that opens its ends (so the host's opens return) and then
/// never reads or writes: a `grokctl emulate` stopped with SIGSTOP, as the host sees it.
private final class FrozenPeer: Sendable {
    private let fds = Mutex<[Int32]>([])
    private let opened = DispatchSemaphore(value: 0)

    /// `hostReads` is the FIFO the host reads from, `hostWrites` the one it writes to;
    /// `hostWritesFirst` says which the host opens first (ALSAPort: its playback FIFO;
    /// RawPipePort: its input).
    init(hostReads: String, hostWrites: String, hostOpensWritesFirst: Bool) {
        Thread.detachNewThread { [self] in
            let order = hostOpensWritesFirst ? [(hostWrites, O_RDONLY), (hostReads, O_WRONLY)]
                                             : [(hostReads, O_WRONLY), (hostWrites, O_RDONLY)]
            for (path, mode) in order {
                let fd = open(path, mode)
                fds.withLock { $0.append(fd) }
            }
            opened.signal()
        }
    }

    func waitOpened() { opened.wait() }

    deinit {
        for fd in fds.withLock({ $0 }) where fd >= 0 { close(fd) }
    }
}

private func transfer(_ port: any AudioPort, frames: Int = 256) throws(AudioError) {
    let out = [Float](repeating: 0.1, count: frames)
    var into = [Float](repeating: 0, count: frames)
    try out.withUnsafeBufferPointer { (o) throws(AudioError) in
        try into.withUnsafeMutableBufferPointer { (i) throws(AudioError) in try port.transfer(output: o, input: i) }
    }
}

/// A FIFO nobody writes, opened for reading and writing (so the open returns at once): a
/// read of it blocks until a signal interrupts it.
private func silentFIFO(_ scratch: TemporaryDirectory) -> Int32 {
    open(scratch.fifo("never-written"), O_RDWR)
}

/// Runs `body` and returns what it threw and how many seconds of wall-clock time it took.
private func timed(_ body: () throws(AudioError) -> Void) -> (AudioError?, Double) {
    let start = ContinuousClock.now
    var failure: AudioError?
    do { try body() } catch { failure = error }
    let elapsed = start.duration(to: .now)
    return (failure, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

@Suite("Wall-clock bounds on audio ports")
struct WallClockBoundTests {
    private func frozenPipe(_ scratch: TemporaryDirectory) throws -> (RawPipePort, FrozenPeer) {
        let toHost = scratch.fifo("to-host")
        let fromHost = scratch.fifo("from-host")
        let peer = FrozenPeer(hostReads: toHost, hostWrites: fromHost, hostOpensWritesFirst: false)
        let port = try RawPipePort(inputPath: toHost, outputPath: fromHost)
        peer.waitOpened()
        return (port, peer)
    }

    @Test("a pipe transfer blocked on a frozen peer ends after the stall bound, naming the port")
    func frozenPeerStalls() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("frozen peer", seconds: 30)
        defer { guardian.finish() }
        let (port, peer) = try frozenPipe(scratch)
        let bound = WallClockBound(stallSeconds: 0.3)
        let (error, seconds) = timed { () throws(AudioError) in
            try bound.guardingTransfer(port: port.name) { () throws(AudioError) in try transfer(port) }
        }
        #expect(error == .stalled(port: port.name, seconds: "0.3"))
        #expect(error?.code == "audio_stalled")
        #expect(seconds >= 0.3 && seconds < 2.5, "took \(seconds) s")
        // A bound that fired stays fired: the port is not tried again.
        let (again, quickly) = timed { () throws(AudioError) in
            try bound.guardingTransfer(port: port.name) { () throws(AudioError) in try transfer(port) }
        }
        #expect(again == error)
        #expect(quickly < 0.1)
        port.close()
        _ = peer
    }

    @Test("cancelling from another thread ends a blocked transfer within a fraction of a second")
    func cancelEndsABlockedTransfer() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("cancelled transfer", seconds: 30)
        defer { guardian.finish() }
        let (port, peer) = try frozenPipe(scratch)
        let flag = Atomic<Bool>(false)
        let bound = WallClockBound(stallSeconds: nil, isCancelled: { flag.load(ordering: .relaxed) })
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.2)
            flag.store(true, ordering: .relaxed)
        }
        let (error, seconds) = timed { () throws(AudioError) in
            try bound.guardingTransfer(port: port.name) { () throws(AudioError) in try transfer(port) }
        }
        #expect(error == .cancelled(port: port.name))
        #expect(seconds >= 0.2 && seconds < 1.5, "took \(seconds) s")
        port.close()
        _ = peer
    }

    @Test("a deadline that passes while a transfer is blocked ends it as timed out, naming what ran late")
    func deadlineEndsABlockedTransfer() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("deadline", seconds: 30)
        defer { guardian.finish() }
        let (port, peer) = try frozenPipe(scratch)
        let bound = WallClockBound(stallSeconds: 60)
        bound.setLimit("step region", seconds: 0.3)
        let (error, seconds) = timed { () throws(AudioError) in
            try bound.guardingTransfer(port: port.name) { () throws(AudioError) in try transfer(port) }
        }
        #expect(error == .timedOut(port: port.name, what: "step region", seconds: "0.3"))
        #expect(seconds >= 0.3 && seconds < 2.5, "took \(seconds) s")
        port.close()
        _ = peer
    }

    @Test("opening a FIFO nobody opens is bounded too")
    func openingIsBounded() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("open", seconds: 30)
        defer { guardian.finish() }
        let input = scratch.fifo("never-opened")
        let bound = WallClockBound(stallSeconds: 0.3)
        let start = ContinuousClock.now
        #expect(throws: AudioError.stalled(port: "pipe:" + input, seconds: "0.3")) {
            _ = try bound.guarding(port: "pipe:" + input) {
                try RawPipePort(inputPath: input, outputPath: scratch.file("out"))
            }
        }
        #expect(start.duration(to: .now) < .seconds(2.5))
    }

    @Test("an ALSA port (file plugin over FIFOs) whose peer froze ends after its stall bound and closes promptly")
    func alsaPortOnAFrozenPeer() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("frozen ALSA peer", seconds: 30)
        defer { guardian.finish() }
        let playback = scratch.fifo("host-playback")
        let capture = scratch.fifo("host-capture")
        let peer = FrozenPeer(hostReads: capture, hostWrites: playback, hostOpensWritesFirst: true)
        let host = try ALSAPort(device: ALSATests.hostDevice(playback, capture), periodFrames: 256, periods: 4,
                                configFile: AudioFixtures.asoundrc)
        peer.waitOpened()
        let bound = WallClockBound(stallSeconds: 0.3)
        let (error, seconds) = timed { () throws(AudioError) in
            try bound.guardingTransfer(port: host.name) { () throws(AudioError) in try transfer(host) }
        }
        #expect(error == .stalled(port: host.name, seconds: "0.3"))
        #expect(seconds >= 0.3 && seconds < 2.5, "took \(seconds) s")
        let start = ContinuousClock.now
        host.close()
        #expect(start.duration(to: .now) < .seconds(2))
        _ = peer
    }

    @Test("a transfer that completes under a bound is untouched")
    func healthyTransferPasses() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("healthy", seconds: 30)
        defer { guardian.finish() }
        let playback = scratch.fifo("host-playback")
        let capture = scratch.fifo("host-capture")
        let peer = NegatingPeer(input: playback, output: capture, block: 64)
        let port = try ALSAPort(device: ALSATests.hostDevice(playback, capture), periodFrames: 64, periods: 2,
                                configFile: AudioFixtures.asoundrc)
        let bound = WallClockBound(stallSeconds: 5)
        bound.setLimit("device run", seconds: 30)
        for _ in 0..<50 {
            try bound.guardingTransfer(port: port.name) { () throws(AudioError) in try transfer(port, frames: 64) }
        }
        #expect(bound.fired == nil)
        port.close()
        _ = peer.join()
    }

    @Test("a fired call is signalled once per repeat interval, not in a loop (a storm of queued real-time signals kept the blocked thread in its handler)")
    func firedCallIsNotFlooded() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("signal rate", seconds: 30)
        defer { guardian.finish() }
        let bound = WallClockBound(stallSeconds: 0.1)
        // A read that ignores EINTR and goes on blocking for a second: what the file plugin
        // did while the watchdog looped.
        let reader = silentFIFO(scratch)
        defer { close(reader) }
        let start = ContinuousClock.now
        try? bound.guarding(port: "fifo") {
            var byte: UInt8 = 0
            while start.duration(to: .now) < .seconds(1) { _ = read(reader, &byte, 1) }
        }
        let elapsed = start.duration(to: .now)
        let sent = bound.signalsSent.load(ordering: .relaxed)
        // At most one signal per interval since the bound fired (0.1 s in), and a few spare.
        let most = Int((elapsed - .milliseconds(100)) / WallClockWatchdog.repeatInterval) + 3
        #expect(sent >= 1 && sent <= most, "\(sent) signals in \(elapsed)")
    }
}

/// Runs `body` on a thread of its own and waits until that thread has exited (its
/// thread-specific data destroyed), unlike `Thread`, which cannot be joined.
private func onThreadThatExits(_ body: @escaping @Sendable () -> Void) {
    final class Job: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let started = pthread_create(&thread, nil, { job in
        Unmanaged<Job>.fromOpaque(job!).takeRetainedValue().body()
        return nil
    }, Unmanaged.passRetained(Job(body)).toOpaque())
    precondition(started == 0, "pthread_create failed")
    pthread_join(thread, nil)
}

/// Seconds since `start`.
private func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = start.duration(to: .now)
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

@Suite("The wall-clock watchdog with many threads")
struct WallClockWatchdogTests {
    @Test("sixteen threads arming and disarming back to back while one is stalled: the stalled one ends within its bound, no other is signalled")
    func manyThreadsOneStalled() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("many threads", seconds: 60)
        defer { guardian.finish() }
        let reader = silentFIFO(scratch)
        defer { close(reader) }
        let stop = Atomic<Bool>(false)
        let busy = (0..<16).map { _ in WallClockBound(stallSeconds: 5) }
        let calls = Atomic<Int>(0)
        let interrupted = Atomic<Int>(0)
        let group = DispatchGroup()
        for bound in busy {
            group.enter()
            Thread.detachNewThread {
                while !stop.load(ordering: .relaxed) {
                    try? bound.guarding(port: "busy") {
                        // A short call; a signal meant for another thread would cut it with EINTR.
                        var pause = timespec(tv_sec: 0, tv_nsec: 50_000)
                        if nanosleep(&pause, nil) != 0 { interrupted.add(1, ordering: .relaxed) }
                    }
                    calls.add(1, ordering: .relaxed)
                }
                group.leave()
            }
        }
        let stalled = WallClockBound(stallSeconds: 0.3)
        let start = ContinuousClock.now
        #expect(throws: AudioError.stalled(port: "stalled", seconds: "0.3")) {
            try stalled.guardingTransfer(port: "stalled") { () throws(AudioError) in
                var byte: UInt8 = 0
                try POSIXCall.retrying(path: "fifo", "read") { read(reader, &byte, 1) }
            }
        }
        let took = seconds(since: start)
        stop.store(true, ordering: .relaxed)
        group.wait()
        #expect(took >= 0.3 && took < 2.5, "took \(took) s")
        #expect(stalled.signalsSent.load(ordering: .relaxed) >= 1)
        #expect(calls.load(ordering: .relaxed) > 16, "the busy threads made \(calls.load(ordering: .relaxed)) calls")
        #expect(interrupted.load(ordering: .relaxed) == 0)
        for bound in busy {
            #expect(bound.fired == nil)
            #expect(bound.signalsSent.load(ordering: .relaxed) == 0)
        }
    }

    @Test("a thread that armed calls and exited leaves no slot behind, and its bound, fired later, signals nobody")
    func exitedThreadIsForgotten() throws {
        let watchdog = WallClockWatchdog.shared
        let bound = WallClockBound(stallSeconds: 0.05)
        bound.setLimit("device run", seconds: 0.1)
        let serials = Mutex<[UInt64]>([])
        for _ in 0..<4 {
            onThreadThatExits {
                for _ in 0..<10 { try? bound.guarding(port: "quick") {} }
                if let serial = watchdog.serialOfThisThread { serials.withLock { $0.append(serial) } }
            }
        }
        let exited = serials.withLock { $0 }
        #expect(exited.count == 4)
        #expect(watchdog.registeredSerials.isDisjoint(with: exited))
        // The deadline passes after the threads are gone: nothing is blocked, nobody is signalled.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(throws: AudioError.timedOut(port: "quick", what: "device run", seconds: "0.1")) { try bound.check(port: "quick") }
        #expect(bound.signalsSent.load(ordering: .relaxed) == 0)
    }

    @Test("a call bounded inside a bounded call: the outer bound still ends the inner blocked call")
    func nestedCalls() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("nested", seconds: 30)
        defer { guardian.finish() }
        let reader = silentFIFO(scratch)
        defer { close(reader) }
        let outer = WallClockBound(stallSeconds: 0.3)
        let inner = WallClockBound(stallSeconds: 60)
        let start = ContinuousClock.now
        #expect(throws: AudioError.stalled(port: "outer", seconds: "0.3")) {
            try outer.guardingTransfer(port: "outer") { () throws(AudioError) in
                try inner.guardingTransfer(port: "inner") { () throws(AudioError) in
                    var byte: UInt8 = 0
                    try POSIXCall.retrying(path: "fifo", "read") { read(reader, &byte, 1) }
                }
            }
        }
        #expect(seconds(since: start) < 2.5)
        #expect(inner.fired == nil)
        // The inner bound is untouched and goes on working.
        try inner.guardingTransfer(port: "inner") { () throws(AudioError) in }
    }

    @Test("time the watchdog itself could not run (the process starved of CPU, or stopped) does not count towards a call's stall bound: a peer is frozen when it sent nothing while we were there to read")
    func starvationIsNotAFrozenPeer() {
        let start = ContinuousClock.now
        let at = { (seconds: Double) in start.advanced(by: .seconds(seconds)) }
        // On time, or late by scheduling jitter: no starvation.
        #expect(WallClockWatchdog.starvation(expected: nil, now: at(5)) == .zero)
        #expect(WallClockWatchdog.starvation(expected: at(1), now: at(1.1)) == .zero)
        #expect(WallClockWatchdog.starvation(expected: at(1), now: at(0.5)) == .zero)
        #expect(WallClockWatchdog.starvation(expected: at(1), now: at(3)) == .seconds(2) - WallClockWatchdog.starvationSlack)

        let bound = WallClockBound(stallSeconds: 1)
        let slot = WatchdogSlot(thread: pthread_self(), serial: .max, watchdog: WallClockWatchdog.shared)
        slot.arm(bound, port: "pipe", since: start)
        var active = false
        // 1.5 s after the call began, but the watchdog did not run for 1.2 s of them: 0.3 s blocked.
        _ = slot.watch(now: at(1.5), soon: at(1.52), starved: .seconds(1.2), active: &active)
        #expect(slot.fired == nil && bound.fired == nil)
        // Then the watchdog runs on time and the peer still sends nothing: frozen 1 s later.
        _ = slot.watch(now: at(2.1), soon: at(2.12), active: &active)
        #expect(slot.fired == nil)
        _ = slot.watch(now: at(2.6), soon: at(2.62), active: &active)
        #expect(slot.fired == .stalled(port: "pipe", seconds: "1"))
        _ = slot.disarm()
        // Without the starvation the same call is frozen at 1.5 s (what happened before).
        let other = WallClockBound(stallSeconds: 1)
        slot.arm(other, port: "pipe", since: start)
        _ = slot.watch(now: at(1.5), soon: at(1.52), active: &active)
        #expect(slot.fired == .stalled(port: "pipe", seconds: "1"))
        _ = slot.disarm()
    }

    @Test("a watchdog that fell asleep with nothing armed wakes for the next call and ends it within its bound")
    func sleepingWatchdogWakesForTheNextCall() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let guardian = DeadlockGuard("sleeping watchdog", seconds: 30)
        defer { guardian.finish() }
        // A watchdog of its own, so other tests' calls do not keep it awake.
        let watchdog = WallClockWatchdog()
        let bound = WallClockBound(stallSeconds: 0.2)
        let quick = watchdog.arm(bound, port: "quick", since: .now)
        #expect(watchdog.disarm(quick) == nil)
        let asleep = ContinuousClock.now
        while !watchdog.isSleeping {
            #expect(seconds(since: asleep) < 10, "the watchdog never slept")
            Thread.sleep(forTimeInterval: 0.02)
        }
        let reader = silentFIFO(scratch)
        defer { close(reader) }
        let start = ContinuousClock.now
        let slot = watchdog.arm(bound, port: "blocked", since: start)
        // Waits at most 5 s for a byte that never comes, unless the watchdog interrupts it.
        var waiting = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
        let polled = poll(&waiting, 1, 5000)
        let failure = errno
        let fired = watchdog.disarm(slot)
        #expect(polled == -1 && failure == EINTR)
        #expect(fired == .stalled(port: "blocked", seconds: "0.2"))
        #expect(seconds(since: start) < 2.5)
    }
}
