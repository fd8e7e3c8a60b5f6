/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Curio's flavour of the SupraSeal C2 ABI (include/cuzk_supraseal.h with
 * CUZK_SUPRASEAL_CURIO): a GPU mutex of the caller's, the split start/finalize calls and
 * the 8-argument generate_groth16_proofs_c, over the shared core in supraseal.c.
 */
#include <stdlib.h>
#include <string.h>

#include "supraseal/supraseal_internal.h"

#define ABI __attribute__((visibility("default")))

ABI void *create_gpu_mutex(void)
{
    pthread_mutex_t *m = malloc(sizeof *m);
    if (m && pthread_mutex_init(m, NULL) != 0) {
        free(m);
        m = NULL;
    }
    return m;
}

ABI void destroy_gpu_mutex(void *mtx)
{
    if (!mtx)
        return;
    pthread_mutex_destroy(mtx);
    free(mtx);
}

ABI RustError generate_groth16_proofs_start_c(const Assignment provers[], size_t num_circuits,
                                              const fr_t r_s[], const fr_t s_s[], const SRS *srs,
                                              void *gpu_mtx, int gpu_index, void **pending_out)
{
    if (!pending_out)
        return (RustError){CUZK_EINVAL, strdup("cuzk: pending_out is NULL")};
    *pending_out = NULL;
    cuzk_abi_pending *ap;
    RustError r = cuzk_abi_start(&ap, provers, num_circuits, r_s, s_s, srs, gpu_mtx, gpu_index);
    if (r.code == 0)
        *pending_out = ap;
    return r;
}

ABI RustError finalize_groth16_proof_c(void *pending, groth16_proof proofs[])
{
    RustError r = cuzk_abi_finish(pending, proofs);
    cuzk_abi_pending_free(pending);
    return r;
}

ABI void destroy_pending_proof(void *pending) { cuzk_abi_pending_free(pending); }

ABI RustError generate_groth16_proofs_c(const Assignment provers[], size_t num_circuits,
                                        const fr_t r_s[], const fr_t s_s[], groth16_proof proofs[],
                                        const SRS *srs, void *gpu_mtx, int gpu_index)
{
    void *pending;
    RustError r = generate_groth16_proofs_start_c(provers, num_circuits, r_s, s_s, srs, gpu_mtx,
                                                  gpu_index, &pending);
    if (r.code)
        return r;
    return finalize_groth16_proof_c(pending, proofs);
}
