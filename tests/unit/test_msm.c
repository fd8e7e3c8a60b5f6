/* SPDX-License-Identifier: Apache-2.0 */
/* MSM tests: Pippenger (G1, G2), signed digits, the 0/1/significant split and its pieces,
 * all against a naive sum of scalar multiplications. */
#include <gmp.h>

#include "cuzk/ec.h"
#include "cuzk/msm.h"
#include "msm/msm_ifma.h"
#include "msm/msm_internal.h"
#include "test.h"
#include "test_points.h"
#include "util/parallel.h"

/* ---- G1 / G2 helpers written once through a macro ---- */

#define DEFINE_HELPERS(G, AFF, JAC)                                                        \
    /* r = sum s_i * P_i by scalar multiplication (0 and 1 short-cut). */                   \
    static void G##_naive(JAC *r, const AFF *bases, const cuzk_msm_scalar *s, size_t n)    \
    {                                                                                      \
        cuzk_##G##_jac_set_inf(r);                                                         \
        for (size_t i = 0; i < n; i++) {                                                   \
            const uint64_t *l = s[i].l;                                                    \
            if ((l[0] | l[1] | l[2] | l[3]) == 0)                                          \
                continue;                                                                  \
            JAC p, t;                                                                      \
            cuzk_##G##_jac_from_affine(&p, &bases[i]);                                     \
            if (l[0] == 1 && (l[1] | l[2] | l[3]) == 0)                                    \
                t = p;                                                                     \
            else                                                                           \
                cuzk_##G##_mul_var(&t, &p, l, 256);                                        \
            cuzk_##G##_jac_add_var(r, r, &t);                                              \
        }                                                                                  \
    }                                                                                      \
    /* Checks every entry point (canonical, Montgomery, split) against the naive sum. */    \
    static void G##_check_all(const AFF *bases, const cuzk_fr *fr, size_t n,               \
                              const cuzk_msm_opts *opts)                                   \
    {                                                                                      \
        cuzk_msm_scalar *s = malloc((n ? n : 1) * sizeof(*s));                             \
        cuzk_msm_scalars_from_fr(s, fr, n, 1);                                             \
        JAC want, got;                                                                     \
        G##_naive(&want, bases, s, n);                                                     \
        CHECK_EQ_ERR(cuzk_##G##_msm(&got, bases, s, n, opts), CUZK_OK);                    \
        CHECK(cuzk_##G##_jac_eq(&got, &want));                                             \
        CHECK_EQ_ERR(cuzk_##G##_msm_fr(&got, NULL, bases, fr, n, opts), CUZK_OK);          \
        CHECK(cuzk_##G##_jac_eq(&got, &want));                                             \
        cuzk_msm_counts cnt;                                                               \
        CHECK_EQ_ERR(cuzk_##G##_msm_auto_fr(&got, &cnt, bases, fr, n, opts), CUZK_OK);     \
        CHECK(cuzk_##G##_jac_eq(&got, &want));                                             \
        CHECK(cnt.n == n && cnt.n_zero + cnt.n_one + cnt.n_sig == n);                      \
        CHECK_EQ_ERR(cuzk_##G##_msm_auto(&got, NULL, bases, s, n, opts), CUZK_OK);         \
        CHECK(cuzk_##G##_jac_eq(&got, &want));                                             \
        free(s);                                                                           \
    }

DEFINE_HELPERS(g1, cuzk_g1_affine, cuzk_g1_jac)
DEFINE_HELPERS(g2, cuzk_g2_affine, cuzk_g2_jac)

/* Scalar kinds for mixed inputs. */
enum { K_ZERO, K_ONE, K_RAND, K_RMINUS1, K_SMALL };

static void set_scalar(cuzk_fr *s, int kind)
{
    switch (kind) {
    case K_ZERO: cuzk_fr_set_zero(s); break;
    case K_ONE: cuzk_fr_set_one(s); break;
    case K_RMINUS1: cuzk_fr_set_one(s); cuzk_fr_neg(s, s); break;
    case K_SMALL: cuzk_fr_set_u64(s, test_rand64() % 70); break;
    default: test_rand_fr(s); break;
    }
}

/* ---- signed digits ---- */

/* acc = sum_k digit_k 2^(kc) over the nwin signed digits of the nl-limb scalar s (c bits);
 * returns whether every digit lies in [-2^(c-1), 2^(c-1)]. */
static int digits_sum(mpz_t acc, const uint64_t *s, unsigned nl, unsigned nwin, unsigned c)
{
    int range_ok = 1;
    mpz_set_ui(acc, 0);
    for (unsigned k = nwin; k-- > 0;) {
        int32_t d = msm_digit_n(s, nl, k, c);
        if (d > (1 << (c - 1)) || d < -(1 << (c - 1)))
            range_ok = 0;
        mpz_mul_2exp(acc, acc, c);
        if (d >= 0)
            mpz_add_ui(acc, acc, (unsigned long)d);
        else
            mpz_sub_ui(acc, acc, (unsigned long)-d);
    }
    return range_ok;
}

static void test_digits(void)
{
    mpz_t s, acc, t;
    mpz_inits(s, acc, t, NULL);
    unsigned long iters = test_iters(200);
    for (unsigned long it = 0; it < iters; it++) {
        cuzk_msm_scalar sc;
        for (int i = 0; i < 4; i++)
            sc.l[i] = test_rand64();
        switch (it % 4) {
        case 0: sc.l[3] &= (1ULL << 63) - 1; break;          /* below 2^255 */
        case 1: sc.l[3] = (1ULL << 63) - 1; sc.l[2] = sc.l[1] = sc.l[0] = ~0ULL; break;
        case 2: sc.l[3] >>= 1; sc.l[0] |= 0x8000000000000000ULL; break;
        default: { cuzk_fr f; test_rand_fr(&f); cuzk_fr_to_limbs(sc.l, &f); } break;
        }
        if (it == 1)
            memset(&sc, 0, sizeof(sc));
        mpz_import(s, 4, -1, 8, 0, 0, sc.l);
        for (unsigned c = 1; c <= CUZK_MSM_WINDOW_MAX; c++) {
            CHECK(digits_sum(acc, sc.l, 4, (256 + c - 1) / c, c));
            CHECK(mpz_cmp(acc, s) == 0);
            CHECK(msm_digit(sc.l, c % ((256 + c - 1) / c), c) ==
                  msm_digit_n(sc.l, 4, c % ((256 + c - 1) / c), c));
        }
    }
    mpz_clears(s, acc, t, NULL);
}

/* ---- G1 ---- */

static void test_g1_sizes(void)
{
    static const size_t sizes[] = {0, 1, 2, 3, 7, 64, 100, 1000, 4097};
    size_t nmax = 4097;
    cuzk_g1_affine *b = malloc(nmax * sizeof(*b));
    cuzk_fr *s = malloc(nmax * sizeof(*s));
    test_g1_rand_points(b, nmax);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        test_rand_frs(s, n);
        g1_check_all(b, s, n, NULL);
    }
    free(b);
    free(s);
}

static void test_g1_windows_threads(void)
{
    size_t n = 300;
    cuzk_g1_affine *b = malloc(n * sizeof(*b));
    cuzk_fr *s = malloc(n * sizeof(*s));
    cuzk_msm_scalar *cs = malloc(n * sizeof(*cs));
    test_g1_rand_points(b, n);
    for (size_t i = 0; i < n; i++)
        set_scalar(&s[i], (int)(test_rand64() % 5));
    cuzk_msm_scalars_from_fr(cs, s, n, 0);
    cuzk_g1_jac want, got;
    g1_naive(&want, b, cs, n);
    /* every window size, single and multi-threaded (c = 1 has one bucket and 256 windows) */
    for (unsigned c = 1; c <= 16; c++) {
        for (unsigned t = 1; t <= 3; t += 2) {
            cuzk_msm_opts o = {.nthreads = t, .window = c};
            CHECK_EQ_ERR(cuzk_g1_msm(&got, b, cs, n, &o), CUZK_OK);
            CHECK(cuzk_g1_jac_eq(&got, &want));
        }
    }
    /* thread counts with the automatic window, also more threads than points */
    for (unsigned t = 1; t <= 9; t++) {
        cuzk_msm_opts o = {.nthreads = t};
        CHECK_EQ_ERR(cuzk_g1_msm(&got, b, cs, n, &o), CUZK_OK);
        CHECK(cuzk_g1_jac_eq(&got, &want));
        CHECK_EQ_ERR(cuzk_g1_msm(&got, b, cs, 5, &o), CUZK_OK);
        cuzk_g1_jac w5;
        g1_naive(&w5, b, cs, 5);
        CHECK(cuzk_g1_jac_eq(&got, &w5));
    }
    free(b);
    free(s);
    free(cs);
}

/* Bases and scalars that drive buckets into their exceptional cases: the same point
 * added twice (doubling), P then -P (cancellation to infinity), infinity bases, equal
 * partial sums in the running-sum pass. */
static void test_g1_edge(void)
{
    size_t n = 256;
    cuzk_g1_affine *b = malloc(n * sizeof(*b));
    cuzk_fr *s = malloc(n * sizeof(*s));
    cuzk_msm_scalar *cs = malloc(n * sizeof(*cs));
    cuzk_g1_affine p[3];
    test_g1_rand_points(p, 3);

    /* all-zero scalars: infinity */
    test_g1_rand_points(b, n);
    for (size_t i = 0; i < n; i++)
        cuzk_fr_set_zero(&s[i]);
    cuzk_g1_jac got, want;
    cuzk_msm_counts cnt;
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&got, NULL, b, s, n, NULL), CUZK_OK);
    CHECK(cuzk_g1_jac_is_inf(&got));
    CHECK_EQ_ERR(cuzk_g1_msm_auto_fr(&got, &cnt, b, s, n, NULL), CUZK_OK);
    CHECK(cuzk_g1_jac_is_inf(&got));
    CHECK(cnt.n_zero == n && cnt.n_one == 0 && cnt.n_sig == 0);

    /* all-one scalars: the plain sum; r-1: its negation */
    for (size_t i = 0; i < n; i++)
        set_scalar(&s[i], K_ONE);
    g1_check_all(b, s, n, NULL);
    cuzk_g1_jac sum;
    cuzk_g1_jac_set_inf(&sum);
    for (size_t i = 0; i < n; i++)
        cuzk_g1_jac_add_affine_var(&sum, &sum, &b[i]);
    CHECK_EQ_ERR(cuzk_g1_msm_auto_fr(&got, &cnt, b, s, n, NULL), CUZK_OK);
    CHECK(cuzk_g1_jac_eq(&got, &sum) && cnt.n_one == n);
    for (size_t i = 0; i < n; i++)
        set_scalar(&s[i], K_RMINUS1);
    g1_check_all(b, s, n, NULL);
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&got, NULL, b, s, n, NULL), CUZK_OK);
    cuzk_g1_jac_neg(&want, &sum);
    CHECK(cuzk_g1_jac_eq(&got, &want));

    /* repeated points and P next to -P with scalars from a small set, for several windows */
    unsigned long iters = test_iters(6);
    for (unsigned long it = 0; it < iters; it++) {
        cuzk_g1_affine negp;
        for (size_t i = 0; i < n; i++) {
            unsigned x = (unsigned)(test_rand64() % 6);
            if (x < 2) {
                b[i] = p[0];
            } else if (x < 4) {
                cuzk_g1_affine_neg(&negp, &p[0]);
                b[i] = negp;
            } else if (x < 5) {
                cuzk_g1_affine_set_inf(&b[i]);
            } else {
                b[i] = p[1 + test_rand64() % 2];
            }
            unsigned y = (unsigned)(test_rand64() % 8);
            if (y < 2)
                cuzk_fr_set_u64(&s[i], 1 + test_rand64() % 3);
            else if (y < 4)
                set_scalar(&s[i], K_RMINUS1);
            else if (y < 5)
                set_scalar(&s[i], K_ONE);
            else if (y < 6)
                set_scalar(&s[i], K_ZERO);
            else
                s[i] = s[test_rand64() % (i + 1)]; /* repeat an earlier scalar */
        }
        cuzk_msm_scalars_from_fr(cs, s, n, 1);
        g1_naive(&want, b, cs, n);
        for (unsigned c = 1; c <= 14; c += (it % 2) + 1) {
            cuzk_msm_opts o = {.nthreads = 1 + (unsigned)(it % 3), .window = c};
            CHECK_EQ_ERR(cuzk_g1_msm(&got, b, cs, n, &o), CUZK_OK);
            CHECK(cuzk_g1_jac_eq(&got, &want));
        }
        g1_check_all(b, s, n, NULL);
    }

    /* pairs (P, k) and (-P, k): the result is infinity; plus a pair (P, k), (P, r-k) */
    for (size_t i = 0; i + 1 < n; i += 2) {
        test_g1_rand_points(&b[i], 1);
        cuzk_g1_affine_neg(&b[i + 1], &b[i]);
        test_rand_fr(&s[i]);
        s[i + 1] = s[i];
    }
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&got, NULL, b, s, n, NULL), CUZK_OK);
    CHECK(cuzk_g1_jac_is_inf(&got));
    b[1] = b[0];
    cuzk_fr_neg(&s[1], &s[0]);
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&got, NULL, b, s, n, NULL), CUZK_OK);
    CHECK(cuzk_g1_jac_is_inf(&got));

    /* the same base everywhere: sum of scalars times P */
    cuzk_fr total;
    cuzk_fr_set_zero(&total);
    for (size_t i = 0; i < n; i++) {
        b[i] = p[2];
        set_scalar(&s[i], (int)(test_rand64() % 5));
        cuzk_fr_add(&total, &total, &s[i]);
    }
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&got, NULL, b, s, n, NULL), CUZK_OK);
    cuzk_g1_jac pj;
    cuzk_g1_jac_from_affine(&pj, &p[2]);
    cuzk_g1_mul_fr(&want, &pj, &total);
    CHECK(cuzk_g1_jac_eq(&got, &want));

    free(b);
    free(s);
    free(cs);
}

