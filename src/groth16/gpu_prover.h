/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: the GPU stages of the prover (src/groth16/gpu_prover.c, CUDA builds only). */
#ifndef CUZK_GROTH16_GPU_PROVER_H
#define CUZK_GROTH16_GPU_PROVER_H

#include "cuzk/msm.h"
#include "groth16/pk.h"

/* A resident key made from a view (the public constructor wraps this). */
cuzk_err cuzk_gpu_key_from_view(cuzk_gpu_key **out, const cuzk_pk_view *pk, int device,
                                const cuzk_gpu_opts *opts) CUZK_WUR;   /* opts NULL: defaults */

/* The host side of one split MSM (batch add of the ones + Pippenger of the significant
 * scalars) in the positions of its bases: the two bit vectors and the significant scalars,
 * gathered in order and canonical. Prepared on the CPU before the device is taken. */
typedef struct {
    uint64_t *one, *sig;    /* bits of the n bases (room for n_vars bits) */
    cuzk_msm_scalar *s;     /* n_sig scalars */
    size_t n, n_sig, s_cap;
    bool s_pinned;          /* s is page-locked (cuzk_gpu_host_alloc) */
} cuzk_gpu_split_in;
void cuzk_gpu_split_free_scalars(cuzk_gpu_split_in *sp);

/* Host work buffers of one in-flight partition: a, b, c (3n values, page-locked when
 * possible; with synthesis on the device n_vars values: the witness going up), the witness classified (ones, significant) and the prepared splits of A, B
 * (B1 and B2 share their density) and L. A resident key keeps up to two sets for reuse, so
 * steady-state proofs allocate and fault in nothing. */
typedef struct cuzk_gpu_bufs {
    cuzk_fr *abc;
    size_t abc_cap;                /* values abc holds */
    uint64_t *w_one, *w_sig;       /* n_vars bits each */
    cuzk_gpu_split_in sp[3];       /* A, B, L */
    /* With synthesis on the device: where the witness goes up from (abc holding a copy, or
     * the caller's witness itself, page-locked in place while wreg) */
    const cuzk_fr *wsrc;
    bool wreg;
    /* Where the witness is still to be copied (abc), or NULL: the copy is made by the
     * classification pass of cuzk_gpu_prep_splits, which reads the witness anyway. */
    cuzk_fr *wcopy;
    cuzk_gpu_witness witness_mode; /* the key's cuzk_gpu_opts.witness */
    bool pinned;
    struct cuzk_gpu_bufs *next;
} cuzk_gpu_bufs;
cuzk_err cuzk_gpu_bufs_get(cuzk_gpu_key *gk, cuzk_gpu_bufs **out) CUZK_WUR;
/* With synthesis on the device: makes w (nv values) ready for the upload, b->wsrc. Large
 * witnesses (1 GiB up; any size with the key's witness option REGISTER) are page-locked in place
 * (no copy: 4 GiB less host memory per partition at 2^27), unless that option is COPY or
 * that fails (e.g. the same witness twice in a batch); else copied into b's page-locked
 * buffer by the cuzk_gpu_prep_splits of w that must follow (b->wcopy), in its
 * classification pass. Undo with cuzk_gpu_bufs_witness_done. */
cuzk_err cuzk_gpu_bufs_witness(cuzk_gpu_bufs *b, const cuzk_fr *w, size_t nv) CUZK_WUR;
void cuzk_gpu_bufs_witness_done(cuzk_gpu_bufs *b);
/* Grows b->abc to hold at least vals values (contents not kept), page-locked when possible. */
cuzk_err cuzk_gpu_bufs_reserve(cuzk_gpu_bufs *b, size_t vals) CUZK_WUR;
void cuzk_gpu_bufs_put(cuzk_gpu_key *gk, cuzk_gpu_bufs *b);

/* The host buffers of the split MSMs in b: the bit vectors for n_vars wires (false when out
 * of memory; free what was made with cuzk_gpu_bufs_splits_free), and with them the gathered
 * scalars cuzk_gpu_prep_splits grows. Plain C, in every build. */
bool cuzk_gpu_bufs_splits_alloc(cuzk_gpu_bufs *b, size_t n_vars);
void cuzk_gpu_bufs_splits_free(cuzk_gpu_bufs *b);

