/* SPDX-License-Identifier: Apache-2.0 */
/* Fp6 and Fp12: field laws, inverses, Frobenius maps against plain exponentiation. */
#include <gmp.h>

#include "cuzk/ff.h"
#include "test.h"
#include "test_gmp.h"

static void rand_fp6(cuzk_fp6 *r)
{
    test_rand_fp2(&r->c0);
    test_rand_fp2(&r->c1);
    test_rand_fp2(&r->c2);
}

static void rand_fp12(cuzk_fp12 *r)
{
    rand_fp6(&r->c0);
    rand_fp6(&r->c1);
}

static bool fp6_is_zero(const cuzk_fp6 *a)
{
    cuzk_fp6 z;
    cuzk_fp6_set_zero(&z);
    return cuzk_fp6_eq(a, &z);
}

static bool fp12_is_zero(const cuzk_fp12 *a)
{
    return fp6_is_zero(&a->c0) && fp6_is_zero(&a->c1);
}

/* p - 1 as an Fp element (largest canonical value) */
static void fp_pm1(cuzk_fp *r)
{
    cuzk_fp one;
    cuzk_fp_set_one(&one);
    cuzk_fp_set_zero(r);
    cuzk_fp_sub(r, r, &one);
}

static void test_fp6_laws(void)
{
    unsigned long n = test_iters(60);
    cuzk_fp6 one, zero;
    cuzk_fp6_set_one(&one);
    cuzk_fp6_set_zero(&zero);
    for (unsigned long it = 0; it < n; it++) {
        cuzk_fp6 a, b, c, t0, t1, t2;
        rand_fp6(&a);
        rand_fp6(&b);
        rand_fp6(&c);
        if (it == 0)
            fp_pm1(&a.c2.c1);   /* edge: a p-1 coefficient */
        /* commutativity, associativity, distributivity */
        cuzk_fp6_mul(&t0, &a, &b);
        cuzk_fp6_mul(&t1, &b, &a);
        CHECK(cuzk_fp6_eq(&t0, &t1));
        cuzk_fp6_mul(&t0, &t0, &c);
        cuzk_fp6_mul(&t1, &b, &c);
        cuzk_fp6_mul(&t1, &a, &t1);
        CHECK(cuzk_fp6_eq(&t0, &t1));
        cuzk_fp6_add(&t0, &b, &c);
        cuzk_fp6_mul(&t0, &a, &t0);
        cuzk_fp6_mul(&t1, &a, &b);
        cuzk_fp6_mul(&t2, &a, &c);
        cuzk_fp6_add(&t1, &t1, &t2);
        CHECK(cuzk_fp6_eq(&t0, &t1));
        /* sub/neg */
        cuzk_fp6_sub(&t0, &a, &b);
        cuzk_fp6_neg(&t1, &b);
        cuzk_fp6_add(&t1, &a, &t1);
        CHECK(cuzk_fp6_eq(&t0, &t1));
        /* sqr */
        cuzk_fp6_sqr(&t0, &a);
        cuzk_fp6_mul(&t1, &a, &a);
        CHECK(cuzk_fp6_eq(&t0, &t1));
        /* identity */
        cuzk_fp6_mul(&t0, &a, &one);
        CHECK(cuzk_fp6_eq(&t0, &a));
        cuzk_fp6_mul(&t0, &a, &zero);
        CHECK(fp6_is_zero(&t0));
        /* inverse */
        cuzk_fp6_inv(&t0, &a);
        cuzk_fp6_mul(&t0, &t0, &a);
        CHECK(cuzk_fp6_eq(&t0, &one));
        /* aliasing */
        t0 = a;
        cuzk_fp6_mul(&t0, &t0, &t0);
        cuzk_fp6_sqr(&t1, &a);
        CHECK(cuzk_fp6_eq(&t0, &t1));
        t0 = a;
        cuzk_fp6_inv(&t0, &t0);
        cuzk_fp6_inv(&t1, &a);
        CHECK(cuzk_fp6_eq(&t0, &t1));
        /* mul_by_nonresidue = times v */
        cuzk_fp6 v;
        cuzk_fp6_set_zero(&v);
        cuzk_fp2_set_one(&v.c1);
        cuzk_fp6_mul(&t0, &a, &v);
        cuzk_fp6_mul_by_nonresidue(&t1, &a);
        CHECK(cuzk_fp6_eq(&t0, &t1));
    }
    /* v^3 = 1 + u */
    cuzk_fp6 v, t;
    cuzk_fp6_set_zero(&v);
    cuzk_fp2_set_one(&v.c1);
    cuzk_fp6_sqr(&t, &v);
    cuzk_fp6_mul(&t, &t, &v);
    cuzk_fp6 xi;
    cuzk_fp6_set_zero(&xi);
    cuzk_fp_set_one(&xi.c0.c0);
    cuzk_fp_set_one(&xi.c0.c1);
    CHECK(cuzk_fp6_eq(&t, &xi));
    /* inv(0) = 0, inv(1) = 1 */
    cuzk_fp6_inv(&t, &zero);
    CHECK(fp6_is_zero(&t));
    cuzk_fp6_inv(&t, &one);
    CHECK(cuzk_fp6_eq(&t, &one));
    /* a sparse element (only c2) inverts too */
    cuzk_fp6 a;
    cuzk_fp6_set_zero(&a);
    test_rand_fp2(&a.c2);
    cuzk_fp6_inv(&t, &a);
    cuzk_fp6_mul(&t, &t, &a);
    CHECK(cuzk_fp6_eq(&t, &one));
}

