// SPDX-License-Identifier: Apache-2.0
/*
 * The cuzk side of bench/cpu-msm-vs-blst.sh.
 *   cuzk_side gen g1|g2 K SEED FILE   2^K distinct random points and 2^K random scalars of
 *                                     Fr, written to FILE for both sides to read
 *   cuzk_side run FILE RUNS THREADS [xyzz] [w=C]
 *                                     cuzk's Pippenger (cuzk_g1_msm / cuzk_g2_msm) on FILE's
 *                                     inputs with THREADS threads: one warm-up, then RUNS
 *                                     timed runs; prints the medians of the wall and the
 *                                     CPU time in ms, the least CPU time, the window and
 *                                     the result (uncompressed, hex). xyzz: XYZZ buckets
 *                                     only; w=C: window C instead of the cost model's.
 * FILE: "CZMSM1\n", the group (1 or 2, one byte), n (8 bytes little-endian), n points in the
 * uncompressed zcash encoding (96 or 192 bytes), n scalars (32 bytes little-endian,
 * canonical). Points: P_i = C[i / 4096] + B[i mod 4096] for random multiples B, C of the
 * generator, so 2^20 of them cost 2^20 additions, not 2^20 multiplications.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuzk/ec.h"
#include "cuzk/ff.h"
#include "cuzk/msm.h"

#define SIDE_NAME "cuzk_side"
#include "side.h"

#define SPLIT 4096
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}


/* Written once for G1 and G2: generation and the timed MSM. */
#define SIDE(G, AFF, JAC, PB)                                                                   \
    static void G##_rand_mul(AFF *out, uint64_t *s)                                             \
    {                                                                                           \
        AFF g;                                                                                  \
        JAC gj, t;                                                                              \
        cuzk_##G##_generator(&g);                                                               \
        cuzk_##G##_jac_from_affine(&gj, &g);                                                    \
        uint64_t k[4] = {mix(s), mix(s), mix(s), mix(s) >> 2};                                  \
        cuzk_##G##_mul_var(&t, &gj, k, 254);                                                    \
        cuzk_##G##_jac_to_affine(out, &t);                                                      \
    }                                                                                           \
    static void G##_gen(FILE *f, size_t n, uint64_t seed)                                       \
    {                                                                                           \
        size_t nc = n / SPLIT + 1;                                                              \
        AFF *b = malloc(sizeof *b * SPLIT), *c = malloc(sizeof *c * nc);                        \
        JAC *tmp = malloc(sizeof *tmp * SPLIT);                                                 \
        AFF *row = malloc(sizeof *row * SPLIT);                                                 \
        if (!b || !c || !tmp || !row)                                                           \
            die("out of memory");                                                               \
        uint64_t s = seed;                                                                      \
        for (size_t i = 0; i < SPLIT; i++)                                                      \
            G##_rand_mul(&b[i], &s);                                                            \
        for (size_t i = 0; i < nc; i++)                                                         \
            G##_rand_mul(&c[i], &s);                                                            \
        uint8_t enc[PB];                                                                        \
        for (size_t i0 = 0; i0 < n; i0 += SPLIT) {                                              \
            size_t m = n - i0 < SPLIT ? n - i0 : SPLIT;                                         \
            for (size_t i = 0; i < m; i++) {                                                    \
                cuzk_##G##_jac_from_affine(&tmp[i], &c[(i0 + i) / SPLIT]);                      \
                cuzk_##G##_jac_add_affine_var(&tmp[i], &tmp[i], &b[(i0 + i) % SPLIT]);          \
            }                                                                                   \
            cuzk_##G##_batch_to_affine(row, tmp, m);                                            \
            for (size_t i = 0; i < m; i++) {                                                    \
                cuzk_##G##_to_uncompressed(enc, &row[i]);                                       \
                if (fwrite(enc, PB, 1, f) != 1)                                                 \
                    die("write failed");                                                        \
            }                                                                                   \
        }                                                                                       \
        free(b), free(c), free(tmp), free(row);                                                 \
    }                                                                                           \
    static void G##_run(FILE *f, size_t n, int runs, unsigned threads, unsigned flags,  \
                        unsigned window)        \
    {                                                                                           \
        AFF *pts = malloc(sizeof *pts * n);                                                     \
        cuzk_msm_scalar *sc = malloc(sizeof *sc * n);                                           \
        if (!pts || !sc)                                                                        \
            die("out of memory");                                                               \
        uint8_t enc[PB];                                                                        \
        for (size_t i = 0; i < n; i++)                                                          \
            if (fread(enc, PB, 1, f) != 1 || cuzk_##G##_from_uncompressed(&pts[i], enc, 0))     \
                die("bad point in the input file");                                             \
        for (size_t i = 0; i < n; i++) {                                                        \
            uint8_t b[32];                                                                      \
            if (fread(b, 32, 1, f) != 1)                                                        \
                die("short input file");                                                        \
            for (int l = 0; l < 4; l++)                                                         \
                memcpy(&sc[i].l[l], b + 8 * l, 8); /* little-endian host */                     \
        }                                                                                       \
        cuzk_msm_opts o = {.nthreads = threads, .window = window, .flags = flags};             \
        double *t = malloc(sizeof(double) * 2 * (size_t)(runs + 1)), *tc = t + runs + 1;   \
        JAC r;                                                                                  \
        for (int i = -1; i < runs; i++) {                                                       \
            double t0 = now_ms(), c0 = cpu_ms();                                        \
            if (cuzk_##G##_msm(&r, pts, sc, n, &o) != CUZK_OK)                                  \
                die("msm failed");                                                              \
            if (i >= 0) {                                                                       \
                t[i] = now_ms() - t0;                                                           \
                tc[i] = cpu_ms() - c0;                                                          \
            }                                                                                   \
        }                                                                                       \
        qsort(t, (size_t)runs, sizeof(double), cmp_d);                                          \
        qsort(tc, (size_t)runs, sizeof(double), cmp_d);                                         \
        AFF a;                                                                                  \
        cuzk_##G##_jac_to_affine(&a, &r);                                                       \
        cuzk_##G##_to_uncompressed(enc, &a);                                                    \
        printf("ms %.3f cpu %.3f cpumin %.3f window %u result ", t[runs / 2], tc[runs / 2],  \
               tc[0], window ? window : cuzk_##G##_msm_window(n, threads));                  \
        for (int i = 0; i < PB; i++)                                                            \
            printf("%02x", enc[i]);                                                             \
        printf("\n");                                                                           \
        free(t), free(pts), free(sc);                                                           \
    }

SIDE(g1, cuzk_g1_affine, cuzk_g1_jac, 96)
SIDE(g2, cuzk_g2_affine, cuzk_g2_jac, 192)

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "gen")) {
        int g = !strcmp(argv[2], "g1") ? 1 : !strcmp(argv[2], "g2") ? 2 : 0;
        unsigned k = (unsigned)atoi(argv[3]);
        if (!g || k > 26)
            die("gen g1|g2 K SEED FILE");
        size_t n = (size_t)1 << k;
        uint64_t seed = strtoull(argv[4], NULL, 0);
        FILE *f = fopen(argv[5], "wb");
        if (!f)
            die("cannot create the output file");
        uint8_t hdr[8];
        for (int i = 0; i < 8; i++)
            hdr[i] = (uint8_t)((uint64_t)n >> (8 * i));
        fwrite(MAGIC, 7, 1, f);
        fputc(g, f);
        fwrite(hdr, 8, 1, f);
        if (g == 1)
            g1_gen(f, n, seed);
        else
            g2_gen(f, n, seed);
        uint64_t s = seed ^ 0x5ca1a5ULL;
        for (size_t i = 0; i < n; i++) {
            cuzk_fr x;
            uint8_t b[32];
            for (int l = 0; l < 4; l++) {
                uint64_t v = mix(&s);
                memcpy(b + 8 * l, &v, 8);
            }
            cuzk_fr_from_bytes_le_reduce(&x, b); /* 256 random bits reduced mod r */
            uint64_t lim[4];
            cuzk_fr_to_limbs(lim, &x);
            if (fwrite(lim, 32, 1, f) != 1)
                die("write failed");
        }
        if (fclose(f) != 0)
            die("write failed");
        return 0;
    }
    if (argc >= 5 && argc <= 7 && !strcmp(argv[1], "run")) {
        int g;
        size_t n;
        FILE *f = side_open(argv[2], &g, &n);
        int runs = atoi(argv[3]);
        unsigned threads = (unsigned)atoi(argv[4]);
        unsigned flags = 0, window = 0;
        for (int i = 5; i < argc; i++) {
            if (!strcmp(argv[i], "xyzz"))
                flags |= CUZK_MSM_XYZZ_ONLY;
            else if (!strncmp(argv[i], "w=", 2) && atoi(argv[i] + 2) > 0)
                window = (unsigned)atoi(argv[i] + 2);
            else
                die("run FILE RUNS THREADS [xyzz] [w=C]");
        }
        if (runs < 1 || threads < 1)
            die("run FILE RUNS THREADS [xyzz] [w=C]");
        if (g == 1)
            g1_run(f, n, runs, threads, flags, window);
        else
            g2_run(f, n, runs, threads, flags, window);
        fclose(f);
        return 0;
    }
    die("usage: cuzk_side gen g1|g2 K SEED FILE | run FILE RUNS THREADS [xyzz] [w=C]");
}
