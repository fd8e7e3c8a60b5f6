/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BLS12-381 fields: Fp (381-bit base field), Fr (255-bit scalar field) and the tower
 * Fp2 = Fp[u]/(u^2+1), Fp6 = Fp2[v]/(v^3-(u+1)), Fp12 = Fp6[w]/(w^2-v).
 *
 * Elements are kept in Montgomery form (Fp: R = 2^384, Fr: R = 2^256) with 64-bit limbs,
 * least significant first. Every operation accepts aliased arguments (r may equal a or b).
 * Conversions to and from bytes or text happen only at the edges, through the functions
 * named *_bytes_* and *_dec_*. Functions without the _var suffix run in constant time with
 * respect to the values of their arguments.
 */
#ifndef CUZK_FF_H
#define CUZK_FF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/error.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

#define CUZK_FP_LIMBS 6
#define CUZK_FR_LIMBS 4
#define CUZK_FP_BYTES 48
#define CUZK_FR_BYTES 32

typedef struct { uint64_t l[CUZK_FP_LIMBS]; } cuzk_fp;   /* x*2^384 mod p */
typedef struct { uint64_t l[CUZK_FR_LIMBS]; } cuzk_fr;   /* x*2^256 mod r */
typedef struct { cuzk_fp c0, c1; } cuzk_fp2;              /* c0 + c1*u */
typedef struct { cuzk_fp2 c0, c1, c2; } cuzk_fp6;         /* c0 + c1*v + c2*v^2 */
typedef struct { cuzk_fp6 c0, c1; } cuzk_fp12;            /* c0 + c1*w */

/* ---- multiplication back end (portable C or x86-64 MULX/ADX) ----
 * At start-up the process uses MULX/ADX when the CPU has it (CPUID), else the portable
 * code; only cuzk_ff_set_impl changes that (the library reads no environment variable). */
typedef enum { CUZK_FF_PORTABLE = 0, CUZK_FF_ADX = 1 } cuzk_ff_impl;
/* Selects the back end for the whole process. CUZK_EUNSUPPORTED if the CPU lacks it. Call
 * it before other threads use the field (it is a plain process-wide switch). */
cuzk_err cuzk_ff_set_impl(cuzk_ff_impl impl) CUZK_WUR;
cuzk_ff_impl cuzk_ff_get_impl(void);
bool cuzk_ff_adx_available(void);
/* "portable" or "adx" (the names of cuzk-bench micro --impl and CUZK_FF_IMPL); parse gives
 * CUZK_EINVAL, naming the value, for any other. */
const char *cuzk_ff_impl_name(cuzk_ff_impl impl);
cuzk_err cuzk_ff_impl_parse(cuzk_ff_impl *out, const char *name) CUZK_WUR;