/* GLV and GLS: the splits (s = s1 + s2 u with u = x^2; s in base |x|) against GMP, their
 * signed digits, and MSMs with scalars around multiples of u against the naive sum. */
static void test_glv(void)
{
    snprintf(test_ctx, sizeof test_ctx, "glv");
    mpz_t u, s, s1, s2, t;
    mpz_inits(u, s, s1, s2, t, NULL);
    mpz_set_str(u, "ac45a4010001a4020000000100000000", 16);
    const size_t n = 61;
    cuzk_msm_scalar *in = malloc(n * sizeof(*in)), *out = malloc(n * sizeof(*out));
    const uint64_t ul[2] = {0x0000000100000000ULL, 0xac45a4010001a402ULL};
    for (size_t i = 0; i < n; i++) {
        memset(&in[i], 0, sizeof in[i]);
        switch (i % 8) {
        case 0: /* u - 1, u, u + 1 */
            in[i].l[0] = ul[0] + (i / 8) % 3 - 1;
            in[i].l[1] = ul[1];
            break;
        case 1: /* 2^255 - 1 */
            in[i].l[0] = in[i].l[1] = in[i].l[2] = ~0ULL;
            in[i].l[3] = ~0ULL >> 1;
            break;
        case 2: { cuzk_fr f; set_scalar(&f, K_RMINUS1); cuzk_fr_to_limbs(in[i].l, &f); } break;
        case 3: /* a multiple of u */
            mpz_mul_ui(t, u, test_rand64() % 1000000);
            mpz_export(in[i].l, NULL, -1, 8, 0, 0, t);
            break;
        case 4: in[i].l[0] = i; break; /* small, zero included */
        default:
            for (int l = 0; l < 4; l++)
                in[i].l[l] = test_rand64();
            in[i].l[3] >>= 1;
            break;
        }
    }
    msm_endo_split(out, in, n, 2, 2);
    for (size_t i = 0; i < n; i++) {
        mpz_import(s, 4, -1, 8, 0, 0, in[i].l);
        mpz_import(s1, 2, -1, 8, 0, 0, out[i].l);
        mpz_import(s2, 2, -1, 8, 0, 0, out[i].l + 2);
        CHECK(mpz_cmp(s1, u) < 0);
        mpz_addmul(s1, s2, u);
        CHECK(mpz_cmp(s1, s) == 0);
        /* the 128-bit digits of both halves */
        for (unsigned c = 1; c <= CUZK_MSM_WINDOW_MAX; c += 3) {
            for (int h = 0; h < 2; h++) {
                CHECK(digits_sum(t, out[i].l + 2 * h, 2, (129 + c - 1) / c, c));
                mpz_import(s, 2, -1, 8, 0, 0, out[i].l + 2 * h);
                CHECK(mpz_cmp(t, s) == 0);
            }
        }
    }
    /* GLS's four base-|x| digits (G2), and their 64-bit signed digits */
    mpz_t x;
    mpz_init_set_str(x, "d201000000010000", 16);
    msm_endo_split(out, in, n, 4, 3);
    for (size_t i = 0; i < n; i++) {
        mpz_set_ui(t, 0);
        for (int h = 3; h >= 0; h--) {
            mpz_import(s1, 1, -1, 8, 0, 0, &out[i].l[h]);
            if (h < 3)
                CHECK(mpz_cmp(s1, x) < 0);
            mpz_mul(t, t, x);
            mpz_add(t, t, s1);
            for (unsigned c = 1; c <= CUZK_MSM_WINDOW_MAX; c += 4) {
                CHECK(digits_sum(s2, &out[i].l[h], 1, (65 + c - 1) / c, c));
                CHECK(mpz_cmp(s2, s1) == 0);
            }
        }
        mpz_import(s, 4, -1, 8, 0, 0, in[i].l);
        CHECK(mpz_cmp(t, s) == 0);
    }
    mpz_clear(x);
    cuzk_g2_affine *q = malloc(n * sizeof(*q));
    test_g2_rand_points(q, n);
    cuzk_g2_affine_set_inf(&q[9]);
    cuzk_g2_jac want2, got2;
    g2_naive(&want2, q, in, n);
    for (unsigned c = 0; c <= 12; c += 3) {
        cuzk_msm_opts o = {.nthreads = 1 + c % 2, .window = c};
        CHECK_EQ_ERR(cuzk_g2_msm(&got2, q, in, n, &o), CUZK_OK);
        CHECK(cuzk_g2_jac_eq(&got2, &want2));
    }
    free(q);

    /* the MSM on these scalars (GLV from 2 points), for several windows and threads */
    cuzk_g1_affine *b = malloc(n * sizeof(*b));
    test_g1_rand_points(b, n);
    cuzk_g1_affine_set_inf(&b[5]);
    cuzk_g1_jac want, got;
    g1_naive(&want, b, in, n);
    for (unsigned c = 0; c <= 13; c += 1 + c / 4) {
        cuzk_msm_opts o = {.nthreads = 1 + c % 3, .window = c};
        CHECK_EQ_ERR(cuzk_g1_msm(&got, b, in, n, &o), CUZK_OK);
        CHECK(cuzk_g1_jac_eq(&got, &want));
    }
    for (size_t m = 1; m <= 3; m++) { /* 1 point: no GLV; 2 and 3: GLV */
        g1_naive(&want, b, in, m);
        CHECK_EQ_ERR(cuzk_g1_msm(&got, b, in, m, NULL), CUZK_OK);
        CHECK(cuzk_g1_jac_eq(&got, &want));
    }
    free(b);
    free(in);
    free(out);
    mpz_clears(u, s, s1, s2, t, NULL);
}

