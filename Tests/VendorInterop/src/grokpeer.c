/* grokpeer: a minimal device-side peer ("a Grokker") for capturing what the vendor host
 * library sends. Test tool only, for a clean channel: it is not the project's emulator.
 *
 *   grokpeer --in FILE|- --out FILE|- [--events FILE] [--rate 44100] [--tags EPC[:TID],...]
 *            [--protocol 20] [--hw-type 5] [--hw-rev 6] [--version 1.8.0] [--new-version 1.9.0]
 *            [--software-type 0] [--serial N] [--device-flags 0x80] [--region 0]
 *            [--max-program-bytes 64] [--echo-id 0] [--nack-first N] [--bad-crc-first N]
 *            [--mute-after-seconds S]
 *
 * It is clocked by its input: for every sample read it writes one sample, so it runs at
 * whatever pace the host's stream has (vendorhost paces to the wall clock). Its times are
 * in samples of its own input. It speaks, from the reader's side, what the reference
 * (shared/reference/vendor-wire-protocol.md) describes: the request tone, the answer tone
 * of each samples-per-bit setting, the idle tone, phase-continuous FSK with UART framing,
 * requests and responses with crc8, and slave mode for an inventory with a few tags.
 * One JSON object per line on --events (stderr by default) for each thing it sees. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* {spb, answer divisor a (tone = rate / 2a), sign changes per "1" bit, per "0" bit}:
 * the vendor library's modem table (offset 0x22b00 of the x86_64 build). */
static const int modes[][4] = {{12, 9, 6, 3}, {8, 10, 4, 1}, {10, 11, 5, 2}, {16, 12, 8, 4}, {20, 14, 10, 5},
                               {24, 16, 12, 6}, {36, 19, 9, 4}, {48, 29, 6, 3}, {72, 38, 6, 3}};
enum { NMODES = 9, WINDOW = 1260 };

static FILE *events;
static double rate = 44100;
static uint64_t now; /* samples read so far */

static void ev(const char *fmt, ...) {
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(events, "{\"t\":%.4f,\"sample\":%llu,%s}\n", (double)now / rate, (unsigned long long)now, buf);
    fflush(events);
}
static char *hex(const uint8_t *p, int n) {
    static char bufs[4][2048];
    static int k;
    char *b = bufs[k++ & 3];
    int m = n > 1000 ? 1000 : n;
    for (int i = 0; i < m; i++) sprintf(b + 2 * i, "%02x", p[i]);
    b[2 * m] = 0;
    return b;
}

/* CRC-16/MCRF4XX: reflected 0x8408, init 0xffff, no final xor; crc8 is its low byte. */
static uint16_t crc16(const uint8_t *p, int n) {
    uint16_t c = 0xffff;
    for (int i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x8408 : c >> 1;
    }
    return c;
}

/* ---- device configuration ---- */
static int protocol = 20, hw_type = 5, hw_rev = 6, ver[3] = {1, 8, 0}, new_ver[3] = {1, 9, 0}, sw_type = 0,
           dev_flags = 0x80, region = 0, ignore_first, max_prog = 64, echo_id = 0, nack_first, bad_crc_first, antenna = 1,
           prov_status = 1, max_power_byte = 250, minus_sens = 85, volume_levels = 4, max_tones = 8;
static uint32_t serial = 1234567;
static double mute_after = -1;
struct tag { uint8_t epc[32]; int epclen; uint8_t tid[32]; int tidlen; int finds; int reported; };
static struct tag tags[16];
static int ntags;

/* ---- modulator ---- */
static int spb = 0, mode = -1;
static double phase, tx_freq, phase_offset = 1.0 / 16;
static uint8_t txq[4096];
static int txq_n, txq_pos, tx_bit_sample;
static uint16_t tx_cur_bits; /* 10-bit frame being sent, MSB first: 1, d7..d0, 0 */
static int frame_bits_left;

static double tone1(void) { return mode < 0 ? 0 : modes[mode][2] * rate / (2.0 * spb); }
static double tone0(void) { return mode < 0 ? 0 : modes[mode][3] * rate / (2.0 * spb); }

static void send_bytes(const uint8_t *p, int n) {
    if (txq_n + n > (int)sizeof txq) return;
    memcpy(txq + txq_n, p, (size_t)n);
    txq_n += n;
}
static int tx_idle(void) { return txq_pos >= txq_n && frame_bits_left == 0; }

