/*
 * GPU backend against the CPU on fresh random inputs (tests/test.h prints the seed).
 *   test_gpu          correctness: field ops, NTT (both root families, 2^1..2^22), the
 *                     snarkjs H step, G1 MSM (sizes 1, 2, 3, 2^k-1, 2^k, 2^k+1 up to 2^22;
 *                     zero / one / r-1 / small scalars; identity, repeated and opposite
 *                     bases; every window), batch_add, error paths.
 *                     bellman H (2^1..2^20, against cuzk_h_bellman), the split MSM
 *                     (batch add of ones + Pippenger over significant positions) for G1
 *                     and G2 against cuzk_gN_msm_auto_fr, G2 MSM and batch add (sizes 1,
 *                     2, 3, 2^k-1, 2^k, 2^k+1 up to 2^18; the same edge cases). The G1
 *                     MSMs run with the default accumulation (AUTO: XYZZ at these sizes,
 *                     checked), then the G1 MSM and split checks again with the batch-affine
 *                     accumulation (AFFINE and AFFINE_FULL in turn) and inputs aimed at its
 *                     special cases (equal bases: doublings; P, -P in one bucket; all
 *                     scalars equal: one run a window; small windows: several bucket slices).
 *   test_gpu --bench  timings (MSM 2^20, 2^22, 2^24 with bases resident, XYZZ and
 *                     batch-affine (rows *_affine); NTT 2^20, 2^24, 2^27 with data resident;
 *                     medians of 3 after a warm-up), a table and JSON lines, the MSMs' stage
 *                     times (cuzk_gpu_msm_profile_get), plus a CPU check of the 2^24 MSM;
 *                     also the split MSM at 2^24 (Filecoin-like scalars), bellman H
 *                     2^20/2^24/2^27, G2 MSM 2^18/2^20 and G2 batch add 2^20.
 *   test_gpu --large  see run_large.
 *   test_gpu --ntt    the NTT and H checks alone (test_ntt, test_h, test_h_bellman).
 *   test_gpu --ntt-bench [K]...  the NTT and H timings alone (bench_ntt and bench_h_bellman
 *                     at each 2^K, default 20 24 27), each checked as in --bench.
 * Without a usable GPU it says why and exits 77 (CTest SKIP_RETURN_CODE).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuzk/ec.h"
#include "cuzk/gpu.h"
#include "cuzk/msm.h"
#include "cuzk/poly.h"
#include "test.h"
#include "test_device.h"
#include "test_points.h"
#include "util/timing.h"

#define MAX_LOG 22

#define CHECK_OK(expr)                                                                  \
    do {                                                                                \
        cuzk_err e_ = (expr);                                                           \
        if (e_ != CUZK_OK)                                                              \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #expr,           \
                    cuzk_errname(e_), cuzk_error_detail());                             \
        CHECK(e_ == CUZK_OK);                                                           \
    } while (0)

/* ---- random inputs ---- */
/* MSM bases with infinity, repeats and negatives among them (test_points.h). */
static cuzk_g1_affine *make_bases(size_t n)
{
    cuzk_g1_affine *b = xmalloc(n * sizeof *b);
    test_g1_rand_bases(b, n);
    return b;
}

static cuzk_g2_affine *make_bases_g2(size_t n)
{
    cuzk_g2_affine *b = xmalloc(n * sizeof *b);
    test_g2_rand_bases(b, n);
    return b;
}

/* ---- field ---- */
static void test_field(void)
{
    const size_t n = 1 << 16;
    cuzk_fr *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b);
    cuzk_fr *r = xmalloc(n * sizeof *r);
    cuzk_fp *pa = xmalloc(n * sizeof *pa), *pb = xmalloc(n * sizeof *pb);
    cuzk_fp *pr = xmalloc(n * sizeof *pr);
    test_rand_frs(a, n);
    test_rand_frs(b, n);
    for (size_t i = 0; i < n; i++) {
        test_rand_fp(&pa[i]);
        test_rand_fp(&pb[i]);
    }
    /* edge values: 0, 1, -1 (p-1), -2 against each other */
    for (int i = 0; i < 16; i++) {
        cuzk_fr *fs[2] = {&a[i], &b[i]};
        cuzk_fp *ps[2] = {&pa[i], &pb[i]};
        for (int s = 0; s < 2; s++) {
            int v = s ? i / 4 : i % 4;
            cuzk_fp one;
            cuzk_fp_set_one(&one);
            switch (v) {
            case 0: cuzk_fr_set_zero(fs[s]); cuzk_fp_set_zero(ps[s]); break;
            case 1: cuzk_fr_set_one(fs[s]); cuzk_fp_set_one(ps[s]); break;
            case 2: test_fr_minus(fs[s], 1); cuzk_fp_neg(ps[s], &one); break;
            default: test_fr_minus(fs[s], 2); cuzk_fp_dbl(&one, &one); cuzk_fp_neg(ps[s], &one); break;
            }
        }
    }
    static const char *names[] = {"add", "sub", "mul", "sqr", "neg"};
    for (int op = CUZK_GPU_ADD; op <= CUZK_GPU_NEG; op++) {
        CHECK_OK(cuzk_gpu_fr_op(0, (cuzk_gpu_field_op)op, r, a, b, n));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            cuzk_fr w;
            switch (op) {
            case CUZK_GPU_ADD: cuzk_fr_add(&w, &a[i], &b[i]); break;
            case CUZK_GPU_SUB: cuzk_fr_sub(&w, &a[i], &b[i]); break;
            case CUZK_GPU_MUL: cuzk_fr_mul(&w, &a[i], &b[i]); break;
            case CUZK_GPU_SQR: cuzk_fr_sqr(&w, &a[i]); break;
            default: cuzk_fr_neg(&w, &a[i]); break;
            }
            bad += memcmp(&w, &r[i], sizeof w) != 0;
        }
        if (bad)
            fprintf(stderr, "fr %s: %zu of %zu differ\n", names[op], bad, n);
        CHECK(bad == 0);
        CHECK_OK(cuzk_gpu_fp_op(0, (cuzk_gpu_field_op)op, pr, pa, pb, n));
        bad = 0;
        for (size_t i = 0; i < n; i++) {
            cuzk_fp w;
            switch (op) {
            case CUZK_GPU_ADD: cuzk_fp_add(&w, &pa[i], &pb[i]); break;
            case CUZK_GPU_SUB: cuzk_fp_sub(&w, &pa[i], &pb[i]); break;
            case CUZK_GPU_MUL: cuzk_fp_mul(&w, &pa[i], &pb[i]); break;
            case CUZK_GPU_SQR: cuzk_fp_sqr(&w, &pa[i]); break;
            default: cuzk_fp_neg(&w, &pa[i]); break;
            }
            bad += memcmp(&w, &pr[i], sizeof w) != 0;
        }
        if (bad)
            fprintf(stderr, "fp %s: %zu of %zu differ\n", names[op], bad, n);
        CHECK(bad == 0);
    }
    printf("field: ok so far (%lu failed)\n", test_failed_);
    free(a); free(b); free(r); free(pa); free(pb); free(pr);
}

/* ---- NTT and H ---- */
/* Forward and inverse against the CPU, 2^1..2^22 in both root families (at 2^10 a constant
 * vector and a delta), and the inverse's result back. */
static void test_ntt(void)
{
    const size_t nmax = (size_t)1 << MAX_LOG;
    cuzk_fr *x = xmalloc(nmax * sizeof *x), *g = xmalloc(nmax * sizeof *g);
    cuzk_fr *c = xmalloc(nmax * sizeof *c);
    const cuzk_roots fams[2] = {CUZK_ROOTS_SNARKJS, CUZK_ROOTS_BELLMAN};
    for (unsigned k = 1; k <= MAX_LOG; k++) {
        const size_t n = (size_t)1 << k;
        for (int f = 0; f < 2; f++) {
            cuzk_gpu_domain *gd = NULL;
            cuzk_domain *cd = NULL;
            CHECK_OK(cuzk_gpu_domain_new(&gd, 0, k, fams[f]));
            CHECK_OK(cuzk_domain_new(&cd, k, fams[f]));
            if (!gd || !cd) {
                cuzk_gpu_domain_free(gd);
                cuzk_domain_free(cd);
                continue;
            }
            test_rand_frs(x, n);
            if (k == 10) /* a constant vector and a delta */
                for (size_t i = 0; i < n; i++) {
                    if (f == 0)
                        x[i] = x[0];
                    else if (i)
                        cuzk_fr_set_zero(&x[i]);
                }
            memcpy(g, x, n * sizeof *x);
            memcpy(c, x, n * sizeof *x);
            CHECK_OK(cuzk_gpu_ntt_forward(gd, g));
            cuzk_ntt_forward(cd, c, 0);
            size_t bad = test_fr_count_diff(g, c, n);
            if (bad)
                fprintf(stderr, "ntt forward 2^%u family %d: %zu of %zu differ\n", k,
                        (int)fams[f], bad, n);
            CHECK(bad == 0);
            /* inverse of a fresh vector, then back */
            test_rand_frs(x, n);
            memcpy(g, x, n * sizeof *x);
            memcpy(c, x, n * sizeof *x);
            CHECK_OK(cuzk_gpu_ntt_inverse(gd, g));
            cuzk_ntt_inverse(cd, c, 0);
            bad = test_fr_count_diff(g, c, n);
            if (bad)
                fprintf(stderr, "ntt inverse 2^%u family %d: %zu of %zu differ\n", k,
                        (int)fams[f], bad, n);
            CHECK(bad == 0);
            CHECK_OK(cuzk_gpu_ntt_forward(gd, g));
            CHECK(test_fr_count_diff(g, x, n) == 0);
            cuzk_gpu_domain_free(gd);
            cuzk_domain_free(cd);
        }
    }
    printf("ntt: ok so far (%lu failed)\n", test_failed_);
    free(x); free(g); free(c);
}

/* The snarkjs H step against the CPU, 2^1..2^20 (b and c left as they were); a bellman
 * domain is refused. */
/* A GPU domain and the CPU's of 2^k in family rf; false (both freed, the failure counted)
 * when either cannot be made. */
static bool domain_pair(unsigned k, cuzk_roots rf, cuzk_gpu_domain **gd, cuzk_domain **cd)
{
    *gd = NULL;
    *cd = NULL;
    CHECK_OK(cuzk_gpu_domain_new(gd, 0, k, rf));
    CHECK_OK(cuzk_domain_new(cd, k, rf));
    if (*gd && *cd)
        return true;
    cuzk_gpu_domain_free(*gd);
    cuzk_domain_free(*cd);
    return false;
}

static void test_h(void)
{
    const unsigned maxk = 20;
    const size_t nmax = (size_t)1 << maxk;
    cuzk_fr *a = xmalloc(nmax * sizeof *a), *b = xmalloc(nmax * sizeof *b);
    cuzk_fr *c = xmalloc(nmax * sizeof *c), *ga = xmalloc(nmax * sizeof *ga);
    cuzk_fr *b0 = xmalloc(nmax * sizeof *b0), *c0 = xmalloc(nmax * sizeof *c0);
    for (unsigned k = 1; k <= maxk; k++) {
        const size_t n = (size_t)1 << k;
        cuzk_gpu_domain *gd = NULL;
        cuzk_domain *cd = NULL;
        if (!domain_pair(k, CUZK_ROOTS_SNARKJS, &gd, &cd))
            continue;
        test_rand_frs(a, n);
        test_rand_frs(b, n);
        test_rand_frs(c, n);
        memcpy(ga, a, n * sizeof *a);
        memcpy(b0, b, n * sizeof *b);
        memcpy(c0, c, n * sizeof *c);
        CHECK_OK(cuzk_gpu_h_snarkjs(gd, ga, b0, c0));
        CHECK(test_fr_count_diff(b0, b, n) == 0 && test_fr_count_diff(c0, c, n) == 0);
        CHECK_OK(cuzk_h_snarkjs(cd, a, b, c, 0));
        size_t bad = test_fr_count_diff(ga, a, n);
        if (bad)
            fprintf(stderr, "h_snarkjs 2^%u: %zu of %zu differ\n", k, bad, n);
        CHECK(bad == 0);
        cuzk_gpu_domain_free(gd);
        cuzk_domain_free(cd);
    }
    /* a bellman domain is refused */
    cuzk_gpu_domain *gd = NULL;
    CHECK_OK(cuzk_gpu_domain_new(&gd, 0, 4, CUZK_ROOTS_BELLMAN));
    if (gd)
        CHECK_EQ_ERR(cuzk_gpu_h_snarkjs(gd, a, b, c), CUZK_EINVAL);
    cuzk_gpu_domain_free(gd);
    printf("h: ok so far (%lu failed)\n", test_failed_);
    free(a); free(b); free(c); free(ga); free(b0); free(c0);
}

