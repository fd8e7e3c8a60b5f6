/*
 * Internal to src/gpu/msm: the pieces of the G1 MSM's batch-affine accumulation (affine.cu)
 * that do not need a device, written __host__ __device__ so that
 * tests/unit/test_gpu_affine.cu runs them on the CPU against the CPU library: a variable-time
 * Fp inversion, the affine sum of two points with its denominator split off, the two halves
 * of one thread's share of a reduction round (with the memory behind an accessor, the one
 * the kernel uses), the block's product tree, and the plan around the rounds (bucket
 * offsets, chunks and slices, round counts, buffer bounds, launch geometry).
 *
 * A round (affine.cu runs them): the input is a list of elements sorted by bucket key
 * (round 0: the sorted (key, base index | sign) pairs of one slice of buckets; later rounds:
 * (key, affine point)). Inside each run of equal keys, element 2i is added to element 2i + 1;
 * an odd run's last element passes through. The output, in the same order (so still sorted),
 * holds ceil(len / 2) elements per run. Bucket kl of the slice (len_kl elements in round 0)
 * has ceil(len_kl / 2^r) elements in round r, so the run offsets of every round are exclusive
 * sums known in advance: off_r[kl] = sum_{k' < kl} ceil(len_k' / 2^r), off_r[nb] the count.
 * The sums of a round are independent, so their denominators are inverted together
 * (Montgomery's trick): a thread takes the elements [es, es + 2K), i.e. at most K pairs
 * (a pair belongs to the thread holding its first element), multiplies their denominators
 * into prefix products (kept in memory), the block inverts the thread totals with one field
 * inversion, and the thread walks its pairs backwards:
 *   inv_i = inv * (d_0 ... d_(i-1)), inv = inv * d_i,
 * three multiplications a pair, plus three for the sum (lambda, lambda^2, lambda (x1 - x3)).
 */
#ifndef CUZK_GPU_MSM_AFFINE_CUH
#define CUZK_GPU_MSM_AFFINE_CUH

#include <stddef.h>
#include <stdint.h>

#include "cuzk/ff.h"
#include "gpu/ec/xyzz.cuh"
#include "gpu/ff/bls12_381.cuh"
#include "gpu/mem.cuh"

#define MSM_AFF_SIGN 0x80000000u /* round 0 value bit: the negated base (msm.cuh's MSM_SIGN) */

/* ---- 12-limb integers (plain C; the inversion is off the hot path) ---- */
GPU_HD unsigned aff_ctz32(uint32_t x) /* x != 0 */
{
#ifdef __CUDA_ARCH__
    return (unsigned)(__ffs((int)x) - 1);
#else
    return (unsigned)__builtin_ctz(x);
#endif
}

/* Trailing zero bits of a nonzero integer. */
GPU_HD unsigned aff_big_ctz(const uint32_t *u)
{
    unsigned z = 0;
    bool found = false;
#pragma unroll
    for (int j = 0; j < 12; j++)
        if (!found && u[j]) {
            z = 32u * j + aff_ctz32(u[j]);
            found = true;
        }
    return z;
}

GPU_HD bool aff_big_is_zero(const uint32_t *u)
{
    uint32_t t = 0;
#pragma unroll
    for (int j = 0; j < 12; j++)
        t |= u[j];
    return t == 0;
}

/* u >>= s, 1 <= s <= 31. */
GPU_HD void aff_big_shr(uint32_t *u, unsigned s)
{
#pragma unroll
    for (int j = 0; j < 11; j++)
        u[j] = (u[j] >> s) | (u[j + 1] << (32 - s));
    u[11] >>= s;
}

/* u <<= s, 1 <= s <= 31 (the caller's bounds say no bit leaves the top word). */
GPU_HD void aff_big_shl(uint32_t *u, unsigned s)
{
#pragma unroll
    for (int j = 11; j > 0; j--)
        u[j] = (u[j] << s) | (u[j - 1] >> (32 - s));
    u[0] <<= s;
}

