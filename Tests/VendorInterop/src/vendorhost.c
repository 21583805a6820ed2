/* vendorhost: the vendor's host library (libugrokitapi.so, U Grok It Android SDK) run as
 * a test peer on Linux, with its audio on raw PCM streams.
 *
 *   vendorhost --sdk PATH [--pcm-in FILE|-] [--pcm-out FILE|-] [--events FILE] [--trace]
 *              [--rate 44100|48000] [--spb N] [--no-pace] STEP...
 *   vendorhost demod --sdk PATH --pcm-in FILE [--spb N] [--rate R] [--bare] [--trace]
 *
 * The library is loaded unmodified; it finds our stand-in libc.so, liblog.so,
 * libOpenSLES.so ... beside this executable (see scripts/vendor-harness.sh). It is driven
 * through its JNI entry points (the API its Java layer calls, with the fake JNIEnv of
 * fake_jni.c) and, where no JNI entry point exists, its exported C functions. Every
 * callback it makes becomes one JSON object per line on the events stream (stderr by
 * default). Steps: see usage(). */
#define _GNU_SOURCE
#include "fake_jni.h"
#include "fake_opensles.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void *lib;
static FILE *events;
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static int opt_nonsym, demod_mode;
static int opt_trace, opt_rate = 44100, opt_spb = 12, opt_paced = 1, opt_debug_all;
static void *env;
static jo *jni_class;

/* State the callbacks update and the steps wait on. */
static pthread_mutex_t st_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t st_cond = PTHREAD_COND_INITIALIZER;
static int conn_state = -1, open_done, open_ok, fu_done, fu_result, tune_done, tag_access_done,
           power_done, test_done;
static int tags_found, inventory_stopped;
static long long inv_handle;

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vendorhost: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void *sym(const char *name) {
    void *p = dlsym(lib, name);
    if (!p) die("the vendor library does not export %s", name);
    return p;
}
static void *JNI(const char *name) {
    char full[160];
    snprintf(full, sizeof full, "Java_com_ugrokit_api_Jni_%s", name);
    return sym(full);
}

static double audio_time(void) {
    uint32_t r = fakesl_sample_rate();
    return r ? (double)fakesl_samples_played() / r : 0;
}

/* ---- JSON events ---- */
struct jbuf { char *p; size_t n, cap; };
static void jb_add(struct jbuf *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int need = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->p && (size_t)need < b->cap - b->n) { b->n += (size_t)need; return; }
        b->cap = (b->cap + (size_t)need + 256) * 2;
        b->p = realloc(b->p, b->cap);
    }
}
static void jb_str(struct jbuf *b, const char *s) {
    jb_add(b, "\"");
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') jb_add(b, "\\%c", c);
        else if (c == '\n') jb_add(b, "\\n");
        else if (c < 0x20 || c >= 0x7f) jb_add(b, "\\u%04x", c);
        else jb_add(b, "%c", c);
    }
    jb_add(b, "\"");
}
static void jb_hex(struct jbuf *b, const unsigned char *p, int n) {
    jb_add(b, "\"");
    for (int i = 0; i < n; i++) jb_add(b, "%02x", p[i]);
    jb_add(b, "\"");
}
static void jb_begin(struct jbuf *b, const char *event) {
    b->p = NULL; b->n = b->cap = 0;
    jb_add(b, "{\"event\":");
    jb_str(b, event);
    jb_add(b, ",\"t\":%.4f", audio_time());
}
static void jb_emit(struct jbuf *b) {
    jb_add(b, "}\n");
    pthread_mutex_lock(&ev_lock);
    fputs(b->p, events);
    fflush(events);
    pthread_mutex_unlock(&ev_lock);
    free(b->p);
}
static void jb_value(struct jbuf *b, char t, jvalue_t v) {
    if (t == 'Z') jb_add(b, "%s", v.i ? "true" : "false");
    else if (t == 'B' || t == 'C' || t == 'S' || t == 'I') jb_add(b, "%d", v.i);
    else if (t == 'J') jb_add(b, "%lld", v.j);
    else if (t == 'F' || t == 'D') jb_add(b, "%.6g", v.d);
    else {
        jo *o = v.l;
        if (!o) jb_add(b, "null");
        else if (o->kind == JO_STRING) jb_str(b, o->data);
        else if (o->kind == JO_BYTES) jb_hex(b, o->data, o->len);
        else if (o->kind == JO_INTS) {
            jb_add(b, "[");
            for (int i = 0; i < o->len; i++) jb_add(b, "%s%d", i ? "," : "", ((int *)o->data)[i]);
            jb_add(b, "]");
        } else if (o->kind == JO_DOUBLES) {
            jb_add(b, "[");
            for (int i = 0; i < o->len; i++) jb_add(b, "%s%.6g", i ? "," : "", ((double *)o->data)[i]);
            jb_add(b, "]");
        } else if (o->kind == JO_OBJECTS) {
            jb_add(b, "[");
            for (int i = 0; i < o->len; i++) {
                if (i) jb_add(b, ",");
                jvalue_t e = {.l = ((jo **)o->data)[i]};
                jb_value(b, 'L', e);
            }
            jb_add(b, "]");
        } else if (o->kind == JO_OBJECT && o->nargs) {
            jb_add(b, "{\"class\":");
            jb_str(b, o->name);
            jb_add(b, ",\"args\":[");
            for (int i = 0; i < o->nargs; i++) {
                if (i) jb_add(b, ",");
                jb_value(b, o->argtypes[i], o->args[i]);
            }
            jb_add(b, "]}");
        } else jb_str(b, o->name ? o->name : "object");
    }
}
/* Emits event `name` with fields named by the comma-separated list `fields` (one per
 * argument; "-" skips one). */
