/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Groth16 proving and verification (BLS12-381), CPU backend.
 *
 * Load a key once (cuzk_zkey_load, include/cuzk/io.h), then prove any number of batches:
 * one call proves one witness per circuit instance ("partition") against the same key,
 * running the stages of DESIGN.md section 2: prep (synthesis of a, b, c and the scalar
 * bit vectors), H (NTT step and its MSM), the G1 MSMs (A, B1, L with the 0/1/significant
 * split), the B_G2 MSM on its own thread, and the epilogue that randomises with r, s.
 *
 * r and s are drawn from the operating system (getrandom) for every proof and used only
 * in constant-time code; they are never logged, and wiped (explicit_bzero) when the pending
 * proof is freed. cuzk_prove_opts.test_r/test_s fix them for reproducible proofs: for tests
 * only, never in production (with known r and s a proof is not zero-knowledge: a guess of
 * the witness can be checked against it). The cuzk program takes them only in its test
 * build (tests/cuzk-test).
 *
 * Split API: cuzk_groth16_prove_start() runs everything but B_G2 and the epilogue and
 * returns a pending proof; cuzk_groth16_prove_finish() joins B_G2 and runs the epilogue;
 * cuzk_groth16_pending_free() releases the pending proof (after finish, or instead of it,
 * in which case it waits for its background work first). Lifetime rules: the pending
 * proof copies what it reads after start returns (the witnesses, r and s); the key must
 * stay loaded until finish or free returns. Each pending proof is finished or freed once.
 */
#ifndef CUZK_GROTH16_H
#define CUZK_GROTH16_H

#include <pthread.h>

#include "cuzk/io.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

/* Where the heavy stages run. AUTO: the GPU when this build has CUDA and a device answers,
 * else the CPU. Only the options choose (the programs map CUZK_BACKEND=cpu|gpu onto them). */
typedef enum { CUZK_BACKEND_AUTO = 0, CUZK_BACKEND_CPU = 1, CUZK_BACKEND_GPU = 2 } cuzk_backend;

/* A proving key made resident on one GPU: its MSM bases uploaded once, its NTT domain and
 * work buffers allocated once, so proofs allocate nothing on the device in steady state. */
typedef struct cuzk_gpu_key cuzk_gpu_key;
#define CUZK_MAX_GPUS 16 /* devices one batch spreads over */

typedef struct {
    unsigned nthreads;        /* 0: cuzk_parallel_threads() */
    cuzk_backend backend;     /* AUTO by default */
    cuzk_gpu_key *gpu_key;    /* GPU backend: a resident key (NULL: one is made per call) */
    /* GPU backend: held around the device work of each partition, so that several workers
     * share one device (NULL: the resident key's own lock). */
    pthread_mutex_t *device_lock;
    /* GPU backend, several devices: the partitions of the batch are spread over these
     * resident keys (one per device, each under its own lock), each device taking the next
     * partition as it frees up. When n_gpu_keys > 0, gpu_key and device_lock are ignored.
     * With neither, a batch of several partitions uses every visible device (at most
     * CUZK_MAX_GPUS), with resident keys made for the call. */
    cuzk_gpu_key *const *gpu_keys;
    unsigned n_gpu_keys;
    const cuzk_fr *test_r;    /* tests only: fixed r for every proof of the batch */
    const cuzk_fr *test_s;    /* tests only: fixed s */
    /* Optional: the constraint vectors computed outside (as bellperson does before it calls
     * SupraSeal): abc[j] holds 3n values for witness j, n the domain size: a = A.w, then
     * b = B.w, then c (C.w, or a o b for snarkjs keys), each zero beyond the key's rows.
     * Synthesis is then skipped; the arrays are read during start only. NULL: synthesise. */
    const cuzk_fr *const *abc;
    /* GPU backend: how the resident keys made for the call use their devices (NULL:
     * defaults; a given key keeps the options it was made with) */
    const struct cuzk_gpu_opts *gpu;
} cuzk_prove_opts;

