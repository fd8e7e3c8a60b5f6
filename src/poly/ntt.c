/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Radix-2 NTT over Fr, in place.
 *
 * DIF (Gentleman-Sande), levels h = n/2, n/4, ..., 1 on blocks of 2h:
 *   (u, v) -> (u + v, (u - v)*w^j),  w = omega_(2h), j the position in the half-block;
 *   natural order in, bit-reversed out.
 * DIT (Cooley-Tukey), levels h = 1, 2, ..., n/2:
 *   (u, v) -> (u + w^j*v, u - w^j*v);  bit-reversed in, natural out.
 * The inverse direction uses omega^-1. Levels with h <= H run block by block (2H elements,
 * cache sized) with per-level twiddle tables; the larger levels run two at a time (one
 * pass over memory per pair) over tiles of TILE consecutive j, whose twiddles are formed
 * once per tile from the two-level table.
 */
#include "poly/poly_internal.h"
#include "util/parallel.h"

#define TILE 256 /* butterflies that share one run of twiddles in an out-of-block level */
#define SCALE_LOG2 10 /* low-bit table size of poly_scale_bitrev: 2^10 elements (32 KiB) */

static inline void bfly_dif(cuzk_fr *x0, cuzk_fr *x1, const cuzk_fr *w)
{
    cuzk_fr t;
    cuzk_fr_sub(&t, x0, x1);
    cuzk_fr_add(x0, x0, x1);
    cuzk_fr_mul(x1, &t, w);
}

static inline void bfly_dif1(cuzk_fr *x0, cuzk_fr *x1) /* w = 1 */
{
    cuzk_fr t;
    cuzk_fr_sub(&t, x0, x1);
    cuzk_fr_add(x0, x0, x1);
    *x1 = t;
}

static inline void bfly_dit(cuzk_fr *x0, cuzk_fr *x1, const cuzk_fr *w)
{
    cuzk_fr t;
    cuzk_fr_mul(&t, x1, w);
    cuzk_fr_sub(x1, x0, &t);
    cuzk_fr_add(x0, x0, &t);
}

static inline void bfly_dit1(cuzk_fr *x0, cuzk_fr *x1)
{
    cuzk_fr t = *x1;
    cuzk_fr_sub(x1, x0, &t);
    cuzk_fr_add(x0, x0, &t);
}

typedef struct {
    const cuzk_domain *d;
    cuzk_fr *x;
    const cuzk_fr *small; /* small_fwd or small_inv */
    size_t h;             /* out-of-block level */
    size_t ntiles, nb, tile;
    int inverse, dit;
} ntt_ctx;

/* All in-block levels on blocks [begin, end) of 2H elements. */
static void blocks_fn(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    const ntt_ctx *c = p;
    size_t H = c->d->small_h, bs = 2 * H;
    for (size_t blk = begin; blk < end; blk++) {
        cuzk_fr *y = c->x + blk * bs;
        if (!c->dit) {
            for (size_t h = H; h >= 1; h >>= 1) {
                const cuzk_fr *w = c->small + h - 1;
                for (size_t b = 0; b < bs; b += 2 * h) {
                    cuzk_fr *q = y + b;
                    bfly_dif1(q, q + h);
                    for (size_t j = 1; j < h; j++)
                        bfly_dif(q + j, q + h + j, w + j);
                }
            }
        } else {
            for (size_t h = 1; h <= H; h <<= 1) {
                const cuzk_fr *w = c->small + h - 1;
                for (size_t b = 0; b < bs; b += 2 * h) {
                    cuzk_fr *q = y + b;
                    bfly_dit1(q, q + h);
                    for (size_t j = 1; j < h; j++)
                        bfly_dit(q + j, q + h + j, w + j);
                }
            }
        }
    }
}

