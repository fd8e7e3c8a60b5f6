/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Synthetic workloads: a satisfiable circom constraint system (.r1cs v1) and one witness
 * per partition (.wtns v2), written straight to disk at any size up to 2^27 constraints
 * and beyond, plus writers for the two formats.
 *
 * Circuit shape. Wire 0 is the constant 1, then n_public public inputs, then three private
 * "seed" inputs per block, then the internal wires block after block. The circuit is a
 * sequence of blocks of fixed shape (structure drawn from the seed and the block index);
 * the last block is cut after exactly n_constraints constraints in all, and every prefix
 * of a block is itself satisfiable, so any N >= 1 is exact: the file holds N constraints.
 *
 *   porep: one iteration (1343 constraints, 1342 wires) is 14 rounds of a width-3
 *     Poseidon-like permutation (x^5 S-boxes as x2 = t*t, x4 = x2*x2, x5 = x4*t, the
 *     linear layer and round constants folded into t), a 255-bit decomposition of one
 *     state element (b*b = b per bit and one packing constraint), 15 rounds of SHA-style
 *     bit operations on 64 lanes (XOR as 2a*b = a+b-c, AND as a*b = c, one operand a
 *     decomposed bit), and the packing of 60 lanes into a field element absorbed into the
 *     state. A block is 8 iterations. Iteration g also adds public input g mod n_public to
 *     its first S-box. Statistics (per iteration, private wires): 99.7 % in A, 25.3 % in
 *     B, 90.5 % of values 0 or 1 — those of a Filecoin PoRep partition.
 *   dense: x_k = (c1 x_{k-1} + c2 x_{k-2}) * (c3 x_{k-1} + c4 x_{k-3} + c5), coefficients
 *     random, every value a random-looking field element; 8192 constraints a block, public
 *     input g mod n_public joins the B side of every 1024th constraint.
 *
 * n_public (the constant 1 not counted) defaults to min(327, iterations begun), so a
 * PoRep-sized circuit has 328 public wires with the one and every public input is used.
 *
 * Domains: snarkjs needs domain 2^k > N + n_public, bellman/bellperson (one extra
 * constraint per input, the one included) 2^k >= N + n_public + 1: the same rule. With the
 * default 327 public inputs, N = 2^k - 328 is the largest N for domain 2^k (both provers);
 * cuzk_gen_fit_domain() computes it for any k.
 *
 * Files: DIR/circuit.r1cs and DIR/witness-<p>.wtns for p < n_partitions. DIR is created
 * when missing. Witness p uses its own seed derived from (seed, p): different public and
 * private inputs, the same constraints. The same options give byte-identical files
 * whatever the thread count. Memory: about 2 MB plus n_partitions * 344 KB per thread;
 * nothing proportional to N is held. Disk: the .r1cs takes about 185 bytes a constraint
 * (porep; 228 dense), so 24.9 GB at 2^27, and each witness 32 bytes a wire (4.3 GB).
 */
#ifndef CUZK_GEN_H
#define CUZK_GEN_H

#include <stdint.h>

#include "cuzk/io.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

/* ---- writers (inverse of cuzk_r1cs_load / cuzk_wtns_load) ---- */

/* Writes r as a circom .r1cs v1 file: header, constraints (coefficients in standard form)
 * and, when r->wire_labels is not NULL, the wire labels. CUZK_EIO naming the path. */
cuzk_err cuzk_r1cs_write(const char *path, const cuzk_r1cs *r) CUZK_WUR;
/* Writes n values (Montgomery form in memory) as a .wtns v2 file. */
cuzk_err cuzk_wtns_write(const char *path, const cuzk_fr *w, size_t n) CUZK_WUR;

/* ---- generator ---- */

typedef enum { CUZK_GEN_POREP = 0, CUZK_GEN_DENSE = 1 } cuzk_gen_profile;

#define CUZK_GEN_MAX_PUBLIC 327          /* default public inputs (PoRep's, without the one) */
#define CUZK_GEN_MAX_PARTITIONS 1024     /* open witness files at once */

typedef struct {
    uint64_t n_constraints;      /* exactly this many constraints, >= 1 */
    uint32_t n_partitions;       /* witnesses, >= 1 */
    cuzk_gen_profile profile;
    uint64_t seed;
    int64_t n_public;            /* < 0: the default above; else this many public inputs */
    unsigned nthreads;           /* 0: cuzk_parallel_threads() */
    /* Called from worker threads, at most about once a second, with constraints done. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} cuzk_gen_opts;

typedef struct {
    uint32_t n_wires, n_public, n_prv_in;
    uint64_t n_constraints;
    uint64_t n_terms[3];         /* terms of A, B, C */
    uint64_t r1cs_bytes, wtns_bytes;   /* size of circuit.r1cs and of each witness */
    /* Private wires (all but the one and the public inputs) appearing in A / B of some
     * constraint, and private values equal to 0 or 1 summed over the partitions. */
    uint64_t n_private, private_in_a, private_in_b, private_01;
    uint32_t public_in_a, public_in_b;   /* public inputs (the one not counted) in A / B */
    double seconds;              /* wall time of the whole generation */
} cuzk_gen_stats;

/* Writes the circuit and the witnesses into dir. st may be NULL. CUZK_EINVAL for bad
 * options, CUZK_EIO (path and reason) when a file cannot be written, CUZK_ESIZE when the
 * circuit would need 2^32 wires or more. */
cuzk_err cuzk_gen_write(cuzk_gen_stats *st, const char *dir, const cuzk_gen_opts *o) CUZK_WUR;

/* The public-input count the generator uses for these options. */
uint32_t cuzk_gen_n_public(const cuzk_gen_opts *o);
/* Largest N whose circuit fits domain 2^log2 for snarkjs and bellman (N + n_public + 1 <=
 * 2^log2), with o's profile and n_public; 0 when none does. */
uint64_t cuzk_gen_fit_domain(const cuzk_gen_opts *o, unsigned log2);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
