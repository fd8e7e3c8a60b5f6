/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: a proving key as the prover reads it, whatever file it came from. A snarkjs
 * .zkey and a bellman/bellperson .params differ in the H convention, in how c is formed,
 * and in whether the a/b vectors are filtered by density; the prover stages only see this
 * view. All pointers refer to the loaded key; the view owns nothing.
 */
#ifndef CUZK_GROTH16_PK_H
#define CUZK_GROTH16_PK_H

#include "cuzk/groth16.h"

typedef enum {
    CUZK_CONV_SNARKJS = 0, /* roots from 5; c = a o b; H on the odd coset; n H points */
    CUZK_CONV_BELLMAN = 1, /* roots from 7; c = C.w; H coefficients; n-1 H points */
} cuzk_convention;

typedef struct {
    cuzk_convention conv;
    uint32_t n_vars;       /* witness length, w[0] = 1 */
    uint32_t n_public;     /* public signals after w[0] */
    uint32_t log2_domain;
    const cuzk_g1_affine *alpha1, *beta1, *delta1;
    const cuzk_g2_affine *beta2, *delta2;
    /* A: a_pts[k] is the k-th wire whose bit is set in a_density (all wires when NULL). */
    const cuzk_g1_affine *a_pts;
    const uint64_t *a_density;
    /* B1, B2: likewise with b_density. */
    const cuzk_g1_affine *b1_pts;
    const cuzk_g2_affine *b2_pts;
    const uint64_t *b_density;
    const cuzk_g1_affine *l_pts;  /* private wires n_public+1 .. n_vars-1 */
    const cuzk_g1_affine *h_pts;
    size_t h_count;               /* n (snarkjs) or n-1 (bellman) */
    /* Synthesis: rows of A, B (and C when not NULL; else c = a o b), n_rows <= n. */
    const cuzk_csr *ma, *mb, *mc;
    size_t n_rows;
} cuzk_pk_view;

/* The view of a snarkjs key. */
void cuzk_pk_view_from_zkey(cuzk_pk_view *v, const cuzk_zkey *z);

/* a, b, c of witness w into abc (3n values, n the domain size; src/groth16/synth.c):
 * a = A.w, b = B.w, c = C.w (c = a o b when mc is NULL) over the n_rows rows, zero beyond,
 * on nthreads threads (0: cuzk_parallel_threads()). */
void cuzk_pk_view_synth_abc(const cuzk_pk_view *pk, const cuzk_fr *w, cuzk_fr *abc,
                            unsigned nthreads);

/* Checks a witness against a view: length n_vars and w[0] = 1. */
cuzk_err cuzk_pk_view_check_witness(const cuzk_pk_view *v, const cuzk_fr *w, size_t n) CUZK_WUR;

cuzk_err cuzk_groth16_prove_start_view(cuzk_pending **out, const cuzk_pk_view *pk,
                                       const cuzk_fr *const *witnesses, size_t n_wit,
                                       size_t wit_len, const cuzk_prove_opts *opts) CUZK_WUR;

/* What the SupraSeal C2 ABI (abi/supraseal) hands the prover beyond cuzk_prove_opts:
 * r[j], s[j] for witness j (both NULL: as opts says), and a, b, c as three vectors per
 * witness of abc_len <= n values each, zero beyond (abc_split[3j], [3j+1], [3j+2]; read
 * during start only; NULL: opts->abc or synthesis).
 * wit_fill, when set, stands for the witnesses (which may then be NULL): it writes witness
 * j's n_vars values into dst, during start only, where the prover keeps copies (the CPU
 * backend, B_G2's CPU thread). The caller has checked that each witness starts with 1; a, b,
 * c must be given. */
typedef struct {
    const cuzk_fr *r, *s;
    const cuzk_fr *const *abc_split;
    size_t abc_len;
    void (*wit_fill)(void *ctx, size_t j, cuzk_fr *dst);
    void *wit_ctx;
    /* With wit_fill, optionally the two parts it joins: witness j's inputs wit_inp[j]
     * (n_public + 1 values) and private wires wit_aux[j]; the GPU pipeline then prepares its
     * partitions from them in place (cuzk_gpu_prep_splits_parts), without a copy. */
    const cuzk_fr *const *wit_inp, *const *wit_aux;
} cuzk_prove_extra;
cuzk_err cuzk_groth16_prove_start_view_ex(cuzk_pending **out, const cuzk_pk_view *pk,
                                          const cuzk_fr *const *witnesses, size_t n_wit,
                                          size_t wit_len, const cuzk_prove_opts *opts,
                                          const cuzk_prove_extra *x) CUZK_WUR;
/* a, b, c of witness j from abc_split (cuzk_prove_extra) into dst (3n values, zero beyond
 * len), on nthreads threads. */
void cuzk_abc_split_copy(cuzk_fr *dst, const cuzk_fr *const *abc_split, size_t j, size_t len,
                         size_t n, unsigned nthreads);

#endif