/* ---- MSM and batch add ---- */
/* The affine pass (g_affine): every G1 MSM check sets the context's accumulation to AFFINE
 * and AFFINE_FULL in turn, and counts the MSMs that ran affine rounds. Otherwise the context
 * has its default, AUTO: XYZZ up to 2^25 terms (2^21 on precomputed multiples), affine rounds
 * above (unless device memory is short, which is said), and with window 0 without the
 * multiples affine rounds from 2^20 to 10 2^20 terms too. */
#define AUTO_AFFINE_ABOVE ((size_t)1 << 25)
#define AUTO_AFFINE_PRE_ABOVE ((size_t)1 << 21) /* on precomputed multiples */
#define AUTO_AFFINE_MID(nt) ((nt) > ((size_t)1 << 20) && (nt) <= ((size_t)10 << 20)) /* window 0 */
static bool g_affine;
static unsigned long g_aff_calls, g_aff_used;
/* The precomputed passes (g_pre): the context holds precomputed multiples; counted are the
 * G1 MSMs that used them. */
static bool g_pre;
static unsigned long g_pre_calls, g_pre_used;

static void acc_next(cuzk_gpu_msm *m)
{
    if (g_affine)
        CHECK_OK(cuzk_gpu_msm_set_accumulation(m, (g_aff_calls++ & 1) ? CUZK_GPU_MSM_ACC_AFFINE_FULL
                                                                        : CUZK_GPU_MSM_ACC_AFFINE));
}

/* After a G1 MSM of nt terms (a split: its significant ones). */
static void acc_count(const cuzk_gpu_msm *m, size_t nt, unsigned window)
{
    const bool pre = cuzk_gpu_msm_precomputed_used(m);
    if (g_pre) {
        g_pre_calls++;
        g_pre_used += pre;
    } else {
        CHECK(!pre);
    }
    const bool aff = cuzk_gpu_msm_accumulation_used(m) == CUZK_GPU_MSM_ACC_AFFINE;
    if (g_affine)
        g_aff_used += aff;
    else if (nt <= (pre ? AUTO_AFFINE_PRE_ABOVE : AUTO_AFFINE_ABOVE) &&
             (pre || window || !AUTO_AFFINE_MID(nt)))
        CHECK(!aff);
    else if (!aff)
        printf("auto accumulation at n=%zu: XYZZ (device memory)\n", nt);
}

static bool msm_matches(cuzk_gpu_msm *m, const cuzk_g1_affine *bases, const cuzk_fr *s,
                        size_t n, unsigned window, const char *what)
{
    cuzk_g1_jac rg, rc;
    acc_next(m);
    cuzk_err eg = cuzk_gpu_g1_msm_fr(m, &rg, s, n, window);
    acc_count(m, n, window);
    if (eg != CUZK_OK)
        fprintf(stderr, "gpu msm (%s, n=%zu): %s: %s\n", what, n, cuzk_errname(eg),
                cuzk_error_detail());
    cuzk_err ec = cuzk_g1_msm_fr(&rc, NULL, bases, s, n, NULL);
    bool ok = eg == CUZK_OK && ec == CUZK_OK && cuzk_g1_jac_eq(&rg, &rc);
    if (!ok)
        fprintf(stderr, "msm %s n=%zu window=%u%s: GPU != CPU\n", what, n, window,
                g_affine ? " (affine)" : "");
    return ok;
}

/* The edge scalar sets of the MSM tests over n >= 7 values: all zero, all one, all r-1, or
 * small values, r-1, r-2 and random mixed with s[5] = s[4] (bases 5 and 6 are P and -P:
 * equal scalars cancel). */
enum { EDGE_ZERO, EDGE_ONE, EDGE_R_MINUS_1, EDGE_MIXED };
static void edge_fill(cuzk_fr *s, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = kind == EDGE_MIXED ? test_rand64() % 8 : 0;
        if (kind == EDGE_ZERO)
            cuzk_fr_set_zero(&s[i]);
        else if (kind == EDGE_ONE)
            cuzk_fr_set_one(&s[i]);
        else if (kind == EDGE_R_MINUS_1)
            test_fr_minus(&s[i], 1);
        else if (v < 4)
            cuzk_fr_set_u64(&s[i], v);
        else if (v == 4)
            test_fr_minus(&s[i], 1);
        else if (v == 5)
            test_fr_minus(&s[i], 2);
        else
            test_rand_fr(&s[i]);
    }
    if (kind == EDGE_MIXED)
        s[5] = s[4];
}

/* Edge scalars over the first n bases (s: room for n): all zero (the result is infinity),
 * all one, all r-1, and small values, r-1, r-2 and random mixed, with bases 5 and 6 (P and
 * -P) given equal scalars. */
static void msm_edge_scalars(cuzk_gpu_msm *m, const cuzk_g1_affine *bases, cuzk_fr *s, size_t n)
{
    cuzk_g1_jac r;
    edge_fill(s, n, EDGE_ZERO);
    CHECK(msm_matches(m, bases, s, n, 0, "zeros"));
    CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, n, 0));
    CHECK(cuzk_g1_jac_is_inf(&r));
    edge_fill(s, n, EDGE_ONE);
    CHECK(msm_matches(m, bases, s, n, 0, "ones"));
    edge_fill(s, n, EDGE_R_MINUS_1);
    CHECK(msm_matches(m, bases, s, n, 0, "r-1"));
    edge_fill(s, n, EDGE_MIXED);
    CHECK(msm_matches(m, bases, s, n, 0, "mixed"));
}

/* Canonical scalars over the first n bases equal the CPU; one >= 2^255 (at 3/4 n) is refused
 * with r = infinity, and n_max + 1 scalars with CUZK_ESIZE; then an MSM of n_after random
 * scalars still matches. */
static void msm_canonical(cuzk_gpu_msm *m, const cuzk_g1_affine *bases, cuzk_fr *s, size_t n,
                          size_t nmax, size_t n_after)
{
    test_rand_frs(s, n);
    cuzk_msm_scalar *cs = xmalloc(n * sizeof *cs);
    cuzk_msm_scalars_from_fr(cs, s, n, 0);
    cuzk_g1_jac rg, rc;
    CHECK_OK(cuzk_gpu_g1_msm(m, &rg, cs, n, 0));
    CHECK_OK(cuzk_g1_msm(&rc, bases, cs, n, NULL));
    CHECK(cuzk_g1_jac_eq(&rg, &rc));
    cs[n - n / 4].l[3] |= 1ULL << 63;
    CHECK_EQ_ERR(cuzk_gpu_g1_msm(m, &rg, cs, n, 0), CUZK_EINVAL);
    CHECK(cuzk_g1_jac_is_inf(&rg));
    CHECK_EQ_ERR(cuzk_gpu_g1_msm(m, &rg, cs, nmax + 1, 0), CUZK_ESIZE);
    free(cs);
    test_rand_frs(s, n_after);
    CHECK(msm_matches(m, bases, s, n_after, 0, "after an error"));
}

static void test_msm(cuzk_gpu_msm *m, const cuzk_g1_affine *bases, size_t nmax)
{
    cuzk_fr *s = xmalloc(nmax * sizeof *s);
    test_rand_frs(s, nmax);
    /* sizes 1, 2, 3, 2^k - 1, 2^k, 2^k + 1 */
    size_t sizes[3 + 3 * MAX_LOG], ns = 0;
    sizes[ns++] = 1;
    sizes[ns++] = 2;
    sizes[ns++] = 3;
    for (unsigned k = 2; k <= MAX_LOG; k++)
        for (int d = -1; d <= 1; d++) {
            size_t v = ((size_t)1 << k) + d;
            if (v > 3 && v <= nmax)
                sizes[ns++] = v;
        }
    for (size_t i = 0; i < ns; i++) {
        test_rand_frs(s, sizes[i]);
        CHECK(msm_matches(m, bases, s, sizes[i], 0, "random"));
    }
    printf("msm sizes: ok so far (%lu failed)\n", test_failed_);

    /* every window at one size */
    test_rand_frs(s, 5000);
    for (unsigned w = 1; w <= CUZK_GPU_MSM_WINDOW_MAX; w++)
        CHECK(msm_matches(m, bases, s, 5000, w, "window"));

    /* edge scalars */
    const size_t ne[2] = {((size_t)1 << 16) + 1, (size_t)1 << 20};
    for (int t = 0; t < 2; t++)
        msm_edge_scalars(m, bases, s, ne[t] <= nmax ? ne[t] : nmax);

    /* canonical scalars, and the >= 2^255 refusal */
    msm_canonical(m, bases, s, ((size_t)1 << 18) + 1 <= nmax ? ((size_t)1 << 18) + 1 : nmax,
                  nmax, 1000);
    printf("msm edges: ok so far (%lu failed)\n", test_failed_);
    free(s);
}

static void test_batch_add(cuzk_gpu_msm *m, const cuzk_g1_affine *bases, size_t nmax)
{
    size_t words = CUZK_MSM_BITVEC_WORDS(nmax);
    uint64_t *bits = xmalloc(words * sizeof *bits);
    size_t sizes[] = {1, 2, 3, 63, 64, 65, 1000, 4095, 4096, 4097, 65535, 65536, 65537,
                      (1 << 20) + 1, (size_t)1 << MAX_LOG};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        size_t n = sizes[t] <= nmax ? sizes[t] : nmax;
        for (int mode = 0; mode < 3; mode++) { /* random half, none, all */
            for (size_t w = 0; w < words; w++)
                bits[w] = mode == 0 ? test_rand64() : mode == 1 ? 0 : ~0ULL;
            cuzk_g1_jac rg, rc;
            CHECK_OK(cuzk_gpu_g1_batch_add(m, &rg, bits, n));
            CHECK_OK(cuzk_g1_batch_add(&rc, bases, n, bits, 0));
            bool ok = cuzk_g1_jac_eq(&rg, &rc);
            if (!ok)
                fprintf(stderr, "batch_add n=%zu mode %d: GPU != CPU\n", n, mode);
            CHECK(ok);
        }
    }
    printf("batch_add: ok so far (%lu failed)\n", test_failed_);
    free(bits);
}

/* GPU in both affine modes == CPU for one scalar set over the context's bases b;
 * AFFINE_FULL must have run affine rounds. */
static bool aff_case(cuzk_gpu_msm *m, const cuzk_g1_affine *b, const cuzk_fr *s, size_t n,
                     const char *what)
{
    cuzk_g1_jac rc, rg;
    if (cuzk_g1_msm_fr(&rc, NULL, b, s, n, NULL) != CUZK_OK)
        return false;
    const cuzk_gpu_msm_acc modes[2] = {CUZK_GPU_MSM_ACC_AFFINE_FULL, CUZK_GPU_MSM_ACC_AFFINE};
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        CHECK_OK(cuzk_gpu_msm_set_accumulation(m, modes[i]));
        cuzk_err e = cuzk_gpu_g1_msm_fr(m, &rg, s, n, 0);
        bool ok1 = e == CUZK_OK && cuzk_g1_jac_eq(&rg, &rc);
        if (i == 0)
            ok1 = ok1 && cuzk_gpu_msm_accumulation_used(m) == CUZK_GPU_MSM_ACC_AFFINE;
        if (!ok1)
            fprintf(stderr, "affine case %s n=%zu mode %d: GPU != CPU or no rounds (%s)\n", what,
                    n, (int)modes[i], e == CUZK_OK ? "" : cuzk_error_detail());
        ok = ok && ok1;
    }
    return ok;
}

/* Inputs that drive the affine rounds through their special cases, on a context of
 * 3 * 4096 + 1 bases: 4096 copies of P (doublings; two infinities among them), 4096 of
 * Q, -Q alternating, then distinct bases (test bases, with their infinities, repeats and
 * negatives). Scalars: all equal (every window one huge run), random on the copies of P
 * (every bucket holds several: doublings, then sums of multiples of P), equal on each
 * Q, -Q pair and zero elsewhere (P next to -P in every bucket: infinity; the MSM is
 * infinity), small values (a few huge buckets), and mixes. Then on the big context (bases
 * of test_msm): all scalars equal at 2^20 + 1, and random scalars at nmax with small windows
 * that make several bucket slices (aff_slices). */
