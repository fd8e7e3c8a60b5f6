/*
 * Radix-2 NTT over Fr, in place.
 *
 * DIF (Gentleman-Sande), levels h = n/2, n/4, ..., 1 on blocks of 2h:
 *   (u, v) -> (u + v, (u - v)*w^j),  w = omega_(2h), j the position in the half-block;
 *   natural order in, bit-reversed out.
 * DIT (Cooley-Tukey), levels h = 1, 2, ..., n/2:
 *   (u, v) -> (u + w^j*v, u - w^j*v);  bit-reversed in, natural out.
 * The inverse direction uses omega^-1. Levels with h <= H run block by block (2H elements,
 * cache sized) with per-level twiddle tables; the larger levels run over tiles of TILE
 * consecutive j, whose twiddles are formed once per tile from the two-level table.
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

/* One out-of-block level; work item q = tile * nb + block, so a run of items shares a tile's
 * twiddles. */
static void level_fn(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    const ntt_ctx *c = p;
    const cuzk_domain *d = c->d;
    size_t h = c->h, s = d->n / (2 * h), T = c->tile, mask = d->n - 1;
    cuzk_fr w[TILE];
    size_t have = (size_t)-1;
    for (size_t q = begin; q < end; q++) {
        size_t t = q / c->nb, b = q % c->nb;
        if (t != have) {
            for (size_t i = 0; i < T; i++) {
                size_t e = (t * T + i) * s; /* < n/2 */
                poly_domain_omega_pow(&w[i], d, c->inverse ? (d->n - e) & mask : e);
            }
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

static void run_level(ntt_ctx *c, size_t h, unsigned nthreads)
{
    c->h = h;
    c->tile = h < TILE ? h : TILE;
    c->ntiles = h / c->tile;
    c->nb = c->d->n / (2 * h);
    cuzk_parallel_for(c->ntiles * c->nb, 1, nthreads, level_fn, c);
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
    if (!dit) {
        for (size_t h = d->n / 2; h > H; h >>= 1)
            run_level(&c, h, nthreads);
        cuzk_parallel_for(nblocks, 1, nthreads, blocks_fn, &c);
    } else {
        cuzk_parallel_for(nblocks, 1, nthreads, blocks_fn, &c);
        for (size_t h = 2 * H; h < d->n; h <<= 1)
            run_level(&c, h, nthreads);
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
