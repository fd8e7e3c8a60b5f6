/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Readers for circom's and snarkjs's files (BLS12-381 only) and snarkjs's JSON formats.
 *
 * Binary files (.r1cs v1, .wtns v2, Groth16 .zkey v1) share iden3's container: magic,
 * u32 version, u32 section count, then sections (u32 id, u64 size, payload) in any order.
 * A loader memory-maps the file read-only, indexes the sections by id (a duplicated section
 * is refused, as snarkjs does), checks every size against the file and against the counts
 * of the header, checks the field primes (other curves are refused with CUZK_ECURVE naming
 * the curve found), decodes everything into the structures below, and unmaps the file
 * before it returns. Nothing of the file is referenced afterwards.
 *
 * Ownership: each cuzk_*_load allocates one object that the caller owns and releases with
 * the matching cuzk_*_free (NULL is accepted). Loaded objects are read-only afterwards, so
 * one key can serve any number of proofs on any number of threads. On failure *out is NULL,
 * nothing is leaked, and cuzk_error_detail() says what was wrong, in the form
 * "<path>: section N (<name>): <problem>" (or "<path>: <key>: <problem>" for JSON).
 *
 * Error codes: CUZK_ENOTFOUND (no such file), CUZK_EIO (cannot open/map/write, not a regular
 * file), CUZK_ESIZE (truncated file, a section whose size disagrees with its counts),
 * CUZK_EFORMAT (bad magic, version, duplicated or missing section, out-of-range index,
 * malformed JSON structure), CUZK_ECURVE (another prime or curve), CUZK_ENONCANONICAL (a
 * field value >= its modulus), CUZK_ENOT_ON_CURVE / CUZK_ENOT_IN_SUBGROUP (points),
 * CUZK_EPARSE (bad JSON text or decimal), CUZK_ENOMEM, CUZK_EUNSUPPORTED (a zkey of another
 * protocol, e.g. PLONK).
 *
 * Field values are returned in Montgomery form (cuzk_fr), points as affine structures with
 * Montgomery coordinates (cuzk_g1_affine / cuzk_g2_affine, infinity = (0, 0)).
 * The big vectors are decoded on cuzk_parallel_threads() threads.
 */
#ifndef CUZK_IO_H
#define CUZK_IO_H

#include "cuzk/ec.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

/* A sparse matrix in compressed sparse row form: the terms of row i are
 * col[k], val[k] for k in [row[i], row[i+1]). nnz = row[n_rows]. Within a row the terms
 * keep the order of the file. */
typedef struct {
    size_t n_rows;
    uint64_t *row;   /* n_rows + 1 offsets */
    uint32_t *col;   /* wire (signal) index of each term */
    cuzk_fr *val;    /* coefficient of each term, Montgomery form */
} cuzk_csr;

/* ---- .r1cs (circom) ---- */
typedef struct {
    uint32_t n_wires;        /* wire 0 is the constant 1 */
    uint32_t n_pub_out;      /* outputs: wires 1 .. n_pub_out */
    uint32_t n_pub_in;       /* public inputs, after the outputs */
    uint32_t n_prv_in;       /* private inputs, after the public inputs */
    uint32_t n_public;       /* n_pub_out + n_pub_in */
    uint32_t n_constraints;
    uint64_t n_labels;
    cuzk_csr m[3];           /* A, B, C: n_constraints rows each */
    uint64_t *wire_labels;   /* n_wires labels (section 3), or NULL when absent */
} cuzk_r1cs;

cuzk_err cuzk_r1cs_load(cuzk_r1cs **out, const char *path) CUZK_WUR;
void cuzk_r1cs_free(cuzk_r1cs *r);
/* Checks (A·w)∘(B·w) = C·w for every constraint. w has n_wires values, w[0] = 1.
 * CUZK_ESIZE if n != n_wires or w[0] != 1; CUZK_EVERIFY naming the first constraint that
 * fails (also stored in *bad when bad is not NULL). */
cuzk_err cuzk_r1cs_check_witness(const cuzk_r1cs *r, const cuzk_fr *w, size_t n,
                                 size_t *bad) CUZK_WUR;

/* ---- .wtns (snarkjs / circom witness) ---- */
typedef struct {
    uint32_t n;      /* number of values; w[0] = 1 for a circom witness */
    cuzk_fr *w;      /* Montgomery form */
    size_t cap;      /* values w has room for (>= n) */
    bool borrowed;   /* w is the caller's buffer (cuzk_wtns_load_into): not freed with it */
} cuzk_wtns;

cuzk_err cuzk_wtns_load(cuzk_wtns **out, const char *path) CUZK_WUR;
/* The same into buf (room for cap values) when the witness fits there, else into new
 * memory; (*out)->borrowed says which. A buffer used again skips the page faults and
 * zeroing a fresh one costs (a 2^22 witness: 128 MiB, tens of ms). buf may be NULL. */
cuzk_err cuzk_wtns_load_into(cuzk_wtns **out, const char *path, cuzk_fr *buf,
                             size_t cap) CUZK_WUR;
/* The checks of cuzk_wtns_load (the file's structure, every value below r) without the
 * values converted or kept: (*out)->n is their count and (*out)->w holds the first alone
 * (cap 1; none when n = 0). Reads the values in place, so it costs a scan of the file, not
 * a load (a 2^22 witness: a few ms against tens). */
cuzk_err cuzk_wtns_check(cuzk_wtns **out, const char *path) CUZK_WUR;
/* A .wtns image in memory: the len bytes at data are what the file would hold, checked as
 * cuzk_wtns_load checks the file; name stands for the path in cuzk_error_detail() ("uploaded
 * .wtns: section 2 (witness values): ..."; NULL: ".wtns image"). data is not referenced
 * after the call. */
