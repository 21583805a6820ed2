import Foundation
import Synchronization

/// One request the upstream received (nginx forwards the client's Range header).
public struct UpstreamRequest: Sendable {
    public let method: String
    public let path: String
    /// Header fields, names lower-cased.
    public let headers: [String: String]
    /// 0 for the first request, 1 for the second, ...
    public let index: Int
}

/// A plain-HTTP server on loopback, run inside the test process behind nginx's `proxy_pass`,
/// that misbehaves on cue: each connection gets one request, the test's handler writes raw
/// bytes (status line, headers, some of the body), may stall, and the connection closes when
/// the handler returns. Every request is recorded.
public final class ScriptedUpstream: Sendable {
    /// Writes the response; runs on the connection's own thread.
    public typealias Handler = @Sendable (UpstreamRequest, Connection) -> Void

    /// The accepted connection, as a handler sees it.
    public struct Connection: Sendable {
        fileprivate let fd: Int32
        fileprivate let upstream: ScriptedUpstream

        /// Sends bytes; a peer that went away is ignored (the test looks at the client side).
        public func send(_ bytes: [UInt8]) {
            var done = 0
            while done < bytes.count {
                let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { return }
                done += sent
            }
        }

        public func send(_ text: String) { send(Array(text.utf8)) }

        /// Sends a status line and headers (with `Connection: close`).
        public func sendHead(_ status: String, _ headers: [String: String] = [:]) {
            var head = "HTTP/1.1 \(status)\r\nConnection: close\r\n"
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
            send(head + "\r\n")
        }

        /// Holds the connection open without sending, until the upstream stops or `limit` passes.
        public func stall(upTo limit: Duration = .seconds(300)) {
            _ = upstream.stopped.wait(timeout: .now() + .milliseconds(Int(limit.components.seconds * 1000)))
        }
    }

    public let port: UInt16
    private let listener: Int32
    private let handler: Handler
    private let log = Mutex<[UpstreamRequest]>([])
    fileprivate let stopped = DispatchSemaphore(value: 0)
    private let isStopped = Atomic<Bool>(false)

    public init(handler: @escaping Handler) throws {
        self.handler = handler
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError(description: "socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw HarnessError(description: "bind/listen on 127.0.0.1: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        stop()
    }

    /// The requests received so far, in order.
    public var requests: [UpstreamRequest] { log.withLock { $0 } }

    /// Stops accepting and releases stalled handlers.
    public func stop() {
        guard !isStopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for _ in 0..<64 { stopped.signal() }
    }

    private func acceptLoop() {
        while !isStopped.load(ordering: .acquiring) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !buffer.containsHeaderEnd {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return }
            buffer += chunk[0..<count]
        }
        let text = String(decoding: buffer, as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let request = log.withLock { log in
            let request = UpstreamRequest(
                method: requestLine.first.map(String.init) ?? "", path: requestLine.count > 1 ? String(requestLine[1]) : "",
                headers: headers, index: log.count)
            log.append(request)
            return request
        }
        handler(request, Connection(fd: fd, upstream: self))
    }
}

extension [UInt8] {
    fileprivate var containsHeaderEnd: Bool {
        guard count >= 4 else { return false }
        for i in 0...(count - 4) where self[i] == 13 && self[i + 1] == 10 && self[i + 2] == 13 && self[i + 3] == 10 {
            return true
        }
        return false
    }
}
