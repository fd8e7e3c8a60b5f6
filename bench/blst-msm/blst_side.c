// SPDX-License-Identifier: Apache-2.0
/*
 * The blst side of bench/cpu-msm-vs-blst.sh: blst's own Pippenger
 * (blst_p1s_mult_pippenger / blst_p2s_mult_pippenger, single-threaded, its scratch from
 * blst_p?s_mult_pippenger_scratch_sizeof) on the inputs cuzk_side wrote.
 *   blst_side FILE RUNS   one warm-up, then RUNS timed runs; prints the medians of the wall
 *                         and the CPU time in ms and the result (uncompressed, hex), as
 *                         cuzk_side run does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blst.h"

#define SIDE_NAME "blst_side"
#include "side.h"


/* Written once for P1 and P2. The point and scalar arrays are contiguous: blst reads
 * points[0] onwards when points[1] is NULL, and the same for the scalars. */
#define SIDE(P, PB)                                                                             \
    static void P##_run(FILE *f, size_t n, int runs)                                            \
    {                                                                                           \
        blst_##P##_affine *pts = malloc(sizeof *pts * n);                                       \
        uint8_t *sc = malloc(32 * n);                                                           \
        void *scratch = malloc(blst_##P##s_mult_pippenger_scratch_sizeof(n));                   \
        if (!pts || !sc || !scratch)                                                            \
            die("out of memory");                                                               \
        uint8_t enc[PB];                                                                        \
        for (size_t i = 0; i < n; i++)                                                          \
            if (fread(enc, PB, 1, f) != 1 || blst_##P##_deserialize(&pts[i], enc) != BLST_SUCCESS) \
                die("bad point in the input file");                                             \
        if (fread(sc, 32, n, f) != n)                                                           \
            die("short input file");                                                            \
        const blst_##P##_affine *pp[2] = {pts, NULL};                                           \
        const byte *sp[2] = {sc, NULL};                                                         \
        double *t = malloc(sizeof(double) * 2 * (size_t)(runs + 1)), *tc = t + runs + 1;   \
        blst_##P r;                                                                             \
        for (int i = -1; i < runs; i++) {                                                       \
            double t0 = now_ms(), c0 = cpu_ms();                                        \
            blst_##P##s_mult_pippenger(&r, pp, n, sp, 255, scratch);                            \
            if (i >= 0) {                                                                       \
                t[i] = now_ms() - t0;                                                           \
                tc[i] = cpu_ms() - c0;                                                          \
            }                                                                                   \
        }                                                                                       \
        qsort(t, (size_t)runs, sizeof(double), cmp_d);                                          \
        qsort(tc, (size_t)runs, sizeof(double), cmp_d);                                         \
        blst_##P##_serialize(enc, &r);                                                          \
        printf("ms %.3f cpu %.3f result ", t[runs / 2], tc[runs / 2]);                          \
        for (int i = 0; i < PB; i++)                                                            \
            printf("%02x", enc[i]);                                                             \
        printf("\n");                                                                           \
        free(t), free(pts), free(sc), free(scratch);                                            \
    }

SIDE(p1, 96)
SIDE(p2, 192)

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: blst_side FILE RUNS");
    int g;
    size_t n;
    FILE *f = side_open(argv[1], &g, &n);
    int runs = atoi(argv[2]);
    if (runs < 1)
        die("RUNS must be at least 1");
    if (g == 1)
        p1_run(f, n, runs);
    else
        p2_run(f, n, runs);
    fclose(f);
    return 0;
}