static void aff_slices(cuzk_gpu_msm *big, const cuzk_g1_affine *bases, size_t nmax);
static void test_affine_cases(cuzk_gpu_msm *big, const cuzk_g1_affine *bases, size_t nmax)
{
    const size_t g = 4096, n = 3 * g + 1;
    cuzk_g1_affine *b = xmalloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        if (i < g)
            b[i] = bases[1];
        else if (i < 2 * g && i % 2)
            cuzk_g1_affine_neg(&b[i], &bases[2]);
        else if (i < 2 * g)
            b[i] = bases[2];
        else
            b[i] = bases[i];
    }
    cuzk_g1_affine_set_inf(&b[100]);
    cuzk_g1_affine_set_inf(&b[101]);
    const size_t ns = ((size_t)1 << 20) + 1 <= nmax ? ((size_t)1 << 20) + 1 : nmax;
    cuzk_fr *s = xmalloc(ns * sizeof *s), v;
    cuzk_gpu_msm *m = NULL;
    CHECK_OK(cuzk_gpu_msm_new(&m, 0, b, n));
    if (m) {
        CHECK_EQ_ERR(cuzk_gpu_msm_set_accumulation(NULL, CUZK_GPU_MSM_ACC_AFFINE), CUZK_EINVAL);
        CHECK_EQ_ERR(cuzk_gpu_msm_set_accumulation(m, (cuzk_gpu_msm_acc)7), CUZK_EINVAL);
        test_rand_fr(&v);
        for (size_t i = 0; i < n; i++)
            s[i] = v;
        CHECK(aff_case(m, b, s, n, "all equal"));
        test_rand_frs(s, g);
        CHECK(aff_case(m, b, s, g, "copies of P"));
        for (size_t i = 0; i < n; i++)
            cuzk_fr_set_zero(&s[i]);
        for (size_t i = g; i < 2 * g; i += 2) {
            test_rand_fr(&s[i]);
            s[i + 1] = s[i];
        }
        CHECK(aff_case(m, b, s, n, "P, -P pairs"));
        cuzk_g1_jac r;
        CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, n, 0));
        CHECK(cuzk_g1_jac_is_inf(&r));
        for (size_t i = 0; i < n; i++)
            cuzk_fr_set_u64(&s[i], 1 + test_rand64() % 3);
        CHECK(aff_case(m, b, s, n, "small scalars"));
        for (size_t i = 0; i < n; i++) {
            if (i % 3 == 0)
                test_fr_minus(&s[i], 1);
            else if (i % 3 == 1)
                cuzk_fr_set_one(&s[i]);
            else
                test_rand_fr(&s[i]);
        }
        CHECK(aff_case(m, b, s, n, "mixed"));
    }
    cuzk_gpu_msm_free(m);
    test_rand_fr(&v);
    for (size_t i = 0; i < ns; i++)
        s[i] = v;
    CHECK(aff_case(big, bases, s, ns, "all equal, big"));
    free(s);
    free(b);
    aff_slices(big, bases, nmax);
    CHECK_OK(cuzk_gpu_msm_set_accumulation(big, CUZK_GPU_MSM_ACC_AUTO));
    printf("affine cases: ok so far (%lu failed)\n", test_failed_);
}

/* Random scalars over all n of big's bases with windows that cut the buckets into several
 * slices (MSM_AFF_SLICE = 2^26 pairs; n = 2^22 + 1): c = 10 (26 windows of 512 buckets, a
 * slice ending inside a window) and c = 4 (64 windows of 8 buckets: chunks of one bucket),
 * in both affine modes, against one CPU result; the profile says how many slices ran. Also
 * the profile's bookkeeping: a call's times, zero when off. */
static void aff_slices(cuzk_gpu_msm *big, const cuzk_g1_affine *bases, size_t n)
{
    cuzk_fr *s = xmalloc(n * sizeof *s);
    test_rand_frs(s, n);
    cuzk_g1_jac rc, rg;
    CHECK_OK(cuzk_g1_msm_fr(&rc, NULL, bases, s, n, NULL));
    CHECK_OK(cuzk_gpu_msm_set_profile(big, true));
    const unsigned wins[2] = {10, 4};
    const bool full = n >= ((size_t)1 << 22);
    const unsigned min_slices[2] = {full ? 2u : 1u, full ? 3u : 1u};
    const cuzk_gpu_msm_acc modes[2] = {CUZK_GPU_MSM_ACC_AFFINE, CUZK_GPU_MSM_ACC_AFFINE_FULL};
    for (int w = 0; w < 2; w++)
        for (int md = 0; md < 2; md++) {
            CHECK_OK(cuzk_gpu_msm_set_accumulation(big, modes[md]));
            CHECK_OK(cuzk_gpu_g1_msm_fr(big, &rg, s, n, wins[w]));
            cuzk_gpu_msm_profile p;
            CHECK_OK(cuzk_gpu_msm_profile_get(big, &p));
            const bool ok = cuzk_g1_jac_eq(&rg, &rc) &&
                            cuzk_gpu_msm_accumulation_used(big) == CUZK_GPU_MSM_ACC_AFFINE &&
                            p.runs == 1 && p.affine && p.terms == n && p.window == wins[w] &&
                            p.windows == (256 + wins[w] - 1) / wins[w] &&
                            p.affine_slices >= min_slices[w] && p.affine_rounds >= 1 &&
                            p.accumulate_ms > 0 && p.accumulate_ms >= p.affine_plan_ms;
            printf("affine slices n=%zu c=%u mode %d: %u slices, up to %u rounds, accumulate "
                   "%.1f ms: %s\n", n, wins[w], (int)modes[md], p.affine_slices, p.affine_rounds,
                   p.accumulate_ms, ok ? "ok" : "WRONG");
            CHECK(ok);
        }
    /* AUTO with window 0: from 2^20 to 10 2^20 terms the batch-affine rounds at window 16,
     * else the model's window (cuzk_gpu_msm_window_auto) */
    {
        const bool mid = AUTO_AFFINE_MID(n);
        CHECK_OK(cuzk_gpu_msm_set_accumulation(big, CUZK_GPU_MSM_ACC_AUTO));
        CHECK_OK(cuzk_gpu_g1_msm_fr(big, &rg, s, n, 0));
        cuzk_gpu_msm_profile p;
        CHECK_OK(cuzk_gpu_msm_profile_get(big, &p));
        const bool ok = cuzk_g1_jac_eq(&rg, &rc) && p.affine == mid &&
                        p.window == cuzk_gpu_msm_window_auto(n, 1, CUZK_GPU_MSM_ACC_AUTO) &&
                        p.window == (mid ? 16u : cuzk_gpu_msm_window(n));
        printf("auto n=%zu: c=%u%s: %s\n", n, p.window, p.affine ? " affine" : "",
               ok ? "ok" : "WRONG");
        CHECK(ok);
    }
    /* XYZZ: the plain stages; profiling off: zeros; a batch add runs no Pippenger */
    cuzk_gpu_msm_profile p;
    CHECK_OK(cuzk_gpu_msm_set_accumulation(big, CUZK_GPU_MSM_ACC_XYZZ));
    CHECK_OK(cuzk_gpu_g1_msm_fr(big, &rg, s, 5000, 0));
    CHECK_OK(cuzk_gpu_msm_profile_get(big, &p));
    CHECK(p.runs == 1 && !p.affine && p.terms == 5000 && p.window == cuzk_gpu_msm_window(5000) &&
          p.accumulate_ms > 0 && p.sort_ms > 0 && p.bucket_sums_ms > 0 && p.affine_slices == 0);
    uint64_t bits[2] = {~0ULL, ~0ULL};
    CHECK_OK(cuzk_gpu_g1_batch_add(big, &rg, bits, 100));
    CHECK_OK(cuzk_gpu_msm_profile_get(big, &p));
    CHECK(p.runs == 0 && p.accumulate_ms == 0);
    CHECK_OK(cuzk_gpu_msm_set_profile(big, false));
    CHECK_OK(cuzk_gpu_g1_msm_fr(big, &rg, s, 5000, 0));
    CHECK_OK(cuzk_gpu_msm_profile_get(big, &p));
    CHECK(p.runs == 0 && p.accumulate_ms == 0 && p.terms == 0);
    CHECK_EQ_ERR(cuzk_gpu_msm_set_profile(NULL, true), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_gpu_msm_profile_get(big, NULL), CUZK_EINVAL);
    free(s);
}

static void test_errors(void)
{
    /* the library's window: the model's but in G1's middle sizes (affine at 16) and G2's
     * large ones (at most 16) */
    const size_t mid = (size_t)3 << 20, big = (size_t)12 << 20;
    CHECK(cuzk_gpu_msm_window_auto(5000, 1, CUZK_GPU_MSM_ACC_AUTO) == cuzk_gpu_msm_window(5000));
    CHECK(cuzk_gpu_msm_window_auto(mid, 1, CUZK_GPU_MSM_ACC_AUTO) == 16 &&
          cuzk_gpu_msm_window_auto(mid, 1, CUZK_GPU_MSM_ACC_AFFINE) == 16 &&
          cuzk_gpu_msm_window(mid) > 16);
    CHECK(cuzk_gpu_msm_window_auto(mid, 1, CUZK_GPU_MSM_ACC_XYZZ) == cuzk_gpu_msm_window(mid));
    CHECK(cuzk_gpu_msm_window_auto((size_t)1 << 20, 1, CUZK_GPU_MSM_ACC_AUTO) ==
          cuzk_gpu_msm_window((size_t)1 << 20));
    CHECK(cuzk_gpu_msm_window_auto(big, 1, CUZK_GPU_MSM_ACC_AUTO) == cuzk_gpu_msm_window(big));
    CHECK(cuzk_gpu_msm_window_auto(mid, 2, CUZK_GPU_MSM_ACC_AUTO) == 16 &&
          cuzk_gpu_msm_window_auto(big, 2, CUZK_GPU_MSM_ACC_XYZZ) == 16);
    CHECK(cuzk_gpu_msm_window_auto(5000, 2, CUZK_GPU_MSM_ACC_AUTO) == cuzk_gpu_msm_window(5000));
    CHECK(cuzk_gpu_msm_window_auto(0, 1, CUZK_GPU_MSM_ACC_AUTO) == 0);
    cuzk_gpu_domain *d = NULL;
    CHECK_EQ_ERR(cuzk_gpu_domain_new(&d, 0, 0, CUZK_ROOTS_SNARKJS), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_gpu_domain_new(&d, 0, CUZK_GPU_NTT_LOG2_MAX + 1, CUZK_ROOTS_SNARKJS),
                 CUZK_EINVAL);
    CHECK(d == NULL);
    cuzk_gpu_device_info info;
    CHECK_EQ_ERR(cuzk_gpu_device_query(&info, cuzk_gpu_device_count()), CUZK_EINVAL);
    /* a CUDA failure becomes CUZK_EGPU with the call named: an impossible allocation */
    void *p = NULL;
    cuzk_err e = cuzk_gpu_host_alloc(&p, (size_t)1 << 62);
    CHECK(e == CUZK_EGPU && strstr(cuzk_error_detail(), "cudaMallocHost") != NULL);
    cuzk_gpu_host_free(p);
    cuzk_gpu_msm *m = NULL;
    CHECK_EQ_ERR(cuzk_gpu_msm_new(&m, 0, NULL, 10), CUZK_EINVAL);
}

/* ---- G2 MSM and batch add ---- */
static bool msm_matches_g2(cuzk_gpu_msm *m, const cuzk_g2_affine *bases, const cuzk_fr *s,
                           size_t n, unsigned window, const char *what)
{
    cuzk_g2_jac rg, rc;
    cuzk_err eg = cuzk_gpu_g2_msm_fr(m, &rg, s, n, window);
    if (g_pre) {
        g_pre_calls++;
        g_pre_used += cuzk_gpu_msm_precomputed_used(m);
    }
    if (eg != CUZK_OK)
        fprintf(stderr, "gpu g2 msm (%s, n=%zu): %s: %s\n", what, n, cuzk_errname(eg),
                cuzk_error_detail());
    cuzk_err ec = cuzk_g2_msm_fr(&rc, NULL, bases, s, n, NULL);
    bool ok = eg == CUZK_OK && ec == CUZK_OK && cuzk_g2_jac_eq(&rg, &rc);
    if (!ok)
        fprintf(stderr, "g2 msm %s n=%zu window=%u: GPU != CPU\n", what, n, window);
    return ok;
}

#define G2_MAX_LOG 18

