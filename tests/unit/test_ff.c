/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fp, Fr and Fp2 against GMP, for every multiplication back end (portable C, and x86-64
 * MULX/ADX where the CPU has it).
 *
 * GMP (mpz_*) is the judge: each element is converted to its canonical integer through
 * cuzk_*_to_limbs and mpz_import, and every operation is recomputed with mpz arithmetic.
 * The moduli themselves are derived here from the BLS12-381 parameter x, not copied.
 *
 * The per-field tests are written once, below the "#else", and instantiated for Fp and Fr
 * by including this file twice with F/T/N set (the same scheme as src/ff/field_impl.h).
 */
#ifndef TEST_FF_FIELD

#include <gmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "test.h"

#include "cuzk/ff.h"
#include "ff/ff_internal.h"
#include "ff/limbs.h"

/* The moduli, derived from the BLS12-381 parameter x = -0xd201000000010000:
 * r = x^4 - x^2 + 1, p = (x - 1)^2 r / 3 + x. */
static mpz_t g_p, g_r;

static void derive_moduli(void)
{
    mpz_t x, t;
    mpz_inits(x, t, g_p, g_r, NULL);
    mpz_set_str(x, "-d201000000010000", 16);
    mpz_pow_ui(g_r, x, 4);
    mpz_pow_ui(t, x, 2);
    mpz_sub(g_r, g_r, t);
    mpz_add_ui(g_r, g_r, 1);
    mpz_sub_ui(t, x, 1);
    mpz_mul(t, t, t);
    mpz_mul(t, t, g_r);
    CHECK(mpz_divisible_ui_p(t, 3));
    mpz_divexact_ui(t, t, 3);
    mpz_add(g_p, t, x);
    CHECK(mpz_sizeinbase(g_p, 2) == 381);
    CHECK(mpz_sizeinbase(g_r, 2) == 255);
    CHECK(mpz_probab_prime_p(g_p, 30) != 0);
    CHECK(mpz_probab_prime_p(g_r, 30) != 0);
    mpz_clears(x, t, NULL);
}

/* Uniform random integer in [0, m) (m > 1) from the seeded generator. */
static void rand_below(mpz_t z, const mpz_t m)
{
    size_t bits = mpz_sizeinbase(m, 2);
    size_t words = (bits + 63) / 64;
    uint64_t w[8];
    do {
        for (size_t i = 0; i < words; i++)
            w[i] = test_rand64();
        if (bits % 64)
            w[words - 1] &= (1ULL << (bits % 64)) - 1;
        mpz_import(z, words, -1, 8, 0, 0, w);
    } while (mpz_cmp(z, m) >= 0);
}

/* A test value below m: random, or now and then a value of a special shape (near 0, near
 * m, a power of two, words of all ones), since those are where carries go wrong. */
static void rand_value(mpz_t z, const mpz_t m)
{
    unsigned k = (unsigned)(test_rand64() % 16);
    size_t bits = mpz_sizeinbase(m, 2);
    switch (k) {
    case 0: /* small */
        mpz_set_ui(z, test_rand64() % 1000);
        break;
    case 1: /* m - small */
        mpz_sub_ui(z, m, 1 + test_rand64() % 1000);
        break;
    case 2: /* power of two */
        mpz_set_ui(z, 0);
        mpz_setbit(z, test_rand64() % (bits - 1));
        break;
    case 3: { /* random words, some all ones or zero */
        uint64_t w[8];
        size_t words = (bits + 63) / 64;
        for (size_t i = 0; i < words; i++) {
            uint64_t s = test_rand64() % 3;
            w[i] = s == 0 ? ~0ULL : s == 1 ? 0 : test_rand64();
        }
        mpz_import(z, words, -1, 8, 0, 0, w);
        mpz_mod(z, z, m);
        break;
    }
    default:
        rand_below(z, m);
    }
}

#define FF_CAT3_(a, b, c) a##b##c
#define FF_CAT3(a, b, c) FF_CAT3_(a, b, c)

/* ---- Fp ---- */
#define TEST_FF_FIELD 1
#define F fp
#define T cuzk_fp
#define N CUZK_FP_LIMBS
#define NBYTES CUZK_FP_BYTES
#define DECMAX CUZK_FP_DEC_MAX
#define MOD g_p
#define MODCONST CUZK_FP_MODULUS
#include "test_ff.c" /* this file, as the per-field template */
#undef F
#undef T
#undef N
#undef NBYTES
#undef DECMAX
#undef MOD
#undef MODCONST

/* ---- Fr ---- */
#define F fr
#define T cuzk_fr
#define N CUZK_FR_LIMBS
#define NBYTES CUZK_FR_BYTES
#define DECMAX CUZK_FR_DEC_MAX
#define MOD g_r
#define MODCONST CUZK_FR_MODULUS
#include "test_ff.c" /* this file, as the per-field template */
#undef F
#undef T
#undef N
#undef NBYTES
#undef DECMAX
#undef MOD
#undef MODCONST
#undef TEST_FF_FIELD

/* ---- Fp only: parity and sign ---- */
static void test_fp_sign(unsigned long iters)
{
    mpz_t a, half;
    mpz_inits(a, half, NULL);
    mpz_sub_ui(half, g_p, 1);
    mpz_fdiv_q_2exp(half, half, 1); /* (p-1)/2 */
    for (unsigned long i = 0; i < iters; i++) {
        cuzk_fp x;
        if (i < 6) {
            const long d[6] = {0, 1, -1, 2, 0, 0};
            if (i < 4) {
                mpz_set_si(a, d[i]);
                if (d[i] < 0)
                    mpz_add(a, a, g_p);
            } else {
                mpz_add_ui(a, half, i - 4); /* (p-1)/2 and (p+1)/2 */
            }
        } else {
            rand_value(a, g_p);
        }
        test_fp_from_mpz(&x, a);
        CHECK(cuzk_fp_is_odd(&x) == (mpz_odd_p(a) != 0));
        CHECK(cuzk_fp_lexicographically_largest(&x) == (mpz_cmp(a, half) > 0));
    }
    mpz_clears(a, half, NULL);
}

/* ---- Fr only ---- */

/* omega_(2^32) of the snarkjs family (generator 5), as ffjavascript's Fr.w[32]. */
static const char SNARKJS_W32[] = "0212d79e5b416b6f0fd56dc8d168d6c0c4024ff270b3e0941b788f500b912f1f";

