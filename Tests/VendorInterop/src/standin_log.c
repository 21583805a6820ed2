/* Stand-in for Android's liblog.so. __android_log_print hands each line to the hook the
 * harness installs (vendorlog_set_hook), or else writes "LOG[prio] tag: text" to stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void (*hook)(int prio, const char *text);

void vendorlog_set_hook(void (*fn)(int prio, const char *text)) { hook = fn; }

int __android_log_print(int prio, const char *tag, const char *fmt, ...) {
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (hook) {
        hook(prio, buf);
        return 0;
    }
    return fprintf(stderr, "LOG[%d] %s: %s\n", prio, tag ? tag : "", buf);
}