/* ---- Fp ---- */
extern const cuzk_fp CUZK_FP_MODULUS;   /* p itself, canonical limbs (not Montgomery) */
void cuzk_fp_set_zero(cuzk_fp *r);
void cuzk_fp_set_one(cuzk_fp *r);
void cuzk_fp_set_u64(cuzk_fp *r, uint64_t v);
bool cuzk_fp_is_zero(const cuzk_fp *a);
bool cuzk_fp_is_one(const cuzk_fp *a);
bool cuzk_fp_eq(const cuzk_fp *a, const cuzk_fp *b);
void cuzk_fp_cmov(cuzk_fp *r, const cuzk_fp *a, bool flag);  /* r = flag ? a : r */
void cuzk_fp_add(cuzk_fp *r, const cuzk_fp *a, const cuzk_fp *b);
void cuzk_fp_sub(cuzk_fp *r, const cuzk_fp *a, const cuzk_fp *b);
void cuzk_fp_dbl(cuzk_fp *r, const cuzk_fp *a);
void cuzk_fp_neg(cuzk_fp *r, const cuzk_fp *a);
void cuzk_fp_mul(cuzk_fp *r, const cuzk_fp *a, const cuzk_fp *b);
void cuzk_fp_sqr(cuzk_fp *r, const cuzk_fp *a);
void cuzk_fp_mul_portable(cuzk_fp *r, const cuzk_fp *a, const cuzk_fp *b);
void cuzk_fp_sqr_portable(cuzk_fp *r, const cuzk_fp *a);
void cuzk_fp_inv(cuzk_fp *r, const cuzk_fp *a);        /* constant time; inv(0) = 0 */
void cuzk_fp_inv_var(cuzk_fp *r, const cuzk_fp *a);    /* variable time; inv(0) = 0 */
/* r = a^e, e given as nlimbs 64-bit limbs (little-endian); time depends only on nlimbs. */
void cuzk_fp_pow(cuzk_fp *r, const cuzk_fp *a, const uint64_t *e, size_t nlimbs);
int cuzk_fp_legendre(const cuzk_fp *a);                /* 1 square, -1 non-square, 0 zero */
bool cuzk_fp_sqrt(cuzk_fp *r, const cuzk_fp *a);       /* false (r unchanged) if none */
bool cuzk_fp_is_odd(const cuzk_fp *a);                 /* parity of the canonical value */
bool cuzk_fp_lexicographically_largest(const cuzk_fp *a); /* canonical a > (p-1)/2 */
/* Canonical (standard form) limbs <-> Montgomery. from_* returns CUZK_ENONCANONICAL if >= p. */
cuzk_err cuzk_fp_from_limbs(cuzk_fp *r, const uint64_t in[CUZK_FP_LIMBS]) CUZK_WUR;
void cuzk_fp_to_limbs(uint64_t out[CUZK_FP_LIMBS], const cuzk_fp *a);
/* Canonical value as 48 bytes, little- or big-endian. */
cuzk_err cuzk_fp_from_bytes_le(cuzk_fp *r, const uint8_t in[CUZK_FP_BYTES]) CUZK_WUR;
cuzk_err cuzk_fp_from_bytes_be(cuzk_fp *r, const uint8_t in[CUZK_FP_BYTES]) CUZK_WUR;
void cuzk_fp_to_bytes_le(uint8_t out[CUZK_FP_BYTES], const cuzk_fp *a);
void cuzk_fp_to_bytes_be(uint8_t out[CUZK_FP_BYTES], const cuzk_fp *a);
/* Montgomery value x*2^384 mod p as 48 little-endian bytes (snarkjs's layout). */
cuzk_err cuzk_fp_from_mont_bytes_le(cuzk_fp *r, const uint8_t in[CUZK_FP_BYTES]) CUZK_WUR;
void cuzk_fp_to_mont_bytes_le(uint8_t out[CUZK_FP_BYTES], const cuzk_fp *a);
/* Decimal text. from: digits only, value < p (CUZK_EPARSE / CUZK_ENONCANONICAL).
 * to: writes at most CUZK_FP_DEC_MAX bytes including the NUL. */
#define CUZK_FP_DEC_MAX 120
cuzk_err cuzk_fp_from_dec(cuzk_fp *r, const char *s) CUZK_WUR;
void cuzk_fp_to_dec(char out[CUZK_FP_DEC_MAX], const cuzk_fp *a);

