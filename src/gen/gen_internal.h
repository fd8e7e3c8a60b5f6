/* SPDX-License-Identifier: Apache-2.0 */
/* Generator internals: the circuit description shared by all blocks and one block's
 * working state. A block is generated into memory (its constraints as .r1cs bytes, its
 * wires' values as .wtns bytes for every partition) and then written at offsets that
 * depend only on the block number. */
#ifndef CUZK_GEN_INTERNAL_H
#define CUZK_GEN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cuzk/gen.h"

/* ---- porep iteration (see gen.h) ---- */
#define GEN_WIDTH 3              /* Poseidon-like state elements */
#define GEN_SBOX_ROUNDS 14       /* full rounds of GEN_WIDTH S-boxes, 3 constraints each */
#define GEN_DEC_BITS 255         /* bits of a decomposed element: r < 2^255 */
#define GEN_LANES 64             /* SHA-style bit lanes */
#define GEN_BIT_ROUNDS 15        /* rounds of one XOR/AND per lane */
#define GEN_PACKED 60            /* lanes packed into G; the other 4 finals are used nowhere */
#define GEN_AND_EVERY 4          /* one lane in 4 takes an AND, the others an XOR */
#define GEN_POREP_ITER_CONS \
    (GEN_SBOX_ROUNDS * GEN_WIDTH * 3 + GEN_DEC_BITS + 1 + GEN_LANES * GEN_BIT_ROUNDS + 1)
#define GEN_POREP_ITERS 8        /* iterations per block */

/* ---- dense ---- */
#define GEN_DENSE_ITER_CONS 1024 /* a public input joins every this many constraints */
#define GEN_DENSE_ITERS 8
#define GEN_DENSE_COEFS 256      /* random coefficients drawn by a byte */

#define GEN_SEEDS 3              /* private inputs per block (the initial state) */
#define GEN_GLOBAL 0x80000000u   /* term wire flag: a global wire (the one or a public input) */

typedef struct {
    uint8_t b[CUZK_FR_BYTES];    /* coefficient in standard form, little-endian */
} gen_coef;

typedef struct {
    uint32_t w;                  /* local wire, or GEN_GLOBAL | global wire */
    const gen_coef *k;
} gen_term;

typedef struct {
    cuzk_gen_profile profile;
    uint32_t n_public, n_part;
    uint64_t iter_cons, block_cons;
    uint64_t circuit_seed;
    const uint64_t *part_seed;   /* n_part witness seeds */
    const cuzk_fr *pub_val;      /* n_part * n_public public inputs, Montgomery */
    uint32_t seed_base;          /* global wire of block 0's first seed */
    uint32_t wire_base;          /* global wire of block 0's first internal wire */
    uint32_t block_wires;        /* internal wires of a full block */
    gen_coef one, two, minus_one, pow2[GEN_DEC_BITS];
    cuzk_fr mds[GEN_WIDTH][GEN_WIDTH], rc[GEN_SBOX_ROUNDS][GEN_WIDTH];
    gen_coef mds_b[GEN_WIDTH][GEN_WIDTH], rc_b[GEN_SBOX_ROUNDS][GEN_WIDTH];
    cuzk_fr dc[GEN_DENSE_COEFS];
    gen_coef dc_b[GEN_DENSE_COEFS];
} gen_circuit;

typedef struct {
    const gen_circuit *c;
    uint64_t index;              /* block number */
    uint64_t limit;              /* constraints to emit (block_cons, or fewer for the last) */
    uint32_t n_part;             /* partitions to compute values for; 0 = structure only */
    uint32_t wires_cap;          /* internal wires the buffers hold */
    /* constraints: bytes of section 2; cons == NULL counts bytes without storing them */
    uint8_t *cons;
    size_t cons_len, cons_cap;
    uint64_t n_cons;
    uint32_t n_wires;            /* internal wires made */
    uint64_t n_terms[3];
    bool overflow;               /* a buffer was too small (an internal error) */
    /* values: partition p's slab at vals + p * slab; local wire l at + l * 32 */
    uint8_t *vals;
    size_t slab;
    /* local wires in A / B, a bit each; pub_mark[m][g] for g <= n_public (shared) */
    uint64_t *mark[2];
    uint8_t *pub_mark[2];
    /* scratch */
    cuzk_fr *st;                 /* n_part * 4 Montgomery state values */
    cuzk_fr *tv;                 /* n_part * GEN_WIDTH */
    uint8_t *bits;               /* n_part * GEN_DEC_BITS */
    uint8_t *lanes;              /* n_part * GEN_LANES */
    gen_term *big;               /* GEN_DEC_BITS + 1 terms */
} gen_block;

/* Local wire l of block b: the seeds are 0 .. GEN_SEEDS-1, internal wires follow. */
static inline uint32_t gen_global_wire(const gen_block *b, uint32_t l)
{
    const gen_circuit *c = b->c;
    if (l & GEN_GLOBAL)
        return l & ~GEN_GLOBAL;
    if (l < GEN_SEEDS)
        return c->seed_base + (uint32_t)b->index * GEN_SEEDS + l;
    return c->wire_base + (uint32_t)b->index * c->block_wires + (l - GEN_SEEDS);
}

/* splitmix64 step and a two-input mix for seeding. */
static inline uint64_t gen_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);   /* 2^64 / golden ratio */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static inline uint64_t gen_mix(uint64_t a, uint64_t b)
{
    uint64_t s = a ^ (b * 0xd1342543de82ef95ULL);  /* odd multiplier (an LCG's) */
    gen_next(&s);
    return gen_next(&s);
}
/* Uniform in [0, n) for n < 2^32 (multiply-shift; bias below 2^-32 * n). */
static inline uint32_t gen_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(((gen_next(s) >> 32) * n) >> 32);
}
/* Uniformly random field element (rejection on 255-bit draws), Montgomery form. */
void gen_rand_fr(cuzk_fr *r, uint64_t *s);

/* Fills the circuit-wide coefficient tables from c->circuit_seed. */
void gen_circuit_init(gen_circuit *c);
/* Generates block b->index: resets b's outputs and emits up to b->limit constraints. */
void gen_block_run(gen_block *b);

#endif
