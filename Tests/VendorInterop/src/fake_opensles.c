/* A working stand-in for Android's libOpenSLES.so, written from the public OpenSL ES 1.0.1
 * interface layout (objects, engine, output mix, audio player and recorder with Android
 * simple buffer queues). It is the "sound card" of the vendor host library: a pacing
 * thread plays the buffers the library enqueues to a raw PCM stream (signed 16-bit LE
 * mono) and fills the recorder's buffers from another raw PCM stream, both paced to the
 * wall clock at the sample rate the library asked for (or unpaced, for offline replays).
 *
 * The harness configures it through fakesl_* functions (see fake_opensles.h). */
#define _GNU_SOURCE
#include "fake_opensles.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef uint32_t SLresult;
typedef uint32_t SLuint32;
#define SL_RESULT_SUCCESS 0u
#define SL_RESULT_PARAMETER_INVALID 2u
#define SL_RESULT_FEATURE_UNSUPPORTED 12u
#define SL_OBJECT_STATE_REALIZED 2u
#define SL_PLAYSTATE_STOPPED 1u
#define SL_PLAYSTATE_PLAYING 3u
#define SL_RECORDSTATE_STOPPED 1u
#define SL_RECORDSTATE_RECORDING 3u

/* Interface IDs: the library compares the pointers it reads from these symbols. */
struct sl_iid { uint32_t d[4]; };
static const struct sl_iid iid_engine = {{1}}, iid_play = {{2}}, iid_record = {{3}},
                           iid_bq = {{4}}, iid_asbq = {{5}};
const struct sl_iid *const SL_IID_ENGINE = &iid_engine;
const struct sl_iid *const SL_IID_PLAY = &iid_play;
const struct sl_iid *const SL_IID_RECORD = &iid_record;
const struct sl_iid *const SL_IID_BUFFERQUEUE = &iid_bq;
const struct sl_iid *const SL_IID_ANDROIDSIMPLEBUFFERQUEUE = &iid_asbq;

enum kind { K_ENGINE, K_MIX, K_PLAYER, K_RECORDER };
typedef void (*bq_callback)(void *itf, void *ctx);

#define QMAX 32
struct fobj {
    const void *vt_object;  /* SLObjectItf points here */
    const void *vt_engine;  /* SLEngineItf */
    const void *vt_play;    /* SLPlayItf or SLRecordItf */
    const void *vt_bq;      /* SLAndroidSimpleBufferQueueItf / SLBufferQueueItf */
    enum kind kind;
    uint32_t state;         /* play or record state */
    uint32_t rate;          /* samples per second from the data format */
    bq_callback cb;
    void *cb_ctx;
    struct { int16_t *p; uint32_t n; } q[QMAX]; /* queued buffers, n in samples */
    int qh, qn;
    uint32_t pos;           /* samples done in q[qh] */
};

#define OBJ_FROM(itf, field) ((struct fobj *)((char *)(itf) - offsetof(struct fobj, field)))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fobj *player, *recorder;
static int out_fd = -1, in_fd = -1, paced = 1, started;
static double speed = 1;
void fakesl_set_speed(double x) { speed = x > 0 ? x : 1; }
static uint32_t stream_rate = 44100;
static pthread_t clock_thread, reader_thread;
static volatile uint64_t samples_out, samples_in, underruns, rx_cpu_ns, tx_cpu_ns;
/* Underruns once the peer's audio has begun (before it, silence is what the line carries). */
static volatile uint64_t underruns_running;
/* The input sample count at the first of them, plus one (0: none yet). */
static volatile uint64_t first_underrun_at;

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static volatile int stopping;

/* Input ring, filled by the reader thread from in_fd. */
#define RING (1 << 17)
static int16_t ring[RING];
static volatile uint64_t ring_w, ring_r;
static volatile int in_eof;
static pthread_cond_t ring_cond = PTHREAD_COND_INITIALIZER;
/* Signalled when the reader has put samples in the ring. */
static pthread_cond_t ring_data = PTHREAD_COND_INITIALIZER;
/* Paced, the clock waits this long for a peer's samples that are late before it invents
 * silence: a late peer (a busy machine) then delays the callbacks a little instead of
 * leaving a gap in the stream and, for the rest of the run, a latency a sound card would not
 * have (an underrun's silence stays in the stream; every sample behind it comes later). */
static const long late_wait_ns = 30000000L;
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;

static void (*tap_fn)(const int16_t *tx, const int16_t *rx, int n, void *ctx);
static void *tap_ctx;

