/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bellman / bellperson (Filecoin) Groth16 parameters: the .params file, proving with it
 * from a circom .r1cs and .wtns, and Filecoin's 192-byte compressed proof.
 *
 * File layout (bellman's Parameters::write; every length a u32 big-endian, every point
 * uncompressed zcash encoding: G1 x||y 96 bytes, G2 x.c1||x.c0||y.c1||y.c0 192 bytes,
 * big-endian coordinates, byte 0 carrying the flags 0x80 compressed (must be clear),
 * 0x40 infinity, 0x20 sort (must be clear)):
 *   alpha_g1, beta_g1 (G1), beta_g2, gamma_g2 (G2), delta_g1 (G1), delta_g2 (G2),
 *   u32 n_ic, ic[n_ic] (G1),
 *   u32 n_h, h[n_h] (G1), u32 n_l, l[n_l] (G1), u32 n_a, a[n_a] (G1),
 *   u32 n_b_g1, b_g1[n_b_g1] (G1), u32 n_b_g2, b_g2[n_b_g2] (G2),
 * and nothing after. No point of the vectors or of IC may be infinity (bellman refuses
 * them too); neither may alpha, beta, gamma, delta.
 *
 * The circuit (bellman's convention, as bellman's generator and prover build it):
 *   wires: w[0] = 1, the public inputs w[1 .. n_public], then the private ("aux") wires;
 *     a circom wire index is the bellman index (circom puts the public signals first).
 *   rows: the m constraints of the .r1cs, then one row per input i = 0 .. n_public
 *     (the constant one included): A = w_i (coefficient 1), B = 0, C = 0
 *     (bellman's "input * 0 = 0", which makes the IC query and the A inputs dense).
 *   domain: n = 2^k >= m + n_public + 1, roots of unity from 7; n_h = n - 1 points
 *     tau^i Z(tau)/delta; the H scalars are the coefficients of (a b - c)/Z with
 *     c = C.w (not a o b).
 *   density: wire i is A-dense when some row of A (the input rows included, so every
 *     input is) holds it with a nonzero coefficient, B-dense likewise over B. The vector a
 *     holds one point per A-dense wire, in wire order (the dense inputs, then the dense aux
 *     wires); b_g1 and b_g2 one per B-dense wire, in wire order. This is what bellman's
 *     generator writes when it filters the points at infinity (a_i(tau) = 0 exactly when
 *     the wire has no nonzero A coefficient, barring terms of one row that cancel; cuzk
 *     does not merge duplicated terms), and what bellman's prover reads with its density
 *     trackers (inputs all A-dense; B inputs by their own tracker). l holds one point per
 *     aux wire, ic one per input.
 *
 * Load cost (tests/unit/test_params.c prints it; one core of the development machine):
 * decoding a point takes about 0.3 us (G1) / 0.8 us (G2) without the subgroup check and
 * about 47 us / 60 us with it. A 32 GiB PoRep key (about 430 M G1 and 33 M G2 points,
 * 47 GB) therefore costs about 22,000 core-seconds checked (some 23 minutes on 16 cores)
 * but only about 160 core-seconds trusted, where reading the file dominates. Hence
 * CUZK_PARAMS_CACHE: the first start decodes with the checks and writes PATH.cuzkcache;
 * later starts copy the decoded arrays (no conversion, no check) at memory/disk speed.
 * CUZK_PARAMS_TRUSTED suits a file whose digest was verified otherwise (Filecoin's
 * parameter fetcher checks one). Measured on the 16-core H200 host, 503 MB file (4.2 M G1 +
 * 0.5 M G2 points) in the page cache: checked 21 MB/s (0.2 M points/s), trusted 2.2 GB/s
 * (20.6 M points/s), cache read 15.6 GB/s; so a 47 GB key loads in about 37 minutes
 * checked, about 21 s trusted, and at disk speed from the cache.
 *
 * Ownership and errors follow include/cuzk/io.h: *_load allocates one object freed with
 * the matching *_free; on failure *out is NULL and cuzk_error_detail() names the file,
 * the vector and the index ("key.params: vector b_g2: point 17: not in the subgroup").
 */
#ifndef CUZK_PARAMS_H
#define CUZK_PARAMS_H

#include "cuzk/groth16.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

/* ---- the .params file ---- */
typedef struct {
    char *path;                 /* the file it was loaded from ("" when built in memory) */
    cuzk_g1_affine alpha1, beta1, delta1;
    cuzk_g2_affine beta2, gamma2, delta2;
    uint32_t n_ic;              /* n_public + 1 */
    uint32_t n_h, n_l, n_a, n_b_g1, n_b_g2;
    cuzk_g1_affine *ic, *h, *l, *a, *b_g1;   /* Montgomery affine, never infinity */
    cuzk_g2_affine *b_g2;
} cuzk_params;

/* Load flags. */
#define CUZK_PARAMS_TRUSTED 1u   /* skip the subgroup checks of h, l, a, b_g1, b_g2 (the
                                    curve equation, flags and ranges are always checked,
                                    and so is the subgroup of the vk points and IC) */