enum { PH_REQUEST, PH_ANSWERED, PH_CONNECTED, PH_MUTE };
static int phase_state = PH_REQUEST;
/* 48 kHz handshake: the host answers the request tone with ~958 Hz at 48 kHz (50-51 sign
 * changes a window); the reader then moves to 140 changes a window (2666.67 Hz at 48 kHz)
 * and the host goes on with its samples-per-bit answer tone. */
static int rate_ack, rate_runs;
static uint64_t mute_until;

static int16_t next_tx_sample(void) {
    double f;
    if (phase_state == PH_MUTE) return 0;
    /* tones are given at the nominal rate; what counts is cycles per sample, so the same
     * samples serve a host running at 48 kHz (every count per window is the same) */
    if (phase_state == PH_REQUEST) f = rate_ack ? 1260.0 / 9 * rate / (2.0 * WINDOW) : 3150;
    else if (phase_state == PH_ANSWERED) f = tone0();
    else {
        if (frame_bits_left == 0 && tx_bit_sample == 0 && txq_pos < txq_n) {
            uint8_t b = txq[txq_pos++];
            tx_cur_bits = (uint16_t)(1u << 9 | (unsigned)b << 1 | 0);
            frame_bits_left = 10;
            if (txq_pos == txq_n) txq_pos = txq_n = 0;
        }
        if (frame_bits_left > 0) {
            int bit = (tx_cur_bits >> (frame_bits_left - 1)) & 1;
            f = bit ? tone1() : tone0();
            if (++tx_bit_sample >= spb) {
                tx_bit_sample = 0;
                frame_bits_left--;
            }
        } else f = tone0();
    }
    tx_freq = f;
    phase += f / rate;
    if (phase >= 1) phase -= 1;
    /* --phase-offset turns of advance (default 1/16): every tone here is a multiple of
     * rate/48, so with 1/16 no sample is ever exactly zero. With 0, samples hit 0 exactly
     * and the vendor host's receive path loses a bit now and then (a retry in about one
     * 100-byte echo in twenty at 10 and 12 samples per bit, enough to fail AutoConfig). */
    return (int16_t)lrint(32000.0 * sin(2 * M_PI * (phase + phase_offset)));
}

/* ---- handshake detector: sign changes per 1260-sample window ---- */
static int silence_windows = 5;
static uint64_t pause_until;
/* --first-read-ids (experiments on the first-read layout when subsequent finds are not
 * reported): 0 = command 02 for 12-byte EPCs (what the host accepts), 1 = 01 with [id],
 * 2 = 01 with [id][numFinds], 3 = always 02; 1 and 2 are NACKed by the host */
static int first_read_ids;
static int win_count, win_pos, last_sign, cand_mode = -1, cand_runs, idle_runs, low_runs;
static void handshake_window(int changes);

/* ---- demodulator ---- */
static uint8_t hist[256]; /* sign change indicator of the last samples */
static int hist_sum, rx_state, rx_bitpos;
static uint64_t rx_frame_start;
static int rx_byte;
static void rx_byte_done(uint8_t b);

static void demod_sample(int changed) {
    /* sliding count of sign changes over the last spb samples */
    hist_sum += changed - hist[(now) % (unsigned)spb];
    hist[now % (unsigned)spb] = (uint8_t)changed;
    double thr = (modes[mode][2] + modes[mode][3]) / 2.0;
    if (rx_state == 0) {
        if (hist_sum > thr) {
            /* half a start bit has gone by */
            rx_frame_start = now - (uint64_t)(spb / 2);
            rx_state = 1;
            rx_byte = 0;
            rx_bitpos = 1; /* start bit consumed once we pass its end */
        }
        return;
    }
    /* decide each bit when the window covers exactly that bit */
    uint64_t bit_end = rx_frame_start + (uint64_t)rx_bitpos * (uint64_t)spb + (uint64_t)spb - 1;
    if (now == bit_end) {
        int bit = hist_sum > thr;
        if (rx_bitpos <= 8) rx_byte = rx_byte << 1 | bit;
        rx_bitpos++;
        if (rx_bitpos == 10) {
            rx_byte_done((uint8_t)rx_byte);
            rx_state = 2; /* wait for the stop bit's end, then look for the next start */
        }
    }
    if (rx_state == 2 && now >= rx_frame_start + 10u * (uint64_t)spb - 1) {
        rx_state = 0;
        /* back-to-back byte: a start bit follows at once */
        if (hist_sum > thr) {
            rx_frame_start = now + 1 - (uint64_t)spb;
            rx_state = 1; rx_byte = 0; rx_bitpos = 1;
        }
    }
}

