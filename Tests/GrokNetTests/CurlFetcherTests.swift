import Foundation
import GrokBasics
import NetTestSupport
import Synchronization
import Testing

@testable import GrokNet

/// Deterministic image bytes.
func pattern(_ count: Int, seed: Int = 7) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 8) &+ seed) }
}

/// Records the backoff pauses (and really takes them: they are milliseconds in tests).
final class SleepLog: Sendable {
    private let log = Mutex<[Duration]>([])

    var pauses: [Duration] { log.withLock { $0 } }

    var sleeper: CurlFetcher.Sleeper {
        { [self] duration in
            log.withLock { $0.append(duration) }
            try? await Task.sleep(for: duration)
        }
    }
}

/// Records progress reports.
final class ProgressLog: Sendable {
    private let log = Mutex<[(Int64, Int64?)]>([])

    var reports: [(Int64, Int64?)] { log.withLock { $0 } }

    func record(_ done: Int64, _ total: Int64?) { log.withLock { $0.append((done, total)) } }
}

/// Runs `body` and returns the NetError it threw, or nil if it succeeded.
func failure<T>(_ body: () async throws -> T) async -> NetError? {
    do {
        _ = try await body()
        return nil
    } catch let error as NetError {
        return error
    } catch {
        Issue.record("not a NetError: \(error)")
        return nil
    }
}

/// Quick timeouts (2 s), tiny backoff, the server's test CA pinned, no proxy from the environment.
func testOptions(_ server: NginxServer, retries: Int = 2) -> TransferOptions {
    TransferOptions(
        trust: .pinned(caBundle: server.pki.caCertificate), connectTimeout: .seconds(2), lowSpeedLimit: 1024,
        stallTime: .seconds(2), maxRetries: retries,
        backoff: Backoff(initial: .milliseconds(10), multiplier: 2, maximum: .milliseconds(40)), maxRedirects: 3,
        proxy: .direct)
}

/// Asserts the scratch directory holds `partial` and no file renamed from it.
func expectNotRenamed(_ scratch: NetScratch, partial: String) throws {
    let names = try FileManager.default.contentsOfDirectory(atPath: scratch.file("dl"))
    #expect(names == [partial])
}

@Suite("CurlFetcher against nginx over HTTPS")
struct CurlFetcherTests {
    let scratch = NetScratch()
    let sleeps = SleepLog()
    var fetcher: CurlFetcher { CurlFetcher(sleeper: sleeps.sleeper) }

    init() throws {
        try FileManager.default.createDirectory(atPath: scratch.file("dl"), withIntermediateDirectories: true)
    }

    var partial: String { scratch.file("dl/image.partial") }
    var partialBytes: [UInt8] { scratch.read("dl/image.partial") ?? [] }

