/* Fixed-base scalar multiplication of the G1 and G2 generators with window tables,
 * parallel over many scalars, results converted to affine in batches. */
#include <stdlib.h>
#include <string.h>

#include "setup/setup_internal.h"
#include "util/parallel.h"

#define SETUP_CHUNK 512   /* scalars per batch_to_affine (one inversion each) */

/* Bits [pos, pos + SETUP_WBITS) of the canonical 256-bit scalar l. */
static unsigned scalar_digit(const uint64_t l[CUZK_FR_LIMBS], unsigned pos)
{
    unsigned limb = pos / 64, off = pos % 64;
    uint64_t v = l[limb] >> off;
    if (off + SETUP_WBITS > 64 && limb + 1 < CUZK_FR_LIMBS)
        v |= l[limb + 1] << (64 - off);
    return (unsigned)(v & SETUP_WSIZE);
}

/* The template: one copy for G1, one for G2. */
#define SETUP_FIXED_BASE_(G, AFF, JAC)                                                        \
    cuzk_err setup_##G##_table_new(setup_##G##_table *tab)                                    \
    {                                                                                         \
        size_t n = (size_t)SETUP_NWIN * SETUP_WSIZE;                                          \
        JAC *jac = malloc(n * sizeof *jac);                                                   \
        tab->t = malloc(n * sizeof *tab->t);                                                  \
        if (!jac || !tab->t) {                                                                \
            free(jac);                                                                        \
            free(tab->t);                                                                     \
            tab->t = NULL;                                                                    \
            return cuzk_error_set(CUZK_ENOMEM, "setup: out of memory for a window table");    \
        }                                                                                     \
        AFF g;                                                                                \
        JAC base;                                                                             \
        cuzk_##G##_generator(&g);                                                             \
        cuzk_##G##_jac_from_affine(&base, &g);                                                \
        for (unsigned j = 0; j < SETUP_NWIN; j++) {                                           \
            JAC *w = jac + (size_t)j * SETUP_WSIZE; /* w[d - 1] = d * base */                 \
            w[0] = base;                                                                      \
            if (SETUP_WSIZE > 1)                                                              \
                cuzk_##G##_jac_dbl(&w[1], &base);                                             \
            for (unsigned d = 3; d <= SETUP_WSIZE; d++)                                       \
                cuzk_##G##_jac_add_var(&w[d - 1], &w[d - 2], &base);                          \
            for (unsigned b = 0; b < SETUP_WBITS; b++)                                        \
                cuzk_##G##_jac_dbl(&base, &base);                                             \
        }                                                                                     \
        cuzk_##G##_batch_to_affine(tab->t, jac, n);                                           \
        free(jac);                                                                            \
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
        for (unsigned j = 0; j < SETUP_NWIN; j++) {                                           \
            unsigned d = scalar_digit(l, j * SETUP_WBITS);                                    \
            if (d)                                                                            \
                cuzk_##G##_jac_add_affine_var(r, r, &tab->t[(size_t)j * SETUP_WSIZE + d - 1]); \
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
