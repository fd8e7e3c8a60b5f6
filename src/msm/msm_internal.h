/* SPDX-License-Identifier: Apache-2.0 */
/* Pieces of the MSM shared by G1 and G2 (msm_common.c) and the per-group template. */
#ifndef CUZK_MSM_INTERNAL_H
#define CUZK_MSM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/msm.h"

/* Scalars are below 2^255, so signed windows must cover bits [0, 256): the top window's
 * carry-out (bit K*c - 1) is then 0. */
#define MSM_SCALAR_BITS 255
#define MSM_AUTO_WINDOW_MAX 20  /* the cost model never picks a larger window than this */

typedef struct {
    unsigned c;          /* window bits; 0 when n == 0 */
    unsigned nwin;       /* windows: ceil(bits / c), bits as given to msm_plan_make */
    size_t nbuckets;     /* 2^(c-1) */
    size_t chunks;       /* point ranges */
    size_t chunk_len;    /* points per range (the last may be shorter) */
    size_t ntasks;       /* nwin * chunks */
    unsigned nworkers;   /* threads used: min(nthreads, ntasks) */
    size_t batch;        /* affine additions per shared inversion; 0: XYZZ buckets only */
} msm_plan;

/* Batch-affine buckets pay one field inversion per batch, so they are considered only for
 * windows of at least MSM_BA_MIN_WINDOW (where the cost model weighs them against XYZZ
 * buckets; a window the caller gives takes them), with batches of nbuckets / MSM_BA_SPREAD
 * (at most MSM_BA_BATCH_MAX): a base whose bucket is already waiting in the batch (about
 * 1 / (2 * MSM_BA_SPREAD) of the bases) waits for the next batch, or, when it clashes again
 * or more than half a batch waits, goes to the bucket's XYZZ overflow.
 * Measured at 2^12-2^13 points, one thread (bench/RESULTS.md): batch-affine CPU time over
 * XYZZ's at the same window 0.69-0.95 for G2 from c = 10 on, 0.89-0.98 for G1 at c = 11. */
#define MSM_BA_MIN_WINDOW 10
#define MSM_BA_SPREAD 8
#define MSM_BA_BATCH_MAX 1024

/* window = 0: choose c from the cost model; else use it (1..CUZK_MSM_WINDOW_MAX).
 * xyzz_bytes, aff_bytes: sizes of the group's XYZZ and affine points (the model keeps all
 * workers' buckets under a budget and charges cache misses for large buckets). inv_cost: a
 * field inversion relative to a mixed addition, for batch-affine buckets (see above); 0
 * disables them. bits: the signed windows cover bits [0, bits) of scalars below
 * 2^(bits - 1) (256 for scalars below 2^255; 129 and 65 for the endomorphisms' parts).
 * ba_cost: a batch-affine addition without its share of the inversion, relative to a mixed
 * addition (0: the scalar code's). */
void msm_plan_make(msm_plan *p, size_t n, unsigned bits, unsigned nthreads, unsigned window,
                   size_t xyzz_bytes, size_t aff_bytes, double inv_cost, double ba_cost);

unsigned msm_threads(unsigned nthreads);

/* Signed digit k of width c of s (< 2^255), in [-2^(c-1), 2^(c-1)]. With w the window's c
 * bits and b the bit just below it, the digit is w + b - 2^c*(top bit of w): the carry out
 * of a window is its top bit, which the next window adds back, so digits of different
 * windows need no sequential carry pass, and sum_k digit_k * 2^(kc) = s. */
/* The same for a scalar of nl limbs: digit k needs k * c <= 64 nl (the plan's windows). */
static inline int32_t msm_digit_n(const uint64_t *s, unsigned nl, unsigned k, unsigned c)
{
    unsigned o = k * c;
    uint64_t x; /* bits [o-1, o+c) of s: b in bit 0, w in bits 1..c */
    if (o == 0) {
        x = s[0] << 1;
    } else {
        unsigned pos = o - 1, li = pos >> 6, sh = pos & 63;
        unsigned __int128 v = s[li];
        if (li + 1 < nl)
            v |= (unsigned __int128)s[li + 1] << 64;
        x = (uint64_t)(v >> sh);
    }
    x &= (2ULL << c) - 1;
    return (int32_t)((x + 1) >> 1) - (int32_t)(((x >> c) & 1) << c);
}

static inline int32_t msm_digit(const uint64_t s[CUZK_FR_LIMBS], unsigned k, unsigned c)
{
    return msm_digit_n(s, CUZK_FR_LIMBS, k, c);
}

/* Endomorphisms (GLV for G1, GLS for G2). G1: sigma(x, y) = (beta x, y) is -u on G1 with
 * u = x^2 = 0xac45a4010001a4020000000100000000 (r = u^2 - u + 1); G2: psi is x = -|x| on G2.
 * A scalar s < 2^255 in base |x| = 0xd201000000010000: s = d0 + d1 |x| + d2 |x|^2 + d3 |x|^3
 * with d0, d1, d2 < |x| and d3 < 2^64 (|x|^3 > 2^191). parts = 2: out[i].l[0..1] = s1 =
 * d0 + d1 |x| (< u), l[2..3] = s2 = s div u, so s P = s1 P + s2 (-sigma P); parts = 4:
 * out[i].l[h] = d_h, s Q = d0 Q + d1 (-psi Q) + d2 psi^2 Q + d3 (-psi^3 Q). out may be in. */
void msm_endo_split(cuzk_msm_scalar *out, const cuzk_msm_scalar *in, size_t n, unsigned parts,
                    unsigned nthreads);

/* Gather elements whose bit is set (in order). kind selects the element conversion. */
typedef enum { MSM_GATHER_COPY, MSM_GATHER_FR_TO_CANON } msm_gather_kind;
size_t msm_gather(void *out, const void *in, size_t elem, msm_gather_kind kind, size_t n,
                  const uint64_t *bits, unsigned nthreads);

/* Bit-vector compression with PEXT (BMI2), the default where the CPU has it, or bit by bit
 * (tests compare the two). Returns false when asked for PEXT on a CPU without it. */
bool msm_bitvec_set_pext(bool on);

/* Index of the first scalar >= 2^255, or n when all are below. Parallel. */
size_t msm_find_oversized(const cuzk_msm_scalar *s, size_t n, unsigned nthreads);

#endif