/* Milliseconds per stage, summed over the batch. */
typedef struct {
    double prep_ms;       /* witness checks, synthesis a, b, c, bit vectors */
    double h_ms;          /* NTTs of the H step and the H MSM */
    double msm_ms;        /* A, B1, L MSMs (GPU: what is left of them after the H MSM) */
    double b_g2_ms;       /* B2 MSM (own thread, overlapping the above) */
    double epilogue_ms;   /* randomisation and affine conversion */
    double total_ms;
    /* GPU backend: time the device lock was held, and when the device work of the batch
     * began and ended (CLOCK_MONOTONIC, ms); all 0 on the CPU backend. */
    double device_ms;
    double device_first_ms, device_last_ms;
    /* GPU backend, synthesis on the device: witnesses uploaded from where they lie
     * (page-locked in place) rather than from a page-locked copy */
    unsigned witness_in_place;
    /* GPU backend, the device time by stage (host clock around each synchronous step):
     * a, b, c synthesised on the device (given or synthesised on the CPU, their upload
     * overlaps the NTTs and counts there); the H step's NTTs; the H MSM; the batch adds of the
     * ones of A, B1, L; their tail MSMs (the significant scalars); B2's batch add and tail
     * when B_G2 runs on the device. The split MSMs (A, B1, L, B2) run beside the H step and
     * each other, each on its own host thread: these are each one's own time, and their sum
     * exceeds device_ms. dev_split_wait_ms: the time, within device_ms, that the split MSMs
     * waited for their inputs (the splits' preparation on the CPU), the longest of them. */
    double dev_abc_ms, dev_ntt_ms, dev_h_msm_ms, dev_batch_add_ms, dev_tail_ms, dev_b2_ms;
    double dev_split_wait_ms;
} cuzk_prove_timings;

typedef struct cuzk_pending cuzk_pending;

/* Proves n_wit witnesses (each n_vars values, w[0] = 1) into proofs[0 .. n_wit-1].
 * timings and opts may be NULL. Errors: CUZK_ESIZE / CUZK_EFORMAT for a witness that does
 * not fit the key (cuzk_error_detail names which), CUZK_ERANDOM, CUZK_ENOMEM. */
cuzk_err cuzk_groth16_prove(cuzk_proof *proofs, cuzk_prove_timings *timings, const cuzk_zkey *pk,
                            const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                            const cuzk_prove_opts *opts) CUZK_WUR;

cuzk_err cuzk_groth16_prove_start(cuzk_pending **out, const cuzk_zkey *pk,
                                  const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                                  const cuzk_prove_opts *opts) CUZK_WUR;
cuzk_err cuzk_groth16_prove_finish(cuzk_proof *proofs, cuzk_prove_timings *timings,
                                   cuzk_pending *p) CUZK_WUR;
void cuzk_groth16_pending_free(cuzk_pending *p);
/* The timings of the work done so far (after start: everything but B_G2's CPU thread and
 * the epilogue), e.g. the device figures as soon as start returns. */
void cuzk_groth16_pending_timings(const cuzk_pending *p, cuzk_prove_timings *t);

/* How a resident key uses its device (cuzk_groth16_gpu_key_new, cuzk_params_load_gpu, the
 * engine's config, the daemon's [gpu] section). All zero (cuzk_gpu_opts_default) is the
 * default of every field; each default is the faster one measured on an H200
 * (bench/RESULTS.md). */
typedef enum {
    CUZK_GPU_SYNTH_AUTO = 0, /* a, b, c synthesised on the device when the key's matrices fit
                                there beside the proving work: whole (36 bytes a term), else
                                with deduplicated coefficients (8 bytes a term), else on the CPU */
    CUZK_GPU_SYNTH_FULL,     /* whole matrices on the device, or the CPU when they do not fit */
    CUZK_GPU_SYNTH_DEDUP,    /* deduplicated coefficients, or the CPU when they do not fit */
    CUZK_GPU_SYNTH_OFF       /* a, b, c synthesised on the CPU and uploaded */
} cuzk_gpu_synth;
typedef enum {
    CUZK_GPU_BASES_AUTO = 0, /* each base set resident when it fits beside the proving work,
                                else streamed from page-locked host memory */
    CUZK_GPU_BASES_RESIDENT, /* every set resident (the key fails when they do not fit) */
    CUZK_GPU_BASES_STREAM    /* every set streamed, msm_chunk bases at a time */
} cuzk_gpu_bases;
typedef enum {
    CUZK_GPU_WITNESS_AUTO = 0, /* witnesses of 1 GiB and more page-locked in place, smaller
                                  ones copied into a page-locked buffer */
    CUZK_GPU_WITNESS_COPY,     /* always copied */
    CUZK_GPU_WITNESS_REGISTER  /* always page-locked in place (the copy when that fails) */
} cuzk_gpu_witness;
typedef enum {
    CUZK_GPU_B_G2_DEVICE = 0, /* the B_G2 MSM on the device (its own CPU thread when its G2
                                 bases do not fit there) */
    CUZK_GPU_B_G2_CPU         /* always on its own CPU thread, beside the device work */
} cuzk_gpu_b_g2;
typedef enum {
    CUZK_GPU_PRECOMPUTE_AUTO = 0, /* keys that stay (the daemon's, the SupraSeal ABI's, those
                                     made by cuzk_key_gpu_new): resident G1 base sets of 2^16
                                     points or more get precomputed multiples
                                     (cuzk_gpu_msm_precompute, window chosen: about 12
                                     copies) while they leave a quarter of the device's
                                     memory free beside the proving work; the keys a one-shot
                                     proof makes for itself get none (they would take longer
                                     to make than they save) */
    CUZK_GPU_PRECOMPUTE_OFF,      /* none */
    CUZK_GPU_PRECOMPUTE_ON        /* as AUTO, every resident G1 set whatever its size, and
                                     the one-shot keys too */
} cuzk_gpu_precompute;
typedef struct cuzk_gpu_opts {
    cuzk_gpu_synth synth;
    cuzk_gpu_bases bases;
    size_t msm_chunk;          /* streamed bases: bases a chunk (0: 2^22) */
    cuzk_gpu_witness witness;
    cuzk_gpu_b_g2 b_g2;
    /* .params loading: vectors of at least this many points have their subgroup checks on
     * the device when one answers (0: 65536; SIZE_MAX: never) */
    size_t params_check_min;
    cuzk_gpu_precompute precompute;
} cuzk_gpu_opts;

