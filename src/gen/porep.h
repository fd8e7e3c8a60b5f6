/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: the synthetic `porep-k` workload of shared/WORKLOADS.md, for benchmarks and
 * backend-equality tests. A bellman-convention key of random valid points (the proofs do
 * not verify: the key belongs to no circuit) and P witnesses shaped like a Filecoin PoRep
 * partition:
 *   n = 2^k; constraints m = n - 4096 (n - n/4 below k = 14); public inputs 328 including
 *   the constant one (m/8 when smaller); wires = m (inputs then aux);
 *   aux values: 0 with probability 0.45, 1 with 0.45, uniform in Fr with 0.10; inputs uniform;
 *   density: an aux wire has an A point with probability 0.997 and a B point with 0.254;
 *   every input has both;
 *   a, b, c: each row of A, B and C has one term with a uniform coefficient, so the synthesised
 *   values are uniform where the wire's value is.
 * Everything follows from the seed, whatever the thread count.
 */
#ifndef CUZK_GEN_POREP_H
#define CUZK_GEN_POREP_H

#include "groth16/pk.h"

typedef struct cuzk_porep cuzk_porep;

/* progress: called with a short phase name, or NULL. */
cuzk_err cuzk_porep_new(cuzk_porep **out, unsigned log2_n, size_t partitions, uint64_t seed,
                        void (*progress)(const char *phase)) CUZK_WUR;
/* points false: no key points (the view's point arrays are NULL): the witnesses, densities
 * and matrices only, for benchmarks of the host-side work. */
cuzk_err cuzk_porep_new_ex(cuzk_porep **out, unsigned log2_n, size_t partitions, uint64_t seed,
                           void (*progress)(const char *phase), bool points) CUZK_WUR;
void cuzk_porep_free(cuzk_porep *w);
const cuzk_pk_view *cuzk_porep_view(const cuzk_porep *w);
const cuzk_fr *const *cuzk_porep_witnesses(const cuzk_porep *w);
size_t cuzk_porep_witness_len(const cuzk_porep *w);
/* Counts for the report: A-dense and B-dense wires, and the key's host bytes. */
size_t cuzk_porep_a_count(const cuzk_porep *w);
size_t cuzk_porep_b_count(const cuzk_porep *w);
size_t cuzk_porep_key_bytes(const cuzk_porep *w);

/* n distinct random G1 points (P_i = C[i / 4096] + B[i mod 4096], B and C random multiples
 * of the generator), from the seed, on all threads; NULL when out of memory. */
cuzk_g1_affine *cuzk_bench_random_g1(size_t n, uint64_t seed);
/* n uniform random elements of Fr from the seed. */
void cuzk_bench_random_fr(cuzk_fr *out, size_t n, uint64_t seed);

#endif