static void emit_args(const char *name, const char *fields, const jvalue_t *a, const char *t, int n) {
    struct jbuf b;
    jb_begin(&b, name);
    const char *f = fields;
    for (int i = 0; i < n; i++) {
        char fname[48];
        const char *comma = f ? strchr(f, ',') : NULL;
        if (f && *f) {
            size_t len = comma ? (size_t)(comma - f) : strlen(f);
            snprintf(fname, sizeof fname, "%.*s", (int)len, f);
            f = comma ? comma + 1 : NULL;
        } else snprintf(fname, sizeof fname, "arg%d", i);
        if (!strcmp(fname, "-")) continue;
        jb_add(&b, ",");
        jb_str(&b, fname);
        jb_add(&b, ":");
        jb_value(&b, t[i], a[i]);
    }
    jb_emit(&b);
}
static void emit_simple(const char *name, const char *fmt, ...) {
    struct jbuf b;
    jb_begin(&b, name);
    if (fmt && *fmt) {
        char tmp[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(tmp, sizeof tmp, fmt, ap);
        va_end(ap);
        jb_add(&b, ",%s", tmp);
    }
    jb_emit(&b);
}

/* ---- packet trace from the library's debug text ---- */
/* With ByteProtocolSetDebug on, the library logs "SendBytes: N bytes: (xx) (xx '.') ..."
 * for each block it sends and "Byte received: 0xNN" for each byte it decodes. Received
 * bytes are collected and flushed as one "rx" record when the library logs anything
 * else (its packet layer logs once per packet). */
static unsigned char rxbuf[512];
static int rxn;
static double rx_t0;
static void flush_rx(void) {
    if (!rxn) return;
    struct jbuf b;
    jb_begin(&b, "rx");
    jb_add(&b, ",\"t0\":%.4f,\"bytes\":", rx_t0);
    jb_hex(&b, rxbuf, rxn);
    jb_emit(&b);
    rxn = 0;
}
/* The packet dump in the SendBytes line is not always what goes out (in 1.7.16 it shows a
 * stray 01 in long packets that is never sent, and the CRC covers the bytes sent), so a
 * "tx" record is built from the "Byte sent" lines that follow it, one per byte modulated. */
static unsigned char txbuf[512];
static int txn, tx_expect;
static double tx_t0;
static char tx_dump[2048];
static void flush_tx(void) {
    if (!tx_expect) return;
    struct jbuf b;
    jb_begin(&b, "tx");
    jb_add(&b, ",\"t0\":%.4f,\"bytes\":", tx_t0);
    jb_hex(&b, txbuf, txn);
    if (txn != tx_expect) jb_add(&b, ",\"incomplete\":%d", tx_expect);
    char sent_hex[1100];
    for (int k = 0; k < txn && 2 * k + 2 < (int)sizeof sent_hex; k++) sprintf(sent_hex + 2 * k, "%02x", txbuf[k]);
    sent_hex[2 * (txn < 549 ? txn : 549)] = 0;
    if (strcmp(tx_dump, sent_hex)) {
        jb_add(&b, ",\"debug_dump\":");
        jb_str(&b, tx_dump);
    }
    jb_emit(&b);
    txn = tx_expect = 0;
}
/* demod --trace: every byte the receive path decoded, in order (hex) */
static char *all_rx;
static size_t all_rx_n, all_rx_cap;
const char *vendorhost_rx_hex(void) { return all_rx; }
static void on_debug_text(const char *s) {
    unsigned v;
    if (!opt_trace) return;
    if (demod_mode && sscanf(s, "Byte received: 0x%x", &v) == 1) {
        if (all_rx_n + 3 >= all_rx_cap) all_rx = realloc(all_rx, all_rx_cap = all_rx_cap * 2 + 4096);
        all_rx_n += (size_t)sprintf(all_rx + all_rx_n, "%02x", v);
    }
    if (sscanf(s, "Byte received: 0x%x", &v) == 1) {
        if (!rxn) rx_t0 = audio_time();
        if (rxn < (int)sizeof rxbuf) rxbuf[rxn++] = (unsigned char)v;
        return;
    }
    if (sscanf(s, "Byte sent: 0x%x", &v) == 1) {
        if (tx_expect && txn < (int)sizeof txbuf) txbuf[txn++] = (unsigned char)v;
        if (tx_expect && txn >= tx_expect) flush_tx();
        return;
    }
    flush_rx();
    int count;
    const char *p = strstr(s, "SendBytes: ");
    if (p && sscanf(p, "SendBytes: %d bytes:", &count) == 1) {
        flush_tx();
        tx_expect = count;
        tx_t0 = audio_time();
        /* keep the dump only where it differs from what is sent: filled in below */
        unsigned char dump[512];
        int n = 0, used;
        const char *q = strstr(p, "bytes:") + 6;
        while (n < (int)sizeof dump && sscanf(q, " %2x%n", &v, &used) == 1) { dump[n++] = (unsigned char)v; q += used; }
        tx_dump[0] = 0;
        for (int k = 0; k < n && 2 * k + 2 < (int)sizeof tx_dump; k++) sprintf(tx_dump + 2 * k, "%02x", dump[k]);
        return;
    }
}
static void emit_log(const char *s) {
    struct jbuf b;
    jb_begin(&b, "log");
    jb_add(&b, ",\"text\":");
    jb_str(&b, s);
    jb_emit(&b);
}

/* ---- deferred "main thread" work (the Java layer posts some replies to its looper) ---- */
struct task { long long a, b, c; struct task *next; };
static struct task *tasks;
static pthread_mutex_t task_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t task_cond = PTHREAD_COND_INITIALIZER;
static void *main_looper(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&task_lock);
        while (!tasks) pthread_cond_wait(&task_cond, &task_lock);
        struct task *t = tasks;
        tasks = t->next;
        pthread_mutex_unlock(&task_lock);
        void (*release)(void *, void *, long long, long long, long long) = JNI("ReleaseStateCallbackCallback");
        release(env, jni_class, t->a, t->b, t->c);
        free(t);
    }
    return NULL;
}
static void post_release(long long a, long long b, long long c) {
    struct task *t = calloc(1, sizeof *t);
    t->a = a; t->b = b; t->c = c;
    pthread_mutex_lock(&task_lock);
    struct task **pp = &tasks;
    while (*pp) pp = &(*pp)->next;
    *pp = t;
    pthread_cond_signal(&task_cond);
    pthread_mutex_unlock(&task_lock);
}

static void signal_state(int *flag, int value) {
    pthread_mutex_lock(&st_lock);
    *flag = value;
    pthread_cond_broadcast(&st_cond);
    pthread_mutex_unlock(&st_lock);
}

static const char *state_name(int s) {
    static const char *names[] = {"NOT_CONNECTED", "HANDSHAKING", "CONNECTING", "INCOMPATIBLE_READER", "CONNECTED"};
    return s >= 0 && s < 5 ? names[s] : "UNKNOWN";
}