static void test_fr_roots(void)
{
    const cuzk_roots fams[2] = {CUZK_ROOTS_SNARKJS, CUZK_ROOTS_BELLMAN};
    mpz_t e, g, w, z;
    mpz_inits(e, g, w, z, NULL);
    cuzk_fr one, minus_one, omega, t;
    cuzk_fr_set_one(&one);
    cuzk_fr_neg(&minus_one, &one);
    for (int f = 0; f < 2; f++) {
        cuzk_fr_generator(&t, fams[f]);
        test_fr_to_mpz(z, &t);
        CHECK(mpz_cmp_ui(z, (unsigned long)fams[f]) == 0);
        /* the generator is a quadratic non-residue, so its 2^32-part has full order */
        CHECK(mpz_legendre(z, g_r) == -1);
        mpz_set_ui(g, (unsigned long)fams[f]);
        for (unsigned k = 0; k <= CUZK_FR_TWO_ADICITY; k++) {
            CHECK_EQ_ERR(cuzk_fr_root_of_unity(&omega, k, fams[f]), CUZK_OK);
            /* GMP: g^((r-1)/2^k) */
            mpz_sub_ui(e, g_r, 1);
            mpz_fdiv_q_2exp(e, e, k);
            mpz_powm(w, g, e, g_r);
            test_fr_to_mpz(z, &omega);
            CHECK(mpz_cmp(z, w) == 0);
            if (k == 0) {
                CHECK(cuzk_fr_is_one(&omega));
                continue;
            }
            t = omega;
            for (unsigned j = 0; j + 1 < k; j++)
                cuzk_fr_sqr(&t, &t);
            CHECK(cuzk_fr_eq(&t, &minus_one)); /* omega^(2^(k-1)) = -1 */
            cuzk_fr_sqr(&t, &t);
            CHECK(cuzk_fr_is_one(&t)); /* omega^(2^k) = 1 */
        }
        if (fams[f] == CUZK_ROOTS_SNARKJS) {
            CHECK_EQ_ERR(cuzk_fr_root_of_unity(&omega, 32, fams[f]), CUZK_OK);
            mpz_set_str(w, SNARKJS_W32, 16);
            test_fr_to_mpz(z, &omega);
            CHECK(mpz_cmp(z, w) == 0);
        }
        CHECK_EQ_ERR(cuzk_fr_root_of_unity(&omega, CUZK_FR_TWO_ADICITY + 1, fams[f]), CUZK_EINVAL);
    }
    CHECK_EQ_ERR(cuzk_fr_root_of_unity(&omega, 4, (cuzk_roots)3), CUZK_EINVAL);
    /* r - 1 = 2^32 * odd: 32 is the full two-adicity */
    mpz_sub_ui(e, g_r, 1);
    CHECK(mpz_scan1(e, 0) == CUZK_FR_TWO_ADICITY);
    mpz_clears(e, g, w, z, NULL);
}

static void test_fr_batch_inv(unsigned long iters)
{
    enum { MAXN = 67 };
    cuzk_fr a[MAXN], r[MAXN], scratch[MAXN], t;
    mpz_t z, inv;
    mpz_inits(z, inv, NULL);
    for (unsigned long it = 0; it < iters; it++) {
        size_t n = it < 4 ? it : (size_t)(test_rand64() % MAXN);
        unsigned zero_rate = (unsigned)(test_rand64() % 4); /* 0: none, else about 1 in 2..4 */
        for (size_t i = 0; i < n; i++) {
            if (zero_rate && test_rand64() % (zero_rate + 1) == 0)
                cuzk_fr_set_zero(&a[i]);
            else
                test_rand_fr(&a[i]);
        }
        if (n && it % 5 == 0) { /* zeros at both ends */
            cuzk_fr_set_zero(&a[0]);
            cuzk_fr_set_zero(&a[n - 1]);
        }
        for (size_t i = 0; i < n; i++)
            cuzk_fr_set_u64(&r[i], 12345); /* must be overwritten */
        cuzk_fr_batch_inv_var(r, a, n, scratch);
        for (size_t i = 0; i < n; i++) {
            test_fr_to_mpz(z, &a[i]);
            if (mpz_sgn(z) == 0) {
                CHECK(cuzk_fr_is_zero(&r[i]));
                continue;
            }
            mpz_invert(inv, z, g_r);
            test_fr_to_mpz(z, &r[i]);
            CHECK(mpz_cmp(z, inv) == 0);
            cuzk_fr_mul(&t, &r[i], &a[i]);
            CHECK(cuzk_fr_is_one(&t));
        }
    }
    mpz_clears(z, inv, NULL);
}

static void test_fr_reduce(unsigned long iters)
{
    mpz_t z, want, got, two256;
    mpz_inits(z, want, got, two256, NULL);
    mpz_setbit(two256, 256);
    for (unsigned long i = 0; i < iters; i++) {
        switch (i) {
        case 0: mpz_set_ui(z, 0); break;
        case 1: mpz_set(z, g_r); break;
        case 2: mpz_add_ui(z, g_r, 1); break;
        case 3: mpz_mul_2exp(z, g_r, 1); break;
        case 4: mpz_sub_ui(z, two256, 1); break;
        case 5: mpz_sub_ui(z, g_r, 1); break;
        default:
            rand_below(z, two256);
        }
        uint8_t b[32] = {0};
        size_t cnt;
        mpz_export(b, &cnt, -1, 1, 0, 0, z);
        cuzk_fr x;
        cuzk_fr_from_bytes_le_reduce(&x, b);
        mpz_mod(want, z, g_r);
        test_fr_to_mpz(got, &x);
        CHECK(mpz_cmp(got, want) == 0);
    }
    mpz_clears(z, want, got, two256, NULL);
}

/* ---- Fp2 against GMP, u^2 = -1 ---- */
typedef struct {
    mpz_t c0, c1;
} zfp2;

static void zfp2_init(zfp2 *a) { mpz_inits(a->c0, a->c1, NULL); }
static void zfp2_clear(zfp2 *a) { mpz_clears(a->c0, a->c1, NULL); }

static void fp2_to_z(zfp2 *z, const cuzk_fp2 *a)
{
    test_fp_to_mpz(z->c0, &a->c0);
    test_fp_to_mpz(z->c1, &a->c1);
}

static void fp2_from_z(cuzk_fp2 *a, const zfp2 *z)
{
    test_fp_from_mpz(&a->c0, z->c0);
    test_fp_from_mpz(&a->c1, z->c1);
}

static bool fp2_eq_z(const cuzk_fp2 *a, const zfp2 *z)
{
    zfp2 t;
    zfp2_init(&t);
    fp2_to_z(&t, a);
    bool eq = mpz_cmp(t.c0, z->c0) == 0 && mpz_cmp(t.c1, z->c1) == 0;
    zfp2_clear(&t);
    return eq;
}