static void test_fp12_laws(void)
{
    unsigned long n = test_iters(40);
    cuzk_fp12 one;
    cuzk_fp12_set_one(&one);
    CHECK(cuzk_fp12_is_one(&one));
    for (unsigned long it = 0; it < n; it++) {
        cuzk_fp12 a, b, c, t0, t1, t2;
        rand_fp12(&a);
        rand_fp12(&b);
        rand_fp12(&c);
        if (it == 0)
            fp_pm1(&b.c1.c0.c0);
        CHECK(!cuzk_fp12_is_one(&a));
        cuzk_fp12_mul(&t0, &a, &b);
        cuzk_fp12_mul(&t1, &b, &a);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        cuzk_fp12_mul(&t0, &t0, &c);
        cuzk_fp12_mul(&t1, &b, &c);
        cuzk_fp12_mul(&t1, &a, &t1);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        /* a (b + c) = ab + ac, with the Fp6 halves added by hand */
        cuzk_fp12 s;
        cuzk_fp6_add(&s.c0, &b.c0, &c.c0);
        cuzk_fp6_add(&s.c1, &b.c1, &c.c1);
        cuzk_fp12_mul(&t0, &a, &s);
        cuzk_fp12_mul(&t1, &a, &b);
        cuzk_fp12_mul(&t2, &a, &c);
        cuzk_fp6_add(&t1.c0, &t1.c0, &t2.c0);
        cuzk_fp6_add(&t1.c1, &t1.c1, &t2.c1);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        cuzk_fp12_sqr(&t0, &a);
        cuzk_fp12_mul(&t1, &a, &a);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        t0 = a;
        cuzk_fp12_sqr(&t0, &t0);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        cuzk_fp12_mul(&t0, &a, &one);
        CHECK(cuzk_fp12_eq(&t0, &a));
        cuzk_fp12_inv(&t0, &a);
        cuzk_fp12_mul(&t0, &t0, &a);
        CHECK(cuzk_fp12_is_one(&t0));
        /* (ab)^-1 = a^-1 b^-1 */
        cuzk_fp12_mul(&t0, &a, &b);
        cuzk_fp12_inv(&t0, &t0);
        cuzk_fp12_inv(&t1, &a);
        cuzk_fp12_inv(&t2, &b);
        cuzk_fp12_mul(&t1, &t1, &t2);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        /* conj is a ring automorphism: conj(ab) = conj(a) conj(b) */
        cuzk_fp12_mul(&t0, &a, &b);
        cuzk_fp12_conj(&t0, &t0);
        cuzk_fp12_conj(&t1, &a);
        cuzk_fp12_conj(&t2, &b);
        cuzk_fp12_mul(&t1, &t1, &t2);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        /* eq distinguishes a single differing coefficient */
        t0 = a;
        cuzk_fp_add(&t0.c1.c2.c1, &t0.c1.c2.c1, &one.c0.c0.c0);
        CHECK(!cuzk_fp12_eq(&t0, &a));
    }
    /* w^2 = v */
    cuzk_fp12 w, t;
    cuzk_fp6_set_zero(&w.c0);
    cuzk_fp6_set_one(&w.c1);
    cuzk_fp12_sqr(&t, &w);
    CHECK(fp6_is_zero(&t.c1));
    CHECK(cuzk_fp2_is_zero(&t.c0.c0) && cuzk_fp2_is_one(&t.c0.c1) && cuzk_fp2_is_zero(&t.c0.c2));
    /* inv(0) = 0 */
    cuzk_fp12 z;
    cuzk_fp6_set_zero(&z.c0);
    cuzk_fp6_set_zero(&z.c1);
    cuzk_fp12_inv(&t, &z);
    CHECK(fp12_is_zero(&t));
    CHECK(!cuzk_fp12_is_one(&z));
}

