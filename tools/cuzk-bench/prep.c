/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-bench prep: the CPU side of one GPU partition on the synthetic porep-k witness
 * (WORKLOADS.md), the work a GPU worker does on the host while the device proves the
 * previous partition: the witness copied into the upload buffer, then the split MSMs'
 * bit vectors and gathered significant scalars (cuzk_gpu_prep_splits). Beside it, in the
 * same run, the reference way to the same splits: bit-by-bit compression and one gather per
 * split, after a separate copy of the witness; the two must give the same vectors, scalars
 * and copy. Runs on any machine: no GPU is needed, the device buffers are ordinary memory
 * here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gen/porep.h"
#include "groth16/gpu_prover.h"
#include "msm/msm_internal.h"
#include "util/parallel.h"
#include "util/timing.h"


#define PREP_MAX_RUNS 64
#define PREP_STEPS 4

/* copy: the witness into the upload buffer alone; prep: cuzk_gpu_prep_splits alone;
 * prep_copy: with the copy riding on its classification (a partition with synthesis on the
 * device); reference: the splits the reference way. */
static const char *const step_names[PREP_STEPS] = {"copy", "prep", "prep_copy", "reference"};

static void usage(FILE *f)
{
    fprintf(f, "usage: cuzk-bench prep [-k K] [--threads T] [--runs N] [--json]\n"
               "  the CPU side of a GPU partition on the porep-K witness (default K 22, T all\n"
               "  CPUs, 5 runs): witness copy, cuzk_gpu_prep_splits alone and with the copy\n"
               "  riding on it, and the reference splits\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The reference: classification, bit-by-bit compression, and for each split its own
 * gather (each reads and converts its significant values again). */
static cuzk_err reference_splits(const cuzk_pk_view *pk, const cuzk_fr *w, cuzk_gpu_bufs *b,
                                 uint64_t *tmp, unsigned T)
{
    size_t nv = pk->n_vars, off = pk->n_public + 1;
    const bool pext = msm_bitvec_set_pext(false);
    cuzk_msm_classify_fr(b->w_one, b->w_sig, NULL, w, nv, T);
    const uint64_t *dens[2] = {pk->a_density, pk->b_density};
    for (int k = 0; k < 3; k++) {
        cuzk_gpu_split_in *sp = &b->sp[k];
        size_t cnt;
        const uint64_t *sel;
        if (k < 2) {
            sp->n = cuzk_msm_bitvec_compress(sp->one, b->w_one, dens[k], nv, T);
            (void)cuzk_msm_bitvec_compress(sp->sig, b->w_sig, dens[k], nv, T);
            cnt = cuzk_msm_bitvec_and(tmp, b->w_sig, dens[k], nv);
            sel = tmp;
        } else {
            sp->n = nv - off;
            cuzk_msm_bitvec_extract(sp->one, b->w_one, off, sp->n);
            cuzk_msm_bitvec_extract(sp->sig, b->w_sig, off, sp->n);
            cnt = cuzk_msm_bitvec_count(sp->sig, sp->n);
            sel = sp->sig;
        }
        if (!sp->s || sp->s_cap < cnt) {
            cuzk_gpu_split_free_scalars(sp);
            if (!(sp->s = malloc(sizeof(cuzk_msm_scalar) * (cnt ? cnt : 1))))
                return cuzk_error_set(CUZK_ENOMEM, "prep: out of memory");
            sp->s_cap = cnt;
        }
        sp->n_sig = k < 2 ? cuzk_msm_gather_fr(sp->s, w, nv, sel, T)
                          : cuzk_msm_gather_fr(sp->s, w + off, sp->n, sel, T);
    }
    if (pext)
        (void)msm_bitvec_set_pext(true);
    return CUZK_OK;
}

static bool same_splits(const cuzk_gpu_bufs *a, const cuzk_gpu_bufs *b)
{
    for (int k = 0; k < 3; k++) {
        const cuzk_gpu_split_in *x = &a->sp[k], *y = &b->sp[k];
        size_t words = CUZK_MSM_BITVEC_WORDS(x->n);
        if (x->n != y->n || x->n_sig != y->n_sig ||
            memcmp(x->one, y->one, 8 * words) != 0 || memcmp(x->sig, y->sig, 8 * words) != 0 ||
            memcmp(x->s, y->s, sizeof(cuzk_msm_scalar) * x->n_sig) != 0)
            return false;
    }
    return true;
}

int cuzk_bench_prep(int argc, char **argv)
{
    unsigned k = 22, threads = 0;
    int runs = 5;
    bool json = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (i + 1 < argc && !strcmp(a, "-k")) {
            k = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (i + 1 < argc && !strcmp(a, "--threads")) {
            threads = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (i + 1 < argc && !strcmp(a, "--runs")) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "cuzk-bench prep: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (k < 4 || k > 28 || runs < 1 || runs > PREP_MAX_RUNS) {
        fprintf(stderr, "cuzk-bench prep: -k takes 4..28 and --runs 1..%d\n", PREP_MAX_RUNS);
        return 2;
    }
    const unsigned T = threads ? threads : cuzk_parallel_threads();
    cuzk_porep *w = NULL;
    if (cuzk_porep_new_ex(&w, k, 1, 1, NULL, false) != CUZK_OK) {
        fprintf(stderr, "cuzk-bench prep: porep-%u witness: %s\n", k, cuzk_error_detail());
        return 1;
    }
    const cuzk_pk_view *pk = cuzk_porep_view(w);
    const cuzk_fr *wit = cuzk_porep_witnesses(w)[0];
    const size_t nv = pk->n_vars;
    cuzk_gpu_bufs bp = {0}, br = {0};
    cuzk_fr *copy = malloc(sizeof(cuzk_fr) * nv);
    uint64_t *tmp = malloc(8 * CUZK_MSM_BITVEC_WORDS(nv));
    int rc = 1;
    if (!cuzk_gpu_bufs_splits_alloc(&bp, nv) || !cuzk_gpu_bufs_splits_alloc(&br, nv) || !copy ||
        !tmp) {
        fprintf(stderr, "cuzk-bench prep: out of memory\n");
        goto done;
    }
    memset(copy, 0, sizeof(cuzk_fr) * nv); /* touched once, as a kept buffer is */
    double ms[PREP_STEPS][PREP_MAX_RUNS];
    bool same = true;
    for (int r = 0; r < runs; r++) {
        double t0 = cuzk_now_ms();
        cuzk_parallel_memcpy(copy, wit, sizeof(cuzk_fr) * nv, T);
        double t1 = cuzk_now_ms();
        cuzk_err e = cuzk_gpu_prep_splits(pk, wit, &bp, T);
        double t2 = cuzk_now_ms();
        memset(copy, 0, sizeof(cuzk_fr) * (nv < 64 ? nv : 64)); /* the copy must be redone */
        bp.wcopy = copy;
        if (e == CUZK_OK)
            e = cuzk_gpu_prep_splits(pk, wit, &bp, T);
        double t3 = cuzk_now_ms();
        same = same && memcmp(copy, wit, sizeof(cuzk_fr) * nv) == 0;
        if (e == CUZK_OK)
            e = reference_splits(pk, wit, &br, tmp, T);
        double t4 = cuzk_now_ms();
        if (e != CUZK_OK) {
            fprintf(stderr, "cuzk-bench prep: %s\n", cuzk_error_detail());
            goto done;
        }
        ms[0][r] = t1 - t0;
        ms[1][r] = t2 - t1;
        ms[2][r] = t3 - t2;
        ms[3][r] = t4 - t3;
        same = same && same_splits(&bp, &br);
    }
    double med[PREP_STEPS], best[PREP_STEPS];
    for (int s = 0; s < PREP_STEPS; s++) {
        double v[PREP_MAX_RUNS];
        memcpy(v, ms[s], sizeof(double) * (size_t)runs);
        qsort(v, (size_t)runs, sizeof(double), cmp_double);
        med[s] = v[runs / 2];
        best[s] = v[0];
    }
    const bool pext = msm_bitvec_set_pext(true);
    if (json) {
        printf("{\"bench\":\"prep\",\"k\":%u,\"n_vars\":%zu,\"threads\":%u,\"runs\":%d,"
               "\"pext\":%s,\"sig\":[%zu,%zu,%zu],\"same\":%s",
               k, nv, T, runs, pext ? "true" : "false", bp.sp[0].n_sig, bp.sp[1].n_sig,
               bp.sp[2].n_sig, same ? "true" : "false");
        for (int s = 0; s < PREP_STEPS; s++)
            printf(",\"%s_ms\":{\"median\":%.3f,\"best\":%.3f}", step_names[s], med[s], best[s]);
        printf("}\n");
    } else {
        printf("cuzk-bench prep: porep-%u witness (%zu values; significant in A %zu, B %zu, "
               "L %zu), %u threads, %d runs, PEXT %s\n",
               k, nv, bp.sp[0].n_sig, bp.sp[1].n_sig, bp.sp[2].n_sig, T, runs,
               pext ? "yes" : "no (bit by bit)");
        printf("%-10s %10s %10s\n", "step", "median ms", "best ms");
        for (int s = 0; s < PREP_STEPS; s++)
            printf("%-10s %10.2f %10.2f\n", step_names[s], med[s], best[s]);
        printf("prep vs reference: %.2fx; with the witness copy: %.2f ms against copy + "
               "reference %.2f ms (%.2fx); same splits and copy: %s\n",
               med[3] / med[1], med[2], med[0] + med[3], (med[0] + med[3]) / med[2],
               same ? "yes" : "NO");
    }
    rc = same ? 0 : 1;
done:
    cuzk_gpu_bufs_splits_free(&bp);
    cuzk_gpu_bufs_splits_free(&br);
    free(copy);
    free(tmp);
    cuzk_porep_free(w);
    return rc;
}
