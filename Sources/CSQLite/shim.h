// The pre-update hook (a spool's seals check a row as it was before a write changes it) is
// declared only with this macro; Debian's and Ubuntu's libsqlite3 are built with it.
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
// These bind text and blobs with it, so SQLite copies the bytes before the call returns.
static inline int CSQLite_bindTransientText(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}

// sqlite3_db_config is variadic, which Swift cannot call. This one sets
// SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE: with `on` non-zero, closing the last connection does not
// checkpoint the WAL into the database file, so a ledger refused as damaged is not written to.
static inline int CSQLite_setNoCheckpointOnClose(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on, (int *)0);
}