/* The split: bit vectors, batch addition, gather, auto MSM on Filecoin-like scalars. */
static void test_g1_split(void)
{
    size_t n = 3000 + (size_t)(test_rand64() % 200);
    size_t words = CUZK_MSM_BITVEC_WORDS(n);
    cuzk_g1_affine *b = malloc(n * sizeof(*b)), *tb = malloc(n * sizeof(*tb));
    cuzk_fr *s = malloc(n * sizeof(*s));
    cuzk_msm_scalar *cs = malloc(n * sizeof(*cs)), *ts = malloc(n * sizeof(*ts));
    uint64_t *one = malloc(words * 8), *sig = malloc(words * 8), *tmp = malloc(words * 8);
    test_g1_rand_points(b, n);
    test_rand_frs_filecoin(s, n);
    cuzk_msm_scalars_from_fr(cs, s, n, 0);

    /* classification matches the scalars, Montgomery and canonical alike */
    cuzk_msm_counts cnt, cnt2;
    memset(one, 0xff, words * 8);
    memset(sig, 0xff, words * 8);
    cuzk_msm_classify_fr(one, sig, &cnt, s, n, 2);
    size_t z = 0, o = 0, g = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        int bo = (int)((one[i / 64] >> (i % 64)) & 1), bs = (int)((sig[i / 64] >> (i % 64)) & 1);
        int iz = cuzk_fr_is_zero(&s[i]), io = cuzk_fr_is_one(&s[i]);
        z += (size_t)iz;
        o += (size_t)io;
        g += (size_t)(!iz && !io);
        bad += (size_t)(bo != io || bs != (!iz && !io));
    }
    CHECK(bad == 0);
    CHECK(((one[words - 1] | sig[words - 1]) >> (n % 64)) == 0 || n % 64 == 0);
    CHECK(cnt.n == n && cnt.n_zero == z && cnt.n_one == o && cnt.n_sig == g);
    CHECK(cuzk_msm_should_split(&cnt));
    CHECK(cuzk_msm_bitvec_count(one, n) == o && cuzk_msm_bitvec_count(sig, n) == g);
    cuzk_msm_classify(tmp, NULL, &cnt2, cs, n, 3);
    CHECK(memcmp(tmp, one, words * 8) == 0);
    CHECK(memcmp(&cnt, &cnt2, sizeof cnt) == 0);
    cuzk_msm_classify(NULL, tmp, NULL, cs, n, 1);
    CHECK(memcmp(tmp, sig, words * 8) == 0);

    /* or / andnot */
    memcpy(tmp, one, words * 8);
    cuzk_msm_bitvec_or(tmp, sig, n);
    CHECK(cuzk_msm_bitvec_count(tmp, n) == o + g);
    cuzk_msm_bitvec_andnot(tmp, sig, n);
    CHECK(memcmp(tmp, one, words * 8) == 0);

    /* batch addition of the ones equals the naive sum, for several thread counts */
    cuzk_g1_jac want, got;
    cuzk_g1_jac_set_inf(&want);
    for (size_t i = 0; i < n; i++)
        if (cuzk_fr_is_one(&s[i]))
            cuzk_g1_jac_add_affine_var(&want, &want, &b[i]);
    for (unsigned t = 1; t <= 4; t++) {
        CHECK_EQ_ERR(cuzk_g1_batch_add(&got, b, n, one, t), CUZK_OK);
        CHECK(cuzk_g1_jac_eq(&got, &want));
    }

    /* gathers keep order and convert scalars */
    for (unsigned t = 1; t <= 3; t++) {
        memset(tb, 0, n * sizeof(*tb));
        CHECK(cuzk_g1_gather(tb, b, n, sig, t) == g);
        CHECK(cuzk_msm_gather_fr(ts, s, n, sig, t) == g);
        size_t j = 0, mism = 0;
        for (size_t i = 0; i < n; i++) {
            if (!cuzk_fr_is_zero(&s[i]) && !cuzk_fr_is_one(&s[i])) {
                mism += (size_t)(!cuzk_g1_affine_eq(&tb[j], &b[i]) ||
                                 memcmp(&ts[j], &cs[i], sizeof(ts[j])) != 0);
                j++;
            }
        }
        CHECK(mism == 0);
        memset(ts, 0, n * sizeof(*ts));
        CHECK(cuzk_msm_gather_scalars(ts, cs, n, one, t) == o);
        mism = 0;
        for (size_t i = 0; i < o; i++)
            mism += (size_t)(ts[i].l[0] != 1 || ts[i].l[1] || ts[i].l[2] || ts[i].l[3]);
        CHECK(mism == 0);
    }

    /* the whole split MSM, against the naive sum and the unsplit Pippenger */
    g1_naive(&want, b, cs, n);
    for (unsigned t = 1; t <= 3; t++) {
        cuzk_msm_opts opt = {.nthreads = t};
        CHECK_EQ_ERR(cuzk_g1_msm_auto_fr(&got, &cnt2, b, s, n, &opt), CUZK_OK);
        CHECK(cuzk_g1_jac_eq(&got, &want));
        CHECK(memcmp(&cnt, &cnt2, sizeof cnt) == 0);
        CHECK_EQ_ERR(cuzk_g1_msm_auto(&got, NULL, b, cs, n, &opt), CUZK_OK);
        CHECK(cuzk_g1_jac_eq(&got, &want));
        CHECK_EQ_ERR(cuzk_g1_msm_fr(&got, ts, b, s, n, &opt), CUZK_OK);
        CHECK(cuzk_g1_jac_eq(&got, &want));
    }
    /* split edge: exactly half significant (splits), one more (does not) */
    cuzk_msm_counts c1 = {.n = 10, .n_zero = 5, .n_sig = 5};
    cuzk_msm_counts c2 = {.n = 10, .n_zero = 4, .n_sig = 6};
    CHECK(cuzk_msm_should_split(&c1) && !cuzk_msm_should_split(&c2));
    /* mostly significant (no split): still right */
    for (size_t i = 0; i < 200; i++)
        set_scalar(&s[i], i % 10 == 0 ? K_ONE : i % 10 == 1 ? K_ZERO : K_RAND);
    g1_check_all(b, s, 200, NULL);
    CHECK_EQ_ERR(cuzk_g1_msm_auto_fr(&got, &cnt, b, s, 200, NULL), CUZK_OK);
    CHECK(!cuzk_msm_should_split(&cnt) && cnt.n_sig == 160);

    free(b);
    free(tb);
    free(s);
    free(cs);
    free(ts);
    free(one);
    free(sig);
    free(tmp);
}