/* ---- Fr ---- */
extern const cuzk_fr CUZK_FR_MODULUS;   /* r itself, canonical limbs */
void cuzk_fr_set_zero(cuzk_fr *r);
void cuzk_fr_set_one(cuzk_fr *r);
void cuzk_fr_set_u64(cuzk_fr *r, uint64_t v);
bool cuzk_fr_is_zero(const cuzk_fr *a);
bool cuzk_fr_is_one(const cuzk_fr *a);
bool cuzk_fr_eq(const cuzk_fr *a, const cuzk_fr *b);
void cuzk_fr_cmov(cuzk_fr *r, const cuzk_fr *a, bool flag);
void cuzk_fr_add(cuzk_fr *r, const cuzk_fr *a, const cuzk_fr *b);
void cuzk_fr_sub(cuzk_fr *r, const cuzk_fr *a, const cuzk_fr *b);
void cuzk_fr_dbl(cuzk_fr *r, const cuzk_fr *a);
void cuzk_fr_neg(cuzk_fr *r, const cuzk_fr *a);
void cuzk_fr_mul(cuzk_fr *r, const cuzk_fr *a, const cuzk_fr *b);
void cuzk_fr_sqr(cuzk_fr *r, const cuzk_fr *a);
void cuzk_fr_mul_portable(cuzk_fr *r, const cuzk_fr *a, const cuzk_fr *b);
void cuzk_fr_sqr_portable(cuzk_fr *r, const cuzk_fr *a);
void cuzk_fr_inv(cuzk_fr *r, const cuzk_fr *a);        /* constant time; inv(0) = 0 */
void cuzk_fr_inv_var(cuzk_fr *r, const cuzk_fr *a);
void cuzk_fr_pow(cuzk_fr *r, const cuzk_fr *a, const uint64_t *e, size_t nlimbs);
int cuzk_fr_legendre(const cuzk_fr *a);
bool cuzk_fr_sqrt(cuzk_fr *r, const cuzk_fr *a);
/* r[i] = 1/a[i] for n elements with one inversion (Montgomery's trick); zeros stay zero.
 * scratch: n elements. Variable time. */
void cuzk_fr_batch_inv_var(cuzk_fr *r, const cuzk_fr *a, size_t n, cuzk_fr *scratch);
cuzk_err cuzk_fr_from_limbs(cuzk_fr *r, const uint64_t in[CUZK_FR_LIMBS]) CUZK_WUR;
void cuzk_fr_to_limbs(uint64_t out[CUZK_FR_LIMBS], const cuzk_fr *a);
cuzk_err cuzk_fr_from_bytes_le(cuzk_fr *r, const uint8_t in[CUZK_FR_BYTES]) CUZK_WUR;
cuzk_err cuzk_fr_from_bytes_be(cuzk_fr *r, const uint8_t in[CUZK_FR_BYTES]) CUZK_WUR;
void cuzk_fr_to_bytes_le(uint8_t out[CUZK_FR_BYTES], const cuzk_fr *a);
void cuzk_fr_to_bytes_be(uint8_t out[CUZK_FR_BYTES], const cuzk_fr *a);
cuzk_err cuzk_fr_from_mont_bytes_le(cuzk_fr *r, const uint8_t in[CUZK_FR_BYTES]) CUZK_WUR;
void cuzk_fr_to_mont_bytes_le(uint8_t out[CUZK_FR_BYTES], const cuzk_fr *a);
/* Reduces any 256-bit little-endian value mod r (for hashing to Fr / random sampling). */
void cuzk_fr_from_bytes_le_reduce(cuzk_fr *r, const uint8_t in[CUZK_FR_BYTES]);
#define CUZK_FR_DEC_MAX 80
cuzk_err cuzk_fr_from_dec(cuzk_fr *r, const char *s) CUZK_WUR;
void cuzk_fr_to_dec(char out[CUZK_FR_DEC_MAX], const cuzk_fr *a);

/* Roots of unity. Two families: snarkjs/ffjavascript take 5 as the generator, bellman,
 * blst and arkworks take 7. omega_(2^k) = g^((r-1)/2^k), k <= CUZK_FR_TWO_ADICITY. */
#define CUZK_FR_TWO_ADICITY 32
typedef enum { CUZK_ROOTS_SNARKJS = 5, CUZK_ROOTS_BELLMAN = 7 } cuzk_roots;
cuzk_err cuzk_fr_root_of_unity(cuzk_fr *r, unsigned log2_n, cuzk_roots family) CUZK_WUR;
/* The multiplicative generator of the family (5 or 7) in Montgomery form. */
void cuzk_fr_generator(cuzk_fr *r, cuzk_roots family);

