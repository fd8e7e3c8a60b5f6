/* SPDX-License-Identifier: Apache-2.0 */
/* Distinct coefficients of sparse matrices (groth16/csr_dedup.h). */
#include <stdlib.h>
#include <string.h>

#include "groth16/csr_dedup.h"

static uint64_t fr_hash(const cuzk_fr *v)
{
    uint64_t h = v->l[0] ^ (v->l[1] * 0x9e3779b97f4a7c15ULL) ^ (v->l[2] * 0xbf58476d1ce4e5b9ULL) ^
                 (v->l[3] * 0x94d049bb133111ebULL);
    h ^= h >> 31;
    h *= 0xd6e8feb86659fd93ULL;
    return h ^ (h >> 32);
}

cuzk_err cuzk_csr_dedup(const cuzk_csr *const *ms, unsigned nm, size_t n_rows, size_t max_vals,
                        uint32_t **idx, cuzk_fr **tab, size_t *n_tab)
{
    *tab = NULL;
    *n_tab = 0;
    for (unsigned m = 0; m < nm; m++)
        idx[m] = NULL;
    if (max_vals == 0 || max_vals > UINT32_MAX)
        return cuzk_error_set(CUZK_EINVAL, "csr dedup: max_vals %zu", max_vals);
    size_t cap = 16;
    while (cap < 2 * max_vals)
        cap <<= 1;
    uint32_t *slot = malloc(cap * sizeof *slot); /* index + 1, 0: empty */
    cuzk_fr *t = malloc(max_vals * sizeof *t);
    cuzk_err e = slot && t ? CUZK_OK : cuzk_error_set(CUZK_ENOMEM, "csr dedup: out of memory");
    if (e == CUZK_OK)
        memset(slot, 0, cap * sizeof *slot);
    size_t n = 0;
    for (unsigned m = 0; e == CUZK_OK && m < nm; m++) {
        if (!ms[m])
            continue;
        const size_t nnz = ms[m]->row[n_rows];
        if (!(idx[m] = malloc((nnz ? nnz : 1) * sizeof *idx[m]))) {
            e = cuzk_error_set(CUZK_ENOMEM, "csr dedup: out of memory for %zu terms", nnz);
            break;
        }
        for (size_t k = 0; k < nnz; k++) {
            const cuzk_fr *v = &ms[m]->val[k];
            size_t h = (size_t)fr_hash(v) & (cap - 1);
            for (;;) {
                uint32_t s = slot[h];
                if (s == 0) {
                    if (n == max_vals) {
                        e = cuzk_error_set(CUZK_ESIZE, "csr dedup: more than %zu distinct values",
                                           max_vals);
                        break;
                    }
                    t[n] = *v;
                    slot[h] = (uint32_t)++n;
                    idx[m][k] = (uint32_t)(n - 1);
                    break;
                }
                if (memcmp(&t[s - 1], v, sizeof *v) == 0) {
                    idx[m][k] = s - 1;
                    break;
                }
                h = (h + 1) & (cap - 1);
            }
            if (e != CUZK_OK)
                break;
        }
    }
    free(slot);
    if (e != CUZK_OK) {
        free(t);
        for (unsigned m = 0; m < nm; m++) {
            free(idx[m]);
            idx[m] = NULL;
        }
        return e;
    }
    *tab = t;
    *n_tab = n;
    return CUZK_OK;
}
