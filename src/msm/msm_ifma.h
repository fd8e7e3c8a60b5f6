/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The G1 batch-affine buckets on AVX-512 IFMA (msm_ifma.c): eight bucket additions at once,
 * one per 64-bit lane, in radix 2^52.
 *
 * A coordinate is kept as x * 2^416 mod p (Montgomery form with R = 2^416), 8 limbs of 52
 * bits, the value below 2p (not always fully reduced). Buckets and the bases they take are
 * stored so (msm_g1_r52, 128 bytes); everything else in the MSM stays in the library's
 * form (x * 2^384, 6 limbs of 64 bits).
 */
#ifndef CUZK_MSM_IFMA_H
#define CUZK_MSM_IFMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/ec.h"

typedef struct {
    uint64_t l[8];
} msm_r52;

typedef struct {
    msm_r52 x, y;
} msm_g1_r52;

typedef struct {
    msm_r52 x[2], y[2]; /* c0 + c1 u */
} msm_g2_r52;

/* The CPU has AVX-512F and IFMA and the OS saves the zmm registers (checked once). */
bool msm_ifma_available(void);

/* out[i] = in[i] in the form above; infinity (0, 0) stays (0, 0). */
void msm_ifma_g1_from_affine(msm_g1_r52 *out, const cuzk_g1_affine *in, size_t n);
/* The library's form, fully reduced; (0, 0) stays (0, 0). */
void msm_ifma_g1_to_affine(cuzk_g1_affine *out, const msm_g1_r52 *in);
/* r = -a (y = p - y). */
void msm_ifma_g1_neg(msm_g1_r52 *r, const msm_g1_r52 *a);
/* The same for G2 (each coordinate's two parts as above). */
void msm_ifma_g2_from_affine(msm_g2_r52 *out, const cuzk_g2_affine *in, size_t n);
void msm_ifma_g2_to_affine(cuzk_g2_affine *out, const msm_g2_r52 *in);
void msm_ifma_g2_neg(msm_g2_r52 *r, const msm_g2_r52 *a);
/* out[i] = in[i] in the library's form for each i < n with flag[i] & mask (the others are
 * not written) */
void msm_ifma_g1_to_affine_sel(cuzk_g1_affine *out, const msm_g1_r52 *in, const uint8_t *flag,
                               uint8_t mask, size_t n);
void msm_ifma_g2_to_affine_sel(cuzk_g2_affine *out, const msm_g2_r52 *in, const uint8_t *flag,
                               uint8_t mask, size_t n);

/* a is infinity, (0, 0) */
static inline bool msm_ifma_g1_is_inf(const msm_g1_r52 *a)
{
    uint64_t o = 0;
    for (unsigned j = 0; j < 8; j++)
        o |= a->x.l[j] | a->y.l[j];
    return o == 0;
}
static inline bool msm_ifma_g2_is_inf(const msm_g2_r52 *a)
{
    uint64_t o = 0;
    for (unsigned j = 0; j < 8; j++)
        o |= a->x[0].l[j] | a->x[1].l[j] | a->y[0].l[j] | a->y[1].l[j];
    return o == 0;
}

/* One pending addition: bucket j += (neg ? -p : p). */
typedef struct {
    uint32_t j;
    uint32_t neg;
    const void *p;       /* msm_g1_r52 or msm_g2_r52 */
    const void *lib;     /* the caller's: the same point in the library's form (not read) */
} msm_ifma_ent;

/* Scratch bytes msm_ifma_g?_flush needs for up to cap entries (64-byte aligned). */
size_t msm_ifma_work_bytes(size_t cap);

/* Applies the m entries (their buckets distinct, each holding a point other than infinity)
 * with one shared inversion. An entry whose point has the bucket's x (a doubling, or a sum
 * that is infinity) is left undone: its index goes to special[] (at most m) and the count
 * is returned, for the caller to add it another way. */
size_t msm_ifma_g1_flush(msm_g1_r52 *buckets, const msm_ifma_ent *ent, size_t m, void *work,
                         uint32_t *special);
size_t msm_ifma_g2_flush(msm_g2_r52 *buckets, const msm_ifma_ent *ent, size_t m, void *work,
                         uint32_t *special);

#endif
