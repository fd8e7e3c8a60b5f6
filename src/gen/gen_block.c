/* SPDX-License-Identifier: Apache-2.0 */
/* The generator's blocks: constraint emission and witness computation for the porep and
 * dense profiles. Every constraint defines at most one new wire from earlier ones, so the
 * values follow the constraints in order and any prefix of a block is satisfiable. */
#include <string.h>

#include "gen/gen_internal.h"

void gen_rand_fr(cuzk_fr *r, uint64_t *s)
{
    uint64_t l[CUZK_FR_LIMBS];
    do {
        for (int i = 0; i < CUZK_FR_LIMBS; i++)
            l[i] = gen_next(s);
        l[3] >>= 1;   /* 255-bit draw; r > 2^254 accepts about 9 in 10 */
    } while (cuzk_fr_from_limbs(r, l) != CUZK_OK);
}

static void coef_of(gen_coef *k, const cuzk_fr *v) { cuzk_fr_to_bytes_le(k->b, v); }

static void rand_nonzero(cuzk_fr *v, gen_coef *k, uint64_t *s)
{
    do
        gen_rand_fr(v, s);
    while (cuzk_fr_is_zero(v));
    coef_of(k, v);
}

void gen_circuit_init(gen_circuit *c)
{
    cuzk_fr t;
    cuzk_fr_set_one(&t);
    coef_of(&c->one, &t);
    cuzk_fr_set_u64(&t, 2);
    coef_of(&c->two, &t);
    cuzk_fr_set_one(&t);
    cuzk_fr_neg(&t, &t);
    coef_of(&c->minus_one, &t);
    for (int i = 0; i < GEN_DEC_BITS; i++) {
        memset(c->pow2[i].b, 0, CUZK_FR_BYTES);
        c->pow2[i].b[i / 8] = (uint8_t)(1u << (i % 8));   /* 2^i, i <= 254, below r */
    }
    uint64_t s = gen_mix(c->circuit_seed, UINT64_MAX);
    for (int j = 0; j < GEN_WIDTH; j++)
        for (int k = 0; k < GEN_WIDTH; k++)
            rand_nonzero(&c->mds[j][k], &c->mds_b[j][k], &s);
    for (int r = 0; r < GEN_SBOX_ROUNDS; r++)
        for (int j = 0; j < GEN_WIDTH; j++)
            rand_nonzero(&c->rc[r][j], &c->rc_b[r][j], &s);
    for (int i = 0; i < GEN_DENSE_COEFS; i++)
        rand_nonzero(&c->dc[i], &c->dc_b[i], &s);
}

/* ---- emission ---- */

static inline bool room(const gen_block *b) { return b->n_cons < b->limit; }

static inline uint32_t new_wire(gen_block *b)
{
    if (b->n_wires >= b->wires_cap && b->n_part)
        b->overflow = true;
    return GEN_SEEDS + b->n_wires++;
}

static uint8_t *put_lc(gen_block *b, uint8_t *p, int m, const gen_term *t, uint32_t n)
{
    b->n_terms[m] += n;
    if (!p) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t w = t[i].w;
            if (m < 2 && !(w & GEN_GLOBAL))
                b->mark[m][w >> 6] |= 1ULL << (w & 63);
        }
        return NULL;
    }
    memcpy(p, &n, 4);
    p += 4;
    for (uint32_t i = 0; i < n; i++, p += 36) {
        uint32_t w = t[i].w;
        if (m < 2) {
            if (w & GEN_GLOBAL)
                __atomic_store_n(&b->pub_mark[m][w & ~GEN_GLOBAL], 1, __ATOMIC_RELAXED);
            else
                b->mark[m][w >> 6] |= 1ULL << (w & 63);
        }
        uint32_t g = gen_global_wire(b, w);
        memcpy(p, &g, 4);
        memcpy(p + 4, t[i].k->b, CUZK_FR_BYTES);
    }
    return p;
}

/* One constraint A * B = C. The caller has checked room(). */
static void emit(gen_block *b, const gen_term *ta, uint32_t na, const gen_term *tb, uint32_t nb,
                 const gen_term *tc, uint32_t nc)
{
    size_t len = 12 + (size_t)36 * (na + nb + nc);
    uint8_t *p = NULL;
    if (b->cons) {
        if (b->cons_len + len > b->cons_cap) {
            b->overflow = true;
            b->n_cons++;
            return;
        }
        p = b->cons + b->cons_len;
    }
    p = put_lc(b, p, 0, ta, na);
    p = put_lc(b, p, 1, tb, nb);
    put_lc(b, p, 2, tc, nc);
    b->cons_len += len;
    b->n_cons++;
}