static void test_pow(void)
{
    cuzk_fp12 a, t0, t1, one;
    cuzk_fp12_set_one(&one);
    rand_fp12(&a);
    uint64_t e[2] = { 0, 0 };
    cuzk_fp12_pow(&t0, &a, e, 1);
    CHECK(cuzk_fp12_is_one(&t0));
    cuzk_fp12_pow(&t0, &a, e, 0);
    CHECK(cuzk_fp12_is_one(&t0));
    e[0] = 1;
    cuzk_fp12_pow(&t0, &a, e, 2);
    CHECK(cuzk_fp12_eq(&t0, &a));
    /* a^13 by repeated multiplication */
    e[0] = 13;
    cuzk_fp12_pow(&t0, &a, e, 1);
    t1 = one;
    for (int i = 0; i < 13; i++)
        cuzk_fp12_mul(&t1, &t1, &a);
    CHECK(cuzk_fp12_eq(&t0, &t1));
    /* a^(2^64 + 3) = (a^(2^32))^(2^32) a^3 */
    e[0] = 3;
    e[1] = 1;
    cuzk_fp12_pow(&t0, &a, e, 2);
    t1 = a;
    for (int i = 0; i < 64; i++)
        cuzk_fp12_sqr(&t1, &t1);
    cuzk_fp12 a3;
    cuzk_fp12_sqr(&a3, &a);
    cuzk_fp12_mul(&a3, &a3, &a);
    cuzk_fp12_mul(&t1, &t1, &a3);
    CHECK(cuzk_fp12_eq(&t0, &t1));
    /* Fermat: a^(p^12 - 1) = 1 */
    mpz_t p, q;
    mpz_inits(p, q, NULL);
    test_mpz_fp_modulus(p);
    mpz_pow_ui(q, p, 12);
    mpz_sub_ui(q, q, 1);
    uint64_t big[80];
    size_t nl = test_mpz_to_limbs(big, 80, q);
    cuzk_fp12_pow(&t0, &a, big, nl);
    CHECK(cuzk_fp12_is_one(&t0));
    mpz_clears(p, q, NULL);
}