#define CUZK_PARAMS_CACHE 2u     /* use the decoded cache when it matches PATH (size, mtime,
                                    head and tail digest); otherwise decode PATH and write it
                                    (cuzk_params_load_ex: in which directory) */

/* Memory-maps PATH and decodes every vector on cuzk_parallel_threads() threads.
 * Errors: CUZK_EIO, CUZK_ESIZE (a length that the file cannot hold, bytes after the last
 * vector), CUZK_EFLAGS, CUZK_ENONCANONICAL, CUZK_ENOT_ON_CURVE, CUZK_ENOT_IN_SUBGROUP,
 * CUZK_EFORMAT (a point at infinity), CUZK_ENOMEM. */
cuzk_err cuzk_params_load(cuzk_params **out, const char *path, unsigned flags) CUZK_WUR;
/* The same with the subgroup checks of vectors of gpu->params_check_min points and more on
 * the device, when this build has CUDA and one answers (gpu NULL: the defaults). */
cuzk_err cuzk_params_load_gpu(cuzk_params **out, const char *path, unsigned flags,
                              const cuzk_gpu_opts *gpu) CUZK_WUR;
/* The same with CUZK_PARAMS_CACHE's cache in cache_dir (made 0700 when missing; it must be
 * this user's and closed to group and others): NAME-HASH.cuzkcache there, authenticated
 * with an HMAC keyed by cache_dir/secret (made at the first write: 32 random bytes, 0600),
 * so a cache planted or modified there is decoded again (checked) and rewritten, never
 * trusted. cache_dir NULL: PATH.cuzkcache beside the key, trusted as much as its directory
 * (as cuzk_params_load_gpu). cuzk-daemon keeps its caches in STATE_DIR/cache. */
cuzk_err cuzk_params_load_ex(cuzk_params **out, const char *path, unsigned flags,
                             const cuzk_gpu_opts *gpu, const char *cache_dir) CUZK_WUR;
void cuzk_params_free(cuzk_params *p);
/* Writes the layout above (points must be valid, none infinity: CUZK_EINVAL otherwise). */
cuzk_err cuzk_params_write(const char *path, const cuzk_params *p) CUZK_WUR;
/* Bytes of the file cuzk_params_write makes. */
uint64_t cuzk_params_file_bytes(const cuzk_params *p);

/* The cache file: PATH.cuzkcache (decoded Montgomery affine arrays after a header with the
 * source's size, mtime and a digest of its first and last MiB). Written atomically (a
 * temporary file beside it made with mkstemp, fsynced, renamed). cuzk_params_cache_path
 * returns a malloc'd string; cuzk_params_cache_path_in the name of the cache in cache_dir
 * (NULL: the same as cuzk_params_cache_path). cuzk_params_cache_remove deletes that file
 * (none there is no error). */
char *cuzk_params_cache_path(const char *path);
char *cuzk_params_cache_path_in(const char *path, const char *cache_dir);
cuzk_err cuzk_params_cache_remove(const char *params_path, const char *cache_dir);
cuzk_err cuzk_params_cache_write(const cuzk_params *p, const char *params_path) CUZK_WUR;
/* CUZK_EFORMAT when there is no cache or it does not match the source (detail says why). */
cuzk_err cuzk_params_cache_load(cuzk_params **out, const char *params_path) CUZK_WUR;

