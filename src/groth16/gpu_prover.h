/* Internal: the GPU stages of the prover (src/groth16/gpu_prover.c, CUDA builds only). */
#ifndef CUZK_GROTH16_GPU_PROVER_H
#define CUZK_GROTH16_GPU_PROVER_H

#include "cuzk/msm.h"
#include "groth16/pk.h"

/* A resident key made from a view (the public constructor wraps this). */
cuzk_err cuzk_gpu_key_from_view(cuzk_gpu_key **out, const cuzk_pk_view *pk, int device) CUZK_WUR;

/* The device part of one proof, under `lock` (NULL: the key's own lock): H from a, b, c (the n values of the
 * constraint vectors; clobbered), then the G1 MSMs H, A, B1, L of witness w.
 * scratch: room for max(n, n_vars) canonical scalars. */
cuzk_err cuzk_gpu_prove_one(cuzk_gpu_key *gk, pthread_mutex_t *lock, const cuzk_pk_view *pk,
                            const cuzk_fr *w,
                            cuzk_fr *a, cuzk_fr *b, cuzk_fr *c, cuzk_msm_scalar *scratch,
                            cuzk_g1_jac *h, cuzk_g1_jac *ra, cuzk_g1_jac *rb1, cuzk_g1_jac *rl,
                            double *h_ms, double *msm_ms) CUZK_WUR;

#endif