static inline uint8_t *slot(const gen_block *b, uint32_t p, uint32_t l)
{
    return b->vals + (size_t)p * b->slab + (size_t)l * CUZK_FR_BYTES;
}

/* ---- porep ---- */

#define NO_WIRE UINT32_MAX

/* One iteration; false when the limit cut it short. s[] and *g are the state's local
 * wires (g = NO_WIRE when no packed element waits to be absorbed). */
static bool porep_iteration(gen_block *b, uint64_t it, uint64_t *rs, uint32_t s[GEN_WIDTH],
                            uint32_t *g)
{
    const gen_circuit *c = b->c;
    const uint32_t P = b->n_part;
    const gen_term one_t = {GEN_GLOBAL | 0, &c->one};
    const uint32_t pub = c->n_public ? 1 + (uint32_t)(it % c->n_public) : 0;

    /* S-box rounds: t_j = sum_k M[j][k] s_k (+ M[j][0] G) + rc_j (+ public), then
     * x2 = t*t, x4 = x2*x2, x5 = x4*t. */
    for (int r = 0; r < GEN_SBOX_ROUNDS; r++) {
        gen_term t[GEN_WIDTH][GEN_WIDTH + 3];
        uint32_t nt[GEN_WIDTH];
        for (int j = 0; j < GEN_WIDTH; j++) {
            uint32_t n = 0;
            for (int k = 0; k < GEN_WIDTH; k++)
                t[j][n++] = (gen_term){s[k], &c->mds_b[j][k]};
            if (r == 0 && *g != NO_WIRE)
                t[j][n++] = (gen_term){*g, &c->mds_b[j][0]};
            t[j][n++] = (gen_term){GEN_GLOBAL | 0, &c->rc_b[r][j]};
            if (r == 0 && j == 0 && pub)
                t[j][n++] = (gen_term){GEN_GLOBAL | pub, &c->one};
            nt[j] = n;
        }
        for (uint32_t p = 0; p < P; p++) {
            const cuzk_fr *sv = &b->st[p * 4];
            cuzk_fr sum0 = sv[0], m;
            if (r == 0 && *g != NO_WIRE)
                cuzk_fr_add(&sum0, &sum0, &sv[3]);
            for (int j = 0; j < GEN_WIDTH; j++) {
                cuzk_fr *tj = &b->tv[p * GEN_WIDTH + j];
                cuzk_fr_mul(tj, &c->mds[j][0], &sum0);
                for (int k = 1; k < GEN_WIDTH; k++) {
                    cuzk_fr_mul(&m, &c->mds[j][k], &sv[k]);
                    cuzk_fr_add(tj, tj, &m);
                }
                cuzk_fr_add(tj, tj, &c->rc[r][j]);
                if (r == 0 && j == 0 && pub)
                    cuzk_fr_add(tj, tj, &c->pub_val[(size_t)p * c->n_public + pub - 1]);
            }
        }
        if (r == 0)
            *g = NO_WIRE;
        for (int j = 0; j < GEN_WIDTH; j++) {
            if (!room(b))
                return false;
            uint32_t x2 = new_wire(b);
            gen_term t2 = {x2, &c->one};
            emit(b, t[j], nt[j], t[j], nt[j], &t2, 1);
            for (uint32_t p = 0; p < P; p++) {
                cuzk_fr *v = &b->st[p * 4 + j];   /* the state slot now walks x2, x4, x5 */
                cuzk_fr_sqr(v, &b->tv[p * GEN_WIDTH + j]);
                cuzk_fr_to_bytes_le(slot(b, p, x2), v);
            }
            if (!room(b))
                return false;
            uint32_t x4 = new_wire(b);
            gen_term t4 = {x4, &c->one};
            emit(b, &t2, 1, &t2, 1, &t4, 1);
            for (uint32_t p = 0; p < P; p++) {
                cuzk_fr *v = &b->st[p * 4 + j];
                cuzk_fr_sqr(v, v);
                cuzk_fr_to_bytes_le(slot(b, p, x4), v);
            }
            if (!room(b))
                return false;
            uint32_t x5 = new_wire(b);
            gen_term t5 = {x5, &c->one};
            emit(b, &t4, 1, t[j], nt[j], &t5, 1);
            for (uint32_t p = 0; p < P; p++) {
                cuzk_fr *v = &b->st[p * 4 + j];
                cuzk_fr_mul(v, v, &b->tv[p * GEN_WIDTH + j]);
                cuzk_fr_to_bytes_le(slot(b, p, x5), v);
            }
            s[j] = x5;
        }
    }

    /* Decomposition of s_1 into GEN_DEC_BITS bits: b*b = b each, then
     * (sum 2^i b_i - s_1) * 1 = 0. */
    uint32_t bit[GEN_DEC_BITS];
    for (uint32_t p = 0; p < P; p++) {
        uint64_t l[CUZK_FR_LIMBS];
        cuzk_fr_to_limbs(l, &b->st[p * 4 + 1]);
        uint8_t *bits = &b->bits[(size_t)p * GEN_DEC_BITS];
        for (int i = 0; i < GEN_DEC_BITS; i++)
            bits[i] = (uint8_t)((l[i / 64] >> (i % 64)) & 1);
    }
    for (int i = 0; i < GEN_DEC_BITS; i++) {
        if (!room(b))
            return false;
        bit[i] = new_wire(b);
        gen_term tb = {bit[i], &c->one};
        emit(b, &tb, 1, &tb, 1, &tb, 1);
        for (uint32_t p = 0; p < P; p++)
            slot(b, p, bit[i])[0] = b->bits[(size_t)p * GEN_DEC_BITS + i];
    }
    if (!room(b))
        return false;
    for (int i = 0; i < GEN_DEC_BITS; i++)
        b->big[i] = (gen_term){bit[i], &c->pow2[i]};
    b->big[GEN_DEC_BITS] = (gen_term){s[1], &c->minus_one};
    emit(b, b->big, GEN_DEC_BITS + 1, &one_t, 1, NULL, 0);

    /* Bit rounds: lane_j <- lane_j XOR bit_k (2a*b = a + b - c) or lane_j AND bit_k
     * (a*b = c), k random; lanes start as the low bits. No linear combination names a
     * wire twice. */
    uint32_t lane[GEN_LANES];
    for (int j = 0; j < GEN_LANES; j++)
        lane[j] = bit[j];
    for (uint32_t p = 0; p < P; p++)
        memcpy(&b->lanes[(size_t)p * GEN_LANES], &b->bits[(size_t)p * GEN_DEC_BITS], GEN_LANES);
    for (int rr = 0; rr < GEN_BIT_ROUNDS; rr++) {
        uint32_t off = gen_below(rs, GEN_AND_EVERY);
        for (int j = 0; j < GEN_LANES; j++) {
            /* In round 0 lane j is still bit j: draw k != j, as an XOR's C side would
             * name the wire twice (snarkjs keeps one term per wire). */
            uint32_t k = gen_below(rs, rr ? GEN_DEC_BITS : GEN_DEC_BITS - 1);
            if (rr == 0 && k >= (uint32_t)j)
                k++;
            bool is_and = (j + off) % GEN_AND_EVERY == 0;
            if (!room(b))
                return false;
            uint32_t out = new_wire(b);
            if (is_and) {
                gen_term ta = {lane[j], &c->one}, tb = {bit[k], &c->one}, tc = {out, &c->one};
                emit(b, &ta, 1, &tb, 1, &tc, 1);
            } else {
                gen_term ta = {lane[j], &c->two}, tb = {bit[k], &c->one};
                gen_term tc[3] = {{lane[j], &c->one}, {bit[k], &c->one}, {out, &c->minus_one}};
                emit(b, &ta, 1, &tb, 1, tc, 3);
            }
            for (uint32_t p = 0; p < P; p++) {
                uint8_t *lv = &b->lanes[(size_t)p * GEN_LANES + j];
                uint8_t bv = b->bits[(size_t)p * GEN_DEC_BITS + k];
                *lv = is_and ? (uint8_t)(*lv & bv) : (uint8_t)(*lv ^ bv);
                slot(b, p, out)[0] = *lv;
            }
            lane[j] = out;
        }
    }

    /* Pack: (sum_{j < GEN_PACKED} 2^j lane_j) * 1 = G; G joins s_0 next iteration. */
    if (!room(b))
        return false;
    uint32_t gw = new_wire(b);
    for (int j = 0; j < GEN_PACKED; j++)
        b->big[j] = (gen_term){lane[j], &c->pow2[j]};
    gen_term tg = {gw, &c->one};
    emit(b, b->big, GEN_PACKED, &one_t, 1, &tg, 1);
    for (uint32_t p = 0; p < P; p++) {
        uint64_t v = 0;
        for (int j = 0; j < GEN_PACKED; j++)
            v |= (uint64_t)b->lanes[(size_t)p * GEN_LANES + j] << j;
        cuzk_fr_set_u64(&b->st[p * 4 + 3], v);
        memcpy(slot(b, p, gw), &v, 8);   /* little-endian, upper bytes already zero */
    }
    *g = gw;
    return true;
}

