/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-bench tails: the split MSMs of one porep-k partition (WORKLOADS.md) on the device,
 * timed over a list of windows and both G1 accumulations, to choose the window and the
 * accumulation by size. The synthetic porep-k workload (its key's A, B1, L and B2 bases made
 * resident, one witness split as the GPU prover splits it) gives the real shapes: the
 * significant terms (a tenth of the aux wires) of 2^k-ish bases, gathered scalars, bases
 * read through the split's index list. Each split MSM is timed alone (no batch add: the
 * ones are a separate stage), median of --runs after a warm-up, first with what the
 * library picks (window 0, AUTO), then with each window and accumulation; every result must
 * equal the first (an error otherwise). Needs a CUDA build and a device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gen/porep.h"
#include "groth16/gpu_prover.h"
#include "util/parallel.h"
#include "util/timing.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif

#define TAILS_MAX_RUNS 16
#define TAILS_MAX_WINDOWS 22

static void tails_usage(FILE *f)
{
    fprintf(f, "usage: cuzk-bench tails [-k K] [--runs N] [--windows LO-HI] [--only A,B1,L,B2] [--json]\n"
               "  the split MSMs (significant terms) of one porep-K partition on the device:\n"
               "  the library's choice, then every window LO..HI (default 14-21) with XYZZ and,\n"
               "  in G1, the batch-affine accumulation; median of N runs (default 3) in ms\n");
}

#ifdef CUZK_HAVE_CUDA
typedef struct {
    const char *name;
    int group;        /* 1 or 2 */
    const void *pts;  /* bases */
    size_t n;         /* bases (the split's positions) */
    const cuzk_gpu_split_in *sp;
} tail_def;

/* One split MSM, timed: median of runs after a warm-up; r gets the result. */
static cuzk_err tail_time(cuzk_gpu_msm *m, const tail_def *d, unsigned window, int runs,
                          void *r, double *ms, cuzk_gpu_msm_profile *prof)
{
    double v[TAILS_MAX_RUNS];
    int nv = 0;
    for (int i = -1; i < runs; i++) {
        double t0 = cuzk_now_ms();
        cuzk_err e = d->group == 1
                         ? cuzk_gpu_g1_msm_split(m, r, d->sp->s, CUZK_GPU_SCALARS_GATHERED, NULL,
                                                 d->sp->sig, d->n, window)
                         : cuzk_gpu_g2_msm_split(m, r, d->sp->s, CUZK_GPU_SCALARS_GATHERED, NULL,
                                                 d->sp->sig, d->n, window);
        if (e != CUZK_OK)
            return e;
        if (i >= 0)
            v[nv++] = cuzk_now_ms() - t0;
    }
    *ms = cuzk_median(v, (size_t)nv);
    return cuzk_gpu_msm_profile_get(m, prof);
}

static bool tail_same(int group, const void *a, const void *b)
{
    return group == 1 ? cuzk_g1_jac_eq(a, b) : cuzk_g2_jac_eq(a, b);
}

/* The split's row: the library's choice, then windows lo..hi per accumulation. */
static int tail_run(const tail_def *d, unsigned lo, unsigned hi, int runs, bool json)
{
    cuzk_gpu_msm *m = NULL;
    cuzk_err e = d->group == 1 ? cuzk_gpu_msm_new(&m, 0, d->pts, d->n)
                               : cuzk_gpu_msm_new_g2(&m, 0, d->pts, d->n);
    if (e == CUZK_OK)
        e = cuzk_gpu_msm_set_profile(m, true);
    if (e != CUZK_OK) {
        fprintf(stderr, "cuzk-bench tails: %s: %s\n", d->name, cuzk_error_detail());
        cuzk_gpu_msm_free(m);
        return 1;
    }
    union {
        cuzk_g1_jac g1;
        cuzk_g2_jac g2;
    } ref, r;
    double auto_ms;
    cuzk_gpu_msm_profile p;
    int rc = 0;
    if (tail_time(m, d, 0, runs, &ref, &auto_ms, &p) != CUZK_OK) {
        fprintf(stderr, "cuzk-bench tails: %s: %s\n", d->name, cuzk_error_detail());
        cuzk_gpu_msm_free(m);
        return 1;
    }
    const unsigned auto_c = p.window;
    const char *auto_acc = p.affine ? "affine" : "xyzz";
    if (!json)
        printf("%-3s G%d %9zu terms of %10zu bases: library %s c=%u %.2f ms\n", d->name, d->group,
               d->sp->n_sig, d->n, auto_acc, auto_c, auto_ms);
    else
        printf("{\"bench\":\"tails\",\"split\":\"%s\",\"group\":%d,\"terms\":%zu,\"bases\":%zu,"
               "\"acc\":\"auto:%s\",\"window\":%u,\"ms\":%.3f}\n",
               d->name, d->group, d->sp->n_sig, d->n, auto_acc, auto_c, auto_ms);
    double best = auto_ms;
    char best_s[64];
    snprintf(best_s, sizeof best_s, "library (%s c=%u)", auto_acc, auto_c);
    const cuzk_gpu_msm_acc accs[2] = {CUZK_GPU_MSM_ACC_XYZZ, CUZK_GPU_MSM_ACC_AFFINE};
    for (int a = 0; a < (d->group == 1 ? 2 : 1) && rc == 0; a++) {
        const char *an = a ? "affine" : "xyzz";
        if (cuzk_gpu_msm_set_accumulation(m, accs[a]) != CUZK_OK) {
            rc = 1;
            break;
        }
        if (!json)
            printf("    %-6s", an);
        for (unsigned c = lo; c <= hi; c++) {
            double ms;
            if (tail_time(m, d, c, runs, &r, &ms, &p) != CUZK_OK) {
                fprintf(stderr, "\ncuzk-bench tails: %s %s c=%u: %s\n", d->name, an, c,
                        cuzk_error_detail());
                rc = 1;
                break;
            }
            if (!tail_same(d->group, &r, &ref)) {
                fprintf(stderr, "\ncuzk-bench tails: %s %s c=%u: the result differs from the "
                                "library's choice\n", d->name, an, c);
                rc = 1;
                break;
            }
            const bool ran_affine = p.affine;
            if (json)
                printf("{\"bench\":\"tails\",\"split\":\"%s\",\"group\":%d,\"terms\":%zu,"
                       "\"acc\":\"%s\",\"ran\":\"%s\",\"window\":%u,\"ms\":%.3f}\n",
                       d->name, d->group, d->sp->n_sig, an, ran_affine ? "affine" : "xyzz", c,
                       ms);
            else
                printf(" c=%u %7.2f%s", c, ms, a && !ran_affine ? "(x)" : "");
            fflush(stdout);
            if (ms < best && (a == 0 || ran_affine)) {
                best = ms;
                snprintf(best_s, sizeof best_s, "%s c=%u", an, c);
            }
        }
        if (!json)
            printf("\n");
    }
    if (!json && rc == 0)
        printf("    best: %s %.2f ms (library %.2f: %.1f %%)\n", best_s, best, auto_ms,
               100.0 * (auto_ms - best) / auto_ms);
    cuzk_gpu_msm_free(m);
    return rc;
}
#endif

