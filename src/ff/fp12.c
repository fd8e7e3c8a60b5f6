/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fp6 = Fp2[v]/(v^3 - xi), xi = 1 + u, and Fp12 = Fp6[w]/(w^2 - v).
 *
 * Seen over Fp2, an Fp12 element is sum_j a_j w^j (j = 0..5, w^6 = xi) with
 *   a_0 = c0.c0, a_1 = c1.c0, a_2 = c0.c1, a_3 = c1.c1, a_4 = c0.c2, a_5 = c1.c2.
 * The p^k-power Frobenius map sends a_j w^j to conj^k(a_j) * gamma_k[j] * w^j with
 *   gamma_k[j] = xi^(j (p^k - 1) / 6)    (p = 1 mod 6),
 * since w^(p^k) = w * (w^6)^((p^k - 1)/6). The coefficients are derived here at first use
 * from p (no hand-typed tables); tests compare frobenius(a, k) with a^(p^k).
 */
#include <pthread.h>
#include <string.h>

#include "cuzk/ff.h"

/* ---------------------------------------------------------------- Fp6 ---- */

void cuzk_fp6_set_zero(cuzk_fp6 *r)
{
    cuzk_fp2_set_zero(&r->c0);
    cuzk_fp2_set_zero(&r->c1);
    cuzk_fp2_set_zero(&r->c2);
}

void cuzk_fp6_set_one(cuzk_fp6 *r)
{
    cuzk_fp2_set_one(&r->c0);
    cuzk_fp2_set_zero(&r->c1);
    cuzk_fp2_set_zero(&r->c2);
}

bool cuzk_fp6_eq(const cuzk_fp6 *a, const cuzk_fp6 *b)
{
    return cuzk_fp2_eq(&a->c0, &b->c0) & cuzk_fp2_eq(&a->c1, &b->c1) &
           cuzk_fp2_eq(&a->c2, &b->c2);
}

void cuzk_fp6_add(cuzk_fp6 *r, const cuzk_fp6 *a, const cuzk_fp6 *b)
{
    cuzk_fp2_add(&r->c0, &a->c0, &b->c0);
    cuzk_fp2_add(&r->c1, &a->c1, &b->c1);
    cuzk_fp2_add(&r->c2, &a->c2, &b->c2);
}

void cuzk_fp6_sub(cuzk_fp6 *r, const cuzk_fp6 *a, const cuzk_fp6 *b)
{
    cuzk_fp2_sub(&r->c0, &a->c0, &b->c0);
    cuzk_fp2_sub(&r->c1, &a->c1, &b->c1);
    cuzk_fp2_sub(&r->c2, &a->c2, &b->c2);
}

void cuzk_fp6_neg(cuzk_fp6 *r, const cuzk_fp6 *a)
{
    cuzk_fp2_neg(&r->c0, &a->c0);
    cuzk_fp2_neg(&r->c1, &a->c1);
    cuzk_fp2_neg(&r->c2, &a->c2);
}

/* Karatsuba over the three coefficients (6 Fp2 multiplications):
 *   r0 = t0 + xi*((a1+a2)(b1+b2) - t1 - t2)
 *   r1 = (a0+a1)(b0+b1) - t0 - t1 + xi*t2
 *   r2 = (a0+a2)(b0+b2) - t0 - t2 + t1,      ti = ai*bi */
void cuzk_fp6_mul(cuzk_fp6 *r, const cuzk_fp6 *a, const cuzk_fp6 *b)
{
    cuzk_fp2 t0, t1, t2, s, u, r0, r1, r2;
    cuzk_fp2_mul(&t0, &a->c0, &b->c0);
    cuzk_fp2_mul(&t1, &a->c1, &b->c1);
    cuzk_fp2_mul(&t2, &a->c2, &b->c2);

    cuzk_fp2_add(&s, &a->c1, &a->c2);
    cuzk_fp2_add(&u, &b->c1, &b->c2);
    cuzk_fp2_mul(&r0, &s, &u);
    cuzk_fp2_sub(&r0, &r0, &t1);
    cuzk_fp2_sub(&r0, &r0, &t2);
    cuzk_fp2_mul_by_nonresidue(&r0, &r0);
    cuzk_fp2_add(&r0, &r0, &t0);

    cuzk_fp2_add(&s, &a->c0, &a->c1);
    cuzk_fp2_add(&u, &b->c0, &b->c1);
    cuzk_fp2_mul(&r1, &s, &u);
    cuzk_fp2_sub(&r1, &r1, &t0);
    cuzk_fp2_sub(&r1, &r1, &t1);
    cuzk_fp2_mul_by_nonresidue(&s, &t2);
    cuzk_fp2_add(&r1, &r1, &s);

    cuzk_fp2_add(&s, &a->c0, &a->c2);
    cuzk_fp2_add(&u, &b->c0, &b->c2);
    cuzk_fp2_mul(&r2, &s, &u);
    cuzk_fp2_sub(&r2, &r2, &t0);
    cuzk_fp2_sub(&r2, &r2, &t2);
    cuzk_fp2_add(&r2, &r2, &t1);

    r->c0 = r0;
    r->c1 = r1;
    r->c2 = r2;
}