static void porep_block(gen_block *b, uint64_t *rs)
{
    uint32_t s[GEN_WIDTH] = {0, 1, 2}, g = NO_WIRE;
    for (int i = 0; i < GEN_POREP_ITERS; i++)
        if (!porep_iteration(b, b->index * GEN_POREP_ITERS + (uint64_t)i, rs, s, &g))
            return;
}

/* ---- dense ---- */

/* x_k = (c1 x_{k-1} + c2 x_{k-2}) * (c3 x_{k-1} + c4 x_{k-3} + c5 [+ public]). */
static void dense_block(gen_block *b, uint64_t *rs)
{
    const gen_circuit *c = b->c;
    const uint32_t P = b->n_part;
    uint32_t w1 = 2, w2 = 1, w3 = 0;   /* local wires of x_{k-1}, x_{k-2}, x_{k-3} */
    /* st[p*4 + 0..2] hold the values of w3, w2, w1 */
    for (uint64_t k = 0; k < c->block_cons && room(b); k++) {
        uint64_t rnd = gen_next(rs);
        const uint32_t i1 = rnd & 255, i2 = (rnd >> 8) & 255, i3 = (rnd >> 16) & 255,
                       i4 = (rnd >> 24) & 255, i5 = (rnd >> 32) & 255;
        uint64_t it = (b->index * c->block_cons + k) / c->iter_cons;
        uint32_t pub = (k % c->iter_cons == 0 && c->n_public) ? 1 + (uint32_t)(it % c->n_public) : 0;
        uint32_t x = new_wire(b);
        gen_term ta[2] = {{w1, &c->dc_b[i1]}, {w2, &c->dc_b[i2]}};
        gen_term tb[4] = {{w1, &c->dc_b[i3]}, {w3, &c->dc_b[i4]}, {GEN_GLOBAL | 0, &c->dc_b[i5]},
                          {GEN_GLOBAL | pub, &c->one}};
        gen_term tc = {x, &c->one};
        emit(b, ta, 2, tb, pub ? 4 : 3, &tc, 1);
        for (uint32_t p = 0; p < P; p++) {
            cuzk_fr *v = &b->st[p * 4];   /* v[0] = x_{k-3}, v[1] = x_{k-2}, v[2] = x_{k-1} */
            cuzk_fr a, bb, m;
            cuzk_fr_mul(&a, &c->dc[i1], &v[2]);
            cuzk_fr_mul(&m, &c->dc[i2], &v[1]);
            cuzk_fr_add(&a, &a, &m);
            cuzk_fr_mul(&bb, &c->dc[i3], &v[2]);
            cuzk_fr_mul(&m, &c->dc[i4], &v[0]);
            cuzk_fr_add(&bb, &bb, &m);
            cuzk_fr_add(&bb, &bb, &c->dc[i5]);
            if (pub)
                cuzk_fr_add(&bb, &bb, &c->pub_val[(size_t)p * c->n_public + pub - 1]);
            v[0] = v[1];
            v[1] = v[2];
            cuzk_fr_mul(&v[2], &a, &bb);
            cuzk_fr_to_bytes_le(slot(b, p, x), &v[2]);
        }
        w3 = w2;
        w2 = w1;
        w1 = x;
    }
}

void gen_block_run(gen_block *b)
{
    const gen_circuit *c = b->c;
    b->cons_len = 0;
    b->n_cons = 0;
    b->n_wires = 0;
    b->overflow = false;
    memset(b->n_terms, 0, sizeof b->n_terms);
    size_t words = (GEN_SEEDS + (size_t)b->wires_cap + 63) / 64;
    memset(b->mark[0], 0, words * 8);
    memset(b->mark[1], 0, words * 8);
    if (b->n_part)
        memset(b->vals, 0, b->slab * b->n_part);
    /* Seeds: private inputs, random per partition and block. */
    for (uint32_t p = 0; p < b->n_part; p++) {
        uint64_t ws = gen_mix(c->part_seed[p], b->index);
        for (uint32_t k = 0; k < GEN_SEEDS; k++) {
            gen_rand_fr(&b->st[p * 4 + k], &ws);
            cuzk_fr_to_bytes_le(slot(b, p, k), &b->st[p * 4 + k]);
        }
    }
    uint64_t rs = gen_mix(c->circuit_seed, b->index);
    if (c->profile == CUZK_GEN_POREP)
        porep_block(b, &rs);
    else
        dense_block(b, &rs);
}