static void test_msm_g2(cuzk_gpu_msm *m, const cuzk_g2_affine *bases, size_t nmax)
{
    cuzk_fr *s = xmalloc(nmax * sizeof *s);
    size_t sizes[3 + 3 * G2_MAX_LOG], ns = 0;
    sizes[ns++] = 1;
    sizes[ns++] = 2;
    sizes[ns++] = 3;
    for (unsigned k = 2; k <= G2_MAX_LOG; k++)
        for (int d = -1; d <= 1; d++) {
            size_t v = ((size_t)1 << k) + d;
            if (v > 3 && v <= nmax)
                sizes[ns++] = v;
        }
    for (size_t i = 0; i < ns; i++) {
        test_rand_frs(s, sizes[i]);
        CHECK(msm_matches_g2(m, bases, s, sizes[i], 0, "random"));
    }
    printf("g2 msm sizes: ok so far (%lu failed)\n", test_failed_);

    test_rand_frs(s, 3000);
    const unsigned wins[] = {1, 2, 3, 5, 8, 11, 13, 16, 19, 20, 22};
    for (size_t w = 0; w < sizeof wins / sizeof wins[0]; w++)
        CHECK(msm_matches_g2(m, bases, s, 3000, wins[w], "window"));

    const size_t n = ((size_t)1 << 16) + 1 <= nmax ? ((size_t)1 << 16) + 1 : nmax;
    cuzk_g2_jac r;
    edge_fill(s, n, EDGE_ZERO);
    CHECK(msm_matches_g2(m, bases, s, n, 0, "zeros"));
    CHECK_OK(cuzk_gpu_g2_msm_fr(m, &r, s, n, 0));
    CHECK(cuzk_g2_jac_is_inf(&r));
    edge_fill(s, n, EDGE_ONE);
    CHECK(msm_matches_g2(m, bases, s, n, 0, "ones"));
    edge_fill(s, n, EDGE_R_MINUS_1);
    CHECK(msm_matches_g2(m, bases, s, n, 0, "r-1"));
    edge_fill(s, n, EDGE_MIXED);
    CHECK(msm_matches_g2(m, bases, s, n, 0, "mixed"));
    /* only P and -P (bases 5, 6) with equal scalars: infinity; 4 and 5 equal: 2P */
    {
        cuzk_fr t[7];
        for (int i = 0; i < 7; i++)
            cuzk_fr_set_zero(&t[i]);
        test_rand_fr(&t[5]);
        t[6] = t[5];
        CHECK(msm_matches_g2(m, bases, t, 7, 0, "P, -P"));
        CHECK_OK(cuzk_gpu_g2_msm_fr(m, &r, t, 7, 0));
        CHECK(cuzk_g2_jac_is_inf(&r));
        t[4] = t[5];
        cuzk_fr_set_zero(&t[6]);
        CHECK(msm_matches_g2(m, bases, t, 7, 0, "P, P"));
    }

    /* canonical scalars, the >= 2^255 refusal, size and group errors */
    {
        size_t nc = ((size_t)1 << 14) + 3 <= nmax ? ((size_t)1 << 14) + 3 : nmax;
        test_rand_frs(s, nc);
        cuzk_msm_scalar *cs = xmalloc(nc * sizeof *cs);
        cuzk_msm_scalars_from_fr(cs, s, nc, 0);
        cuzk_g2_jac rg, rc;
        CHECK_OK(cuzk_gpu_g2_msm(m, &rg, cs, nc, 0));
        CHECK_OK(cuzk_g2_msm(&rc, bases, cs, nc, NULL));
        CHECK(cuzk_g2_jac_eq(&rg, &rc));
        cs[nc / 2].l[3] |= 1ULL << 63;
        CHECK_EQ_ERR(cuzk_gpu_g2_msm(m, &rg, cs, nc, 0), CUZK_EINVAL);
        CHECK(cuzk_g2_jac_is_inf(&rg));
        CHECK_EQ_ERR(cuzk_gpu_g2_msm(m, &rg, cs, nmax + 1, 0), CUZK_ESIZE);
        cuzk_g1_jac r1;
        CHECK_EQ_ERR(cuzk_gpu_g1_msm_fr(m, &r1, s, 10, 0), CUZK_EINVAL);
        uint64_t w = ~0ULL;
        CHECK_EQ_ERR(cuzk_gpu_g1_batch_add(m, &r1, &w, 10), CUZK_EINVAL);
        free(cs);
        CHECK(msm_matches_g2(m, bases, s, 1000, 0, "after an error"));
    }
    printf("g2 msm edges: ok so far (%lu failed)\n", test_failed_);

    /* batch add */
    size_t words = CUZK_MSM_BITVEC_WORDS(nmax);
    uint64_t *bits = xmalloc(words * sizeof *bits);
    size_t bsizes[] = {1, 2, 3, 7, 63, 64, 65, 1000, 4095, 4096, 4097, 65537,
                       ((size_t)1 << G2_MAX_LOG) - 1, (size_t)1 << G2_MAX_LOG, nmax};
    for (size_t t = 0; t < sizeof bsizes / sizeof bsizes[0]; t++) {
        size_t nb = bsizes[t] <= nmax ? bsizes[t] : nmax;
        for (int mode = 0; mode < 3; mode++) {
            for (size_t w = 0; w < words; w++)
                bits[w] = mode == 0 ? test_rand64() : mode == 1 ? 0 : ~0ULL;
            cuzk_g2_jac rg, rc;
            CHECK_OK(cuzk_gpu_g2_batch_add(m, &rg, bits, nb));
            CHECK_OK(cuzk_g2_batch_add(&rc, bases, nb, bits, 0));
            bool ok = cuzk_g2_jac_eq(&rg, &rc);
            if (!ok)
                fprintf(stderr, "g2 batch_add n=%zu mode %d: GPU != CPU\n", nb, mode);
            CHECK(ok);
        }
    }
    /* P and -P only (bits 5, 6), and P twice (bits 4, 5) */
    bits[0] = 3ULL << 5;
    {
        cuzk_g2_jac rg, rc;
        CHECK_OK(cuzk_gpu_g2_batch_add(m, &rg, bits, 64 <= nmax ? 64 : nmax));
        CHECK(cuzk_g2_jac_is_inf(&rg));
        bits[0] = 3ULL << 4;
        CHECK_OK(cuzk_gpu_g2_batch_add(m, &rg, bits, 64 <= nmax ? 64 : nmax));
        CHECK_OK(cuzk_g2_batch_add(&rc, bases, 64 <= nmax ? 64 : nmax, bits, 0));
        CHECK(cuzk_g2_jac_eq(&rg, &rc) && !cuzk_g2_jac_is_inf(&rg));
    }
    printf("g2 batch_add: ok so far (%lu failed)\n", test_failed_);
    free(bits);
    free(s);
}

/* ---- split MSM (batch add of the ones + Pippenger over the significant positions) ---- */
/* Garbage in the bits past n of the last word (they must be ignored). */
static void dirty_tail(uint64_t *bits, size_t n)
{
    if (n & 63)
        bits[n / 64] |= ~0ULL << (n & 63);
}

typedef struct {
    int group; /* 1 or 2 */
    cuzk_gpu_msm *m;
    const void *bases;
} split_target;

static bool split_matches(const split_target *tg, const cuzk_fr *s, size_t n, int variant,
                          const char *what)
{
    size_t words = CUZK_MSM_BITVEC_WORDS(n);
    uint64_t *one = xmalloc(words * sizeof *one), *sig = xmalloc(words * sizeof *sig);
    cuzk_msm_counts cnt;
    cuzk_msm_classify_fr(one, sig, &cnt, s, n, 0);
    dirty_tail(one, n);
    dirty_tail(sig, n);
    cuzk_msm_scalar *cs = xmalloc((n ? n : 1) * sizeof *cs);
    const void *sc = s;
    unsigned flags = CUZK_GPU_SCALARS_FR;
    if (variant == 1) { /* canonical, all n */
        cuzk_msm_scalars_from_fr(cs, s, n, 0);
        sc = cs;
        flags = 0;
    } else if (variant == 2) { /* canonical, gathered */
        size_t got = cuzk_msm_gather_fr(cs, s, n, sig, 0);
        if (got != cnt.n_sig)
            fprintf(stderr, "gather count %zu != %zu\n", got, cnt.n_sig);
        sc = cs;
        flags = CUZK_GPU_SCALARS_GATHERED;
    }
    bool ok;
    cuzk_err eg, ec;
    if (tg->group == 1) {
        cuzk_g1_jac rg, rc;
        acc_next(tg->m);
        eg = cuzk_gpu_g1_msm_split(tg->m, &rg, sc, flags, one, sig, n, 0);
        acc_count(tg->m, cnt.n_sig, 0);
        ec = cuzk_g1_msm_auto_fr(&rc, NULL, tg->bases, s, n, NULL);
        ok = eg == CUZK_OK && ec == CUZK_OK && cuzk_g1_jac_eq(&rg, &rc);
    } else {
        cuzk_g2_jac rg, rc;
        eg = cuzk_gpu_g2_msm_split(tg->m, &rg, sc, flags, one, sig, n, 0);
        ec = cuzk_g2_msm_auto_fr(&rc, NULL, tg->bases, s, n, NULL);
        ok = eg == CUZK_OK && ec == CUZK_OK && cuzk_g2_jac_eq(&rg, &rc);
    }
    if (eg != CUZK_OK)
        fprintf(stderr, "gpu split: %s: %s\n", cuzk_errname(eg), cuzk_error_detail());
    if (!ok)
        fprintf(stderr, "g%d split %s n=%zu variant %d (ones %zu, sig %zu)%s: GPU != CPU\n",
                tg->group, what, n, variant, cnt.n_one, cnt.n_sig,
                g_affine && tg->group == 1 ? " (affine)" : "");
    free(one);
    free(sig);
    free(cs);
    return ok;
}

static void test_split(const split_target *tg, size_t nmax, unsigned maxlog)
{
    cuzk_fr *s = xmalloc(nmax * sizeof *s);
    size_t sizes[64], ns = 0;
    const size_t fixed[] = {1, 2, 3, 63, 64, 65, 127, 1000};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        sizes[ns++] = fixed[i];
    for (unsigned k = 8; k <= maxlog; k += (k < 12 ? 1 : 2))
        for (int d = -1; d <= 1; d++) {
            size_t v = ((size_t)1 << k) + d;
            if (v <= nmax)
                sizes[ns++] = v;
        }
    for (size_t i = 0; i < ns; i++) {
        test_rand_frs_filecoin(s, sizes[i]);
        CHECK(split_matches(tg, s, sizes[i], (int)(i % 3), "filecoin"));
    }
    /* every variant at one size; then all zero, all one, all significant, no ones */
    const size_t n = ((size_t)1 << 15) + 1 <= nmax ? ((size_t)1 << 15) + 1 : nmax;
    test_rand_frs_filecoin(s, n);
    for (int v = 0; v < 3; v++)
        CHECK(split_matches(tg, s, n, v, "variants"));
    for (size_t i = 0; i < n; i++)
        cuzk_fr_set_zero(&s[i]);
    CHECK(split_matches(tg, s, n, 0, "zeros"));
    for (size_t i = 0; i < n; i++)
        cuzk_fr_set_one(&s[i]);
    CHECK(split_matches(tg, s, n, 2, "ones"));
    test_rand_frs(s, n);
    CHECK(split_matches(tg, s, n, 0, "random"));
    for (size_t i = 0; i < n; i++)
        if (i % 2)
            cuzk_fr_set_zero(&s[i]);
    CHECK(split_matches(tg, s, n, 1, "no ones"));
    /* bases 5, 6 are P, -P; 4, 5 are P, P: significant and one scalars across them */
    test_rand_frs_filecoin(s, n);
    test_rand_fr(&s[4]);
    s[5] = s[4];
    cuzk_fr_set_one(&s[6]);
    CHECK(split_matches(tg, s, n, 0, "P -P"));

    /* arbitrary vectors: positions in both, sig positions holding 0 or 1, NULL vectors:
     * r = batch_add(one) + msm(scalars masked by sig), computed on the CPU */
    {
        const size_t words = CUZK_MSM_BITVEC_WORDS(n);
        uint64_t *one = xmalloc(words * sizeof *one), *sig = xmalloc(words * sizeof *sig);
        cuzk_fr *masked = xmalloc(n * sizeof *masked);
        test_rand_frs_filecoin(s, n);
        for (size_t w = 0; w < words; w++) {
            one[w] = test_rand64();
            sig[w] = test_rand64() & test_rand64();
        }
        for (size_t i = 0; i < n; i++) {
            if ((sig[i / 64] >> (i % 64)) & 1)
                masked[i] = s[i];
            else
                cuzk_fr_set_zero(&masked[i]);
        }
        for (int nulls = 0; nulls < 3; nulls++) { /* 0: both, 1: one NULL, 2: sig NULL */
            const uint64_t *o = nulls == 1 ? NULL : one, *g = nulls == 2 ? NULL : sig;
            bool ok;
            if (tg->group == 1) {
                cuzk_g1_jac rg, ra, rb;
                cuzk_g1_jac_set_inf(&ra);
                cuzk_g1_jac_set_inf(&rb);
                CHECK_OK(cuzk_gpu_g1_msm_split(tg->m, &rg, s, CUZK_GPU_SCALARS_FR, o, g, n, 0));
                if (o)
                    CHECK_OK(cuzk_g1_batch_add(&ra, tg->bases, n, o, 0));
                if (g)
                    CHECK_OK(cuzk_g1_msm_fr(&rb, NULL, tg->bases, masked, n, NULL));
                cuzk_g1_jac_add_var(&ra, &ra, &rb);
                ok = cuzk_g1_jac_eq(&rg, &ra);
            } else {
                cuzk_g2_jac rg, ra, rb;
                cuzk_g2_jac_set_inf(&ra);
                cuzk_g2_jac_set_inf(&rb);
                CHECK_OK(cuzk_gpu_g2_msm_split(tg->m, &rg, s, CUZK_GPU_SCALARS_FR, o, g, n, 0));
                if (o)
                    CHECK_OK(cuzk_g2_batch_add(&ra, tg->bases, n, o, 0));
                if (g)
                    CHECK_OK(cuzk_g2_msm_fr(&rb, NULL, tg->bases, masked, n, NULL));
                cuzk_g2_jac_add_var(&ra, &ra, &rb);
                ok = cuzk_g2_jac_eq(&rg, &ra);
            }
            if (!ok)
                fprintf(stderr, "g%d split arbitrary vectors (nulls %d): GPU != CPU\n",
                        tg->group, nulls);
            CHECK(ok);
        }
        /* errors: unknown flag, too many, both NULL gives infinity */
        if (tg->group == 1) {
            cuzk_g1_jac r;
            CHECK_EQ_ERR(cuzk_gpu_g1_msm_split(tg->m, &r, s, 4, one, sig, n, 0), CUZK_EINVAL);
            CHECK_EQ_ERR(cuzk_gpu_g1_msm_split(tg->m, &r, s, CUZK_GPU_SCALARS_FR, one, sig,
                                               nmax + 1, 0),
                         CUZK_ESIZE);
            CHECK_EQ_ERR(cuzk_gpu_g2_msm_split(tg->m, NULL, s, 0, one, sig, n, 0), CUZK_EINVAL);
            CHECK_OK(cuzk_gpu_g1_msm_split(tg->m, &r, NULL, 0, NULL, NULL, n, 0));
            CHECK(cuzk_g1_jac_is_inf(&r));
        } else {
            cuzk_g2_jac r;
            CHECK_EQ_ERR(cuzk_gpu_g2_msm_split(tg->m, &r, s, 4, one, sig, n, 0), CUZK_EINVAL);
            cuzk_g1_jac r1;
            CHECK_EQ_ERR(cuzk_gpu_g1_msm_split(tg->m, &r1, s, 0, one, sig, n, 0), CUZK_EINVAL);
            CHECK_OK(cuzk_gpu_g2_msm_split(tg->m, &r, NULL, 0, NULL, NULL, n, 0));
            CHECK(cuzk_g2_jac_is_inf(&r));
        }
        free(one);
        free(sig);
        free(masked);
    }
    printf("g%d split: ok so far (%lu failed)\n", tg->group, test_failed_);
    free(s);
}

