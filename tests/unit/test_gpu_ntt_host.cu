/*
 * The device NTT (src/gpu/ntt.cuh: pass geometry, twiddle tables and indices, the
 * one-stage rounds, fused scalings, tiled bit reversal, the H step's DIF/DIT sequence) compiled as
 * host code and run block by block (ntt_host_exec: the kernels' phases in their order)
 * against the CPU library, without a GPU:
 *   DIF and DIT in both directions against cuzk_ntt_dif / cuzk_ntt_dit, the natural-order
 *   transforms against cuzk_ntt_forward / cuzk_ntt_inverse (the last pass storing in
 *   natural order through a second buffer, and in place with the bit reversal), the bit
 *   reversal against cuzk_ntt_bitreverse, and the H step against cuzk_h_snarkjs /
 *   cuzk_h_bellman,
 * for 2^1..2^12, both root families, and several geometries: the device's (blocks of
 * 2^ntt_elog_for(k) or 2^NTT_ELOG elements, NTT_TMAX stages a pass at most, tables up to
 * 2^NTT_TLOG) and small ones that give many
 * passes and sub-problems, passes of 1 to 7 stages and a first pass that reads W0, the table
 * of omega_n (tlog below k; filled on the host with the device's formula, ntt_pow3).
 * gpu_cc_lost_ must stay 0 (no carry dropped where the bounds say none can occur).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test.h"

#include "cuzk/poly.h"
#include "gpu/ntt.cuh"

struct geom {
    unsigned elog, tmax; /* elog 0: the device's for each k (ntt_elog_for) */
    int gen; /* 1: the first pass reads W0 (tlog just below k), 0: W only */
};

/* One (k, family, geometry): every transform and the H step against the CPU. */
static void check_one(unsigned k, cuzk_roots fam, const geom &gm)
{
    const size_t n = (size_t)1 << k;
    const unsigned elog = gm.elog ? gm.elog : ntt_elog_for(k);
    ntt_ctx c;
    cuzk_fr *tab = NULL;
    ntt_plan p0;
    if (!ntt_plan_make(&p0, k, elog, gm.tmax, NTT_TLOG)) {
        CHECK(p0.npass > NTT_MAXPASS); /* only too many passes is refused here */
        return;
    }
    const unsigned tlog = !gm.gen ? NTT_TLOG : p0.npass > 1 ? k - p0.t[0] : k - 1;
    cuzk_err e = ntt_tables_make(&c, &tab, k, fam, elog, gm.tmax, tlog, true);
    CHECK(e == CUZK_OK);
    if (e != CUZK_OK)
        return;
    CHECK(c.plan.w0 == (gm.gen != 0));
    CHECK(c.n_tab == c.n_host + (c.plan.w0 ? ((size_t)1 << (k - 1)) + 1 : 0));
    c.tab = (const fr_t *)tab;
    cuzk_domain *d = NULL;
    CHECK(cuzk_domain_new(&d, k, fam) == CUZK_OK);
    cuzk_fr *x = (cuzk_fr *)malloc(3 * n * sizeof *x), *y = (cuzk_fr *)malloc(3 * n * sizeof *y);
    cuzk_fr *z = (cuzk_fr *)malloc(3 * n * sizeof *z);
    if (!d || !x || !y || !z) {
        CHECK(0);
        goto out;
    }
    {
        ntt_host_exec ex;
        char what[96];
        snprintf(what, sizeof what, "k %u fam %d elog %u tmax %u (passes %u, gen %d)", k, (int)fam,
                 elog, gm.tmax, c.plan.npass, (int)c.plan.w0);
        for (int inv = 0; inv < 2; inv++) {
            const cuzk_ntt_dir dir = inv ? CUZK_NTT_INVERSE : CUZK_NTT_FORWARD;
            /* DIF */
            test_rand_frs(x, n);
            memcpy(y, x, n * sizeof *x);
            cuzk_ntt_dif(d, y, dir, 1);
            CHECK(ntt_run_dif(ex, c, (fr_t *)x, inv != 0, NTT_POST_NONE, NULL, false, NULL) ==
                  CUZK_OK);
            size_t bad = test_fr_count_diff(x, y, n);
            if (bad)
                fprintf(stderr, "dif inv %d %s: %zu of %zu differ\n", inv, what, bad, n);
            CHECK(bad == 0);
            /* DIT */
            test_rand_frs(x, n);
            memcpy(y, x, n * sizeof *x);
            cuzk_ntt_dit(d, y, dir, 1);
            CHECK(ntt_run_dit(ex, c, (fr_t *)x, inv != 0, NULL, NULL) == CUZK_OK);
            bad = test_fr_count_diff(x, y, n);
            if (bad)
                fprintf(stderr, "dit inv %d %s: %zu of %zu differ\n", inv, what, bad, n);
            CHECK(bad == 0);
            /* natural order in and out: stored so by the last pass through a second
             * buffer (z), and in place with the bit reversal (no second buffer) */
            for (int fused = 0; fused < 2; fused++) {
                test_rand_frs(x, n);
                memcpy(y, x, n * sizeof *x);
                if (inv)
                    cuzk_ntt_inverse(d, y, 1);
                else
                    cuzk_ntt_forward(d, y, 1);
                CHECK(ntt_run_ntt(ex, c, (fr_t *)x, inv != 0, fused ? (fr_t *)z : NULL) ==
                      CUZK_OK);
                bad = test_fr_count_diff(x, y, n);
                if (bad)
                    fprintf(stderr, "ntt inv %d fused %d %s: %zu of %zu differ\n", inv, fused,
                            what, bad, n);
                CHECK(bad == 0);
            }
        }
        /* the H step (a, b, c contiguous in x) */
        const bool bell = fam == CUZK_ROOTS_BELLMAN;
        for (int sat = 0; sat < 2; sat++) {
            test_rand_frs(x, 3 * n);
            if (sat) /* c = a b: Z divides A B - C */
                for (size_t i = 0; i < n; i++)
                    cuzk_fr_mul(&x[2 * n + i], &x[i], &x[n + i]);
            memcpy(y, x, 3 * n * sizeof *x);
            memcpy(z, x, 3 * n * sizeof *x);
            if (bell)
                CHECK(cuzk_h_bellman(d, y, y + n, y + 2 * n, 1) == CUZK_OK);
            else
                CHECK(cuzk_h_snarkjs(d, y, y + n, y + 2 * n, 1) == CUZK_OK);
            CHECK(ntt_run_h(ex, c, (fr_t *)x, (fr_t *)(x + n), (fr_t *)(x + 2 * n), bell) ==
                  CUZK_OK);
            size_t bad = test_fr_count_diff(x, y, n);
            if (bad)
                fprintf(stderr, "h sat %d %s: %zu of %zu differ\n", sat, what, bad, n);
            CHECK(bad == 0);
            if (bell && sat)
                CHECK(cuzk_fr_is_zero(&x[n - 1]));
        }
    }
out:
    free(x);
    free(y);
    free(z);
    free(tab);
    cuzk_domain_free(d);
}