static void tile_twiddles(cuzk_fr *w, const cuzk_domain *d, size_t e0, size_t de, size_t T,
                          int inverse)
{
    size_t mask = d->n - 1;
    for (size_t i = 0; i < T; i++) {
        size_t e = (e0 + i * de) & mask; /* omega^e = w_(2h)^j with e = j*n/(2h) */
        poly_domain_omega_pow(&w[i], d, inverse ? (d->n - e) & mask : e);
    }
}

/* One out-of-block level h; work item q = tile * nb + block, so a run of items shares a
 * tile's twiddles. */
static void level_fn(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    const ntt_ctx *c = p;
    size_t h = c->h, s = c->d->n / (2 * h), T = c->tile;
    cuzk_fr w[TILE];
    size_t have = (size_t)-1;
    for (size_t q = begin; q < end; q++) {
        size_t t = q / c->nb, b = q % c->nb;
        if (t != have) {
            tile_twiddles(w, c->d, t * T * s, s, T, c->inverse);
            have = t;
        }
        cuzk_fr *x0 = c->x + b * 2 * h + t * T, *x1 = x0 + h;
        if (!c->dit)
            for (size_t i = 0; i < T; i++)
                bfly_dif(x0 + i, x1 + i, &w[i]);
        else
            for (size_t i = 0; i < T; i++)
                bfly_dit(x0 + i, x1 + i, &w[i]);
    }
}

/* Two out-of-block levels h and h/2 in one pass over memory. For j < h/2 in a block of 2h,
 * e0..e3 = x[j], x[j+h/2], x[j+h], x[j+3h/2]:
 *   level h:   (e0, e2) by w_(2h)^j,  (e1, e3) by w_(2h)^(j+h/2)
 *   level h/2: (e0, e1) and (e2, e3) by w_h^j = w_(2h)^(2j)
 * DIF runs level h first, DIT level h/2 first. */
static void level2_fn(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    const ntt_ctx *c = p;
    size_t h = c->h, g = h / 2, s = c->d->n / (2 * h), T = c->tile;
    cuzk_fr wa[TILE], wb[TILE], wc[TILE];
    size_t have = (size_t)-1;
    for (size_t q = begin; q < end; q++) {
        size_t t = q / c->nb, b = q % c->nb;
        if (t != have) {
            size_t j0 = t * T;
            tile_twiddles(wa, c->d, j0 * s, s, T, c->inverse);
            tile_twiddles(wb, c->d, (j0 + g) * s, s, T, c->inverse);
            tile_twiddles(wc, c->d, 2 * j0 * s, 2 * s, T, c->inverse);
            have = t;
        }
        cuzk_fr *e0 = c->x + b * 2 * h + t * T, *e1 = e0 + g, *e2 = e0 + h, *e3 = e2 + g;
        if (!c->dit) {
            for (size_t i = 0; i < T; i++) {
                bfly_dif(e0 + i, e2 + i, &wa[i]);
                bfly_dif(e1 + i, e3 + i, &wb[i]);
                bfly_dif(e0 + i, e1 + i, &wc[i]);
                bfly_dif(e2 + i, e3 + i, &wc[i]);
            }
        } else {
            for (size_t i = 0; i < T; i++) {
                bfly_dit(e0 + i, e1 + i, &wc[i]);
                bfly_dit(e2 + i, e3 + i, &wc[i]);
                bfly_dit(e0 + i, e2 + i, &wa[i]);
                bfly_dit(e1 + i, e3 + i, &wb[i]);
            }
        }
    }
}

/* Level h alone (pair = 0) or levels h and h/2 together (pair = 1). */
static void run_level(ntt_ctx *c, size_t h, int pair, unsigned nthreads)
{
    size_t span = pair ? h / 2 : h; /* j range of one block */
    c->h = h;
    c->tile = span < TILE ? span : TILE;
    c->ntiles = span / c->tile;
    c->nb = c->d->n / (2 * h);
    cuzk_parallel_for(c->ntiles * c->nb, 1, nthreads, pair ? level2_fn : level_fn, c);
}