/* ---- bellman H ---- */
/* The bellman H step against the CPU, 2^1..2^20, with c = a b as well (Z divides A B - C:
 * the top coefficient is 0); a snarkjs domain is refused. */
static void test_h_bellman(void)
{
    const unsigned maxk = 20;
    const size_t nmax = (size_t)1 << maxk;
    cuzk_fr *a = xmalloc(nmax * sizeof *a), *b = xmalloc(nmax * sizeof *b);
    cuzk_fr *c = xmalloc(nmax * sizeof *c), *ga = xmalloc(nmax * sizeof *ga);
    cuzk_fr *b0 = xmalloc(nmax * sizeof *b0), *c0 = xmalloc(nmax * sizeof *c0);
    for (unsigned k = 1; k <= maxk; k++) {
        const size_t n = (size_t)1 << k;
        cuzk_gpu_domain *gd = NULL;
        cuzk_domain *cd = NULL;
        if (!domain_pair(k, CUZK_ROOTS_BELLMAN, &gd, &cd))
            continue;
        for (int sat = 0; sat < 2; sat++) {
            /* sat = 1: c = a b on the domain, so Z divides A B - C and a[n-1] = 0 */
            test_rand_frs(a, n);
            test_rand_frs(b, n);
            test_rand_frs(c, n);
            if (sat)
                for (size_t i = 0; i < n; i++)
                    cuzk_fr_mul(&c[i], &a[i], &b[i]);
            memcpy(ga, a, n * sizeof *a);
            memcpy(b0, b, n * sizeof *b);
            memcpy(c0, c, n * sizeof *c);
            CHECK_OK(cuzk_gpu_h_bellman(gd, ga, b0, c0));
            CHECK(test_fr_count_diff(b0, b, n) == 0 && test_fr_count_diff(c0, c, n) == 0);
            CHECK_OK(cuzk_h_bellman(cd, a, b, c, 0));
            size_t bad = test_fr_count_diff(ga, a, n);
            if (bad)
                fprintf(stderr, "h_bellman 2^%u (sat %d): %zu of %zu differ\n", k, sat, bad, n);
            CHECK(bad == 0);
            if (sat)
                CHECK(cuzk_fr_is_zero(&ga[n - 1]));
        }
        cuzk_gpu_domain_free(gd);
        cuzk_domain_free(cd);
    }
    /* a snarkjs domain is refused, and a bellman domain by the snarkjs step */
    cuzk_gpu_domain *gd = NULL;
    CHECK_OK(cuzk_gpu_domain_new(&gd, 0, 4, CUZK_ROOTS_SNARKJS));
    if (gd)
        CHECK_EQ_ERR(cuzk_gpu_h_bellman(gd, a, b, c), CUZK_EINVAL);
    cuzk_gpu_domain_free(gd);
    printf("h bellman: ok so far (%lu failed)\n", test_failed_);
    free(a); free(b); free(c); free(ga); free(b0); free(c0);
}

/* cuzk_gpu_domain_h_host_ready: the arrays are filled only when ready(i) is called (array
 * i from its source), so a copy started before its array is complete reads zeros and the
 * result differs; ready must be called for 0, 1, 2 in that order; an error it returns is the
 * call's, and the domain proves correctly after it. */
typedef struct {
    cuzk_fr *dst[3];
    const cuzk_fr *src[3];
    size_t n;
    int calls, order_bad, fail_at;
} ready_ctx;

static cuzk_err ready_fill(void *ctx, int i)
{
    ready_ctx *r = ctx;
    if (i != r->calls)
        r->order_bad++;
    r->calls++;
    if (i == r->fail_at)
        return cuzk_error_set(CUZK_EIO, "ready: input %d failed", i);
    memcpy(r->dst[i], r->src[i], r->n * sizeof(cuzk_fr));
    return CUZK_OK;
}

static void test_h_host_ready(void)
{
    static const unsigned ks[] = {3, 12, 20};
    const size_t nmax = (size_t)1 << 20;
    cuzk_fr *in = xmalloc(3 * nmax * sizeof *in), *ref = xmalloc(3 * nmax * sizeof *ref);
    cuzk_fr *buf = xmalloc(3 * nmax * sizeof *buf), *out = xmalloc(nmax * sizeof *out);
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        const unsigned k = ks[ki];
        const size_t n = (size_t)1 << k;
        for (int fam = 0; fam < 2; fam++) {
            const cuzk_roots rf = fam ? CUZK_ROOTS_BELLMAN : CUZK_ROOTS_SNARKJS;
            cuzk_gpu_domain *gd = NULL;
            cuzk_domain *cd = NULL;
            if (!domain_pair(k, rf, &gd, &cd))
                continue;
            test_rand_frs(in, 3 * n);
            memcpy(ref, in, 3 * n * sizeof *in);
            if (fam)
                CHECK_OK(cuzk_h_bellman(cd, ref, ref + n, ref + 2 * n, 0));
            else
                CHECK_OK(cuzk_h_snarkjs(cd, ref, ref + n, ref + 2 * n, 0));
            for (int fail_at = -1; fail_at < 3; fail_at++) {
                memset(buf, 0, 3 * n * sizeof *buf);
                ready_ctx r = {{buf, buf + n, buf + 2 * n}, {in, in + n, in + 2 * n}, n, 0, 0,
                               fail_at};
                const cuzk_err e = cuzk_gpu_domain_h_host_ready(gd, buf, buf + n, buf + 2 * n,
                                                                ready_fill, &r);
                CHECK(r.order_bad == 0);
                if (fail_at >= 0) {
                    CHECK(e == CUZK_EIO && r.calls == fail_at + 1);
                    cuzk_error_clear();
                    continue;
                }
                CHECK_OK(e);
                CHECK(r.calls == 3);
                CHECK_OK(cuzk_gpu_domain_store(gd, 0, out));
                const size_t bad = test_fr_count_diff(out, ref, n);
                if (bad)
                    fprintf(stderr, "h_host_ready 2^%u fam %d: %zu of %zu differ\n", k, fam, bad,
                            n);
                CHECK(bad == 0);
            }
            /* after the failed calls, the plain call from complete arrays */
            CHECK_OK(cuzk_gpu_domain_h_host(gd, in, in + n, in + 2 * n));
            CHECK_OK(cuzk_gpu_domain_store(gd, 0, out));
            CHECK(test_fr_count_diff(out, ref, n) == 0);
            cuzk_gpu_domain_free(gd);
            cuzk_domain_free(cd);
        }
    }
    printf("h from arrays filled on demand: ok so far (%lu failed)\n", test_failed_);
    free(in); free(ref); free(buf); free(out);
}

/* ---- benchmarks ---- */
#define REPS 3
typedef struct {
    char name[64];
    double ms;
} bench_row;
static bench_row rows[160];
static int nrows;

static void record(const char *name, double *t)
{
    cuzk_sort_doubles(t, REPS);
    snprintf(rows[nrows].name, sizeof rows[nrows].name, "%s", name);
    rows[nrows++].ms = t[REPS / 2];
    printf("{\"bench\": \"%s\", \"median_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f}\n", name,
           t[REPS / 2], t[0], t[REPS - 1]);
    fflush(stdout);
}

/* The stage times of m's last call (cuzk_gpu_msm_set_profile on), one line. */
static void print_profile(cuzk_gpu_msm *m, int group)
{
    cuzk_gpu_msm_profile p;
    if (cuzk_gpu_msm_profile_get(m, &p) != CUZK_OK || p.runs == 0)
        return;
    printf("gpu msm g%d n=%zu c=%u W=%u%s: upload %.3f digits %.3f sort %.3f accumulate %.3f "
           "partials %.3f bucket_sums %.3f window_reduce %.3f ms", group, p.terms, p.window,
           p.windows, p.affine ? " affine" : "", p.upload_ms, p.digits_ms, p.sort_ms,
           p.accumulate_ms, p.partials_ms, p.bucket_sums_ms, p.window_reduce_ms);
    if (p.affine)
        printf(" (plan %.3f, %u slices, up to %u rounds: rounds %.3f, xyzz_finish %.3f ms)",
               p.affine_plan_ms, p.affine_slices, p.affine_rounds, p.affine_rounds_ms,
               p.affine_finish_ms);
    printf("\n");
}

/* A deterministic, non-trivial 2^k input (cheap at 2^27). */
static void bench_fill(cuzk_fr *x, size_t n)
{
    test_rand_frs(x, n < 4096 ? n : 4096);
    for (size_t i = 4096; i < n; i++) /* cheap fill, not zeros */
        cuzk_fr_add(&x[i], &x[i - 4096], &x[i % 4096]);
}

/* The H step (snarkjs's or bellman's) on the three slots loaded from x: timed after a
 * warm-up; then once more from the host arrays (cuzk_gpu_domain_h_host: the copies overlap
 * the transforms), which must give the same result (the 2^27 check, where a CPU reference
 * would take minutes; tmp, out: n values). */
static void bench_h_step(cuzk_gpu_domain *d, unsigned k, const cuzk_fr *x, size_t n,
                         bool bellman, cuzk_fr *tmp, cuzk_fr *out)
{
    cuzk_err (*h)(cuzk_gpu_domain *) =
        bellman ? cuzk_gpu_domain_h_bellman : cuzk_gpu_domain_h_snarkjs;
    const char *what = bellman ? "h_bellman" : "h_snarkjs";
    double t[REPS];
    char name[64];
    for (unsigned s = 0; s < 3; s++)
        CHECK_OK(cuzk_gpu_domain_load(d, s, x));
    CHECK_OK(h(d));
    for (int r = 0; r < REPS; r++) {
        double t0 = cuzk_now_ms();
        CHECK_OK(h(d));
        t[r] = cuzk_now_ms() - t0;
    }
    snprintf(name, sizeof name, "%s_2^%u", what, k);
    record(name, t);
    if (!tmp || !out)
        return;
    for (unsigned s = 0; s < 3; s++)
        CHECK_OK(cuzk_gpu_domain_load(d, s, x));
    CHECK_OK(h(d));
    CHECK_OK(cuzk_gpu_domain_store(d, 0, out));
    CHECK_OK(cuzk_gpu_domain_h_host(d, x, x, x));
    CHECK_OK(cuzk_gpu_domain_store(d, 0, tmp));
    const size_t bad = test_fr_count_diff(tmp, out, n);
    if (bad)
        fprintf(stderr, "bench %s 2^%u: from the host, %zu of %zu differ\n", what, k, bad, n);
    CHECK(bad == 0);
}