int cuzk_bench_tails(int argc, char **argv)
{
    unsigned k = 22, lo = 14, hi = 21;
    int runs = 3;
    bool json = false;
    const char *only = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            tails_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (i + 1 < argc && !strcmp(a, "-k")) {
            k = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (i + 1 < argc && !strcmp(a, "--runs")) {
            runs = atoi(argv[++i]);
        } else if (i + 1 < argc && !strcmp(a, "--only")) {
            only = argv[++i];
        } else if (i + 1 < argc && !strcmp(a, "--windows")) {
            if (sscanf(argv[++i], "%u-%u", &lo, &hi) != 2) {
                fprintf(stderr, "cuzk-bench tails: --windows takes LO-HI, e.g. 14-21\n");
                return 2;
            }
        } else {
            fprintf(stderr, "cuzk-bench tails: unknown or incomplete option '%s'\n", a);
            tails_usage(stderr);
            return 2;
        }
    }
    if (k < 10 || k > 28 || runs < 1 || runs > TAILS_MAX_RUNS || lo < 1 || hi < lo ||
        hi > TAILS_MAX_WINDOWS) {
        fprintf(stderr, "cuzk-bench tails: -k takes 10..28, --runs 1..%d, --windows 1..%d\n",
                TAILS_MAX_RUNS, TAILS_MAX_WINDOWS);
        return 2;
    }
#ifndef CUZK_HAVE_CUDA
    (void)json, (void)only;
    fprintf(stderr, "cuzk-bench tails: this build has no GPU backend\n");
    return 1;
#else
    if (!cuzk_gpu_available()) {
        fprintf(stderr, "cuzk-bench tails: no GPU: %s\n", cuzk_error_detail());
        return 1;
    }
    double t0 = cuzk_now_ms();
    cuzk_porep *w = NULL;
    if (cuzk_porep_new(&w, k, 1, 1, NULL) != CUZK_OK) {
        fprintf(stderr, "cuzk-bench tails: porep-%u: %s\n", k, cuzk_error_detail());
        return 1;
    }
    const cuzk_pk_view *pk = cuzk_porep_view(w);
    const cuzk_fr *wit = cuzk_porep_witnesses(w)[0];
    cuzk_gpu_bufs b;
    memset(&b, 0, sizeof b);
    int rc = 1;
    if (!cuzk_gpu_bufs_splits_alloc(&b, pk->n_vars)) {
        fprintf(stderr, "cuzk-bench tails: out of memory\n");
        goto done;
    }
    if (cuzk_gpu_prep_splits(pk, wit, &b, cuzk_parallel_threads()) != CUZK_OK) {
        fprintf(stderr, "cuzk-bench tails: splits: %s\n", cuzk_error_detail());
        goto done;
    }
    if (!json)
        printf("cuzk-bench tails: porep-%u (workload built in %.1f s), split MSMs without the "
               "ones, median of %d runs after a warm-up, ms\n",
               k, (cuzk_now_ms() - t0) / 1e3, runs);
    const tail_def defs[4] = {
        {"A", 1, pk->a_pts, b.sp[0].n, &b.sp[0]},
        {"B1", 1, pk->b1_pts, b.sp[1].n, &b.sp[1]},
        {"L", 1, pk->l_pts, b.sp[2].n, &b.sp[2]},
        {"B2", 2, pk->b2_pts, b.sp[1].n, &b.sp[1]},
    };
    rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++) {
        if (only) { /* a comma-separated list of names */
            const char *p = strstr(only, defs[i].name);
            const size_t l = strlen(defs[i].name);
            bool hit = false;
            while (p && !hit) {
                hit = (p == only || p[-1] == ',') && (p[l] == 0 || p[l] == ',');
                p = strstr(p + 1, defs[i].name);
            }
            if (!hit)
                continue;
        }
        rc = tail_run(&defs[i], lo, hi, runs, json);
    }
done:
    cuzk_gpu_bufs_splits_free(&b);
    cuzk_porep_free(w);
    return rc;
#endif
}
