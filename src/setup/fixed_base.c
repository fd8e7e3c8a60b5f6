/* SPDX-License-Identifier: Apache-2.0 */
/* Fixed-base scalar multiplication of the G1 and G2 generators with window tables,
 * parallel over many scalars: affine accumulators with batched slope inversions
 * (setup_*_mul_batch_var), and a plain Jacobian twin for one scalar (setup_*_mul_one_var). */
#include <stdlib.h>
#include <string.h>

#include "setup/setup_internal.h"
#include "util/parallel.h"

#define SETUP_CHUNK 1024  /* scalars advanced together (one inversion per window) */

/* What one window does to one accumulator. */
enum { FB_SKIP, FB_COPY, FB_ADD, FB_DBL, FB_INF };

unsigned setup_wbits_for(size_t n)
{
    return n >= SETUP_WBITS_LARGE_FROM ? SETUP_WBITS_LARGE : SETUP_WBITS_SMALL;
}

/* Bits [pos, pos + wbits) of the canonical 256-bit scalar l (pos < 256). */
static unsigned scalar_digit(const uint64_t l[CUZK_FR_LIMBS], unsigned pos, unsigned wbits)
{
    unsigned limb = pos / 64, off = pos % 64;
    uint64_t v = l[limb] >> off;
    if (off + wbits > 64 && limb + 1 < CUZK_FR_LIMBS)
        v |= l[limb + 1] << (64 - off);
    return (unsigned)(v & ((1u << wbits) - 1));
}