static void test_frobenius(void)
{
    mpz_t p, pk;
    mpz_inits(p, pk, NULL);
    test_mpz_fp_modulus(p);
    uint64_t e[80];
    unsigned long n = test_iters(3);
    for (unsigned long it = 0; it < n; it++) {
        cuzk_fp12 a, b, t0, t1;
        rand_fp12(&a);
        rand_fp12(&b);
        /* frobenius(a, k) = a^(p^k), against the plain power for k = 1, 2, 3 (and 6 for
         * the first round: every gamma row is checked through the compositions below) */
        mpz_set_ui(pk, 1);
        for (unsigned k = 1; k <= 6; k++) {
            mpz_mul(pk, pk, p);
            if (k > 3 && !(k == 6 && it == 0))
                continue;
            size_t nl = test_mpz_to_limbs(e, 80, pk);
            cuzk_fp12_pow(&t0, &a, e, nl);
            cuzk_fp12_frobenius(&t1, &a, k);
            CHECK(cuzk_fp12_eq(&t0, &t1));
        }
        /* frobenius(a, k) = frobenius(., 1) applied k times, k = 0..11 */
        t0 = a;
        for (unsigned k = 0; k < 12; k++) {
            cuzk_fp12_frobenius(&t1, &a, k);
            CHECK(cuzk_fp12_eq(&t0, &t1));
            cuzk_fp12_frobenius(&t0, &t0, 1);
        }
        CHECK(cuzk_fp12_eq(&t0, &a));   /* Frobenius^12 = identity */
        CHECK(!cuzk_fp12_eq(&t1, &a));  /* while Frobenius^11 is not */
        cuzk_fp12_frobenius(&t0, &a, 12);
        CHECK(cuzk_fp12_eq(&t0, &a));
        cuzk_fp12_frobenius(&t0, &a, 6);
        cuzk_fp12_conj(&t1, &a);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        /* multiplicative: frob(ab) = frob(a) frob(b); aliasing */
        for (unsigned k = 1; k < 12; k += 4) {
            cuzk_fp12_mul(&t0, &a, &b);
            cuzk_fp12_frobenius(&t0, &t0, k);
            cuzk_fp12 fa, fb;
            cuzk_fp12_frobenius(&fa, &a, k);
            cuzk_fp12_frobenius(&fb, &b, k);
            cuzk_fp12_mul(&t1, &fa, &fb);
            CHECK(cuzk_fp12_eq(&t0, &t1));
        }
        /* an element of Fp is fixed */
        cuzk_fp12 c;
        cuzk_fp12_set_one(&c);
        test_rand_fp(&c.c0.c0.c0);
        cuzk_fp12_frobenius(&t0, &c, 1);
        CHECK(cuzk_fp12_eq(&t0, &c));
    }
    mpz_clears(p, pk, NULL);
}

static void test_bytes(void)
{
    cuzk_fp12 a;
    rand_fp12(&a);
    uint8_t out[576];
    cuzk_fp12_to_bytes_be(out, &a);
    const cuzk_fp *order[12] = {
        &a.c0.c0.c0, &a.c0.c0.c1, &a.c0.c1.c0, &a.c0.c1.c1, &a.c0.c2.c0, &a.c0.c2.c1,
        &a.c1.c0.c0, &a.c1.c0.c1, &a.c1.c1.c0, &a.c1.c1.c1, &a.c1.c2.c0, &a.c1.c2.c1,
    };
    for (int i = 0; i < 12; i++) {
        uint8_t b[48];
        cuzk_fp_to_bytes_be(b, order[i]);
        CHECK(memcmp(b, out + 48 * i, 48) == 0);
    }
    /* one: only byte 47 is 1 */
    cuzk_fp12_set_one(&a);
    cuzk_fp12_to_bytes_be(out, &a);
    int ok = out[47] == 1;
    for (int i = 0; i < 576; i++)
        if (i != 47 && out[i])
            ok = 0;
    CHECK(ok);
}

int main(void)
{
    test_init("test_fp12");
    test_fp6_laws();
    test_fp12_laws();
    test_pow();
    test_frobenius();
    test_bytes();
    return test_finish();
}