/* All defaults. */
void cuzk_gpu_opts_default(cuzk_gpu_opts *o);
/* Sets one option by its name in the daemon's ini and the programs' --gpu NAME=VALUE:
 *   synth = auto|full|dedup|off      bases = auto|resident|stream     msm_chunk = N (> 0)
 *   witness = auto|copy|register     b_g2 = device|cpu               params_check_min = N
 * CUZK_EINVAL, with a detail naming the option and the values it takes, for anything else. */
cuzk_err cuzk_gpu_opts_set(cuzk_gpu_opts *o, const char *name, const char *value) CUZK_WUR;

/* Makes pk resident on GPU device `device` (CUZK_EUNSUPPORTED in a build without CUDA,
 * CUZK_EGPU when the device fails or lacks memory: the detail says which). The key must
 * outlive the resident copy; opts are copied. A resident key serves one proof at a time (it is locked while
 * in use); make one per GPU worker for more. */
cuzk_err cuzk_groth16_gpu_key_new(cuzk_gpu_key **out, const cuzk_zkey *pk, int device,
                                  const cuzk_gpu_opts *opts) CUZK_WUR;   /* opts NULL: defaults */
void cuzk_groth16_gpu_key_free(cuzk_gpu_key *k);
/* The backend a call with these options would use (opts NULL: AUTO): CPU or GPU, with AUTO
 * resolved as above (asking the driver whether a device answers). */
cuzk_backend cuzk_groth16_backend(const cuzk_prove_opts *opts);

/* The public inputs of a witness: w[1 .. n_public]. */
const cuzk_fr *cuzk_groth16_public(const cuzk_zkey *pk, const cuzk_fr *witness);

/* Checks a proof: e(A, B) = e(alpha1, beta2) e(vk_x, gamma2) e(C, delta2) with
 * vk_x = IC_0 + sum pub_i IC_i. CUZK_OK when valid; CUZK_EVERIFY when the equation fails;
 * CUZK_ESIZE when n_pub != vk->n_public; CUZK_ENOT_ON_CURVE / CUZK_ENOT_IN_SUBGROUP for
 * proof points outside G1/G2; CUZK_EFORMAT for a key with a point at infinity
 * (cuzk_vk_check). */
cuzk_err cuzk_groth16_verify(const cuzk_vk *vk, const cuzk_fr *pub, size_t n_pub,
                             const cuzk_proof *proof) CUZK_WUR;

/* A verification key fit to verify with: CUZK_EFORMAT when alpha1, beta2, gamma2, delta2 or
 * an IC point is the point at infinity (such a key accepts forged proofs: with all of them
 * at infinity, any proof whose points are at infinity verifies), or when vk->has_alphabeta
 * and vk->alphabeta is not e(alpha1, beta2) (one pairing). The detail names `name` (the
 * key's file) and the field, as "vk.json: vk_gamma_2: the point at infinity".
 * cuzk_groth16_verify refuses the points at infinity too (not the vk_alphabeta_12 check). */
cuzk_err cuzk_vk_check(const cuzk_vk *vk, const char *name) CUZK_WUR;

/* Uniform random element of Fr from getrandom (rejection sampling). CUZK_ERANDOM. */
cuzk_err cuzk_random_fr(cuzk_fr *out) CUZK_WUR;

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