/* The NTT and the snarkjs H step on resident data; the forward transform's result back
 * through the inverse must be the input. */
static void bench_ntt(unsigned k)
{
    const size_t n = (size_t)1 << k;
    cuzk_fr *x = NULL;
    if (cuzk_gpu_host_alloc((void **)&x, n * sizeof *x) != CUZK_OK) {
        fprintf(stderr, "bench ntt 2^%u: %s\n", k, cuzk_error_detail());
        test_failed_++;
        return;
    }
    bench_fill(x, n);
    cuzk_fr *tmp = malloc(n * sizeof *x), *out = malloc(n * sizeof *x);
    cuzk_gpu_domain *d = NULL;
    CHECK_OK(cuzk_gpu_domain_new(&d, 0, k, CUZK_ROOTS_SNARKJS));
    if (d) {
        double t[REPS];
        char name[64];
        CHECK_OK(cuzk_gpu_domain_load(d, 0, x));
        CHECK_OK(cuzk_gpu_domain_ntt(d, 0, false));
        for (int r = 0; r < REPS; r++) {
            double t0 = cuzk_now_ms();
            CHECK_OK(cuzk_gpu_domain_ntt(d, 0, false));
            t[r] = cuzk_now_ms() - t0;
        }
        snprintf(name, sizeof name, "ntt_fwd_2^%u", k);
        record(name, t);
        for (int r = 0; r < REPS; r++) {
            double t0 = cuzk_now_ms();
            CHECK_OK(cuzk_gpu_domain_ntt(d, 0, true));
            t[r] = cuzk_now_ms() - t0;
        }
        snprintf(name, sizeof name, "ntt_inv_2^%u", k);
        record(name, t);
        if (out) {
            CHECK_OK(cuzk_gpu_domain_load(d, 0, x));
            CHECK_OK(cuzk_gpu_domain_ntt(d, 0, false));
            CHECK_OK(cuzk_gpu_domain_ntt(d, 0, true));
            CHECK_OK(cuzk_gpu_domain_store(d, 0, out));
            CHECK(test_fr_count_diff(out, x, n) == 0);
        }
        bench_h_step(d, k, x, n, false, tmp, out);
    }
    cuzk_gpu_domain_free(d);
    free(tmp);
    free(out);
    cuzk_gpu_host_free(x);
}


/* Split MSM on the resident 2^24 G1 bases, Filecoin-like scalars (45% zero, 45% one, 10%
 * random): all n Montgomery scalars uploaded, or the gathered canonical ones. */
static void bench_split(cuzk_gpu_msm *m, const cuzk_g1_affine *bases, size_t n)
{
    cuzk_fr *s = NULL;
    cuzk_msm_scalar *cs = NULL;
    if (cuzk_gpu_host_alloc((void **)&s, n * sizeof *s) != CUZK_OK ||
        cuzk_gpu_host_alloc((void **)&cs, n * sizeof *cs) != CUZK_OK) {
        fprintf(stderr, "bench split: %s\n", cuzk_error_detail());
        test_failed_++;
        cuzk_gpu_host_free(s);
        return;
    }
    test_rand_frs_filecoin(s, n);
    const size_t words = CUZK_MSM_BITVEC_WORDS(n);
    uint64_t *one = xmalloc(words * sizeof *one), *sig = xmalloc(words * sizeof *sig);
    cuzk_msm_counts cnt;
    double t0 = cuzk_now_ms();
    cuzk_msm_classify_fr(one, sig, &cnt, s, n, 0);
    size_t ng = cuzk_msm_gather_fr(cs, s, n, sig, 0);
    printf("split inputs: %zu ones, %zu significant; classify + gather on the CPU %.1f ms\n",
           cnt.n_one, cnt.n_sig, cuzk_now_ms() - t0);
    cuzk_g1_jac rg, rc;
    CHECK_OK(cuzk_gpu_g1_msm_split(m, &rg, s, CUZK_GPU_SCALARS_FR, one, sig, n, 0));
    CHECK_OK(cuzk_g1_msm_auto_fr(&rc, NULL, bases, s, n, NULL));
    CHECK(cuzk_g1_jac_eq(&rg, &rc));
    CHECK_OK(cuzk_gpu_g1_msm_split(m, &rg, cs, CUZK_GPU_SCALARS_GATHERED, one, sig, n, 0));
    CHECK(cuzk_g1_jac_eq(&rg, &rc) && ng == cnt.n_sig);
    double t[REPS];
    char name[64];
    for (int i = 0; i < REPS; i++) {
        t0 = cuzk_now_ms();
        CHECK_OK(cuzk_gpu_g1_msm_split(m, &rg, s, CUZK_GPU_SCALARS_FR, one, sig, n, 0));
        t[i] = cuzk_now_ms() - t0;
    }
    snprintf(name, sizeof name, "msm_split_g1_2^24_fr_all");
    record(name, t);
    for (int i = 0; i < REPS; i++) {
        t0 = cuzk_now_ms();
        CHECK_OK(cuzk_gpu_g1_msm_split(m, &rg, cs, CUZK_GPU_SCALARS_GATHERED, one, sig, n, 0));
        t[i] = cuzk_now_ms() - t0;
    }
    snprintf(name, sizeof name, "msm_split_g1_2^24_gathered");
    record(name, t);
    free(one);
    free(sig);
    cuzk_gpu_host_free(s);
    cuzk_gpu_host_free(cs);
}

/* The bellman H step on resident data (bench_h_step). */
static void bench_h_bellman(unsigned k)
{
    const size_t n = (size_t)1 << k;
    cuzk_fr *x = NULL;
    if (cuzk_gpu_host_alloc((void **)&x, n * sizeof *x) != CUZK_OK) {
        fprintf(stderr, "bench h_bellman 2^%u: %s\n", k, cuzk_error_detail());
        test_failed_++;
        return;
    }
    bench_fill(x, n);
    cuzk_fr *tmp = malloc(n * sizeof *x), *out = malloc(n * sizeof *x);
    cuzk_gpu_domain *d = NULL;
    CHECK_OK(cuzk_gpu_domain_new(&d, 0, k, CUZK_ROOTS_BELLMAN));
    if (d)
        bench_h_step(d, k, x, n, true, tmp, out);
    cuzk_gpu_domain_free(d);
    free(tmp);
    free(out);
    cuzk_gpu_host_free(x);
}

/* G2 MSM (2^(k-2), 2^k) and batch add on 2^k resident G2 bases, checked once on the CPU. */
static void bench_g2(unsigned k)
{
    const size_t n = (size_t)1 << k;
    double t0 = cuzk_now_ms();
    cuzk_g2_affine *bases = make_bases_g2(n);
    printf("g2 bases: 2^%u in %.0f ms\n", k, cuzk_now_ms() - t0);
    cuzk_fr *s = NULL;
    cuzk_gpu_msm *m = NULL;
    if (cuzk_gpu_host_alloc((void **)&s, n * sizeof *s) != CUZK_OK ||
        cuzk_gpu_msm_new_g2(&m, 0, bases, n) != CUZK_OK) {
        fprintf(stderr, "bench g2: %s\n", cuzk_error_detail());
        test_failed_++;
        cuzk_gpu_host_free(s);
        free(bases);
        return;
    }
    test_rand_frs(s, n);
    CHECK(msm_matches_g2(m, bases, s, n, 0, "bench"));
    CHECK_OK(cuzk_gpu_msm_set_profile(m, true));
    double t[REPS];
    char name[64];
    for (unsigned kk = k - 2; kk <= k; kk += 2) {
        cuzk_g2_jac r;
        for (int i = 0; i < REPS; i++) {
            t0 = cuzk_now_ms();
            CHECK_OK(cuzk_gpu_g2_msm_fr(m, &r, s, (size_t)1 << kk, 0));
            t[i] = cuzk_now_ms() - t0;
        }
        snprintf(name, sizeof name, "msm_g2_2^%u_c%u", kk,
                 cuzk_gpu_msm_window_auto((size_t)1 << kk, 2, CUZK_GPU_MSM_ACC_AUTO));
        record(name, t);
        print_profile(m, 2);
    }
    uint64_t *bits = xmalloc(CUZK_MSM_BITVEC_WORDS(n) * sizeof *bits);
    for (size_t i = 0; i < CUZK_MSM_BITVEC_WORDS(n); i++)
        bits[i] = test_rand64();
    cuzk_g2_jac r;
    for (int i = 0; i < REPS; i++) {
        t0 = cuzk_now_ms();
        CHECK_OK(cuzk_gpu_g2_batch_add(m, &r, bits, n));
        t[i] = cuzk_now_ms() - t0;
    }
    snprintf(name, sizeof name, "batch_add_g2_2^%u_half", k);
    record(name, t);
    free(bits);
    cuzk_gpu_msm_free(m);
    cuzk_gpu_host_free(s);
    free(bases);
}

static int run_bench(void)
{
    const unsigned kmsm = 24;
    const size_t n = (size_t)1 << kmsm;
    double t0 = cuzk_now_ms();
    cuzk_g1_affine *bases = make_bases(n);
    printf("bases: 2^%u in %.0f ms\n", kmsm, cuzk_now_ms() - t0);
    cuzk_fr *s = NULL;
    if (cuzk_gpu_host_alloc((void **)&s, n * sizeof *s) != CUZK_OK) {
        fprintf(stderr, "%s\n", cuzk_error_detail());
        return 1;
    }
    test_rand_frs(s, n);
    cuzk_gpu_msm *m = NULL;
    t0 = cuzk_now_ms();
    CHECK_OK(cuzk_gpu_msm_new(&m, 0, bases, n));
    printf("upload of 2^%u bases: %.0f ms\n", kmsm, cuzk_now_ms() - t0);
    if (!m)
        return test_finish();
    /* correctness at 2^24; the timings with XYZZ, then with the batch-affine accumulation,
     * each with its last call's stage times */
    CHECK(msm_matches(m, bases, s, n, 0, "bench 2^24"));
    CHECK_OK(cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_XYZZ));
    CHECK_OK(cuzk_gpu_msm_set_profile(m, true));
    double t[REPS];
    char name[64];
    for (unsigned k = 20; k <= kmsm; k += 2) {
        cuzk_g1_jac r;
        CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, (size_t)1 << k, 0));
        for (int i = 0; i < REPS; i++) {
            t0 = cuzk_now_ms();
            CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, (size_t)1 << k, 0));
            t[i] = cuzk_now_ms() - t0;
        }
        snprintf(name, sizeof name, "msm_g1_2^%u_c%u", k, cuzk_gpu_msm_window((size_t)1 << k));
        record(name, t);
        print_profile(m, 1);
    }
    /* the batch-affine accumulation, same sizes (2^24 checked against the XYZZ result) */
    {
        cuzk_g1_jac rx, ra;
        CHECK_OK(cuzk_gpu_g1_msm_fr(m, &rx, s, n, 0));
        CHECK_OK(cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_AFFINE));
        CHECK_OK(cuzk_gpu_g1_msm_fr(m, &ra, s, n, 0));
        CHECK(cuzk_g1_jac_eq(&rx, &ra));
        if (cuzk_gpu_msm_accumulation_used(m) != CUZK_GPU_MSM_ACC_AFFINE)
            printf("msm affine: fell back to xyzz (device memory)\n");
        for (unsigned k = 20; k <= kmsm; k += 2) {
            cuzk_g1_jac r;
            CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, (size_t)1 << k, 0));
            for (int i = 0; i < REPS; i++) {
                t0 = cuzk_now_ms();
                CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, (size_t)1 << k, 0));
                t[i] = cuzk_now_ms() - t0;
            }
            snprintf(name, sizeof name, "msm_g1_2^%u_c%u_affine", k,
                     cuzk_gpu_msm_window((size_t)1 << k));
            record(name, t);
            print_profile(m, 1);
        }
        CHECK_OK(cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_XYZZ));
    }
    const unsigned wins[] = {16, 18, 21, 22};
    for (size_t w = 0; w < sizeof wins / sizeof wins[0]; w++) {
        cuzk_g1_jac r;
        CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, n, wins[w]));
        for (int i = 0; i < REPS; i++) {
            t0 = cuzk_now_ms();
            CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, n, wins[w]));
            t[i] = cuzk_now_ms() - t0;
        }
        snprintf(name, sizeof name, "msm_g1_2^%u_c%u", kmsm, wins[w]);
        record(name, t);
        print_profile(m, 1);
    }
    {
        uint64_t *bits = xmalloc(CUZK_MSM_BITVEC_WORDS(n) * sizeof *bits);
        for (size_t i = 0; i < CUZK_MSM_BITVEC_WORDS(n); i++)
            bits[i] = test_rand64();
        cuzk_g1_jac r;
        CHECK_OK(cuzk_gpu_g1_batch_add(m, &r, bits, n));
        for (int i = 0; i < REPS; i++) {
            t0 = cuzk_now_ms();
            CHECK_OK(cuzk_gpu_g1_batch_add(m, &r, bits, n));
            t[i] = cuzk_now_ms() - t0;
        }
        snprintf(name, sizeof name, "batch_add_g1_2^%u_half", kmsm);
        record(name, t);
        free(bits);
    }
    CHECK_OK(cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_AUTO));
    bench_split(m, bases, n);
    cuzk_gpu_msm_free(m);
    cuzk_gpu_host_free(s);
    free(bases);

    bench_ntt(20);
    bench_ntt(24);
    bench_ntt(27);
    bench_h_bellman(20);
    bench_h_bellman(24);
    bench_h_bellman(27);
    bench_g2(20);

    printf("\n%-28s %12s\n", "benchmark", "median ms");
    for (int i = 0; i < nrows; i++)
        printf("%-28s %12.3f\n", rows[i].name, rows[i].ms);
    return test_finish();
}

