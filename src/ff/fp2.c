/* SPDX-License-Identifier: Apache-2.0 */
/* Fp2 = Fp[u]/(u^2 + 1). */
#include <string.h>

#include "cuzk/ff.h"
#include "ff/ff_inline.h"
#include "ff/limbs.h"

void cuzk_fp2_set_zero(cuzk_fp2 *r) { memset(r, 0, sizeof *r); }
void cuzk_fp2_set_one(cuzk_fp2 *r)
{
    cuzk_fp_set_one(&r->c0);
    cuzk_fp_set_zero(&r->c1);
}
bool cuzk_fp2_is_zero(const cuzk_fp2 *a) { return cuzk_fpi_is_zero(&a->c0) & cuzk_fpi_is_zero(&a->c1); }
bool cuzk_fp2_is_one(const cuzk_fp2 *a) { return cuzk_fp_is_one(&a->c0) & cuzk_fpi_is_zero(&a->c1); }
bool cuzk_fp2_eq(const cuzk_fp2 *a, const cuzk_fp2 *b)
{
    return cuzk_fpi_eq(&a->c0, &b->c0) & cuzk_fpi_eq(&a->c1, &b->c1);
}
void cuzk_fp2_cmov(cuzk_fp2 *r, const cuzk_fp2 *a, bool flag)
{
    cuzk_fp_cmov(&r->c0, &a->c0, flag);
    cuzk_fp_cmov(&r->c1, &a->c1, flag);
}
void cuzk_fp2_add(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *b)
{
    cuzk_fpi_add(&r->c0, &a->c0, &b->c0);
    cuzk_fpi_add(&r->c1, &a->c1, &b->c1);
}
void cuzk_fp2_sub(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *b)
{
    cuzk_fpi_sub(&r->c0, &a->c0, &b->c0);
    cuzk_fpi_sub(&r->c1, &a->c1, &b->c1);
}
void cuzk_fp2_dbl(cuzk_fp2 *r, const cuzk_fp2 *a)
{
    cuzk_fpi_dbl(&r->c0, &a->c0);
    cuzk_fpi_dbl(&r->c1, &a->c1);
}
void cuzk_fp2_neg(cuzk_fp2 *r, const cuzk_fp2 *a)
{
    cuzk_fp_neg(&r->c0, &a->c0);
    cuzk_fp_neg(&r->c1, &a->c1);
}
void cuzk_fp2_conj(cuzk_fp2 *r, const cuzk_fp2 *a)
{
    r->c0 = a->c0;
    cuzk_fp_neg(&r->c1, &a->c1);
}

/* Karatsuba with one reduction per coordinate (the ADX back end): the three products are
 * kept whole (768 bits) and combined before reducing. c1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1
 * = a0 b1 + a1 b0 < 2p^2; c0 = a0 b0 - a1 b1, plus p*2^384 when negative; both below
 * p*2^384, the reduction's bound. The sums a0 + a1 < 2p need no reduction. */
static void fp2_mul_lazy(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *b)
{
    uint64_t t0[12], t1[12], t2[12], sa[6], sb[6], pm[6];
    limbs_add(sa, a->c0.l, a->c1.l, 6);
    limbs_add(sb, b->c0.l, b->c1.l, 6);
    cuzk_fp_mul_wide_adx_(t0, a->c0.l, b->c0.l);
    cuzk_fp_mul_wide_adx_(t1, a->c1.l, b->c1.l);
    cuzk_fp_mul_wide_adx_(t2, sa, sb);
    limbs_sub(t2, t2, t0, 12);
    limbs_sub(t2, t2, t1, 12);
    uint64_t m = limbs_mask(limbs_sub(t0, t0, t1, 12));
    for (int i = 0; i < 6; i++)
        pm[i] = CUZK_FP_MODULUS.l[i] & m;
    limbs_add(t0 + 6, t0 + 6, pm, 6);
    cuzk_fp_redc_adx_(r->c0.l, t0);
    cuzk_fp_redc_adx_(r->c1.l, t2);
}

/* Karatsuba: (a0 + a1 u)(b0 + b1 u) = (a0 b0 - a1 b1) + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u */
void cuzk_fp2_mul(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *b)
{
    if (cuzk_ff_adx_enabled_) {
        fp2_mul_lazy(r, a, b);
        return;
    }
    cuzk_fp t0, t1, s0, s1;
    cuzk_fpi_mul(&t0, &a->c0, &b->c0);
    cuzk_fpi_mul(&t1, &a->c1, &b->c1);
    cuzk_fpi_add(&s0, &a->c0, &a->c1);
    cuzk_fpi_add(&s1, &b->c0, &b->c1);
    cuzk_fpi_mul(&s0, &s0, &s1);
    cuzk_fpi_sub(&s0, &s0, &t0);
    cuzk_fpi_sub(&r->c1, &s0, &t1);
    cuzk_fpi_sub(&r->c0, &t0, &t1);
}