/* a > b. */
GPU_HD bool aff_big_gt(const uint32_t *a, const uint32_t *b)
{
    uint64_t br = 0;
#pragma unroll
    for (int j = 0; j < 12; j++)
        br = ((uint64_t)b[j] - a[j] - br) >> 63; /* borrow of b - a */
    return br != 0;
}

/* a -= b (a >= b). */
GPU_HD void aff_big_sub(uint32_t *a, const uint32_t *b)
{
    uint64_t br = 0;
#pragma unroll
    for (int j = 0; j < 12; j++) {
        const uint64_t d = (uint64_t)a[j] - b[j] - br;
        a[j] = (uint32_t)d;
        br = d >> 63;
    }
}

/* a += b (no carry out by the caller's bounds). */
GPU_HD void aff_big_add(uint32_t *a, const uint32_t *b)
{
    uint64_t c = 0;
#pragma unroll
    for (int j = 0; j < 12; j++) {
        c += (uint64_t)a[j] + b[j];
        a[j] = (uint32_t)c;
        c >>= 32;
    }
}

/* x 2^-s mod p for a reduced x, 1 <= s <= 31: with m = x n0 mod 2^s (n0 = -p^-1 mod 2^32),
 * x + m p is divisible by 2^s and (x + m p) / 2^s < p/2 + p, one subtraction from reduced. */
GPU_HD fp_t aff_fp_halve(const fp_t &x, unsigned s)
{
    const uint32_t m = (x.v[0] * FpP::n0()) & ((1u << s) - 1);
    uint32_t t[13];
    uint64_t c = 0;
#pragma unroll
    for (int j = 0; j < 12; j++) {
        c += (uint64_t)x.v[j] + (uint64_t)m * FpP::p(j);
        t[j] = (uint32_t)c;
        c >>= 32;
    }
    t[12] = (uint32_t)c;
    fp_t r;
#pragma unroll
    for (int j = 0; j < 12; j++)
        r.v[j] = (t[j] >> s) | (t[j + 1] << (32 - s));
    return f_reduce_once<FpP>(r, 0);
}

/* The Montgomery form of A^-1 from a = A R mod p (a < 2p, a lazy value: reduced first;
 * 0 mod p gives 0). VARIABLE TIME
 * (for public data: MSM bases). r2 = R^2 mod p as an integer (msm_aff_r2 on the host).
 * Kaliski's almost Montgomery inverse, phase I: u = p, v = a, r = 0, s = 1, k = 0; while
 * v > 0: u even: u /= 2, s *= 2; v even: v /= 2, r *= 2; u > v: u = (u - v)/2, r += s,
 * s *= 2; else v = (v - u)/2, s += r, r *= 2; k++ at each step. The invariant p = u s + v r
 * keeps r, s <= p while u, v > 0, and r <= 2p at the end; then p - (r mod p) = a^-1 2^k with
 * 381 <= k <= 762. Here runs of halvings are taken at once (a shift by the trailing zero
 * count), the halving after a subtraction with them. Finally
 * f_mul(a^-1 2^k, R^2) = a^-1 2^k R, times 2^(384 - k) (doublings, or halvings by 31 bits
 * at a time) = R^2 / a = R / A. */