/* --ntt-bench: bench_ntt and bench_h_bellman at each 2^K of ks (none: 20, 24, 27). */
static int run_ntt_bench(int nk, char **ks)
{
    static const unsigned def[3] = {20, 24, 27};
    const int n = nk > 0 ? nk : 3;
    if (n > 32) {
        fprintf(stderr, "test_gpu --ntt-bench: at most 32 sizes\n");
        return 2;
    }
    for (int i = 0; i < n; i++) {
        const unsigned k = nk > 0 ? (unsigned)atoi(ks[i]) : def[i];
        if (k < 1 || k > 28) {
            fprintf(stderr, "test_gpu --ntt-bench: K = %s not in 1..28\n", ks[i]);
            return 2;
        }
        bench_ntt(k);
        bench_h_bellman(k);
    }
    printf("\n%-28s %12s\n", "benchmark", "median ms");
    for (int i = 0; i < nrows; i++)
        printf("%-28s %12.3f\n", rows[i].name, rows[i].ms);
    return test_finish();
}

/* The same G1 MSM on the device with XYZZ and with the affine accumulation (mode), which
 * must agree (the XYZZ one is checked against the CPU elsewhere); prints both times (the
 * first affine call includes its buffer allocation). *ran: affine rounds ran. The context
 * is left with AUTO. */
static bool aff_vs_xyzz(cuzk_gpu_msm *m, const cuzk_fr *s, size_t n, cuzk_gpu_msm_acc mode,
                        const char *what, bool *ran)
{
    cuzk_g1_jac rx, ra;
    CHECK_OK(cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_XYZZ));
    const double t0 = cuzk_now_ms();
    const cuzk_err ex = cuzk_gpu_g1_msm_fr(m, &rx, s, n, 0);
    const double t1 = cuzk_now_ms();
    CHECK_OK(cuzk_gpu_msm_set_accumulation(m, mode));
    const cuzk_err ea = cuzk_gpu_g1_msm_fr(m, &ra, s, n, 0);
    const double t2 = cuzk_now_ms();
    *ran = cuzk_gpu_msm_accumulation_used(m) == CUZK_GPU_MSM_ACC_AFFINE;
    CHECK_OK(cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_AUTO));
    const bool ok = ex == CUZK_OK && ea == CUZK_OK && cuzk_g1_jac_eq(&rx, &ra);
    printf("affine%s %s n=%zu: %s, xyzz %.1f ms, affine %.1f ms (%s)\n",
           mode == CUZK_GPU_MSM_ACC_AFFINE_FULL ? "_full" : "", what, n,
           ok ? "same" : "DIFFERENT", t1 - t0, t2 - t1, *ran ? "rounds ran" : "fell back to xyzz");
    return ok;
}

/* --large's NTT and H part against the CPU (forward at 2^24 snarkjs and 2^26 bellman and
 * back; the H steps at 2^24). x, g, c hold 2^26 values. */
static void large_ntt_h(const unsigned ks[2], cuzk_fr *x, cuzk_fr *g, cuzk_fr *c, double t0)
{
    for (int i = 0; i < 2; i++) {
        const size_t n = (size_t)1 << ks[i];
        const cuzk_roots fam = i ? CUZK_ROOTS_BELLMAN : CUZK_ROOTS_SNARKJS;
        cuzk_domain *cd = NULL;
        CHECK_OK(cuzk_domain_new(&cd, ks[i], fam));
        if (!cd)
            continue;
        test_rand_frs(x, n);
        memcpy(c, x, n * sizeof *x);
        cuzk_ntt_forward(cd, c, 0);
        cuzk_gpu_domain *gd = NULL;
        CHECK_OK(cuzk_gpu_domain_new(&gd, 0, ks[i], fam));
        if (gd) {
            memcpy(g, x, n * sizeof *x);
            CHECK_OK(cuzk_gpu_ntt_forward(gd, g));
            CHECK(test_fr_count_diff(g, c, n) == 0);
            CHECK_OK(cuzk_gpu_ntt_inverse(gd, g));
            CHECK(test_fr_count_diff(g, x, n) == 0);
            cuzk_gpu_domain_free(gd);
            printf("large ntt 2^%u: ok so far (%lu failed) [%.0f ms]\n", ks[i], test_failed_,
                   cuzk_now_ms() - t0);
        }
        cuzk_domain_free(cd);
    }
    /* H at 2^24, both conventions: x = a, b, c (3 n values), CPU result in c */
    const unsigned kh = 24;
    const size_t n = (size_t)1 << kh;
    for (int f = 0; f < 2; f++) {
        const cuzk_roots fam = f ? CUZK_ROOTS_BELLMAN : CUZK_ROOTS_SNARKJS;
        cuzk_domain *cd = NULL;
        CHECK_OK(cuzk_domain_new(&cd, kh, fam));
        if (!cd)
            continue;
        test_rand_frs(x, 3 * n);
        memcpy(g, x, 3 * n * sizeof *x);
        CHECK_OK(f ? cuzk_h_bellman(cd, g, g + n, g + 2 * n, 0)
                   : cuzk_h_snarkjs(cd, g, g + n, g + 2 * n, 0));
        memcpy(c, g, n * sizeof *x);
        cuzk_gpu_domain *gd = NULL;
        CHECK_OK(cuzk_gpu_domain_new(&gd, 0, kh, fam));
        if (gd) {
            memcpy(g, x, n * sizeof *x);
            CHECK_OK(f ? cuzk_gpu_h_bellman(gd, g, x + n, x + 2 * n)
                       : cuzk_gpu_h_snarkjs(gd, g, x + n, x + 2 * n));
            size_t bad = test_fr_count_diff(g, c, n);
            if (bad)
                fprintf(stderr, "large h %s 2^%u: %zu of %zu differ\n", f ? "bellman" : "snarkjs",
                        kh, bad, n);
            CHECK(bad == 0);
            cuzk_gpu_domain_free(gd);
            printf("large h %s 2^%u: ok so far (%lu failed) [%.0f ms]\n",
                   f ? "bellman" : "snarkjs", kh, test_failed_, cuzk_now_ms() - t0);
        }
        cuzk_domain_free(cd);
    }
}

/* --large: the kernels at 2^24 and 2^26 against the CPU (minutes of CPU reference work, so
 * not in the default run): NTT forward/inverse in both families, G1 MSM of random scalars at
 * 2^24 - 1, 2^24 + 1 and 2^26 with the default accumulation (AUTO: XYZZ at 2^24, affine
 * rounds at 2^26), scalars from the device, edge scalars at 2^24, batch add of 2^26 points
 * with half the bits set. The batch-affine accumulation on the same random scalars and at
 * 2^24 on the edge sets, against the device's XYZZ result. */
static int run_large(void)
{
    double t0 = cuzk_now_ms();
    const unsigned ks[2] = {24, 26};
    const size_t nmax = ((size_t)1 << 26) + 1;
    cuzk_fr *x = xmalloc(nmax * sizeof *x), *g = xmalloc(nmax * sizeof *g);
    cuzk_fr *c = xmalloc(nmax * sizeof *c);
    large_ntt_h(ks, x, g, c, t0);
    cuzk_g1_affine *bases = make_bases(nmax);
    printf("large bases ready [%.0f ms]\n", cuzk_now_ms() - t0);
    cuzk_gpu_msm *m = NULL;
    CHECK_OK(cuzk_gpu_msm_new(&m, 0, bases, nmax));
    if (m) {
        const size_t sizes[3] = {((size_t)1 << 24) - 1, ((size_t)1 << 24) + 1, (size_t)1 << 26};
        for (int i = 0; i < 3; i++) {
            test_rand_frs(x, sizes[i]);
            CHECK(msm_matches(m, bases, x, sizes[i], 0, "large random"));
            bool ran;
            CHECK(aff_vs_xyzz(m, x, sizes[i], CUZK_GPU_MSM_ACC_AFFINE, "large random", &ran));
            CHECK(ran);
            printf("large msm n=%zu: ok so far (%lu failed) [%.0f ms]\n", sizes[i], test_failed_,
                   cuzk_now_ms() - t0);
        }
        /* the same 2^26 scalars from device memory (a domain slot) */
        cuzk_gpu_domain *gd = NULL;
        void *xd = NULL;
        cuzk_g1_jac rh, rd;
        CHECK_OK(cuzk_gpu_domain_new(&gd, 0, 26, CUZK_ROOTS_BELLMAN));
        if (gd) {
            CHECK_OK(cuzk_gpu_domain_load(gd, 1, x));
            CHECK_OK(cuzk_gpu_domain_slot_dev(gd, 1, &xd, NULL));
            CHECK_OK(cuzk_gpu_g1_msm_fr(m, &rh, x, sizes[2], 0));
            CHECK_OK(cuzk_gpu_g1_msm_fr_dev(m, &rd, xd, sizes[2], 0));
            CHECK(cuzk_g1_jac_eq(&rh, &rd));
            cuzk_gpu_domain_free(gd);
        }
        /* edge scalars at 2^24 */
        msm_edge_scalars(m, bases, x, (size_t)1 << 24);
        printf("large msm edges: ok so far (%lu failed) [%.0f ms]\n", test_failed_, cuzk_now_ms() - t0);
        /* the affine accumulation at 2^24 on the edge sets (the last one, mixed, is in x),
         * all scalars equal (one run a window), and rounds to the end (AFFINE_FULL) */
        {
            const size_t n24 = (size_t)1 << 24;
            bool ran;
            CHECK(aff_vs_xyzz(m, x, n24, CUZK_GPU_MSM_ACC_AFFINE, "large mixed edges", &ran));
            CHECK(aff_vs_xyzz(m, x, n24, CUZK_GPU_MSM_ACC_AFFINE_FULL, "large mixed edges", &ran));
            CHECK(ran);
            for (int set = 0; set < 4; set++) {
                cuzk_fr v;
                test_rand_fr(&v);
                for (size_t i = 0; i < n24; i++) {
                    if (set == 0)
                        cuzk_fr_set_zero(&x[i]);
                    else if (set == 1)
                        cuzk_fr_set_one(&x[i]);
                    else if (set == 2)
                        test_fr_minus(&x[i], 1);
                    else
                        x[i] = v;
                }
                static const char *const names[4] = {"large zeros", "large ones", "large r-1",
                                                     "large all equal"};
                CHECK(aff_vs_xyzz(m, x, n24, CUZK_GPU_MSM_ACC_AFFINE, names[set], &ran));
            }
            test_rand_frs(x, n24);
            CHECK(aff_vs_xyzz(m, x, n24, CUZK_GPU_MSM_ACC_AFFINE_FULL, "large random", &ran));
            CHECK(ran);
            printf("large msm affine: ok so far (%lu failed) [%.0f ms]\n", test_failed_,
                   cuzk_now_ms() - t0);
        }
        /* batch add of 2^26 points, half the bits set */
        const size_t nb = (size_t)1 << 26, words = CUZK_MSM_BITVEC_WORDS(nb);
        uint64_t *bits = xmalloc(words * sizeof *bits);
        for (size_t w = 0; w < words; w++)
            bits[w] = test_rand64();
        cuzk_g1_jac rg, rc;
        double tb = cuzk_now_ms();
        CHECK_OK(cuzk_gpu_g1_batch_add(m, &rg, bits, nb));
        double tg = cuzk_now_ms() - tb;
        CHECK_OK(cuzk_g1_batch_add(&rc, bases, nb, bits, 0));
        CHECK(cuzk_g1_jac_eq(&rg, &rc));
        printf("large batch_add 2^26 (half set): ok so far (%lu failed), gpu %.1f ms [%.0f ms]\n",
               test_failed_, tg, cuzk_now_ms() - t0);
        free(bits);
    }
    cuzk_gpu_msm_free(m);
    free(bases);
    free(x); free(g); free(c);
    return test_finish();
}