/* The template: one copy for G1, one for G2. */
#define SETUP_FIXED_BASE_(G, AFF, JAC, F, FF)                                                        \
    typedef struct {                                                                          \
        AFF *out;                                                                             \
        const JAC *in;                                                                        \
    } G##_aff_ctx;                                                                            \
                                                                                              \
    static void G##_aff_range(void *p, size_t begin, size_t end, unsigned worker)             \
    {                                                                                         \
        (void)worker;                                                                         \
        G##_aff_ctx *c = p;                                                                   \
        cuzk_##G##_batch_to_affine(c->out + begin, c->in + begin, end - begin);               \
    }                                                                                         \
                                                                                              \
    static void G##_batch_affine(AFF *out, const JAC *in, size_t n, unsigned nthreads)        \
    {                                                                                         \
        G##_aff_ctx c = {out, in};                                                            \
        cuzk_parallel_for(n, 4096, nthreads, G##_aff_range, &c);                              \
    }                                                                                         \
                                                                                              \
    typedef struct {                                                                          \
        JAC *jac;                                                                             \
        const JAC *bases; /* bases[j] = 2^(W j) G */                                          \
        unsigned wsize;                                                                       \
    } G##_table_ctx;                                                                          \
                                                                                              \
    static void G##_table_range(void *p, size_t begin, size_t end, unsigned worker)           \
    {                                                                                         \
        (void)worker;                                                                         \
        G##_table_ctx *c = p;                                                                 \
        for (size_t j = begin; j < end; j++) {                                                \
            JAC *w = c->jac + j * c->wsize; /* w[d - 1] = d * base */                         \
            w[0] = c->bases[j];                                                               \
            cuzk_##G##_jac_dbl(&w[1], &w[0]);                                                 \
            for (unsigned d = 3; d <= c->wsize; d++)                                          \
                cuzk_##G##_jac_add_var(&w[d - 1], &w[d - 2], &w[0]);                         \
        }                                                                                     \
    }                                                                                         \
                                                                                              \
    cuzk_err setup_##G##_table_new(setup_##G##_table *tab, unsigned wbits, unsigned nthreads) \
    {                                                                                         \
        tab->t = NULL;                                                                        \
        if (wbits < SETUP_WBITS_MIN || wbits > SETUP_WBITS_MAX)                               \
            return cuzk_error_set(CUZK_EINVAL, "setup: window width %u", wbits);              \
        tab->wbits = wbits;                                                                   \
        tab->nwin = (255 + wbits - 1) / wbits; /* windows covering r < 2^255 */               \
        tab->wsize = (1u << wbits) - 1;                                                       \
        size_t n = (size_t)tab->nwin * tab->wsize;                                            \
        JAC *jac = malloc(n * sizeof *jac), *bases = malloc(tab->nwin * sizeof *bases);       \
        tab->t = malloc(n * sizeof *tab->t);                                                  \
        if (!jac || !bases || !tab->t) {                                                      \
            free(jac);                                                                        \
            free(bases);                                                                      \
            free(tab->t);                                                                     \
            tab->t = NULL;                                                                    \
            return cuzk_error_set(CUZK_ENOMEM, "setup: out of memory for a window table");    \
        }                                                                                     \
        AFF g;                                                                                \
        cuzk_##G##_generator(&g);                                                             \
        cuzk_##G##_jac_from_affine(&bases[0], &g);                                            \
        for (unsigned j = 1; j < tab->nwin; j++) {                                            \
            bases[j] = bases[j - 1];                                                          \
            for (unsigned b = 0; b < wbits; b++)                                              \
                cuzk_##G##_jac_dbl(&bases[j], &bases[j]);                                     \
        }                                                                                     \
        G##_table_ctx c = {jac, bases, tab->wsize};                                           \
        cuzk_parallel_for(tab->nwin, 1, nthreads, G##_table_range, &c);                       \
        G##_batch_affine(tab->t, jac, n, nthreads);                                           \
        free(jac);                                                                            \
        free(bases);                                                                          \
        return CUZK_OK;                                                                       \
    }                                                                                         \
                                                                                              \
    void setup_##G##_table_free(setup_##G##_table *tab)                                       \
    {                                                                                         \
        free(tab->t);                                                                         \
        tab->t = NULL;                                                                        \
    }                                                                                         \
                                                                                              \
    void setup_##G##_mul_one_var(JAC *r, const cuzk_fr *k, const setup_##G##_table *tab)      \
    {                                                                                         \
        uint64_t l[CUZK_FR_LIMBS];                                                            \
        cuzk_fr_to_limbs(l, k);                                                               \
        cuzk_##G##_jac_set_inf(r);                                                            \
        for (unsigned j = 0; j < tab->nwin; j++) {                                            \
            unsigned d = scalar_digit(l, j * tab->wbits, tab->wbits);                         \
            if (d)                                                                            \
                cuzk_##G##_jac_add_affine_var(r, r, &tab->t[(size_t)j * tab->wsize + d - 1]); \
        }                                                                                     \
        setup_wipe(l, sizeof l);                                                              \
    }                                                                                         \
                                                                                              \
    /* Scratch of one worker: SETUP_CHUNK of each. */                                       \
    typedef struct {                                                                          \
        F den[SETUP_CHUNK], pre[SETUP_CHUNK];                                                 \
        uint64_t l[SETUP_CHUNK][CUZK_FR_LIMBS];                                               \
        uint8_t op[SETUP_CHUNK];                                                              \
    } G##_scratch;                                                                            \
                                                                                              \
    /* out[i] = k[i] G for i < m: all m accumulators stay affine and advance one window at a  \
     * time; the m slopes of a window share one inversion (Montgomery's trick). An affine   \
     * addition then costs about 6 multiplications instead of 11 for a mixed Jacobian one. */ \
    static void G##_chunk(AFF *out, const cuzk_fr *k, size_t m, const setup_##G##_table *tab, \
                          G##_scratch *s)                                                     \
    {                                                                                         \
        for (size_t i = 0; i < m; i++) {                                                      \
            cuzk_fr_to_limbs(s->l[i], &k[i]);                                                 \
            cuzk_##G##_affine_set_inf(&out[i]);                                               \
        }                                                                                     \
        for (unsigned j = 0; j < tab->nwin; j++) {                                            \
            const AFF *row = tab->t + (size_t)j * tab->wsize - 1; /* row[d], d >= 1 */        \
            F acc, inv;                                                                       \
            cuzk_##FF##_set_one(&acc);                                                        \
            for (size_t i = 0; i < m; i++) {                                                  \
                unsigned d = scalar_digit(s->l[i], j * tab->wbits, tab->wbits);               \
                uint8_t op = FB_SKIP;                                                         \
                if (d) {                                                                      \
                    const AFF *t = &row[d];                                                   \
                    if (cuzk_##G##_affine_is_inf(&out[i])) {                                  \
                        op = FB_COPY;                                                         \
                    } else if (!cuzk_##FF##_eq(&out[i].x, &t->x)) {                           \
                        op = FB_ADD;                                                          \
                        cuzk_##FF##_sub(&s->den[i], &t->x, &out[i].x);                        \
                    } else if (cuzk_##FF##_eq(&out[i].y, &t->y)) {                            \
                        op = FB_DBL;                                                          \
                        cuzk_##FF##_dbl(&s->den[i], &out[i].y);                               \
                    } else {                                                                  \
                        op = FB_INF; /* P + (-P) */                                           \
                    }                                                                         \
                }                                                                             \
                s->op[i] = op;                                                                \
                s->pre[i] = acc; /* product of the denominators before i */                   \
                if (op == FB_ADD || op == FB_DBL)                                             \
                    cuzk_##FF##_mul(&acc, &acc, &s->den[i]);                                  \
            }                                                                                 \
            cuzk_##FF##_inv(&inv, &acc);                                                      \
            for (size_t i = m; i-- > 0;) {                                                    \
                uint8_t op = s->op[i];                                                        \
                if (op == FB_SKIP)                                                            \
                    continue;                                                                 \
                const AFF *t = &row[scalar_digit(s->l[i], j * tab->wbits, tab->wbits)];       \
                if (op == FB_COPY) {                                                          \
                    out[i] = *t;                                                              \
                    continue;                                                                 \
                }                                                                             \
                if (op == FB_INF) {                                                           \
                    cuzk_##G##_affine_set_inf(&out[i]);                                       \
                    continue;                                                                 \
                }                                                                             \
                F di, lam, x3, y3;                                                            \
                cuzk_##FF##_mul(&di, &inv, &s->pre[i]);     /* 1/den_i */                     \
                cuzk_##FF##_mul(&inv, &inv, &s->den[i]);    /* 1/(den_0 .. den_(i-1)) */      \
                if (op == FB_ADD) {                                                           \
                    /* lam = (y2 - y1)/(x2 - x1), x3 = lam^2 - x1 - x2 */                     \
                    cuzk_##FF##_sub(&lam, &t->y, &out[i].y);                                  \
                    cuzk_##FF##_mul(&lam, &lam, &di);                                         \
                    cuzk_##FF##_sqr(&x3, &lam);                                               \
                    cuzk_##FF##_sub(&x3, &x3, &t->x);                                         \
                } else {                                                                      \
                    /* lam = 3 x1^2/(2 y1), x3 = lam^2 - 2 x1 */                              \
                    F x2;                                                                     \
                    cuzk_##FF##_sqr(&x2, &out[i].x);                                          \
                    cuzk_##FF##_dbl(&lam, &x2);                                               \
                    cuzk_##FF##_add(&lam, &lam, &x2);                                         \
                    cuzk_##FF##_mul(&lam, &lam, &di);                                         \
                    cuzk_##FF##_sqr(&x3, &lam);                                               \
                    cuzk_##FF##_sub(&x3, &x3, &out[i].x);                                     \
                }                                                                             \
                cuzk_##FF##_sub(&x3, &x3, &out[i].x);                                         \
                /* y3 = lam (x1 - x3) - y1 */                                                 \
                cuzk_##FF##_sub(&y3, &out[i].x, &x3);                                         \
                cuzk_##FF##_mul(&y3, &y3, &lam);                                              \
                cuzk_##FF##_sub(&out[i].y, &y3, &out[i].y);                                   \
                out[i].x = x3;                                                                \
            }                                                                                 \
        }                                                                                     \
        setup_wipe(s->l, m * sizeof s->l[0]);                                                 \
    }                                                                                         \
                                                                                              \
    typedef struct {                                                                          \
        AFF *out;                                                                             \
        const cuzk_fr *k;                                                                     \
        const setup_##G##_table *tab;                                                         \
        G##_scratch *scratch; /* one per worker */                                            \
    } G##_batch_ctx;                                                                          \
                                                                                              \
    static void G##_batch_range(void *p, size_t begin, size_t end, unsigned worker)           \
    {                                                                                         \
        G##_batch_ctx *c = p;                                                                 \
        for (size_t b = begin; b < end; b += SETUP_CHUNK) {                                   \
            size_t m = end - b < SETUP_CHUNK ? end - b : SETUP_CHUNK;                         \
            G##_chunk(c->out + b, c->k + b, m, c->tab, &c->scratch[worker]);                  \
        }                                                                                     \
    }                                                                                         \
                                                                                              \
    cuzk_err setup_##G##_mul_batch_var(AFF *out, const cuzk_fr *k, size_t n,                  \
                                       const setup_##G##_table *tab, unsigned nthreads)       \
    {                                                                                         \
        if (n == 0)                                                                           \
            return CUZK_OK;                                                                   \
        if (nthreads == 0)                                                                    \
            nthreads = cuzk_parallel_threads();                                               \
        G##_batch_ctx c = {out, k, tab, malloc((size_t)nthreads * sizeof(G##_scratch))};      \
        if (!c.scratch)                                                                       \
            return cuzk_error_set(CUZK_ENOMEM, "setup: out of memory (scratch)");             \
        cuzk_parallel_for(n, SETUP_CHUNK, nthreads, G##_batch_range, &c);                     \
        setup_wipe(c.scratch, (size_t)nthreads * sizeof(G##_scratch));                        \
        free(c.scratch);                                                                      \
        return CUZK_OK;                                                                       \
    }

SETUP_FIXED_BASE_(g1, cuzk_g1_affine, cuzk_g1_jac, cuzk_fp, fp)
SETUP_FIXED_BASE_(g2, cuzk_g2_affine, cuzk_g2_jac, cuzk_fp2, fp2)
