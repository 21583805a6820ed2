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
/// behind a `Mutex`.
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
            } else if let passed = state.limits.filter({ $0.deadline <= now }).min(by: { $0.deadline < $1.deadline }) {
                error = .timedOut(port: port, what: passed.name, seconds: Self.text(passed.seconds))
            } else if let since = blockedSince, let stall = state.stallSeconds, since.advanced(by: .seconds(stall)) <= now {
                error = .stalled(port: port, seconds: Self.text(stall))
            }
            if let error { state.fired = error }
            return error
        }
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
        try check(port: port)
        let armed = WallClockWatchdog.shared.arm(self, port: port)
        defer { WallClockWatchdog.shared.disarm(armed) }
        do {
            let value = try body()
            // It returned, but maybe only because it was interrupted (a short read).
            if let fired = armed.firedError { throw fired }
            return value
        } catch {
            if let fired = armed.firedError { throw fired }
            throw error
        }
    }

    /// The same for a body with typed throws of ``AudioError``.
    public func guardingTransfer(port: String, _ body: () throws(AudioError) -> Void) throws(AudioError) {
        try check(port: port)
        let armed = WallClockWatchdog.shared.arm(self, port: port)
        defer { WallClockWatchdog.shared.disarm(armed) }
        do {
            try body()
        } catch {
            throw armed.firedError ?? error
        }
        if let fired = armed.firedError { throw fired }
    }

    static func text(_ seconds: Double) -> String {
        let tenths = (seconds * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}

// MARK: - The watchdog

/// One blocking call under a bound, on one thread.
final class ArmedCall: Sendable {
    let bound: WallClockBound
    let port: String
    let thread: pthread_t
    let since: ContinuousClock.Instant
    private let error = Mutex<AudioError?>(nil)
    private let lastSignal = Mutex<ContinuousClock.Instant?>(nil)

    init(bound: WallClockBound, port: String, thread: pthread_t, since: ContinuousClock.Instant) {
        self.bound = bound
        self.port = port
        self.thread = thread
        self.since = since
    }

    /// Set by the watchdog when the bound fired during this call.
    var firedError: AudioError? { error.withLock { $0 } }

    /// Whether the call should be signalled (again) now: not signalled in the last `interval`.
    func signalDue(now: ContinuousClock.Instant, interval: Duration) -> Bool {
        lastSignal.withLock { last in
            // A little slack, so a wake-up a hair early does not skip a whole interval.
            if let last, last.advanced(by: interval * 0.9) > now { return false }
            last = now
            return true
        }
    }

    /// Records the error; whether this was the first time.
    func fire(_ fired: AudioError) -> Bool {
        error.withLock {
            guard $0 == nil else { return false }
            $0 = fired
            return true
        }
    }
}

/// The thread that interrupts calls blocked past their bound. Started on first use; it
/// sleeps until the earliest wake-up of the armed calls, or ``repeatInterval`` while any
/// is armed (to poll cancellation and to repeat its signal until the call returns).
final class WallClockWatchdog: Sendable {
    static let shared = WallClockWatchdog()

    /// How often an armed call's cancellation is polled and a fired call is signalled again.
    static let repeatInterval: Duration = .milliseconds(20)

    /// The signal that interrupts a blocked call: the first real-time signal glibc leaves
    /// to applications plus 7, handled by a function that does nothing.
    static let signal: Int32 = __libc_current_sigrtmin() + 7

    private let armed = Mutex<[ObjectIdentifier: ArmedCall]>([:])
    private let wake = Mutex<Bool>(false)
    private let condition = Condition()

    /// Set once the watchdog exists (a process that never bounds I/O never starts it).
    private static let started = Atomic<Bool>(false)
    /// Armed calls whose bound fired: while none has, ``firedOnThisThread()`` is one atomic
    /// load (ALSA's file plugin is read a frame at a time, and asked after every frame).
    private static let firedCalls = Atomic<Int>(0)

    /// The error the bound of the call armed on this thread fired with, if it did: what a
    /// port throws when a system call returned `EINTR` (or failed) because the watchdog
    /// interrupted it.
    static func firedOnThisThread() -> AudioError? {
        guard started.load(ordering: .acquiring), firedCalls.load(ordering: .acquiring) > 0 else { return nil }
        let me = pthread_self()
        return shared.armed.withLock { calls in
            calls.values.first { pthread_equal($0.thread, me) != 0 }?.firedError
        }
    }

    private init() {
        Self.started.store(true, ordering: .releasing)
        Self.installHandler()
        // The thread reaches `shared` only once this initializer has returned.
        var thread = pthread_t()
        pthread_create(&thread, nil, { _ in
            WallClockWatchdog.shared.loop()
            return nil
        }, nil)
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

    func arm(_ bound: WallClockBound, port: String) -> ArmedCall {
        // Threads may have been started with signals blocked (Foundation's `Process` starts
        // children so); this one must hear the watchdog.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, Self.signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        let call = ArmedCall(bound: bound, port: port, thread: pthread_self(), since: .now)
        armed.withLock { $0[ObjectIdentifier(call)] = call }
        poke()
        return call
    }

    func disarm(_ call: ArmedCall) {
        armed.withLock { calls in
            if calls.removeValue(forKey: ObjectIdentifier(call)) != nil, call.firedError != nil {
                Self.firedCalls.subtract(1, ordering: .releasing)
            }
        }
    }

    /// Wakes the watchdog to look at the armed calls now.
    func poke() {
        condition.signal { wake.withLock { $0 = true } }
    }

    private func loop() {
        while true {
            let now = ContinuousClock.now
            let calls = armed.withLock { Array($0.values) }
            var next: ContinuousClock.Instant? = nil
            // Cancellation is polled, and a fired call signalled again, so look again soon
            // while anything is armed.
            let soon = now.advanced(by: Self.repeatInterval)
            for call in calls {
                let due: ContinuousClock.Instant
                if let error = call.firedError ?? call.bound.check(port: call.port, now: now, blockedSince: call.since) {
                    // Counted under the lock disarm takes, so a call disarmed meanwhile is not counted.
                    armed.withLock { calls in
                        if calls[ObjectIdentifier(call)] != nil, call.fire(error) { Self.firedCalls.add(1, ordering: .releasing) }
                    }
                    // At most once per interval per call, however often other calls wake the loop.
                    if call.signalDue(now: now, interval: Self.repeatInterval) {
                        pthread_kill(call.thread, Self.signal)
                        call.bound.signalsSent.add(1, ordering: .relaxed)
                    }
                    // Its deadlines have passed: only the repeat is due. (Waking at a deadline
                    // already passed made this loop spin, queueing real-time signals faster
                    // than the blocked thread could take them: it never left its handler.)
                    due = soon
                } else {
                    due = call.bound.nextWake(blockedSince: call.since).map { max(min($0, soon), now) } ?? soon
                }
                next = next.map { min($0, due) } ?? due
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
