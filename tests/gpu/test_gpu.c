/*
 * GPU backend against the CPU on fresh random inputs (tests/test.h prints the seed).
 *   test_gpu          correctness: field ops, NTT (both root families, 2^1..2^22), the
 *                     snarkjs H step, G1 MSM (sizes 1, 2, 3, 2^k-1, 2^k, 2^k+1 up to 2^22;
 *                     zero / one / r-1 / small scalars; identity, repeated and opposite
 *                     bases; every window), batch_add, error paths.
 *   test_gpu --bench  timings (MSM 2^20, 2^22, 2^24 with bases resident; NTT 2^20, 2^24,
 *                     2^27 with data resident; medians of 3 after a warm-up), a table and
 *                     JSON lines, plus a CPU check of the 2^24 MSM.
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
#include "util/parallel.h"

#define MAX_LOG 22

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

#define CHECK_OK(expr)                                                                  \
    do {                                                                                \
        cuzk_err e_ = (expr);                                                           \
        if (e_ != CUZK_OK)                                                              \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #expr,           \
                    cuzk_errname(e_), cuzk_error_detail());                             \
        CHECK(e_ == CUZK_OK);                                                           \
    } while (0)

/* ---- random inputs ---- */
static void fr_minus(cuzk_fr *r, uint64_t k) /* r - k as a field element (Montgomery) */
{
    cuzk_fr t;
    cuzk_fr_set_u64(&t, k);
    cuzk_fr_neg(r, &t);
}

static void rand_frs(cuzk_fr *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        test_rand_fr(&x[i]);
}

/* Bases: b[i] = R[i mod 1024] + Q[i / 1024] with R, Q random multiples of G (distinct,
 * uniform-looking points, made fast), then edge cases written over some positions:
 * infinity, repeats of the previous point, and the negative of the previous point. */
typedef struct {
    cuzk_g1_affine *out;
    const cuzk_g1_affine *R, *Q;
} gen_ctx;

static void gen_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    gen_ctx *g = vctx;
    cuzk_g1_jac *tmp = xmalloc((e - b) * sizeof *tmp);
    for (size_t i = b; i < e; i++) {
        cuzk_g1_jac_from_affine(&tmp[i - b], &g->Q[i / 1024]);
        cuzk_g1_jac_add_affine_var(&tmp[i - b], &tmp[i - b], &g->R[i % 1024]);
    }
    cuzk_g1_batch_to_affine(g->out + b, tmp, e - b);
    free(tmp);
}

typedef struct {
    cuzk_g1_jac *out;
    const uint64_t *k;
} mul_ctx;

static void mul_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    mul_ctx *m = vctx;
    cuzk_g1_affine g;
    cuzk_g1_jac gj;
    cuzk_g1_generator(&g);
    cuzk_g1_jac_from_affine(&gj, &g);
    for (size_t i = b; i < e; i++)
        cuzk_g1_mul_var(&m->out[i], &gj, m->k + 4 * i, 255);
}

static void random_points(cuzk_g1_affine *out, size_t n)
{
    uint64_t *k = xmalloc(n * 4 * sizeof *k);
    for (size_t i = 0; i < 4 * n; i++)
        k[i] = test_rand64() & (i % 4 == 3 ? (1ULL << 63) - 1 : ~0ULL);
    cuzk_g1_jac *j = xmalloc(n * sizeof *j);
    mul_ctx m = {j, k};
    cuzk_parallel_for(n, 16, 0, mul_range, &m);
    cuzk_g1_batch_to_affine(out, j, n);
    free(j);
    free(k);
}