static void trace(const char *fmt, ...) {
    static int on = -1;
    if (on < 0) on = getenv("FAKESL_DEBUG") != NULL;
    if (!on) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fakesl: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- the harness's side ---- */
void fakesl_configure(int in, int out, int realtime) {
    in_fd = in;
    out_fd = out;
    paced = realtime;
}
void fakesl_set_tap(void (*fn)(const int16_t *, const int16_t *, int, void *), void *ctx) {
    tap_fn = fn;
    tap_ctx = ctx;
}
uint64_t fakesl_samples_played(void) { return samples_out; }
uint32_t fakesl_sample_rate(void) { return stream_rate; }
void fakesl_stats(struct fakesl_stats *s) {
    s->samples_out = samples_out;
    s->samples_in = samples_in;
    s->underruns = underruns;
    s->underruns_running = underruns_running;
    s->first_underrun_at = first_underrun_at;
    s->input_eof = in_eof && ring_r == ring_w;
    s->rx_cpu_ns = rx_cpu_ns;
    s->tx_cpu_ns = tx_cpu_ns;
}
int fakesl_input_exhausted(void) { return in_eof && ring_r == ring_w; }

static volatile int manual_input;
static long manual_lead;
static volatile uint64_t samples_fed;
void fakesl_set_manual_input(long lead_samples) {
    manual_input = 1;
    manual_lead = lead_samples;
}

static long pad_lead, pad_tail;
void fakesl_set_padding(long lead_samples, long tail_samples) {
    pad_lead = lead_samples;
    pad_tail = tail_samples;
}
static void ring_put_zeros(long n) {
    pthread_mutex_lock(&ring_lock);
    for (long i = 0; i < n; i++) {
        while (ring_w - ring_r >= RING && !stopping) pthread_cond_wait(&ring_cond, &ring_lock);
        ring[ring_w % RING] = 0;
        ring_w++;
    }
    pthread_mutex_unlock(&ring_lock);
}

static void *reader_main(void *arg) {
    (void)arg;
    int16_t buf[1024];
    ring_put_zeros(pad_lead);
    for (;;) {
        ssize_t got = read(in_fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        size_t n = (size_t)got / 2; /* a trailing odd byte is dropped */
        pthread_mutex_lock(&ring_lock);
        for (size_t i = 0; i < n; i++) {
            while (ring_w - ring_r >= RING && !stopping) pthread_cond_wait(&ring_cond, &ring_lock);
            ring[ring_w % RING] = buf[i];
            ring_w++;
        }
        pthread_cond_signal(&ring_data);
        pthread_mutex_unlock(&ring_lock);
    }
    ring_put_zeros(pad_tail);
    in_eof = 1;
    return NULL;
}

static void ring_take(int16_t *dst, int n) {
    pthread_mutex_lock(&ring_lock);
    for (int i = 0; i < n; i++) {
        if (ring_r < ring_w) {
            dst[i] = ring[ring_r % RING];
            ring_r++;
        } else if (!paced && !in_eof) {
            /* offline: wait for the reader rather than inventing silence */
            pthread_mutex_unlock(&ring_lock);
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&ring_lock);
            i--;
        } else {
            if (paced && !in_eof && ring_w > 0) {
                /* The peer has begun and is late: wait for it (bounded). */
                struct timespec until;
                clock_gettime(CLOCK_REALTIME, &until);
                until.tv_nsec += late_wait_ns;
                if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
                while (ring_r >= ring_w && !in_eof && !stopping) {
                    if (pthread_cond_timedwait(&ring_data, &ring_lock, &until) != 0) break;
                }
                if (ring_r < ring_w) { i--; continue; }
            }
            dst[i] = 0;
            if (!in_eof) {
                underruns++;
                if (ring_w > 0) {
                    if (underruns_running == 0) first_underrun_at = samples_in + (uint64_t)i + 1;
                    underruns_running++;
                }
            }
        }
    }
    pthread_cond_signal(&ring_cond);
    pthread_mutex_unlock(&ring_lock);
}

static void write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return; /* the peer went away: keep running silently */
        c += w;
        n -= (size_t)w;
    }
}

/* Moves n samples through one object's queue. For the player, copies the queued data
 * to out; for the recorder, copies in to the queued buffers. Calls the library's
 * callback (without the lock) each time a buffer completes. */
