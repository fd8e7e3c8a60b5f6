/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BLS12-381 groups. G1: y^2 = x^3 + 4 over Fp. G2: y^2 = x^3 + 4(1+u) over Fp2.
 *
 * Coordinates:
 *   affine   (x, y); the point at infinity is x = y = 0 (not on the curve, so unambiguous);
 *   Jacobian (X, Y, Z) = (X/Z^2, Y/Z^3); infinity has Z = 0;
 *   XYZZ     (X, Y, ZZ, ZZZ) = (X/ZZ, Y/ZZZ) with ZZ^3 = ZZZ^2; infinity has ZZ = 0.
 * G1 and G2 functions have the same names with g1/g2 and the same contracts. Functions named
 * _var branch on their inputs (fine for public data such as MSM bases and witness-derived
 * sums); the others run in constant time. Outputs may alias inputs.
 */
#ifndef CUZK_EC_H
#define CUZK_EC_H

#include "cuzk/ff.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

typedef struct { cuzk_fp x, y; } cuzk_g1_affine;
typedef struct { cuzk_fp x, y, z; } cuzk_g1_jac;
typedef struct { cuzk_fp x, y, zz, zzz; } cuzk_g1_xyzz;
typedef struct { cuzk_fp2 x, y; } cuzk_g2_affine;
typedef struct { cuzk_fp2 x, y, z; } cuzk_g2_jac;
typedef struct { cuzk_fp2 x, y, zz, zzz; } cuzk_g2_xyzz;

/* Flags for decoders. */
#define CUZK_DECODE_CHECK_SUBGROUP 1u   /* also reject points outside the r-torsion */

#define CUZK_EC_DECLARE_(G, F, AFF, JAC, XYZZ)                                               \
    void cuzk_##G##_generator(AFF *r);                                                       \
    void cuzk_##G##_affine_set_inf(AFF *r);                                                  \
    bool cuzk_##G##_affine_is_inf(const AFF *a);                                             \
    bool cuzk_##G##_affine_eq(const AFF *a, const AFF *b);                                   \
    void cuzk_##G##_affine_neg(AFF *r, const AFF *a);                                        \
    bool cuzk_##G##_affine_is_on_curve(const AFF *a);  /* infinity counts as on the curve */ \
    bool cuzk_##G##_affine_in_subgroup(const AFF *a);  /* on the curve and r*a = O */        \
    void cuzk_##G##_jac_set_inf(JAC *r);                                                     \
    bool cuzk_##G##_jac_is_inf(const JAC *a);                                                \
    bool cuzk_##G##_jac_eq(const JAC *a, const JAC *b);  /* same point, any Z */             \
    void cuzk_##G##_jac_from_affine(JAC *r, const AFF *a);                                   \
    void cuzk_##G##_jac_to_affine(AFF *r, const JAC *a);                                     \
    bool cuzk_##G##_jac_is_on_curve(const JAC *a);                                           \
    void cuzk_##G##_jac_neg(JAC *r, const JAC *a);                                           \
    void cuzk_##G##_jac_dbl(JAC *r, const JAC *a);                                           \
    void cuzk_##G##_jac_add_var(JAC *r, const JAC *a, const JAC *b);                         \
    void cuzk_##G##_jac_add_affine_var(JAC *r, const JAC *a, const AFF *b);                  \
    /* Constant-time complete addition (no exceptional cases, no branches). */               \
    void cuzk_##G##_jac_add(JAC *r, const JAC *a, const JAC *b);                             \
    /* r = k*a, k given as nbits bits in little-endian 64-bit limbs. */                      \
    void cuzk_##G##_mul_var(JAC *r, const JAC *a, const uint64_t *k, size_t nbits);          \
    void cuzk_##G##_mul(JAC *r, const JAC *a, const uint64_t *k, size_t nbits);              \
    void cuzk_##G##_mul_fr(JAC *r, const JAC *a, const cuzk_fr *k); /* constant time */      \
    /* r = k*G for the standard generator, affine; constant time, no secret left behind. */  \
    void cuzk_##G##_generator_mul(AFF *r, const cuzk_fr *k);                                 \
    /* out[i] = affine(in[i]) with one field inversion; n may be 0. Uses out as scratch. */  \
    void cuzk_##G##_batch_to_affine(AFF *out, const JAC *in, size_t n);                      \
    void cuzk_##G##_xyzz_set_inf(XYZZ *r);                                                   \
    bool cuzk_##G##_xyzz_is_inf(const XYZZ *a);                                              \
    void cuzk_##G##_xyzz_from_affine(XYZZ *r, const AFF *a);                                 \
    void cuzk_##G##_xyzz_to_jac(JAC *r, const XYZZ *a);                                      \
    void cuzk_##G##_xyzz_to_affine(AFF *r, const XYZZ *a);                                   \
    void cuzk_##G##_xyzz_neg(XYZZ *r, const XYZZ *a);                                        \
    void cuzk_##G##_xyzz_dbl_var(XYZZ *r, const XYZZ *a);                                    \
    void cuzk_##G##_xyzz_add_var(XYZZ *r, const XYZZ *a, const XYZZ *b);                     \
    void cuzk_##G##_xyzz_add_affine_var(XYZZ *r, const XYZZ *a, const AFF *b);               \
    void cuzk_##G##_xyzz_sub_affine_var(XYZZ *r, const XYZZ *a, const AFF *b); /* a - b */