/* ---- packets ---- */
static uint8_t pk[300];
static int pk_n, pk_need;
static uint64_t pk_last;
static int slave, waiting_answer, inv_flags, inv_max_tid, inv_per_read, rounds, stop_requested;
static uint64_t next_slave_send, last_slave_sent;
static uint8_t last_sent[300];
static int last_sent_n, resend_count;
static int req_count[64];
static uint8_t pending_access[300];
static int pending_access_n, pending_access_id;

static void send_packet(const uint8_t *p, int n, const char *what) {
    ev("\"dir\":\"tx\",\"what\":\"%s\",\"bytes\":\"%s\"", what, hex(p, n));
    send_bytes(p, n);
}
static void respond_short(int code) {
    uint8_t b = (uint8_t)(((~code) & 0xf) << 4 | code);
    send_packet(&b, 1, "response");
}
static void respond_long(int id, const uint8_t *data, int n) {
    uint8_t b[300];
    int code = 8 | id;
    b[0] = (uint8_t)(((~code) & 0xf) << 4 | code);
    b[1] = (uint8_t)n;
    memcpy(b + 2, data, (size_t)n);
    b[2 + n] = (uint8_t)crc16(b, 2 + n);
    send_packet(b, 3 + n, "response");
}
static void send_request(int cmd, const uint8_t *payload, int n, int retry) {
    uint8_t b[300];
    b[0] = (uint8_t)(0x80 | (retry ? 0x40 : 0) | cmd);
    b[1] = (uint8_t)n;
    memcpy(b + 2, payload, (size_t)n);
    b[2 + n] = (uint8_t)crc16(b, 2 + n);
    send_packet(b, 3 + n, "request");
    memcpy(last_sent, b, (size_t)(3 + n));
    last_sent_n = 3 + n;
    waiting_answer = 1;
    last_slave_sent = now;
}

static void version_bytes(uint8_t *v) {
    memset(v, 0, 31);
    v[0] = (uint8_t)(6 + protocol / 256); v[1] = (uint8_t)(protocol % 256);
    v[2] = (uint8_t)hw_type; v[3] = (uint8_t)(hw_type >> 8);
    v[4] = (uint8_t)hw_rev;
    v[5] = (uint8_t)ver[0]; v[6] = (uint8_t)ver[1]; v[7] = (uint8_t)ver[2];
    v[8] = (uint8_t)antenna; v[9] = (uint8_t)max_power_byte; v[10] = (uint8_t)minus_sens;
    v[11] = (uint8_t)volume_levels; v[12] = (uint8_t)dev_flags; v[13] = (uint8_t)sw_type;
    v[14] = (uint8_t)max_prog; v[15] = (uint8_t)prov_status;
    for (int i = 0; i < 8; i++) v[16 + i] = (uint8_t)(0x11 * (i + 1));
    v[24] = (uint8_t)serial; v[25] = (uint8_t)(serial >> 8); v[26] = (uint8_t)(serial >> 16); v[27] = (uint8_t)(serial >> 24);
    v[28] = 0; v[29] = (uint8_t)max_tones; v[30] = (uint8_t)region;
}

static void reset_link(const char *why, double mute_seconds) {
    ev("\"link\":\"reset\",\"why\":\"%s\",\"mute_seconds\":%.3f", why, mute_seconds);
    phase_state = mute_seconds > 0 ? PH_MUTE : PH_REQUEST;
    mute_until = now + (uint64_t)(mute_seconds * rate);
    mode = -1; spb = 0;
    slave = waiting_answer = 0;
    txq_n = txq_pos = frame_bits_left = tx_bit_sample = 0;
    rx_state = 0; pk_n = pk_need = 0;
    cand_mode = -1; cand_runs = idle_runs = low_runs = 0;
    rate_ack = rate_runs = 0;
}