/* r = a*b: (a0 b0 - a1 b1) + (a0 b1 + a1 b0) u; r may alias a or b. */
static void zfp2_mul(zfp2 *r, const zfp2 *a, const zfp2 *b)
{
    mpz_t t0, t1;
    mpz_inits(t0, t1, NULL);
    mpz_mul(t0, a->c0, b->c0);
    mpz_submul(t0, a->c1, b->c1);
    mpz_mul(t1, a->c0, b->c1);
    mpz_addmul(t1, a->c1, b->c0);
    mpz_mod(r->c0, t0, g_p);
    mpz_mod(r->c1, t1, g_p);
    mpz_clears(t0, t1, NULL);
}

static void rand_zfp2(zfp2 *z)
{
    unsigned k = (unsigned)(test_rand64() % 8);
    rand_value(z->c0, g_p);
    rand_value(z->c1, g_p);
    if (k == 0)
        mpz_set_ui(z->c1, 0);
    else if (k == 1)
        mpz_set_ui(z->c0, 0);
}

static void test_fp2(unsigned long iters)
{
    zfp2 a, b, w, g;
    mpz_t n, t;
    zfp2_init(&a);
    zfp2_init(&b);
    zfp2_init(&w);
    zfp2_init(&g);
    mpz_inits(n, t, NULL);
    for (unsigned long i = 0; i < iters; i++) {
        cuzk_fp2 x, y, r;
        rand_zfp2(&a);
        rand_zfp2(&b);
        if (i < 4) { /* zero and one operands */
            mpz_set_ui(a.c0, i & 1);
            mpz_set_ui(a.c1, 0);
        }
        fp2_from_z(&x, &a);
        fp2_from_z(&y, &b);

        zfp2_mul(&w, &a, &b);
        cuzk_fp2_mul(&r, &x, &y);
        CHECK(fp2_eq_z(&r, &w));
        r = x;
        cuzk_fp2_mul(&r, &r, &y); /* r == a */
        CHECK(fp2_eq_z(&r, &w));
        r = y;
        cuzk_fp2_mul(&r, &x, &r); /* r == b */
        CHECK(fp2_eq_z(&r, &w));

        zfp2_mul(&w, &a, &a);
        cuzk_fp2_sqr(&r, &x);
        CHECK(fp2_eq_z(&r, &w));
        r = x;
        cuzk_fp2_mul(&r, &r, &r);
        CHECK(fp2_eq_z(&r, &w));
        r = x;
        cuzk_fp2_sqr(&r, &r);
        CHECK(fp2_eq_z(&r, &w));

        /* add, sub, dbl, neg, conj */
        mpz_add(w.c0, a.c0, b.c0);
        mpz_mod(w.c0, w.c0, g_p);
        mpz_add(w.c1, a.c1, b.c1);
        mpz_mod(w.c1, w.c1, g_p);
        cuzk_fp2_add(&r, &x, &y);
        CHECK(fp2_eq_z(&r, &w));
        mpz_sub(w.c0, a.c0, b.c0);
        mpz_mod(w.c0, w.c0, g_p);
        mpz_sub(w.c1, a.c1, b.c1);
        mpz_mod(w.c1, w.c1, g_p);
        cuzk_fp2_sub(&r, &x, &y);
        CHECK(fp2_eq_z(&r, &w));
        mpz_mul_2exp(w.c0, a.c0, 1);
        mpz_mod(w.c0, w.c0, g_p);
        mpz_mul_2exp(w.c1, a.c1, 1);
        mpz_mod(w.c1, w.c1, g_p);
        cuzk_fp2_dbl(&r, &x);
        CHECK(fp2_eq_z(&r, &w));
        mpz_neg(w.c0, a.c0);
        mpz_mod(w.c0, w.c0, g_p);
        mpz_neg(w.c1, a.c1);
        mpz_mod(w.c1, w.c1, g_p);
        cuzk_fp2_neg(&r, &x);
        CHECK(fp2_eq_z(&r, &w));
        mpz_set(w.c0, a.c0);
        cuzk_fp2_conj(&r, &x);
        CHECK(fp2_eq_z(&r, &w));
        r = x;
        cuzk_fp2_conj(&r, &r);
        CHECK(fp2_eq_z(&r, &w));

        /* times (1 + u): (a0 - a1) + (a0 + a1) u */
        mpz_sub(w.c0, a.c0, a.c1);
        mpz_mod(w.c0, w.c0, g_p);
        mpz_add(w.c1, a.c0, a.c1);
        mpz_mod(w.c1, w.c1, g_p);
        cuzk_fp2_mul_by_nonresidue(&r, &x);
        CHECK(fp2_eq_z(&r, &w));
        r = x;
        cuzk_fp2_mul_by_nonresidue(&r, &r);
        CHECK(fp2_eq_z(&r, &w));

        /* times an Fp element */
        mpz_mul(w.c0, a.c0, b.c0);
        mpz_mod(w.c0, w.c0, g_p);
        mpz_mul(w.c1, a.c1, b.c0);
        mpz_mod(w.c1, w.c1, g_p);
        cuzk_fp2_mul_fp(&r, &x, &y.c0);
        CHECK(fp2_eq_z(&r, &w));

        /* norm, inverse, Legendre symbol */
        mpz_mul(n, a.c0, a.c0);
        mpz_addmul(n, a.c1, a.c1);
        mpz_mod(n, n, g_p);
        cuzk_fp2_inv(&r, &x);
        if (mpz_sgn(n) == 0) {
            CHECK(cuzk_fp2_is_zero(&r));
            CHECK(cuzk_fp2_legendre(&x) == 0);
        } else {
            mpz_invert(t, n, g_p);
            mpz_mul(w.c0, a.c0, t);
            mpz_mod(w.c0, w.c0, g_p);
            mpz_mul(w.c1, a.c1, t);
            mpz_neg(w.c1, w.c1);
            mpz_mod(w.c1, w.c1, g_p);
            CHECK(fp2_eq_z(&r, &w));
            cuzk_fp2_mul(&r, &r, &x);
            CHECK(cuzk_fp2_is_one(&r));
            CHECK(cuzk_fp2_legendre(&x) == mpz_legendre(n, g_p));
        }
        r = x;
        cuzk_fp2_inv(&r, &r);
        cuzk_fp2_mul(&r, &r, &x);
        CHECK(cuzk_fp2_is_one(&r) || cuzk_fp2_is_zero(&x));

        /* eq, cmov, is_zero, is_one */
        CHECK(cuzk_fp2_eq(&x, &y) == (mpz_cmp(a.c0, b.c0) == 0 && mpz_cmp(a.c1, b.c1) == 0));
        r = x;
        cuzk_fp2_cmov(&r, &y, false);
        CHECK(cuzk_fp2_eq(&r, &x));
        cuzk_fp2_cmov(&r, &y, true);
        CHECK(cuzk_fp2_eq(&r, &y));
        CHECK(cuzk_fp2_is_zero(&x) == (mpz_sgn(a.c0) == 0 && mpz_sgn(a.c1) == 0));
        CHECK(cuzk_fp2_is_one(&x) == (mpz_cmp_ui(a.c0, 1) == 0 && mpz_sgn(a.c1) == 0));

        /* lexicographically largest: c1 decides, c0 when c1 = 0 */
        mpz_sub_ui(t, g_p, 1);
        mpz_fdiv_q_2exp(t, t, 1);
        bool lex = mpz_sgn(a.c1) ? mpz_cmp(a.c1, t) > 0 : mpz_cmp(a.c0, t) > 0;
        CHECK(cuzk_fp2_lexicographically_largest(&x) == lex);
    }

    /* pow with short exponents against repeated GMP multiplication */
    for (unsigned long i = 0; i < iters / 8 + 4; i++) {
        cuzk_fp2 x, r;
        rand_zfp2(&a);
        fp2_from_z(&x, &a);
        uint64_t e[2] = {test_rand64() % 300, 0};
        size_t nl = i % 3 == 0 ? 2 : 1;
        if (i == 0)
            e[0] = 0;
        mpz_set_ui(w.c0, 1);
        mpz_set_ui(w.c1, 0);
        for (uint64_t k = 0; k < e[0]; k++)
            zfp2_mul(&w, &w, &a);
        cuzk_fp2_pow(&r, &x, e, nl);
        CHECK(fp2_eq_z(&r, &w));
    }

    /* square roots: squares have one (both roots of it square back), non-squares none */
    for (unsigned long i = 0; i < iters / 4 + 8; i++) {
        cuzk_fp2 x, s, r;
        rand_zfp2(&a);
        switch (i) {
        case 0: /* zero */
            mpz_set_ui(a.c0, 0);
            mpz_set_ui(a.c1, 0);
            break;
        case 1: /* -1 = u^2 */
            mpz_sub_ui(a.c0, g_p, 1);
            mpz_set_ui(a.c1, 0);
            break;
        case 2: /* a non-residue of Fp, which is a square in Fp2 */
            do
                rand_below(a.c0, g_p);
            while (mpz_legendre(a.c0, g_p) != -1);
            mpz_set_ui(a.c1, 0);
            break;
        case 3: /* pure imaginary */
            mpz_set_ui(a.c0, 0);
            break;
        default:
            break;
        }
        fp2_from_z(&x, &a);
        if (i >= 4 && i % 2 == 0) {
            cuzk_fp2_sqr(&s, &x); /* a random square */
        } else {
            s = x;
        }
        fp2_to_z(&g, &s);
        mpz_mul(n, g.c0, g.c0);
        mpz_addmul(n, g.c1, g.c1);
        mpz_mod(n, n, g_p);
        int leg = mpz_legendre(n, g_p);
        cuzk_fp2_set_one(&r);
        bool ok = cuzk_fp2_sqrt(&r, &s);
        if (leg >= 0) {
            CHECK(ok);
            cuzk_fp2 chk;
            cuzk_fp2_sqr(&chk, &r);
            CHECK(cuzk_fp2_eq(&chk, &s));
            /* GMP agrees that r^2 = s */
            fp2_to_z(&b, &r);
            zfp2_mul(&w, &b, &b);
            CHECK(fp2_eq_z(&s, &w));
        } else {
            CHECK(!ok);
            CHECK(cuzk_fp2_is_one(&r)); /* unchanged */
        }
    }
    zfp2_clear(&a);
    zfp2_clear(&b);
    zfp2_clear(&w);
    zfp2_clear(&g);
    mpz_clears(n, t, NULL);
}