    @Test("a 200 download writes the partial file, fsynced, and reports progress")
    func plainDownload() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        let image = pattern(300_000)
        try server.serve("image.bin", image)
        let progress = ProgressLog()
        let url = server.base + "/image.bin"
        let result = try await fetcher.download(url, to: partial, options: testOptions(server)) { progress.record($0, $1) }
        #expect(result.status == 200)
        #expect(result.size == 300_000)
        #expect(result.resumedFrom == 0)
        #expect(result.attempts == 1)
        #expect(result.validators.etag != nil)
        #expect(partialBytes == image)
        #expect(progress.reports.last.map { $0.0 } == 300_000)
        #expect(progress.reports.last.map { $0.1 } == 300_000)
        #expect(sleeps.pauses.isEmpty)
        try expectNotRenamed(scratch, partial: "image.partial")
    }

    @Test("a connection dropped mid-file is resumed with a Range request; the bytes end identical")
    func resumeAfterDrop() async throws {
        let image = pattern(200_000)
        let upstream = try ScriptedUpstream { request, connection in
            if let range = request.headers["range"], range.hasPrefix("bytes="), let start = Int(range.dropFirst(6).dropLast()) {
                connection.sendHead(
                    "206 Partial Content",
                    ["Content-Length": "\(image.count - start)", "Content-Range": "bytes \(start)-\(image.count - 1)/\(image.count)"])
                connection.send(Array(image[start...]))
            } else {
                connection.sendHead("200 OK", ["Content-Length": "\(image.count)"])
                connection.send(Array(image[..<80_000]))  // then the connection drops
            }
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        let url = server.base + "/up/image.bin"
        let result = try await fetcher.download(url, to: partial, options: testOptions(server))
        #expect(partialBytes == image)
        #expect(result.status == 206)
        #expect(result.attempts == 2)
        #expect(result.resumedFrom > 0 && result.resumedFrom <= 80_000)
        let requests = upstream.requests
        #expect(requests.count == 2)
        #expect(requests.first?.headers["range"] == nil)
        #expect(requests.last?.headers["range"] == "bytes=\(result.resumedFrom)-")
        #expect(server.accessLog().last?.hasPrefix("GET /up/image.bin 206 \"bytes=\(result.resumedFrom)-\"") == true)
        #expect(sleeps.pauses == [.milliseconds(10)])
        try expectNotRenamed(scratch, partial: "image.partial")
    }

    @Test("a partial file is continued where it stopped")
    func resumeExistingPartial() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        let image = pattern(50_000)
        try server.serve("image.bin", image)
        try scratch.write("dl/image.partial", Array(image[..<12_345]))
        let result = try await fetcher.download(server.base + "/image.bin", to: partial, options: testOptions(server))
        #expect(result.status == 206)
        #expect(result.resumedFrom == 12_345)
        #expect(result.bytesReceived == 50_000 - 12_345)
        #expect(partialBytes == image)
        #expect(server.accessLog().last?.hasPrefix("GET /image.bin 206 \"bytes=12345-\"") == true)
    }

    @Test("a complete partial file gets 416 and is reported complete; a stale longer one restarts")
    func rangeNotSatisfiable() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        let image = pattern(4_000)
        try server.serve("image.bin", image)
        try scratch.write("dl/image.partial", image)
        let done = try await fetcher.download(server.base + "/image.bin", to: partial, options: testOptions(server))
        #expect(done.status == 416)
        #expect(done.size == 4_000)
        #expect(partialBytes == image)

        try scratch.write("dl/image.partial", pattern(6_000, seed: 99))
        let again = try await fetcher.download(server.base + "/image.bin", to: partial, options: testOptions(server))
        #expect(again.status == 200)
        #expect(again.attempts == 2)
        #expect(partialBytes == image)
    }

    @Test("a 500 is retried after a backoff pause, and the error page never reaches the file")
    func retryAfter500() async throws {
        let image = pattern(10_000)
        let upstream = try ScriptedUpstream { request, connection in
            if request.index == 0 {
                connection.sendHead("500 Internal Server Error", ["Content-Length": "5"])
                connection.send("oops\n")
            } else {
                connection.sendHead("200 OK", ["Content-Length": "\(image.count)"])
                connection.send(image)
            }
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        let result = try await fetcher.download(server.base + "/up/fw.bin", to: partial, options: testOptions(server))
        #expect(result.attempts == 2)
        #expect(result.status == 200)
        #expect(partialBytes == image)
        #expect(upstream.requests.count == 2)
        #expect(sleeps.pauses == [.milliseconds(10)])
    }

    @Test("a persistent 500 fails after the retries, with exponential backoff")
    func persistent500() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        let url = server.base + "/always500"
        let error = try #require(await failure { try await fetcher.download(url, to: partial, options: testOptions(server)) })
        #expect(error == .httpStatus(url: url, status: 500))
        #expect(error.description.contains(url))
        #expect(error.code == "net_http_status")
        #expect(sleeps.pauses == [.milliseconds(10), .milliseconds(20)])
        #expect(server.accessLog().filter { $0.hasPrefix("GET /always500 500") }.count == 3)
        #expect(partialBytes.isEmpty)
        try expectNotRenamed(scratch, partial: "image.partial")
    }

    @Test("a 404 is not retried")
    func notFoundNotRetried() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        let url = server.base + "/missing.bin"
        let error = try #require(await failure { try await fetcher.fetch(url, ifChanged: nil, options: testOptions(server)) })
        #expect(error == .httpStatus(url: url, status: 404))
        #expect(sleeps.pauses.isEmpty)
        #expect(server.accessLog().count == 1)
    }

    @Test("a stalled transfer ends with a low-speed timeout; the partial keeps what arrived")
    func stall() async throws {
        let upstream = try ScriptedUpstream { _, connection in
            connection.sendHead("200 OK", ["Content-Length": "100000"])
            connection.send(pattern(1_000))
            connection.stall()
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        let url = server.base + "/up/slow.bin"
        var options = testOptions(server, retries: 0)
        options.stallTime = .seconds(1)
        // No wall-clock assertion (a busy test run delays every task); without stall detection
        // the upstream would hold the connection for 300 s, then close it: not .stalled.
        let error = try #require(await failure { try await fetcher.download(url, to: partial, options: options) })
        guard case .stalled(let u, let received, let limit, let seconds) = error else {
            Issue.record("expected .stalled, got \(error)")
            return
        }
        #expect(u == url && limit == 1024 && seconds == 1)
        #expect(received == Int64(partialBytes.count))
        #expect(partialBytes == Array(pattern(1_000)[..<partialBytes.count]))
        #expect(error.description.contains(url))
        try expectNotRenamed(scratch, partial: "image.partial")
    }

    @Test("cancelling (flag from the progress callback, or the calling task) stops a stalled transfer")
    func cancel() async throws {
        let upstream = try ScriptedUpstream { _, connection in
            connection.sendHead("200 OK", ["Content-Length": "100000"])
            connection.send(pattern(1_000))
            connection.stall()
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        let flag = CancellationFlag()
        var options = testOptions(server)
        options.cancellation = flag
        options.stallTime = .seconds(30)
        let url = server.base + "/up/slow.bin"
        let error = try #require(
            await failure {
                try await fetcher.download(url, to: partial, options: options) { done, _ in if done > 0 { flag.cancel() } }
            })
        guard case .cancelled(url, _) = error else {
            Issue.record("expected .cancelled, got \(error)")
            return
        }
        #expect(sleeps.pauses.isEmpty)

        // Cancelling the calling task does the same.
        options.cancellation = nil
        let taskFetcher = fetcher
        let target = partial
        let task = Task { try await taskFetcher.download(url, to: target, options: options) }
        while upstream.requests.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        let taskError = try #require(await failure { try await task.value })
        guard case .cancelled(url, _) = taskError else {
            Issue.record("expected .cancelled, got \(taskError)")
            return
        }
    }

    @Test("a response complete but shorter than the signed size is truncated (not retried)")
    func truncatedBody() async throws {
        let upstream = try ScriptedUpstream { _, connection in
            connection.sendHead("200 OK", ["Content-Length": "600"])
            connection.send(pattern(600))
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        var options = testOptions(server)
        options.expectedSize = 1_000
        let url = server.base + "/up/short.bin"
        let error = try #require(await failure { try await fetcher.download(url, to: partial, options: options) })
        #expect(error == .truncated(url: url, received: 600, expected: 1_000))
        #expect(error.description.contains(url))
        #expect(upstream.requests.count == 1)
        #expect(partialBytes == pattern(600))
        try expectNotRenamed(scratch, partial: "image.partial")
    }

    @Test("a Content-Length the body never reaches: retried (Range ignored -> restart from zero), then truncated")
    func wrongContentLength() async throws {
        let upstream = try ScriptedUpstream { _, connection in
            // Ignores Range: always claims 1000 bytes and sends 600.
            connection.sendHead("200 OK", ["Content-Length": "1000"])
            connection.send(pattern(600))
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        let url = server.base + "/up/liar.bin"
        let error = try #require(await failure { try await fetcher.download(url, to: partial, options: testOptions(server)) })
        #expect(error == .truncated(url: url, received: 600, expected: 1_000))
        let requests = upstream.requests
        #expect(requests.count == 3)
        #expect(requests.dropFirst().allSatisfy { $0.headers["range"] == "bytes=600-" })
        // Each 200 restarted the file from zero: never 1200 bytes of concatenated attempts.
        #expect(partialBytes == pattern(600))
        #expect(sleeps.pauses == [.milliseconds(10), .milliseconds(20)])
    }

    @Test("a body longer than the signed size is refused: announced, or counted while it arrives")
    func longerThanExpected() async throws {
        let upstream = try ScriptedUpstream { _, connection in
            connection.sendHead("200 OK")  // no Content-Length: ends when the connection closes
            connection.send(pattern(3_000))
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        try server.serve("big.bin", pattern(2_000))
        var options = testOptions(server)
        options.expectedSize = 1_000

        let announcedURL = server.base + "/big.bin"
        let announced = try #require(await failure { try await fetcher.download(announcedURL, to: partial, options: options) })
        #expect(announced == .longerThanExpected(url: announcedURL, expected: 1_000, size: 2_000, announced: true))
        #expect(partialBytes.isEmpty)

        let streamedURL = server.base + "/up/stream.bin"
        let streamed = try #require(await failure { try await fetcher.download(streamedURL, to: partial, options: options) })
        guard case .longerThanExpected(streamedURL, 1_000, let size, false) = streamed else {
            Issue.record("expected .longerThanExpected while streaming, got \(streamed)")
            return
        }
        #expect(size > 1_000)
        #expect(partialBytes.count <= 1_000)
        #expect(partialBytes == Array(pattern(3_000)[..<partialBytes.count]))
        #expect(sleeps.pauses.isEmpty)
        try expectNotRenamed(scratch, partial: "image.partial")
    }

    @Test("the size cap refuses a large Content-Length before the transfer, and aborts a growing body")
    func sizeCap() async throws {
        let upstream = try ScriptedUpstream { _, connection in
            connection.sendHead("200 OK")
            connection.send(pattern(50_000))
        }
        defer { upstream.stop() }
        let server = try NginxServer(upstream: upstream)
        defer { server.stop() }
        try server.serve("huge.bin", pattern(200_000))
        var options = testOptions(server)
        options.sizeCap = 10_000

        let url = server.base + "/huge.bin"
        let error = try #require(await failure { try await fetcher.download(url, to: partial, options: options) })
        #expect(error == .sizeCapExceeded(url: url, cap: 10_000, size: 200_000, announced: true))
        #expect(error.description.contains(url))
        #expect(partialBytes.isEmpty)

        let streamURL = server.base + "/up/grow.bin"
        let grown = try #require(await failure { try await fetcher.download(streamURL, to: partial, options: options) })
        guard case .sizeCapExceeded(streamURL, 10_000, let size, false) = grown else {
            Issue.record("expected .sizeCapExceeded while streaming, got \(grown)")
            return
        }
        #expect(size > 10_000)
        #expect(partialBytes.count <= 10_000)
        #expect(upstream.requests.count == 1)
    }

    @Test("a redirect loop is a clear error; a single redirect is followed")
    func redirects() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try server.serve("small.bin", pattern(100))
        let url = server.base + "/loop"
        let error = try #require(await failure { try await fetcher.fetch(url, ifChanged: nil, options: testOptions(server)) })
        #expect(error == .tooManyRedirects(url: url, limit: 3))
        #expect(error.description.contains(url))
        #expect(sleeps.pauses.isEmpty)

        let moved = try await fetcher.fetch(server.base + "/moved", ifChanged: nil, options: testOptions(server))
        guard case .fetched(let document) = moved else {
            Issue.record("expected the redirect target, got \(moved)")
            return
        }
        #expect(document.body == pattern(100))
    }

    @Test("conditional fetches: 304 by ETag and by Last-Modified, 200 when the ETag differs")
    func conditionalFetch() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        let metadata = Array(#"{"channel":"stable","version":"1.2.3"}"#.utf8)
        try server.serve("channel.json", metadata)
        let url = server.base + "/channel.json"
        let first = try await fetcher.fetch(url, ifChanged: nil, options: testOptions(server))
        guard case .fetched(let document) = first else {
            Issue.record("expected a document, got \(first)")
            return
        }
        #expect(document.body == metadata)
        #expect(document.status == 200)
        let etag = try #require(document.validators.etag)
        let lastModified = try #require(document.validators.lastModified)

        let byETag = try await fetcher.fetch(url, ifChanged: Validators(etag: etag), options: testOptions(server))
        guard case .notModified = byETag else {
            Issue.record("expected 304 by ETag, got \(byETag)")
            return
        }
        let byDate = try await fetcher.fetch(url, ifChanged: Validators(lastModified: lastModified), options: testOptions(server))
        guard case .notModified = byDate else {
            Issue.record("expected 304 by Last-Modified, got \(byDate)")
            return
        }
        let changed = try await fetcher.fetch(url, ifChanged: Validators(etag: "\"other\""), options: testOptions(server))
        #expect(changed == .fetched(document))
        let statuses = server.accessLog().map { $0.split(separator: " ")[2] }
        #expect(statuses == ["200", "304", "304", "200"])
    }

    @Test("a server whose CA is not trusted is refused: system store, or another pinned CA")
    func untrustedCA() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try server.serve("image.bin", pattern(1_000))
        let url = server.base + "/image.bin"
        var options = testOptions(server)
        options.trust = .system
        let system = try #require(await failure { try await fetcher.download(url, to: partial, options: options) })
        guard case .untrustedServer(url, nil, ErrorDetail("issuer_unknown")) = system else {
            Issue.record("expected .untrustedServer, got \(system)")
            return
        }
        #expect(system.description.contains(url))

        let other = try TestPKI(in: scratch.path, name: "other")
        options.trust = .pinned(caBundle: other.caCertificate)
        let pinned = try #require(await failure { try await fetcher.download(url, to: partial, options: options) })
        guard case .untrustedServer(url, let bundle, ErrorDetail("issuer_unknown")) = pinned else {
            Issue.record("expected .untrustedServer, got \(pinned)")
            return
        }
        #expect(bundle == other.caCertificate)
        #expect(pinned.description.contains(other.caCertificate))
        #expect(sleeps.pauses.isEmpty)
        #expect(partialBytes.isEmpty)
        #expect(server.accessLog().isEmpty)
    }

    @Test("an explicit proxy is used (a dead one fails to connect)")
    func explicitProxy() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try server.serve("image.bin", pattern(1_000))
        var options = testOptions(server, retries: 0)
        options.proxy = .explicit("http://127.0.0.1:9")
        let url = server.base + "/image.bin"
        let error = try #require(await failure { try await fetcher.download(url, to: partial, options: options) })
        guard case .connectFailed(url, ErrorDetail("connection_refused")) = error else {
            Issue.record("expected .connectFailed, got \(error)")
            return
        }
        #expect(server.accessLog().isEmpty)
    }

    @Test("file:// downloads (USB-stick channels), resumed, and capped")
    func fileURL() async throws {
        let image = pattern(70_000)
        let source = try scratch.write("stick/fw.bin", image)
        let url = "file://" + source
        var options = TransferOptions(maxRetries: 0)
        let whole = try await fetcher.download(url, to: partial, options: options)
        #expect(whole.status == 0)
        #expect(partialBytes == image)

        try scratch.write("dl/image.partial", Array(image[..<30_000]))
        let resumed = try await fetcher.download(url, to: partial, options: options)
        #expect(resumed.resumedFrom == 30_000)
        #expect(resumed.bytesReceived == 40_000)
        #expect(partialBytes == image)

        try scratch.write("dl/image.partial", [])
        options.sizeCap = 1_000
        let error = try #require(await failure { try await fetcher.download(url, to: partial, options: options) })
        #expect(error == .sizeCapExceeded(url: url, cap: 1_000, size: 70_000, announced: true))
        #expect(partialBytes.isEmpty)

        let missing = "file://" + scratch.file("stick/none.bin")
        let gone = try #require(await failure { try await fetcher.fetch(missing, ifChanged: nil, options: TransferOptions()) })
        #expect(gone.description.contains(missing))
    }
}