/* Chung-Hasan style squaring (2 multiplications, 3 squarings in Fp2):
 *   s0 = a0^2, s1 = 2 a0 a1, s2 = (a0 - a1 + a2)^2, s3 = 2 a1 a2, s4 = a2^2
 *   r0 = s0 + xi s3, r1 = s1 + xi s4, r2 = s1 + s2 + s3 - s0 - s4 (= a1^2 + 2 a0 a2) */
void cuzk_fp6_sqr(cuzk_fp6 *r, const cuzk_fp6 *a)
{
    cuzk_fp2 s0, s1, s2, s3, s4, t;
    cuzk_fp2_sqr(&s0, &a->c0);
    cuzk_fp2_mul(&s1, &a->c0, &a->c1);
    cuzk_fp2_dbl(&s1, &s1);
    cuzk_fp2_sub(&s2, &a->c0, &a->c1);
    cuzk_fp2_add(&s2, &s2, &a->c2);
    cuzk_fp2_sqr(&s2, &s2);
    cuzk_fp2_mul(&s3, &a->c1, &a->c2);
    cuzk_fp2_dbl(&s3, &s3);
    cuzk_fp2_sqr(&s4, &a->c2);

    cuzk_fp2_add(&r->c2, &s1, &s2);
    cuzk_fp2_add(&r->c2, &r->c2, &s3);
    cuzk_fp2_sub(&r->c2, &r->c2, &s0);
    cuzk_fp2_sub(&r->c2, &r->c2, &s4);
    cuzk_fp2_mul_by_nonresidue(&t, &s3);
    cuzk_fp2_add(&r->c0, &s0, &t);
    cuzk_fp2_mul_by_nonresidue(&t, &s4);
    cuzk_fp2_add(&r->c1, &s1, &t);
}

/* (a0 + a1 v + a2 v^2) v = xi a2 + a0 v + a1 v^2 */
void cuzk_fp6_mul_by_nonresidue(cuzk_fp6 *r, const cuzk_fp6 *a)
{
    cuzk_fp2 t;
    cuzk_fp2_mul_by_nonresidue(&t, &a->c2);
    r->c2 = a->c1;
    r->c1 = a->c0;
    r->c0 = t;
}

/* 1/a = (c0 + c1 v + c2 v^2) / N with
 *   c0 = a0^2 - xi a1 a2, c1 = xi a2^2 - a0 a1, c2 = a1^2 - a0 a2,
 *   N = a0 c0 + xi (a2 c1 + a1 c2) in Fp2. inv(0) = 0. */
void cuzk_fp6_inv(cuzk_fp6 *r, const cuzk_fp6 *a)
{
    cuzk_fp2 c0, c1, c2, t, n;
    cuzk_fp2_sqr(&c0, &a->c0);
    cuzk_fp2_mul(&t, &a->c1, &a->c2);
    cuzk_fp2_mul_by_nonresidue(&t, &t);
    cuzk_fp2_sub(&c0, &c0, &t);

    cuzk_fp2_sqr(&c1, &a->c2);
    cuzk_fp2_mul_by_nonresidue(&c1, &c1);
    cuzk_fp2_mul(&t, &a->c0, &a->c1);
    cuzk_fp2_sub(&c1, &c1, &t);

    cuzk_fp2_sqr(&c2, &a->c1);
    cuzk_fp2_mul(&t, &a->c0, &a->c2);
    cuzk_fp2_sub(&c2, &c2, &t);

    cuzk_fp2_mul(&n, &a->c2, &c1);
    cuzk_fp2_mul(&t, &a->c1, &c2);
    cuzk_fp2_add(&n, &n, &t);
    cuzk_fp2_mul_by_nonresidue(&n, &n);
    cuzk_fp2_mul(&t, &a->c0, &c0);
    cuzk_fp2_add(&n, &n, &t);
    cuzk_fp2_inv(&n, &n);

    cuzk_fp2_mul(&r->c0, &c0, &n);
    cuzk_fp2_mul(&r->c1, &c1, &n);
    cuzk_fp2_mul(&r->c2, &c2, &n);
}