/* ---- back-end selection ---- */

/* Child mode: print the back end chosen at start-up (the library ignores CUZK_FF_IMPL). */
static int print_impl(void)
{
    printf("impl=%d\n", (int)cuzk_ff_get_impl());
    return 0;
}

static int child_impl(const char *env)
{
    char self[4096], cmd[4200];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return -1;
    self[len] = 0;
    snprintf(cmd, sizeof cmd, "%s '%s' --print-impl", env, self);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    int impl = -1;
    if (fscanf(f, "impl=%d", &impl) != 1)
        impl = -1;
    pclose(f);
    return impl;
}

static void test_impl_selection(void)
{
    snprintf(test_ctx, sizeof test_ctx, "impl");
    bool avail = cuzk_ff_adx_available();
    printf("ff: MULX/ADX %s\n", avail ? "available" : "not available");
    /* at start-up the fast path is on exactly when the CPU has it */
    CHECK(cuzk_ff_get_impl() == (avail ? CUZK_FF_ADX : CUZK_FF_PORTABLE));
    CHECK_EQ_ERR(cuzk_ff_set_impl(CUZK_FF_PORTABLE), CUZK_OK);
    CHECK(cuzk_ff_get_impl() == CUZK_FF_PORTABLE);
    CHECK(cuzk_ff_adx_enabled_ == 0);
    if (avail) {
        CHECK_EQ_ERR(cuzk_ff_set_impl(CUZK_FF_ADX), CUZK_OK);
        CHECK(cuzk_ff_get_impl() == CUZK_FF_ADX);
        CHECK(cuzk_ff_adx_enabled_ != 0);
    } else {
        CHECK_EQ_ERR(cuzk_ff_set_impl(CUZK_FF_ADX), CUZK_EUNSUPPORTED);
        CHECK(cuzk_ff_get_impl() == CUZK_FF_PORTABLE);
    }
    CHECK_EQ_ERR(cuzk_ff_set_impl((cuzk_ff_impl)7), CUZK_EINVAL);
    /* the names of the programs' --impl and CUZK_FF_IMPL */
    cuzk_ff_impl im = (cuzk_ff_impl)7;
    CHECK_EQ_ERR(cuzk_ff_impl_parse(&im, "portable"), CUZK_OK);
    CHECK(im == CUZK_FF_PORTABLE && !strcmp(cuzk_ff_impl_name(im), "portable"));
    CHECK_EQ_ERR(cuzk_ff_impl_parse(&im, "adx"), CUZK_OK);
    CHECK(im == CUZK_FF_ADX && !strcmp(cuzk_ff_impl_name(im), "adx"));
    CHECK_EQ_ERR(cuzk_ff_impl_parse(&im, "ADX"), CUZK_EINVAL);
    CHECK(im == CUZK_FF_ADX);
    /* the start-up choice is CPUID's alone: the library reads no environment */
    CHECK(child_impl("CUZK_FF_IMPL=portable") == (avail ? CUZK_FF_ADX : CUZK_FF_PORTABLE));
    CHECK(child_impl("env -u CUZK_FF_IMPL") == (avail ? CUZK_FF_ADX : CUZK_FF_PORTABLE));
}