static void handle_request(const uint8_t *p, int n) {
    int longform = p[0] & 0x80;
    int cmd = longform ? p[0] & 0x3f : p[0] & 0x3f;
    int retry = longform ? (p[0] >> 6) & 1 : (p[0] >> 6) & 1;
    const uint8_t *pl = longform ? p + 2 : p + 1;
    int pn = longform ? p[1] : 0;
    ev("\"dir\":\"rx\",\"what\":\"request\",\"command\":%d,\"retry\":%d,\"payload\":\"%s\",\"bytes\":\"%s\"", cmd, retry,
       hex(pl, pn), hex(p, n));
    req_count[cmd]++;
    if (ignore_first > 0) { ignore_first--; ev("\"ignored\":true"); return; }
    if (nack_first > 0) { nack_first--; respond_short(7); return; }
    if (bad_crc_first > 0) {
        bad_crc_first--;
        uint8_t v[31];
        version_bytes(v);
        uint8_t b[40];
        b[0] = 0x78; b[1] = 31; memcpy(b + 2, v, 31); b[33] = (uint8_t)(crc16(b, 33) ^ 0x5a);
        send_packet(b, 34, "response-bad-crc");
        return;
    }
    switch (cmd) {
    case 0x00: { /* GetVersion */
        uint8_t v[31];
        version_bytes(v);
        respond_long(0, v, 31);
        break;
    }
    case 0x03: { /* battery: raw LE16, (volts - 2.00) x 100, flags, percent */
        uint8_t b[5] = {0x34, 0x0c, 190, 0x04, 87};
        respond_long(0, b, protocol >= 14 ? 5 : 4);
        break;
    }
    case 0x0c: /* echo */
        respond_long(echo_id, pl, pn);
        break;
    case 0x07: { /* inventory start */
        inv_flags = pn > 0 ? pl[0] : 0;
        inv_max_tid = pn > 4 ? pl[4] : 0;
        inv_per_read = pn > 10 ? pl[10] & 1 : 0;
        respond_short(0);
        slave = 1; stop_requested = 0; rounds = 0; waiting_answer = 0;
        pending_access_n = 0;
        for (int i = 0; i < ntags; i++) { tags[i].reported = 0; tags[i].finds = 0; }
        next_slave_send = now + (uint64_t)(0.1 * rate);
        ev("\"slave\":\"enter\",\"inventory_flags\":%d", inv_flags);
        break;
    }
    case 0x01: /* ProgramReader */
        respond_short(0);
        break;
    case 0x02: { /* ChangeSoftwareType [len LE16][CRC16 LE][type][CRC32 LE][00] */
        int target = pn > 4 ? pl[4] : 0;
        respond_short(0);
        ev("\"firmware\":\"change_software_type\",\"target\":%d", target);
        /* after the answer has gone out: reset into the target software */
        sw_type = target;
        if (target == 0) memcpy(ver, new_ver, sizeof ver);
        mute_until = 0;
        /* reset after the queued answer: handled in main loop */
        phase_state = PH_CONNECTED;
        slave = 0;
        pending_access_id = -2; /* marker: reset when tx drains */
        break;
    }
    case 0x08: /* pause connection [ms LE16] */
        respond_short(0);
        pause_until = now + (uint64_t)((pn >= 2 ? pl[0] | pl[1] << 8 : 0) * rate / 1000.0) + (uint64_t)(0.2 * rate);
        break;
    default:
        respond_short(0);
        break;
    }
}

static void slave_answer(const uint8_t *p, int n) {
    int code = p[0] & 0xf;
    ev("\"dir\":\"rx\",\"what\":\"answer\",\"code\":%d,\"bytes\":\"%s\"", code, hex(p, n));
    waiting_answer = 0;
    resend_count = 0;
    if (code == 1) stop_requested = 1;
    if ((code & 8) && n > 3) {
        int id = code & 7;
        if (id != 0 && id != 1) {
            memcpy(pending_access, p + 2, (size_t)p[1]);
            pending_access_n = p[1];
            pending_access_id = id;
        }
    }
    if (last_sent_n && (last_sent[0] & 0x3f) == 0 && slave) {
        /* the host answered our "completed": slave mode ends */
        slave = 0;
        ev("\"slave\":\"exit\"");
        return;
    }
    next_slave_send = now + (uint64_t)(0.05 * rate);
}

