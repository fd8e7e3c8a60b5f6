/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Multi-scalar multiplication on the CPU: r = sum_i s_i * P_i for G1 and G2.
 *
 * Bases are affine points of G1 or G2, the prime-order subgroups (infinity = (0, 0) allowed,
 * repeats and P next to -P allowed): the MSM uses the groups' endomorphisms (below), so a
 * base on the curve but outside the subgroup gives a wrong sum.
 * Scalars come either as cuzk_fr (Montgomery form, converted inside) or as canonical
 * integers (cuzk_msm_scalar, 4 little-endian 64-bit limbs, any value below 2^255; every
 * reduced element of Fr qualifies since r < 2^255). Results are Jacobian. All functions are
 * variable time in the scalars and the bases (MSM inputs are witness-derived values whose
 * timing is not protected here, as in every production Groth16 prover).
 *
 * Algorithm: Pippenger with signed digits in [-2^(c-1), 2^(c-1)] (2^(c-1) buckets per
 * window, negative digits subtract the base), buckets summed by running sums. Buckets are
 * XYZZ points; with large windows they are affine points updated in batches that share
 * one field inversion (Montgomery's trick), with an XYZZ overflow per bucket for bases
 * whose bucket is already in the current batch.
 * Endomorphisms (GLV, GLS): up to 2^20 G1 bases, s P = s1 P + s2 (-sigma P) with 128-bit
 * s1, s2 (sigma(x, y) = (beta x, y) = -x^2 on G1); up to 2^18 G2 bases, s Q = sum_h d_h
 * (-psi)^h Q with the four 64-bit digits d_h of s in base |x| (psi = x on G2): more terms of
 * shorter scalars, a half or a quarter of the windows and bucket sums. The images and split
 * scalars take 128 bytes a G1 base and 608 a G2 base for the call.
 * The work is cut into (window x point-range) tasks so that every thread is busy for small
 * and large n; the window c and the number of point ranges come from a cost model
 * (cuzk_g1_msm_window() reports the choice).
 *
 * The Groth16 split (DESIGN.md section 2): scalars are classified into bit vectors (bit i
 * of word i/64 is scalar i) of scalars equal to 1 and "significant" scalars (neither 0 nor
 * 1). When the significant count is at most n/2, the MSM becomes
 *     batch_add(bases whose scalar is 1) + Pippenger(gathered significant bases/scalars)
 * and zero scalars are skipped. The pieces are exposed separately for the GPU pipeline.
 *
 * No function allocates per element; the MSM allocates its bucket and task arrays once per
 * call. nthreads = 0 (or opts == NULL) means cuzk_parallel_threads().
 */
#ifndef CUZK_MSM_H
#define CUZK_MSM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/ec.h"
#include "cuzk/error.h"
#include "cuzk/ff.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

/* A canonical scalar: integer value sum l[i]*2^(64i), required to be below 2^255. */
typedef struct { uint64_t l[CUZK_FR_LIMBS]; } cuzk_msm_scalar;

#define CUZK_MSM_WINDOW_MAX 20   /* largest window accepted in cuzk_msm_opts.window */

/* cuzk_msm_opts.flags */
#define CUZK_MSM_XYZZ_ONLY 1u  /* XYZZ buckets only, no batch-affine buckets (plain twin) */
#define CUZK_MSM_SCALAR_ONLY 2u /* no vector (AVX-512 IFMA) buckets: the scalar field code */

typedef struct {
    unsigned nthreads;   /* 0: cuzk_parallel_threads() */
    unsigned window;     /* 0: chosen from n and nthreads; else 1..CUZK_MSM_WINDOW_MAX */
    unsigned flags;      /* CUZK_MSM_* */
} cuzk_msm_opts;

/* Canonical limbs of Montgomery scalars, in parallel: out[i] = canonical(in[i]). */
void cuzk_msm_scalars_from_fr(cuzk_msm_scalar *out, const cuzk_fr *in, size_t n,
                              unsigned nthreads);

/* ---- bit vectors (64-bit words; bit i of word i/64 is element i; bits past n are 0) ---- */
#define CUZK_MSM_BITVEC_WORDS(n) (((n) + 63) / 64)

typedef struct {
    size_t n;        /* number of scalars classified */
    size_t n_zero;   /* scalars equal to 0 */
    size_t n_one;    /* scalars equal to 1 */
    size_t n_sig;    /* the rest ("significant") */
} cuzk_msm_counts;

/* Classifies scalars: one_bits marks s_i == 1, sig_bits marks s_i not in {0, 1}; either
 * output may be NULL. Each holds CUZK_MSM_BITVEC_WORDS(n) words. counts may be NULL. */
void cuzk_msm_classify_fr(uint64_t *one_bits, uint64_t *sig_bits, cuzk_msm_counts *counts,
                          const cuzk_fr *scalars, size_t n, unsigned nthreads);
void cuzk_msm_classify(uint64_t *one_bits, uint64_t *sig_bits, cuzk_msm_counts *counts,
                       const cuzk_msm_scalar *scalars, size_t n, unsigned nthreads);
/* cuzk_msm_classify_fr that also copies the scalars to copy (n values, not overlapping them)
 * in the same pass: one read of the vector instead of two when it must be moved anyway
 * (the witness into the GPU upload buffer). */
void cuzk_msm_classify_fr_copy(uint64_t *one_bits, uint64_t *sig_bits, cuzk_msm_counts *counts,
                               const cuzk_fr *scalars, size_t n, unsigned nthreads, cuzk_fr *copy);
/* The split rule: true when significant scalars are at most half of all (n_sig <= n/2). */
bool cuzk_msm_should_split(const cuzk_msm_counts *counts);

/* Number of set bits among the first n. */
size_t cuzk_msm_bitvec_count(const uint64_t *bits, size_t n);
/* r |= a and r &= ~a over the words holding n bits (to OR significance across the circuits
 * of a batch and then drop the shared significant positions from each circuit's ones). */
void cuzk_msm_bitvec_or(uint64_t *r, const uint64_t *a, size_t n);
void cuzk_msm_bitvec_andnot(uint64_t *r, const uint64_t *a, size_t n);

/* Compress: out bit j = src bit i for the j-th set bit i of mask (among the first n), i.e.
 * src restated in the positions of the elements mask selects (a density-filtered base
 * vector). out holds CUZK_MSM_BITVEC_WORDS(popcount(mask)) words; returns that popcount.
 * mask NULL: all n positions (a copy). */
size_t cuzk_msm_bitvec_compress(uint64_t *out, const uint64_t *src, const uint64_t *mask,
                                size_t n, unsigned nthreads);
/* Extract: out bit j = src bit (off + j) for j < n (bits past n are 0). */
void cuzk_msm_bitvec_extract(uint64_t *out, const uint64_t *src, size_t off, size_t n);
/* r = a & b over the words holding n bits; returns the set-bit count of r. */
size_t cuzk_msm_bitvec_and(uint64_t *r, const uint64_t *a, const uint64_t *b, size_t n);

/* Gathers (in order) the elements whose bit is set into out (room for the set-bit count);
 * returns how many were written. The _fr version also converts to canonical limbs. */
size_t cuzk_msm_gather_scalars(cuzk_msm_scalar *out, const cuzk_msm_scalar *in, size_t n,
                               const uint64_t *bits, unsigned nthreads);
size_t cuzk_msm_gather_fr(cuzk_msm_scalar *out, const cuzk_fr *in, size_t n,
                          const uint64_t *bits, unsigned nthreads);
/* Several gathers of one vector in one pass (the split MSMs of a proof select from the
 * same witness): output k receives, in order and as canonical limbs, the elements whose
 * bit is set in bits (the first n), in mask (NULL: all) and at positions from lo on; out
 * needs room for that count, which lands in count. Each selected value is read and
 * converted once however many outputs take it. 1 to 4 outputs. */
typedef struct {
    cuzk_msm_scalar *out;
    const uint64_t *mask;
    size_t lo;
    size_t count;
} cuzk_msm_gather_out;
cuzk_err cuzk_msm_gather_fr_multi(cuzk_msm_gather_out *outs, unsigned k, const cuzk_fr *in,
                                  size_t n, const uint64_t *bits, unsigned nthreads) CUZK_WUR;

/* ---- per group ----
 * cuzk_G_msm:        r = sum s_i*P_i, canonical scalars.
 * cuzk_G_msm_fr:     the same with Montgomery scalars; scratch (n elements) receives the
 *                    canonical scalars; NULL means one internal allocation.
 * cuzk_G_msm_auto_fr / cuzk_G_msm_auto: classify, then split (batch add of the ones plus
 *                    Pippenger on the gathered tail) when n_sig <= n/2, else one Pippenger.
 *                    counts (may be NULL) receives the classification.
 * cuzk_G_batch_add:  r = sum of bases[i] whose bit is set (n bases).
 * cuzk_G_gather:     bases whose bit is set, in order, into out; returns the count.
 * cuzk_G_msm_window: the window c (bits) cuzk_G_msm picks for n points on nthreads threads
 *                    (0: default count); 0 when n == 0. For benchmarks and tuning.
 * Errors: CUZK_EINVAL (NULL arrays with n > 0, a canonical scalar >= 2^255, a window out
 * of range), CUZK_ENOMEM. On error r is set to infinity. */
#define CUZK_MSM_DECLARE_(G, AFF, JAC)                                                       \
    cuzk_err cuzk_##G##_msm(JAC *r, const AFF *bases, const cuzk_msm_scalar *scalars,       \
                            size_t n, const cuzk_msm_opts *opts) CUZK_WUR;                   \
    cuzk_err cuzk_##G##_msm_fr(JAC *r, cuzk_msm_scalar *scratch, const AFF *bases,           \
                               const cuzk_fr *scalars, size_t n,                             \
                               const cuzk_msm_opts *opts) CUZK_WUR;                          \
    cuzk_err cuzk_##G##_msm_auto_fr(JAC *r, cuzk_msm_counts *counts, const AFF *bases,       \
                                    const cuzk_fr *scalars, size_t n,                        \
                                    const cuzk_msm_opts *opts) CUZK_WUR;                     \
    cuzk_err cuzk_##G##_msm_auto(JAC *r, cuzk_msm_counts *counts, const AFF *bases,          \
                                 const cuzk_msm_scalar *scalars, size_t n,                   \
                                 const cuzk_msm_opts *opts) CUZK_WUR;                        \
    cuzk_err cuzk_##G##_batch_add(JAC *r, const AFF *bases, size_t n, const uint64_t *bits,  \
                                  unsigned nthreads) CUZK_WUR;                               \
    size_t cuzk_##G##_gather(AFF *out, const AFF *bases, size_t n, const uint64_t *bits,     \
                             unsigned nthreads);                                             \
    unsigned cuzk_##G##_msm_window(size_t n, unsigned nthreads);

CUZK_MSM_DECLARE_(g1, cuzk_g1_affine, cuzk_g1_jac)
CUZK_MSM_DECLARE_(g2, cuzk_g2_affine, cuzk_g2_jac)

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