static void test_errors(void)
{
    cuzk_g1_affine b[2];
    cuzk_msm_scalar s[2] = {{{1, 2, 3, 4}}, {{5, 6, 7, 1ULL << 63}}};
    cuzk_g1_jac r;
    test_g1_rand_points(b, 2);
    CHECK_EQ_ERR(cuzk_g1_msm(&r, b, s, 2, NULL), CUZK_EINVAL);
    CHECK(cuzk_g1_jac_is_inf(&r));
    CHECK_EQ_ERR(cuzk_g1_msm_auto(&r, NULL, b, s, 2, NULL), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_g1_msm(&r, b, s, 1, NULL), CUZK_OK);
    cuzk_msm_opts o = {.window = CUZK_MSM_WINDOW_MAX + 1};
    CHECK_EQ_ERR(cuzk_g1_msm(&r, b, s, 1, &o), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_g1_msm(&r, NULL, s, 1, NULL), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_g1_msm(&r, NULL, NULL, 0, NULL), CUZK_OK);
    CHECK(cuzk_g1_jac_is_inf(&r));
    /* window report: 0 for no points, small for few, growing with n */
    CHECK(cuzk_g1_msm_window(0, 1) == 0);
    unsigned w1 = cuzk_g1_msm_window(1, 1), w2 = cuzk_g1_msm_window(1000, 1);
    unsigned w3 = cuzk_g1_msm_window((size_t)1 << 22, 1), w4 = cuzk_g2_msm_window(1 << 20, 2);
    CHECK(w1 >= 1 && w1 <= 4);
    CHECK(w2 > w1 && w3 > w2 && w3 <= 20);
    CHECK(w4 >= 8 && w4 <= 20);
}

