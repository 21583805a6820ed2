// CALSA re-exports the C library headers; in whole-module builds the compiler attributes
// some Glibc struct members (timespec, sigaction) to it, so MemberImportVisibility needs it.
internal import CALSA
import Glibc
import Synchronization

/// Wall-clock limits on the blocking I/O of one audio port (issue 13: every wait is
/// bounded on the wall clock too).
///
/// The protocol layers count time in samples and never read a clock; what they cannot see
/// is a transfer that never returns: a frozen peer on a FIFO (`grokctl emulate` stopped
/// with SIGSTOP), a stalled ALSA device. A bound says, on the monotonic clock
/// (`ContinuousClock`):
/// - how long one blocking call may go on (``stallSeconds``: a transfer of a few
///   milliseconds of audio that blocks for seconds means the other end is frozen);
/// - the deadlines of whatever the I/O is part of (``setLimit(_:seconds:)``: a fleet step,
///   the whole device run);
/// - whether someone asked the I/O to stop (``cancel()``, or the `isCancelled` closure it
///   polls: a stop signal); that interrupts only a call blocked longer than
///   ``cancelGraceSeconds`` (moving I/O is left to reach its safe point).
///
/// ``guarding(port:_:)`` runs a blocking call under the bound. When it fires, a watchdog
/// thread interrupts the blocked system call (a signal with a do-nothing handler, installed
/// without `SA_RESTART`, sent to that thread only; repeated every ``WallClockWatchdog/repeatInterval``
/// until the call returns, so a signal that lands just before the call blocks is not lost);
/// the call then throws the bound's error (``AudioError/stalled(port:seconds:)``,
/// ``AudioError/timedOut(port:what:seconds:)`` or ``AudioError/cancelled(port:)``),
/// whatever the port's own error was. A bound that fired stays fired: every later call
/// throws the same error at once (the port is dead, or the run is stopping).
///
/// Shared between the thread doing the I/O and the ones that cancel it; its state is
/// behind a `Mutex` of its own. Arming a call touches only the calling thread's slot in
/// the watchdog (``WallClockWatchdog``), so many threads doing bounded I/O at once never
/// wait for one another.
public final class WallClockBound: Sendable {
    /// A deadline of something the I/O is part of.
    struct Limit: Sendable {
        var name: String
        var seconds: Double
        var deadline: ContinuousClock.Instant
    }

    struct State: Sendable {
        var stallSeconds: Double?
        var limits: [Limit] = []
        var cancelled = false
        var fired: AudioError?
    }

    private let state: Mutex<State>
    /// Interrupting signals the watchdog sent to calls under this bound (tests read it).
    let signalsSent = Atomic<Int>(0)
    private let externalCancel: (@Sendable () -> Bool)?

    /// - Parameters:
    ///   - stallSeconds: the longest one blocking call may take (`nil`: no such bound).
    ///   - isCancelled: polled by the watchdog while a call is blocked (and before each
    ///     call); `true` stops the I/O with ``AudioError/cancelled(port:)``.
    public init(stallSeconds: Double? = nil, isCancelled: (@Sendable () -> Bool)? = nil) {
        state = Mutex(State(stallSeconds: stallSeconds))
        externalCancel = isCancelled
    }

    /// The longest one blocking call may take.
    public var stallSeconds: Double? {
        state.withLock { $0.stallSeconds }
    }

