/* Stand-in for Android's libc.so: the vendor library names "libc.so" as a dependency
 * and imports __stack_chk_guard as a data symbol, which glibc does not export on
 * x86_64. Everything else it needs resolves to glibc (this library depends on it). */
#include <stdint.h>
uintptr_t __stack_chk_guard = 0x595e9fbd94fda766ULL;