@Suite("GrokNet values")
struct GrokNetValueTests {
    @Test("backoff doubles up to its maximum")
    func backoff() {
        let backoff = Backoff(initial: .milliseconds(100), multiplier: 2, maximum: .milliseconds(500))
        #expect((1...5).map { backoff.delay(beforeRetry: $0) } == [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(500), .milliseconds(500),
        ])
    }

    @Test("Content-Range values are parsed, bad ones refused")
    func contentRange() {
        #expect(TransferState.contentRange("bytes 100-199/200").map { [$0.start, $0.total ?? -1] } == [100, 200])
        #expect(TransferState.contentRange("bytes 100-199/*").map { [$0.start, $0.total ?? -1] } == [100, -1])
        #expect(TransferState.contentRange("bytes 100-99/200") == nil)
        #expect(TransferState.contentRange("items 1-2/3") == nil)
        #expect(TransferState.contentRange("bytes 1-2/x") == nil)
        #expect(TransferState.completeLength("bytes */4000") == 4000)
    }

    @Test("every error has a distinct snake_case code and names its subject")
    func errorCodes() {
        let url = "https://example.invalid/fw.bin"
        let all: [NetError] = [
            .invalidURL(url: url, detail: ErrorDetail("malformed_url")), .resolveFailed(url: url, detail: ErrorDetail("host_not_found")),
            .connectFailed(url: url, detail: ErrorDetail("connection_refused")),
            .untrustedServer(url: url, caBundle: "t.pem", detail: ErrorDetail("self_signed")),
            .tls(url: url, detail: ErrorDetail("ca_bundle_unusable")), .stalled(url: url, received: 1, limit: 2, seconds: 3),
            .connectionLost(url: url, received: 1, detail: ErrorDetail("empty_reply")),
            .httpStatus(url: url, status: 503), .tooManyRedirects(url: url, limit: 5),
            .sizeCapExceeded(url: url, cap: 1, size: 2, announced: true),
            .longerThanExpected(url: url, expected: 1, size: 2, announced: false),
            .truncated(url: url, received: 1, expected: 2), .badRange(url: url, detail: ErrorDetail("unasked_416")),
            .rangeNotSatisfiable(url: url, offset: 3), .cancelled(url: url, received: 4),
            .file(path: url, detail: ErrorDetail("system_call_failed", ["open", "EACCES"])),
            .transfer(url: url, curlCode: 99, detail: ErrorDetail("curl_said", ["d"])),
        ]
        #expect(Set(all.map(\.code)).count == all.count)
        for error in all {
            #expect(error.code.allSatisfy { $0.isLowercase || $0 == "_" })
            #expect(error.description.contains(url))
            #expect(error.arguments.first == url)
            #expect(error.subject == url)
        }
    }
}

