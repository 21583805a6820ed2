import GrokBasics
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("SystemCall: the one errno funnel")
struct SystemCallTests {
    @Test("a call interrupted by a signal (EINTR) is made again; its value is returned")
    func retriesInterrupted() throws {
        var calls = 0
        let value = try SystemCall.value("read") { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(value == 42)
        #expect(calls == 3)
    }

    @Test("a failure throws the call's name, its errno as it was right after the call, and the path")
    func failure() {
        #expect(throws: SystemCallError(call: "open", errno: ENOENT, path: "/nonexistent/x")) {
            try SystemCall.value("open", path: "/nonexistent/x") { open("/nonexistent/x", O_RDONLY) }
        }
        let error = SystemCallError(call: "fsync", errno: ENOSPC)
        #expect(error.errnoName == "ENOSPC")
        #expect(error.description == "fsync: ENOSPC")
    }

    @Test("a caller that says no to a retry gets the EINTR (a close, or a call its own deadline interrupted)")
    func interruptedNotRetried() {
        var calls = 0
        #expect(throws: SystemCallError(call: "close", errno: EINTR)) {
            try SystemCall.value("close", retryInterrupted: { false }) { () -> Int32 in
                calls += 1
                errno = EINTR
                return -1
            }
        }
        #expect(calls == 1)
    }

    @Test("writeAll and readAll loop over short transfers through a pipe")
    func pipeRoundTrip() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let bytes = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try SystemCall.writeAll(fds[1], bytes)
        close(fds[1])
        var read = [UInt8](repeating: 0, count: 5000)
        let count = try read.withUnsafeMutableBytes { buffer in try SystemCall.readAll(fds[0], buffer) }
        #expect(count == 4000)
        #expect(Array(read[..<count]) == bytes)
    }
}