/* ---- G2 (smaller sizes) ---- */

static void test_g2(void)
{
    static const size_t sizes[] = {0, 1, 2, 3, 7, 64, 300};
    size_t nmax = 300;
    cuzk_g2_affine *b = malloc(nmax * sizeof(*b));
    cuzk_fr *s = malloc(nmax * sizeof(*s));
    cuzk_msm_scalar *cs = malloc(nmax * sizeof(*cs));
    test_g2_rand_points(b, nmax);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        test_rand_frs(s, n);
        cuzk_msm_opts o = {.nthreads = 1 + (unsigned)(k % 3)};
        g2_check_all(b, s, n, &o);
    }
    /* Filecoin-like (split), edge cases: P and -P, infinity, repeats, r-1 */
    test_rand_frs_filecoin(s, nmax);
    g2_check_all(b, s, nmax, NULL);
    cuzk_msm_counts cnt;
    cuzk_g2_jac got, want;
    CHECK_EQ_ERR(cuzk_g2_msm_auto_fr(&got, &cnt, b, s, nmax, NULL), CUZK_OK);
    CHECK(cuzk_msm_should_split(&cnt));
    for (size_t i = 0; i < 100; i++) {
        unsigned x = (unsigned)(test_rand64() % 4);
        if (x == 0)
            b[i] = b[200];
        else if (x == 1)
            cuzk_g2_affine_neg(&b[i], &b[200]);
        else if (x == 2)
            cuzk_g2_affine_set_inf(&b[i]);
        set_scalar(&s[i], (int)(test_rand64() % 5));
    }
    g2_check_all(b, s, 100, NULL);
    cuzk_msm_scalars_from_fr(cs, s, 100, 1);
    g2_naive(&want, b, cs, 100);
    static const unsigned g2_windows[] = {1, 3, 5, 9, 10, 11, 12, 13}; /* batch-affine from 10 */
    for (size_t wi = 0; wi < 2 * sizeof g2_windows / sizeof g2_windows[0]; wi++) {
        unsigned c = g2_windows[wi / 2];
        cuzk_msm_opts o = {.nthreads = 2, .window = c, .flags = wi % 2 ? CUZK_MSM_XYZZ_ONLY : 0};
        CHECK_EQ_ERR(cuzk_g2_msm(&got, b, cs, 100, &o), CUZK_OK);
        CHECK(cuzk_g2_jac_eq(&got, &want));
    }
    /* batch addition of all: plain sum */
    uint64_t bits[2] = {~0ULL, ~0ULL};
    cuzk_g2_jac_set_inf(&want);
    for (size_t i = 0; i < 100; i++)
        cuzk_g2_jac_add_affine_var(&want, &want, &b[i]);
    CHECK_EQ_ERR(cuzk_g2_batch_add(&got, b, 100, bits, 2), CUZK_OK);
    CHECK(cuzk_g2_jac_eq(&got, &want));
    free(b);
    free(s);
    free(cs);
}

/* A larger run comparing thread counts and windows among themselves (no naive sum). */
static void test_g1_large_consistency(void)
{
    size_t n = ((size_t)1 << 15) + 3;
    cuzk_g1_affine *b = malloc(n * sizeof(*b));
    cuzk_fr *s = malloc(n * sizeof(*s));
    test_g1_rand_points(b, n);
    test_rand_frs(s, n);
    cuzk_g1_jac r1, r2, r3;
    cuzk_msm_opts o1 = {.nthreads = 1}, o2 = {.nthreads = 2, .window = 11};
    cuzk_msm_opts o3 = {.nthreads = 5, .window = 6};
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&r1, NULL, b, s, n, &o1), CUZK_OK);
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&r2, NULL, b, s, n, &o2), CUZK_OK);
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&r3, NULL, b, s, n, &o3), CUZK_OK);
    CHECK(cuzk_g1_jac_eq(&r1, &r2) && cuzk_g1_jac_eq(&r1, &r3));
    /* batch-affine buckets (windows >= MSM_BA_MIN_WINDOW) against their XYZZ-only twin */
    for (unsigned c = MSM_BA_MIN_WINDOW; c <= MSM_BA_MIN_WINDOW + 2; c++) {
        cuzk_msm_opts ob = {.nthreads = 2, .window = c};
        cuzk_msm_opts ox = {.nthreads = 2, .window = c, .flags = CUZK_MSM_XYZZ_ONLY};
        CHECK_EQ_ERR(cuzk_g1_msm_fr(&r2, NULL, b, s, n, &ob), CUZK_OK);
        CHECK_EQ_ERR(cuzk_g1_msm_fr(&r3, NULL, b, s, n, &ox), CUZK_OK);
        CHECK(cuzk_g1_jac_eq(&r1, &r2) && cuzk_g1_jac_eq(&r1, &r3));
    }
    /* few distinct scalars: most bases meet a bucket already in the batch (overflow) */
    for (size_t i = 0; i < n; i++)
        cuzk_fr_set_u64(&s[i], 2 + test_rand64() % 40);
    cuzk_msm_opts ob = {.nthreads = 2, .window = 13};
    cuzk_msm_opts ox = {.nthreads = 2, .window = 13, .flags = CUZK_MSM_XYZZ_ONLY};
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&r2, NULL, b, s, n, &ob), CUZK_OK);
    CHECK_EQ_ERR(cuzk_g1_msm_fr(&r3, NULL, b, s, n, &ox), CUZK_OK);
    CHECK(cuzk_g1_jac_eq(&r2, &r3) && !cuzk_g1_jac_is_inf(&r2));
    CHECK(!cuzk_g1_jac_is_inf(&r1) && cuzk_g1_jac_is_on_curve(&r1));
    free(b);
    free(s);
}

/* batch_add against a plain sum on bases built to hit every case of the batched affine
 * path: repeats (doublings), P next to -P (cancellation), identities, runs of one point, at
 * sizes around the path's threshold and with 1..4 threads. */
