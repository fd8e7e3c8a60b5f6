/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the io readers. */
#ifndef CUZK_IO_INTERNAL_H
#define CUZK_IO_INTERNAL_H

#include <stdlib.h>

#include "cuzk/io.h"

static inline void io_csr_free(cuzk_csr *m)
{
    free(m->row);
    free(m->col);
    free(m->val);
    m->row = NULL;
    m->col = NULL;
    m->val = NULL;
    m->n_rows = 0;
}

/* r = sum of the terms of row i times w[col]. Variable time (public structure). */
static inline void io_csr_row_dot(cuzk_fr *r, const cuzk_csr *m, size_t i, const cuzk_fr *w)
{
    cuzk_fr acc, t;
    cuzk_fr_set_zero(&acc);
    for (uint64_t k = m->row[i]; k < m->row[i + 1]; k++) {
        cuzk_fr_mul(&t, &m->val[k], &w[m->col[k]]);
        cuzk_fr_add(&acc, &acc, &t);
    }
    *r = acc;
}

#endif
