/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inline forms of the Fp and Fp2 operations the point formulas and the MSM call most, for
 * src/ec and src/msm (internal): the cheap ones (addition, subtraction, comparisons) cost
 * little more than the call that reached them, and the products go to their back end
 * without a second call. Same contracts as the cuzk_fp_* and cuzk_fp2_* functions of
 * cuzk/ff.h; the operations not listed here are those functions.
 *   #define EC_FF(op) cuzk_fpi_##op     (or cuzk_fp2i_##op)
 */
#ifndef CUZK_FF_INLINE_H
#define CUZK_FF_INLINE_H

#include "cuzk/ff.h"
#include "ff/ff_internal.h"
#include "ff/limbs.h"

static inline void cuzk_fpi_add(cuzk_fp *r, const cuzk_fp *a, const cuzk_fp *b)
{
#ifdef CUZK_FF_X86_ASM
    cuzk_fp_add_x86_(r->l, a->l, b->l);
#else
    cuzk_fp_add(r, a, b);
#endif
}

static inline void cuzk_fpi_sub(cuzk_fp *r, const cuzk_fp *a, const cuzk_fp *b)
{
#ifdef CUZK_FF_X86_ASM
    cuzk_fp_sub_x86_(r->l, a->l, b->l);
#else
    cuzk_fp_sub(r, a, b);
#endif
}

static inline void cuzk_fpi_dbl(cuzk_fp *r, const cuzk_fp *a) { cuzk_fpi_add(r, a, a); }

static inline void cuzk_fpi_mul(cuzk_fp *r, const cuzk_fp *a, const cuzk_fp *b)
{
    if (cuzk_ff_adx_enabled_)
        cuzk_fp_mul_adx_(r->l, a->l, b->l);
    else
        cuzk_fp_mul_portable(r, a, b);
}

static inline void cuzk_fpi_sqr(cuzk_fp *r, const cuzk_fp *a)
{
    if (cuzk_ff_adx_enabled_)
        cuzk_fp_sqr_adx_(r->l, a->l);
    else
        cuzk_fp_sqr_portable(r, a);
}

static inline bool cuzk_fpi_is_zero(const cuzk_fp *a) { return limbs_is_zero(a->l, 6); }
static inline bool cuzk_fpi_eq(const cuzk_fp *a, const cuzk_fp *b) { return limbs_eq(a->l, b->l, 6); }

#define cuzk_fpi_cmov cuzk_fp_cmov
#define cuzk_fpi_inv cuzk_fp_inv
#define cuzk_fpi_inv_var cuzk_fp_inv_var
#define cuzk_fpi_neg cuzk_fp_neg
#define cuzk_fpi_set_one cuzk_fp_set_one
#define cuzk_fpi_set_zero cuzk_fp_set_zero

static inline void cuzk_fp2i_add(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *b)
{
    cuzk_fpi_add(&r->c0, &a->c0, &b->c0);
    cuzk_fpi_add(&r->c1, &a->c1, &b->c1);
}

static inline void cuzk_fp2i_sub(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *b)
{
    cuzk_fpi_sub(&r->c0, &a->c0, &b->c0);
    cuzk_fpi_sub(&r->c1, &a->c1, &b->c1);
}

static inline void cuzk_fp2i_dbl(cuzk_fp2 *r, const cuzk_fp2 *a) { cuzk_fp2i_add(r, a, a); }

static inline bool cuzk_fp2i_is_zero(const cuzk_fp2 *a)
{
    return cuzk_fpi_is_zero(&a->c0) & cuzk_fpi_is_zero(&a->c1);
}

static inline bool cuzk_fp2i_eq(const cuzk_fp2 *a, const cuzk_fp2 *b)
{
    return cuzk_fpi_eq(&a->c0, &b->c0) & cuzk_fpi_eq(&a->c1, &b->c1);
}

#define cuzk_fp2i_mul cuzk_fp2_mul
#define cuzk_fp2i_sqr cuzk_fp2_sqr
#define cuzk_fp2i_cmov cuzk_fp2_cmov
#define cuzk_fp2i_inv cuzk_fp2_inv
#define cuzk_fp2i_neg cuzk_fp2_neg
#define cuzk_fp2i_set_one cuzk_fp2_set_one
#define cuzk_fp2i_set_zero cuzk_fp2_set_zero

#endif
