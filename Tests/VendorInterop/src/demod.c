/* vendorhost demod: the vendor library's receive path as a benchmark anchor.
 *
 * A recording of what a reader sends (s16le mono; it should start with the reader's
 * handshake: the request tone, then the idle tone of the chosen samples per bit, then
 * the bytes) is fed through the stand-in OpenSL ES recorder as fast as the CPU allows,
 * into the library's own recorder callback, which hands each buffer to
 * ByteProtocol_Helper_HandleReceiveBuffer. The library's handshake runs on the samples
 * (it answers through its player, which plays into nothing), so by the time the bytes
 * arrive its modem is connected at the recording's samples per bit.
 *
 * A quarter second of silence goes before and after the recording (padding_seconds in
 * the output; its CPU time is included, silence is the cheapest input there is).
 *
 * Printed (one JSON object on stdout): audio seconds, CPU seconds spent inside the
 * library's recorder callback (the receive path alone: thread CPU time measured around
 * each call) and in the whole process, and what the library's statistics counted. */
#define _GNU_SOURCE
#include "fake_jni.h"
#include "fake_opensles.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

extern int vendorhost_rate(void), vendorhost_spb(void);
extern void *vendorhost_sym(const char *name);
extern void *vendorhost_env(void), *vendorhost_class(void);
extern const char *vendorhost_rx_hex(void);

static double process_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static double wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* expect_bytes (--expect-bytes, from the live session's count): the replay is "complete"
 * when the library decoded exactly that many.
 * speed (--speed, default 4): the replay is paced at that many times real time. Unpaced
 * (0) the library's modem often stops decoding part way (its packet layer and timers run
 * on their own threads and the wall clock: at 100x real time or more they fall out of
 * step with the audio); at 4x and 8x every replay decoded every byte in our runs, at 16x
 * one in three did not. The CPU figure is measured per callback, so pacing does not
 * change it beyond cache effects (0.0142-0.0154 s at 4-8x against 0.0121-0.0128 s
 * unpaced for the same 21.5 s recording). */
/* The library's receive path can call a null function pointer (inside
 * ByteProtocol_Helper_HandleReceiveBuffer) when its packet layer has just dropped the link
 * after 8 failed tries and samples keep coming: seen on noisy replays. The replay then
 * ends there, and what was decoded so far is still reported ("crashed": true). */
static volatile int crashed;
static void report(int crashed_now);
static void on_crash(int sig) {
    (void)sig;
    crashed = 1;
    report(1);
    _exit(3);
}

static const char *g_path;
static double g_audio_seconds, g_speed, g_pad, g_c0, g_w0;
static int g_expect;

int demod_main(const char *path, int chunk, int expect_bytes, double speed) {
    (void)chunk;
    int fd = open(path, O_RDONLY);
    if (fd < 0) { perror(path); return 2; }
    struct stat st;
    fstat(fd, &st);
    double audio_seconds = (double)st.st_size / 2.0 / vendorhost_rate();
    fakesl_configure(fd, -1, speed > 0);
    if (speed > 0) fakesl_set_speed(speed);
    const double pad = 0.25;
    if (speed <= 0) speed = 0; /* seconds of silence before and after the recording */
    fakesl_set_padding((long)(pad * vendorhost_rate()), (long)(pad * vendorhost_rate()));
    void *env = vendorhost_env(), *cls = vendorhost_class();
    void (*bpinit)(void *, void *) = vendorhost_sym("Java_com_ugrokit_api_Jni_ByteProtocolInit");
    bpinit(env, cls);
    void (*open_conn)(void *, void *, unsigned char, int, int, int, int, unsigned char, int, int, int, int, int, int,
                      void *) = vendorhost_sym("Java_com_ugrokit_api_Jni_CommandOpenConnection");
    double c0 = process_cpu(), w0 = wall();
    g_path = path; g_audio_seconds = audio_seconds; g_speed = speed; g_pad = pad; g_c0 = c0; g_w0 = w0;
    g_expect = expect_bytes;
    signal(SIGSEGV, on_crash);
    open_conn(env, cls, 0, vendorhost_spb(), vendorhost_rate(), 0, 0, 0, 0, 0, 1, 256, 1, 256, NULL);
    while (!fakesl_input_exhausted()) usleep(2000);
    report(0);
    fflush(stdout);
    _exit(0);
}

