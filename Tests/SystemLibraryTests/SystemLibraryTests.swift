import CALSA
import CCurl
import CLibPQ
import COpenSSL
import CSQLite
import CUdev
import CZlib
import Testing

/// Proves that each Debian package the setup installs is found through pkg-config, links,
/// and computes a known answer: a missing install step fails here first, with a clear name.
@Suite("System libraries")
struct SystemLibraryTests {
    @Test("zlib computes the CRC-32 check value")
    func zlibCRC() {
        let bytes = Array("123456789".utf8)
        let crc = bytes.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        #expect(crc == 0xCBF4_3926)
    }

    @Test("OpenSSL libcrypto computes SHA-256 of 'abc'")
    func opensslSHA256() {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let input = Array("abc".utf8)
        let ok = EVP_Digest(input, input.count, &digest, &length, EVP_sha256(), nil)
        #expect(ok == 1)
        #expect(length == 32)
        let hex = digest.map { String($0, radix: 16).leftPadded(2) }.joined()
        #expect(hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("SQLite evaluates a query in memory")
    func sqlite() {
        var db: OpaquePointer?
        #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        #expect(sqlite3_prepare_v2(db, "SELECT 40 + 2", -1, &stmt, nil) == SQLITE_OK)
        defer { sqlite3_finalize(stmt) }
        #expect(sqlite3_step(stmt) == SQLITE_ROW)
        #expect(sqlite3_column_int(stmt, 0) == 42)
    }

    @Test("libcurl is built with TLS")
    func curlTLS() {
        let info = CCurl_versionInfo()
        #expect(info != nil)
        #expect(info?.pointee.ssl_version != nil)
    }

    @Test("libpq reports its version and is thread-safe")
    func libpqVersion() {
        // 150000 and up: PostgreSQL 15's client or later.
        #expect(PQlibVersion() >= 100000)
        #expect(PQisthreadsafe() == 1)
    }

    @Test("libasound reports its version")
    func alsaVersion() {
        let version = String(cString: snd_asoundlib_version())
        #expect(version.split(separator: ".").count >= 3)
    }

    @Test("libudev makes a context and a sound monitor on it")
    func udevMonitor() throws {
        let udev = try #require(udev_new())
        defer { udev_unref(udev) }
        let monitor = try #require(udev_monitor_new_from_netlink(udev, "udev"))
        defer { udev_monitor_unref(monitor) }
        #expect(udev_monitor_filter_add_match_subsystem_devtype(monitor, "sound", nil) >= 0)
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
