/* tonemeter: test tool for the handshake tones and for impaired recordings.
 *   tonemeter generate HZ SECONDS [RATE] > tone.raw      a full-scale sine, s16le mono
 *   tonemeter measure FILE [RATE]                        sign changes per 1260-sample window
 *   tonemeter noise IN OUT SNR_DB [SEED]                 add white Gaussian noise at SNR_DB
 *                                                        below the recording's mean power
 *   tonemeter clock IN OUT PPM                           resample as if the reader's clock
 *                                                        ran PPM parts per million fast
 * measure prints one JSON object per run of equal windows: the first window, how many,
 * the sign changes and the frequency they mean (changes x rate / 2520), the peak. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc >= 4 && !strcmp(argv[1], "generate")) {
        double hz = atof(argv[2]), secs = atof(argv[3]), rate = argc > 4 ? atof(argv[4]) : 44100;
        long n = (long)(secs * rate);
        for (long i = 0; i < n; i++) {
            int16_t s = (int16_t)lrint(32000 * sin(2 * M_PI * hz * (double)i / rate + 0.3));
            fwrite(&s, 2, 1, stdout);
        }
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "measure")) {
        double rate = argc > 3 ? atof(argv[3]) : 44100;
        FILE *f = fopen(argv[2], "rb");
        if (!f) { perror(argv[2]); return 2; }
        int16_t s;
        int prev = -1, changes = 0, pos = 0, peak = 0, win = 0, run_start = 0, run_len = 0, run_changes = -1, run_peak = 0;
        while (fread(&s, 2, 1, f) == 1) {
            int sign = s >= 0;
            if (prev >= 0 && sign != prev) changes++;
            prev = sign;
            if (abs(s) > peak) peak = abs(s);
            if (++pos == 1260) {
                if (changes != run_changes) {
                    if (run_len) printf("{\"window\":%d,\"windows\":%d,\"changes\":%d,\"hz\":%.2f,\"peak\":%d}\n", run_start,
                                        run_len, run_changes, run_changes * rate / 2520.0, run_peak);
                    run_start = win; run_len = 0; run_changes = changes; run_peak = 0;
                }
                run_len++;
                if (peak > run_peak) run_peak = peak;
                win++; pos = 0; changes = 0; peak = 0;
            }
        }
        if (run_len) printf("{\"window\":%d,\"windows\":%d,\"changes\":%d,\"hz\":%.2f,\"peak\":%d}\n", run_start, run_len,
                            run_changes, run_changes * rate / 2520.0, run_peak);
        return 0;
    }
    if (argc >= 5 && !strcmp(argv[1], "noise")) {
        FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");
        if (!in || !out) { perror("tonemeter"); return 2; }
        double snr = atof(argv[4]);
        unsigned long long x = argc > 5 ? strtoull(argv[5], NULL, 0) : 1;
        int16_t v;
        double power = 0;
        long n = 0;
        while (fread(&v, 2, 1, in) == 1) { power += (double)v * v; n++; }
        if (!n) return 2;
        power /= (double)n;
        double sigma = sqrt(power / pow(10, snr / 10));
        rewind(in);
        while (fread(&v, 2, 1, in) == 1) {
            /* Box-Muller over a 64-bit LCG: reproducible for a seed */
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            double u1 = ((x >> 11) + 1.0) / 9007199254740993.0;
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            double u2 = (x >> 11) / 9007199254740992.0;
            double g = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
            double y = v + sigma * g;
            if (y > 32767) y = 32767;
            if (y < -32768) y = -32768;
            int16_t w = (int16_t)lrint(y);
            fwrite(&w, 2, 1, out);
        }
        fclose(out);
        return 0;
    }
    if (argc >= 5 && !strcmp(argv[1], "clock")) {
        FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");
        if (!in || !out) { perror("tonemeter"); return 2; }
        double ratio = 1 + atof(argv[4]) / 1e6; /* input samples per output sample */
        long cap = 1 << 20, n = 0;
        int16_t *b = malloc((size_t)cap * 2);
        int16_t v;
        while (fread(&v, 2, 1, in) == 1) {
            if (n == cap) b = realloc(b, (size_t)(cap *= 2) * 2);
            b[n++] = v;
        }
        for (double t = 0; t < n - 1; t += ratio) {
            long i = (long)t;
            double f = t - (double)i;
            int16_t w = (int16_t)lrint(b[i] * (1 - f) + b[i + 1] * f);
            fwrite(&w, 2, 1, out);
        }
        fclose(out);
        return 0;
    }
    fprintf(stderr, "usage: tonemeter generate HZ SECONDS [RATE] | measure FILE [RATE] | noise IN OUT SNR_DB [SEED] | clock IN OUT PPM\n");
    return 64;
}
