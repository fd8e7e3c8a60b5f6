/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SupraSeal C2's C ABI, served by cuzk (libcuzk_supraseal.so, libcuzk_supraseal_curio.so).
 *
 * The Rust crate `supraseal-c2` (which bellperson's `cuda-supraseal` feature uses to prove
 * Filecoin's PoRep C2) declares these functions and structs; a library exporting them with
 * the same names, layouts and calling convention replaces SupraSeal's. docs/filecoin.md says
 * how a storage provider switches.
 *
 * Types, as the crate lays them out:
 *   fr_t           BLS12-381 scalar in Montgomery form (x * 2^256 mod r), 4 little-endian
 *                  64-bit limbs (blst_fr);
 *   the affine points of groth16_proof: coordinates in Montgomery form (x * 2^384 mod p), 6
 *                  little-endian limbs each, Fp2 as c0 then c1; the point at infinity is all
 *                  zero (blst_p1_affine, blst_p2_affine);
 *   SRS            one pointer: a reference-counted handle to a loaded .params key;
 *   RustError      returned by value; code 0 is success with message NULL; otherwise
 *                  message is NULL or a string from malloc that the caller frees (Rust's
 *                  sppark::Error does).
 *
 * Two flavours, one header: SupraSeal's own (the 6-argument generate_groth16_proofs_c) and
 * Curio's fork of the crate (the 8-argument one with a GPU mutex and index, and the split
 * start/finalize calls). Define CUZK_SUPRASEAL_CURIO before including this header for
 * Curio's declarations; link libcuzk_supraseal_curio for them.
 *
 * Errors never abort the process: every check SupraSeal asserts (L = aux size, A = inputs +
 * A's aux popcount, B = B's input + aux popcounts, bit lengths = assignment sizes) and every
 * failure (a missing or corrupt .params, no GPU where the GPU backend is forced, out of
 * memory) is a nonzero code (a cuzk_err value, include/cuzk/error.h) with a message that
 * names the field and both numbers.
 */
#ifndef CUZK_SUPRASEAL_H
#define CUZK_SUPRASEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { uint64_t l[4]; } fr_t;                 /* blst_fr */
typedef struct { uint64_t l[6]; } cuzk_abi_fp;          /* blst_fp */
typedef struct { cuzk_abi_fp c0, c1; } cuzk_abi_fp2;    /* blst_fp2 */
typedef struct { cuzk_abi_fp x, y; } cuzk_abi_g1_affine;   /* blst_p1_affine */
typedef struct { cuzk_abi_fp2 x, y; } cuzk_abi_g2_affine;  /* blst_p2_affine */

typedef struct {
    cuzk_abi_g1_affine a;
    cuzk_abi_g2_affine b;
    cuzk_abi_g1_affine c;
} groth16_proof;

typedef struct { void *ptr; } SRS;

typedef struct { int code; char *message; } RustError;

/* One circuit as bellperson's ProvingAssignment holds it after synthesis. Density words are
 * bitvec's BitVec<usize, Lsb0>: bit i of the vector is bit i % 64 of word i / 64. */
typedef struct {
    /* which aux wires appear in A; which inputs and which aux wires appear in B */
    const uint64_t *a_aux_density;
    size_t a_aux_bit_len;    /* = aux_assignment_size */
    size_t a_aux_popcount;
    const uint64_t *b_inp_density;
    size_t b_inp_bit_len;    /* = inp_assignment_size */
    size_t b_inp_popcount;
    const uint64_t *b_aux_density;
    size_t b_aux_bit_len;    /* = aux_assignment_size */
    size_t b_aux_popcount;
    /* A.w, B.w, C.w per constraint, unpadded, bellperson's input * 0 = 0 rows included */
    const fr_t *a;
    const fr_t *b;
    const fr_t *c;
    size_t abc_size;
    /* the inputs (the constant one first) and the private wires */
    const fr_t *inp_assignment_data;
    size_t inp_assignment_size;
    const fr_t *aux_assignment_data;
    size_t aux_assignment_size;
} Assignment;

/* Loads the bellperson .params file at params_path into *ret (a fresh reference). cache:
 * share one loaded key per path in this process (the last four paths used), as SupraSeal
 * does; without it every call loads its own. */
RustError create_SRS(SRS *ret, const char *params_path, bool cache);
/* Drops the process cache's reference to this key's path (handles stay valid). */
void evict_SRS(const SRS *srs);
/* Releases this reference; the key is freed with the last one. ptr NULL: nothing. */
void drop_SRS(SRS *srs);
/* A new reference to the same key. */
SRS clone_SRS(const SRS *srs);

#ifndef CUZK_SUPRASEAL_CURIO
/* Proves num_circuits circuits over one key, r_s[i] and s_s[i] for circuit i, into
 * proofs[i]; the batch spreads over every visible GPU (the CPU where none is). */
RustError generate_groth16_proofs_c(const Assignment provers[], size_t num_circuits,
                                    const fr_t r_s[], const fr_t s_s[], groth16_proof proofs[],
                                    const SRS *srs);
#else
/* A lock of the caller's, shared by the workers that take turns on one GPU. */
void *create_gpu_mutex(void);
void destroy_gpu_mutex(void *mtx);
/* The device part of the proofs: returns once the GPU is free for the next holder of
 * gpu_mtx (NULL: a lock of the library's own), with *pending_out owning copies of what the
 * rest reads (the caller's arrays may go). gpu_index >= 0 pins the work to that device, -1
 * spreads it over every visible one. On failure *pending_out is NULL. */
RustError generate_groth16_proofs_start_c(const Assignment provers[], size_t num_circuits,
                                          const fr_t r_s[], const fr_t s_s[], const SRS *srs,
                                          void *gpu_mtx, int gpu_index, void **pending_out);
/* Finishes a pending proof into proofs[0 .. num_circuits-1] and frees it, failure or not. */
RustError finalize_groth16_proof_c(void *pending, groth16_proof proofs[]);
/* Frees a pending proof that is not to be finalized (waits for its background work). */
void destroy_pending_proof(void *pending);
/* start and finalize in one call. */
RustError generate_groth16_proofs_c(const Assignment provers[], size_t num_circuits,
                                    const fr_t r_s[], const fr_t s_s[], groth16_proof proofs[],
                                    const SRS *srs, void *gpu_mtx, int gpu_index);
#endif

/* cuzk's own addition (neither crate calls it): sets one option of the library before or
 * between calls, as the environment does when the library first loads a key (docs/
 * filecoin.md):
 *   backend = auto|cpu|gpu      (CUZK_BACKEND; gpu: fail when no device answers)
 *   threads = N                 (CUZK_THREADS; 0: every CPU)
 *   params = checked|trusted    (CUZK_PARAMS; trusted skips the subgroup checks of the
 *                                key's vectors, for a file whose digest was checked)
 *   params_cache = off|on       (CUZK_PARAMS_CACHE; on: PATH.cuzkcache beside the key)
 *   and the GPU options of cuzk_gpu_opts_set (CUZK_GPU="name=value,name=value").
 * Code CUZK_EINVAL with a message naming the option and its values for anything else. */
RustError cuzk_supraseal_set_option(const char *name, const char *value);

#ifdef __cplusplus
}
#endif
#endif