/* a = a value from rand_value (z its scratch) */
static void rand_fp(cuzk_fp *a, mpz_t z)
{
    rand_value(z, g_p);
    test_fp_from_mpz(a, z);
}

/* The fast routines directly against the portable ones, same inputs, including aliasing. */
static void test_adx_vs_portable(unsigned long iters)
{
    snprintf(test_ctx, sizeof test_ctx, "adx vs portable");
    mpz_t z;
    mpz_init(z);
    for (unsigned long i = 0; i < iters; i++) {
        cuzk_fp a, b, r1, r2;
        rand_fp(&a, z);
        rand_fp(&b, z);
        cuzk_fp_mul_portable(&r1, &a, &b);
        cuzk_fp_mul_adx_(r2.l, a.l, b.l);
        CHECK(cuzk_fp_eq(&r1, &r2));
        r2 = a;
        cuzk_fp_mul_adx_(r2.l, r2.l, b.l);
        CHECK(cuzk_fp_eq(&r1, &r2));
        r2 = b;
        cuzk_fp_mul_adx_(r2.l, a.l, r2.l);
        CHECK(cuzk_fp_eq(&r1, &r2));
        cuzk_fp_sqr_portable(&r1, &a);
        cuzk_fp_sqr_adx_(r2.l, a.l);
        CHECK(cuzk_fp_eq(&r1, &r2));
        r2 = a;
        cuzk_fp_sqr_adx_(r2.l, r2.l);
        CHECK(cuzk_fp_eq(&r1, &r2));
        r2 = a;
        cuzk_fp_mul_adx_(r2.l, r2.l, r2.l);
        CHECK(cuzk_fp_eq(&r1, &r2));

        cuzk_fr c, d, s1, s2;
        rand_value(z, g_r);
        test_fr_from_mpz(&c, z);
        rand_value(z, g_r);
        test_fr_from_mpz(&d, z);
        cuzk_fr_mul_portable(&s1, &c, &d);
        cuzk_fr_mul_adx_(s2.l, c.l, d.l);
        CHECK(cuzk_fr_eq(&s1, &s2));
        s2 = c;
        cuzk_fr_mul_adx_(s2.l, s2.l, d.l);
        CHECK(cuzk_fr_eq(&s1, &s2));
        cuzk_fr_sqr_portable(&s1, &c);
        cuzk_fr_sqr_adx_(s2.l, c.l);
        CHECK(cuzk_fr_eq(&s1, &s2));
        s2 = c;
        cuzk_fr_sqr_adx_(s2.l, s2.l);
        CHECK(cuzk_fr_eq(&s1, &s2));
    }
    mpz_clear(z);
}

/* The 768-bit product and the lone reduction (Fp2's lazy product) against GMP, at their
 * bounds: any 384-bit factors (all ones included), any t < p*2^384 (p*2^384 - 1 included). */
static void test_wide_redc(unsigned long iters)
{
    snprintf(test_ctx, sizeof test_ctx, "fp wide product and reduction");
    mpz_t x, y, z, w, bound, rinv;
    mpz_inits(x, y, z, w, bound, rinv, NULL);
    mpz_mul_2exp(bound, g_p, 384);
    mpz_set_ui(w, 1);
    mpz_mul_2exp(w, w, 384);
    CHECK(mpz_invert(rinv, w, g_p) != 0);
    for (unsigned long i = 0; i < iters; i++) {
        uint64_t a[6] = {0}, b[6] = {0}, t[12] = {0}, r[6] = {0};
        for (int j = 0; j < 6; j++) {
            a[j] = i % 5 == 0 ? ~0ULL : test_rand64();
            b[j] = i % 3 == 0 ? ~0ULL : test_rand64();
        }
        cuzk_fp_mul_wide_adx_(t, a, b);
        mpz_import(x, 6, -1, 8, 0, 0, a);
        mpz_import(y, 6, -1, 8, 0, 0, b);
        mpz_mul(z, x, y);
        mpz_import(w, 12, -1, 8, 0, 0, t);
        CHECK(mpz_cmp(z, w) == 0);
        /* t below p*2^384: random, or the bound less something small */
        if (i % 4 == 0) {
            mpz_sub_ui(z, bound, 1 + test_rand64() % 3);
        } else {
            mpz_import(z, 12, -1, 8, 0, 0, t);
            mpz_mod(z, z, bound);
        }
        memset(t, 0, sizeof t);
        mpz_export(t, NULL, -1, 8, 0, 0, z);
        cuzk_fp_redc_adx_(r, t);
        mpz_mul(z, z, rinv);
        mpz_mod(z, z, g_p);
        mpz_import(w, 6, -1, 8, 0, 0, r);
        CHECK(mpz_cmp(z, w) == 0);
    }
    mpz_clears(x, y, z, w, bound, rinv, NULL);
}

#ifdef CUZK_FF_X86_ASM
/* The assembly addition and subtraction against the portable limb code (GMP checks the
 * public functions, which are these, in test_fp_all), aliasing included. */
static void test_x86_add_sub(unsigned long iters)
{
    snprintf(test_ctx, sizeof test_ctx, "x86 add/sub vs portable");
    mpz_t z;
    mpz_init(z);
    for (unsigned long i = 0; i < iters; i++) {
        cuzk_fp a, b, r1, r2;
        rand_fp(&a, z);
        rand_fp(&b, z);
        if (i % 7 == 0)
            b = a; /* a - a = 0, a + a */
        mod_add(r1.l, a.l, b.l, CUZK_FP_MODULUS.l, 6);
        cuzk_fp_add_x86_(r2.l, a.l, b.l);
        CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
        r2 = a;
        cuzk_fp_add_x86_(r2.l, r2.l, b.l);
        CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
        mod_sub(r1.l, a.l, b.l, CUZK_FP_MODULUS.l, 6);
        cuzk_fp_sub_x86_(r2.l, a.l, b.l);
        CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
        r2 = b;
        cuzk_fp_sub_x86_(r2.l, a.l, r2.l);
        CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
        r2 = a;
        cuzk_fp_sub_x86_(r2.l, r2.l, r2.l);
        CHECK(limbs_is_zero(r2.l, 6));
    }
    mpz_clear(z);
}
#endif

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--print-impl") == 0)
        return print_impl();
    test_init("test_ff");
    snprintf(test_ctx, sizeof test_ctx, "moduli");
    derive_moduli();
    test_fp_check_modulus();
    test_fr_check_modulus();
    test_impl_selection();

    const unsigned long it = test_iters(3000);
    cuzk_ff_impl impls[2] = {CUZK_FF_PORTABLE, CUZK_FF_ADX};
    for (int k = 0; k < 2; k++) {
        if (impls[k] == CUZK_FF_ADX && !cuzk_ff_adx_available()) {
            printf("skipping the ADX back end: not available on this CPU\n");
            continue;
        }
        CHECK_EQ_ERR(cuzk_ff_set_impl(impls[k]), CUZK_OK);
        const char *name = impls[k] == CUZK_FF_ADX ? "adx" : "portable";
        snprintf(test_ctx, sizeof test_ctx, "fp/%s", name);
        test_fp_all(it);
        test_fp_sign(it / 4);
        snprintf(test_ctx, sizeof test_ctx, "fr/%s", name);
        test_fr_all(it);
        test_fr_roots();
        test_fr_batch_inv(it / 20);
        test_fr_reduce(it);
        snprintf(test_ctx, sizeof test_ctx, "fp2/%s", name);
        test_fp2(it / 3);
    }
    if (cuzk_ff_adx_available()) {
        test_adx_vs_portable(test_iters(20000));
        test_wide_redc(test_iters(20000));
    }