void vendorlog_set_hook(void (*fn)(int prio, const char *text));
static void on_library_text(const char *text) {
    on_debug_text(text);
    if (opt_trace && !opt_debug_all && (!strncmp(text, "Byte received: ", 15) || !strncmp(text, "Byte sent: ", 11) ||
                                        strstr(text, "SendBytes: ")))
        return;
    if (!opt_trace || opt_debug_all) emit_log(text);
    else if (strstr(text, "rror") || strstr(text, "etry") || strstr(text, "NACK") || strstr(text, "Martian") ||
             strstr(text, "ailure") || strstr(text, "imeout") || strstr(text, "lave") ||
             strstr(text, "moving to") || strstr(text, "Disabling") || strstr(text, "ismatch") ||
             strstr(text, "received in") || strstr(text, "onnect") || strstr(text, "Reader returned") ||
             strstr(text, "PacketProtocol") || strstr(text, "Request received") || strstr(text, "Firmware") ||
             strstr(text, "Sending"))
        emit_log(text);
}
static void on_android_log(int prio, const char *text) {
    (void)prio;
    on_library_text(text);
}

/* ---- the callbacks ---- */
jvalue_t fakejni_callback(const jmethod *m, const jvalue_t *a, const char *t, int n) {
    jvalue_t r = {0};
    const char *nm = m->name;
    if (!strcmp(nm, "loggingCallback")) {
        const jo *s = a[0].l;
        on_library_text(s ? s->data : "");
    } else if (!strcmp(nm, "isPluggedIn") || !strcmp(nm, "enableDisableIdleTimeout")) {
        r.i = 1;
    } else if (!strcmp(nm, "setThreadName") || !strcmp(nm, "requestAudioFocus") || !strcmp(nm, "abandonAudioFocus")) {
        /* nothing to do on Linux */
    } else if (!strcmp(nm, "connectionStateCallback")) {
        emit_simple("connection", "\"state\":%d,\"name\":\"%s\"", a[0].i, state_name(a[0].i));
        signal_state(&conn_state, a[0].i);
    } else if (!strcmp(nm, "openConnectionCallback")) {
        emit_args("autoconfig_completed", "success,audio_params,result,-", a, t, n);
        pthread_mutex_lock(&st_lock);
        open_ok = a[0].i;
        pthread_mutex_unlock(&st_lock);
        signal_state(&open_done, 1);
    } else if (!strcmp(nm, "openConnectionProgressCallback")) {
        emit_args("autoconfig_progress", "success,audio_params,step,of,rounds,-", a, t, n);
    } else if (!strcmp(nm, "testConnectionProgressCallback")) {
        emit_args("test_connection_progress", "state,a,b,-", a, t, n);
    } else if (!strcmp(nm, "testConnectionCallback")) {
        emit_args("test_connection_completed", "result,a,b,-", a, t, n);
        signal_state(&test_done, 1);
    } else if (!strcmp(nm, "tagChangedCallback")) {
        emit_args("tag", "first_find,visibility_changed,rounds,epc,tid,user,reserved,first_read_ms,total_reads,"
                  "most_recent_read_ms,rssi_i,rssi_q,visible,read_history,per_read,-", a, t, n);
        pthread_mutex_lock(&st_lock);
        if (a[0].i) tags_found++;
        pthread_mutex_unlock(&st_lock);
    } else if (!strcmp(nm, "stateCallback")) {
        emit_args("inventory_state", "z,state,-", a, t, n);
        pthread_mutex_lock(&st_lock);
        inventory_stopped++;
        pthread_cond_broadcast(&st_cond);
        pthread_mutex_unlock(&st_lock);
    } else if (!strcmp(nm, "historyCallback")) {
        emit_args("inventory_history", "rounds,-", a, t, n);
    } else if (!strcmp(nm, "releaseStateCallback")) {
        emit_args("inventory_release", "cb,inventory,rounds,opaque,-", a, t, n);
        post_release(a[0].j, a[1].j, a[3].j);
    } else if (!strcmp(nm, "filterLowLevelCallback")) {
        r.i = 0;
    } else if (!strcmp(nm, "tagReadCallback")) {
        emit_args("tag_read", "epc,data,result,-", a, t, n);
        signal_state(&tag_access_done, 1);
    } else if (!strcmp(nm, "tagAccessedCallback")) {
        emit_args("tag_accessed", "epc,result,-", a, t, n);
        signal_state(&tag_access_done, 1);
    } else if (!strcmp(nm, "tagProgrammedCallback")) {
        emit_args("tag_programmed", "old_epc,new_epc,result,-", a, t, n);
        signal_state(&tag_access_done, 1);
    } else if (!strcmp(nm, "tagCustomCommandCallback")) {
        emit_args("tag_custom", "epc,success,data,result,-", a, t, n);
        signal_state(&tag_access_done, 1);
    } else if (!strcmp(nm, "changePowerCallback")) {
        emit_args("power_changed", "success,-", a, t, n);
        signal_state(&power_done, 1);
    } else if (!strcmp(nm, "tuneOneFrequencyCallback")) {
        emit_args("tune_frequency", "a,b,c,d,-", a, t, n);
    } else if (!strcmp(nm, "tuneCompletedCallback")) {
        emit_args("tune_completed", "success,-", a, t, n);
        signal_state(&tune_done, 1);
    } else if (!strcmp(nm, "fuProgressCallback")) {
        emit_args("firmware_progress", "done,total,a,-", a, t, n);
    } else if (!strcmp(nm, "fuCompletedCallback")) {
        emit_args("firmware_completed", "result,a,-", a, t, n);
        pthread_mutex_lock(&st_lock);
        fu_result = a[0].i;
        pthread_mutex_unlock(&st_lock);
        signal_state(&fu_done, 1);
    } else {
        struct jbuf b;
        jb_begin(&b, "callback");
        jb_add(&b, ",\"method\":");
        jb_str(&b, m->name);
        jb_add(&b, ",\"signature\":");
        jb_str(&b, m->sig);
        jb_emit(&b);
        emit_args(m->name, NULL, a, t, n);
    }
    return r;
}

static int wait_flag(int *flag, int want, double seconds) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)seconds;
    dl.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (dl.tv_nsec >= 1000000000L) { dl.tv_sec++; dl.tv_nsec -= 1000000000L; }
    pthread_mutex_lock(&st_lock);
    int rc = 0;
    while (*flag != want && rc == 0) rc = pthread_cond_timedwait(&st_cond, &st_lock, &dl);
    int ok = *flag == want;
    pthread_mutex_unlock(&st_lock);
    return ok;
}