/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u */
void cuzk_fp2_sqr(cuzk_fp2 *r, const cuzk_fp2 *a)
{
    cuzk_fp s, d, m;
    cuzk_fpi_add(&s, &a->c0, &a->c1);
    cuzk_fpi_sub(&d, &a->c0, &a->c1);
    cuzk_fpi_mul(&m, &a->c0, &a->c1);
    cuzk_fpi_mul(&r->c0, &s, &d);
    cuzk_fpi_dbl(&r->c1, &m);
}

void cuzk_fp2_mul_fp(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp *b)
{
    cuzk_fpi_mul(&r->c0, &a->c0, b);
    cuzk_fpi_mul(&r->c1, &a->c1, b);
}

/* (a0 + a1 u)(1 + u) = (a0 - a1) + (a0 + a1) u */
void cuzk_fp2_mul_by_nonresidue(cuzk_fp2 *r, const cuzk_fp2 *a)
{
    cuzk_fp t;
    cuzk_fpi_sub(&t, &a->c0, &a->c1);
    cuzk_fpi_add(&r->c1, &a->c0, &a->c1);
    r->c0 = t;
}

/* 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2) */
void cuzk_fp2_inv(cuzk_fp2 *r, const cuzk_fp2 *a)
{
    cuzk_fp n, t;
    cuzk_fpi_sqr(&n, &a->c0);
    cuzk_fpi_sqr(&t, &a->c1);
    cuzk_fpi_add(&n, &n, &t);
    cuzk_fp_inv(&n, &n);
    cuzk_fpi_mul(&r->c0, &a->c0, &n);
    cuzk_fpi_mul(&r->c1, &a->c1, &n);
    cuzk_fp_neg(&r->c1, &r->c1);
}

/* Left-to-right square and multiply; the exponent is public. */
void cuzk_fp2_pow(cuzk_fp2 *r, const cuzk_fp2 *a, const uint64_t *e, size_t nlimbs)
{
    cuzk_fp2 acc, base = *a, t;
    cuzk_fp2_set_one(&acc);
    for (size_t i = nlimbs; i-- > 0;) {
        for (int b = 63; b >= 0; b--) {
            cuzk_fp2_sqr(&acc, &acc);
            cuzk_fp2_mul(&t, &acc, &base);
            cuzk_fp2_cmov(&acc, &t, (e[i] >> b) & 1);
        }
    }
    *r = acc;
}

/* a is a square in Fp2 iff its norm a0^2 + a1^2 is a square in Fp. */
int cuzk_fp2_legendre(const cuzk_fp2 *a)
{
    cuzk_fp n, t;
    cuzk_fpi_sqr(&n, &a->c0);
    cuzk_fpi_sqr(&t, &a->c1);
    cuzk_fpi_add(&n, &n, &t);
    return cuzk_fp_legendre(&n);
}

/*
 * p = 3 mod 4 (Adj and Rodriguez-Henriquez, "Square root computation over even extension
 * fields", Algorithm 9): a1 = a^((p-3)/4), alpha = a1^2 a, x0 = a1 a;
 * alpha = -1: x = u x0; else x = (1 + alpha)^((p-1)/2) x0. Then check x^2 = a.
 */
bool cuzk_fp2_sqrt(cuzk_fp2 *r, const cuzk_fp2 *a)
{
    uint64_t e1[6], e2[6];
    const uint64_t *p = CUZK_FP_MODULUS.l;
    memcpy(e1, p, sizeof e1);
    limbs_sub_small(e1, 3, 6);
    limbs_shr(e1, e1, 2, 6);     /* (p-3)/4 */
    limbs_shr(e2, p, 1, 6);      /* (p-1)/2 */

    cuzk_fp2 a1, alpha, x0, x, t, minus_one;
    cuzk_fp2_pow(&a1, a, e1, 6);
    cuzk_fp2_sqr(&alpha, &a1);
    cuzk_fp2_mul(&alpha, &alpha, a);
    cuzk_fp2_mul(&x0, &a1, a);
    cuzk_fp2_set_one(&minus_one);
    cuzk_fp2_neg(&minus_one, &minus_one);
    if (cuzk_fp2_eq(&alpha, &minus_one)) {
        /* u * (x0.c0 + x0.c1 u) = -x0.c1 + x0.c0 u */
        cuzk_fp_neg(&x.c0, &x0.c1);
        x.c1 = x0.c0;
    } else {
        cuzk_fp2_set_one(&t);
        cuzk_fp2_add(&t, &t, &alpha);
        cuzk_fp2_pow(&t, &t, e2, 6);
        cuzk_fp2_mul(&x, &t, &x0);
    }
    cuzk_fp2_sqr(&t, &x);
    if (!cuzk_fp2_eq(&t, a))
        return false;
    *r = x;
    return true;
}

bool cuzk_fp2_lexicographically_largest(const cuzk_fp2 *a)
{
    if (!cuzk_fpi_is_zero(&a->c1))
        return cuzk_fp_lexicographically_largest(&a->c1);
    return cuzk_fp_lexicographically_largest(&a->c0);
}