static void run_queue(struct fobj *o, int16_t *io, int n, int is_player) {
    int done = 0;
    while (done < n) {
        pthread_mutex_lock(&lock);
        int active = o->state == (is_player ? SL_PLAYSTATE_PLAYING : SL_RECORDSTATE_RECORDING);
        if (!active || o->qn == 0) {
            pthread_mutex_unlock(&lock);
            if (is_player) memset(io + done, 0, (size_t)(n - done) * 2);
            return;
        }
        int16_t *b = o->q[o->qh].p;
        uint32_t len = o->q[o->qh].n;
        uint32_t take = len - o->pos;
        if (take > (uint32_t)(n - done)) take = (uint32_t)(n - done);
        if (is_player) memcpy(io + done, b + o->pos, take * 2);
        else memcpy(b + o->pos, io + done, take * 2);
        o->pos += take;
        done += (int)take;
        int completed = o->pos >= len;
        if (completed) {
            o->qh = (o->qh + 1) % QMAX;
            o->qn--;
            o->pos = 0;
        }
        bq_callback cb = o->cb;
        void *ctx = o->cb_ctx;
        pthread_mutex_unlock(&lock);
        if (completed && cb && manual_input && !is_player) {
            cb((void *)&o->vt_bq, ctx); /* timed by the caller, once around its whole loop */
        } else if (completed && cb) {
            uint64_t t0 = thread_cpu_ns();
            cb((void *)&o->vt_bq, ctx);
            uint64_t dt = thread_cpu_ns() - t0;
            if (is_player) tx_cpu_ns += dt;
            else rx_cpu_ns += dt;
        }
    }
}

