/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to src/poly: the domain's layout and the pieces the H step shares with the NTT. */
#ifndef CUZK_POLY_INTERNAL_H
#define CUZK_POLY_INTERNAL_H

#include "cuzk/poly.h"

/* Levels with half-size h <= 2^(POLY_BLOCK_LOG2-1) run inside blocks of 2^POLY_BLOCK_LOG2
 * elements (128 KiB), one block at a time per thread, while the block sits in cache. */
#define POLY_BLOCK_LOG2 12

struct cuzk_domain {
    size_t n;            /* 2^log2_n */
    unsigned log2_n;
    unsigned lo_log2;    /* L = ceil(log2_n / 2) */
    cuzk_roots family;
    cuzk_fr omega, omega_inv, n_inv;
    cuzk_fr *lo;         /* lo[i] = omega^i, i < 2^L */
    cuzk_fr *hi;         /* hi[i] = omega^(i*2^L), i < n/2^L: omega^e = lo[e mod 2^L]*hi[e>>L] */
    size_t small_h;      /* H = min(n, 2^block_log2)/2: levels h <= H run per block of 2H */
    cuzk_fr *small_fwd;  /* small_fwd[h-1+j] = omega_(2h)^j for j < h, h = 1, 2, 4, ..., H */
    cuzk_fr *small_inv;  /* small_inv[h-1+j] = omega_(2h)^-j */
};

/* cuzk_domain_new with a chosen block size (1 <= block_log2); tests use small blocks to
 * run the out-of-block levels on sizes a naive DFT can check. */
cuzk_err poly_domain_new_ex(cuzk_domain **out, unsigned log2_n, cuzk_roots family,
                            unsigned block_log2) CUZK_WUR;

/* omega^e for e < n (one multiplication). */
void poly_domain_omega_pow(cuzk_fr *r, const cuzk_domain *d, size_t e);

/* k-bit reversal of i (k <= 64). */
static inline size_t poly_bitrev(size_t i, unsigned k)
{
    uint64_t v = (uint64_t)i;
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((v & 0x0f0f0f0f0f0f0f0fULL) << 4);
    v = __builtin_bswap64(v);
    return k ? (size_t)(v >> (64 - k)) : 0;
}

/* x[p] *= pre * s^rev_k(p) for p < 2^k: the coset scaling of coefficients held in
 * bit-reversed order (2 multiplications per element, no table of size n). */
void poly_scale_bitrev(cuzk_fr *x, unsigned k, const cuzk_fr *pre, const cuzk_fr *s,
                       unsigned nthreads);

#endif