#ifdef CUZK_FF_X86_ASM
    test_x86_add_sub(test_iters(20000));
#endif
    mpz_clears(g_p, g_r, NULL);
    return test_finish();
}

#else /* TEST_FF_FIELD: per-field tests, F = fp or fr */

#define FN(name) FF_CAT3(test_, F, _##name)
#define CZ(name) FF_CAT3(cuzk_, F, _##name)

static void FN(to_mpz)(mpz_t z, const T *a)
{
    uint64_t l[N];
    CZ(to_limbs)(l, a);
    mpz_import(z, N, -1, 8, 0, 0, l);
}

/* z in [0, MOD) */
static void FN(from_mpz)(T *r, const mpz_t z)
{
    uint64_t l[N] = {0};
    size_t cnt;
    mpz_export(l, &cnt, -1, 8, 0, 0, z);
    CHECK_EQ_ERR(CZ(from_limbs)(r, l), CUZK_OK);
}

static bool FN(eq_mpz)(const T *a, const mpz_t z)
{
    mpz_t t;
    mpz_init(t);
    FN(to_mpz)(t, a);
    bool eq = mpz_cmp(t, z) == 0;
    mpz_clear(t);
    return eq;
}

/* Little-endian bytes of z (z < 2^(8*NBYTES)). */
static void FN(z_to_le)(uint8_t out[NBYTES], const mpz_t z)
{
    size_t cnt;
    memset(out, 0, NBYTES);
    mpz_export(out, &cnt, -1, 1, 0, 0, z);
}

static void FN(reverse)(uint8_t out[NBYTES], const uint8_t in[NBYTES])
{
    for (size_t i = 0; i < NBYTES; i++)
        out[i] = in[NBYTES - 1 - i];
}

/* The library's modulus and Montgomery one against the derived values. */
static void FN(check_modulus)(void)
{
    mpz_t z, want;
    mpz_inits(z, want, NULL);
    mpz_import(z, N, -1, 8, 0, 0, MODCONST.l);
    CHECK(mpz_cmp(z, MOD) == 0);
    /* one is stored as 2^(64N) mod MOD */
    T one;
    uint8_t got[NBYTES], want_b[NBYTES];
    CZ(set_one)(&one);
    CZ(to_mont_bytes_le)(got, &one);
    mpz_set_ui(want, 0);
    mpz_setbit(want, 64 * N);
    mpz_mod(want, want, MOD);
    FN(z_to_le)(want_b, want);
    CHECK(memcmp(got, want_b, NBYTES) == 0);
    mpz_clears(z, want, NULL);
}

/* Edge values: 0, 1, 2, p-1, p-2, (p-1)/2, (p+1)/2, 2^k, 2^(64N) mod p, p - 2^64. */
#define NEDGE 16
static void FN(edge)(mpz_t z, unsigned i)
{
    size_t bits = mpz_sizeinbase(MOD, 2);
    switch (i) {
    case 0: mpz_set_ui(z, 0); break;
    case 1: mpz_set_ui(z, 1); break;
    case 2: mpz_set_ui(z, 2); break;
    case 3: mpz_sub_ui(z, MOD, 1); break;
    case 4: mpz_sub_ui(z, MOD, 2); break;
    case 5:
        mpz_sub_ui(z, MOD, 1);
        mpz_fdiv_q_2exp(z, z, 1);
        break;
    case 6:
        mpz_add_ui(z, MOD, 1);
        mpz_fdiv_q_2exp(z, z, 1);
        break;
    case 7:
        mpz_set_ui(z, 0);
        mpz_setbit(z, 63);
        break;
    case 8:
        mpz_set_ui(z, 0);
        mpz_setbit(z, 64);
        break;
    case 9:
        mpz_set_ui(z, 0);
        mpz_setbit(z, 128);
        break;
    case 10:
        mpz_set_ui(z, 0);
        mpz_setbit(z, bits - 1);
        break;
    case 11:
        mpz_set_ui(z, 0);
        mpz_setbit(z, bits - 2);
        break;
    case 12:
        mpz_set_ui(z, 0);
        mpz_setbit(z, 64 * N);
        mpz_mod(z, z, MOD);
        break;
    case 13:
        mpz_set_ui(z, 0);
        mpz_setbit(z, 64);
        mpz_sub(z, MOD, z);
        break;
    case 14:
        mpz_set_ui(z, 0);
        mpz_setbit(z, 64 * (N - 1)); /* 2^(64(N-1)): top limb 1, others 0 */
        break;
    default:
        mpz_set_ui(z, 0);
        mpz_setbit(z, 64 * (N - 1));
        mpz_sub_ui(z, z, 1); /* all lower limbs ones */
        break;
    }
}

/* Operands for case i: every pair of edge values first, then random values. */
static void FN(operands)(mpz_t a, mpz_t b, unsigned long i)
{
    if (i < NEDGE * NEDGE) {
        FN(edge)(a, (unsigned)(i % NEDGE));
        FN(edge)(b, (unsigned)(i / NEDGE));
    } else {
        rand_value(a, MOD);
        rand_value(b, MOD);
    }
}