/* Streamed bases (cuzk_gpu_msm_new_streamed): every entry point chunk by chunk equals the
 * CPU, at sizes around the chunk (3008 bases, not a power of two) and at 2^20 + 1 (349
 * chunks), for G1 (dense from the host and from device memory, canonical, batch add, split
 * in its three scalar layouts) and G2; the errors of a resident context. */
#define STREAM_CHUNK 3008
static void test_streamed(const cuzk_g1_affine *bases, size_t nmax, const cuzk_g2_affine *b2,
                          size_t n2)
{
    cuzk_gpu_msm *m = NULL;
    CHECK_EQ_ERR(cuzk_gpu_msm_new_streamed(&m, 0, 3, bases, nmax, STREAM_CHUNK), CUZK_EINVAL);
    CHECK(m == NULL);
    CHECK_OK(cuzk_gpu_msm_new_streamed(&m, 0, 1, bases, nmax, 3000)); /* rounds up to 3008 */
    if (!m)
        return;
    CHECK(cuzk_gpu_msm_streamed(m));
    const size_t big = ((size_t)1 << 20) + 1 <= nmax ? ((size_t)1 << 20) + 1 : nmax;
    const size_t sizes[] = {1, 63, 64, STREAM_CHUNK - 1, STREAM_CHUNK, STREAM_CHUNK + 1,
                            2 * STREAM_CHUNK, 3 * STREAM_CHUNK + 5, 65537, big};
    const size_t nsz = sizeof sizes / sizeof sizes[0];
    cuzk_fr *s = xmalloc(big * sizeof *s);
    cuzk_gpu_domain *gd = NULL;
    CHECK_OK(cuzk_gpu_domain_new(&gd, 0, 20, CUZK_ROOTS_SNARKJS)); /* device scalars */
    for (size_t i = 0; i < nsz; i++) {
        const size_t n = sizes[i];
        test_rand_frs(s, n);
        CHECK(msm_matches(m, bases, s, n, 0, "streamed"));
        if (gd && n <= ((size_t)1 << 20)) {
            cuzk_fr *full = xmalloc(((size_t)1 << 20) * sizeof *full);
            memset(full, 0, ((size_t)1 << 20) * sizeof *full);
            memcpy(full, s, n * sizeof *s);
            void *xd = NULL;
            cuzk_g1_jac rd, rc;
            CHECK_OK(cuzk_gpu_domain_load(gd, 1, full));
            CHECK_OK(cuzk_gpu_domain_slot_dev(gd, 1, &xd, NULL));
            CHECK_OK(cuzk_gpu_g1_msm_fr_dev(m, &rd, xd, n, 0));
            CHECK_OK(cuzk_g1_msm_fr(&rc, NULL, bases, s, n, NULL));
            CHECK(cuzk_g1_jac_eq(&rd, &rc));
            free(full);
        }
    }
    msm_edge_scalars(m, bases, s, 3 * STREAM_CHUNK + 5);
    /* canonical scalars and the refusal of one >= 2^255 (in the second chunk) */
    msm_canonical(m, bases, s, 2 * STREAM_CHUNK + 7, nmax, STREAM_CHUNK + 9);
    /* batch add (random half, none, all) */
    uint64_t *bits = xmalloc(CUZK_MSM_BITVEC_WORDS(big) * sizeof *bits);
    for (size_t i = 0; i < nsz; i++)
        for (int mode = 0; mode < 3; mode++) {
            const size_t n = sizes[i];
            for (size_t w = 0; w < CUZK_MSM_BITVEC_WORDS(n); w++)
                bits[w] = mode == 0 ? test_rand64() : mode == 1 ? 0 : ~0ULL;
            cuzk_g1_jac rg, rc;
            CHECK_OK(cuzk_gpu_g1_batch_add(m, &rg, bits, n));
            CHECK_OK(cuzk_g1_batch_add(&rc, bases, n, bits, 0));
            CHECK(cuzk_g1_jac_eq(&rg, &rc));
        }
    free(bits);
    /* split, each scalar layout */
    split_target tg = {1, m, bases};
    for (size_t i = 0; i < nsz; i++) {
        test_rand_frs_filecoin(s, sizes[i]);
        CHECK(split_matches(&tg, s, sizes[i], (int)(i % 3), "streamed"));
    }
    for (int v = 0; v < 3; v++) {
        test_rand_frs_filecoin(s, big);
        CHECK(split_matches(&tg, s, big, v, "streamed, every layout"));
    }
    cuzk_gpu_msm_free(m);
    cuzk_gpu_domain_free(gd);
    printf("streamed g1: ok so far (%lu failed)\n", test_failed_);

    /* G2 */
    cuzk_gpu_msm *m2 = NULL;
    CHECK_OK(cuzk_gpu_msm_new_streamed(&m2, 0, 2, b2, n2, 1000)); /* 1024 a chunk */
    if (m2) {
        cuzk_g1_jac r1;
        CHECK_EQ_ERR(cuzk_gpu_g1_msm_fr(m2, &r1, s, 10, 0), CUZK_EINVAL); /* a G2 context */
        const size_t s2[] = {1, 1023, 1024, 1025, 4100, n2};
        for (size_t i = 0; i < sizeof s2 / sizeof s2[0]; i++) {
            test_rand_frs(s, s2[i]);
            CHECK(msm_matches_g2(m2, b2, s, s2[i], 0, "streamed"));
            test_rand_frs_filecoin(s, s2[i]);
            split_target t2 = {2, m2, b2};
            CHECK(split_matches(&t2, s, s2[i], (int)(i % 3), "streamed g2"));
        }
    }
    cuzk_gpu_msm_free(m2);
    free(s);
    printf("streamed g2: ok so far (%lu failed)\n", test_failed_);
}

int main(int argc, char **argv)
{
    test_init("test_gpu");
    test_gpu_require();
    cuzk_gpu_device_info info;
    if (cuzk_gpu_device_query(&info, 0) != CUZK_OK) {
        printf("SKIP: device 0 does not answer: %s\n", cuzk_error_detail());
        return 77;
    }
    printf("device 0: %s, sm_%d%d, %d SMs, %.1f GiB (%.1f free), %d device(s)\n", info.name,
           info.cc_major, info.cc_minor, info.sm_count, info.total_mem / 1073741824.0,
           info.free_mem / 1073741824.0, cuzk_gpu_device_count());
    if (argc > 1 && strcmp(argv[1], "--devices") == 0)
        return 0;
    if (argc > 1 && strcmp(argv[1], "--bench") == 0)
        return run_bench();
    if (argc > 1 && strcmp(argv[1], "--large") == 0)
        return run_large();
    if (argc > 1 && strcmp(argv[1], "--ntt") == 0) {
        test_ntt();
        test_h();
        test_h_bellman();
        test_h_host_ready();
        return test_finish();
    }
    if (argc > 1 && strcmp(argv[1], "--ntt-bench") == 0)
        return run_ntt_bench(argc - 2, argv + 2);

    double t0 = cuzk_now_ms();
    test_errors();
    test_field();
    printf("[%.0f ms]\n", cuzk_now_ms() - t0);
    test_ntt();
    printf("[%.0f ms]\n", cuzk_now_ms() - t0);
    test_h();
    printf("[%.0f ms]\n", cuzk_now_ms() - t0);
    const size_t nmax = ((size_t)1 << MAX_LOG) + 1;
    cuzk_g1_affine *bases = make_bases(nmax);
    printf("bases ready [%.0f ms]\n", cuzk_now_ms() - t0);
    cuzk_gpu_msm *m = NULL;
    CHECK_OK(cuzk_gpu_msm_new(&m, 0, bases, nmax));
    if (m) {
        test_msm(m, bases, nmax);
        printf("[%.0f ms]\n", cuzk_now_ms() - t0);
        test_batch_add(m, bases, nmax);
        printf("[%.0f ms]\n", cuzk_now_ms() - t0);
    }
    printf("[%.0f ms]\n", cuzk_now_ms() - t0);
    test_h_bellman();
    test_h_host_ready();
    printf("[%.0f ms]\n", cuzk_now_ms() - t0);
    if (m) {
        split_target tg = {1, m, bases};
        test_split(&tg, nmax, MAX_LOG);
        printf("[%.0f ms]\n", cuzk_now_ms() - t0);
    }
    /* the G1 MSM checks again with the batch-affine accumulation (AFFINE and AFFINE_FULL in
     * turn) */
    if (m) {
        g_affine = true;
        test_msm(m, bases, nmax);
        split_target tg = {1, m, bases};
        test_split(&tg, nmax, MAX_LOG);
        g_affine = false;
        test_affine_cases(m, bases, nmax);
        printf("affine pass: %lu of %lu MSMs ran affine rounds [%.0f ms]\n", g_aff_used,
               g_aff_calls, cuzk_now_ms() - t0);
        CHECK(g_aff_used > g_aff_calls / 3);
        CHECK_OK(cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_AUTO));
    }
    /* and on precomputed multiples: the window chosen for nmax (the MSM and split checks,
     * default accumulation), then window 8 (the MSM checks with the batch-affine
     * accumulation: the model takes the multiples down to small sizes) */
    if (m) {
        CHECK_EQ_ERR(cuzk_gpu_msm_precompute(NULL, 0), CUZK_EINVAL);
        CHECK_EQ_ERR(cuzk_gpu_msm_precompute(m, CUZK_GPU_MSM_WINDOW_MAX + 1), CUZK_EINVAL);
        CHECK(!cuzk_gpu_msm_precomputed_used(NULL));
        g_pre = true;
        CHECK_OK(cuzk_gpu_msm_precompute(m, 0));
        test_msm(m, bases, nmax);
        split_target tg = {1, m, bases};
        test_split(&tg, nmax, MAX_LOG);
        printf("precomputed pass (window %u): %lu of %lu MSMs used the multiples [%.0f ms]\n",
               cuzk_gpu_msm_window_precomputed(nmax), g_pre_used, g_pre_calls,
               cuzk_now_ms() - t0);
        CHECK(g_pre_used > 0);
        const unsigned long used1 = g_pre_used, calls1 = g_pre_calls;
        CHECK_OK(cuzk_gpu_msm_precompute(m, 8));
        g_affine = true;
        test_msm(m, bases, nmax);
        g_affine = false;
        printf("precomputed pass (window 8, affine): %lu of %lu MSMs used the multiples "
               "[%.0f ms]\n", g_pre_used - used1, g_pre_calls - calls1, cuzk_now_ms() - t0);
        CHECK(g_pre_used > used1);
        g_pre = false;
        CHECK_OK(cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_AUTO));
    }
    cuzk_gpu_msm_free(m);

    /* G2 last: MSM, batch add, split on 2^18 + 1 resident G2 bases */
    const size_t n2 = ((size_t)1 << G2_MAX_LOG) + 1;
    cuzk_g2_affine *b2 = make_bases_g2(n2);
    printf("g2 bases ready [%.0f ms]\n", cuzk_now_ms() - t0);
    cuzk_gpu_msm *m2 = NULL;
    CHECK_OK(cuzk_gpu_msm_new_g2(&m2, 0, b2, n2));
    if (m2) {
        test_msm_g2(m2, b2, n2);
        printf("[%.0f ms]\n", cuzk_now_ms() - t0);
        split_target tg = {2, m2, b2};
        test_split(&tg, n2, G2_MAX_LOG);
        printf("[%.0f ms]\n", cuzk_now_ms() - t0);
        /* again on precomputed multiples (window 8: most sizes use them) */
        CHECK_OK(cuzk_gpu_msm_precompute(m2, 8));
        g_pre = true;
        const unsigned long used0 = g_pre_used;
        test_msm_g2(m2, b2, n2);
        test_split(&tg, n2, G2_MAX_LOG);
        printf("g2 precomputed pass (window 8): %lu MSMs used the multiples [%.0f ms]\n",
               g_pre_used - used0, cuzk_now_ms() - t0);
        CHECK(g_pre_used > used0);
        g_pre = false;
    }
    cuzk_gpu_msm_free(m2);
    /* streamed bases last (the same bases, read from host memory chunk by chunk) */
    test_streamed(bases, nmax, b2, n2);
    printf("[%.0f ms]\n", cuzk_now_ms() - t0);
    free(bases);
    free(b2);
    return test_finish();
}