CUZK_EC_DECLARE_(g1, cuzk_fp, cuzk_g1_affine, cuzk_g1_jac, cuzk_g1_xyzz)
CUZK_EC_DECLARE_(g2, cuzk_fp2, cuzk_g2_affine, cuzk_g2_jac, cuzk_g2_xyzz)

/* ---- encodings ----
 * snarkjs: affine, each Fp coordinate 48 bytes little-endian in Montgomery form
 *   (x*2^384 mod p); G1 x||y (96 bytes), G2 x.c0||x.c1||y.c0||y.c1 (192); infinity all zero.
 * zcash/bellperson: canonical big-endian; G2 coordinates c1||c0. Byte 0 carries flags:
 *   0x80 compressed, 0x40 infinity, 0x20 sign (y lexicographically largest; compressed only).
 *   Uncompressed G1 96 / G2 192 bytes; compressed G1 48 / G2 96 bytes.
 * Decoders check canonical coordinates, flags, the curve equation, and with
 * CUZK_DECODE_CHECK_SUBGROUP the subgroup, each failure with its own error code. */
cuzk_err cuzk_g1_from_snarkjs(cuzk_g1_affine *r, const uint8_t in[96], unsigned flags) CUZK_WUR;
void cuzk_g1_to_snarkjs(uint8_t out[96], const cuzk_g1_affine *a);
cuzk_err cuzk_g2_from_snarkjs(cuzk_g2_affine *r, const uint8_t in[192], unsigned flags) CUZK_WUR;
void cuzk_g2_to_snarkjs(uint8_t out[192], const cuzk_g2_affine *a);

cuzk_err cuzk_g1_from_uncompressed(cuzk_g1_affine *r, const uint8_t in[96], unsigned flags) CUZK_WUR;
void cuzk_g1_to_uncompressed(uint8_t out[96], const cuzk_g1_affine *a);
cuzk_err cuzk_g1_from_compressed(cuzk_g1_affine *r, const uint8_t in[48], unsigned flags) CUZK_WUR;
void cuzk_g1_to_compressed(uint8_t out[48], const cuzk_g1_affine *a);
cuzk_err cuzk_g2_from_uncompressed(cuzk_g2_affine *r, const uint8_t in[192], unsigned flags) CUZK_WUR;
void cuzk_g2_to_uncompressed(uint8_t out[192], const cuzk_g2_affine *a);
cuzk_err cuzk_g2_from_compressed(cuzk_g2_affine *r, const uint8_t in[96], unsigned flags) CUZK_WUR;
void cuzk_g2_to_compressed(uint8_t out[96], const cuzk_g2_affine *a);

/* Decimal affine coordinates as snarkjs's JSON has them (canonical values).
 * G1: x, y. G2: x.c0, x.c1, y.c0, y.c1. The point (0, 0) is infinity. */
cuzk_err cuzk_g1_from_dec(cuzk_g1_affine *r, const char *x, const char *y, unsigned flags) CUZK_WUR;
cuzk_err cuzk_g2_from_dec(cuzk_g2_affine *r, const char *const xy[4], unsigned flags) CUZK_WUR;

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