/* The verification key (computes e(alpha1, beta2)); n_public = n_ic - 1. */
cuzk_err cuzk_vk_from_params(cuzk_vk **out, const cuzk_params *p) CUZK_WUR;

/* ---- the circuit in bellman's convention ---- */
typedef struct {
    uint32_t n_vars;          /* wires, w[0] = 1 */
    uint32_t n_public;        /* public inputs after w[0] */
    uint32_t n_constraints;   /* the .r1cs's constraints m */
    uint32_t n_rows;          /* m + n_public + 1 */
    uint32_t log2_domain;     /* smallest k with 2^k >= n_rows */
    cuzk_csr a, b, c;         /* n_rows rows each */
    uint64_t *a_density, *b_density;   /* n_vars bits, bit i of word i/64 */
    uint64_t n_a_dense, n_b_dense;     /* set bits */
} cuzk_bellman_circuit;

/* Builds the rows and densities from an .r1cs (copies its matrices). */
cuzk_err cuzk_bellman_circuit_from_r1cs(cuzk_bellman_circuit **out, const cuzk_r1cs *r) CUZK_WUR;
/* Loads an .r1cs and extends its matrices in place (no copy). */
cuzk_err cuzk_bellman_circuit_load(cuzk_bellman_circuit **out, const char *r1cs_path) CUZK_WUR;
/* The same for key p: the .r1cs header's wires, public inputs and domain are checked against
 * p's vectors (as cuzk_params_check_circuit does, its error naming both files) before the
 * rows are built from them, so a forged header fails fast instead of claiming huge memory.
 * The densities are checked after, by cuzk_params_check_circuit. */
cuzk_err cuzk_bellman_circuit_load_for(cuzk_bellman_circuit **out, const char *r1cs_path,
                                       const cuzk_params *p) CUZK_WUR;
void cuzk_bellman_circuit_free(cuzk_bellman_circuit *c);

/* The key fits the circuit: n_ic = n_public + 1, n_l = n_vars - n_public - 1,
 * n_h = 2^log2_domain - 1, n_a = A-dense wires, n_b_g1 = n_b_g2 = B-dense wires.
 * CUZK_ESIZE naming the vector, both counts and the params path. */
cuzk_err cuzk_params_check_circuit(const cuzk_params *p, const cuzk_bellman_circuit *c) CUZK_WUR;

/* Proves n_wit witnesses (n_vars values each, w[0] = 1) of circuit c with key p, like
 * cuzk_groth16_prove (include/cuzk/groth16.h: options, timings, r/s, errors). Checks the
 * key against the circuit first. The split variant returns a pending proof finished with
 * cuzk_groth16_prove_finish / released with cuzk_groth16_pending_free; p and c must stay
 * alive until then. */
cuzk_err cuzk_params_prove(cuzk_proof *proofs, cuzk_prove_timings *timings, const cuzk_params *p,
                           const cuzk_bellman_circuit *c, const cuzk_fr *const *witnesses,
                           size_t n_wit, size_t wit_len, const cuzk_prove_opts *opts) CUZK_WUR;
cuzk_err cuzk_params_prove_start(cuzk_pending **out, const cuzk_params *p,
                                 const cuzk_bellman_circuit *c, const cuzk_fr *const *witnesses,
                                 size_t n_wit, size_t wit_len, const cuzk_prove_opts *opts) CUZK_WUR;

/* ---- Filecoin's proof: A (48) || B (96) || C (48), zcash compressed ---- */
#define CUZK_FILECOIN_PROOF_BYTES 192   /* 48 + 96 + 48 */
void cuzk_proof_to_filecoin(uint8_t out[CUZK_FILECOIN_PROOF_BYTES], const cuzk_proof *p);
/* Decodes and checks flags, curve and subgroup; a point at infinity is refused
 * (CUZK_EFORMAT), as bellman does. */
cuzk_err cuzk_proof_from_filecoin(cuzk_proof *p, const uint8_t in[CUZK_FILECOIN_PROOF_BYTES]) CUZK_WUR;
cuzk_err cuzk_proof_write_filecoin(const char *path, const cuzk_proof *p) CUZK_WUR;
cuzk_err cuzk_proof_read_filecoin(cuzk_proof *p, const char *path) CUZK_WUR;

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