GPU_HD fp_t fp_inv_var(const fp_t &a_lazy, const fp_t &r2)
{
    const fp_t a = fe_red(a_lazy);
    if (f_is_zero<FpP>(a))
        return a;
    uint32_t u[12], v[12], r[12], s[12];
#pragma unroll
    for (int j = 0; j < 12; j++) {
        u[j] = FpP::p(j);
        v[j] = a.v[j];
        r[j] = 0;
        s[j] = 0;
    }
    s[0] = 1;
    unsigned k = 0;
    /* each pass subtracts two odd numbers, so the next one shifts out a bit or more: at
     * most bits(p) + bits(a) passes */
    for (int pass = 0; pass < 2 * 384 + 2; pass++) {
        for (unsigned z = aff_big_ctz(v); z;) {
            const unsigned sh = z < 31 ? z : 31;
            aff_big_shr(v, sh);
            aff_big_shl(r, sh);
            k += sh;
            z -= sh;
        }
        for (unsigned z = aff_big_ctz(u); z;) {
            const unsigned sh = z < 31 ? z : 31;
            aff_big_shr(u, sh);
            aff_big_shl(s, sh);
            k += sh;
            z -= sh;
        }
        if (aff_big_gt(u, v)) {
            aff_big_sub(u, v);
            aff_big_add(r, s);
        } else {
            aff_big_sub(v, u);
            aff_big_add(s, r);
            if (aff_big_is_zero(v)) {
                aff_big_shl(r, 1);
                k++;
                break;
            }
        }
    }
    fp_t x;
#pragma unroll
    for (int j = 0; j < 12; j++)
        x.v[j] = r[j];
    x = f_reduce_once<FpP>(x, 0);               /* r mod p (r <= 2p) */
    x = f_sub<FpP>(f_zero<FpP>(), x);           /* p - r: a^-1 2^k */
    x = f_mul<FpP>(x, r2);                      /* a^-1 2^k R */
    for (; k < 384; k++)
        x = f_dbl<FpP>(x);
    while (k > 384) {
        const unsigned sh = k - 384 < 31 ? k - 384 : 31;
        x = aff_fp_halve(x, sh);
        k -= sh;
    }
    return x;
}

/* ---- the sum of two affine points, its denominator split off ----
 * (x1, y1) + (x2, y2): lambda = (y2 - y1) / (x2 - x1), or 3 x1^2 / (2 y1) for the doubling;
 * x3 = lambda^2 - x1 - x2, y3 = lambda (x1 - x3) - y1. Infinity is (0, 0). The cases without
 * a division (an infinity, P + -P, or a doubling of y = 0) take the denominator 1, so a batch
 * never holds a zero. */
enum { AFF_ADD = 0, AFF_DBL = 1, AFF_P = 2, AFF_Q = 3, AFF_INF = 4 };

GPU_HD bool aff_inf(const g1_aff_t &a)
{
    return f_is_zero<FpP>(a.x) && f_is_zero<FpP>(a.y);
}

/* The case of p + q and its denominator d (never 0). */
GPU_HD int aff_pair_denom(fp_t &d, const g1_aff_t &p, const g1_aff_t &q)
{
    if (aff_inf(q)) {
        d = f_one<FpP>();
        return AFF_P;
    }
    if (aff_inf(p)) {
        d = f_one<FpP>();
        return AFF_Q;
    }
    if (!f_eq<FpP>(p.x, q.x)) {
        d = f_sub<FpP>(q.x, p.x);
        return AFF_ADD;
    }
    if (f_eq<FpP>(p.y, q.y) && !f_is_zero<FpP>(p.y)) {
        d = f_dbl<FpP>(p.y);
        return AFF_DBL;
    }
    d = f_one<FpP>();
    return AFF_INF;
}

/* p + q given the case from aff_pair_denom and the inverse of its denominator (inv lazy,
 * below 2p); the values between are lazy (fp2.cuh), the coordinates reduced. */
GPU_HD g1_aff_t aff_pair_sum(int c, const g1_aff_t &p, const g1_aff_t &q, const fp_t &inv)
{
    if (c == AFF_P)
        return p;
    if (c == AFF_Q)
        return q;
    g1_aff_t r;
    if (c == AFF_INF) {
        r.x = f_zero<FpP>();
        r.y = r.x;
        return r;
    }
    fp_t num;
    if (c == AFF_ADD) {
        num = fe_sub(q.y, p.y);
    } else {
        const fp_t x2 = fe_sqr_lz(p.x);
        num = fe_add_lz(fe_dbl_lz(x2), x2);
    }
    const fp_t l = fe_mul_lz(num, inv);
    r.x = fe_red(fe_sub_lz(fe_sub_lz(fe_sqr_lz(l), p.x), q.x));
    r.y = fe_red(fe_sub_lz(fe_mul_lz(l, fe_sub_lz(p.x, r.x)), p.y));
    return r;
}

