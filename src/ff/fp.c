/* SPDX-License-Identifier: Apache-2.0 */
/* Fp, the 381-bit base field of BLS12-381, in Montgomery form with R = 2^384. */
#include "cuzk/ff.h"
#include "ff/ff_internal.h"

/* p */
static const uint64_t FP_P[6] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                                 0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
/* 2^384 mod p: one in Montgomery form */
static const uint64_t FP_ONE[6] = {0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                                   0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL};
/* 2^768 mod p: to-Montgomery factor */
static const uint64_t FP_R2[6] = {0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL, 0x8de5476c4c95b6d5ULL,
                                  0x67eb88a9939d83c0ULL, 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL};
/* -p^(-1) mod 2^64 */
#define FP_N0 0x89f3fffcfffcfffdULL

const cuzk_fp CUZK_FP_MODULUS = {{0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                                  0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL}};

#define F fp
#define T cuzk_fp
#define N 6
#define MODULUS FP_P
#define ONE FP_ONE
#define R2 FP_R2
#define N0 FP_N0
#define ADX_MUL cuzk_fp_mul_adx_
#define ADX_SQR cuzk_fp_sqr_adx_
#define DEC_MAX CUZK_FP_DEC_MAX
#ifdef CUZK_FF_X86_ASM
#define FAST_ADD cuzk_fp_add_x86_
#define FAST_SUB cuzk_fp_sub_x86_
#endif
#include "ff/field_impl.h"

/* p = 3 mod 4, so a square a has the roots +-a^((p+1)/4). */
bool cuzk_fp_sqrt(cuzk_fp *r, const cuzk_fp *a)
{
    uint64_t e[6];
    cuzk_fp s, chk;
    memcpy(e, FP_P, sizeof e);
    limbs_add_small(e, 1, 6);
    limbs_shr(e, e, 2, 6);
    cuzk_fp_pow(&s, a, e, 6);
    cuzk_fp_sqr(&chk, &s);
    if (!cuzk_fp_eq(&chk, a))
        return false;
    *r = s;
    return true;
}

bool cuzk_fp_is_odd(const cuzk_fp *a)
{
    uint64_t l[6];
    cuzk_fp_to_limbs(l, a);
    return l[0] & 1;
}

bool cuzk_fp_lexicographically_largest(const cuzk_fp *a)
{
    /* canonical a > (p-1)/2  <=>  (p-1)/2 < a */
    uint64_t l[6], half[6];
    cuzk_fp_to_limbs(l, a);
    limbs_shr(half, FP_P, 1, 6);
    return limbs_lt(half, l, 6);
}
