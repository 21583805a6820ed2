import Foundation
import GrokBasics
#if canImport(Glibc)
import Glibc
#endif

/// The names of the system's and SQLite's result codes, for the `detail` of a
/// ``LedgerError``: `ENOSPC`, `SQLITE_IOERR_WRITE`. They read the same in every language,
/// so no English text of the C library (`strerror`, `sqlite3_errmsg`) reaches a person
/// reading a translated message; the catalog's words around them say what to do.
public enum SystemCodes {
    /// `ENOSPC`; `errno <n>` for one not listed.
    public static func errnoName(_ number: Int32) -> String { systemErrorName(number) }

    /// The errno name of a Foundation error (its POSIX code, or its underlying error's), else
    /// its domain and code.
    static func name(of error: any Error) -> String {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return errnoName(Int32(error.code)) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return errnoName(Int32(underlying.code))
        }
        return "\(error.domain) \(error.code)"
    }

    private static let primary: [Int32: String] = [
        0: "OK", 1: "ERROR", 2: "INTERNAL", 3: "PERM", 4: "ABORT", 5: "BUSY", 6: "LOCKED", 7: "NOMEM", 8: "READONLY",
        9: "INTERRUPT", 10: "IOERR", 11: "CORRUPT", 12: "NOTFOUND", 13: "FULL", 14: "CANTOPEN", 15: "PROTOCOL",
        16: "EMPTY", 17: "SCHEMA", 18: "TOOBIG", 19: "CONSTRAINT", 20: "MISMATCH", 21: "MISUSE", 22: "NOLFS",
        23: "AUTH", 24: "FORMAT", 25: "RANGE", 26: "NOTADB", 27: "NOTICE", 28: "WARNING", 100: "ROW", 101: "DONE",
    ]

    /// The extended codes a ledger meets (sqlite.org/rescode.html), by their full value.
    private static let extended: [Int32: String] = [
        266: "IOERR_READ", 522: "IOERR_SHORT_READ", 778: "IOERR_WRITE", 1034: "IOERR_FSYNC", 1290: "IOERR_DIR_FSYNC",
        1546: "IOERR_TRUNCATE", 1802: "IOERR_FSTAT", 2058: "IOERR_UNLOCK", 2314: "IOERR_RDLOCK", 2570: "IOERR_DELETE",
        3082: "IOERR_NOMEM", 3338: "IOERR_ACCESS", 3594: "IOERR_CHECKRESERVEDLOCK", 3850: "IOERR_LOCK",
        4106: "IOERR_CLOSE", 4618: "IOERR_SHMOPEN", 4874: "IOERR_SHMSIZE", 5386: "IOERR_SHMMAP", 5642: "IOERR_SEEK",
        6410: "IOERR_GETTEMPPATH", 6922: "IOERR_CORRUPTFS", 13: "FULL", 261: "BUSY_RECOVERY", 517: "BUSY_SNAPSHOT",
        773: "BUSY_TIMEOUT", 262: "LOCKED_SHAREDCACHE", 264: "READONLY_RECOVERY", 520: "READONLY_CANTLOCK",
        776: "READONLY_ROLLBACK", 1032: "READONLY_DBMOVED", 1288: "READONLY_CANTINIT", 1544: "READONLY_DIRECTORY",
        267: "CORRUPT_VTAB", 523: "CORRUPT_SEQUENCE", 779: "CORRUPT_INDEX", 270: "CANTOPEN_NOTEMPDIR",
        526: "CANTOPEN_ISDIR", 782: "CANTOPEN_FULLPATH", 1038: "CANTOPEN_CONVPATH", 1550: "CANTOPEN_SYMLINK",
        275: "CONSTRAINT_CHECK", 531: "CONSTRAINT_COMMITHOOK", 787: "CONSTRAINT_FOREIGNKEY", 1043: "CONSTRAINT_FUNCTION",
        1299: "CONSTRAINT_NOTNULL", 1555: "CONSTRAINT_PRIMARYKEY", 1811: "CONSTRAINT_TRIGGER", 2067: "CONSTRAINT_UNIQUE",
        2323: "CONSTRAINT_VTAB", 2579: "CONSTRAINT_ROWID", 3091: "CONSTRAINT_DATATYPE",
    ]

    /// `SQLITE_IOERR_WRITE`; an extended code not listed is `SQLITE_IOERR (778)`.
    static func sqliteName(_ code: Int32) -> String {
        if let name = extended[code] { return "SQLITE_" + name }
        let base = primary[code & 0xFF].map { "SQLITE_" + $0 } ?? "SQLITE \(code & 0xFF)"
        return code > 0xFF ? "\(base) (\(code))" : base
    }
}
