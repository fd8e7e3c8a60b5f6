/* Fixed-base scalar multiplication of the G1 and G2 generators with window tables,
 * parallel over many scalars, results converted to affine in batches. */
#include <stdlib.h>
#include <string.h>

#include "setup/setup_internal.h"
#include "util/parallel.h"

#define SETUP_CHUNK 512   /* scalars per batch_to_affine (one inversion each) */

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
#define SETUP_FIXED_BASE_(G, AFF, JAC)                                                        \
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
    typedef struct {                                                                          \
        AFF *out;                                                                             \
        const cuzk_fr *k;                                                                     \
        const setup_##G##_table *tab;                                                         \
        JAC *scratch; /* SETUP_CHUNK per worker */                                            \
    } G##_batch_ctx;                                                                          \
                                                                                              \
    static void G##_batch_range(void *p, size_t begin, size_t end, unsigned worker)           \
    {                                                                                         \
        G##_batch_ctx *c = p;                                                                 \
        JAC *s = c->scratch + (size_t)worker * SETUP_CHUNK;                                   \
        for (size_t b = begin; b < end; b += SETUP_CHUNK) {                                   \
            size_t m = end - b < SETUP_CHUNK ? end - b : SETUP_CHUNK;                         \
            for (size_t i = 0; i < m; i++)                                                    \
                setup_##G##_mul_one_var(&s[i], &c->k[b + i], c->tab);                         \
            cuzk_##G##_batch_to_affine(c->out + b, s, m);                                     \
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
        G##_batch_ctx c = {out, k, tab, malloc((size_t)nthreads * SETUP_CHUNK * sizeof(JAC))}; \
        if (!c.scratch)                                                                       \
            return cuzk_error_set(CUZK_ENOMEM, "setup: out of memory (scratch)");             \
        cuzk_parallel_for(n, SETUP_CHUNK, nthreads, G##_batch_range, &c);                     \
        setup_wipe(c.scratch, (size_t)nthreads * SETUP_CHUNK * sizeof(JAC));                  \
        free(c.scratch);                                                                      \
        return CUZK_OK;                                                                       \
    }

SETUP_FIXED_BASE_(g1, cuzk_g1_affine, cuzk_g1_jac)
SETUP_FIXED_BASE_(g2, cuzk_g2_affine, cuzk_g2_jac)