/* ---- memory of a round (hd_ld / hd_ld_rw / hd_st of mem.cuh: the read-only cache
 * for data that no thread of the kernel writes, plain accesses for its own scratch) ----
 * What a round reads and writes. FIRST: round 0, whose element e is the base
 * pts[vals[e] & ~MSM_AFF_SIGN], negated when the sign bit is set; later rounds read pts[e].
 * keys hold global bucket keys (k0 + the slice bucket kl); off_in / off_out are the slice's
 * run offsets of this round and the next. pre / meta: the thread's scratch, slot i at
 * i * stride + t (consecutive threads, consecutive addresses). */
template <bool FIRST> struct aff_io {
    g1_aff_t *out;
    uint32_t *okeys;
    fp_t *pre;
    uint2 *meta;
    const uint32_t *keys, *vals;
    const g1_aff_t *pts;
    const uint32_t *off_in, *off_out;
    uint32_t k0;
    size_t stride, t;

    GPU_HD uint32_t bucket(uint32_t e) const { return keys[e] - k0; }
    GPU_HD g1_aff_t point(uint32_t e) const
    {
        if (!FIRST)
            return hd_ld(pts + e);
        const uint32_t v = vals[e];
        g1_aff_t p = hd_ld(pts + (v & ~MSM_AFF_SIGN));
        if (v & MSM_AFF_SIGN)
            p.y = f_neg<FpP>(p.y);
        return p;
    }
    GPU_HD fp_t x(uint32_t e) const
    {
        return hd_ld(&pts[FIRST ? (vals[e] & ~MSM_AFF_SIGN) : e].x);
    }
    GPU_HD void st_point(uint32_t j, const g1_aff_t &p) const { hd_st(out + j, p); }
    GPU_HD void st_key(uint32_t j, uint32_t kl) const { okeys[j] = kl + k0; }
    GPU_HD void st_pre(unsigned i, const fp_t &a) const { hd_st(pre + i * stride + t, a); }
    GPU_HD fp_t ld_pre(unsigned i) const { return hd_ld_rw(pre + i * stride + t); }
    GPU_HD void st_meta(unsigned i, uint32_t e, uint32_t j) const
    {
        meta[i * stride + t] = make_uint2(e, j);
    }
    GPU_HD void ld_meta(unsigned i, uint32_t &e, uint32_t &j) const
    {
        const uint2 m = meta[i * stride + t];
        e = m.x;
        j = m.y;
    }
};

/* First half of a thread's share of a round: the items (pairs and pass-throughs) whose first
 * element lies in [es, ee) (es < ee <= the round's count). Pass-throughs are written out at
 * once; pairs get their output key, prefix product and (element, output index). Returns the
 * product of the pair denominators (1 without pairs) and the pair count (at most
 * (ee - es + 1) / 2). The prefix products and the total are lazy (below 2p). */
template <class Io> GPU_HD fp_t aff_round_fwd(const Io &io, uint32_t es, uint32_t ee,
                                              unsigned &npair)
{
    uint32_t kl = io.bucket(es);
    uint32_t end = io.off_in[kl + 1];
    const uint32_t q = es - io.off_in[kl]; /* rank in the run; odd: the previous thread's */
    uint32_t j = io.off_out[kl] + (q + 1) / 2;
    uint32_t e = es + (q & 1);
    fp_t acc = f_one<FpP>();
    unsigned m = 0;
    while (e < ee) {
        if (e == end) { /* a new run: rank 0 */
            kl = io.bucket(e);
            end = io.off_in[kl + 1];
        }
        io.st_key(j, kl);
        if (e + 1 < end) {
            /* the common case from the x coordinates alone: distinct and not infinity */
            const fp_t x1 = io.x(e), x2 = io.x(e + 1);
            fp_t d;
            if (!f_eq<FpP>(x1, x2) && !f_is_zero<FpP>(x1) && !f_is_zero<FpP>(x2))
                d = f_sub<FpP>(x2, x1);
            else
                (void)aff_pair_denom(d, io.point(e), io.point(e + 1));
            acc = m ? fe_mul_lz(acc, d) : d;
            io.st_pre(m, acc);
            io.st_meta(m, e, j);
            m++;
            e += 2;
        } else {
            io.st_point(j, io.point(e));
            e++;
        }
        j++;
    }
    npair = m;
    return acc;
}