static void FN(arith)(unsigned long iters)
{
    mpz_t a, b, w;
    mpz_inits(a, b, w, NULL);
    for (unsigned long i = 0; i < iters + NEDGE * NEDGE; i++) {
        T x, y, r;
        FN(operands)(a, b, i);
        FN(from_mpz)(&x, a);
        FN(from_mpz)(&y, b);
        CHECK(FN(eq_mpz)(&x, a)); /* from/to limbs round trip */

        mpz_add(w, a, b);
        mpz_mod(w, w, MOD);
        CZ(add)(&r, &x, &y);
        CHECK(FN(eq_mpz)(&r, w));
        r = x;
        CZ(add)(&r, &r, &y);
        CHECK(FN(eq_mpz)(&r, w));

        mpz_sub(w, a, b);
        mpz_mod(w, w, MOD);
        CZ(sub)(&r, &x, &y);
        CHECK(FN(eq_mpz)(&r, w));
        r = y;
        CZ(sub)(&r, &x, &r);
        CHECK(FN(eq_mpz)(&r, w));

        mpz_mul_2exp(w, a, 1);
        mpz_mod(w, w, MOD);
        CZ(dbl)(&r, &x);
        CHECK(FN(eq_mpz)(&r, w));
        r = x;
        CZ(add)(&r, &r, &r);
        CHECK(FN(eq_mpz)(&r, w));

        mpz_neg(w, a);
        mpz_mod(w, w, MOD);
        CZ(neg)(&r, &x);
        CHECK(FN(eq_mpz)(&r, w));
        r = x;
        CZ(neg)(&r, &r);
        CHECK(FN(eq_mpz)(&r, w));

        mpz_mul(w, a, b);
        mpz_mod(w, w, MOD);
        CZ(mul)(&r, &x, &y);
        CHECK(FN(eq_mpz)(&r, w));
        CZ(mul_portable)(&r, &x, &y);
        CHECK(FN(eq_mpz)(&r, w));
        r = x;
        CZ(mul)(&r, &r, &y);
        CHECK(FN(eq_mpz)(&r, w));
        r = y;
        CZ(mul)(&r, &x, &r);
        CHECK(FN(eq_mpz)(&r, w));

        mpz_mul(w, a, a);
        mpz_mod(w, w, MOD);
        CZ(sqr)(&r, &x);
        CHECK(FN(eq_mpz)(&r, w));
        CZ(sqr_portable)(&r, &x);
        CHECK(FN(eq_mpz)(&r, w));
        r = x;
        CZ(sqr)(&r, &r);
        CHECK(FN(eq_mpz)(&r, w));
        r = x;
        CZ(mul)(&r, &r, &r); /* r == a == b */
        CHECK(FN(eq_mpz)(&r, w));

        /* predicates and cmov */
        CHECK(CZ(eq)(&x, &y) == (mpz_cmp(a, b) == 0));
        CHECK(CZ(is_zero)(&x) == (mpz_sgn(a) == 0));
        CHECK(CZ(is_one)(&x) == (mpz_cmp_ui(a, 1) == 0));
        r = x;
        CZ(cmov)(&r, &y, false);
        CHECK(CZ(eq)(&r, &x));
        CZ(cmov)(&r, &y, true);
        CHECK(CZ(eq)(&r, &y));

        uint64_t v = i < 4 ? (uint64_t)i : i == 4 ? ~0ULL : test_rand64();
        CZ(set_u64)(&r, v);
        mpz_import(w, 1, -1, 8, 0, 0, &v);
        CHECK(FN(eq_mpz)(&r, w));
    }
    T r;
    CZ(set_zero)(&r);
    CHECK(CZ(is_zero)(&r));
    CZ(set_one)(&r);
    CHECK(CZ(is_one)(&r));
    mpz_clears(a, b, w, NULL);
}

static void FN(inv_pow)(unsigned long iters)
{
    mpz_t a, e, w;
    mpz_inits(a, e, w, NULL);
    for (unsigned long i = 0; i < iters; i++) {
        T x, r;
        if (i < NEDGE)
            FN(edge)(a, (unsigned)i);
        else
            rand_value(a, MOD);
        FN(from_mpz)(&x, a);

        if (mpz_sgn(a) == 0)
            mpz_set_ui(w, 0);
        else
            mpz_invert(w, a, MOD);
        CZ(inv)(&r, &x);
        CHECK(FN(eq_mpz)(&r, w));
        CZ(inv_var)(&r, &x);
        CHECK(FN(eq_mpz)(&r, w));
        r = x;
        CZ(inv)(&r, &r);
        CHECK(FN(eq_mpz)(&r, w));
        r = x;
        CZ(inv_var)(&r, &r);
        CHECK(FN(eq_mpz)(&r, w));

        /* pow with 0..N+1 exponent limbs (exponents above the modulus included) */
        uint64_t el[N + 1];
        size_t nl = (size_t)(test_rand64() % (N + 2));
        for (size_t k = 0; k < nl; k++)
            el[k] = test_rand64();
        if (i % 7 == 0 && nl)
            el[nl - 1] = 0; /* leading zero limb */
        if (nl)
            mpz_import(e, nl, -1, 8, 0, 0, el);
        else
            mpz_set_ui(e, 0);
        mpz_powm(w, a, e, MOD);
        CZ(pow)(&r, &x, el, nl);
        CHECK(FN(eq_mpz)(&r, w));
        r = x;
        CZ(pow)(&r, &r, el, nl);
        CHECK(FN(eq_mpz)(&r, w));
    }
    mpz_clears(a, e, w, NULL);
}

static void FN(legendre_sqrt)(unsigned long iters)
{
    mpz_t a, w;
    mpz_inits(a, w, NULL);
    unsigned long nonres = 0, res = 0;
    for (unsigned long i = 0; i < iters; i++) {
        T x, r, chk;
        if (i < NEDGE)
            FN(edge)(a, (unsigned)i);
        else
            rand_value(a, MOD);
        FN(from_mpz)(&x, a);
        if (i % 2 == 1) { /* a square */
            CZ(sqr)(&x, &x);
            FN(to_mpz)(a, &x);
        }
        int leg = mpz_legendre(a, MOD);
        CHECK(CZ(legendre)(&x) == leg);
        CZ(set_u64)(&r, 77);
        bool ok = CZ(sqrt)(&r, &x);
        if (leg >= 0) {
            res++;
            CHECK(ok);
            CZ(sqr)(&chk, &r);
            CHECK(CZ(eq)(&chk, &x));
            FN(to_mpz)(w, &r);
            mpz_mul(w, w, w);
            mpz_mod(w, w, MOD);
            CHECK(mpz_cmp(w, a) == 0);
            r = x;
            CHECK(CZ(sqrt)(&r, &r)); /* aliased */
            CZ(sqr)(&chk, &r);
            CHECK(CZ(eq)(&chk, &x));
        } else {
            nonres++;
            CHECK(!ok);
            CZ(set_u64)(&chk, 77);
            CHECK(CZ(eq)(&r, &chk)); /* unchanged */
        }
    }
    CHECK(nonres > 0 && res > 0);
    mpz_clears(a, w, NULL);
}