int fakesl_wait_recording(int timeout_ms) {
    for (int waited = 0; waited <= timeout_ms; waited++) {
        pthread_mutex_lock(&lock);
        int ready = recorder && recorder->state == SL_RECORDSTATE_RECORDING && recorder->qn > 0;
        pthread_mutex_unlock(&lock);
        if (ready) return 0;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* No clock read and no system call here (an uncontended mutex is none): what the caller
 * measures around its loop of feeds is the library's recorder callback and a copy. */
void fakesl_feed(const int16_t *in, int n) {
    struct fobj *r = recorder;
    if (r) run_queue(r, (int16_t *)in, n, 0);
    samples_fed += (uint64_t)n;
    samples_in += (uint64_t)n;
}

/* The player alone, for manual input: never more than manual_lead samples ahead of the
 * samples fed, so the transmitter's time and the receiver's stay together. */
static void *manual_clock_main(void *arg) {
    (void)arg;
    enum { TICK = 64 };
    int16_t out[TICK];
    while (!stopping) {
        if (samples_out + TICK > samples_fed + (uint64_t)manual_lead) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
            continue;
        }
        struct fobj *p = player;
        if (p) run_queue(p, out, TICK, 1);
        samples_out += TICK;
    }
    return NULL;
}

static void *clock_main(void *arg) {
    (void)arg;
    if (manual_input) return manual_clock_main(arg);
    enum { TICK = 64 };
    int16_t out[TICK], in[TICK];
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    uint64_t ticks = 0;
    while (!stopping) {
        struct fobj *p = player, *r = recorder;
        if (p) run_queue(p, out, TICK, 1);
        else memset(out, 0, sizeof out);
        int recording = 0;
        if (r) {
            pthread_mutex_lock(&lock);
            recording = r->state == SL_RECORDSTATE_RECORDING && r->qn > 0;
            pthread_mutex_unlock(&lock);
        }
        if (!paced && !recording) {
            /* unpaced (offline replay): input is consumed only by a running recorder */
            memset(in, 0, sizeof in);
            if (!r) { struct timespec ts = {0, 200000}; nanosleep(&ts, NULL); }
        } else if (in_fd >= 0) ring_take(in, TICK);
        else memset(in, 0, sizeof in);
        if (r) run_queue(r, in, TICK, 0);
        if (tap_fn) tap_fn(out, in, TICK, tap_ctx);
        if (out_fd >= 0) write_all(out_fd, out, sizeof out);
        samples_out += TICK;
        samples_in += TICK;
        ticks++;
        if (paced) {
            uint64_t ns = (uint64_t)((double)ticks * TICK * 1e9 / stream_rate / speed);
            struct timespec t = next;
            t.tv_sec += (time_t)(ns / 1000000000ull);
            t.tv_nsec += (long)(ns % 1000000000ull);
            if (t.tv_nsec >= 1000000000L) { t.tv_sec++; t.tv_nsec -= 1000000000L; }
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {}
        }
    }
    return NULL;
}

/* A sound card's callbacks run at real-time priority; so do ours when paced, where the
 * system allows it (the machine may be busy building), and silently not otherwise. */
static void realtime_priority(pthread_t t) {
    if (!paced || speed != 1 || getenv("FAKESL_NO_REALTIME")) return;
    struct sched_param sp = {.sched_priority = 10};
    if (pthread_setschedparam(t, SCHED_FIFO, &sp) != 0) trace("no real-time priority");
}

static void start_clock(void) {
    if (started) return;
    started = 1;
    if (in_fd >= 0) {
        pthread_create(&reader_thread, NULL, reader_main, NULL);
        realtime_priority(reader_thread);
    }
    pthread_create(&clock_thread, NULL, clock_main, NULL);
    realtime_priority(clock_thread);
}

/* ---- OpenSL ES vtables ---- */
static SLresult unsupported(void) { return SL_RESULT_FEATURE_UNSUPPORTED; }
#define U ((void *)unsupported)

static SLresult obj_realize(void *self, uint32_t async) { (void)self; (void)async; return 0; }
static SLresult obj_resume(void *self, uint32_t async) { (void)self; (void)async; return 0; }
static SLresult obj_getstate(void *self, uint32_t *st) { (void)self; *st = SL_OBJECT_STATE_REALIZED; return 0; }
static SLresult obj_getinterface(void *self, const struct sl_iid *iid, void *out) {
    struct fobj *o = OBJ_FROM(self, vt_object);
    void **res = out;
    if (iid == &iid_engine && o->kind == K_ENGINE) *res = &o->vt_engine;
    else if ((iid == &iid_play && o->kind == K_PLAYER) || (iid == &iid_record && o->kind == K_RECORDER))
        *res = &o->vt_play;
    else if ((iid == &iid_bq || iid == &iid_asbq) && (o->kind == K_PLAYER || o->kind == K_RECORDER))
        *res = &o->vt_bq;
    else {
        trace("GetInterface kind %d iid %p unsupported", o->kind, (const void *)iid);
        return SL_RESULT_FEATURE_UNSUPPORTED;
    }
    return 0;
}
static SLresult obj_registercallback(void *self, void *cb, void *ctx) { (void)self; (void)cb; (void)ctx; return 0; }
static void obj_abort(void *self) { (void)self; }
static void obj_destroy(void *self) {
    struct fobj *o = OBJ_FROM(self, vt_object);
    trace("Destroy kind %d", o->kind);
    pthread_mutex_lock(&lock);
    if (o == player) player = NULL;
    if (o == recorder) recorder = NULL;
    o->qn = 0;
    o->cb = NULL;
    pthread_mutex_unlock(&lock);
    /* Not freed: the clock thread may still hold a pointer for one tick. */
}
static const void *const object_vtbl[] = {obj_realize, obj_resume, obj_getstate, obj_getinterface,
                                          obj_registercallback, obj_abort, obj_destroy, U, U, U};

static struct fobj *new_obj(enum kind k);

static uint32_t format_rate(const void *const *source_or_sink) {
    /* SLDataSource / SLDataSink = { pLocator, pFormat }; SLDataFormat_PCM =
     * { formatType = 2, numChannels, samplesPerSec in milliHz, bits, container, mask, endian } */
    if (!source_or_sink) return 0;
    const uint32_t *fmt = source_or_sink[1];
    if (!fmt || fmt[0] != 2) return 0;
    trace("PCM format: channels %u, %u mHz, %u bits", fmt[1], fmt[2], fmt[3]);
    return fmt[2] / 1000;
}

static SLresult eng_create_player(void *self, void *out, const void *const *src, const void *const *snk,
                                  uint32_t n, const void *ids, const void *req) {
    (void)self; (void)snk; (void)n; (void)ids; (void)req;
    struct fobj *o = new_obj(K_PLAYER);
    o->rate = format_rate(src);
    if (o->rate) stream_rate = o->rate;
    pthread_mutex_lock(&lock);
    player = o;
    pthread_mutex_unlock(&lock);
    *(void **)out = &o->vt_object;
    trace("CreateAudioPlayer rate %u", o->rate);
    return 0;
}
static SLresult eng_create_recorder(void *self, void *out, const void *const *src, const void *const *snk,
                                    uint32_t n, const void *ids, const void *req) {
    (void)self; (void)src; (void)n; (void)ids; (void)req;
    struct fobj *o = new_obj(K_RECORDER);
    o->rate = format_rate(snk);
    pthread_mutex_lock(&lock);
    recorder = o;
    pthread_mutex_unlock(&lock);
    *(void **)out = &o->vt_object;
    trace("CreateAudioRecorder rate %u", o->rate);
    return 0;
}
static SLresult eng_create_mix(void *self, void *out, uint32_t n, const void *ids, const void *req) {
    (void)self; (void)n; (void)ids; (void)req;
    *(void **)out = &new_obj(K_MIX)->vt_object;
    return 0;
}
/* CreateLEDDevice, CreateVibraDevice, CreateAudioPlayer, CreateAudioRecorder,
 * CreateMidiPlayer, CreateListener, Create3DGroup, CreateOutputMix, ... */
static const void *const engine_vtbl[] = {U, U, eng_create_player, eng_create_recorder, U, U, U,
                                          eng_create_mix, U, U, U, U, U, U, U};

static SLresult play_setstate(void *self, uint32_t st) {
    struct fobj *o = OBJ_FROM(self, vt_play);
    trace("%s SetState %u", o->kind == K_PLAYER ? "player" : "recorder", st);
    pthread_mutex_lock(&lock);
    o->state = st;
    if ((o->kind == K_PLAYER && st == SL_PLAYSTATE_STOPPED) ||
        (o->kind == K_RECORDER && st == SL_RECORDSTATE_STOPPED)) o->pos = 0;
    pthread_mutex_unlock(&lock);
    if (st == 3) start_clock();
    return 0;
}
static SLresult play_getstate(void *self, uint32_t *st) { *st = OBJ_FROM(self, vt_play)->state; return 0; }
static SLresult play_ok(void) { return 0; }
/* Play: SetPlayState, GetPlayState, GetDuration, GetPosition, RegisterCallback,
 * SetCallbackEventsMask, GetCallbackEventsMask, SetMarkerPosition, ClearMarkerPosition,
 * GetMarkerPosition, SetPositionUpdatePeriod, GetPositionUpdatePeriod.
 * Record: SetRecordState, GetRecordState, SetDurationLimit, GetPosition, RegisterCallback,
 * then the same as Play. */
static const void *const play_vtbl[] = {play_setstate, play_getstate, U, U, play_ok, play_ok, U, U, U, U, U, U};
static const void *const record_vtbl[] = {play_setstate, play_getstate, play_ok, U, play_ok, play_ok, U, U, U, U, U, U};

static SLresult bq_enqueue(void *self, const void *buf, uint32_t size) {
    struct fobj *o = OBJ_FROM(self, vt_bq);
    pthread_mutex_lock(&lock);
    if (o->qn >= QMAX) {
        pthread_mutex_unlock(&lock);
        return 7; /* SL_RESULT_BUFFER_INSUFFICIENT */
    }
    int i = (o->qh + o->qn) % QMAX;
    o->q[i].p = (int16_t *)buf;
    o->q[i].n = size / 2;
    o->qn++;
    pthread_mutex_unlock(&lock);
    return 0;
}
static SLresult bq_clear(void *self) {
    struct fobj *o = OBJ_FROM(self, vt_bq);
    pthread_mutex_lock(&lock);
    o->qn = 0;
    o->pos = 0;
    pthread_mutex_unlock(&lock);
    return 0;
}
static SLresult bq_getstate(void *self, uint32_t *st) {
    struct fobj *o = OBJ_FROM(self, vt_bq);
    st[0] = (uint32_t)o->qn; /* count */
    st[1] = 0;               /* index */
    return 0;
}
static SLresult bq_register(void *self, bq_callback cb, void *ctx) {
    struct fobj *o = OBJ_FROM(self, vt_bq);
    pthread_mutex_lock(&lock);
    o->cb = cb;
    o->cb_ctx = ctx;
    pthread_mutex_unlock(&lock);
    return 0;
}
static const void *const bq_vtbl[] = {bq_enqueue, bq_clear, bq_getstate, bq_register};

static struct fobj *new_obj(enum kind k) {
    struct fobj *o = calloc(1, sizeof *o);
    o->vt_object = object_vtbl;
    o->vt_engine = engine_vtbl;
    o->vt_play = k == K_RECORDER ? record_vtbl : play_vtbl;
    o->vt_bq = bq_vtbl;
    o->kind = k;
    o->state = 1;
    return o;
}

SLresult slCreateEngine(void **engine, uint32_t nopts, const void *opts, uint32_t nitf, const void *ids,
                        const void *req) {
    (void)nopts; (void)opts; (void)nitf; (void)ids; (void)req;
    *engine = &new_obj(K_ENGINE)->vt_object;
    trace("slCreateEngine");
    return 0;
}
