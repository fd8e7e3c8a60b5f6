/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: what the two flavours of the SupraSeal ABI share (abi/supraseal/supraseal.c). */
#ifndef CUZK_SUPRASEAL_INTERNAL_H
#define CUZK_SUPRASEAL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "cuzk/groth16.h"
#include "cuzk/params.h"
#include "cuzk_supraseal.h"

/* The library's settings (cuzk_supraseal_set_option, the environment at the first call). */
typedef struct {
    cuzk_backend backend;
    unsigned threads;        /* 0: every CPU */
    unsigned params_flags;   /* CUZK_PARAMS_TRUSTED, CUZK_PARAMS_CACHE */
    cuzk_gpu_opts gpu;
} cuzk_supraseal_cfg;
void cuzk_supraseal_cfg_get(cuzk_supraseal_cfg *out);

/* What an SRS handle points to: a loaded .params key, shared by reference count (the
 * process cache holds one reference per path it keeps; every proof in flight holds one). */
typedef struct {
    atomic_size_t refs;
    char *path;
    cuzk_params *p;
    unsigned log2_n;          /* the domain: n_h + 1 = 2^log2_n */
    pthread_mutex_t mu;       /* guards the making of the resident keys */
    cuzk_gpu_key *gk[CUZK_MAX_GPUS];
    unsigned n_gk;
    bool gk_made;
} cuzk_srs;
void cuzk_srs_ref(cuzk_srs *s);
void cuzk_srs_unref(cuzk_srs *s);

/* A call's device part done (start) and the rest to do (finish); frees with _free, after
 * finish or instead of it. gpu_mtx (a pthread_mutex_t, or NULL) is held around the device
 * part; gpu_index >= 0 pins it to that device. */
typedef struct cuzk_abi_pending cuzk_abi_pending;
RustError cuzk_abi_start(cuzk_abi_pending **out, const Assignment provers[], size_t num_circuits,
                         const fr_t r_s[], const fr_t s_s[], const SRS *srs, void *gpu_mtx,
                         int gpu_index);
RustError cuzk_abi_finish(cuzk_abi_pending *ap, groth16_proof proofs[]);
void cuzk_abi_pending_free(cuzk_abi_pending *ap);

#endif