static void test_g1_batch_add_cases(void)
{
    size_t sizes[] = {1, 63, 64, 1000, 1023, 1024, 1025, 4097, 20000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        cuzk_g1_affine *b = malloc(n * sizeof *b), pool[8];
        uint64_t *bits = calloc(CUZK_MSM_BITVEC_WORDS(n), 8);
        test_g1_rand_points(pool, 8);
        for (size_t i = 0; i < n; i++) {
            uint64_t u = test_rand64();
            switch (u % 8) {
            case 0: cuzk_g1_affine_set_inf(&b[i]); break;                     /* identity */
            case 1: cuzk_g1_affine_neg(&b[i], &pool[(u >> 8) % 2]); break;     /* -P */
            default: b[i] = pool[(u >> 8) % (si % 2 ? 2 : 8)]; break;         /* repeats */
            }
            if ((u >> 16) % 4 != 0)
                bits[i / 64] |= 1ULL << (i % 64);
        }
        cuzk_g1_jac want, got;
        cuzk_g1_jac_set_inf(&want);
        for (size_t i = 0; i < n; i++)
            if (bits[i / 64] >> (i % 64) & 1)
                cuzk_g1_jac_add_affine_var(&want, &want, &b[i]);
        for (unsigned t = 1; t <= 4; t++) {
            CHECK_EQ_ERR(cuzk_g1_batch_add(&got, b, n, bits, t), CUZK_OK);
            CHECK(cuzk_g1_jac_eq(&got, &want));
        }
        /* all bits set: a sum where P and -P of one pool point cancel over and over */
        memset(bits, 0xff, CUZK_MSM_BITVEC_WORDS(n) * 8);
        cuzk_g1_jac_set_inf(&want);
        for (size_t i = 0; i < n; i++)
            cuzk_g1_jac_add_affine_var(&want, &want, &b[i]);
        CHECK_EQ_ERR(cuzk_g1_batch_add(&got, b, n, bits, 2), CUZK_OK);
        CHECK(cuzk_g1_jac_eq(&got, &want));
        free(b);
        free(bits);
    }
}

/* bitvec compress / extract / and against bit-by-bit references, at sizes around word and
 * chunk edges, dense and sparse masks, several thread counts. */
static int bit_at(const uint64_t *v, size_t i) { return (int)((v[i / 64] >> (i % 64)) & 1); }

static void test_bitvec_ops(void)
{
    const size_t sizes[] = {1, 2, 63, 64, 65, 1000, 4096 * 64 + 1, ((size_t)1 << 18) + 37};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si], words = CUZK_MSM_BITVEC_WORDS(n);
        uint64_t *src = malloc(8 * (words + 1)), *mask = malloc(8 * words);
        uint64_t *out = malloc(8 * (words + 1)), *ref = calloc(words + 1, 8);
        for (int density = 0; density < 3; density++) {
            for (size_t w = 0; w < words; w++) {
                src[w] = test_rand64();
                uint64_t m = test_rand64();
                mask[w] = density == 0 ? m : density == 1 ? (m | test_rand64() | test_rand64())
                                                          : (m & test_rand64() & test_rand64());
            }
            if (n % 64) /* bits past n set: must be ignored */
                mask[words - 1] |= ~0ULL << (n % 64);
            memset(ref, 0, 8 * (words + 1));
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (bit_at(mask, i))
                    ref[k / 64] |= (uint64_t)bit_at(src, i) << (k % 64), k++;
            const unsigned threads[] = {1, 2, 3, 8};
            for (int impl = 0; impl < 2; impl++) { /* bit by bit, then PEXT where the CPU has it */
                if (!msm_bitvec_set_pext(impl == 1))
                    continue;
                for (int t = 0; t < 4; t++) {
                    memset(out, 0xa5, 8 * (words + 1));
                    size_t kk = cuzk_msm_bitvec_compress(out, src, mask, n, threads[t]);
                    CHECK(kk == k);
                    CHECK(memcmp(out, ref, 8 * CUZK_MSM_BITVEC_WORDS(k)) == 0);
                }
            }
            (void)msm_bitvec_set_pext(true); /* back to the default where there is one */
            size_t ka = cuzk_msm_bitvec_and(out, src, mask, n), ka_ref = 0, bad = 0;
            for (size_t i = 0; i < n; i++) {
                ka_ref += (size_t)(bit_at(src, i) & bit_at(mask, i));
                bad += (size_t)(bit_at(out, i) != (bit_at(src, i) & bit_at(mask, i)));
            }
            CHECK(ka == ka_ref && bad == 0);
        }
        CHECK(cuzk_msm_bitvec_compress(out, src, NULL, n, 2) == n);
        CHECK(cuzk_msm_bitvec_count(out, n) == cuzk_msm_bitvec_count(src, n));
        const size_t offs[] = {0, 1, 63, 64, 65, 328};
        for (int o = 0; o < 6; o++) {
            if (offs[o] >= n)
                continue;
            size_t m = n - offs[o], bad = 0;
            memset(out, 0xa5, 8 * (words + 1));
            cuzk_msm_bitvec_extract(out, src, offs[o], m);
            for (size_t j = 0; j < m; j++)
                bad += (size_t)(bit_at(out, j) != bit_at(src, offs[o] + j));
            if (m % 64)
                bad += (size_t)((out[m / 64] >> (m % 64)) != 0);
            CHECK(bad == 0);
        }
        free(src), free(mask), free(out), free(ref);
    }
}

/* cuzk_msm_gather_fr_multi against one plain gather per output: masks absent, dense and
 * sparse, starts inside, at and past word edges and past the end, several thread counts,
 * sizes around word and chunk edges; values zero, one and random. And the classification
 * that copies on the way against the plain one. */
static void test_gather_multi(void)
{
    const size_t sizes[] = {1, 63, 64, 65, 1000, 4096 * 64 + 3};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si], words = CUZK_MSM_BITVEC_WORDS(n);
        cuzk_fr *in = malloc(sizeof *in * n);
        uint64_t *bits = malloc(8 * words), *m[3], *sel = malloc(8 * words);
        cuzk_msm_scalar *want = malloc(sizeof *want * n), *got[4];
        for (int k = 0; k < 3; k++)
            m[k] = malloc(8 * words);
        for (int k = 0; k < 4; k++)
            got[k] = malloc(sizeof *got[k] * n);
        for (size_t i = 0; i < n; i++) {
            unsigned x = (unsigned)(test_rand64() % 4);
            if (x == 0)
                memset(&in[i], 0, sizeof in[i]);
            else if (x == 1)
                cuzk_fr_set_one(&in[i]);
            else
                test_rand_fr(&in[i]);
        }
        for (size_t w = 0; w < words; w++) {
            bits[w] = test_rand64() & test_rand64() ? test_rand64() : ~0ULL;
            m[0][w] = test_rand64() | test_rand64() | test_rand64(); /* dense */
            m[1][w] = test_rand64() & test_rand64();                 /* sparse */
            m[2][w] = test_rand64();
        }
        if (n % 64) /* bits past n set: must be ignored */
            bits[words - 1] |= ~0ULL << (n % 64);
        const size_t los[] = {0, 1, 63, 64, 65, 328, n, n + 5};
        const unsigned threads[] = {1, 2, 3, 8};
        for (int rep = 0; rep < 4; rep++) {
            unsigned k = 1 + (unsigned)(test_rand64() % 4);
            cuzk_msm_gather_out g[4];
            for (unsigned j = 0; j < k; j++) {
                unsigned mk = (unsigned)(test_rand64() % 4);
                g[j] = (cuzk_msm_gather_out){.out = got[j], .mask = mk < 3 ? m[mk] : NULL,
                                             .lo = los[test_rand64() % 8], .count = 12345};
            }
            CHECK_EQ_ERR(cuzk_msm_gather_fr_multi(g, k, in, n, bits, threads[rep]), CUZK_OK);
            for (unsigned j = 0; j < k; j++) {
                for (size_t w = 0; w < words; w++) {
                    sel[w] = bits[w] & (g[j].mask ? g[j].mask[w] : ~0ULL);
                    for (size_t b = 0; b < 64; b++)
                        if (w * 64 + b < g[j].lo)
                            sel[w] &= ~(1ULL << b);
                }
                size_t c = cuzk_msm_gather_fr(want, in, n, sel, 1);
                CHECK(g[j].count == c);
                CHECK(c == 0 || memcmp(got[j], want, sizeof *want * c) == 0);
            }
        }
        /* classification with the copy riding on it: the same bits and counts, and the copy */
        {
            uint64_t *o1 = malloc(8 * words), *s1 = malloc(8 * words);
            uint64_t *o2 = malloc(8 * words), *s2 = malloc(8 * words);
            cuzk_fr *cp = malloc(sizeof *cp * n);
            memset(cp, 0xa5, sizeof *cp * n);
            cuzk_msm_counts c1, c2;
            cuzk_msm_classify_fr(o1, s1, &c1, in, n, 1);
            cuzk_msm_classify_fr_copy(o2, s2, &c2, in, n, 3, cp);
            CHECK(memcmp(o1, o2, 8 * words) == 0 && memcmp(s1, s2, 8 * words) == 0);
            CHECK(c1.n_one == c2.n_one && c1.n_sig == c2.n_sig && c1.n_zero == c2.n_zero);
            CHECK(memcmp(cp, in, sizeof *cp * n) == 0);
            free(o1), free(s1), free(o2), free(s2), free(cp);
        }
        cuzk_msm_gather_out none[5] = {{0}};
        CHECK_EQ_ERR(cuzk_msm_gather_fr_multi(none, 0, in, n, bits, 1), CUZK_EINVAL);
        CHECK_EQ_ERR(cuzk_msm_gather_fr_multi(none, 5, in, n, bits, 1), CUZK_EINVAL);
        free(in), free(bits), free(sel), free(want);
        for (int k = 0; k < 3; k++)
            free(m[k]);
        for (int k = 0; k < 4; k++)
            free(got[k]);
    }
}

