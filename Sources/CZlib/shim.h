#include <zlib.h>

// deflateInit2 and inflateInit2 are function-like macros (they pass the library version
// and the stream size), which Swift does not import; these wrappers make them callable.

/// deflateInit2 with the default memory level and strategy.
static inline int CZlib_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

/// inflateInit2.
static inline int CZlib_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