/* --------------------------------------------------------------- Fp12 ---- */

void cuzk_fp12_set_one(cuzk_fp12 *r)
{
    cuzk_fp6_set_one(&r->c0);
    cuzk_fp6_set_zero(&r->c1);
}

bool cuzk_fp12_is_one(const cuzk_fp12 *a)
{
    cuzk_fp12 one;
    cuzk_fp12_set_one(&one);
    return cuzk_fp12_eq(a, &one);
}

bool cuzk_fp12_eq(const cuzk_fp12 *a, const cuzk_fp12 *b)
{
    return cuzk_fp6_eq(&a->c0, &b->c0) & cuzk_fp6_eq(&a->c1, &b->c1);
}

/* Karatsuba: r0 = a0 b0 + v a1 b1, r1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1 */
void cuzk_fp12_mul(cuzk_fp12 *r, const cuzk_fp12 *a, const cuzk_fp12 *b)
{
    cuzk_fp6 t0, t1, s, u;
    cuzk_fp6_mul(&t0, &a->c0, &b->c0);
    cuzk_fp6_mul(&t1, &a->c1, &b->c1);
    cuzk_fp6_add(&s, &a->c0, &a->c1);
    cuzk_fp6_add(&u, &b->c0, &b->c1);
    cuzk_fp6_mul(&s, &s, &u);
    cuzk_fp6_sub(&s, &s, &t0);
    cuzk_fp6_sub(&r->c1, &s, &t1);
    cuzk_fp6_mul_by_nonresidue(&t1, &t1);
    cuzk_fp6_add(&r->c0, &t0, &t1);
}

/* Complex squaring: with t = a0 a1,
 *   r0 = (a0 + a1)(a0 + v a1) - t - v t = a0^2 + v a1^2, r1 = 2t */
void cuzk_fp12_sqr(cuzk_fp12 *r, const cuzk_fp12 *a)
{
    cuzk_fp6 t, s, u;
    cuzk_fp6_mul(&t, &a->c0, &a->c1);
    cuzk_fp6_add(&s, &a->c0, &a->c1);
    cuzk_fp6_mul_by_nonresidue(&u, &a->c1);
    cuzk_fp6_add(&u, &u, &a->c0);
    cuzk_fp6_mul(&s, &s, &u);
    cuzk_fp6_sub(&s, &s, &t);
    cuzk_fp6_mul_by_nonresidue(&u, &t);
    cuzk_fp6_sub(&r->c0, &s, &u);
    cuzk_fp6_add(&r->c1, &t, &t);
}

/* 1/(a0 + a1 w) = (a0 - a1 w) / (a0^2 - v a1^2) */
void cuzk_fp12_inv(cuzk_fp12 *r, const cuzk_fp12 *a)
{
    cuzk_fp6 t0, t1;
    cuzk_fp6_sqr(&t0, &a->c0);
    cuzk_fp6_sqr(&t1, &a->c1);
    cuzk_fp6_mul_by_nonresidue(&t1, &t1);
    cuzk_fp6_sub(&t0, &t0, &t1);
    cuzk_fp6_inv(&t0, &t0);
    cuzk_fp6_mul(&r->c0, &a->c0, &t0);
    cuzk_fp6_mul(&r->c1, &a->c1, &t0);
    cuzk_fp6_neg(&r->c1, &r->c1);
}

void cuzk_fp12_conj(cuzk_fp12 *r, const cuzk_fp12 *a)
{
    r->c0 = a->c0;
    cuzk_fp6_neg(&r->c1, &a->c1);
}

/* gamma[k][j] = xi^(j (p^k - 1)/6), k = 0..11, j = 0..5 (see the top of the file). */
static cuzk_fp2 frob_gamma[12][6];
static pthread_once_t frob_once = PTHREAD_ONCE_INIT;

