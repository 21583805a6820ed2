/* tonemeter: test tool for the handshake tones.
 *   tonemeter generate HZ SECONDS [RATE] > tone.raw      a full-scale sine, s16le mono
 *   tonemeter measure FILE [RATE]                        sign changes per 1260-sample window
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
    fprintf(stderr, "usage: tonemeter generate HZ SECONDS [RATE] | tonemeter measure FILE [RATE]\n");
    return 64;
}