/* Second half: inv = the inverse of what aff_round_fwd returned (lazy, below 2p); writes
 * the pair sums. */
template <class Io> GPU_HD void aff_round_bwd(const Io &io, fp_t inv, unsigned npair)
{
    for (unsigned i = npair; i-- > 0;) {
        uint32_t e, j;
        io.ld_meta(i, e, j);
        const g1_aff_t p = io.point(e), q = io.point(e + 1);
        fp_t d;
        const int c = aff_pair_denom(d, p, q);
        fp_t invd = inv;
        if (i) {
            invd = fe_mul_lz(inv, io.ld_pre(i - 1));
            inv = fe_mul_lz(inv, d);
        }
        io.st_point(j, aff_pair_sum(c, p, q, invd));
    }
}

/* The block's batch inversion as a product tree over nd[1 .. 2T): leaves nd[T + t] are the
 * thread totals. Up, for the level of nodes [h, 2h): nd[i] = nd[2i] nd[2i+1]; the root
 * nd[1] is inverted; down, for the level [h, 2h): with z = nd[i] now the inverse of the
 * product below node i, nd[2i] = z nd[2i+1] and nd[2i+1] = z nd[2i] (the inverses of the
 * children). The leaves end as the inverses of the totals. One call per node; the caller
 * orders the levels (barriers on the device). Every node lazy (below 2p; fp_inv_var reduces
 * the root). */
GPU_HD void aff_tree_up(fp_t *nd, unsigned i)
{
    nd[i] = fe_mul_lz(nd[2 * i], nd[2 * i + 1]);
}
GPU_HD void aff_tree_down(fp_t *nd, unsigned i)
{
    const fp_t z = nd[i], a = nd[2 * i], b = nd[2 * i + 1];
    nd[2 * i] = fe_mul_lz(z, b);
    nd[2 * i + 1] = fe_mul_lz(z, a);
}

/* ---- the plan (affine.cu's msm_aff_plan / msm_aff_run), per element or on the host ---- */
/* For the sorted keys (npairs of them, each <= nbk = W B, the sentinel): element e (0 ..
 * npairs) writes off0[k] = e for k in (key[e-1], key[e]] (key[-1] = -1, key[npairs] = nbk),
 * so that off0[k] = the first position with key >= k, each k <= nbk written once. */
GPU_HD void aff_bounds_at(uint32_t *off0, const uint32_t *keys, size_t npairs, uint32_t nbk,
                          size_t e)
{
    const int64_t kp = e ? (int64_t)keys[e - 1] : -1;
    const int64_t kc = e < npairs ? (int64_t)keys[e] : (int64_t)nbk;
    for (int64_t k = kp + 1; k <= kc; k++)
        off0[k] = (uint32_t)e;
}

/* The chunk offsets: co[i] = off0[i cb] for the chunks i < nchunks of cb buckets,
 * co[nchunks] = off0[nbk]; what element k (0 .. nbk) writes. */
GPU_HD void aff_chunk_at(uint32_t *co, const uint32_t *off0, uint32_t nbk, uint32_t cb,
                         uint32_t nchunks, size_t k)
{
    if (k < nbk && k % cb == 0)
        co[k / cb] = off0[k];
    else if (k == nbk)
        co[nchunks] = off0[k];
}