static void rx_byte_done(uint8_t b) {
    if (pk_n > 0 && now - pk_last > (uint64_t)(40 * spb)) {
        ev("\"dir\":\"rx\",\"what\":\"fragment\",\"bytes\":\"%s\"", hex(pk, pk_n));
        pk_n = 0;
    }
    pk_last = now;
    pk[pk_n++] = b;
    if (pk_n == 1) {
        int code = b & 0xf, inv = b >> 4;
        int is_answer = slave && waiting_answer && inv == ((~code) & 0xf);
        if (is_answer) pk_need = (code & 8) ? -1 : 1;
        else pk_need = (b & 0x80) ? -1 : 2;
        if (pk_need == 1) { slave_answer(pk, 1); pk_n = 0; }
        return;
    }
    if (pk_n == 2 && pk_need == -1) pk_need = 3 + b;
    if (pk_need > 0 && pk_n >= pk_need) {
        uint16_t c = crc16(pk, pk_n - 1);
        int ok = (uint8_t)c == pk[pk_n - 1];
        if (!ok) ev("\"dir\":\"rx\",\"what\":\"bad_crc\",\"bytes\":\"%s\",\"expected_crc\":\"%02x\"", hex(pk, pk_n), (uint8_t)c);
        else {
            int code = pk[0] & 0xf, inv = pk[0] >> 4;
            if (slave && waiting_answer && inv == ((~code) & 0xf) && !(pk[0] & 0x80 && code < 8)) slave_answer(pk, pk_n);
            else handle_request(pk, pk_n);
        }
        pk_n = 0;
        pk_need = 0;
    }
}

/* Reader -> host packets in slave mode, one at a time, each waiting for the host's answer. */
static void slave_step(void) {
    if (!slave || !tx_idle()) return;
    if (waiting_answer) {
        if (now - last_slave_sent > (uint64_t)(1.5 * rate) && resend_count < 8) {
            resend_count++;
            ev("\"slave\":\"resend\",\"count\":%d", resend_count);
            last_sent[0] |= 0x40;
            last_sent[last_sent_n - 1] = (uint8_t)crc16(last_sent, last_sent_n - 1);
            send_packet(last_sent, last_sent_n, "request-retry");
            last_slave_sent = now;
        }
        return;
    }
    if (now < next_slave_send) return;
    uint8_t b[256];
    int n = 0;
    rounds++;
    if (stop_requested) {
        b[n++] = 0; b[n++] = (uint8_t)rounds; b[n++] = 0;
        send_request(0x00, b, n, 0);
        return;
    }
    if (pending_access_n) {
        /* tag access result: [result][epcLen][EPC][data] */
        int id = pending_access_id;
        const uint8_t *q = pending_access;
        int off = id == 6 ? 1 : 0;
        int el = q[off];
        b[n++] = 0;
        b[n++] = (uint8_t)el;
        memcpy(b + n, q + off + 1, (size_t)el);
        n += el;
        if (id == 6 && q[0] == 0x02) {
            /* change power [02][initial][min][max]: acknowledged with an empty result */
            n = 0;
            b[n++] = 0;
            b[n++] = 0;
            pending_access_n = 0;
            ev("\"slave\":\"power_changed\",\"initial\":%d,\"min\":%d,\"max\":%d", q[1], q[2], q[3]);
            send_request(0x06, b, n, 0);
            return;
        }
        if (id == 6) {
            int words = q[off + 1 + el + 3];
            for (int w = 0; w < words * 2; w++) b[n++] = (uint8_t)(0xa0 + w);
        }
        pending_access_n = 0;
        ev("\"slave\":\"access_result\",\"answer_id\":%d", id);
        send_request(0x06, b, n, 0);
        return;
    }
    for (int i = 0; i < ntags; i++) {
        if (tags[i].reported) continue;
        tags[i].reported = 1;
        tags[i].finds = 1;
        b[n++] = 0;
        b[n++] = (uint8_t)rounds;
        if ((inv_flags & 0x20) || first_read_ids == 2) { b[n++] = (uint8_t)(i + 1); b[n++] = 1; }
        else if (first_read_ids == 1) b[n++] = (uint8_t)(i + 1);
        if (inv_flags & 0x08) b[n++] = 0x5a;
        b[n++] = (uint8_t)tags[i].epclen;
        memcpy(b + n, tags[i].epc, (size_t)tags[i].epclen);
        n += tags[i].epclen;
        if (inv_max_tid) {
            b[n++] = (uint8_t)tags[i].tidlen;
            memcpy(b + n, tags[i].tid, (size_t)tags[i].tidlen);
            n += tags[i].tidlen;
        }
        if (((first_read_ids == 0 && !(inv_flags & 0x20) && !inv_max_tid) || first_read_ids == 3) &&
            tags[i].epclen == 12) {
            /* command 02: [rounds][EPC 12] - the fixed 12-byte EPC form, no length byte, no
             * flags byte (accepted by the host when subsequent finds are not reported) */
            n = 0;
            b[n++] = (uint8_t)rounds;
            memcpy(b + n, tags[i].epc, 12);
            n += 12;
            send_request(0x02, b, n, 0);
            return;
        }
        send_request(0x01, b, n, 0);
        return;
    }
    if ((inv_flags & 0x20) && ntags && rounds % 3 == 0) {
        int i = rounds % ntags;
        tags[i].finds++;
        b[n++] = (uint8_t)rounds; b[n++] = (uint8_t)(i + 1); b[n++] = (uint8_t)tags[i].finds; b[n++] = 0x5a;
        send_request(0x03, b, n, 0);
        next_slave_send = now + (uint64_t)(0.25 * rate);
        return;
    }
    b[n++] = (uint8_t)rounds;
    send_request(0x05, b, n, 0);
    next_slave_send = now + (uint64_t)(0.25 * rate);
}