static void ntt_run(const cuzk_domain *d, cuzk_fr *x, cuzk_ntt_dir dir, int dit, unsigned nthreads)
{
    if (d->n == 1)
        return;
    ntt_ctx c = {.d = d,
                 .x = x,
                 .small = dir == CUZK_NTT_INVERSE ? d->small_inv : d->small_fwd,
                 .inverse = dir == CUZK_NTT_INVERSE,
                 .dit = dit};
    size_t H = d->small_h, nblocks = d->n / (2 * H);
    /* out-of-block levels: h = 2H, 4H, ..., n/2, taken in pairs from the top for DIF and
     * from the bottom for DIT (an odd one out runs alone) */
    if (!dit) {
        size_t h = d->n / 2;
        for (; h / 2 > H; h >>= 2)
            run_level(&c, h, 1, nthreads);
        if (h > H)
            run_level(&c, h, 0, nthreads);
        cuzk_parallel_for(nblocks, 1, nthreads, blocks_fn, &c);
    } else {
        cuzk_parallel_for(nblocks, 1, nthreads, blocks_fn, &c);
        size_t h = 2 * H;
        for (; 2 * h < d->n; h <<= 2)
            run_level(&c, 2 * h, 1, nthreads);
        if (h < d->n)
            run_level(&c, h, 0, nthreads);
    }
}

void cuzk_ntt_dif(const cuzk_domain *d, cuzk_fr *x, cuzk_ntt_dir dir, unsigned nthreads)
{
    ntt_run(d, x, dir, 0, nthreads);
}

void cuzk_ntt_dit(const cuzk_domain *d, cuzk_fr *x, cuzk_ntt_dir dir, unsigned nthreads)
{
    ntt_run(d, x, dir, 1, nthreads);
}

/* ---- permutation and scaling ---- */

typedef struct {
    cuzk_fr *x;
    unsigned k;
} bitrev_ctx;

static void bitrev_fn(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    const bitrev_ctx *c = p;
    for (size_t i = begin; i < end; i++) {
        size_t r = poly_bitrev(i, c->k);
        if (i < r) {
            cuzk_fr t = c->x[i];
            c->x[i] = c->x[r];
            c->x[r] = t;
        }
    }
}

void cuzk_ntt_bitreverse(cuzk_fr *x, unsigned log2_n, unsigned nthreads)
{
    bitrev_ctx c = {x, log2_n};
    cuzk_parallel_for((size_t)1 << log2_n, 4096, nthreads, bitrev_fn, &c);
}

typedef struct {
    cuzk_fr *x;
    cuzk_fr start, step;
    int plain; /* step == 1 */
} powers_ctx;

static void powers_fn(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    const powers_ctx *c = p;
    if (c->plain) {
        for (size_t i = begin; i < end; i++)
            cuzk_fr_mul(&c->x[i], &c->x[i], &c->start);
        return;
    }
    cuzk_fr cur;
    uint64_t e = (uint64_t)begin;
    cuzk_fr_pow(&cur, &c->step, &e, 1);
    cuzk_fr_mul(&cur, &cur, &c->start);
    for (size_t i = begin; i < end; i++) {
        cuzk_fr_mul(&c->x[i], &c->x[i], &cur);
        cuzk_fr_mul(&cur, &cur, &c->step);
    }
}

void cuzk_ntt_scale_powers(cuzk_fr *x, size_t n, const cuzk_fr *start, const cuzk_fr *step,
                           unsigned nthreads)
{
    powers_ctx c = {.x = x, .start = *start, .step = *step, .plain = cuzk_fr_is_one(step)};
    cuzk_parallel_for(n, 4096, nthreads, powers_fn, &c);
}

typedef struct {
    cuzk_fr *x;
    const cuzk_fr *T; /* T[lo] = S^rev_c(lo), S = s^(2^(k-c)) */
    cuzk_fr pre;
    cuzk_fr P[CUZK_FR_TWO_ADICITY]; /* P[i] = s^(2^i), i < k - c */
    unsigned c, kh;
} sbr_ctx;

