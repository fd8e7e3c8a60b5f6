/* SPDX-License-Identifier: Apache-2.0 */
/* Fr, the 255-bit scalar field of BLS12-381, in Montgomery form with R = 2^256. */
#include <stdlib.h>

#include "cuzk/ff.h"
#include "ff/ff_internal.h"

/* r */
static const uint64_t FR_P[4] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                                 0x73eda753299d7d48ULL};
/* 2^256 mod r: one in Montgomery form */
static const uint64_t FR_ONE[4] = {0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
                                   0x1824b159acc5056fULL};
/* 2^512 mod r: to-Montgomery factor */
static const uint64_t FR_R2[4] = {0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL,
                                  0x0748d9d99f59ff11ULL};
/* -r^(-1) mod 2^64 */
#define FR_N0 0xfffffffeffffffffULL

const cuzk_fr CUZK_FR_MODULUS = {{0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                                  0x73eda753299d7d48ULL}};

#define F fr
#define T cuzk_fr
#define N 4
#define MODULUS FR_P
#define ONE FR_ONE
#define R2 FR_R2
#define N0 FR_N0
#define ADX_MUL cuzk_fr_mul_adx_
#define ADX_SQR cuzk_fr_sqr_adx_
#define DEC_MAX CUZK_FR_DEC_MAX
#include "ff/field_impl.h"

void cuzk_fr_from_bytes_le_reduce(cuzk_fr *r, const uint8_t in[32])
{
    uint64_t l[4];
    fr_le_load(l, in);
    /* Any l < 2^256 works here: l*R2 < 2^256*r, so the Montgomery product is < 2r and
     * ends reduced; it equals l*R mod r. */
    mont_mul(r->l, l, FR_R2, FR_P, FR_N0, 4);
}

void cuzk_fr_generator(cuzk_fr *r, cuzk_roots family) { cuzk_fr_set_u64(r, (uint64_t)family); }

/* (r-1) >> k as limbs */
static void fr_pm1_shr(uint64_t e[4], unsigned k)
{
    memcpy(e, FR_P, 4 * sizeof(uint64_t));
    e[0] -= 1; /* r is odd: no borrow */
    while (k >= 63) {
        limbs_shr(e, e, 63, 4);
        k -= 63;
    }
    if (k)
        limbs_shr(e, e, k, 4);
}

cuzk_err cuzk_fr_root_of_unity(cuzk_fr *r, unsigned log2_n, cuzk_roots family)
{
    if (log2_n > CUZK_FR_TWO_ADICITY || (family != CUZK_ROOTS_SNARKJS && family != CUZK_ROOTS_BELLMAN))
        return CUZK_EINVAL;
    uint64_t e[4];
    cuzk_fr g;
    fr_pm1_shr(e, log2_n);
    cuzk_fr_generator(&g, family);
    cuzk_fr_pow(r, &g, e, 4);
    return CUZK_OK;
}

/* Tonelli-Shanks with r - 1 = 2^32 * q; 5 (a generator of Fr*) is a non-residue. */
bool cuzk_fr_sqrt(cuzk_fr *r, const cuzk_fr *a)
{
    if (cuzk_fr_is_zero(a)) {
        cuzk_fr_set_zero(r);
        return true;
    }
    if (cuzk_fr_legendre(a) != 1)
        return false;
    uint64_t q[4], q1[4];
    fr_pm1_shr(q, CUZK_FR_TWO_ADICITY);
    memcpy(q1, q, sizeof q);
    limbs_add_small(q1, 1, 4);
    limbs_shr(q1, q1, 1, 4); /* (q+1)/2 */
    cuzk_fr z, c, x, t, b, tt;
    cuzk_fr_set_u64(&z, 5);
    cuzk_fr_pow(&c, &z, q, 4);
    cuzk_fr_pow(&x, a, q1, 4);
    cuzk_fr_pow(&t, a, q, 4);
    unsigned m = CUZK_FR_TWO_ADICITY;
    while (!cuzk_fr_is_one(&t)) {
        unsigned i = 0;
        tt = t;
        while (!cuzk_fr_is_one(&tt)) {
            cuzk_fr_sqr(&tt, &tt);
            i++;
        }
        b = c;
        for (unsigned j = 0; j + i + 1 < m; j++)
            cuzk_fr_sqr(&b, &b);
        m = i;
        cuzk_fr_sqr(&c, &b);
        cuzk_fr_mul(&x, &x, &b);
        cuzk_fr_mul(&t, &t, &c);
    }
    *r = x;
    return true;
}

void cuzk_fr_batch_inv_var(cuzk_fr *r, const cuzk_fr *a, size_t n, cuzk_fr *scratch)
{
    cuzk_fr acc, inv, t;
    cuzk_fr_set_one(&acc);
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc; /* product of the nonzero a[0..i-1] */
        if (!cuzk_fr_is_zero(&a[i]))
            cuzk_fr_mul(&acc, &acc, &a[i]);
    }
    cuzk_fr_inv_var(&inv, &acc);
    for (size_t i = n; i-- > 0;) {
        if (cuzk_fr_is_zero(&a[i])) {
            cuzk_fr_set_zero(&r[i]);
            continue;
        }
        cuzk_fr_mul(&t, &inv, &scratch[i]);
        cuzk_fr_mul(&inv, &inv, &a[i]);
        r[i] = t;
    }
}