/* ---- Fp2 (u^2 = -1) ---- */
void cuzk_fp2_set_zero(cuzk_fp2 *r);
void cuzk_fp2_set_one(cuzk_fp2 *r);
bool cuzk_fp2_is_zero(const cuzk_fp2 *a);
bool cuzk_fp2_is_one(const cuzk_fp2 *a);
bool cuzk_fp2_eq(const cuzk_fp2 *a, const cuzk_fp2 *b);
void cuzk_fp2_cmov(cuzk_fp2 *r, const cuzk_fp2 *a, bool flag);
void cuzk_fp2_add(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *b);
void cuzk_fp2_sub(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *b);
void cuzk_fp2_dbl(cuzk_fp2 *r, const cuzk_fp2 *a);
void cuzk_fp2_neg(cuzk_fp2 *r, const cuzk_fp2 *a);
void cuzk_fp2_conj(cuzk_fp2 *r, const cuzk_fp2 *a);          /* c0 - c1*u (Frobenius) */
void cuzk_fp2_mul(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *b);
void cuzk_fp2_sqr(cuzk_fp2 *r, const cuzk_fp2 *a);
void cuzk_fp2_mul_fp(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp *b);
void cuzk_fp2_mul_by_nonresidue(cuzk_fp2 *r, const cuzk_fp2 *a); /* times (1+u) */
void cuzk_fp2_inv(cuzk_fp2 *r, const cuzk_fp2 *a);           /* constant time; inv(0)=0 */
void cuzk_fp2_pow(cuzk_fp2 *r, const cuzk_fp2 *a, const uint64_t *e, size_t nlimbs);
int cuzk_fp2_legendre(const cuzk_fp2 *a);                    /* via the norm */
bool cuzk_fp2_sqrt(cuzk_fp2 *r, const cuzk_fp2 *a);          /* false (r unchanged) if none */
/* zcash "sign": compare c1 first, c0 when c1 = 0 (lexicographically largest). */
bool cuzk_fp2_lexicographically_largest(const cuzk_fp2 *a);

/* ---- Fp6, Fp12 (src/ff/fp12.c) ---- */
void cuzk_fp6_set_zero(cuzk_fp6 *r);
void cuzk_fp6_set_one(cuzk_fp6 *r);
bool cuzk_fp6_eq(const cuzk_fp6 *a, const cuzk_fp6 *b);
void cuzk_fp6_add(cuzk_fp6 *r, const cuzk_fp6 *a, const cuzk_fp6 *b);
void cuzk_fp6_sub(cuzk_fp6 *r, const cuzk_fp6 *a, const cuzk_fp6 *b);
void cuzk_fp6_neg(cuzk_fp6 *r, const cuzk_fp6 *a);
void cuzk_fp6_mul(cuzk_fp6 *r, const cuzk_fp6 *a, const cuzk_fp6 *b);
void cuzk_fp6_sqr(cuzk_fp6 *r, const cuzk_fp6 *a);
void cuzk_fp6_mul_by_nonresidue(cuzk_fp6 *r, const cuzk_fp6 *a); /* times v */
void cuzk_fp6_inv(cuzk_fp6 *r, const cuzk_fp6 *a);

void cuzk_fp12_set_one(cuzk_fp12 *r);
bool cuzk_fp12_is_one(const cuzk_fp12 *a);
bool cuzk_fp12_eq(const cuzk_fp12 *a, const cuzk_fp12 *b);
void cuzk_fp12_mul(cuzk_fp12 *r, const cuzk_fp12 *a, const cuzk_fp12 *b);
void cuzk_fp12_sqr(cuzk_fp12 *r, const cuzk_fp12 *a);
void cuzk_fp12_inv(cuzk_fp12 *r, const cuzk_fp12 *a);
void cuzk_fp12_conj(cuzk_fp12 *r, const cuzk_fp12 *a);       /* c0 - c1*w = a^(p^6) */
void cuzk_fp12_frobenius(cuzk_fp12 *r, const cuzk_fp12 *a, unsigned power); /* a^(p^power) */
void cuzk_fp12_pow(cuzk_fp12 *r, const cuzk_fp12 *a, const uint64_t *e, size_t nlimbs);
/* Canonical big-endian bytes of the 12 Fp coefficients in tower order
 * c0.c0.c0, c0.c0.c1, c0.c1.c0, ..., c1.c2.c1 (576 bytes); used for known-answer tests. */
void cuzk_fp12_to_bytes_be(uint8_t out[576], const cuzk_fp12 *a);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