static void frob_init(void)
{
    /* e = (p - 1)/6: subtract 1 (p is odd, so no borrow past limb 0), then long division
     * by 6 from the top limb. */
    uint64_t e[CUZK_FP_LIMBS];
    memcpy(e, CUZK_FP_MODULUS.l, sizeof e);
    e[0] -= 1;
    unsigned __int128 rem = 0;
    for (int i = CUZK_FP_LIMBS - 1; i >= 0; i--) {
        unsigned __int128 cur = (rem << 64) | e[i];
        e[i] = (uint64_t)(cur / 6);
        rem = cur % 6;
    }
    /* rem is 0 because p = 1 mod 6; the tests check gamma against a^(p^k) anyway. */

    cuzk_fp2 xi, g1[6];
    cuzk_fp_set_one(&xi.c0);
    cuzk_fp_set_one(&xi.c1);
    cuzk_fp2_set_one(&g1[0]);
    cuzk_fp2_pow(&g1[1], &xi, e, CUZK_FP_LIMBS);
    for (int j = 2; j < 6; j++)
        cuzk_fp2_mul(&g1[j], &g1[j - 1], &g1[1]);

    /* xi^(j(p^k-1)/6) = xi^(j(p^(k-1)-1)/6) * (xi^(j(p-1)/6))^(p^(k-1)), and the p^(k-1)
     * power of an Fp2 element is conj^(k-1). */
    for (int j = 0; j < 6; j++)
        cuzk_fp2_set_one(&frob_gamma[0][j]);
    for (int k = 1; k < 12; k++) {
        for (int j = 0; j < 6; j++) {
            cuzk_fp2 g = g1[j];
            if ((k - 1) & 1)
                cuzk_fp2_conj(&g, &g);
            cuzk_fp2_mul(&frob_gamma[k][j], &frob_gamma[k - 1][j], &g);
        }
    }
}

void cuzk_fp12_frobenius(cuzk_fp12 *r, const cuzk_fp12 *a, unsigned power)
{
    power %= 12;
    if (power == 0) {
        *r = *a;
        return;
    }
    pthread_once(&frob_once, frob_init);
    const cuzk_fp2 *g = frob_gamma[power];
    cuzk_fp2 *out[6] = { &r->c0.c0, &r->c1.c0, &r->c0.c1, &r->c1.c1, &r->c0.c2, &r->c1.c2 };
    const cuzk_fp2 *in[6] = { &a->c0.c0, &a->c1.c0, &a->c0.c1, &a->c1.c1, &a->c0.c2, &a->c1.c2 };
    for (int j = 0; j < 6; j++) {
        cuzk_fp2 t;
        if (power & 1)
            cuzk_fp2_conj(&t, in[j]);
        else
            t = *in[j];
        if (j == 0)
            *out[0] = t;
        else if (cuzk_fp_is_zero(&g[j].c1))   /* even powers: gamma lies in Fp */
            cuzk_fp2_mul_fp(out[j], &t, &g[j].c0);
        else
            cuzk_fp2_mul(out[j], &t, &g[j]);
    }
}

static void fp12_cmov(cuzk_fp12 *r, const cuzk_fp12 *a, bool flag)
{
    cuzk_fp2 *rr[6] = { &r->c0.c0, &r->c0.c1, &r->c0.c2, &r->c1.c0, &r->c1.c1, &r->c1.c2 };
    const cuzk_fp2 *aa[6] = { &a->c0.c0, &a->c0.c1, &a->c0.c2, &a->c1.c0, &a->c1.c1, &a->c1.c2 };
    for (int j = 0; j < 6; j++)
        cuzk_fp2_cmov(rr[j], aa[j], flag);
}

/* Left-to-right square and always multiply, keeping the product by a constant-time move. */
void cuzk_fp12_pow(cuzk_fp12 *r, const cuzk_fp12 *a, const uint64_t *e, size_t nlimbs)
{
    cuzk_fp12 acc, base = *a, t;
    cuzk_fp12_set_one(&acc);
    for (size_t i = nlimbs; i-- > 0;) {
        for (int b = 63; b >= 0; b--) {
            cuzk_fp12_sqr(&acc, &acc);
            cuzk_fp12_mul(&t, &acc, &base);
            fp12_cmov(&acc, &t, (e[i] >> b) & 1);
        }
    }
    *r = acc;
}

void cuzk_fp12_to_bytes_be(uint8_t out[576], const cuzk_fp12 *a)
{
    const cuzk_fp6 *c[2] = { &a->c0, &a->c1 };
    for (int i = 0; i < 2; i++) {
        const cuzk_fp2 *d[3] = { &c[i]->c0, &c[i]->c1, &c[i]->c2 };
        for (int j = 0; j < 3; j++) {
            cuzk_fp_to_bytes_be(out, &d[j]->c0);
            cuzk_fp_to_bytes_be(out + CUZK_FP_BYTES, &d[j]->c1);
            out += 2 * CUZK_FP_BYTES;
        }
    }
}