static void report(int crashed_now) {
    double c1 = process_cpu(), w1 = wall();
    struct fakesl_stats s;
    fakesl_stats(&s);
    unsigned int pstats[16] = {0}, bstats[64] = {0};
    void (*pget)(void *) = vendorhost_sym("PacketProtocolGetConnectionStatistics");
    void (*bget)(void *) = vendorhost_sym("ByteProtocolGetConnectionStatistics");
    pget(pstats);
    bget(bstats);
    printf("{\"mode\":\"demod\",\"recording\":\"%s\",\"rate\":%d,\"spb\":%d,\"audio_seconds\":%.4f,"
           "\"speed\":%g,\"padding_seconds\":%.2f,\"receive_cpu_seconds\":%.6f,\"send_cpu_seconds\":%.6f,"
           "\"process_cpu_seconds\":%.6f,\"wall_seconds\":%.4f,\"receive_cpu_per_audio_second\":%.6f,"
           "\"bytes_received\":%u,\"bytes_sent\":%u,\"crashed\":%s,\"packet_statistics\":[",
           g_path, vendorhost_rate(), vendorhost_spb(), g_audio_seconds, g_speed, 2 * g_pad, s.rx_cpu_ns / 1e9,
           s.tx_cpu_ns / 1e9, c1 - g_c0, w1 - g_w0, s.rx_cpu_ns / 1e9 / g_audio_seconds, bstats[3], bstats[2],
           crashed_now ? "true" : "false");
    for (int i = 0; i < 9; i++) printf("%s%u", i ? "," : "", pstats[i]);
    printf("],\"byte_statistics\":[");
    for (int i = 0; i < 16; i++) printf("%s%u", i ? "," : "", bstats[i]);
    const char *hexed = vendorhost_rx_hex();
    if (hexed) printf("],\"received\":\"%s\"", hexed);
    else printf("],\"received\":null");
    printf(",\"complete\":%s}\n", g_expect < 0 ? "null" : bstats[3] == (unsigned)g_expect ? "true" : "false");
    fflush(stdout);
}

/* vendorhost demod --bare: the vendor's receive path alone, like for like with our
 * demodulator (scripts/demod-measure): the library's byte layer only, opened with
 * ByteProtocolOpenConnection (0xf670) as its packet layer opens it
 * (PacketProtocolOpenConnection, 0x10950: mode 1, the connection parameters, the buffer
 * parameters, 16, a byte handler, no close handler), but with our byte handler in place of
 * the packet layer's (0x10f10, `void handler(int byte)`), and a connection helper that does
 * nothing in place of the command layer's (0x157d0, which asks the reader GetVersion). No
 * packet is parsed, nothing is asked and nothing retried: a recording that cannot answer
 * the host's requests decodes the same as one that can.
 *
 * The whole file is read into memory first; then, on this thread, every 256-sample block
 * goes to the library's recorder callback (ByteProtocol_Helper_HandleReceiveBuffer), and
 * this thread's CPU clock is read once before the first block and once after the last.
 * The library's transmitter runs on the clock thread, never more than 0.1 s ahead (not
 * counted: our demodulator's figure has no transmitter either). */
static int bare_count, bare_cap;
static unsigned char *bare_bytes;
static void bare_on_byte(int byte) {
    if (bare_count == bare_cap) bare_bytes = realloc(bare_bytes, (size_t)(bare_cap = bare_cap * 2 + 4096));
    bare_bytes[bare_count++] = (unsigned char)byte;
}
static void bare_helper(void) {}

static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int demod_bare_main(const char *path, int trace) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 2; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    int rate = vendorhost_rate(), spb = vendorhost_spb();
    long lead = rate / 4; /* a quarter second of silence first: the modem's handshake state */
    long n = size / 2 + lead;
    int16_t *pcm = calloc((size_t)n + 256, sizeof(int16_t));
    if (!pcm || fread(pcm + lead, 2, (size_t)(size / 2), f) != (size_t)(size / 2)) { perror(path); return 2; }
    fclose(f);
    fakesl_configure(-1, -1, 0);
    fakesl_set_manual_input(rate / 10);
    void *env = vendorhost_env(), *cls = vendorhost_class();
    void (*bpinit)(void *, void *) = vendorhost_sym("Java_com_ugrokit_api_Jni_ByteProtocolInit");
    bpinit(env, cls);
    void (*set_helper)(void (*)(void)) = vendorhost_sym("ByteProtocolSetConnectionHelper");
    set_helper(bare_helper);
    int connection[7] = {spb, rate, 0, 0, 0, 0, 0};
    int buffers[4] = {1, 256, 1, 256};
    void (*open_bytes)(int, void *, void *, int, void (*)(int), void *, void *) = vendorhost_sym("ByteProtocolOpenConnection");
    open_bytes(1, connection, buffers, 16, bare_on_byte, NULL, NULL);
    if (fakesl_wait_recording(5000) != 0) {
        printf("{\"mode\":\"demod-bare\",\"error\":\"the library never started recording\"}\n");
        fflush(stdout);
        _exit(4);
    }
    double c0 = thread_cpu();
    for (long i = 0; i + 256 <= n; i += 256) fakesl_feed(pcm + i, 256);
    double c1 = thread_cpu();
    double audio_seconds = (double)(size / 2) / rate;
    printf("{\"mode\":\"demod-bare\",\"recording\":\"%s\",\"rate\":%d,\"spb\":%d,\"audio_seconds\":%.4f,"
           "\"lead_seconds\":0.25,\"receive_cpu_seconds\":%.6f,\"receive_cpu_per_audio_second\":%.6f,\"bytes_received\":%d",
           path, rate, spb, audio_seconds, c1 - c0, (c1 - c0) / audio_seconds, bare_count);
    if (trace) {
        printf(",\"received\":\"");
        for (int k = 0; k < bare_count; k++) printf("%02x", bare_bytes[k]);
        printf("\"");
    }
    printf("}\n");
    fflush(stdout);
    _exit(0);
}
