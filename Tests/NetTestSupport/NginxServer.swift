import Foundation

/// A real nginx serving HTTPS on 127.0.0.1, with everything (configuration, certificates,
/// document root, pid, logs, temp paths) inside one scratch directory.
///
/// It serves `www/` as static files, and:
/// - `/always500` answers 500 (nginx's `return`),
/// - `/loop` redirects to itself, `/moved` redirects to `/small.bin`,
/// - `/up/...` is proxied (unbuffered) to a ``ScriptedUpstream`` when one is given.
///
/// The access log (`access.log`) has one line per request:
/// `METHOD URI STATUS "RANGE" BODY_BYTES`.
public final class NginxServer {
    public static let binary = "/usr/sbin/nginx"

    public let scratch: NetScratch
    public let pki: TestPKI
    private(set) var port: UInt16 = 0
    private var process: Process?

    /// `https://127.0.0.1:<port>`.
    public var base: String { "https://127.0.0.1:\(port)" }

    /// Writes the configuration and certificates, starts nginx and waits until it accepts.
    public init(scratch: NetScratch = NetScratch(), upstream: ScriptedUpstream? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw HarnessError(
                description: "\(Self.binary) is missing: the GrokNet tests need a real nginx; run scripts/setup.sh --test (installs nginx-light)")
        }
        self.scratch = scratch
        pki = try TestPKI(in: scratch.path)
        try FileManager.default.createDirectory(atPath: scratch.file("www"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch.file("tmp"), withIntermediateDirectories: true)
        var lastFailure = ""
        // A port picked free can be taken by another test before nginx binds it: try again.
        for _ in 0..<5 {
            port = try Self.freePort()
            try configuration(upstream: upstream).write(toFile: scratch.file("nginx.conf"), atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = ["-p", scratch.path + "/", "-c", scratch.file("nginx.conf"), "-e", scratch.file("error.log")]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if try Self.waitUntilAccepting(port: port, while: process) {
                self.process = process
                return
            }
            process.waitUntilExit()
            lastFailure = (try? String(contentsOfFile: scratch.file("error.log"), encoding: .utf8)) ?? "no error log"
        }
        throw HarnessError(description: "nginx did not start: \(lastFailure)")
    }

    deinit {
        stop()
    }

    /// Stops nginx (SIGTERM: fast shutdown) and waits for it.
    public func stop() {
        guard let process else { return }
        self.process = nil
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Puts a file into the document root.
    @discardableResult
    public func serve(_ name: String, _ bytes: [UInt8]) throws -> String {
        try scratch.write("www/" + name, bytes)
    }

    /// The access log's lines so far.
    public func accessLog() -> [String] {
        ((try? String(contentsOfFile: scratch.file("access.log"), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    private func configuration(upstream: ScriptedUpstream?) -> String {
        let dir = scratch.path
        // As root, nginx's workers would switch to nobody and could not read the 0700 scratch dir.
        let user = geteuid() == 0 ? "user root;" : ""
        let proxy =
            upstream.map {
                """
                        location /up/ {
                            proxy_pass http://127.0.0.1:\($0.port);
                            proxy_buffering off;
                            proxy_read_timeout 300s;
                        }
                """
            } ?? ""
        return """
            \(user)
            daemon off;
            master_process on;
            worker_processes 1;
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log info;
            events { worker_connections 64; }
            http {
                default_type application/octet-stream;
                log_format grok '$request_method $request_uri $status "$http_range" $body_bytes_sent';
                access_log \(dir)/access.log grok;
                client_body_temp_path \(dir)/tmp/client;
                proxy_temp_path \(dir)/tmp/proxy;
                fastcgi_temp_path \(dir)/tmp/fastcgi;
                uwsgi_temp_path \(dir)/tmp/uwsgi;
                scgi_temp_path \(dir)/tmp/scgi;
                absolute_redirect off;
                server {
                    listen 127.0.0.1:\(port) ssl;
                    server_name localhost;
                    ssl_certificate \(pki.serverCertificate);
                    ssl_certificate_key \(pki.serverKey);
                    root \(dir)/www;
                    location = /always500 { return 500; }
                    location = /loop { return 302 /loop; }
                    location = /moved { return 301 /small.bin; }
            \(proxy)
                }
            }

            """
    }

    /// A port the kernel says is free right now.
    private static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw HarnessError(description: "cannot find a free port: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Polls until a TCP connect to the port succeeds (true) or nginx exits (false).
    private static func waitUntilAccepting(port: UInt16, while process: Process) throws -> Bool {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if !process.isRunning { return false }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = port.bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return true }
            usleep(20_000)
        }
        process.terminate()
        throw HarnessError(description: "nginx did not accept on 127.0.0.1:\(port) within 15 s")
    }
}

@available(*, unavailable) extension NginxServer: Sendable {}