static cuzk_g1_affine *make_bases(size_t n)
{
    size_t nq = n / 1024 + 1;
    cuzk_g1_affine *R = xmalloc(1024 * sizeof *R), *Q = xmalloc(nq * sizeof *Q);
    random_points(R, 1024);
    random_points(Q, nq);
    cuzk_g1_affine *b = xmalloc(n * sizeof *b);
    gen_ctx g = {b, R, Q};
    cuzk_parallel_for(n, 4096, 0, gen_range, &g);
    free(R);
    free(Q);
    for (size_t i = 1; i < n; i++) {
        if (i == 3 || i % 65537 == 0)
            cuzk_g1_affine_set_inf(&b[i]);
        else if (i == 4 || i % 4099 == 0)
            b[i] = b[i - 1];
        else if (i == 6 || i % 4111 == 0)
            cuzk_g1_affine_neg(&b[i], &b[i - 1]);
    }
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
    rand_frs(a, n);
    rand_frs(b, n);
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
            case 2: fr_minus(fs[s], 1); cuzk_fp_neg(ps[s], &one); break;
            default: fr_minus(fs[s], 2); cuzk_fp_dbl(&one, &one); cuzk_fp_neg(ps[s], &one); break;
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
static size_t count_diff(const cuzk_fr *x, const cuzk_fr *y, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !cuzk_fr_eq(&x[i], &y[i]);
    return bad;
}

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
            rand_frs(x, n);
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
            size_t bad = count_diff(g, c, n);
            if (bad)
                fprintf(stderr, "ntt forward 2^%u family %d: %zu of %zu differ\n", k,
                        (int)fams[f], bad, n);
            CHECK(bad == 0);
            /* inverse of a fresh vector, then back */
            rand_frs(x, n);
            memcpy(g, x, n * sizeof *x);
            memcpy(c, x, n * sizeof *x);
            CHECK_OK(cuzk_gpu_ntt_inverse(gd, g));
            cuzk_ntt_inverse(cd, c, 0);
            bad = count_diff(g, c, n);
            if (bad)
                fprintf(stderr, "ntt inverse 2^%u family %d: %zu of %zu differ\n", k,
                        (int)fams[f], bad, n);
            CHECK(bad == 0);
            CHECK_OK(cuzk_gpu_ntt_forward(gd, g));
            CHECK(count_diff(g, x, n) == 0);
            cuzk_gpu_domain_free(gd);
            cuzk_domain_free(cd);
        }
    }
    printf("ntt: ok so far (%lu failed)\n", test_failed_);
    free(x); free(g); free(c);
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
        CHECK_OK(cuzk_gpu_domain_new(&gd, 0, k, CUZK_ROOTS_SNARKJS));
        CHECK_OK(cuzk_domain_new(&cd, k, CUZK_ROOTS_SNARKJS));
        if (!gd || !cd) {
            cuzk_gpu_domain_free(gd);
            cuzk_domain_free(cd);
            continue;
        }
        rand_frs(a, n);
        rand_frs(b, n);
        rand_frs(c, n);
        memcpy(ga, a, n * sizeof *a);
        memcpy(b0, b, n * sizeof *b);
        memcpy(c0, c, n * sizeof *c);
        CHECK_OK(cuzk_gpu_h_snarkjs(gd, ga, b0, c0));
        CHECK(count_diff(b0, b, n) == 0 && count_diff(c0, c, n) == 0);
        CHECK_OK(cuzk_h_snarkjs(cd, a, b, c, 0));
        size_t bad = count_diff(ga, a, n);
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
static bool msm_matches(cuzk_gpu_msm *m, const cuzk_g1_affine *bases, const cuzk_fr *s,
                        size_t n, unsigned window, const char *what)
{
    cuzk_g1_jac rg, rc;
    cuzk_err eg = cuzk_gpu_g1_msm_fr(m, &rg, s, n, window);
    if (eg != CUZK_OK)
        fprintf(stderr, "gpu msm (%s, n=%zu): %s: %s\n", what, n, cuzk_errname(eg),
                cuzk_error_detail());
    cuzk_err ec = cuzk_g1_msm_fr(&rc, NULL, bases, s, n, NULL);
    bool ok = eg == CUZK_OK && ec == CUZK_OK && cuzk_g1_jac_eq(&rg, &rc);
    if (!ok)
        fprintf(stderr, "msm %s n=%zu window=%u: GPU != CPU\n", what, n, window);
    return ok;
}