static void handshake_window(int changes) {
    if (phase_state == PH_REQUEST) {
        if (changes >= 49 && changes <= 52) {
            if (++rate_runs >= 2 && !rate_ack) {
                rate_ack = 1;
                ev("\"handshake\":\"rate_tone\",\"changes\":%d,\"meaning\":\"host at 48000 samples/s\"", changes);
            }
            return;
        }
        rate_runs = 0;
        int found = -1;
        for (int m = 0; m < NMODES; m++) {
            double expect = (double)WINDOW / modes[m][1];
            if (fabs(changes - expect) <= 3) found = m;
        }
        if (found >= 0 && found == cand_mode) cand_runs++;
        else { cand_mode = found; cand_runs = found >= 0; }
        if (cand_runs >= 2) {
            mode = cand_mode;
            spb = modes[mode][0];
            phase_state = PH_ANSWERED;
            idle_runs = 0;
            memset(hist, 0, sizeof hist);
            hist_sum = 0;
            ev("\"handshake\":\"answer_tone\",\"spb\":%d,\"changes\":%d,\"tone_hz\":%.2f", spb, changes,
               changes * rate / (2.0 * WINDOW));
        }
    } else if (phase_state == PH_ANSWERED) {
        double expect = WINDOW * modes[mode][3] / (double)spb;
        if (fabs(changes - expect) <= 4) idle_runs++;
        else idle_runs = 0;
        if (idle_runs >= 2) {
            phase_state = PH_CONNECTED;
            ev("\"handshake\":\"connected\",\"spb\":%d,\"changes\":%d", spb, changes);
        }
    } else if (phase_state == PH_CONNECTED) {
        if (changes < 20) {
            /* a host that goes quiet has closed the link (it waits for our request tone
             * again), unless it announced a pause (PauseConnection 0x08, in ms) */
            if (++low_runs >= silence_windows && now >= pause_until) reset_link("host silent", 0);
        } else low_runs = 0;
    }
}

