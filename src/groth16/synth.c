/* SPDX-License-Identifier: Apache-2.0 */
/* Synthesis on the CPU: a = A.w, b = B.w, c = C.w (or a o b) over the key's rows, zero beyond
 * them, on all threads (the CPU backend's prep, and the GPU backend's when the key's matrices
 * are not on the device). */
#include <string.h>

#include "cuzk/ff.h"
#include "groth16/pk.h"
#include "util/parallel.h"

typedef struct {
    const cuzk_pk_view *pk;
    const cuzk_fr *w;
    cuzk_fr *a, *b, *c;
} synth_ctx;

/* Witnesses of large circuits are mostly bits: a term whose wire holds 0 adds nothing and
 * one holding 1 adds its coefficient, so only the other terms need a product. (Variable
 * time in the witness, like the MSMs.) */
static void csr_row_dot(cuzk_fr *out, const cuzk_csr *m, size_t row, const cuzk_fr *w)
{
    cuzk_fr acc, t;
    cuzk_fr_set_zero(&acc);
    for (uint64_t k = m->row[row]; k < m->row[row + 1]; k++) {
        const cuzk_fr *x = &w[m->col[k]];
        if (cuzk_fr_is_zero(x))
            continue;
        if (cuzk_fr_is_one(x)) {
            cuzk_fr_add(&acc, &acc, &m->val[k]);
            continue;
        }
        cuzk_fr_mul(&t, &m->val[k], x);
        cuzk_fr_add(&acc, &acc, &t);
    }
    *out = acc;
}

/* Witness values of a row a few rows ahead: the columns of large circuits are scattered over
 * a witness far larger than the caches, so the loads, not the products, set the pace. */
#define SYNTH_PREFETCH_ROWS 8
static void csr_row_prefetch(const cuzk_csr *m, size_t row, const cuzk_fr *w)
{
    uint64_t k = m->row[row], e = m->row[row + 1];
    for (unsigned t = 0; k < e && t < 4; k++, t++)
        __builtin_prefetch(&w[m->col[k]]);
}

static void synth_range(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    synth_ctx *c = p;
    size_t rows = c->pk->n_rows;
    for (size_t i = begin; i < end; i++) {
        if (i + SYNTH_PREFETCH_ROWS < rows) {
            size_t ahead = i + SYNTH_PREFETCH_ROWS;
            csr_row_prefetch(c->pk->ma, ahead, c->w);
            csr_row_prefetch(c->pk->mb, ahead, c->w);
            if (c->pk->mc)
                csr_row_prefetch(c->pk->mc, ahead, c->w);
        }
        if (i < rows) {
            csr_row_dot(&c->a[i], c->pk->ma, i, c->w);
            csr_row_dot(&c->b[i], c->pk->mb, i, c->w);
            if (c->pk->mc)
                csr_row_dot(&c->c[i], c->pk->mc, i, c->w);
            else
                cuzk_fr_mul(&c->c[i], &c->a[i], &c->b[i]);
        } else {
            cuzk_fr_set_zero(&c->a[i]);
            cuzk_fr_set_zero(&c->b[i]);
            cuzk_fr_set_zero(&c->c[i]);
        }
    }
}

void cuzk_pk_view_synth_abc(const cuzk_pk_view *pk, const cuzk_fr *w, cuzk_fr *abc,
                            unsigned nthreads)
{
    size_t n = (size_t)1 << pk->log2_domain;
    synth_ctx sc = {pk, w, abc, abc + n, abc + 2 * n};
    cuzk_parallel_for(n, 1024, nthreads, synth_range, &sc);
}

void cuzk_abc_split_copy(cuzk_fr *dst, const cuzk_fr *const *abc_split, size_t j, size_t len,
                         size_t n, unsigned nthreads)
{
    for (size_t v = 0; v < 3; v++) {
        cuzk_parallel_memcpy(dst + v * n, abc_split[3 * j + v], sizeof(cuzk_fr) * len, nthreads);
        memset(dst + v * n + len, 0, sizeof(cuzk_fr) * (n - len));
    }
}