static void sleep_seconds(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
}

/* ---- reader facts ---- */
static void emit_version(void) {
    int (*gi)(void *, void *);
    struct jbuf b;
    jb_begin(&b, "version");
    static const char *ints[] = {"GetReaderProtocolVersion", "GetReaderHardwareType", "GetReaderHardwareRevision",
                                 "GetSoftwareVersionMajor", "GetSoftwareVersionMinor", "GetSoftwareVersionBuild",
                                 "GetReaderSerialNumber", "GetRegionIndex", "GetMaxTonesInSound",
                                 "GetMaxSensitivity", "GetNumVolumeLevels", "GetBatteryCapacity",
                                 "GetBatteryCapacitymAh", "GetRequiredProtocolVersion", "GetSupportedProtocolVersion"};
    static const char *keys[] = {"protocol", "hardware_type", "hardware_revision", "major", "minor", "build",
                                 "serial", "region_index", "max_tones", "max_sensitivity", "volume_levels",
                                 "battery_capacity_minutes", "battery_capacity_mah", "required_protocol",
                                 "supported_protocol"};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        gi = JNI(ints[i]) ;
        jb_add(&b, ",\"%s\":%d", keys[i], gi(env, jni_class));
    }
    unsigned char (*gb)(void *, void *);
    static const char *bools[] = {"GetSoftwareIsReader", "GetHasBattery", "GetHasExternalPower", "UserHasSetRegion",
                                  "GetDeviceInitializedSuccessfully", "CommandUserCanSetRegion",
                                  "CommandUserMustSetRegion", "CommandGetEnforceRegionSetting"};
    static const char *bkeys[] = {"software_is_reader", "has_battery", "has_external_power", "user_has_set_region",
                                  "initialized", "user_can_set_region", "user_must_set_region", "enforce_region"};
    for (size_t i = 0; i < sizeof bools / sizeof *bools; i++) {
        gb = JNI(bools[i]);
        jb_add(&b, ",\"%s\":%s", bkeys[i], gb(env, jni_class) ? "true" : "false");
    }
    long long (*gl)(void *, void *) = JNI("GetReaderInternalId");
    jb_add(&b, ",\"internal_id\":%lld", gl(env, jni_class));
    double (*gd)(void *, void *) = JNI("GetMaxPower");
    jb_add(&b, ",\"max_power\":%.2f", gd(env, jni_class));
    jo *(*gs)(void *, void *) = JNI("GetReaderHardwareTypeName");
    jo *s = gs(env, jni_class);
    jb_add(&b, ",\"hardware_type_name\":");
    jb_str(&b, s ? s->data : "");
    gs = JNI("GetRegionName");
    s = gs(env, jni_class);
    jb_add(&b, ",\"region_name\":");
    jb_str(&b, s ? s->data : "");
    jb_emit(&b);
}

/* ---- steps ---- */
/* The Java layer passes an image's file name and its whole text. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot read %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t got;
    while ((got = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 >= cap) b = realloc(b, cap *= 2);
    }
    fclose(f);
    b[n] = 0;
    return b;
}

static int hexval(int c) { return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10; }
static jo *hex_bytes(const char *h) {
    int n = (int)strlen(h) / 2;
    jo *o = jo_new(JO_BYTES, n, 1);
    for (int i = 0; i < n; i++) ((unsigned char *)o->data)[i] = (unsigned char)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
    return o;
}

static int open_connection(int autoconfig, int spb) {
    void (*open)(void *, void *, unsigned char, int, int, int, int, unsigned char, int, int, int, int, int, int, void *) =
        JNI("CommandOpenConnection");
    signal_state(&open_done, 0);
    emit_simple("step", "\"step\":\"%s\",\"spb\":%d,\"rate\":%d", autoconfig ? "autoconfig" : "connect", spb, opt_rate);
    open(env, jni_class, 0, spb, opt_rate, 0, 0, (unsigned char)opt_nonsym, 0, 0, 1, 256, 1, 256,
         autoconfig ? jo_context("OpenConnectionInfo") : NULL);
    return 0;
}

static void usage(void) {
    fprintf(stderr,
            "usage: vendorhost --sdk PATH [--pcm-in FILE|-] [--pcm-out FILE|-] [--events FILE] [--trace]\n"
            "                  [--debug-all] [--rate 44100|48000] [--spb N] [--no-pace] [--non-symmetric]\n"
            "                  [--record-rx FILE] [--record-tx FILE] STEP...\n"
            "       vendorhost demod --sdk PATH --pcm-in FILE [--spb N] [--rate R] [--expect-bytes N] [--speed X] [--bare] [--trace]\n"
            "steps:\n"
            "  connect [SPB] [TIMEOUT]      open the connection (no AutoConfig), wait for CONNECTED\n"
            "  autoconfig [SPB] [TIMEOUT]   open with AutoConfig (echo tests), wait for its result\n"
            "  disconnect                   close the connection\n"
            "  version                      the cached reader facts (GetVersion answer)\n"
            "  battery                      GetBatteryInfo (sends Battery 0x03)\n"
            "  set-region N                 SetRegion with built-in region entry N\n"
            "  user-has-set-region 0|1      provisioning sub-op 03\n"
            "  inventory SECONDS [PRESET]   start, run, stop (PRESET 0-4, default 1)\n"
            "  inventory-start [PRESET]     start and keep running\n"
            "  inventory-stop               stop the running inventory\n"
            "  read-tag EPC BANK WORDOFF MINWORDS MAXWORDS\n"
            "  write-tag EPC BANK WORDOFF DATAHEX [OLDHEX] [PASSWORD]\n"
            "  program-tag OLDEPC NEWEPC [PASSWORD]\n"
            "  lock-tag EPC MASK ACTION\n"
            "  change-power INITIAL MIN MAX\n"
            "  firmware-check FILE          compatibility of a .ugif image\n"
            "  firmware-update FILE [TIMEOUT]\n"
            "  diagnostics                  GetDiagnosticData\n"
            "  tune-antenna [TIMEOUT]\n"
            "  test-connection [TIMEOUT]\n"
            "  geiger-sound FREQ MS CLICKRATE MAXCLICKS HISTORYMS\n"
            "  found-item-sound HZ:MS,...   found-last-item-sound HZ:MS,...\n"
            "  provisioning-mode 0|1        host flag (GetVersion flag 01), before connect\n"
            "  enforce-region 0|1           host flag (GetVersion flag 02/00), before connect\n"
            "  provision-register ID SERIAL HWREV ANTENNA\n"
            "  provision-status N | provision-antenna N | provision-hw-rev N\n"
            "  play-sound N | pause-connection MS | temperature | test-flags A B\n"
            "  presets                      the library's inventory presets and limits\n"
            "  wait SECONDS                 let audio run\n"
            "  expect-tags N                fail unless N distinct tags were reported\n");
    exit(64);
}

static jo *preset_config(int preset) {
    jo *(*defaults)(void *, void *, int) = JNI("RfidConfigurationGetInventoryDefaults");
    return defaults(env, jni_class, preset);
}

static int inventory_start(int preset) {
    long long (*start)(void *, void *, void *, unsigned char, void *, unsigned char, unsigned char, void *) =
        JNI("InventoryStart");
    jo *cfg = preset_config(preset);
    struct jbuf b;
    jb_begin(&b, "step");
    jb_add(&b, ",\"step\":\"inventory-start\",\"preset\":%d,\"config\":", preset);
    jvalue_t v = {.l = cfg};
    jb_value(&b, '[', v);
    jb_emit(&b);
    signal_state(&inventory_stopped, 0);
    inv_handle = start(env, jni_class, NULL, 0, cfg, 0, 0, jo_context("UgiInventory"));
    emit_simple("inventory_started", "\"handle\":%lld", inv_handle);
    return inv_handle != 0;
}
static void inventory_stop(void) {
    unsigned char (*stop)(void *, void *, long long) = JNI("InventoryStop");
    pthread_mutex_lock(&st_lock);
    int before = inventory_stopped;
    pthread_mutex_unlock(&st_lock);
    unsigned char ok = stop(env, jni_class, inv_handle);
    emit_simple("inventory_stop_called", "\"ok\":%s", ok ? "true" : "false");
    /* the library reports the end through its state callback once the reader completed */
    wait_flag(&inventory_stopped, before + 1, 8);
    emit_simple("inventory_stopped", "\"ok\":%s", ok ? "true" : "false");
    inv_handle = 0;
}