static int parse_version(const char *s, int *v) { return sscanf(s, "%d.%d.%d", &v[0], &v[1], &v[2]) == 3; }
static int hexbytes(const char *s, uint8_t *out, int max) {
    int n = 0;
    while (s[0] && s[1] && n < max && s[0] != ':' && s[0] != ',') {
        unsigned v;
        sscanf(s, "%2x", &v);
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

int main(int argc, char **argv) {
    const char *in = NULL, *out = NULL, *evp = NULL;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(o, name) && v && (i++, 1))
        if (OPT("--in")) in = v;
        else if (OPT("--out")) out = v;
        else if (OPT("--events")) evp = v;
        else if (OPT("--rate")) rate = atof(v);
        else if (OPT("--protocol")) protocol = atoi(v);
        else if (OPT("--hw-type")) hw_type = atoi(v);
        else if (OPT("--hw-rev")) hw_rev = atoi(v);
        else if (OPT("--version")) parse_version(v, ver);
        else if (OPT("--new-version")) parse_version(v, new_ver);
        else if (OPT("--software-type")) sw_type = atoi(v);
        else if (OPT("--serial")) serial = (uint32_t)strtoul(v, NULL, 0);
        else if (OPT("--device-flags")) dev_flags = (int)strtol(v, NULL, 0);
        else if (OPT("--region")) region = atoi(v);
        else if (OPT("--max-program-bytes")) max_prog = atoi(v);
        else if (OPT("--echo-id")) echo_id = atoi(v);
        else if (OPT("--nack-first")) nack_first = atoi(v);
        else if (OPT("--ignore-first")) ignore_first = atoi(v);
        else if (OPT("--first-read-ids")) first_read_ids = atoi(v);
        else if (OPT("--bad-crc-first")) bad_crc_first = atoi(v);
        else if (OPT("--mute-after-seconds")) mute_after = atof(v);
        else if (OPT("--phase-offset")) phase_offset = atof(v);
        else if (OPT("--silence-seconds")) silence_windows = (int)(atof(v) * rate / WINDOW);
        else if (OPT("--tags")) {
            const char *p = v;
            while (*p && ntags < 16) {
                struct tag *t = &tags[ntags++];
                t->epclen = hexbytes(p, t->epc, 32);
                p += 2 * t->epclen;
                if (*p == ':') { p++; t->tidlen = hexbytes(p, t->tid, 32); p += 2 * t->tidlen; }
                else { t->tidlen = 12; for (int k = 0; k < 12; k++) t->tid[k] = (uint8_t)(0xe2 + k); }
                if (*p == ',') p++;
            }
        } else { fprintf(stderr, "grokpeer: unknown option %s\n", o); return 64; }
    }
    if (!in || !out) { fprintf(stderr, "usage: grokpeer --in FILE|- --out FILE|- [options]\n"); return 64; }
    FILE *fi = !strcmp(in, "-") ? stdin : fopen(in, "rb");
    FILE *fo = !strcmp(out, "-") ? stdout : fopen(out, "wb");
    events = evp ? fopen(evp, "w") : stderr;
    if (!fi || !fo || !events) { perror("grokpeer"); return 2; }
    setvbuf(fo, NULL, _IONBF, 0);
    /* a reader answers in time however busy the host machine is: real-time priority where
     * allowed (the host side's audio threads have it too) */
    struct sched_param sp = {.sched_priority = 10};
    if (!getenv("GROKPEER_NO_REALTIME")) (void)sched_setscheduler(0, SCHED_FIFO, &sp);
    ev("\"peer\":\"start\",\"protocol\":%d,\"hw_rev\":%d,\"software_type\":%d,\"tags\":%d", protocol, hw_rev, sw_type, ntags);
    int16_t ib[64], ob[64];
    size_t got;
    while ((got = fread(ib, 2, 64, fi)) > 0) {
        for (size_t k = 0; k < got; k++) {
            int s = ib[k] >= 0;
            int changed = s != last_sign;
            last_sign = s;
            if (phase_state == PH_MUTE && now >= mute_until) {
                phase_state = PH_REQUEST;
                ev("\"link\":\"request_tone\"");
            }
            if (mute_after > 0 && now == (uint64_t)(mute_after * rate)) reset_link("mute-after-seconds", 1e9);
            win_count += changed;
            if (++win_pos == WINDOW) {
                handshake_window(win_count);
                win_pos = win_count = 0;
            }
            if (phase_state == PH_CONNECTED && spb) demod_sample(changed);
            if (pending_access_id == -2 && tx_idle()) {
                pending_access_id = 0;
                reset_link("change software type", 1.0);
            }
            slave_step();
            ob[k] = next_tx_sample();
            now++;
        }
        if (fwrite(ob, 2, got, fo) != got) break;
    }
    ev("\"peer\":\"end\"");
    return 0;
}