/* Limbs, bytes (LE, BE, Montgomery LE) and decimal text, with every rejection. */
static void FN(encodings)(unsigned long iters)
{
    mpz_t a, w, r2;
    mpz_inits(a, w, r2, NULL);
    mpz_setbit(r2, 64 * N); /* Montgomery radix R */
    for (unsigned long i = 0; i < iters; i++) {
        T x, y;
        uint8_t le[NBYTES], be[NBYTES], want_b[NBYTES], rev[NBYTES];
        uint64_t l[N];
        if (i < NEDGE)
            FN(edge)(a, (unsigned)i);
        else
            rand_value(a, MOD);
        FN(from_mpz)(&x, a);

        /* limbs */
        CZ(to_limbs)(l, &x);
        mpz_import(w, N, -1, 8, 0, 0, l);
        CHECK(mpz_cmp(w, a) == 0);
        CHECK_EQ_ERR(CZ(from_limbs)(&y, l), CUZK_OK);
        CHECK(CZ(eq)(&x, &y));

        /* canonical bytes */
        FN(z_to_le)(want_b, a);
        CZ(to_bytes_le)(le, &x);
        CHECK(memcmp(le, want_b, NBYTES) == 0);
        CZ(to_bytes_be)(be, &x);
        FN(reverse)(rev, want_b);
        CHECK(memcmp(be, rev, NBYTES) == 0);
        CHECK_EQ_ERR(CZ(from_bytes_le)(&y, le), CUZK_OK);
        CHECK(CZ(eq)(&x, &y));
        CZ(set_zero)(&y);
        CHECK_EQ_ERR(CZ(from_bytes_be)(&y, be), CUZK_OK);
        CHECK(CZ(eq)(&x, &y));

        /* Montgomery bytes: a*R mod MOD, little-endian */
        mpz_mul(w, a, r2);
        mpz_mod(w, w, MOD);
        FN(z_to_le)(want_b, w);
        CZ(to_mont_bytes_le)(le, &x);
        CHECK(memcmp(le, want_b, NBYTES) == 0);
        CZ(set_zero)(&y);
        CHECK_EQ_ERR(CZ(from_mont_bytes_le)(&y, le), CUZK_OK);
        CHECK(CZ(eq)(&x, &y));

        /* decimal */
        char dec[DECMAX], *gs = mpz_get_str(NULL, 10, a);
        CZ(to_dec)(dec, &x);
        CHECK(strcmp(dec, gs) == 0);
        CZ(set_zero)(&y);
        CHECK_EQ_ERR(CZ(from_dec)(&y, gs), CUZK_OK);
        CHECK(CZ(eq)(&x, &y));
        free(gs);
    }

    /* values >= MOD are refused by every decoder: MOD, MOD+1, MOD+random, 2^(8 NBYTES)-1 */
    for (unsigned long i = 0; i < 4 + iters / 16; i++) {
        T y;
        uint8_t le[NBYTES], be[NBYTES];
        uint64_t l[N];
        size_t cnt;
        switch (i) {
        case 0: mpz_set(a, MOD); break;
        case 1: mpz_add_ui(a, MOD, 1); break;
        case 2:
            mpz_set_ui(a, 0);
            mpz_setbit(a, 8 * NBYTES);
            mpz_sub_ui(a, a, 1);
            break;
        case 3:
            mpz_set_ui(a, 0);
            mpz_setbit(a, 8 * NBYTES - 1); /* top bit alone */
            break;
        default: /* MOD <= a < 2^(8 NBYTES) */
            mpz_set_ui(w, 0);
            mpz_setbit(w, 8 * NBYTES);
            mpz_sub(w, w, MOD);
            rand_below(a, w);
            mpz_add(a, a, MOD);
        }
        FN(z_to_le)(le, a);
        FN(reverse)(be, le);
        memset(l, 0, sizeof l);
        mpz_export(l, &cnt, -1, 8, 0, 0, a);
        CZ(set_u64)(&y, 5);
        CHECK_EQ_ERR(CZ(from_bytes_le)(&y, le), CUZK_ENONCANONICAL);
        CHECK_EQ_ERR(CZ(from_bytes_be)(&y, be), CUZK_ENONCANONICAL);
        CHECK_EQ_ERR(CZ(from_mont_bytes_le)(&y, le), CUZK_ENONCANONICAL);
        CHECK_EQ_ERR(CZ(from_limbs)(&y, l), CUZK_ENONCANONICAL);
        char *gs = mpz_get_str(NULL, 10, a);
        CHECK_EQ_ERR(CZ(from_dec)(&y, gs), CUZK_ENONCANONICAL);
        free(gs);
        T five;
        CZ(set_u64)(&five, 5);
        CHECK(CZ(eq)(&y, &five)); /* failed decodes leave the output alone */
    }

    /* malformed and oversized decimal text */
    {
        T y;
        const char *bad[] = {"", "-1", "+1", " 1", "1 ", "12a", "0x10", "1.0", "1e3", "\xd9\xa1" /* Arabic-Indic one */};
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
            CHECK_EQ_ERR(CZ(from_dec)(&y, bad[k]), CUZK_EPARSE);
        char huge[2001];
        memset(huge, '9', 2000);
        huge[2000] = 0;
        CHECK_EQ_ERR(CZ(from_dec)(&y, huge), CUZK_ENONCANONICAL);
        huge[0] = '1';
        memset(huge + 1, '0', 1999); /* 10^1999 */
        CHECK_EQ_ERR(CZ(from_dec)(&y, huge), CUZK_ENONCANONICAL);
        /* exactly 2^(64N), the first value that overflows the limbs */
        mpz_set_ui(a, 0);
        mpz_setbit(a, 64 * N);
        char *gs = mpz_get_str(NULL, 10, a);
        CHECK_EQ_ERR(CZ(from_dec)(&y, gs), CUZK_ENONCANONICAL);
        free(gs);
        CHECK_EQ_ERR(CZ(from_dec)(&y, "0"), CUZK_OK);
        CHECK(CZ(is_zero)(&y));
        CHECK_EQ_ERR(CZ(from_dec)(&y, "1"), CUZK_OK);
        CHECK(CZ(is_one)(&y));
        /* the longest output fits: MOD - 1 */
        char dec[DECMAX];
        mpz_sub_ui(a, MOD, 1);
        FN(from_mpz)(&y, a);
        CZ(to_dec)(dec, &y);
        CHECK(strlen(dec) == mpz_sizeinbase(a, 10) || strlen(dec) + 1 == mpz_sizeinbase(a, 10));
        CHECK(strlen(dec) < DECMAX);
    }
    mpz_clears(a, w, r2, NULL);
}

static void FN(all)(unsigned long iters)
{
    FN(arith)(iters);
    FN(inv_pow)(iters / 4);
    FN(legendre_sqrt)(iters / 4);
    FN(encodings)(iters);
}

#undef NEDGE
#undef FN
#undef CZ
#endif
