/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: the contract between the prover (src/groth16/prover.c) and the GPU pipeline
 * (src/groth16/gpu_pipeline.c) for one batch on the GPU backend.
 *
 * The prover owns the batch: it checks the witnesses, draws r and s, keeps the results,
 * runs B_G2 on its own CPU thread unless the pipeline computes it on the devices, and runs
 * the epilogue. The pipeline owns everything about the devices: which resident keys serve
 * the batch (the caller's, or one made for the call on each device the batch can use), and
 * per device a worker (the calling thread for the first, a thread each for the others) with
 * a helper thread that prepares the next partition's CPU side (a, b, c or the witness for
 * its upload, the split MSMs' bit vectors and gathered scalars) while the device proves the
 * present one. The devices claim the partitions from one counter as they free up.
 *
 * Order: cuzk_gpu_batch_open; then b2_on_device tells the prover whether B_G2 is the
 * pipeline's (so whether its CPU thread, which reads the witnesses after start returns,
 * needs copies of them); cuzk_gpu_batch_prove once; cuzk_gpu_batch_close, failure or not.
 * Nothing here calls back into prover.c.
 */
#ifndef CUZK_GROTH16_GPU_PIPELINE_H
#define CUZK_GROTH16_GPU_PIPELINE_H

#include <pthread.h>

#include "groth16/pk.h"

/* The devices of one batch (the pipeline's own; the prover reads b2_on_device only). */
typedef struct {
    cuzk_gpu_key *owned[CUZK_MAX_GPUS]; /* the keys made for this call */
    cuzk_gpu_key *one;                  /* cuzk_prove_opts.gpu_key */
    cuzk_gpu_key *const *keys;          /* one per device: the caller's or owned */
    unsigned n_keys;
    pthread_mutex_t *lock;              /* cuzk_prove_opts.device_lock (one key only) */
    bool b2_on_device;                  /* every key computes B_G2 on its device */
} cuzk_gpu_batch;

/* The batch's data for cuzk_gpu_batch_prove: the inputs are read during the call only. */
typedef struct {
    const cuzk_pk_view *pk;
    size_t n_wit;
    unsigned nthreads;            /* host threads for the CPU side (not 0) */
    const cuzk_fr *const *w;      /* n_wit witnesses of n_vars values */
    const cuzk_fr *const *abc;    /* given a, b, c (cuzk_prove_opts.abc), or NULL */
    const cuzk_fr *const *abc_split; /* or given as three vectors (cuzk_prove_extra) */
    size_t abc_len;
    /* or (w[j] NULL) each witness in its two parts (cuzk_prove_extra), read in place */
    const cuzk_fr *const *wit_inp, *const *wit_aux;
    cuzk_g1_jac *h, *a, *b1, *l;  /* n_wit results each */
    cuzk_g2_jac *b2;              /* n_wit results when b2_on_device, else NULL */
} cuzk_gpu_batch_io;

/* Takes the resident keys of opts (gpu_keys, or gpu_key with device_lock), or makes one per
 * visible device for the call (at most one per partition, CUZK_MAX_GPUS in all, made with
 * opts->gpu; a device after the first that cannot hold the key leaves the batch to the
 * others). Errors: the first device's (CUZK_EGPU, CUZK_EUNSUPPORTED without CUDA, ...). */
cuzk_err cuzk_gpu_batch_open(cuzk_gpu_batch *b, const cuzk_pk_view *pk, size_t n_wit,
                             const cuzk_prove_opts *opts) CUZK_WUR;

/* Proves io's batch over b's devices: H, A, B1, L (and B2 when b2_on_device) of every
 * partition into io's results; adds the prep (CPU side), device and per-stage figures to t.
 * On a failure every device stops claiming, and the first failure is returned with its
 * detail. */
cuzk_err cuzk_gpu_batch_prove(cuzk_gpu_batch *b, const cuzk_gpu_batch_io *io,
                              cuzk_prove_timings *t) CUZK_WUR;

/* Frees the keys made for the call (the caller's stay). */
void cuzk_gpu_batch_close(cuzk_gpu_batch *b);

#endif