static jo *tones_array(const char *spec) {
    int vals[64], n = 0;
    const char *p = spec;
    while (*p && n < 62) {
        int hz, ms;
        if (sscanf(p, "%d:%d", &hz, &ms) != 2) break;
        vals[n++] = hz;
        vals[n++] = ms;
        p = strchr(p, ',');
        if (!p) break;
        p++;
    }
    return jo_ints(vals, n);
}

static const char *const step_names[] = {
    "connect", "autoconfig", "disconnect", "version", "battery", "set-region", "user-has-set-region", "inventory",
    "inventory-start", "inventory-stop", "read-tag", "write-tag", "program-tag", "lock-tag", "change-power",
    "firmware-check", "firmware-update", "diagnostics", "tune-antenna", "test-connection", "geiger-sound",
    "found-item-sound", "found-last-item-sound", "provisioning-mode", "enforce-region", "provision-register",
    "provision-status", "provision-antenna", "provision-hw-rev", "play-sound", "pause-connection", "temperature",
    "test-flags", "presets", "wait", "expect-tags", NULL};
static int is_step_name(const char *s) {
    for (int k = 0; step_names[k]; k++)
        if (!strcmp(s, step_names[k])) return 1;
    return 0;
}

static int run_steps(int argc, char **argv) {
    int failures = 0;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        {
            /* the step and its arguments (up to the next step name) as the capture key */
            struct jbuf b;
            jb_begin(&b, "step_begin");
            jb_add(&b, ",\"step\":");
            jb_str(&b, s);
            jb_add(&b, ",\"args\":[");
            for (int k = i + 1, first = 1; k < argc && !is_step_name(argv[k]); k++, first = 0) {
                if (!first) jb_add(&b, ",");
                jb_str(&b, argv[k]);
            }
            jb_add(&b, "]");
            jb_emit(&b);
        }
#define ARG(k) (i + (k) < argc ? argv[i + (k)] : NULL)
#define NUMARG(k, dflt) (ARG(k) && (isdigit((unsigned char)ARG(k)[0]) || ARG(k)[0] == '-' || ARG(k)[0] == '.') ? (i++, atof(argv[i])) : (dflt))
        if (!strcmp(s, "connect") || !strcmp(s, "autoconfig")) {
            int ac = !strcmp(s, "autoconfig");
            int spb = (int)NUMARG(1, opt_spb);
            double timeout = NUMARG(1, ac ? 60 : 15);
            open_connection(ac, spb);
            int ok = ac ? wait_flag(&open_done, 1, timeout) && open_ok : wait_flag(&conn_state, 4, timeout);
            if (ac && ok) wait_flag(&conn_state, 4, 10);
            emit_simple("step_result", "\"step\":\"%s\",\"ok\":%s,\"state\":\"%s\"", s, ok ? "true" : "false",
                        state_name(conn_state));
            if (!ok) failures++;
            else emit_version();
        } else if (!strcmp(s, "disconnect")) {
            void (*close_conn)(void *, void *, unsigned char) = JNI("CommandCloseConnection");
            close_conn(env, jni_class, 0);
            emit_simple("step_result", "\"step\":\"disconnect\",\"ok\":true");
        } else if (!strcmp(s, "version")) {
            emit_version();
        } else if (!strcmp(s, "battery")) {
            jo *(*info)(void *, void *) = JNI("GetBatteryInfo");
            jo *r = info(env, jni_class);
            if (r && r->len >= 6) {
                int *v = r->data;
                emit_simple("battery", "\"can_scan\":%s,\"external_power\":%s,\"charging\":%s,\"minutes\":%d,"
                            "\"percent\":%d,\"millivolts\":%d", v[0] ? "true" : "false", v[1] ? "true" : "false",
                            v[2] ? "true" : "false", v[3], v[4], v[5]);
            } else {
                emit_simple("battery", "\"ok\":false");
                failures++;
            }
        } else if (!strcmp(s, "set-region")) {
            int idx = (int)NUMARG(1, 0);
            const unsigned char *(*get)(int) = sym("RegionDataGet");
            int (*set)(const unsigned char *) = sym("CommandSetRegion");
            const char *(*name)(int) = sym("RegionDataGetRegionName");
            const unsigned char *entry = get(idx);
            int rc = set(entry);
            struct jbuf b;
            jb_begin(&b, "region_set");
            jb_add(&b, ",\"index\":%d,\"name\":", idx);
            jb_str(&b, name(idx));
            jb_add(&b, ",\"result\":%d,\"entry\":", rc);
            jb_hex(&b, entry, 120);
            jb_emit(&b);
            if (rc) failures++;
        } else if (!strcmp(s, "user-has-set-region")) {
            int v = (int)NUMARG(1, 1);
            unsigned char (*f)(void *, void *, unsigned char) = JNI("CommandProvisionSetUserHasSetRegion");
            unsigned char ok = f(env, jni_class, (unsigned char)v);
            emit_simple("step_result", "\"step\":\"user-has-set-region\",\"ok\":%s", ok ? "true" : "false");
        } else if (!strcmp(s, "inventory")) {
            double secs = NUMARG(1, 3);
            int preset = (int)NUMARG(1, 1);
            if (!inventory_start(preset)) failures++;
            sleep_seconds(secs);
            inventory_stop();
        } else if (!strcmp(s, "inventory-start")) {
            if (!inventory_start((int)NUMARG(1, 1))) failures++;
        } else if (!strcmp(s, "inventory-stop")) {
            inventory_stop();
        } else if (!strcmp(s, "read-tag")) {
            if (i + 5 >= argc) usage();
            void (*f)(void *, void *, long long, void *, int, int, int, int, void *) = JNI("InventoryReadTag");
            signal_state(&tag_access_done, 0);
            f(env, jni_class, inv_handle, hex_bytes(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3]),
              atoi(argv[i + 4]), atoi(argv[i + 5]), jo_context("tagRead"));
            i += 5;
            if (!wait_flag(&tag_access_done, 1, 20)) { emit_simple("timeout", "\"step\":\"read-tag\""); failures++; }
        } else if (!strcmp(s, "write-tag")) {
            if (i + 4 >= argc) usage();
            void (*f)(void *, void *, long long, void *, int, int, void *, void *, int, void *) = JNI("InventoryWriteTag");
            jo *epc = hex_bytes(argv[i + 1]);
            int bank = atoi(argv[i + 2]), off = atoi(argv[i + 3]);
            jo *data = hex_bytes(argv[i + 4]);
            i += 4;
            jo *old = NULL;
            const char *next = ARG(1);
            if (next && isxdigit((unsigned char)next[0]) && strlen(next) == (size_t)data->len * 2) old = hex_bytes(argv[++i]);
            int pw = (int)NUMARG(1, 0);
            signal_state(&tag_access_done, 0);
            f(env, jni_class, inv_handle, epc, bank, off, data, old, pw, jo_context("tagAccessed"));
            if (!wait_flag(&tag_access_done, 1, 20)) { emit_simple("timeout", "\"step\":\"write-tag\""); failures++; }
        } else if (!strcmp(s, "program-tag")) {
            if (i + 2 >= argc) usage();
            void (*f)(void *, void *, long long, void *, void *, int, void *) = JNI("InventoryProgramTag");
            jo *old = hex_bytes(argv[i + 1]), *nw = hex_bytes(argv[i + 2]);
            i += 2;
            int pw = (int)NUMARG(1, 0);
            signal_state(&tag_access_done, 0);
            f(env, jni_class, inv_handle, old, nw, pw, jo_context("tagProgrammed"));
            if (!wait_flag(&tag_access_done, 1, 20)) { emit_simple("timeout", "\"step\":\"program-tag\""); failures++; }
        } else if (!strcmp(s, "lock-tag")) {
            if (i + 3 >= argc) usage();
            void (*f)(void *, void *, long long, void *, int, int, void *) = JNI("InventoryLockUnlockTag");
            signal_state(&tag_access_done, 0);
            f(env, jni_class, inv_handle, hex_bytes(argv[i + 1]), (int)strtol(argv[i + 2], NULL, 0),
              (int)strtol(argv[i + 3], NULL, 0), jo_context("tagAccessed"));
            i += 3;
            if (!wait_flag(&tag_access_done, 1, 20)) { emit_simple("timeout", "\"step\":\"lock-tag\""); failures++; }
        } else if (!strcmp(s, "change-power")) {
            if (i + 3 >= argc) usage();
            void (*f)(void *, void *, long long, double, double, double, void *) = JNI("InventoryChangePower");
            signal_state(&power_done, 0);
            f(env, jni_class, inv_handle, atof(argv[i + 1]), atof(argv[i + 2]), atof(argv[i + 3]), jo_context("changePower"));
            i += 3;
            if (!wait_flag(&power_done, 1, 20)) { emit_simple("timeout", "\"step\":\"change-power\""); failures++; }
        } else if (!strcmp(s, "firmware-check")) {
            if (!ARG(1)) usage();
            jo *(*f)(void *, void *, void *, void *) = JNI("FirmwareCheckCompatibility");
            const char *path = argv[++i];
            const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            jo *r = f(env, jni_class, jo_string(base), jo_string(slurp(path)));
            struct jbuf b;
            jb_begin(&b, "firmware_compatibility");
            jb_add(&b, ",\"result\":");
            jvalue_t v = {.l = r};
            jb_value(&b, '[', v);
            jb_emit(&b);
        } else if (!strcmp(s, "firmware-update")) {
            if (!ARG(1)) usage();
            int (*f)(void *, void *, void *, void *, unsigned char, unsigned char, void *) = JNI("FirmwareUpdate");
            const char *path = argv[++i];
            double timeout = NUMARG(1, 600);
            const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            signal_state(&fu_done, 0);
            emit_simple("step", "\"step\":\"firmware-update\"");
            int rc = f(env, jni_class, jo_string(base), jo_string(slurp(path)), 0, 0, jo_context("FirmwareUpdateDelegate"));
            emit_simple("firmware_update_started", "\"rc\":%d", rc);
            if (rc != 0) failures++;
            else if (!wait_flag(&fu_done, 1, timeout)) { emit_simple("timeout", "\"step\":\"firmware-update\""); failures++; }
        } else if (!strcmp(s, "diagnostics")) {
            jo *(*f)(void *, void *, unsigned char) = JNI("GetDiagnosticData");
            jo *r = f(env, jni_class, 0);
            struct jbuf b;
            jb_begin(&b, "diagnostics");
            jb_add(&b, ",\"values\":");
            jvalue_t v = {.l = r};
            jb_value(&b, '[', v);
            jb_emit(&b);
        } else if (!strcmp(s, "tune-antenna")) {
            double timeout = NUMARG(1, 60);
            void (*f)(void *, void *, void *) = JNI("CommandTuneAntenna");
            signal_state(&tune_done, 0);
            f(env, jni_class, jo_context("tuneAntenna"));
            if (!wait_flag(&tune_done, 1, timeout)) { emit_simple("timeout", "\"step\":\"tune-antenna\""); failures++; }
        } else if (!strcmp(s, "test-connection")) {
            double timeout = NUMARG(1, 60);
            void (*f)(void *, void *, int, int, int, int, unsigned char, int, int, int, int, int, int, int, void *) =
                JNI("CommandTestConnection");
            signal_state(&test_done, 0);
            f(env, jni_class, opt_spb, opt_rate, 0, 0, 0, 0, 0, 1, 256, 1, 256, 10, jo_context("testConnection"));
            if (!wait_flag(&test_done, 1, timeout)) { emit_simple("timeout", "\"step\":\"test-connection\""); failures++; }
        } else if (!strcmp(s, "geiger-sound")) {
            if (i + 5 >= argc) usage();
            void (*f)(void *, void *, int, int, double, int, int) = JNI("CommandSetGeigerCounterSound");
            f(env, jni_class, atoi(argv[i + 1]), atoi(argv[i + 2]), atof(argv[i + 3]), atoi(argv[i + 4]), atoi(argv[i + 5]));
            i += 5;
            emit_simple("step_result", "\"step\":\"geiger-sound\",\"ok\":true");
        } else if (!strcmp(s, "found-item-sound") || !strcmp(s, "found-last-item-sound")) {
            if (!ARG(1)) usage();
            void (*f)(void *, void *, void *) =
                JNI(!strcmp(s, "found-item-sound") ? "CommandSetFoundItemSound" : "CommandSetFoundLastItemSound");
            f(env, jni_class, tones_array(argv[++i]));
            emit_simple("step_result", "\"step\":\"%s\",\"ok\":true", s);
        } else if (!strcmp(s, "provisioning-mode") || !strcmp(s, "enforce-region")) {
            int v = (int)NUMARG(1, 1);
            void (*f)(unsigned char) = sym(!strcmp(s, "provisioning-mode") ? "CommandSetProvisioningMode"
                                                                             : "CommandSetEnforceRegionSetting");
            f((unsigned char)v);
            emit_simple("step_result", "\"step\":\"%s\",\"value\":%d,\"ok\":true", s, v);
        } else if (!strcmp(s, "provision-register")) {
            if (i + 4 >= argc) usage();
            int (*f)(unsigned long long, unsigned, unsigned char, unsigned char) = sym("CommandProvisionRegister");
            int rc = f(strtoull(argv[i + 1], NULL, 0), (unsigned)strtoul(argv[i + 2], NULL, 0),
                       (unsigned char)atoi(argv[i + 3]), (unsigned char)atoi(argv[i + 4]));
            i += 4;
            emit_simple("step_result", "\"step\":\"provision-register\",\"result\":%d,\"ok\":%s", rc, rc ? "false" : "true");
            if (rc) failures++;
        } else if (!strcmp(s, "provision-status") || !strcmp(s, "provision-antenna") || !strcmp(s, "provision-hw-rev") ||
                   !strcmp(s, "play-sound") || !strcmp(s, "pause-connection")) {
            const char *fn = !strcmp(s, "provision-status") ? "CommandProvisionSetStatus"
                              : !strcmp(s, "provision-antenna") ? "CommandProvisionSetAntennaType"
                              : !strcmp(s, "provision-hw-rev") ? "CommandProvisionSetReaderHardwareRevision"
                              : !strcmp(s, "play-sound") ? "CommandPlaySound" : "CommandPauseConnection";
            int v = (int)NUMARG(1, 0);
            int (*f)(int) = sym(fn);
            int rc = f(v);
            emit_simple("step_result", "\"step\":\"%s\",\"value\":%d,\"result\":%d,\"ok\":%s", s, v, rc, rc ? "false" : "true");
            if (rc) failures++;
        } else if (!strcmp(s, "temperature")) {
            int out[8] = {0};
            int (*f)(void *) = sym("CommandGetTemperature");
            int rc = f(out);
            emit_simple("temperature", "\"result\":%d,\"raw\":[%d,%d]", rc, out[0], out[1]);
        } else if (!strcmp(s, "test-flags")) {
            if (i + 2 >= argc) usage();
            int (*f)(unsigned char, unsigned char) = sym("CommandSetTestFlags");
            int rc = f((unsigned char)strtol(argv[i + 1], NULL, 0), (unsigned char)strtol(argv[i + 2], NULL, 0));
            i += 2;
            emit_simple("step_result", "\"step\":\"test-flags\",\"result\":%d", rc);
        } else if (!strcmp(s, "presets")) {
            int (*num)(void *, void *) = JNI("RfidConfigurationGetNumInventoryTypes");
            jo *(*name)(void *, void *, int) = JNI("RfidConfigurationGetInventoryTypeName");
            jo *(*limits)(void *, void *) = JNI("RfidConfigurationGetInventoryLimits");
            int n = num(env, jni_class);
            for (int k = 0; k <= n; k++) {
                jo *nm = name(env, jni_class, k);
                struct jbuf b;
                jb_begin(&b, "preset");
                jb_add(&b, ",\"index\":%d,\"name\":", k);
                jb_str(&b, nm ? nm->data : "");
                jb_add(&b, ",\"defaults\":");
                jvalue_t v = {.l = preset_config(k)};
                jb_value(&b, '[', v);
                jb_emit(&b);
            }
            struct jbuf b;
            jb_begin(&b, "preset_limits");
            jb_add(&b, ",\"count\":%d,\"limits\":", n);
            jvalue_t v = {.l = limits(env, jni_class)};
            jb_value(&b, '[', v);
            jb_emit(&b);
        } else if (!strcmp(s, "wait")) {
            sleep_seconds(NUMARG(1, 1));
        } else if (!strcmp(s, "expect-tags")) {
            int want = (int)NUMARG(1, 1);
            pthread_mutex_lock(&st_lock);
            int got = tags_found;
            pthread_mutex_unlock(&st_lock);
            emit_simple("step_result", "\"step\":\"expect-tags\",\"want\":%d,\"got\":%d,\"ok\":%s", want, got,
                        got == want ? "true" : "false");
            if (got != want) failures++;
        } else {
            fprintf(stderr, "vendorhost: unknown step '%s'\n", s);
            usage();
        }
    }
    return failures;
}

