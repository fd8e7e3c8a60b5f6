/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk_gpu_prep_splits_parts (the GPU pipeline's host side for a witness held in two parts,
 * as the SupraSeal ABI's callers hold it) against cuzk_gpu_prep_splits of the joined witness:
 * the same bit vectors, counts and gathered scalars for A, B and L, on porep workloads whose
 * input count is and is not a multiple of 64 bits, on one thread and on several. CPU only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/porep.h"
#include "groth16/gpu_prover.h"

static int failures;

static void check(bool ok, const char *what, unsigned k, int s)
{
    if (!ok) {
        failures++;
        printf("FAIL porep-%u split %d: %s\n", k, s, what);
    }
}

/* npub: the view's public inputs (0: the workload's), to put the split where a test wants */
static void one_case(unsigned k, unsigned threads, uint32_t npub)
{
    cuzk_porep *w;
    if (cuzk_porep_new_ex(&w, k, 1, k, NULL, false) != CUZK_OK)
        exit(2);
    cuzk_pk_view vv = *cuzk_porep_view(w);
    if (npub)
        vv.n_public = npub;
    const cuzk_pk_view *v = &vv;
    const cuzk_fr *wit = cuzk_porep_witnesses(w)[0];
    size_t off = v->n_public + 1;
    cuzk_gpu_bufs x, y;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    if (!cuzk_gpu_bufs_splits_alloc(&x, v->n_vars) || !cuzk_gpu_bufs_splits_alloc(&y, v->n_vars))
        exit(2);
    if (cuzk_gpu_prep_splits(v, wit, &x, threads) != CUZK_OK ||
        cuzk_gpu_prep_splits_parts(v, wit, wit + off, &y, threads) != CUZK_OK) {
        printf("FAIL porep-%u: %s\n", k, cuzk_error_detail());
        failures++;
        return;
    }
    for (int s = 0; s < 3; s++) {
        const cuzk_gpu_split_in *a = &x.sp[s], *b = &y.sp[s];
        size_t words = CUZK_MSM_BITVEC_WORDS(a->n);
        check(a->n == b->n, "base counts differ", k, s);
        check(a->n_sig == b->n_sig, "significant counts differ", k, s);
        if (a->n != b->n || a->n_sig != b->n_sig)
            continue;
        check(!memcmp(a->one, b->one, words * 8), "the ones' bits differ", k, s);
        check(!memcmp(a->sig, b->sig, words * 8), "the significant bits differ", k, s);
        check(!memcmp(a->s, b->s, a->n_sig * sizeof *a->s), "the gathered scalars differ", k, s);
    }
    printf("porep-%u (%zu inputs, %u wires), %u threads: A %zu/%zu, B %zu/%zu, L %zu/%zu "
           "significant/bases\n", k, off, v->n_vars, threads, y.sp[0].n_sig, y.sp[0].n,
           y.sp[1].n_sig, y.sp[1].n, y.sp[2].n_sig, y.sp[2].n);
    cuzk_gpu_bufs_splits_free(&x);
    cuzk_gpu_bufs_splits_free(&y);
    cuzk_porep_free(w);
}

int main(void)
{
    /* porep-k has min(m/8, 327) public inputs: 9 + 1 (k = 6), 96 + 1 (k = 10), 327 + 1 */
    unsigned ks[] = {6, 10, 14, 16};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        for (unsigned t = 1; t <= 4; t += 3)
            one_case(ks[i], t, 0);
    /* inputs a whole number of words (63 + 1, 127 + 1), and one word and a bit */
    uint32_t np[] = {63, 127, 64};
    for (size_t i = 0; i < 3; i++)
        one_case(10, 2, np[i]);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