cuzk_err cuzk_wtns_load_mem(cuzk_wtns **out, const char *name, const void *data,
                            size_t len) CUZK_WUR;
/* The same into buf (room for cap values) when the witness fits, as cuzk_wtns_load_into. */
cuzk_err cuzk_wtns_load_mem_into(cuzk_wtns **out, const char *name, const void *data,
                                 size_t len, cuzk_fr *buf, size_t cap) CUZK_WUR;
void cuzk_wtns_free(cuzk_wtns *w);

/* ---- Groth16 .zkey (snarkjs) ---- */
typedef struct {
    uint32_t n_vars;         /* wires, including the constant 1 */
    uint32_t n_public;       /* public signals (outputs and public inputs) */
    uint32_t domain_size;    /* power of two > n_constraints + n_public */
    uint32_t log2_domain;
    /* Rows of a and b that section 4 fills: n_constraints + n_public + 1 (the last
     * n_public + 1 rows are snarkjs's rows w_s * 1 for s = 0 .. n_public). */
    uint32_t n_rows;
    uint32_t n_constraints;  /* n_rows - n_public - 1 */
    cuzk_g1_affine alpha1, beta1, delta1;
    cuzk_g2_affine beta2, gamma2, delta2;
    cuzk_g1_affine *ic;      /* n_public + 1 (section 3) */
    /* Section 4 as two matrices of n_rows rows: a = A·w, b = B·w row by row. The values
     * are plain Montgomery (the file's R^2 scaling is removed). */
    cuzk_csr a, b;
    cuzk_g1_affine *a_pts;   /* n_vars (section 5) */
    cuzk_g1_affine *b1_pts;  /* n_vars (section 6) */
    cuzk_g2_affine *b2_pts;  /* n_vars (section 7) */
    cuzk_g1_affine *c_pts;   /* n_vars - n_public - 1, for wires n_public+1 .. (section 8) */
    cuzk_g1_affine *h_pts;   /* domain_size (section 9) */
} cuzk_zkey;

/* Loads a Groth16 proving key. The verification-key points (alpha1, beta1, beta2, gamma2,
 * delta1, delta2, IC) are checked to be in the subgroup and not infinity (IC may hold
 * infinity); the large vectors are checked to be on the curve. */
cuzk_err cuzk_zkey_load(cuzk_zkey **out, const char *path) CUZK_WUR;
void cuzk_zkey_free(cuzk_zkey *z);
/* The witness fits the key: n == n_vars and w[0] == 1 (CUZK_ESIZE / CUZK_EFORMAT). */
cuzk_err cuzk_zkey_check_witness(const cuzk_zkey *z, const cuzk_fr *w, size_t n) CUZK_WUR;

/* ---- JSON (snarkjs's proof.json, public.json, verification_key.json) ---- */
typedef struct {
    cuzk_g1_affine a;
    cuzk_g2_affine b;
    cuzk_g1_affine c;
} cuzk_proof;

typedef struct {
    uint32_t n_public;
    cuzk_g1_affine alpha1;
    cuzk_g2_affine beta2, gamma2, delta2;
    bool has_alphabeta;      /* vk_alphabeta_12 was present (when read) or computed */
    cuzk_fp12 alphabeta;     /* e(alpha1, beta2) */
    cuzk_g1_affine *ic;      /* n_public + 1 */
} cuzk_vk;

/* Writers produce the bytes snarkjs's CLI writes (one-space indentation, no final
 * newline). Reading checks the structure, names and types of every field, that every
 * number is a canonical decimal string (digits only, no leading zeros, below the modulus),
 * "protocol": "groth16" and "curve": "bls12381", and that points are on the curve; proof
 * points are also checked to be in the subgroup. */
cuzk_err cuzk_proof_write_json(const char *path, const cuzk_proof *p) CUZK_WUR;
cuzk_err cuzk_proof_read_json(cuzk_proof *p, const char *path) CUZK_WUR;

/* public.json: an array of n decimal strings. read allocates *pub (free() it). */
cuzk_err cuzk_public_write_json(const char *path, const cuzk_fr *pub, size_t n) CUZK_WUR;
cuzk_err cuzk_public_read_json(cuzk_fr **pub, size_t *n, const char *path) CUZK_WUR;

/* The same texts in memory: malloc'd, NUL-terminated, byte for byte what the writers above
 * put in a file (free() them). NULL when out of memory. */
char *cuzk_proof_to_json(const cuzk_proof *p);
char *cuzk_public_to_json(const cuzk_fr *pub, size_t n);
struct json_t; /* jansson's json_t */
/* The same documents as jansson values, to place inside another JSON document: a new
 * reference (json_decref it, or hand it to a json_*_new call), NULL when out of memory. */
struct json_t *cuzk_proof_json(const cuzk_proof *p);
struct json_t *cuzk_public_json(const cuzk_fr *pub, size_t n);

/* The verification key of a proving key; computes vk_alphabeta_12 with a pairing. */
cuzk_err cuzk_vk_from_zkey(cuzk_vk **out, const cuzk_zkey *z) CUZK_WUR;
cuzk_err cuzk_vk_write_json(const char *path, const cuzk_vk *vk) CUZK_WUR;
cuzk_err cuzk_vk_read_json(cuzk_vk **out, const char *path) CUZK_WUR;
void cuzk_vk_free(cuzk_vk *vk);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