/* ---- the vector (AVX-512 IFMA) buckets, where this CPU has them ---- */

/* a + p in radix 2^52 when that stays below 2p: the same value, not reduced */
static void r52_add_p(msm_r52 *a)
{
    static const uint64_t p64[6] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL,
                                    0x6730d2a0f6b0f624ULL, 0x64774b84f38512bfULL,
                                    0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
    uint64_t p52[8], c = 0;
    for (unsigned j = 0; j < 8; j++) {
        unsigned bit = 52 * j, w = bit >> 6, sh = bit & 63;
        unsigned __int128 v = p64[w];
        if (w + 1 < 6)
            v |= (unsigned __int128)p64[w + 1] << 64;
        p52[j] = (uint64_t)(v >> sh) & ((1ULL << 52) - 1);
    }
    for (unsigned j = 0; j < 8; j++) {
        uint64_t t = a->l[j] + p52[j] + c;
        a->l[j] = j < 7 ? t & ((1ULL << 52) - 1) : t;
        c = t >> 52;
    }
}

/* n bases (a few points repeated, negated, infinity) and scalars (small, r - 1, repeated,
 * random): MSMs with vector and with scalar buckets at windows 10..cmax against the naive sum,
 * and with the automatic window when auto_window. */
#define DEFINE_VECTOR_MSMS(G, AFF, JAC)                                                     \
    static void G##_vector_msms(size_t n, unsigned long iters, unsigned cmax, bool auto_window) \
    {                                                                                       \
        AFF *b = malloc(n * sizeof(*b)), p[3];                                              \
        cuzk_fr *s = malloc(n * sizeof(*s));                                                \
        cuzk_msm_scalar *cs = malloc(n * sizeof(*cs));                                      \
        test_##G##_rand_points(p, 3);                                                       \
        test_##G##_rand_points(b, n);                                                       \
        for (unsigned long it = 0; it < iters; it++) {                                      \
            for (size_t i = 0; i < n; i++) {                                                \
                unsigned x = (unsigned)(test_rand64() % 16);                                \
                if (x == 0)                                                                 \
                    b[i] = p[0];                                                            \
                else if (x == 1)                                                            \
                    cuzk_##G##_affine_neg(&b[i], &p[0]);                                    \
                else if (x == 2)                                                            \
                    cuzk_##G##_affine_set_inf(&b[i]);                                       \
                else if (x == 3)                                                            \
                    b[i] = p[1 + test_rand64() % 2];                                        \
                unsigned y = (unsigned)(test_rand64() % 8);                                 \
                if (y == 0)                                                                 \
                    cuzk_fr_set_u64(&s[i], 1 + test_rand64() % 3);                          \
                else if (y == 1)                                                            \
                    set_scalar(&s[i], K_RMINUS1);                                           \
                else if (y == 2)                                                            \
                    s[i] = s[test_rand64() % (i + 1)];                                      \
                else                                                                        \
                    test_rand_fr(&s[i]);                                                    \
            }                                                                               \
            size_t m = it == 0 ? n : 1 + (size_t)(test_rand64() % n);                       \
            cuzk_msm_scalars_from_fr(cs, s, m, 1);                                          \
            JAC want, got_v, got_s;                                                         \
            G##_naive(&want, b, cs, m);                                                     \
            for (unsigned c = 10; c <= cmax; c++) {                                         \
                cuzk_msm_opts ov = {.nthreads = 1 + (unsigned)(c % 3), .window = c};        \
                cuzk_msm_opts os = ov;                                                      \
                os.flags = CUZK_MSM_SCALAR_ONLY;                                            \
                CHECK_EQ_ERR(cuzk_##G##_msm(&got_v, b, cs, m, &ov), CUZK_OK);               \
                CHECK_EQ_ERR(cuzk_##G##_msm(&got_s, b, cs, m, &os), CUZK_OK);               \
                CHECK(cuzk_##G##_jac_eq(&got_v, &want));                                    \
                CHECK(cuzk_##G##_jac_eq(&got_s, &want));                                    \
            }                                                                               \
            if (auto_window) {                                                              \
                cuzk_msm_opts oa = {.nthreads = 2};                                         \
                CHECK_EQ_ERR(cuzk_##G##_msm(&got_v, b, cs, m, &oa), CUZK_OK);               \
                CHECK(cuzk_##G##_jac_eq(&got_v, &want));                                    \
            }                                                                               \
        }                                                                                   \
        free(b);                                                                            \
        free(s);                                                                            \
        free(cs);                                                                           \
    }
DEFINE_VECTOR_MSMS(g1, cuzk_g1_affine, cuzk_g1_jac)
DEFINE_VECTOR_MSMS(g2, cuzk_g2_affine, cuzk_g2_jac)

static void test_g1_vector(void)
{
    snprintf(test_ctx, sizeof test_ctx, "g1 vector buckets");
    if (!msm_ifma_available()) {
        printf("test_msm: no AVX-512 IFMA on this CPU: the vector buckets are not run here\n");
        return;
    }
    enum { NB = 64, NE = 61 };
    cuzk_g1_affine bk[NB], pts[NE], got;
    msm_g1_r52 vbk[NB], vpt[NE];
    msm_ifma_ent ent[NE];
    uint32_t special[NE];
    void *work = aligned_alloc(64, msm_ifma_work_bytes(NE));
    CHECK(work != NULL);
    /* conversions both ways, negation */
    test_g1_rand_points(bk, NB);
    msm_ifma_g1_from_affine(vbk, bk, NB);
    for (size_t i = 0; i < NB; i++) {
        msm_ifma_g1_to_affine(&got, &vbk[i]);
        CHECK(cuzk_g1_affine_eq(&got, &bk[i]));
        msm_g1_r52 t = vbk[i];
        r52_add_p(&t.x); /* x + p < 2p: the same point */
        msm_ifma_g1_to_affine(&got, &t);
        CHECK(cuzk_g1_affine_eq(&got, &bk[i]));
        msm_ifma_g1_neg(&t, &vbk[i]);
        msm_ifma_g1_to_affine(&got, &t);
        cuzk_g1_affine n;
        cuzk_g1_affine_neg(&n, &bk[i]);
        CHECK(cuzk_g1_affine_eq(&got, &n));
    }
    /* the selected conversions (eight at a time, the rest one by one), G1 and G2 */
    {
        uint8_t flag[NB];
        cuzk_g1_affine back[NB];
        for (size_t i = 0; i < NB; i++)
            flag[i] = (uint8_t)(test_rand64() % 3); /* bit 1 selects about a third */
        memset(back, 0, sizeof back);
        msm_ifma_g1_to_affine_sel(back, vbk, flag, 2, NB);
        cuzk_g1_affine zero;
        memset(&zero, 0, sizeof zero);
        for (size_t i = 0; i < NB; i++)
            CHECK(flag[i] & 2 ? cuzk_g1_affine_eq(&back[i], &bk[i])
                              : memcmp(&back[i], &zero, sizeof zero) == 0);
        enum { N2 = 21 };
        cuzk_g2_affine q2[N2], q2b[N2];
        msm_g2_r52 v2[N2];
        test_g2_rand_points(q2, N2);
        cuzk_g2_affine_set_inf(&q2[3]);
        msm_ifma_g2_from_affine(v2, q2, N2);
        CHECK(msm_ifma_g2_is_inf(&v2[3]) && !msm_ifma_g2_is_inf(&v2[4]));
        uint8_t all[N2];
        memset(all, 1, sizeof all);
        msm_ifma_g2_to_affine_sel(q2b, v2, all, 1, N2);
        for (size_t i = 0; i < N2; i++) {
            CHECK(cuzk_g2_affine_eq(&q2b[i], &q2[i]));
            msm_g2_r52 t;
            cuzk_g2_affine n2, g2;
            msm_ifma_g2_neg(&t, &v2[i]);
            msm_ifma_g2_to_affine(&g2, &t);
            cuzk_g2_affine_neg(&n2, &q2[i]);
            CHECK(cuzk_g2_affine_eq(&g2, &n2));
        }
    }
    /* flushes of 1..NE additions against the scalar sums: random points, the bucket's own
     * point (a doubling, left to the caller), its negation (infinity, left to the caller),
     * coordinates given as x + p */
    unsigned long iters = test_iters(40);
    for (unsigned long it = 0; it < iters; it++) {
        size_t m = 1 + (size_t)(test_rand64() % NE);
        test_g1_rand_points(bk, NB);
        test_g1_rand_points(pts, NE);
        bool want_special[NE] = {0};
        size_t perm[NB];
        for (size_t i = 0; i < NB; i++)
            perm[i] = i;
        for (size_t i = 0; i < m; i++) { /* distinct buckets */
            size_t r = i + (size_t)(test_rand64() % (NB - i)), t = perm[i];
            perm[i] = perm[r], perm[r] = t;
        }
        for (size_t i = 0; i < m; i++) {
            unsigned kind = (unsigned)(test_rand64() % 10);
            if (kind == 0) { /* same point */
                pts[i] = bk[perm[i]];
                want_special[i] = true;
            } else if (kind == 1) { /* opposite point */
                cuzk_g1_affine_neg(&pts[i], &bk[perm[i]]);
                want_special[i] = true;
            }
        }
        msm_ifma_g1_from_affine(vbk, bk, NB);
        msm_ifma_g1_from_affine(vpt, pts, NE);
        for (size_t i = 0; i < m; i++) {
            bool neg = test_rand64() & 1;
            if (neg) /* the entry negates the point back */
                msm_ifma_g1_neg(&vpt[i], &vpt[i]);
            if (test_rand64() % 4 == 0)
                r52_add_p(&vbk[perm[i]].y);
            if (test_rand64() % 4 == 0)
                r52_add_p(&vpt[i].x);
            ent[i] = (msm_ifma_ent){(uint32_t)perm[i], neg, &vpt[i], NULL};
        }
        size_t ns = msm_ifma_g1_flush(vbk, ent, m, work, special);
        size_t k = 0;
        for (size_t i = 0; i < m; i++) {
            bool sp = k < ns && special[k] == i;
            k += sp;
            CHECK(sp == want_special[i]);
            msm_ifma_g1_to_affine(&got, &vbk[perm[i]]);
            if (sp) { /* left as it was */
                CHECK(cuzk_g1_affine_eq(&got, &bk[perm[i]]));
                continue;
            }
            cuzk_g1_jac a;
            cuzk_g1_affine want;
            cuzk_g1_jac_from_affine(&a, &bk[perm[i]]);
            cuzk_g1_jac_add_affine_var(&a, &a, &pts[i]);
            cuzk_g1_jac_to_affine(&want, &a);
            CHECK(cuzk_g1_affine_eq(&got, &want));
        }
        CHECK(k == ns);
        for (size_t q = m; q < NB; q++) { /* other buckets untouched */
            msm_ifma_g1_to_affine(&got, &vbk[perm[q]]);
            CHECK(cuzk_g1_affine_eq(&got, &bk[perm[q]]));
        }
    }
    free(work);

    /* whole MSMs, vector and scalar buckets, at windows that take batches (>= 10), with the
     * edge cases of test_g1_edge: repeated points, P and -P, infinity, small scalars */
    g1_vector_msms(5000, test_iters(4), 14, true);
    snprintf(test_ctx, sizeof test_ctx, "g2 vector buckets");
    g2_vector_msms(1500, test_iters(2), 12, false);
}

int main(void)
{
    test_init("test_msm");
    test_bitvec_ops();
    test_gather_multi();
    test_g1_batch_add_cases();
    test_digits();
    test_glv();
    test_errors();
    test_g1_sizes();
    test_g1_windows_threads();
    test_g1_edge();
    test_g1_vector();
    test_g1_split();
    test_g1_large_consistency();
    test_g2();
    return test_finish();
}
