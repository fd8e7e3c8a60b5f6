/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Groth16 proving key of either format behind one handle: a snarkjs .zkey (include/cuzk/
 * io.h), or a bellman/bellperson .params with the .r1cs of its circuit (include/cuzk/
 * params.h). Load it once with the checks of its format, then read its sizes and its
 * verification key, make it resident on a GPU with cuzk_gpu_opts, and prove with it
 * through the split API of include/cuzk/groth16.h (start here, finish there); the proofs
 * are those of cuzk_groth16_prove / cuzk_params_prove for the same key.
 *
 * Ownership: cuzk_key_load allocates a key that the caller frees with cuzk_key_free. A
 * loaded key is read-only: any number of threads may prove with it at once. It must
 * outlive every resident copy made from it (cuzk_key_gpu_new) and every pending proof
 * started with it. On failure *out is NULL, nothing is leaked, and cuzk_error_detail()
 * names the file (both files where the key and the circuit disagree) and the problem.
 */
#ifndef CUZK_KEY_H
#define CUZK_KEY_H

#include "cuzk/groth16.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

typedef struct cuzk_key cuzk_key;

typedef enum {
    CUZK_KEY_ZKEY = 0,   /* snarkjs .zkey: its circuit is inside */
    CUZK_KEY_PARAMS = 1  /* bellman/bellperson .params with the circuit's .r1cs */
} cuzk_key_format;

/* "zkey" or "params" ("?" for anything else). */
const char *cuzk_key_format_name(cuzk_key_format f);

typedef struct {
    const char *r1cs;          /* .params: the circuit's .r1cs (required); NULL or "" for a .zkey */
    unsigned params_flags;     /* .params: CUZK_PARAMS_TRUSTED, CUZK_PARAMS_CACHE (params.h) */
    const cuzk_gpu_opts *gpu;  /* .params: where the subgroup checks run (params_check_min);
                                  NULL: the defaults */
    const char *cache_dir;     /* .params with CUZK_PARAMS_CACHE: the cache's directory
                                  (cuzk_params_load_ex); NULL: beside the key */
} cuzk_key_opts;

/* Loads the key at path (opts NULL: a .zkey with no options). The file says its format: one
 * that starts with the "zkey" magic is a .zkey; any other file, with opts->r1cs given, is a
 * .params for the circuit of that .r1cs, checked to fit it (cuzk_params_check_circuit).
 * Errors: CUZK_EIO (path or r1cs is not a regular file or cannot be read), CUZK_EINVAL (an
 * r1cs given with a .zkey; a file named *.params without an r1cs; params_flags without an
 * r1cs), CUZK_ESIZE (the .params does not fit the circuit, both files named), and the
 * errors of cuzk_zkey_load, cuzk_params_load_gpu and cuzk_bellman_circuit_load_for. */
cuzk_err cuzk_key_load(cuzk_key **out, const char *path, const cuzk_key_opts *opts) CUZK_WUR;
void cuzk_key_free(cuzk_key *k);   /* NULL is a no-op */

cuzk_key_format cuzk_key_format_of(const cuzk_key *k);
/* Host memory the loaded key holds: its points, its circuit's rows (and a .params's
 * densities) and its verification key. */
uint64_t cuzk_key_bytes(const cuzk_key *k);
uint32_t cuzk_key_n_vars(const cuzk_key *k);       /* witness length, w[0] = 1 */
uint32_t cuzk_key_n_public(const cuzk_key *k);     /* public inputs w[1 .. n_public] */
uint32_t cuzk_key_domain_size(const cuzk_key *k);  /* the H step's domain, a power of two */
/* The key's verification key (owned by the key). */
const cuzk_vk *cuzk_key_vk(const cuzk_key *k);

/* A witness fits the key: n == n_vars (CUZK_ESIZE: "the witness has N values, the key
 * expects M") and w[0] == 1 (CUZK_EFORMAT). */
cuzk_err cuzk_key_check_witness(const cuzk_key *k, const cuzk_fr *w, size_t n) CUZK_WUR;

/* Proves n_wit witnesses (wit_len values each) with the key, as cuzk_groth16_prove_start
 * does (options, timings, r and s, errors: include/cuzk/groth16.h); finish or free the
 * pending proof with cuzk_groth16_prove_finish / cuzk_groth16_pending_free. opts->gpu_key,
 * when given, must have been made from this key. */
cuzk_err cuzk_key_prove_start(cuzk_pending **out, const cuzk_key *k,
                              const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                              const cuzk_prove_opts *opts) CUZK_WUR;
/* start and finish in one call. */
cuzk_err cuzk_key_prove(cuzk_proof *proofs, cuzk_prove_timings *timings, const cuzk_key *k,
                        const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                        const cuzk_prove_opts *opts) CUZK_WUR;

/* Makes the key resident on GPU device `device` with opts (NULL: the defaults), as
 * cuzk_groth16_gpu_key_new does for a .zkey (errors: CUZK_EUNSUPPORTED in a build without
 * CUDA, CUZK_EGPU). Free it with cuzk_groth16_gpu_key_free, before the key. */
cuzk_err cuzk_key_gpu_new(cuzk_gpu_key **out, const cuzk_key *k, int device,
                          const cuzk_gpu_opts *opts) CUZK_WUR;

/* How a resident key proves, as decided when it was made from its options and the
 * device's free memory. */
typedef struct {
    bool synth_device;  /* a, b, c synthesised on the device from the uploaded witness;
                           false: on the CPU, then uploaded (host memory for them per proof) */
    bool b_g2_device;   /* the B_G2 MSM on the device; false: on its own CPU thread */
    unsigned streamed;  /* base sets streamed from host memory instead of resident:
                           bit 0 H, 1 A, 2 B1, 3 L, 4 B2 */
    unsigned precomputed; /* base sets with precomputed multiples (the same bits) */
} cuzk_gpu_key_info;
/* Fills *info (all false and 0 for NULL). */
void cuzk_gpu_key_get_info(const cuzk_gpu_key *gk, cuzk_gpu_key_info *info);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
