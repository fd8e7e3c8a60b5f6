/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: a sparse matrix's coefficients as indices into a table of its distinct values.
 * Circuits like PoRep use few distinct coefficients (1, -1, powers of two, some constants),
 * so resident matrices shrink from 36 to 8 bytes a term (GPU synthesis at 2^27). */
#ifndef CUZK_GROTH16_CSR_DEDUP_H
#define CUZK_GROTH16_CSR_DEDUP_H

#include "cuzk/io.h"

/* For the terms of rows [0, n_rows) of each of the nm matrices (NULL entries skipped):
 * idx[m][k] = i with tab[i] == ms[m]->val[k], tab holding the distinct values in order of
 * first appearance (one table for all matrices). Returns CUZK_OK with *tab and each idx[m]
 * allocated (caller frees), or CUZK_ESIZE when there are more than max_vals distinct
 * values (nothing allocated), CUZK_ENOMEM. */
cuzk_err cuzk_csr_dedup(const cuzk_csr *const *ms, unsigned nm, size_t n_rows, size_t max_vals,
                        uint32_t **idx, cuzk_fr **tab, size_t *n_tab) CUZK_WUR;

#endif