/* Bucket k0 + kl's element count in round r: ceil(len / 2^r). */
GPU_HD uint32_t aff_len_at(const uint32_t *off0, uint32_t k0, uint32_t kl, unsigned r)
{
    const uint64_t len = off0[k0 + kl + 1] - off0[k0 + kl];
    return (uint32_t)((len + (1ULL << r) - 1) >> r);
}

struct msm_aff_slice {
    uint32_t k0, nb; /* buckets [k0, k0 + nb) */
    uint32_t s0, n;  /* their pairs [s0, s0 + n) of the sorted list */
    unsigned rounds;
};

/* Slices from the chunk offsets (chunk i = buckets [i cb, (i+1) cb), its pairs
 * [co[i], co[i+1]), co[nchunks] = the pair count): consecutive chunks while their pairs stay
 * within cap (a larger chunk alone), slices without pairs dropped. Returns the count
 * (at most nchunks); rounds are left 0. */
static inline size_t msm_aff_cut(msm_aff_slice *out, const uint32_t *co, uint32_t nchunks,
                                 uint32_t cb, uint64_t nbk, size_t cap)
{
    size_t ns = 0;
    for (uint32_t i = 0; i < nchunks;) {
        const uint32_t a = i;
        size_t tot = co[i + 1] - co[i];
        for (i++; i < nchunks && tot + (co[i + 1] - co[i]) <= cap; i++)
            tot += co[i + 1] - co[i];
        if (!tot)
            continue;
        msm_aff_slice &s = out[ns++];
        s.k0 = a * cb;
        s.nb = (uint32_t)(((uint64_t)i * cb < nbk ? (uint64_t)i * cb : nbk) - s.k0);
        s.s0 = co[a];
        s.n = (uint32_t)tot;
        s.rounds = 0;
    }
    return ns;
}

/* Rounds of a slice: full, until a bucket of maxlen points holds one; else while the
 * average bucket holds stop points or more (and some bucket two). */
static inline unsigned msm_aff_rounds(const msm_aff_slice &s, uint32_t maxlen, bool full,
                                      size_t stop)
{
    unsigned maxr = 0;
    while (maxr < 31 && (1u << maxr) < maxlen)
        maxr++;
    if (full)
        return maxr;
    unsigned r = 0;
    while (r < maxr && ((size_t)s.n >> r) >= stop * s.nb)
        r++;
    return r;
}

/* Elements of a slice's round r (r = 0: its pairs): sum_k ceil(len_k / 2^r) <= n / 2^r + nb,
 * and never more than n. */
static inline size_t msm_aff_ub(const msm_aff_slice &s, unsigned r)
{
    if (r == 0)
        return s.n;
    const size_t b = ((size_t)s.n >> r) + s.nb;
    return b < s.n ? b : s.n;
}

/* A round over at most ub elements with blocks of T threads: K pairs a thread (kmin .. kmax,
 * enough for about `threads` threads) and the blocks that cover 2K elements a thread. */
static inline void msm_aff_geometry(size_t threads, unsigned T, uint32_t kmin, uint32_t kmax,
                                    size_t ub, uint32_t *K, size_t *blocks)
{
    size_t k = ((ub + 1) / 2 + threads - 1) / threads;
    k = k < kmin ? kmin : k > kmax ? kmax : k;
    const size_t per = 2 * k * T;
    *K = (uint32_t)k;
    *blocks = ub ? (ub + per - 1) / per : 1;
}

/* R^2 mod p as an integer: the Montgomery form of the field element 2^384 (host). */
static inline void msm_aff_r2(fp_t *r2)
{
    cuzk_fp two, t;
    const uint64_t e = 384;
    cuzk_fp_set_u64(&two, 2);
    cuzk_fp_pow(&t, &two, &e, 1);
    gpu_limbs32(r2->v, t.l, 6);
}

#endif