@Suite("CurlFetcher overall deadline")
struct CurlFetcherDeadlineTests {
    @Test("a server trickling just above the stall limit is cut off by the overall deadline, retries included")
    func trickleHitsDeadline() async throws {
        // 100 bytes every 100 ms (1000 B/s) for 20 s, of a body announced as 1 MB: never a
        // stall at 100 B/s, so only an overall deadline ends it early.
        let upstream = try ScriptedUpstream { _, connection in
            connection.sendHead("200 OK", ["Content-Length": "1000000"])
            for _ in 0..<200 {
                connection.send([UInt8](repeating: 0x41, count: 100))
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        defer { upstream.stop() }
        var options = TransferOptions(connectTimeout: .seconds(5), lowSpeedLimit: 100, stallTime: .seconds(1), maxRetries: 3,
                                      backoff: Backoff(initial: .milliseconds(10), multiplier: 2, maximum: .milliseconds(40)),
                                      proxy: .direct)
        options.deadline = .seconds(2)
        let url = "http://127.0.0.1:\(upstream.port)/metadata/timestamp.json"
        let error = try #require(await failure { try await CurlFetcher().fetch(url, options: options) })
        #expect(error == .deadline(url: url, seconds: 2), "\(error)")
        #expect(error.code == "net_deadline")
    }
}