/* ---- recordings of both directions ---- */
static FILE *rec_rx, *rec_tx;
static void tap(const int16_t *tx, const int16_t *rx, int n, void *ctx) {
    (void)ctx;
    if (rec_tx) fwrite(tx, 2, (size_t)n, rec_tx);
    if (rec_rx) fwrite(rx, 2, (size_t)n, rec_rx);
}

int demod_main(const char *path, int chunk, int expect_bytes, double speed);
int demod_bare_main(const char *path, int trace);

/* ---- main ---- */
int main(int argc, char **argv) {
    const char *sdk = getenv("GROKCTL_VENDOR_SDK"), *pcm_in = NULL, *pcm_out = NULL, *ev = NULL;
    int demod = 0, chunk = 256, expect_bytes = -1, bare = 0;
    double demod_speed = 4; /* demod: times real time; 0 = unpaced (the replay may then end early) */
    int i = 1;
    if (i < argc && !strcmp(argv[i], "demod")) { demod = demod_mode = 1; i++; }
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--sdk") && i + 1 < argc) sdk = argv[++i];
        else if (!strcmp(o, "--pcm-in") && i + 1 < argc) pcm_in = argv[++i];
        else if (!strcmp(o, "--pcm-out") && i + 1 < argc) pcm_out = argv[++i];
        else if (!strcmp(o, "--events") && i + 1 < argc) ev = argv[++i];
        else if (!strcmp(o, "--rate") && i + 1 < argc) opt_rate = atoi(argv[++i]);
        else if (!strcmp(o, "--spb") && i + 1 < argc) opt_spb = atoi(argv[++i]);
        else if (!strcmp(o, "--chunk") && i + 1 < argc) chunk = atoi(argv[++i]);
        else if (!strcmp(o, "--expect-bytes") && i + 1 < argc) expect_bytes = atoi(argv[++i]);
        else if (!strcmp(o, "--speed") && i + 1 < argc) demod_speed = atof(argv[++i]);
        else if (!strcmp(o, "--trace")) opt_trace = 1;
        else if (!strcmp(o, "--bare")) bare = 1;
        else if (!strcmp(o, "--record-rx") && i + 1 < argc) rec_rx = fopen(argv[++i], "wb");
        else if (!strcmp(o, "--record-tx") && i + 1 < argc) rec_tx = fopen(argv[++i], "wb");
        else if (!strcmp(o, "--debug-all")) opt_debug_all = 1;
        else if (!strcmp(o, "--no-pace")) opt_paced = 0;
        else if (!strcmp(o, "--non-symmetric")) opt_nonsym = 1;
        else if (!strcmp(o, "--help")) usage();
        else { fprintf(stderr, "vendorhost: unknown option %s\n", o); usage(); }
    }
    if (!sdk || !*sdk) die("no vendor library: give --sdk PATH or set GROKCTL_VENDOR_SDK");
    events = stderr;
    if (ev && !(events = fopen(ev, "w"))) die("cannot write %s: %s", ev, strerror(errno));

    int in_fd = -1, out_fd = -1;
    /* output first: a peer on two FIFOs opens its input first */
    if (pcm_out) out_fd = !strcmp(pcm_out, "-") ? 1 : open(pcm_out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (pcm_out && out_fd < 0) die("cannot write %s: %s", pcm_out, strerror(errno));
    if (pcm_in) in_fd = !strcmp(pcm_in, "-") ? 0 : open(pcm_in, O_RDONLY);
    if (pcm_in && in_fd < 0) die("cannot read %s: %s", pcm_in, strerror(errno));
    fakesl_configure(in_fd, out_fd, opt_paced);
    if (rec_rx || rec_tx) fakesl_set_tap(tap, NULL);

    vendorlog_set_hook(on_android_log);
    fakejni_init();
    env = fakejni_env;
    lib = dlopen(sdk, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) die("cannot load %s: %s", sdk, dlerror());
    int (*onload)(void *, void *) = sym("JNI_OnLoad");
    int jv = onload(fakejni_vm, NULL);
    jni_class = jo_new(JO_CLASS, 0, 0);
    jni_class->name = "com/ugrokit/api/Jni";
    emit_simple("loaded", "\"jni_version\":%d", jv);
    pthread_t looper;
    pthread_create(&looper, NULL, main_looper, NULL);

    if (demod) {
        if (!pcm_in) die("demod needs --pcm-in FILE");
        close(in_fd);
        if (bare) return demod_bare_main(pcm_in, opt_trace);
        if (opt_trace) {
            void (*sd)(void *, void *, unsigned char) = JNI("ByteProtocolSetDebug");
            sd(env, jni_class, 1);
        }
        return demod_main(pcm_in, chunk, expect_bytes, demod_speed);
    }

    void (*setdbg)(void *, void *, unsigned char) = JNI("ByteProtocolSetDebug");
    void (*bpinit)(void *, void *) = JNI("ByteProtocolInit");
    bpinit(env, jni_class);
    if (opt_trace) {
        setdbg(env, jni_class, 1);
        void (*pdbg)(void *, void *, unsigned char) = JNI("PacketProtocolSetDebug");
        pdbg(env, jni_class, 1);
    }
    if (i >= argc) usage();
    int failures = run_steps(argc - i, argv + i);
    flush_rx();
    flush_tx();
    struct fakesl_stats st;
    fakesl_stats(&st);
    emit_simple("done", "\"failures\":%d,\"samples_out\":%llu,\"underruns\":%llu,\"underruns_running\":%llu,"
                "\"first_underrun_s\":%.4f", failures,
                (unsigned long long)st.samples_out, (unsigned long long)st.underruns,
                (unsigned long long)st.underruns_running,
                st.first_underrun_at ? (double)(st.first_underrun_at - 1) / fakesl_sample_rate() : -1.0);
    fflush(events);
    if (rec_rx) fflush(rec_rx);
    if (rec_tx) fflush(rec_tx);
    _exit(failures ? 1 : 0); /* the library's threads are still running: leave without joining them */
}

/* for demod.c */
int vendorhost_rate(void) { return opt_rate; }
int vendorhost_spb(void) { return opt_spb; }
void *vendorhost_sym(const char *name) { return sym(name); }
void *vendorhost_env(void) { return env; }
void *vendorhost_class(void) { return jni_class; }