static void test_msm(cuzk_gpu_msm *m, const cuzk_g1_affine *bases, size_t nmax)
{
    cuzk_fr *s = xmalloc(nmax * sizeof *s);
    rand_frs(s, nmax);
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
        rand_frs(s, sizes[i]);
        CHECK(msm_matches(m, bases, s, sizes[i], 0, "random"));
    }
    printf("msm sizes: ok so far (%lu failed)\n", test_failed_);

    /* every window at one size */
    rand_frs(s, 5000);
    for (unsigned w = 1; w <= CUZK_GPU_MSM_WINDOW_MAX; w++)
        CHECK(msm_matches(m, bases, s, 5000, w, "window"));

    /* edge scalars */
    const size_t ne[2] = {((size_t)1 << 16) + 1, (size_t)1 << 20};
    for (int t = 0; t < 2; t++) {
        size_t n = ne[t] <= nmax ? ne[t] : nmax;
        cuzk_g1_jac r;
        for (size_t i = 0; i < n; i++)
            cuzk_fr_set_zero(&s[i]);
        CHECK(msm_matches(m, bases, s, n, 0, "zeros"));
        CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, n, 0));
        CHECK(cuzk_g1_jac_is_inf(&r));
        for (size_t i = 0; i < n; i++)
            cuzk_fr_set_one(&s[i]);
        CHECK(msm_matches(m, bases, s, n, 0, "ones"));
        for (size_t i = 0; i < n; i++)
            fr_minus(&s[i], 1);
        CHECK(msm_matches(m, bases, s, n, 0, "r-1"));
        for (size_t i = 0; i < n; i++) { /* small values, r-1, r-2 and random mixed */
            uint64_t v = test_rand64() % 8;
            if (v < 4)
                cuzk_fr_set_u64(&s[i], v);
            else if (v == 4)
                fr_minus(&s[i], 1);
            else if (v == 5)
                fr_minus(&s[i], 2);
            else
                test_rand_fr(&s[i]);
        }
        s[5] = s[4]; /* bases 5 and 6 are P and -P: equal scalars cancel */
        CHECK(msm_matches(m, bases, s, n, 0, "mixed"));
    }

    /* canonical scalars, and the >= 2^255 refusal */
    {
        size_t n = ((size_t)1 << 18) + 1 <= nmax ? ((size_t)1 << 18) + 1 : nmax;
        rand_frs(s, n);
        cuzk_msm_scalar *cs = xmalloc(n * sizeof *cs);
        cuzk_msm_scalars_from_fr(cs, s, n, 0);
        cuzk_g1_jac rg, rc;
        CHECK_OK(cuzk_gpu_g1_msm(m, &rg, cs, n, 0));
        CHECK_OK(cuzk_g1_msm(&rc, bases, cs, n, NULL));
        CHECK(cuzk_g1_jac_eq(&rg, &rc));
        cs[n / 2].l[3] |= 1ULL << 63;
        CHECK_EQ_ERR(cuzk_gpu_g1_msm(m, &rg, cs, n, 0), CUZK_EINVAL);
        CHECK(cuzk_g1_jac_is_inf(&rg));
        CHECK_EQ_ERR(cuzk_gpu_g1_msm(m, &rg, cs, nmax + 1, 0), CUZK_ESIZE);
        free(cs);
        CHECK(msm_matches(m, bases, s, 1000, 0, "after an error"));
    }
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

static void test_errors(void)
{
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

/* ---- benchmarks ---- */
static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define REPS 3
typedef struct {
    char name[64];
    double ms;
} bench_row;
static bench_row rows[64];
static int nrows;

static void record(const char *name, double *t)
{
    qsort(t, REPS, sizeof *t, cmp_d);
    snprintf(rows[nrows].name, sizeof rows[nrows].name, "%s", name);
    rows[nrows++].ms = t[REPS / 2];
    printf("{\"bench\": \"%s\", \"median_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f}\n", name,
           t[REPS / 2], t[0], t[REPS - 1]);
    fflush(stdout);
}

static void bench_ntt(unsigned k, const char *elog)
{
    if (elog)
        setenv("CUZK_GPU_NTT_ELOG", elog, 1);
    else
        unsetenv("CUZK_GPU_NTT_ELOG");
    const size_t n = (size_t)1 << k;
    cuzk_gpu_domain *d = NULL;
    cuzk_fr *x = NULL;
    if (cuzk_gpu_host_alloc((void **)&x, n * sizeof *x) != CUZK_OK ||
        cuzk_gpu_domain_new(&d, 0, k, CUZK_ROOTS_SNARKJS) != CUZK_OK) {
        fprintf(stderr, "bench ntt 2^%u: %s\n", k, cuzk_error_detail());
        test_failed_++;
        cuzk_gpu_host_free(x);
        return;
    }
    rand_frs(x, n < 4096 ? n : 4096);
    for (size_t i = 4096; i < n; i++) /* cheap fill, not zeros */
        cuzk_fr_add(&x[i], &x[i - 4096], &x[i % 4096]);
    for (unsigned s = 0; s < 3; s++)
        CHECK_OK(cuzk_gpu_domain_load(d, s, x));
    double t[REPS];
    char name[64];
    const char *tag = elog ? elog : "def";
    CHECK_OK(cuzk_gpu_domain_ntt(d, 0, false));
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ms();
        CHECK_OK(cuzk_gpu_domain_ntt(d, 0, false));
        t[r] = now_ms() - t0;
    }
    snprintf(name, sizeof name, "ntt_fwd_2^%u_elog%s", k, tag);
    record(name, t);
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ms();
        CHECK_OK(cuzk_gpu_domain_ntt(d, 0, true));
        t[r] = now_ms() - t0;
    }
    snprintf(name, sizeof name, "ntt_inv_2^%u_elog%s", k, tag);
    record(name, t);
    if (!elog) {
        CHECK_OK(cuzk_gpu_domain_h_snarkjs(d));
        for (int r = 0; r < REPS; r++) {
            double t0 = now_ms();
            CHECK_OK(cuzk_gpu_domain_h_snarkjs(d));
            t[r] = now_ms() - t0;
        }
        snprintf(name, sizeof name, "h_snarkjs_2^%u", k);
        record(name, t);
    }
    cuzk_gpu_domain_free(d);
    cuzk_gpu_host_free(x);
}