/* The CPU part of the MSMs of witness w (n_vars values): classifies it (copying it to
 * bufs->wcopy on the way when that is set) and prepares the splits of A, B and L in bufs
 * (nthreads: 0 = all CPUs). Runs without the device lock, so a pipeline does it for the
 * next partition while the device works on this one. */
cuzk_err cuzk_gpu_prep_splits(const cuzk_pk_view *pk, const cuzk_fr *w, cuzk_gpu_bufs *bufs,
                              unsigned nthreads) CUZK_WUR;
/* The same for a witness held in two parts: its inputs inp (n_public + 1 values, w[0] = 1
 * first) and its private wires aux (n_vars - n_public - 1 values), as the SupraSeal ABI's
 * callers hold it; the same splits as cuzk_gpu_prep_splits of the two joined, without the
 * copy (bufs->wcopy must be NULL). */
cuzk_err cuzk_gpu_prep_splits_parts(const cuzk_pk_view *pk, const cuzk_fr *inp,
                                    const cuzk_fr *aux, cuzk_gpu_bufs *bufs,
                                    unsigned nthreads) CUZK_WUR;

/* The device part of one partition, under `lock` (NULL: the key's own lock): a, b, c
 * loaded from the host (n values each), or when a is NULL synthesised on the device from
 * the witness in buf (the key must hold its matrices there: cuzk_gpu_key_synth); then H
 * and the H MSM over its coefficients where they lie on the device, then the G1 MSMs A,
 * B1, L from the splits cuzk_gpu_prep_splits prepared in bufs; B2 too when rb2 is not NULL
 * and the key holds its G2 bases on the device. Adds to t's h_ms, msm_ms and device_*
 * figures (the device held: with in, the waits below count, within the NTTs' and the H
 * MSM's times).
 * in (NULL: every input is ready): inputs the CPU side is still preparing; in->ready(ctx,
 * i) returns once input i is (0, 1, 2: a, b, c, waited for before each one's copy; 3: the
 * prepared splits in bufs, before the MSMs A, B1, L) or with the CPU side's error. */
typedef struct {
    cuzk_err (*ready)(void *ctx, int i);
    void *ctx;
} cuzk_gpu_inputs;
cuzk_err cuzk_gpu_prove_one(cuzk_gpu_key *gk, pthread_mutex_t *lock, const cuzk_pk_view *pk,
                            const cuzk_fr *a, const cuzk_fr *b, const cuzk_fr *c, const cuzk_fr *buf,
                            const cuzk_gpu_bufs *bufs, const cuzk_gpu_inputs *in,
                            cuzk_g1_jac *h, cuzk_g1_jac *ra, cuzk_g1_jac *rb1, cuzk_g1_jac *rl,
                            cuzk_g2_jac *rb2, cuzk_prove_timings *t) CUZK_WUR;
/* True when the key synthesises a, b, c on the device: the default when its matrices fit
 * there, whole (36 bytes a term) or else with their coefficients deduplicated (8 bytes a
 * term); cuzk_gpu_opts.synth forces one. */
bool cuzk_gpu_key_synth(const cuzk_gpu_key *gk);
/* True when the key computes B_G2 on the device (the default unless cuzk_gpu_opts.b_g2 = CPU when it
 * was made, or its G2 bases did not fit on the device). */
bool cuzk_gpu_key_b_g2(const cuzk_gpu_key *gk);
/* Which of the key's bases stream from host memory instead of staying resident (bit 0: H,
 * 1: A, 2: B1, 3: L, 4: B2; see key_msm in gpu_prover.c: cuzk_gpu_opts.bases
 * when the key is made). */
#define CUZK_GPU_KEY_BASES_NAMES {"H", "A", "B1", "L", "B2"}
unsigned cuzk_gpu_key_streamed(const cuzk_gpu_key *gk);
/* Which of the key's bases have precomputed multiples (the same bits; see key_precompute
 * in gpu_prover.c: cuzk_gpu_opts.precompute). */
unsigned cuzk_gpu_key_precomputed(const cuzk_gpu_key *gk);
/* Whether the H MSM's last run accumulated with batch-affine rounds (false before the first
 * proof, for XYZZ, and in a build without CUDA). */
bool cuzk_gpu_key_h_affine(const cuzk_gpu_key *gk);
/* Visible devices (CUDA builds; 1 otherwise, where making a key reports the missing GPU). */
unsigned cuzk_gpu_prover_devices(void);

#endif