/* p = hi*2^c + lo has rev_k(p) = rev_c(lo)*2^(k-c) + rev_(k-c)(hi), so
 * s^rev_k(p) = T[lo] * s^rev_(k-c)(hi). */
static void sbr_fn(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    const sbr_ctx *c = p;
    size_t C = (size_t)1 << c->c;
    for (size_t hi = begin; hi < end; hi++) {
        cuzk_fr base = c->pre, t;
        size_t r = poly_bitrev(hi, c->kh);
        for (unsigned i = 0; i < c->kh; i++)
            if ((r >> i) & 1)
                cuzk_fr_mul(&base, &base, &c->P[i]);
        cuzk_fr *y = c->x + hi * C;
        for (size_t lo = 0; lo < C; lo++) {
            cuzk_fr_mul(&t, &base, &c->T[lo]);
            cuzk_fr_mul(&y[lo], &y[lo], &t);
        }
    }
}

void poly_scale_bitrev(cuzk_fr *x, unsigned k, const cuzk_fr *pre, const cuzk_fr *s,
                       unsigned nthreads)
{
    cuzk_fr T[(size_t)1 << SCALE_LOG2];
    sbr_ctx c = {.x = x, .T = T, .pre = *pre};
    c.c = k < SCALE_LOG2 ? k : SCALE_LOG2;
    c.kh = k - c.c;
    cuzk_fr S = *s, cur;
    for (unsigned i = 0; i < c.kh; i++) {
        c.P[i] = S;
        cuzk_fr_sqr(&S, &S);
    }
    cuzk_fr_set_one(&cur);
    for (size_t m = 0; m < ((size_t)1 << c.c); m++) {
        T[poly_bitrev(m, c.c)] = cur;
        cuzk_fr_mul(&cur, &cur, &S);
    }
    cuzk_parallel_for((size_t)1 << c.kh, 4, nthreads, sbr_fn, &c);
}

/* ---- natural order in and out ---- */

void cuzk_ntt_forward(const cuzk_domain *d, cuzk_fr *x, unsigned nthreads)
{
    cuzk_ntt_dif(d, x, CUZK_NTT_FORWARD, nthreads);
    cuzk_ntt_bitreverse(x, d->log2_n, nthreads);
}

void cuzk_ntt_inverse(const cuzk_domain *d, cuzk_fr *x, unsigned nthreads)
{
    cuzk_fr one;
    cuzk_fr_set_one(&one);
    cuzk_ntt_bitreverse(x, d->log2_n, nthreads);
    cuzk_ntt_dit(d, x, CUZK_NTT_INVERSE, nthreads);
    cuzk_ntt_scale_powers(x, d->n, &d->n_inv, &one, nthreads);
}

void cuzk_ntt_coset_forward(const cuzk_domain *d, cuzk_fr *x, const cuzk_fr *shift,
                            unsigned nthreads)
{
    cuzk_fr g, one;
    if (shift)
        g = *shift;
    else
        cuzk_fr_generator(&g, d->family);
    cuzk_fr_set_one(&one);
    cuzk_ntt_scale_powers(x, d->n, &one, &g, nthreads);
    cuzk_ntt_forward(d, x, nthreads);
}

void cuzk_ntt_coset_inverse(const cuzk_domain *d, cuzk_fr *x, const cuzk_fr *shift,
                            unsigned nthreads)
{
    cuzk_fr g, ginv;
    if (shift)
        g = *shift;
    else
        cuzk_fr_generator(&g, d->family);
    cuzk_fr_inv_var(&ginv, &g);
    cuzk_ntt_bitreverse(x, d->log2_n, nthreads);
    cuzk_ntt_dit(d, x, CUZK_NTT_INVERSE, nthreads);
    cuzk_ntt_scale_powers(x, d->n, &d->n_inv, &ginv, nthreads);
}