/* The tiled bit reversal against the CPU's, 2^1..2^14. */
static void check_bitrev(void)
{
    const size_t nmax = (size_t)1 << 14;
    cuzk_fr *x = (cuzk_fr *)malloc(nmax * sizeof *x), *y = (cuzk_fr *)malloc(nmax * sizeof *y);
    if (!x || !y) {
        CHECK(0);
        free(x);
        free(y);
        return;
    }
    ntt_host_exec ex;
    for (unsigned k = 1; k <= 14; k++) {
        const size_t n = (size_t)1 << k;
        test_rand_frs(x, n);
        memcpy(y, x, n * sizeof *x);
        cuzk_ntt_bitreverse(y, k, 1);
        CHECK(ex.bitrev((fr_t *)x, k) == CUZK_OK);
        CHECK(test_fr_count_diff(x, y, n) == 0);
    }
    free(x);
    free(y);
}

/* The plans of the device's sizes: one pass up to 2^10, two up to 2^20, three up to 2^28,
 * W of at most 4 MiB. */
static void check_plans(void)
{
    for (unsigned k = 1; k <= 28; k++) {
        ntt_plan p;
        CHECK(ntt_plan_make(&p, k, ntt_elog_for(k), NTT_TMAX, NTT_TLOG));
        CHECK(p.npass <= 3);
        CHECK(p.npass == (k <= NTT_TMAX ? 1u : k <= 2 * NTT_TMAX ? 2u : 3u));
        CHECK(k < 19 || p.elog == NTT_ELOG);
        CHECK(p.L <= NTT_TLOG);
        CHECK(p.w0 == (k > NTT_TLOG));
        unsigned s = 0;
        for (unsigned i = 0; i < p.npass; i++) {
            CHECK(p.s0[i] == s && p.t[i] >= 1 && p.t[i] <= NTT_TMAX);
            s += p.t[i];
        }
        CHECK(s == k);
    }
}

int main(void)
{
    test_init("test_gpu_ntt_host");
    gpu_consts_host_init();
    check_plans();
    check_bitrev();
    printf("plans, bit reversal: ok so far (%lu failed)\n", test_failed_);
    const geom gms[] = {
        {0, NTT_TMAX, 0},        /* the device's (ntt_elog_for: 2^6-element blocks at 2^11, 2^12) */
        {0, NTT_TMAX, 1},        /* the same with the first pass on W0 (as from 2^19) */
        {NTT_ELOG, NTT_TMAX, 0}, /* the device's blocks from 2^18 */
        {NTT_ELOG, NTT_TMAX, 1},
        {4, 3, 0},               /* many passes of 3 stages, 2 sub-problems a block */
        {4, 3, 1},
        {5, 5, 1},               /* 5 stages a pass */
        {6, 4, 1},               /* 4 stages, 4 sub-problems a block */
        {7, 7, 0},               /* 7 stages a pass */
        {7, 7, 1},
        {3, 1, 0},               /* one stage a pass */
        {6, 2, 1},               /* two stages a pass */
    };
    const cuzk_roots fams[2] = {CUZK_ROOTS_SNARKJS, CUZK_ROOTS_BELLMAN};
    for (size_t gi = 0; gi < sizeof gms / sizeof gms[0]; gi++) {
        for (unsigned k = 1; k <= 12; k++)
            for (int f = 0; f < 2; f++)
                check_one(k, fams[f], gms[gi]);
        printf("geometry elog %u tmax %u gen %d: ok so far (%lu failed)\n", gms[gi].elog,
               gms[gi].tmax, gms[gi].gen, test_failed_);
    }
    CHECK(gpu_cc_lost_ == 0);
    return test_finish();
}