static int run_bench(void)
{
    const unsigned kmsm = 24;
    const size_t n = (size_t)1 << kmsm;
    double t0 = now_ms();
    cuzk_g1_affine *bases = make_bases(n);
    printf("bases: 2^%u in %.0f ms\n", kmsm, now_ms() - t0);
    cuzk_fr *s = NULL;
    if (cuzk_gpu_host_alloc((void **)&s, n * sizeof *s) != CUZK_OK) {
        fprintf(stderr, "%s\n", cuzk_error_detail());
        return 1;
    }
    rand_frs(s, n);
    cuzk_gpu_msm *m = NULL;
    t0 = now_ms();
    CHECK_OK(cuzk_gpu_msm_new(&m, 0, bases, n));
    printf("upload of 2^%u bases: %.0f ms\n", kmsm, now_ms() - t0);
    if (!m)
        return test_finish();
    /* correctness at 2^24 */
    CHECK(msm_matches(m, bases, s, n, 0, "bench 2^24"));
    double t[REPS];
    char name[64];
    for (unsigned k = 20; k <= kmsm; k += 2) {
        cuzk_g1_jac r;
        CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, (size_t)1 << k, 0));
        for (int i = 0; i < REPS; i++) {
            t0 = now_ms();
            CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, (size_t)1 << k, 0));
            t[i] = now_ms() - t0;
        }
        snprintf(name, sizeof name, "msm_g1_2^%u_c%u", k, cuzk_gpu_msm_window((size_t)1 << k));
        record(name, t);
    }
    const unsigned wins[] = {16, 18, 21, 22};
    for (size_t w = 0; w < sizeof wins / sizeof wins[0]; w++) {
        cuzk_g1_jac r;
        CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, n, wins[w]));
        for (int i = 0; i < REPS; i++) {
            t0 = now_ms();
            CHECK_OK(cuzk_gpu_g1_msm_fr(m, &r, s, n, wins[w]));
            t[i] = now_ms() - t0;
        }
        snprintf(name, sizeof name, "msm_g1_2^%u_c%u", kmsm, wins[w]);
        record(name, t);
    }
    {
        uint64_t *bits = xmalloc(CUZK_MSM_BITVEC_WORDS(n) * sizeof *bits);
        for (size_t i = 0; i < CUZK_MSM_BITVEC_WORDS(n); i++)
            bits[i] = test_rand64();
        cuzk_g1_jac r;
        CHECK_OK(cuzk_gpu_g1_batch_add(m, &r, bits, n));
        for (int i = 0; i < REPS; i++) {
            t0 = now_ms();
            CHECK_OK(cuzk_gpu_g1_batch_add(m, &r, bits, n));
            t[i] = now_ms() - t0;
        }
        snprintf(name, sizeof name, "batch_add_g1_2^%u_half", kmsm);
        record(name, t);
        free(bits);
    }
    cuzk_gpu_msm_free(m);
    cuzk_gpu_host_free(s);
    free(bases);

    bench_ntt(20, NULL);
    bench_ntt(24, NULL);
    bench_ntt(27, NULL);
    bench_ntt(27, "10");
    bench_ntt(27, "12");

    printf("\n%-28s %12s\n", "benchmark", "median ms");
    for (int i = 0; i < nrows; i++)
        printf("%-28s %12.3f\n", rows[i].name, rows[i].ms);
    return test_finish();
}

int main(int argc, char **argv)
{
    test_init("test_gpu");
    if (!cuzk_gpu_available()) {
        printf("SKIP: no usable GPU: %s\n", cuzk_error_detail());
        return 77;
    }
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

    double t0 = now_ms();
    test_errors();
    test_field();
    printf("[%.0f ms]\n", now_ms() - t0);
    test_ntt();
    printf("[%.0f ms]\n", now_ms() - t0);
    test_h();
    printf("[%.0f ms]\n", now_ms() - t0);
    const size_t nmax = ((size_t)1 << MAX_LOG) + 1;
    cuzk_g1_affine *bases = make_bases(nmax);
    printf("bases ready [%.0f ms]\n", now_ms() - t0);
    cuzk_gpu_msm *m = NULL;
    CHECK_OK(cuzk_gpu_msm_new(&m, 0, bases, nmax));
    if (m) {
        test_msm(m, bases, nmax);
        printf("[%.0f ms]\n", now_ms() - t0);
        test_batch_add(m, bases, nmax);
        printf("[%.0f ms]\n", now_ms() - t0);
    }
    cuzk_gpu_msm_free(m);
    free(bases);
    return test_finish();
}