    /// Sets (or, with `nil`, removes) the deadline called `name` (`"step region"`,
    /// `"device run"`): `seconds` from now on the monotonic clock.
    public func setLimit(_ name: String, seconds: Double?) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.limits.removeAll { $0.name == name }
            if let seconds {
                state.limits.append(Limit(name: name, seconds: seconds, deadline: now.advanced(by: .seconds(seconds))))
            }
        }
    }

    /// Stops the I/O: a call blocked longer than ``cancelGraceSeconds`` is interrupted with ``AudioError/cancelled(port:)`` (and so is every later call).
    public func cancel() {
        state.withLock { $0.cancelled = true }
        WallClockWatchdog.shared.poke()
    }

    /// Whether ``cancel()`` was called or the `isCancelled` closure says so.
    public var isCancelled: Bool {
        state.withLock { $0.cancelled } || externalCancel?() == true
    }

    /// The error the bound fired with, if it fired (stays set).
    public var fired: AudioError? {
        state.withLock { $0.fired }
    }

    /// How long a call must have been blocked before a cancellation interrupts it. A stop
    /// ends a step at its safe point (docs/fleet.md, "Signals"), so cancellation never cuts
    /// I/O that is moving: a transfer takes well under a millisecond on a FIFO and a period
    /// or two (tens of milliseconds) on a sound card. Only a call blocked longer than this,
    /// on a reader that stopped answering, is interrupted.
    public static let cancelGraceSeconds = 0.25

    /// The error to end with now, if any (and records it as fired): a deadline passed, or
    /// (with `blockedSince`) a call blocked longer than ``stallSeconds``, or cancelled while
    /// blocked longer than ``cancelGraceSeconds``.
    func check(port: String, now: ContinuousClock.Instant, blockedSince: ContinuousClock.Instant?) -> AudioError? {
        let blockedTooLongToWait = blockedSince.map { $0.advanced(by: .seconds(Self.cancelGraceSeconds)) <= now } ?? false
        let cancelled = blockedTooLongToWait && externalCancel?() == true
        return state.withLock { state in
            if let fired = state.fired { return fired }
            var error: AudioError?
            if (state.cancelled && blockedTooLongToWait) || cancelled {
                error = .cancelled(port: port)
            } else if let passed = Self.earliestPassed(state.limits, now: now) {
                error = .timedOut(port: port, what: passed.name, seconds: Self.text(passed.seconds))
            } else if let since = blockedSince, let stall = state.stallSeconds, since.advanced(by: .seconds(stall)) <= now {
                error = .stalled(port: port, seconds: Self.text(stall))
            }
            if let error { state.fired = error }
            return error
        }
    }

    /// The deadline that passed first, if any passed (without building a list: this runs
    /// before every transfer).
    private static func earliestPassed(_ limits: [Limit], now: ContinuousClock.Instant) -> Limit? {
        var passed: Limit?
        for limit in limits where limit.deadline <= now && passed.map({ limit.deadline < $0.deadline }) ?? true {
            passed = limit
        }
        return passed
    }

    /// When the watchdog must look again at a call blocked since `since`: the earliest of
    /// the deadlines and the stall bound.
    func nextWake(blockedSince since: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        state.withLock { state in
            var wake = state.limits.map(\.deadline).min()
            if let stall = state.stallSeconds {
                let stalled = since.advanced(by: .seconds(stall))
                wake = wake.map { min($0, stalled) } ?? stalled
            }
            return wake
        }
    }

    /// Throws the error the bound fires with now (a deadline passed, or it fired before), if
    /// any. A cancellation alone does not stop a call that has not blocked.
    public func check(port: String) throws(AudioError) {
        if let error = check(port: port, now: .now, blockedSince: nil) { throw error }
    }

    /// Runs `body`, a call that may block (a transfer, opening a port), under the bound on
    /// the calling thread. When the bound fires while `body` is blocked, the call is
    /// interrupted and this throws the bound's error instead of whatever `body` threw.
    public func guarding<T>(port: String, _ body: () throws -> T) throws -> T {
        let slot = try arm(port: port)
        let result = Result { try body() }
        // It returned, but maybe only because it was interrupted (a short read).
        if let fired = WallClockWatchdog.shared.disarm(slot) { throw fired }
        return try result.get()
    }

    /// The same for a body with typed throws of ``AudioError``.
    public func guardingTransfer(port: String, _ body: () throws(AudioError) -> Void) throws(AudioError) {
        let slot = try arm(port: port)
        var failure: AudioError?
        do { try body() } catch { failure = error }
        if let fired = WallClockWatchdog.shared.disarm(slot) { throw fired }
        if let failure { throw failure }
    }

    /// Checks the bound (a deadline passed, or it fired before) and arms a call from now on
    /// the calling thread.
    private func arm(port: String) throws(AudioError) -> WatchdogSlot {
        let now = ContinuousClock.now
        if let error = check(port: port, now: now, blockedSince: nil) { throw error }
        return WallClockWatchdog.shared.arm(self, port: port, since: now)
    }

    static func text(_ seconds: Double) -> String {
        let tenths = (seconds * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}

// MARK: - The watchdog

/// One thread's place in the watchdog, registered the first time the thread arms a call
/// and removed when it exits: the calls blocked on it under a bound, innermost last (a call
/// under a bound may itself open or close a port under a bound of its own).
///
/// Arming and disarming take this slot's own lock, which only its thread and the watchdog
/// (once per scan) ever take: threads doing I/O never wait for one another.
final class WatchdogSlot: Sendable {
    struct Call {
        let bound: WallClockBound
        let port: String
        /// When the call began, moved later by the time the watchdog itself could not run
        /// (the process starved of CPU: that wait is not the peer's fault).
        var since: ContinuousClock.Instant
        /// Set by the watchdog when the bound fired during this call.
        var fired: AudioError?
        var lastSignal: ContinuousClock.Instant?
    }

    struct State {
        var calls: [Call] = []
        /// Calls armed so far, and how many the watchdog had seen when it last looked:
        /// while they differ the thread is doing bounded I/O, and the watchdog stays awake.
        var arms: UInt64 = 0
        var armsSeen: UInt64 = 0
    }

    let thread: pthread_t
    /// Tells the slots apart for tests (an object's address is reused once it is freed).
    let serial: UInt64
    let watchdog: WallClockWatchdog
    let state = Mutex(State())
    /// Armed calls whose bound fired: while none has, ``WallClockWatchdog/firedOnThisThread()``
    /// is one atomic load (ALSA's file plugin is read a frame at a time, and asked after
    /// every frame).
    let firedCalls = Atomic<Int>(0)

    init(thread: pthread_t, serial: UInt64, watchdog: WallClockWatchdog) {
        self.thread = thread
        self.serial = serial
        self.watchdog = watchdog
    }

    /// The error of the innermost armed call whose bound fired, if any.
    var fired: AudioError? {
        guard firedCalls.load(ordering: .acquiring) > 0 else { return nil }
        return state.withLock { $0.calls.last { $0.fired != nil }?.fired }
    }

    func arm(_ bound: WallClockBound, port: String, since: ContinuousClock.Instant) {
        state.withLock { state in
            state.calls.append(Call(bound: bound, port: port, since: since))
            state.arms &+= 1
        }
    }

    /// Ends the innermost call; the error its bound fired with, if it did.
    func disarm() -> AudioError? {
        state.withLock { state in
            let call = state.calls.removeLast()
            if call.fired != nil { firedCalls.subtract(1, ordering: .releasing) }
            return call.fired
        }
    }

    /// The watchdog's look at this thread: fires the bound of a call blocked past it and
    /// signals the thread (again every `repeatInterval` until the call returns). Sets
    /// `active` when the thread armed a call since the last look or has one armed; returns
    /// when to look again for the armed calls (`nil`: none armed).
    ///
    /// The thread is signalled under this slot's lock, for a call still armed: it is alive
    /// and inside that call (a thread that has exited has no slot; one that disarmed is
    /// not signalled).
    ///
    /// `starved` is how long the watchdog could not run since its last look beyond the
    /// interval it asked for (``WallClockWatchdog/starvation(expected:now:)``): the process was
    /// starved of CPU, its own threads did not run, so that time does not count towards the
    /// stall bound of the calls armed then (a peer is frozen when it sent nothing while we
    /// were there to read, not when we were not).
    func watch(now: ContinuousClock.Instant, soon: ContinuousClock.Instant, starved: Duration = .zero,
               active: inout Bool) -> ContinuousClock.Instant? {
        state.withLock { state in
            if state.arms != state.armsSeen {
                state.armsSeen = state.arms
                active = true
            }
            guard !state.calls.isEmpty else { return nil }
            active = true
            var next: ContinuousClock.Instant?
            for index in state.calls.indices {
                if starved > .zero, state.calls[index].fired == nil {
                    state.calls[index].since = min(now, state.calls[index].since.advanced(by: starved))
                }
                let call = state.calls[index]
                let due: ContinuousClock.Instant
                if let error = call.fired ?? call.bound.check(port: call.port, now: now, blockedSince: call.since) {
                    if call.fired == nil {
                        state.calls[index].fired = error
                        firedCalls.add(1, ordering: .releasing)
                    }
                    // At most once per interval per call, however often the watchdog is woken.
                    // (A little slack, so a wake-up a hair early does not skip a whole interval.)
                    let interval = WallClockWatchdog.repeatInterval
                    if call.lastSignal.map({ $0.advanced(by: interval * 0.9) <= now }) ?? true {
                        state.calls[index].lastSignal = now
                        pthread_kill(thread, WallClockWatchdog.signal)
                        call.bound.signalsSent.add(1, ordering: .relaxed)
                    }
                    // Its deadlines have passed: only the repeat is due. (Waking at a deadline
                    // already passed made the watchdog spin, queueing real-time signals faster
                    // than the blocked thread could take them: it never left its handler.)
                    due = soon
                } else {
                    due = call.bound.nextWake(blockedSince: call.since).map { max(min($0, soon), now) } ?? soon
                }
                next = min(next ?? due, due)
            }
            return next
        }
    }
}

/// The thread that interrupts calls blocked past their bound. Started on first use.
///
/// Each thread that arms a call has a slot of its own (``WatchdogSlot``), found through a
/// thread-specific key and removed by the key's destructor when the thread exits. Arming
/// neither takes a lock shared with other threads nor wakes the watchdog: while calls are
/// being armed the watchdog looks at every slot each ``repeatInterval`` (sooner when a
/// deadline or a stall bound is due), which also polls cancellation and repeats the
/// signal to a fired call until it returns. After ``quietScans`` looks with nothing armed
/// it sleeps until a thread arms a call again (that one wakes it), or ``WallClockBound/cancel()``.
final class WallClockWatchdog: Sendable {
    static let shared = WallClockWatchdog()

    /// How often armed calls are looked at: the stall bound and deadlines are checked,
    /// cancellation polled and a fired call signalled again.
    static let repeatInterval: Duration = .milliseconds(20)

    /// Looks with nothing armed before the watchdog sleeps until a call is armed.
    static let quietScans = 25

    /// The signal that interrupts a blocked call: the first real-time signal glibc leaves
    /// to applications plus 7, handled by a function that does nothing.
    static let signal: Int32 = __libc_current_sigrtmin() + 7

    private let slots = Mutex<(registered: [WatchdogSlot], serials: UInt64)>(([], 0))
    /// The calling thread's slot (a retained ``WatchdogSlot``); its destructor unregisters it.
    private let key: pthread_key_t
    /// Set while the watchdog sleeps with nothing armed: the next arm wakes it.
    private let sleeping = Atomic<Bool>(false)
    private let wake = Mutex<Bool>(false)
    private let condition = Condition()

    /// Set once a watchdog exists (a process that never bounds I/O never starts one).
    private static let started = Atomic<Bool>(false)

    /// The error the bound of a call armed on this thread fired with, if it did: what a
    /// port throws when a system call returned `EINTR` (or failed) because the watchdog
    /// interrupted it. Reads only the calling thread's own slot.
    static func firedOnThisThread() -> AudioError? {
        guard started.load(ordering: .acquiring) else { return nil }
        return shared.registeredSlot()?.fired
    }

    /// A watchdog with its own thread and slots (``shared`` is the one the bounds use;
    /// tests make their own to watch it sleep and wake).
    init() {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            let slot = Unmanaged<WatchdogSlot>.fromOpaque(pointer).takeRetainedValue()
            slot.watchdog.unregister(slot)
        }
        self.key = key
        Self.started.store(true, ordering: .releasing)
        Self.installHandler()
        var thread = pthread_t()
        pthread_create(&thread, nil, { watchdog in
            Unmanaged<WallClockWatchdog>.fromOpaque(watchdog!).takeRetainedValue().loop()
            return nil
        }, Unmanaged.passRetained(self).toOpaque())
        pthread_detach(thread)
    }

    /// Installs the do-nothing handler, without `SA_RESTART`, so a blocked `read`, `write`,
    /// `open` or `poll` returns `EINTR`.
    private static func installHandler() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(signal, &action, nil)
    }

    /// Arms a call on the calling thread, blocked from `since` under `bound`; the slot to
    /// disarm it on.
    func arm(_ bound: WallClockBound, port: String, since: ContinuousClock.Instant) -> WatchdogSlot {
        let slot = registeredSlot() ?? register()
        slot.arm(bound, port: port, since: since)
        // Either this sees the watchdog going to sleep, or the watchdog's last look before
        // sleeping sees this arm (each side's fence orders its write before its read).
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .relaxed), sleeping.exchange(false, ordering: .relaxed) { poke() }
        return slot
    }

    /// Ends the innermost call armed on `slot` (the calling thread's); the error its bound
    /// fired with, if it did.
    func disarm(_ slot: WatchdogSlot) -> AudioError? {
        slot.disarm()
    }

    /// Wakes the watchdog to look at the armed calls now.
    func poke() {
        condition.signal { wake.withLock { $0 = true } }
    }

    /// Whether the watchdog sleeps until a call is armed (tests read it).
    var isSleeping: Bool { sleeping.load(ordering: .relaxed) }

    /// The serials of the registered slots, and of the calling thread's (tests read them).
    var registeredSerials: Set<UInt64> { slots.withLock { Set($0.registered.map(\.serial)) } }
    var serialOfThisThread: UInt64? { registeredSlot()?.serial }

    private func registeredSlot() -> WatchdogSlot? {
        pthread_getspecific(key).map { Unmanaged<WatchdogSlot>.fromOpaque($0).takeUnretainedValue() }
    }

    private func register() -> WatchdogSlot {
        // Threads may have been started with signals blocked (Foundation's `Process` starts
        // children so); this one must hear the watchdog.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, Self.signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        let slot = slots.withLock { slots in
            slots.serials += 1
            let slot = WatchdogSlot(thread: pthread_self(), serial: slots.serials, watchdog: self)
            slots.registered.append(slot)
            return slot
        }
        pthread_setspecific(key, Unmanaged.passRetained(slot).toOpaque())
        return slot
    }

    /// The thread of `slot` exits: the watchdog no longer looks at it (nor signals it).
    private func unregister(_ slot: WatchdogSlot) {
        slots.withLock { slots in slots.registered.removeAll { $0 === slot } }
    }

    /// How late a look may come before the time past it counts as starvation: scheduling
    /// jitter on a busy machine stays below it.
    static let starvationSlack: Duration = .milliseconds(200)

    /// The time the watchdog could not run: how much later than `expected` (the wake it
    /// asked for) this look at `now` came, less ``starvationSlack``; zero when on time.
    static func starvation(expected: ContinuousClock.Instant?, now: ContinuousClock.Instant) -> Duration {
        guard let expected else { return .zero }
        let late = expected.duration(to: now) - starvationSlack
        return late > .zero ? late : .zero
    }

    private func loop() {
        var quiet = 0
        // The wake the last look asked for while calls were armed (nil: none armed).
        var expected: ContinuousClock.Instant?
        while true {
            let now = ContinuousClock.now
            let soon = now.advanced(by: Self.repeatInterval)
            let starved = Self.starvation(expected: expected, now: now)
            var next: ContinuousClock.Instant?
            var active = false
            slots.withLock { slots in
                for slot in slots.registered {
                    if let due = slot.watch(now: now, soon: soon, starved: starved, active: &active) { next = min(next ?? due, due) }
                }
            }
            expected = next
            quiet = active ? 0 : quiet + 1
            if active, sleeping.load(ordering: .relaxed) { sleeping.store(false, ordering: .relaxed) }
            if next == nil && quiet < Self.quietScans { next = soon }
            if next == nil && !sleeping.load(ordering: .relaxed) {
                // Say so, then look once more before sleeping: an arm after this look sees it.
                sleeping.store(true, ordering: .relaxed)
                atomicMemoryFence(ordering: .sequentiallyConsistent)
                continue
            }
            condition.wait(until: next) { wake.withLock { woken in defer { woken = false }; return woken } }
        }
    }
}

/// A condition variable on the monotonic clock, for the watchdog's sleep.
final class Condition: @unchecked Sendable {
    // @unchecked: the pthread objects are only touched through pthread calls, which are
    // thread-safe; they live as long as the object.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func signal(_ change: () -> Void) {
        pthread_mutex_lock(mutex)
        change()
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Sleeps until `deadline` (`nil`: until signalled) unless `woken()` says it was signalled.
    func wait(until deadline: ContinuousClock.Instant?, woken: () -> Bool) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if woken() { return }
        guard let deadline else {
            pthread_cond_wait(cond, mutex)
            return
        }
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = remaining.components
        var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var wholeSeconds = Int(now.tv_sec) + Int(seconds)
        if nanoseconds >= 1_000_000_000 { wholeSeconds += 1; nanoseconds -= 1_000_000_000 }
        var until = timespec(tv_sec: wholeSeconds, tv_nsec: nanoseconds)
        _ = pthread_cond_timedwait(cond, mutex, &until)
    }
}
