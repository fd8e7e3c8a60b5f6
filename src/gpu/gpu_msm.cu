/*
 * G1 MSM and batch add on the device (cuzk/gpu.h).
 *
 * Pippenger with signed digits. Window c, W = ceil(256/c) windows (W c >= 256 > 255 + the
 * final carry, so the top window needs no recoding), B = 2^(c-1) buckets per window:
 *  1. digits: per scalar, window w gives d = bits + carry; d > B becomes d - 2^c with a
 *     carry into the next window. A nonzero d yields the pair
 *     key = w B + |d| - 1, value = point index | sign << 31; d = 0 yields key = W B (the
 *     sentinel, sorted last).
 *  2. the W n pairs are radix-sorted by key (CUB, only the key bits that occur).
 *  3. accumulation: the sorted pairs are cut into equal segments, one per thread; a
 *     thread adds the (possibly negated) affine bases of each run of equal keys into an
 *     XYZZ sum. Runs that start and end inside its segment are whole buckets and are
 *     stored directly; its first and last runs may continue in a neighbouring segment and
 *     go to a partials list (two per segment, keys non-decreasing), which a second kernel
 *     sums run by run into the buckets.
 *  4. bucket sums: window w needs R_w = sum_b b X_b. Its B buckets are cut into segments
 *     of M; a thread walks its segment [lo, lo + M) downwards with the running sums
 *     run += X_k, acc += run, giving acc = sum (k - lo + 1) X_k and run = sum X_k, then
 *     adds lo * run by double-and-add; one block per window adds up the segments.
 *  5. the host combines the windows: R = sum_w 2^(c w) R_w (Horner, on the CPU).
 * G1 alternative to step 3 (cuzk_gpu_msm_set_accumulation, AFFINE): rounds of pairwise affine
 * additions inside each bucket with one field inversion per block of a round (Montgomery's
 * trick; gpu_msm_affine.cuh), bucket slices at a time, then step 3 over the points left
 * (see "batch-affine accumulation" below).
 * batch_add: one thread per range of bit-vector words adds its bases, then the same block
 * reduction (in two levels when there are many ranges).
 * Split MSM (the Groth16 split on resident bases): the significant positions of a bit vector
 * are compacted on the device (popcount per word, exclusive scan, scatter) into an index
 * list; the digit pass reads scalar j (or scalar idx[j]) and writes the base index idx[j]
 * into the pair values, so steps 2-5 run unchanged over the significant terms only.
 * Everything is templated on the coordinate field (fp_t for G1, fp2_t for G2); one context
 * holds the bases of one group.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <utility>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "cuzk/gpu.h"
#include "gpu/gpu_common.cuh"
#include "gpu/gpu_msm_affine.cuh"

#define MSM_ACC_THREADS 128
#define MSM_SIGN 0x80000000u /* value bit: subtract the base */
#define MSM_RED1_BLOCKS 1024 /* first level of a two-level reduction: at most this many sums */
static_assert(MSM_SIGN == MSM_AFF_SIGN, "one sign bit");

/* Batch-affine accumulation (G1, cuzk_gpu_msm_set_accumulation): threads of a round's block
 * (a power of two: the product tree), the blocks per SM its registers must allow (4: 128
 * registers without spills, 16 warps per SM; 3 leaves ptxas about 146), the pairs a thread
 * takes (KMIN..KMAX: enough to fill WAVES rounds of resident blocks, no more), and the bucket
 * chunks per window that slices are made of. */
#ifndef MSM_AFF_THREADS
#define MSM_AFF_THREADS 128
#endif
#ifndef MSM_AFF_MINB
#define MSM_AFF_MINB 4
#endif
#define MSM_AFF_KMIN 16
#define MSM_AFF_KMAX 512
#define MSM_AFF_WAVES 4
#define MSM_AFF_CHUNKS 16
#if MSM_AFF_THREADS < 32 || (MSM_AFF_THREADS & (MSM_AFF_THREADS - 1)) != 0
#error "MSM_AFF_THREADS must be a power of two, at least a warp"
#endif

/* Threads of a reducing block: its shared memory holds one XYZZ point per thread, so G2
 * (384-byte points) uses fewer threads than G1 (192 bytes) to stay within 48 KB. */
template <class F> struct red_threads;
template <> struct red_threads<fp_t> {
    static constexpr unsigned T = 256;
};
template <> struct red_threads<fp2_t> {
    static constexpr unsigned T = 64;
};

struct cuzk_gpu_msm {
    int device;
    int group; /* 1: G1 bases, 2: G2 bases */
    size_t n_max;
    int sm_count;
    cudaStream_t stream;
    void *bases;
    uint32_t *scal; /* n_max scalars, 8 limbs each */
    uint32_t *keys[2], *vals[2];
    size_t pairs_cap;
    void *sort_tmp;
    size_t sort_tmp_cap;
    void *buckets;
    size_t buckets_cap; /* bytes */
    void *partials;
    uint32_t *pkeys;
    size_t partials_cap; /* points */
    void *segs;
    size_t segs_cap; /* bytes */
    void *red;       /* MSM_RED1_BLOCKS points: first level of a two-level reduction */
    void *winres;    /* at most 256 windows */
    uint64_t *bits;  /* batch_add (ones) bit vector */
    size_t bits_cap;
    uint64_t *sbits; /* significant bit vector of the split MSM */
    size_t sbits_cap;
    uint32_t *wcnt, *woff; /* per word: set bits, exclusive prefix sum */
    size_t wcnt_cap;
    uint32_t *idx; /* compacted significant positions */
    size_t idx_cap;
    void *scan_tmp;
    size_t scan_tmp_cap;
    int *flag;
    int acc_mode; /* cuzk_gpu_msm_acc: the G1 accumulation */
    int acc_used; /* the one the last MSM used */
    /* batch-affine accumulation (msm_aff_plan) */
    uint32_t *aff_off0; /* per global bucket key k <= W B: first sorted pair with key >= k */
    size_t aff_off0_cap;
    uint32_t *aff_info; /* largest bucket, then the offsets of the bucket chunks */
    size_t aff_info_cap;
    g1_aff_t *aff_pts[2]; /* round outputs (ping-pong) and their keys */
    uint32_t *aff_keys[2];
    size_t aff_pts_cap[2], aff_keys_cap[2];
    fp_t *aff_pre; /* per pair slot: prefix product, (element, output index) */
    uint2 *aff_meta;
    size_t aff_pre_cap, aff_meta_cap;
    uint32_t *aff_off[2], *aff_lens; /* run offsets of a round and the next; their lengths */
    size_t aff_off_cap[2], aff_lens_cap;
    uint32_t *aff_iota; /* 0, 1, 2, ...: the final XYZZ pass reads the points by these */
    size_t aff_iota_cap;
    unsigned char *aff_scan_tmp;
    size_t aff_scan_tmp_cap;
    struct msm_aff_slice *aff_slices; /* host: the plan */
    size_t aff_slices_cap;
    /* streamed bases (cuzk_gpu_msm_new_streamed): m->bases points at the stage holding the
     * chunk being worked on; the next chunk is copied into the other stage meanwhile */
    int streamed;
    int registered;              /* hbases page-locked here (cudaHostRegister) */
    const unsigned char *hbases; /* the caller's bases, n_max of aff_bytes */
    size_t aff_bytes;
    size_t chunk; /* bases per stage, a multiple of 64 */
    void *stage[2];
    cudaStream_t cstream;       /* the copies */
    cudaEvent_t copied[2];      /* stage s holds its chunk */
    cudaEvent_t used[2];        /* the work on stage s is done */
};

/* ---- kernels ---- */
/* Term i (i < n) uses scalar i and base i, or with idx: base idx[i] and scalar idx[i]
 * (gathered = 0) or scalar i (gathered = 1, the scalars of the set positions in order). */
__global__ void msm_digits_kernel(uint32_t *keys, uint32_t *vals, const uint32_t *scal,
                                  const uint32_t *__restrict__ idx, size_t n, unsigned c,
                                  unsigned W, int mont, int gathered, int *flag)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t base = idx ? idx[i] : (uint32_t)i;
    const size_t si = (idx && !gathered) ? (size_t)base : i;
    fr_t s = ld_vec(reinterpret_cast<const fr_t *>(scal) + si);
    if (mont)
        s = f_from_mont<FrP>(s);
    else if (s.v[7] >> 31)
        atomicOr(flag, 1);
    const uint32_t B = 1u << (c - 1);
    const uint32_t sentinel = W * B;
    const uint32_t mask = (c == 32) ? 0xffffffffu : ((1u << c) - 1);
    uint32_t carry = 0;
    for (unsigned w = 0; w < W; w++) {
        const unsigned bit = w * c, limb = bit >> 5, sh = bit & 31;
        uint32_t raw = 0;
        if (limb < 8) {
            raw = s.v[limb] >> sh;
            if (sh + c > 32 && limb + 1 < 8)
                raw |= s.v[limb + 1] << (32 - sh);
        }
        raw &= mask;
        uint32_t d = raw + carry;
        uint32_t neg = 0;
        carry = 0;
        if (w + 1 < W && d > B) {
            d = (1u << c) - d; /* d - 2^c < 0: magnitude 2^c - d */
            neg = MSM_SIGN;
            carry = 1;
        }
        const size_t o = (size_t)w * n + i;
        keys[o] = d ? w * B + d - 1 : sentinel;
        vals[o] = base | neg;
    }
}

/* wcnt[w] = set bits of word w among the first n bits. */
__global__ void msm_popc_kernel(uint32_t *wcnt, const uint64_t *__restrict__ bits, size_t n,
                                size_t nwords)
{
    const size_t w = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= nwords)
        return;
    uint64_t word = bits[w];
    if (w == nwords - 1 && (n & 63))
        word &= (1ULL << (n & 63)) - 1;
    wcnt[w] = (uint32_t)__popcll(word);
}

/* idx[woff[w] + j] = position of the j-th set bit of word w. */
__global__ void msm_compact_kernel(uint32_t *idx, const uint64_t *__restrict__ bits,
                                   const uint32_t *__restrict__ woff, size_t n, size_t nwords)
{
    const size_t w = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= nwords)
        return;
    uint64_t word = bits[w];
    if (w == nwords - 1 && (n & 63))
        word &= (1ULL << (n & 63)) - 1;
    uint32_t o = woff[w];
    while (word) {
        const unsigned b = __ffsll((long long)word) - 1;
        word &= word - 1;
        idx[o++] = (uint32_t)(w * 64 + b);
    }
}

template <class F>
__device__ __forceinline__ void msm_add_base(xyzz_t<F> &acc, const aff_t<F> *__restrict__ bases,
                                             uint32_t v)
{
    const aff_t<F> p = ld_vec(bases + (v & ~MSM_SIGN));
    if (aff_is_inf(p))
        return;
    xyzz_add_affine(acc, p.x, (v & MSM_SIGN) ? fe_neg(p.y) : p.y);
}

/* MINB: blocks per SM that the register allocation must allow (__launch_bounds__). For G1,
 * 3 gives 168 registers without spills (12 warps per SM); 1 leaves ptxas free (about 190
 * registers, 8 warps), 4 forces 128 registers with some spills (16 warps).
 * CUZK_GPU_MSM_ACC_MINB=1|3|4 picks one at run time (tuning aid; default 3; msm_acc). */
template <class F, int MINB>
__global__ void __launch_bounds__(MSM_ACC_THREADS, MINB)
msm_accumulate_kernel(xyzz_t<F> *buckets, xyzz_t<F> *partials, uint32_t *pkeys,
                      const uint32_t *__restrict__ keys, const uint32_t *__restrict__ vals,
                      const aff_t<F> *__restrict__ bases, size_t npairs, size_t L,
                      size_t nseg, uint32_t sentinel)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nseg)
        return;
    const size_t start = t * L;
    const size_t end = start + L < npairs ? start + L : npairs;
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    uint32_t cur = start < npairs ? keys[start] : sentinel;
    if (cur == sentinel) {
        pkeys[2 * t] = pkeys[2 * t + 1] = sentinel;
        return;
    }
    bool first = true;
    for (size_t e = start; e < end; e++) {
        const uint32_t key = keys[e];
        if (key == sentinel)
            break;
        if (key != cur) {
            if (first) {
                st_vec(partials + 2 * t, acc);
                pkeys[2 * t] = cur;
                first = false;
            } else {
                st_vec(buckets + cur, acc);
            }
            xyzz_set_inf(acc);
            cur = key;
        }
        msm_add_base(acc, bases, vals[e]);
    }
    if (first) {
        st_vec(partials + 2 * t, acc);
        pkeys[2 * t] = cur;
        xyzz_set_inf(acc);
    }
    st_vec(partials + 2 * t + 1, acc);
    pkeys[2 * t + 1] = cur;
}

template <class F>
__global__ void msm_partials_kernel(xyzz_t<F> *buckets, const xyzz_t<F> *partials,
                                    const uint32_t *pkeys, size_t np, uint32_t sentinel)
{
    const size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= np)
        return;
    const uint32_t key = pkeys[j];
    if (key == sentinel || (j > 0 && pkeys[j - 1] == key))
        return;
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    for (size_t jj = j; jj < np && pkeys[jj] == key; jj++)
        xyzz_add(acc, ld_vec_rw(partials + jj));
    st_vec(buckets + key, acc);
}

/* segs[w S + s] = sum_{k in [lo, lo+M)} (k + 1) X_(w B + k), lo = s M. */
template <class F>
__global__ void msm_bucket_sum_kernel(xyzz_t<F> *segs, const xyzz_t<F> *buckets, unsigned W,
                                      uint32_t B, uint32_t S, uint32_t M)
{
    const size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (size_t)W * S)
        return;
    const uint32_t w = (uint32_t)(id / S), s = (uint32_t)(id % S);
    const uint32_t lo = s * M;
    const xyzz_t<F> *bk = buckets + (size_t)w * B + lo;
    xyzz_t<F> run, acc;
    xyzz_set_inf(run);
    xyzz_set_inf(acc);
    for (int k = (int)M - 1; k >= 0; k--) {
        xyzz_add(run, ld_vec_rw(bk + k));
        xyzz_add(acc, run);
    }
    /* acc += lo * run (double-and-add from the top bit of lo) */
    if (lo) {
        xyzz_t<F> m;
        xyzz_set_inf(m);
        for (int b = 31 - __clz(lo); b >= 0; b--) {
            xyzz_dbl(m, m);
            if ((lo >> b) & 1)
                xyzz_add(m, run);
        }
        xyzz_add(acc, m);
    }
    st_vec(segs + id, acc);
}

/* out[g] = sum of in[g cnt .. min(g cnt + cnt, total)), one block per group. */
template <class F>
__global__ void __launch_bounds__(red_threads<F>::T)
msm_reduce_kernel(xyzz_t<F> *out, const xyzz_t<F> *in, size_t cnt, size_t total)
{
    constexpr unsigned T = red_threads<F>::T;
    __shared__ xyzz_t<F> sh[T];
    const size_t b0 = (size_t)blockIdx.x * cnt;
    const size_t b1 = b0 + cnt < total ? b0 + cnt : total;
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    for (size_t i = b0 + threadIdx.x; i < b1; i += T)
        xyzz_add(acc, ld_vec_rw(in + i));
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned h = T / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) {
            xyzz_t<F> a = sh[threadIdx.x];
            xyzz_add(a, sh[threadIdx.x + h]);
            sh[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = sh[0];
}

template <class F>
__global__ void __launch_bounds__(MSM_ACC_THREADS)
msm_batch_add_kernel(xyzz_t<F> *partials, const uint64_t *__restrict__ bits,
                     const aff_t<F> *__restrict__ bases, size_t n, size_t words_per,
                     size_t nthreads)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nthreads)
        return;
    const size_t nwords = (n + 63) / 64;
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    const size_t w0 = t * words_per;
    for (size_t wi = w0; wi < w0 + words_per && wi < nwords; wi++) {
        uint64_t word = bits[wi];
        if (wi == nwords - 1 && (n & 63))
            word &= (1ULL << (n & 63)) - 1;
        while (word) {
            const unsigned b = __ffsll((long long)word) - 1;
            word &= word - 1;
            msm_add_base(acc, bases, (uint32_t)(wi * 64 + b));
        }
    }
    st_vec(partials + t, acc);
}

/* ---- batch-affine accumulation (G1; gpu_msm_affine.cuh has the round's arithmetic) ----
 * After the sort, off0[k] (k = 0 .. W B) = the first sorted position with key >= k (the
 * sentinel keys count as W B), so bucket k holds pairs [off0[k], off0[k+1]). The buckets are
 * cut into slices (bucket ranges of at most a set number of pairs: the round buffers are
 * sized for one slice). Per slice: rounds r = 0 .. R-1 of pairwise affine additions, the
 * run offsets of round r from ceil(len / 2^r) by an exclusive sum; then the usual
 * accumulation over the points left (msm_accumulate_kernel with the points as bases and
 * 0, 1, 2, ... as values) and the partials kernel. */

/* off0 (aff_bounds_at): the first sorted position of each bucket key. */
__global__ void msm_aff_bounds_kernel(uint32_t *off0, const uint32_t *__restrict__ keys,
                                      size_t npairs, uint32_t nbk)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e <= npairs)
        aff_bounds_at(off0, keys, npairs, nbk, e);
}

/* info[0] = the largest bucket (zeroed by the caller), info[1 ..] the chunk offsets
 * (aff_chunk_at). */
__global__ void msm_aff_plan_kernel(uint32_t *info, const uint32_t *__restrict__ off0,
                                    uint32_t nbk, uint32_t cb, uint32_t nchunks)
{
    const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t len = k < nbk ? off0[k + 1] - off0[k] : 0;
    const uint32_t mx = __reduce_max_sync(0xffffffffu, len);
    if ((threadIdx.x & 31) == 0 && mx)
        atomicMax(info, mx);
    if (k <= nbk)
        aff_chunk_at(info + 1, off0, nbk, cb, nchunks, k);
}

/* lens[kl] = ceil(len / 2^r) for the slice's buckets k0 + kl, kl < nb; lens[nb] = 0. */
__global__ void msm_aff_lens_kernel(uint32_t *lens, const uint32_t *__restrict__ off0, uint32_t k0,
                                    uint32_t nb, unsigned r)
{
    const size_t kl = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (kl <= nb)
        lens[kl] = kl < nb ? aff_len_at(off0, k0, (uint32_t)kl, r) : 0;
}

/* One round (see gpu_msm_affine.cuh): thread t takes the elements [2Kt, 2Kt + 2K); the
 * block inverts the product of its denominators with one field inversion (product tree in
 * shared memory, the root inverted by thread 0). */
template <bool FIRST>
__global__ void __launch_bounds__(MSM_AFF_THREADS, MSM_AFF_MINB)
msm_aff_round_kernel(g1_aff_t *out, uint32_t *okeys, fp_t *pre, uint2 *meta,
                     const uint32_t *__restrict__ keys, const uint32_t *__restrict__ vals,
                     const g1_aff_t *__restrict__ pts, const uint32_t *__restrict__ off_in,
                     const uint32_t *__restrict__ off_out, uint32_t k0, uint32_t nb, uint32_t K,
                     const fp_t r2)
{
    constexpr unsigned T = MSM_AFF_THREADS;
    __shared__ fp_t nd[2 * T];
    const unsigned tid = threadIdx.x;
    aff_io<FIRST> io;
    io.out = out;
    io.okeys = okeys;
    io.pre = pre;
    io.meta = meta;
    io.keys = keys;
    io.vals = vals;
    io.pts = pts;
    io.off_in = off_in;
    io.off_out = off_out;
    io.k0 = k0;
    io.stride = (size_t)gridDim.x * T;
    io.t = (size_t)blockIdx.x * T + tid;
    const uint32_t count = off_in[nb];
    const uint64_t es = (uint64_t)io.t * 2 * K;
    unsigned np = 0;
    fp_t acc = f_one<FpP>();
    if (es < count)
        acc = aff_round_fwd(io, (uint32_t)es, (uint32_t)(es + 2 * K < count ? es + 2 * K : count),
                            np);
    if (!__syncthreads_or(np != 0))
        return; /* only pass-throughs in this block */
    nd[T + tid] = acc;
    __syncthreads();
    for (unsigned h = T / 2; h; h >>= 1) {
        if (tid < h)
            aff_tree_up(nd, h + tid);
        __syncthreads();
    }
    if (tid == 0)
        nd[1] = fp_inv_var(nd[1], r2);
    __syncthreads();
    for (unsigned h = 1; h < T; h <<= 1) {
        if (tid < h)
            aff_tree_down(nd, h + tid);
        __syncthreads();
    }
    aff_round_bwd(io, nd[T + tid], np);
}

/* Before the final accumulation over a slice's last round: iota[e] = e for e < ub, and the
 * sentinel key past the round's count (ub bounds it). */
__global__ void msm_aff_tail_kernel(uint32_t *keys, uint32_t *iota,
                                    const uint32_t *__restrict__ count, size_t ub,
                                    uint32_t sentinel)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ub)
        return;
    iota[e] = (uint32_t)e;
    if (e >= *count)
        keys[e] = sentinel;
}

/* ---- host side ---- */
/* Per group: the device field and the host types and functions for the final combination. */
struct G1Host {
    typedef fp_t F;
    typedef cuzk_g1_xyzz X;
    typedef cuzk_g1_jac J;
    typedef cuzk_g1_affine A;
    static constexpr int group = 1;
    static void set_inf(X *r) { cuzk_g1_xyzz_set_inf(r); }
    static void dbl(X *r, const X *a) { cuzk_g1_xyzz_dbl_var(r, a); }
    static void add(X *r, const X *a, const X *b) { cuzk_g1_xyzz_add_var(r, a, b); }
    static void to_jac(J *r, const X *a) { cuzk_g1_xyzz_to_jac(r, a); }
    static void jac_inf(J *r) { cuzk_g1_jac_set_inf(r); }
};
struct G2Host {
    typedef fp2_t F;
    typedef cuzk_g2_xyzz X;
    typedef cuzk_g2_jac J;
    typedef cuzk_g2_affine A;
    static constexpr int group = 2;
    static void set_inf(X *r) { cuzk_g2_xyzz_set_inf(r); }
    static void dbl(X *r, const X *a) { cuzk_g2_xyzz_dbl_var(r, a); }
    static void add(X *r, const X *a, const X *b) { cuzk_g2_xyzz_add_var(r, a, b); }
    static void to_jac(J *r, const X *a) { cuzk_g2_xyzz_to_jac(r, a); }
    static void jac_inf(J *r) { cuzk_g2_jac_set_inf(r); }
};

extern "C" unsigned cuzk_gpu_msm_window(size_t n)
{
    if (n == 0)
        return 0;
    /* cost in mixed additions: n W (accumulate; plus 15% per 8-bit sort pass) and about
     * 2.5 per bucket for the running sums */
    double best = 0;
    unsigned bc = 1;
    for (unsigned c = 1; c <= CUZK_GPU_MSM_WINDOW_MAX; c++) {
        unsigned W = (256 + c - 1) / c;
        double nb = (double)W * (double)(1u << (c - 1));
        unsigned keybits = 1;
        while ((double)(1ULL << keybits) <= nb)
            keybits++;
        double cost = (double)n * W * (1.0 + 0.15 * ((keybits + 7) / 8)) + 2.5 * nb;
        if (c == 1 || cost < best) {
            best = cost;
            bc = c;
        }
    }
    return bc;
}

extern "C" void cuzk_gpu_msm_free(cuzk_gpu_msm *m)
{
    if (!m)
        return;
    (void)cudaSetDevice(m->device);
    void *ptrs[] = {m->bases,   m->scal,     m->keys[0], m->keys[1], m->vals[0], m->vals[1],
                    m->sort_tmp, m->buckets, m->partials, m->pkeys,  m->segs,    m->red,
                    m->winres,  m->bits,     m->sbits,   m->wcnt,    m->woff,    m->idx,
                    m->scan_tmp, m->flag,
                    m->aff_off0, m->aff_info, m->aff_pts[0], m->aff_pts[1], m->aff_keys[0],
                    m->aff_keys[1], m->aff_pre, m->aff_meta, m->aff_off[0], m->aff_off[1],
                    m->aff_lens, m->aff_iota, m->aff_scan_tmp};
    if (m->streamed) {
        ptrs[0] = m->stage[0]; /* m->bases is one of the stages */
        if (m->cstream)
            (void)cudaStreamSynchronize(m->cstream);
        if (m->stage[1])
            (void)cudaFree(m->stage[1]);
        for (int i = 0; i < 2; i++) {
            if (m->copied[i])
                (void)cudaEventDestroy(m->copied[i]);
            if (m->used[i])
                (void)cudaEventDestroy(m->used[i]);
        }
        if (m->cstream)
            (void)cudaStreamDestroy(m->cstream);
        if (m->registered)
            (void)cudaHostUnregister((void *)m->hbases);
    }
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (ptrs[i])
            (void)cudaFree(ptrs[i]);
    free(m->aff_slices);
    if (m->stream)
        (void)cudaStreamDestroy(m->stream);
    free(m);
}

/* Grows a device buffer to hold at least need elements of elem bytes (contents are not
 * kept); *cap counts elements. */
template <class T> static cuzk_err msm_grow(T **p, size_t *cap, size_t need, size_t elem)
{
    if (*cap >= need && *p)
        return CUZK_OK;
    if (*p)
        GPU_CHECK(cudaFree(*p));
    *p = NULL;
    *cap = 0;
    GPU_CHECK(cudaMalloc((void **)p, need * elem ? need * elem : elem));
    *cap = need;
    return CUZK_OK;
}

/* CUZK_GPU_MSM_ACC=xyzz|affine|affine_full: a new context's accumulation (xyzz if unset or
 * unknown). */
static int msm_acc_mode_env(void)
{
    const char *e = getenv("CUZK_GPU_MSM_ACC");
    if (e && strcmp(e, "affine") == 0)
        return CUZK_GPU_MSM_ACC_AFFINE;
    if (e && strcmp(e, "affine_full") == 0)
        return CUZK_GPU_MSM_ACC_AFFINE_FULL;
    return CUZK_GPU_MSM_ACC_XYZZ;
}

static void msm_pin_host(cuzk_gpu_msm *m);

static cuzk_err msm_init(cuzk_gpu_msm *m, const void *bases)
{
    const size_t aff_bytes = m->aff_bytes;
    GPU_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, m->device));
    m->sm_count = prop.multiProcessorCount;
    /* resident: all n_max bases and scalars; streamed: two stages of a chunk each, and the
     * scalars of one chunk (every call on the device then covers at most a chunk) */
    const size_t span = m->streamed ? std::min(m->chunk, m->n_max) : m->n_max;
    const size_t nb = span ? span : 1;
    if (m->streamed) {
        for (int i = 0; i < 2; i++) {
            GPU_CHECK(cudaMalloc(&m->stage[i], nb * aff_bytes));
            GPU_CHECK(cudaEventCreateWithFlags(&m->copied[i], cudaEventDisableTiming));
            GPU_CHECK(cudaEventCreateWithFlags(&m->used[i], cudaEventDisableTiming));
        }
        GPU_CHECK(cudaStreamCreateWithFlags(&m->cstream, cudaStreamNonBlocking));
        m->bases = m->stage[0];
        msm_pin_host(m);
    } else {
        GPU_CHECK(cudaMalloc(&m->bases, nb * aff_bytes));
        if (m->n_max)
            GPU_CHECK(cudaMemcpy(m->bases, bases, m->n_max * aff_bytes, cudaMemcpyHostToDevice));
    }
    GPU_CHECK(cudaMalloc(&m->scal, nb * sizeof(fr_t)));
    GPU_CHECK(cudaMalloc(&m->winres, 256 * sizeof(g2_xyzz_t)));
    GPU_CHECK(cudaMalloc(&m->red, MSM_RED1_BLOCKS * sizeof(g2_xyzz_t)));
    GPU_CHECK(cudaMalloc(&m->flag, sizeof(int)));
    return CUZK_OK;
}

/* Streamed bases: page-locks the caller's array in place so that the chunk copies run
 * asynchronously beside the work (read-only registration first, as the array may be a
 * read-only mapping of a file). When it cannot (or another context already did, e.g. the
 * same key on a second device), the copies still work, from pageable memory. */
static void msm_pin_host(cuzk_gpu_msm *m)
{
    if (!m->n_max)
        return;
    void *p = (void *)m->hbases;
    const size_t bytes = m->n_max * m->aff_bytes;
    cudaError_t ce = cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterReadOnly);
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        ce = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
    }
    m->registered = ce == cudaSuccess;
    if (!m->registered)
        (void)cudaGetLastError(); /* not sticky: clear it */
}

static cuzk_err msm_new(cuzk_gpu_msm **out, int device, const void *bases, size_t n_max,
                        int group, size_t aff_bytes, size_t chunk, const char *fn)
{
    if (!out)
        return cuzk_error_set(CUZK_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (n_max && !bases)
        return cuzk_error_set(CUZK_EINVAL, "%s: bases is NULL", fn);
    if (n_max >= MSM_SIGN)
        return cuzk_error_set(CUZK_EINVAL, "%s: %zu bases (at most 2^31 - 1)", fn, n_max);
    GPU_TRY(gpu_use_device(device));
    cuzk_gpu_msm *m = (cuzk_gpu_msm *)calloc(1, sizeof *m);
    if (!m)
        return cuzk_error_set(CUZK_ENOMEM, "%s", fn);
    m->device = device;
    m->group = group;
    m->n_max = n_max;
    m->acc_mode = msm_acc_mode_env();
    m->aff_bytes = aff_bytes;
    if (chunk) {
        m->streamed = 1;
        m->chunk = (chunk + 63) / 64 * 64;
        m->hbases = (const unsigned char *)bases;
    }
    cuzk_err err = msm_init(m, bases);
    if (err != CUZK_OK) {
        cuzk_gpu_msm_free(m);
        return err;
    }
    *out = m;
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_msm_new(cuzk_gpu_msm **out, int device, const cuzk_g1_affine *bases,
                                     size_t n_max)
{
    static_assert(sizeof(cuzk_g1_affine) == sizeof(g1_aff_t), "affine layout");
    static_assert(sizeof(cuzk_g1_xyzz) == sizeof(g1_xyzz_t), "xyzz layout");
    return msm_new(out, device, bases, n_max, 1, sizeof(g1_aff_t), 0, "cuzk_gpu_msm_new");
}

/* CUZK_GPU_MSM_CHUNK (bases a stage) or 2^22. */
static size_t msm_chunk_default(void)
{
    const char *e = getenv("CUZK_GPU_MSM_CHUNK");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (*end == '\0' && v > 0 && v < MSM_SIGN)
            return (size_t)v;
    }
    return (size_t)1 << 22;
}

extern "C" cuzk_err cuzk_gpu_msm_new_streamed(cuzk_gpu_msm **out, int device, int group,
                                              const void *bases, size_t n_max, size_t chunk)
{
    if (group != 1 && group != 2) {
        if (out)
            *out = NULL;
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_new_streamed: group %d (1 or 2)",
                              group);
    }
    return msm_new(out, device, bases, n_max, group, group == 1 ? sizeof(g1_aff_t)
                                                                : sizeof(g2_aff_t),
                   chunk ? chunk : msm_chunk_default(), "cuzk_gpu_msm_new_streamed");
}

extern "C" bool cuzk_gpu_msm_streamed(const cuzk_gpu_msm *m)
{
    return m && m->streamed;
}

extern "C" size_t cuzk_gpu_msm_bytes(int group, size_t n)
{
    return n * ((group == 2 ? sizeof(g2_aff_t) : sizeof(g1_aff_t)) + sizeof(fr_t));
}

extern "C" cuzk_err cuzk_gpu_msm_new_g2(cuzk_gpu_msm **out, int device,
                                        const cuzk_g2_affine *bases, size_t n_max)
{
    static_assert(sizeof(cuzk_g2_affine) == sizeof(g2_aff_t), "G2 affine layout");
    static_assert(sizeof(cuzk_g2_xyzz) == sizeof(g2_xyzz_t), "G2 xyzz layout");
    static_assert(sizeof(cuzk_fp2) == sizeof(fp2_t), "Fp2 layout");
    return msm_new(out, device, bases, n_max, 2, sizeof(g2_aff_t), 0, "cuzk_gpu_msm_new_g2");
}

/* sum of in[0..cnt) into out (device), two levels when cnt is large; uses m->red. */
template <class F>
static cuzk_err msm_reduce_all(cuzk_gpu_msm *m, xyzz_t<F> *out, const xyzz_t<F> *in, size_t cnt)
{
    constexpr unsigned T = red_threads<F>::T;
    cudaStream_t st = m->stream;
    if (cnt > 8 * (size_t)T) {
        size_t per = (cnt + MSM_RED1_BLOCKS - 1) / MSM_RED1_BLOCKS;
        if (per < 2 * (size_t)T)
            per = 2 * (size_t)T;
        const size_t blocks = (cnt + per - 1) / per;
        xyzz_t<F> *red = reinterpret_cast<xyzz_t<F> *>(m->red);
        msm_reduce_kernel<F><<<(unsigned)blocks, T, 0, st>>>(red, in, per, cnt);
        GPU_CHECK_LAUNCH(msm_reduce_kernel);
        in = red;
        cnt = blocks;
    }
    msm_reduce_kernel<F><<<1, T, 0, st>>>(out, in, cnt, cnt);
    GPU_CHECK_LAUNCH(msm_reduce_kernel);
    return CUZK_OK;
}

/* Launches msm_accumulate_kernel. G1 picks its blocks-per-SM bound from
 * CUZK_GPU_MSM_ACC_MINB (1, 3 or 4; default 3); G2 always uses 1 (its points need all the
 * registers), so only G1 has the three instantiations. */
static int msm_acc_minb_g1(void)
{
    static int v = -1;
    if (__atomic_load_n(&v, __ATOMIC_RELAXED) < 0) {
        const char *e = getenv("CUZK_GPU_MSM_ACC_MINB");
        int x = e ? atoi(e) : 3;
        if (x != 1 && x != 4)
            x = 3;
        __atomic_store_n(&v, x, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(&v, __ATOMIC_RELAXED);
}

#define MSM_ACC_ARGS                                                                      \
    xyzz_t<F> *buckets, xyzz_t<F> *partials, uint32_t *pkeys, const uint32_t *keys,       \
        const uint32_t *vals, const aff_t<F> *bases, size_t npairs, size_t L, size_t nseg, \
        uint32_t sentinel
#define MSM_ACC_PASS buckets, partials, pkeys, keys, vals, bases, npairs, L, nseg, sentinel
template <class F> struct msm_acc {
    static void launch(unsigned blocks, cudaStream_t st, MSM_ACC_ARGS)
    {
        msm_accumulate_kernel<F, 1><<<blocks, MSM_ACC_THREADS, 0, st>>>(MSM_ACC_PASS);
    }
};
template <> struct msm_acc<fp_t> {
    typedef fp_t F;
    static void launch(unsigned blocks, cudaStream_t st, MSM_ACC_ARGS)
    {
        switch (msm_acc_minb_g1()) {
        case 1:
            msm_accumulate_kernel<F, 1><<<blocks, MSM_ACC_THREADS, 0, st>>>(MSM_ACC_PASS);
            break;
        case 4:
            msm_accumulate_kernel<F, 4><<<blocks, MSM_ACC_THREADS, 0, st>>>(MSM_ACC_PASS);
            break;
        default:
            msm_accumulate_kernel<F, 3><<<blocks, MSM_ACC_THREADS, 0, st>>>(MSM_ACC_PASS);
        }
    }
};
#undef MSM_ACC_ARGS
#undef MSM_ACC_PASS

/* ---- batch-affine accumulation: plan and run (G1) ---- */
/* Tuning aids, read once: CUZK_GPU_MSM_AFF_SLICE = pairs per slice (default 2^26, clamped to
 * 2^16 .. 2^30; the round buffers take about 100 bytes a pair of the largest slice, kept by
 * the context); CUZK_GPU_MSM_AFF_STOP = the rounds go on while a slice's buckets hold at
 * least this many points on average (default 2, at least 1). */
static size_t msm_aff_env(const char *name, size_t def, size_t lo, size_t hi)
{
    const char *e = getenv(name);
    const size_t v = e ? (size_t)strtoull(e, NULL, 0) : def;
    return v < lo ? lo : v > hi ? hi : v;
}
static size_t msm_aff_slice_cap(void)
{
    static size_t v = 0;
    if (!__atomic_load_n(&v, __ATOMIC_RELAXED))
        __atomic_store_n(&v, msm_aff_env("CUZK_GPU_MSM_AFF_SLICE", (size_t)1 << 26, (size_t)1 << 16,
                                         (size_t)1 << 30),
                         __ATOMIC_RELAXED);
    return __atomic_load_n(&v, __ATOMIC_RELAXED);
}
static size_t msm_aff_stop(void)
{
    static size_t v = 0;
    if (!__atomic_load_n(&v, __ATOMIC_RELAXED))
        __atomic_store_n(&v, msm_aff_env("CUZK_GPU_MSM_AFF_STOP", 2, 1, (size_t)1 << 30),
                         __ATOMIC_RELAXED);
    return __atomic_load_n(&v, __ATOMIC_RELAXED);
}

/* msm_aff_geometry for this device: enough threads for WAVES rounds of resident blocks. */
static void msm_aff_geom(const cuzk_gpu_msm *m, size_t ub, uint32_t *K, size_t *blocks)
{
    msm_aff_geometry((size_t)m->sm_count * MSM_AFF_MINB * MSM_AFF_WAVES * MSM_AFF_THREADS,
                     MSM_AFF_THREADS, MSM_AFF_KMIN, MSM_AFF_KMAX, ub, K, blocks);
}

/* msm_grow for the affine buffers: a failed allocation clears the CUDA error and returns
 * false (the MSM then accumulates with XYZZ). */
template <class T> static bool msm_aff_grow(T **p, size_t *cap, size_t need)
{
    if (*cap >= need && *p)
        return true;
    if (*p)
        (void)cudaFree(*p);
    *p = NULL;
    *cap = 0;
    if (cudaMalloc((void **)p, (need ? need : 1) * sizeof(T)) != cudaSuccess) {
        (void)cudaGetLastError();
        *p = NULL;
        return false;
    }
    *cap = need;
    return true;
}

/* Frees the affine round buffers (those that grow with the slice). */
static void msm_aff_release(cuzk_gpu_msm *m)
{
    void *ptrs[] = {m->aff_pts[0], m->aff_pts[1], m->aff_keys[0], m->aff_keys[1],
                    m->aff_pre,    m->aff_meta,   m->aff_iota};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (ptrs[i])
            (void)cudaFree(ptrs[i]);
    m->aff_pts[0] = m->aff_pts[1] = NULL;
    m->aff_keys[0] = m->aff_keys[1] = NULL;
    m->aff_pre = NULL;
    m->aff_meta = NULL;
    m->aff_iota = NULL;
    m->aff_pts_cap[0] = m->aff_pts_cap[1] = m->aff_keys_cap[0] = m->aff_keys_cap[1] = 0;
    m->aff_pre_cap = m->aff_meta_cap = m->aff_iota_cap = 0;
}

/* Plans the affine accumulation of the sorted pairs (keys of W windows of B buckets): off0
 * and the bucket chunk offsets on the device, one synchronisation to read the chunk offsets
 * and the largest bucket, slices of whole chunks up to msm_aff_slice_cap() pairs, the rounds
 * of each (AFFINE: while the average bucket holds msm_aff_stop() points or more; AFFINE_FULL:
 * until the largest holds one), the buffers grown. *use = false (accumulate with XYZZ) when
 * no slice needs a round, when the pairs do not fit 32-bit offsets, or when device memory is
 * short (then the round buffers are freed). */
static cuzk_err msm_aff_plan(cuzk_gpu_msm *m, size_t *nslices, bool *use, const uint32_t *skeys,
                             size_t npairs, unsigned W, uint32_t B)
{
    *use = false;
    *nslices = 0;
    const uint64_t nbk = (uint64_t)W * B;
    if (npairs >= 0xffffffffu || nbk >= 0xffffffffu)
        return CUZK_OK;
    cudaStream_t st = m->stream;
    const uint32_t cb = B / MSM_AFF_CHUNKS ? B / MSM_AFF_CHUNKS : 1;
    const uint32_t nchunks = (uint32_t)((nbk + cb - 1) / cb);
    if (!msm_aff_grow(&m->aff_off0, &m->aff_off0_cap, (size_t)nbk + 1) ||
        !msm_aff_grow(&m->aff_info, &m->aff_info_cap, (size_t)nchunks + 2))
        return CUZK_OK;
    if (m->aff_slices_cap < nchunks) {
        msm_aff_slice *p = (msm_aff_slice *)realloc(m->aff_slices, nchunks * sizeof *p);
        if (!p)
            return cuzk_error_set(CUZK_ENOMEM, "gpu msm: %u slices", nchunks);
        m->aff_slices = p;
        m->aff_slices_cap = nchunks;
    }
    uint32_t *info = (uint32_t *)malloc(((size_t)nchunks + 2) * sizeof *info);
    if (!info)
        return cuzk_error_set(CUZK_ENOMEM, "gpu msm: %u chunks", nchunks);
    cudaError_t ce = cudaSuccess;
    msm_aff_bounds_kernel<<<gpu_blocks(npairs + 1, 256), 256, 0, st>>>(m->aff_off0, skeys, npairs,
                                                                        (uint32_t)nbk);
    ce = cudaGetLastError();
    if (ce == cudaSuccess)
        ce = cudaMemsetAsync(m->aff_info, 0, sizeof(uint32_t), st);
    if (ce == cudaSuccess) {
        msm_aff_plan_kernel<<<gpu_blocks((size_t)nbk + 1, 256), 256, 0, st>>>(
            m->aff_info, m->aff_off0, (uint32_t)nbk, cb, nchunks);
        ce = cudaGetLastError();
    }
    if (ce == cudaSuccess)
        ce = cudaMemcpyAsync(info, m->aff_info, ((size_t)nchunks + 2) * sizeof *info,
                             cudaMemcpyDeviceToHost, st);
    if (ce == cudaSuccess)
        ce = cudaStreamSynchronize(st);
    if (ce != cudaSuccess) {
        free(info);
        return gpu_fail(ce, "msm_aff_plan", __FILE__, __LINE__);
    }
    const size_t ns = msm_aff_cut(m->aff_slices, info + 1, nchunks, cb, nbk, msm_aff_slice_cap());
    size_t need_pts[2] = {0, 0}, need_pre = 0, need_off = 0, need_iota = 0, need_tmp = 0;
    for (size_t i = 0; i < ns; i++) {
        msm_aff_slice &s = m->aff_slices[i];
        const unsigned R = msm_aff_rounds(s, info[0], m->acc_mode == CUZK_GPU_MSM_ACC_AFFINE_FULL,
                                          msm_aff_stop());
        s.rounds = R;
        if (!R)
            continue;
        *use = true;
        for (unsigned r = 1; r <= R && r <= 2; r++)
            need_pts[r - 1] = std::max(need_pts[r - 1], msm_aff_ub(s, r));
        for (unsigned r = 0; r < R; r++) {
            uint32_t K;
            size_t blocks;
            msm_aff_geom(m, msm_aff_ub(s, r), &K, &blocks);
            need_pre = std::max(need_pre, (size_t)K * blocks * MSM_AFF_THREADS);
        }
        need_iota = std::max(need_iota, msm_aff_ub(s, R));
        need_off = std::max(need_off, (size_t)s.nb + 1);
        size_t bytes = 0;
        ce = cub::DeviceScan::ExclusiveSum(NULL, bytes, m->aff_lens, m->aff_off[0],
                                           (int64_t)s.nb + 1, st);
        if (ce != cudaSuccess) {
            free(info);
            return gpu_fail(ce, "cub::DeviceScan::ExclusiveSum", __FILE__, __LINE__);
        }
        need_tmp = std::max(need_tmp, bytes);
    }
    free(info);
    *nslices = ns;
    if (!*use)
        return CUZK_OK;
    *use = msm_aff_grow(&m->aff_pts[0], &m->aff_pts_cap[0], need_pts[0]) &&
           msm_aff_grow(&m->aff_keys[0], &m->aff_keys_cap[0], need_pts[0]) &&
           msm_aff_grow(&m->aff_pts[1], &m->aff_pts_cap[1], need_pts[1]) &&
           msm_aff_grow(&m->aff_keys[1], &m->aff_keys_cap[1], need_pts[1]) &&
           msm_aff_grow(&m->aff_pre, &m->aff_pre_cap, need_pre) &&
           msm_aff_grow(&m->aff_meta, &m->aff_meta_cap, need_pre) &&
           msm_aff_grow(&m->aff_off[0], &m->aff_off_cap[0], need_off) &&
           msm_aff_grow(&m->aff_off[1], &m->aff_off_cap[1], need_off) &&
           msm_aff_grow(&m->aff_lens, &m->aff_lens_cap, need_off) &&
           msm_aff_grow(&m->aff_iota, &m->aff_iota_cap, need_iota) &&
           msm_aff_grow(&m->aff_scan_tmp, &m->aff_scan_tmp_cap, need_tmp);
    if (!*use) /* give back what was grown: XYZZ needs none of it */
        msm_aff_release(m);
    return CUZK_OK;
}

/* off = the run offsets of round r of slice s (exclusive sum of ceil(len / 2^r)). */
static cuzk_err msm_aff_offsets(cuzk_gpu_msm *m, uint32_t *off, const msm_aff_slice &s, unsigned r)
{
    msm_aff_lens_kernel<<<gpu_blocks((size_t)s.nb + 1, 256), 256, 0, m->stream>>>(
        m->aff_lens, m->aff_off0, s.k0, s.nb, r);
    GPU_CHECK_LAUNCH(msm_aff_lens_kernel);
    size_t bytes = m->aff_scan_tmp_cap;
    GPU_CHECK(cub::DeviceScan::ExclusiveSum(m->aff_scan_tmp, bytes, m->aff_lens, off,
                                            (int64_t)s.nb + 1, m->stream));
    return CUZK_OK;
}

/* Runs the plan: per slice its rounds, then msm_accumulate_kernel over what is left (the
 * points as bases, aff_iota as values, the sentinel past the count) and the partials kernel,
 * into the buckets. prof: a line with the rounds' and the final passes' device times. */
static cuzk_err msm_aff_run(cuzk_gpu_msm *m, size_t nslices, g1_xyzz_t *buckets,
                            g1_xyzz_t *partials, const uint32_t *skeys, const uint32_t *svals,
                            uint32_t sentinel, bool prof)
{
    cudaStream_t st = m->stream;
    fp_t r2;
    msm_aff_r2(&r2);
    const g1_aff_t *bases = reinterpret_cast<const g1_aff_t *>(m->bases);
    const size_t target = (size_t)m->sm_count * 512; /* as msm_pippenger's XYZZ pass */
    cudaEvent_t ev[3];
    float t_rounds = 0, t_final = 0;
    unsigned rmax = 0;
    if (prof)
        for (int i = 0; i < 3; i++)
            GPU_CHECK(cudaEventCreate(&ev[i]));
    for (size_t si = 0; si < nslices; si++) {
        const msm_aff_slice &s = m->aff_slices[si];
        const unsigned R = s.rounds;
        rmax = R > rmax ? R : rmax;
        if (prof)
            GPU_CHECK(cudaEventRecord(ev[0], st));
        const uint32_t *fk = skeys + s.s0, *fv = svals + s.s0;
        const g1_aff_t *fb = bases;
        size_t cnt = s.n;
        if (R) {
            uint32_t *off_cur = m->aff_off[0], *off_nxt = m->aff_off[1];
            GPU_TRY(msm_aff_offsets(m, off_cur, s, 0));
            for (unsigned r = 0; r < R; r++) {
                GPU_TRY(msm_aff_offsets(m, off_nxt, s, r + 1));
                uint32_t K;
                size_t blocks;
                msm_aff_geom(m, msm_aff_ub(s, r), &K, &blocks);
                const int b = r & 1;
                if (r == 0)
                    msm_aff_round_kernel<true><<<(unsigned)blocks, MSM_AFF_THREADS, 0, st>>>(
                        m->aff_pts[0], m->aff_keys[0], m->aff_pre, m->aff_meta, skeys + s.s0,
                        svals + s.s0, bases, off_cur, off_nxt, s.k0, s.nb, K, r2);
                else
                    msm_aff_round_kernel<false><<<(unsigned)blocks, MSM_AFF_THREADS, 0, st>>>(
                        m->aff_pts[b], m->aff_keys[b], m->aff_pre, m->aff_meta, m->aff_keys[b ^ 1],
                        NULL, m->aff_pts[b ^ 1], off_cur, off_nxt, s.k0, s.nb, K, r2);
                GPU_CHECK_LAUNCH(msm_aff_round_kernel);
                std::swap(off_cur, off_nxt);
            }
            const int b = (R - 1) & 1;
            cnt = msm_aff_ub(s, R);
            msm_aff_tail_kernel<<<gpu_blocks(cnt, 256), 256, 0, st>>>(m->aff_keys[b], m->aff_iota,
                                                                    off_cur + s.nb, cnt, sentinel);
            GPU_CHECK_LAUNCH(msm_aff_tail_kernel);
            fk = m->aff_keys[b];
            fv = m->aff_iota;
            fb = m->aff_pts[b];
        }
        if (prof)
            GPU_CHECK(cudaEventRecord(ev[1], st));
        size_t L = (cnt + target - 1) / target;
        if (L < 8)
            L = 8;
        const size_t nseg = (cnt + L - 1) / L;
        msm_acc<fp_t>::launch(gpu_blocks(nseg, MSM_ACC_THREADS), st, buckets, partials, m->pkeys,
                              fk, fv, fb, cnt, L, nseg, sentinel);
        GPU_CHECK_LAUNCH(msm_accumulate_kernel);
        msm_partials_kernel<fp_t><<<gpu_blocks(2 * nseg, 128), 128, 0, st>>>(
            buckets, partials, m->pkeys, 2 * nseg, sentinel);
        GPU_CHECK_LAUNCH(msm_partials_kernel);
        if (prof) {
            float a = 0, b = 0;
            GPU_CHECK(cudaEventRecord(ev[2], st));
            GPU_CHECK(cudaEventSynchronize(ev[2]));
            GPU_CHECK(cudaEventElapsedTime(&a, ev[0], ev[1]));
            GPU_CHECK(cudaEventElapsedTime(&b, ev[1], ev[2]));
            t_rounds += a;
            t_final += b;
        }
    }
    if (prof) {
        fprintf(stderr, "gpu msm g1 affine: %zu slices (at most %zu pairs), up to %u rounds: "
                        "rounds %.3f, xyzz_finish %.3f ms\n",
                nslices, msm_aff_slice_cap(), rmax, t_rounds, t_final);
        for (int i = 0; i < 3; i++)
            (void)cudaEventDestroy(ev[i]);
    }
    return CUZK_OK;
}

/* Pippenger over nt terms whose pairs the digit pass builds from the scalars already on the
 * device in m->scal (idx: device index list or NULL, see msm_digits_kernel); *res gets
 * sum_w 2^(c w) R_w. The scalar copy is done by the caller (recorded in the profile as
 * "upload" when ev_upload is set). */
template <class H>
static cuzk_err msm_pippenger(cuzk_gpu_msm *m, typename H::X *res, size_t nt, const uint32_t *idx,
                              unsigned window, int mont, int gathered, cudaEvent_t *ev0,
                              const void *dscal = NULL)
{
    typedef typename H::F F;
    H::set_inf(res);
    if (nt == 0)
        return CUZK_OK;
    const unsigned c = window ? window : cuzk_gpu_msm_window(nt);
    const unsigned W = (256 + c - 1) / c;
    const uint32_t B = 1u << (c - 1);
    const uint32_t sentinel = W * B;
    int keybits = 1;
    while ((1ULL << keybits) <= (unsigned long long)sentinel)
        keybits++;
    const size_t npairs = (size_t)W * nt;
    cudaStream_t st = m->stream;
    /* CUZK_GPU_MSM_PROFILE=1: per-stage device times on stderr (tuning aid) */
    static const char *const stage_xyzz[] = {"upload", "digits", "sort", "accumulate", "partials",
                                             "bucket_sums", "window_reduce"};
    static const char *const stage_aff[] = {"upload", "digits", "sort", "affine_plan",
                                            "affine_rounds", "bucket_sums", "window_reduce"};
    const bool prof = ev0 != NULL;
    cudaEvent_t ev[8];
    int nev = 0;
    if (prof)
        ev[nev++] = *ev0;
#define MSM_MARK()                                                   \
    do {                                                             \
        if (prof && nev < 8) {                                       \
            GPU_CHECK(cudaEventCreate(&ev[nev]));                    \
            GPU_CHECK(cudaEventRecord(ev[nev], st));                 \
            nev++;                                                   \
        }                                                            \
    } while (0)
    GPU_CHECK(cudaMemsetAsync(m->flag, 0, sizeof(int), st));
    if (m->pairs_cap < npairs) {
        for (int b = 0; b < 2; b++) {
            size_t cap = 0;
            GPU_TRY(msm_grow(&m->keys[b], &cap, npairs, sizeof(uint32_t)));
            cap = 0;
            GPU_TRY(msm_grow(&m->vals[b], &cap, npairs, sizeof(uint32_t)));
        }
        m->pairs_cap = npairs;
    }

    MSM_MARK();
    const uint32_t *scal = dscal ? (const uint32_t *)dscal : m->scal;
    msm_digits_kernel<<<gpu_blocks(nt, 256), 256, 0, st>>>(m->keys[0], m->vals[0], scal, idx,
                                                            nt, c, W, mont, gathered, m->flag);
    GPU_CHECK_LAUNCH(msm_digits_kernel);

    MSM_MARK();
    cub::DoubleBuffer<uint32_t> dk(m->keys[0], m->keys[1]), dv(m->vals[0], m->vals[1]);
    size_t tmp_bytes = 0;
    GPU_CHECK(cub::DeviceRadixSort::SortPairs(NULL, tmp_bytes, dk, dv, (int64_t)npairs, 0,
                                              keybits, st));
    GPU_TRY(msm_grow((unsigned char **)&m->sort_tmp, &m->sort_tmp_cap, tmp_bytes, 1));
    GPU_CHECK(cub::DeviceRadixSort::SortPairs(m->sort_tmp, tmp_bytes, dk, dv, (int64_t)npairs, 0,
                                              keybits, st));
    const uint32_t *skeys = dk.Current(), *svals = dv.Current();

    MSM_MARK();
    const size_t nbuckets = (size_t)W * B;
    GPU_TRY(msm_grow((unsigned char **)&m->buckets, &m->buckets_cap, nbuckets * sizeof(xyzz_t<F>),
                     1));
    xyzz_t<F> *buckets = reinterpret_cast<xyzz_t<F> *>(m->buckets);
    GPU_CHECK(cudaMemsetAsync(buckets, 0, nbuckets * sizeof(xyzz_t<F>), st));

    size_t target = (size_t)m->sm_count * 512;
    size_t L = (npairs + target - 1) / target;
    if (L < 8)
        L = 8;
    const size_t nseg = (npairs + L - 1) / L;
    const size_t pbytes = 2 * nseg * sizeof(xyzz_t<F>);
    if (m->partials_cap < pbytes) {
        size_t cap = 0;
        GPU_TRY(msm_grow((unsigned char **)&m->partials, &cap, pbytes, 1));
        cap = 0;
        GPU_TRY(msm_grow(&m->pkeys, &cap, 2 * nseg, sizeof(uint32_t)));
        m->partials_cap = pbytes;
    }
    xyzz_t<F> *partials = reinterpret_cast<xyzz_t<F> *>(m->partials);
    const aff_t<F> *bases = reinterpret_cast<const aff_t<F> *>(m->bases);
    /* G1 with the batch-affine accumulation: the plan (stage "accumulate" when it falls back
     * to XYZZ), then rounds and final passes per slice (stages affine_plan, affine_rounds) */
    m->acc_used = CUZK_GPU_MSM_ACC_XYZZ;
    bool aff = false;
    size_t nslices = 0;
    if constexpr (H::group == 1)
        if (m->acc_mode != CUZK_GPU_MSM_ACC_XYZZ)
            GPU_TRY(msm_aff_plan(m, &nslices, &aff, skeys, npairs, W, B));
    if (aff) {
        MSM_MARK();
        if constexpr (H::group == 1)
            GPU_TRY(msm_aff_run(m, nslices, buckets, partials, skeys, svals, sentinel, prof));
        m->acc_used = CUZK_GPU_MSM_ACC_AFFINE;
    } else {
        msm_acc<F>::launch(gpu_blocks(nseg, MSM_ACC_THREADS), st, buckets, partials, m->pkeys,
                           skeys, svals, bases, npairs, L, nseg, sentinel);
        GPU_CHECK_LAUNCH(msm_accumulate_kernel);
        MSM_MARK();
        msm_partials_kernel<F><<<gpu_blocks(2 * nseg, 128), 128, 0, st>>>(
            buckets, partials, m->pkeys, 2 * nseg, sentinel);
        GPU_CHECK_LAUNCH(msm_partials_kernel);
    }

    MSM_MARK();
    /* segments per window: about 2^15 threads in all, at most B */
    uint32_t S = 1;
    while ((size_t)W * S * 2 <= 32768 && S * 2 <= B)
        S *= 2;
    const uint32_t M = B / S;
    GPU_TRY(msm_grow((unsigned char **)&m->segs, &m->segs_cap, (size_t)W * S * sizeof(xyzz_t<F>),
                     1));
    xyzz_t<F> *segs = reinterpret_cast<xyzz_t<F> *>(m->segs);
    msm_bucket_sum_kernel<F><<<gpu_blocks((size_t)W * S, 64), 64, 0, st>>>(segs, buckets, W, B, S,
                                                                           M);
    GPU_CHECK_LAUNCH(msm_bucket_sum_kernel);
    MSM_MARK();
    xyzz_t<F> *winres = reinterpret_cast<xyzz_t<F> *>(m->winres);
    msm_reduce_kernel<F><<<W, red_threads<F>::T, 0, st>>>(winres, segs, S, (size_t)W * S);
    GPU_CHECK_LAUNCH(msm_reduce_kernel);
    MSM_MARK();
#undef MSM_MARK

    typename H::X win[256];
    int flag = 0;
    GPU_CHECK(cudaMemcpyAsync(win, winres, W * sizeof(xyzz_t<F>), cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaMemcpyAsync(&flag, m->flag, sizeof flag, cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaStreamSynchronize(st));
    if (prof) {
        fprintf(stderr, "gpu msm g%d n=%zu c=%u W=%u:", H::group, nt, c, W);
        for (int i = 0; i + 1 < nev; i++) {
            float ms = 0;
            GPU_CHECK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            fprintf(stderr, " %s %.3f", (aff ? stage_aff : stage_xyzz)[i], ms);
        }
        fprintf(stderr, " ms\n");
        for (int i = 1; i < nev; i++) /* ev[0] belongs to the caller */
            (void)cudaEventDestroy(ev[i]);
    }
    if (flag)
        return cuzk_error_set(CUZK_EINVAL, "gpu msm: a canonical scalar is >= 2^255");
    /* R = sum_w 2^(c w) R_w (Horner) */
    typename H::X acc = win[W - 1];
    for (int w = (int)W - 2; w >= 0; w--) {
        for (unsigned i = 0; i < c; i++)
            H::dbl(&acc, &acc);
        H::add(&acc, &acc, &win[w]);
    }
    *res = acc;
    return CUZK_OK;
}

/* Copies ns scalars to m->scal (unless they are already on the device); with profiling,
 * *ev0 is an event recorded before the copy. */
static cuzk_err msm_upload(cuzk_gpu_msm *m, const void *scalars, size_t ns, bool on_device,
                           cudaEvent_t *ev0, bool *prof)
{
    *prof = getenv("CUZK_GPU_MSM_PROFILE") != NULL;
    if (*prof) {
        GPU_CHECK(cudaEventCreate(ev0));
        GPU_CHECK(cudaEventRecord(*ev0, m->stream));
    }
    if (ns && !on_device)
        GPU_CHECK(cudaMemcpyAsync(m->scal, scalars, ns * sizeof(fr_t), cudaMemcpyHostToDevice,
                                  m->stream));
    return CUZK_OK;
}

/* Streamed bases: queues the copy of chunk k of [0, n) into stage k & 1 (after the work
 * that last read that stage) on the copy stream. */
static cuzk_err stage_copy(cuzk_gpu_msm *m, size_t k, size_t n)
{
    const size_t lo = k * m->chunk, cnt = std::min(m->chunk, n - lo);
    const int s = (int)(k & 1);
    GPU_CHECK(cudaStreamWaitEvent(m->cstream, m->used[s], 0));
    GPU_CHECK(cudaMemcpyAsync(m->stage[s], m->hbases + lo * m->aff_bytes, cnt * m->aff_bytes,
                              cudaMemcpyHostToDevice, m->cstream));
    GPU_CHECK(cudaEventRecord(m->copied[s], m->cstream));
    return CUZK_OK;
}

/* *res = the sum of body(lo, cnt) over a cover of [0, n): one call over all n with resident
 * bases; with streamed bases one call per chunk (body sees that chunk's bases at m->bases,
 * base lo first), the next chunk's copy running meanwhile, the parts added on the host. */
template <class H, class Body>
static cuzk_err msm_chunked(cuzk_gpu_msm *m, typename H::X *res, size_t n, Body body)
{
    if (!m->streamed)
        return body((size_t)0, n, res);
    H::set_inf(res);
    if (n == 0)
        return CUZK_OK;
    GPU_TRY(gpu_use_device(m->device));
    const size_t nch = (n + m->chunk - 1) / m->chunk;
    cuzk_err e = stage_copy(m, 0, n);
    for (size_t k = 0; k < nch && e == CUZK_OK; k++) {
        const size_t lo = k * m->chunk;
        const int s = (int)(k & 1);
        if (k + 1 < nch)
            e = stage_copy(m, k + 1, n);
        cudaError_t ce = cudaSuccess;
        if (e == CUZK_OK && (ce = cudaStreamWaitEvent(m->stream, m->copied[s], 0)) != cudaSuccess)
            e = gpu_fail(ce, "cudaStreamWaitEvent", __FILE__, __LINE__);
        m->bases = m->stage[s];
        typename H::X part;
        if (e == CUZK_OK)
            e = body(lo, std::min(m->chunk, n - lo), &part);
        if (e == CUZK_OK && (ce = cudaEventRecord(m->used[s], m->stream)) != cudaSuccess)
            e = gpu_fail(ce, "cudaEventRecord", __FILE__, __LINE__);
        if (e == CUZK_OK)
            H::add(res, res, &part);
    }
    if (e != CUZK_OK) { /* leave nothing in flight on the stages */
        (void)cudaStreamSynchronize(m->cstream);
        (void)cudaStreamSynchronize(m->stream);
    }
    return e;
}

/* on_device: scalars is device memory, read in place. */
template <class H>
static cuzk_err msm_dense(cuzk_gpu_msm *m, typename H::X *res, const void *scalars, size_t n,
                          unsigned window, int mont, bool on_device)
{
    H::set_inf(res);
    m->acc_used = CUZK_GPU_MSM_ACC_XYZZ;
    if (n == 0)
        return CUZK_OK;
    GPU_TRY(gpu_use_device(m->device));
    cudaEvent_t ev0;
    bool prof;
    GPU_TRY(msm_upload(m, scalars, n, on_device, &ev0, &prof));
    cuzk_err e = msm_pippenger<H>(m, res, n, NULL, window, mont, 0, prof ? &ev0 : NULL,
                                  on_device ? scalars : NULL);
    if (prof)
        (void)cudaEventDestroy(ev0);
    return e;
}

static cuzk_err msm_check(cuzk_gpu_msm *m, int group, size_t n, bool need_arr, unsigned window,
                          const char *fn)
{
    if (!m || !need_arr)
        return cuzk_error_set(CUZK_EINVAL, "%s: NULL argument", fn);
    if (m->group != group)
        return cuzk_error_set(CUZK_EINVAL, "%s: the context holds G%d bases", fn, m->group);
    if (n > m->n_max)
        return cuzk_error_set(CUZK_ESIZE, "%s: %zu scalars for %zu bases", fn, n, m->n_max);
    if (window > CUZK_GPU_MSM_WINDOW_MAX)
        return cuzk_error_set(CUZK_EINVAL, "%s: window %u not in 0..%d", fn, window,
                              CUZK_GPU_MSM_WINDOW_MAX);
    return CUZK_OK;
}

static_assert(sizeof(cuzk_msm_scalar) == sizeof(fr_t), "scalar layouts");

template <class H>
static cuzk_err msm_entry(cuzk_gpu_msm *m, typename H::J *r, const void *scalars, size_t n,
                          unsigned window, int mont, const char *fn, bool on_device = false)
{
    if (!r)
        return cuzk_error_set(CUZK_EINVAL, "%s: r is NULL", fn);
    H::jac_inf(r);
    GPU_TRY(msm_check(m, H::group, n, !n || scalars, window, fn));
    typename H::X res;
    const unsigned char *sc = (const unsigned char *)scalars;
    cuzk_err err = msm_chunked<H>(m, &res, n, [&](size_t lo, size_t cnt, typename H::X *part) {
        return msm_dense<H>(m, part, sc + lo * sizeof(fr_t), cnt, window, mont, on_device);
    });
    if (err == CUZK_OK)
        H::to_jac(r, &res);
    return err;
}

extern "C" cuzk_err cuzk_gpu_g1_msm(cuzk_gpu_msm *m, cuzk_g1_jac *r,
                                    const cuzk_msm_scalar *scalars, size_t n, unsigned window)
{
    return msm_entry<G1Host>(m, r, scalars, n, window, 0, "cuzk_gpu_g1_msm");
}

extern "C" cuzk_err cuzk_gpu_g1_msm_fr(cuzk_gpu_msm *m, cuzk_g1_jac *r, const cuzk_fr *scalars,
                                       size_t n, unsigned window)
{
    return msm_entry<G1Host>(m, r, scalars, n, window, 1, "cuzk_gpu_g1_msm_fr");
}

extern "C" cuzk_err cuzk_gpu_g1_msm_fr_dev(cuzk_gpu_msm *m, cuzk_g1_jac *r, const void *scalars,
                                           size_t n, unsigned window)
{
    return msm_entry<G1Host>(m, r, scalars, n, window, 1, "cuzk_gpu_g1_msm_fr_dev", true);
}

extern "C" cuzk_err cuzk_gpu_g2_msm(cuzk_gpu_msm *m, cuzk_g2_jac *r,
                                    const cuzk_msm_scalar *scalars, size_t n, unsigned window)
{
    return msm_entry<G2Host>(m, r, scalars, n, window, 0, "cuzk_gpu_g2_msm");
}

extern "C" cuzk_err cuzk_gpu_g2_msm_fr(cuzk_gpu_msm *m, cuzk_g2_jac *r, const cuzk_fr *scalars,
                                       size_t n, unsigned window)
{
    return msm_entry<G2Host>(m, r, scalars, n, window, 1, "cuzk_gpu_g2_msm_fr");
}

/* *res = sum of the first n bases whose bit is set. */
template <class H>
static cuzk_err batch_add_run(cuzk_gpu_msm *m, typename H::X *res, const uint64_t *bits, size_t n)
{
    typedef typename H::F F;
    H::set_inf(res);
    if (n == 0)
        return CUZK_OK;
    const size_t nwords = (n + 63) / 64;
    GPU_TRY(gpu_use_device(m->device));
    cudaStream_t st = m->stream;
    GPU_TRY(msm_grow(&m->bits, &m->bits_cap, nwords, sizeof(uint64_t)));
    GPU_CHECK(cudaMemcpyAsync(m->bits, bits, nwords * sizeof(uint64_t), cudaMemcpyHostToDevice,
                              st));
    size_t target = (size_t)m->sm_count * 512;
    size_t per = (nwords + target - 1) / target;
    if (per < 1)
        per = 1;
    const size_t nthreads = (nwords + per - 1) / per;
    GPU_TRY(msm_grow((unsigned char **)&m->segs, &m->segs_cap, nthreads * sizeof(xyzz_t<F>), 1));
    xyzz_t<F> *segs = reinterpret_cast<xyzz_t<F> *>(m->segs);
    msm_batch_add_kernel<F><<<gpu_blocks(nthreads, MSM_ACC_THREADS), MSM_ACC_THREADS, 0, st>>>(
        segs, m->bits, reinterpret_cast<const aff_t<F> *>(m->bases), n, per, nthreads);
    GPU_CHECK_LAUNCH(msm_batch_add_kernel);
    xyzz_t<F> *winres = reinterpret_cast<xyzz_t<F> *>(m->winres);
    GPU_TRY(msm_reduce_all<F>(m, winres, segs, nthreads));
    GPU_CHECK(cudaMemcpyAsync(res, winres, sizeof(xyzz_t<F>), cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaStreamSynchronize(st));
    return CUZK_OK;
}

template <class H>
static cuzk_err batch_add_entry(cuzk_gpu_msm *m, typename H::J *r, const uint64_t *bits, size_t n,
                                const char *fn)
{
    if (!r)
        return cuzk_error_set(CUZK_EINVAL, "%s: r is NULL", fn);
    H::jac_inf(r);
    GPU_TRY(msm_check(m, H::group, n, !n || bits, 0, fn));
    typename H::X res;
    cuzk_err err = msm_chunked<H>(m, &res, n, [&](size_t lo, size_t cnt, typename H::X *part) {
        return batch_add_run<H>(m, part, bits + lo / 64, cnt);
    });
    if (err == CUZK_OK)
        H::to_jac(r, &res);
    return err;
}

extern "C" cuzk_err cuzk_gpu_g1_batch_add(cuzk_gpu_msm *m, cuzk_g1_jac *r, const uint64_t *bits,
                                          size_t n)
{
    return batch_add_entry<G1Host>(m, r, bits, n, "cuzk_gpu_g1_batch_add");
}

extern "C" cuzk_err cuzk_gpu_g2_batch_add(cuzk_gpu_msm *m, cuzk_g2_jac *r, const uint64_t *bits,
                                          size_t n)
{
    return batch_add_entry<G2Host>(m, r, bits, n, "cuzk_gpu_g2_batch_add");
}

/* Set bits among the first n (host). */
static size_t bits_count(const uint64_t *bits, size_t n)
{
    size_t cnt = 0;
    const size_t nwords = (n + 63) / 64;
    for (size_t w = 0; w < nwords; w++) {
        uint64_t word = bits[w];
        if (w == nwords - 1 && (n & 63))
            word &= (1ULL << (n & 63)) - 1;
        cnt += (size_t)__builtin_popcountll(word);
    }
    return cnt;
}

/* The split: *res = batch_add(one_bits) + Pippenger over the nsig set positions of sig_bits
 * (bits_count(sig_bits, n), 0 without sig_bits). */
template <class H>
static cuzk_err msm_split_run(cuzk_gpu_msm *m, typename H::X *res, const void *scalars,
                              unsigned flags, const uint64_t *one_bits, const uint64_t *sig_bits,
                              size_t nsig, size_t n, unsigned window)
{
    H::set_inf(res);
    m->acc_used = CUZK_GPU_MSM_ACC_XYZZ;
    typename H::X ones, tail;
    H::set_inf(&ones);
    H::set_inf(&tail);
    if (one_bits)
        GPU_TRY(batch_add_run<H>(m, &ones, one_bits, n));
    if (nsig) {
        const int mont = (flags & CUZK_GPU_SCALARS_FR) != 0;
        const int gathered = (flags & CUZK_GPU_SCALARS_GATHERED) != 0;
        GPU_TRY(gpu_use_device(m->device));
        cudaStream_t st = m->stream;
        const size_t nwords = (n + 63) / 64;
        GPU_TRY(msm_grow(&m->sbits, &m->sbits_cap, nwords, sizeof(uint64_t)));
        if (m->wcnt_cap < nwords) {
            size_t cap = 0;
            GPU_TRY(msm_grow(&m->wcnt, &cap, nwords, sizeof(uint32_t)));
            cap = 0;
            GPU_TRY(msm_grow(&m->woff, &cap, nwords, sizeof(uint32_t)));
            m->wcnt_cap = nwords;
        }
        GPU_TRY(msm_grow(&m->idx, &m->idx_cap, nsig, sizeof(uint32_t)));
        cudaEvent_t ev0;
        bool prof;
        GPU_TRY(msm_upload(m, scalars, gathered ? nsig : n, false, &ev0, &prof));
        cuzk_err e = CUZK_OK;
        cudaError_t ce = cudaMemcpyAsync(m->sbits, sig_bits, nwords * sizeof(uint64_t),
                                         cudaMemcpyHostToDevice, st);
        if (ce != cudaSuccess)
            e = gpu_fail(ce, "cudaMemcpyAsync(sig_bits)", __FILE__, __LINE__);
        if (e == CUZK_OK) {
            msm_popc_kernel<<<gpu_blocks(nwords, 256), 256, 0, st>>>(m->wcnt, m->sbits, n, nwords);
            if ((ce = cudaGetLastError()) != cudaSuccess)
                e = gpu_fail(ce, "msm_popc_kernel", __FILE__, __LINE__);
        }
        size_t tmp_bytes = 0;
        if (e == CUZK_OK &&
            (ce = cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, m->wcnt, m->woff, (int64_t)nwords,
                                                st)) != cudaSuccess)
            e = gpu_fail(ce, "cub::DeviceScan::ExclusiveSum", __FILE__, __LINE__);
        if (e == CUZK_OK)
            e = msm_grow((unsigned char **)&m->scan_tmp, &m->scan_tmp_cap, tmp_bytes, 1);
        if (e == CUZK_OK &&
            (ce = cub::DeviceScan::ExclusiveSum(m->scan_tmp, tmp_bytes, m->wcnt, m->woff,
                                                (int64_t)nwords, st)) != cudaSuccess)
            e = gpu_fail(ce, "cub::DeviceScan::ExclusiveSum", __FILE__, __LINE__);
        if (e == CUZK_OK) {
            msm_compact_kernel<<<gpu_blocks(nwords, 256), 256, 0, st>>>(m->idx, m->sbits, m->woff,
                                                                        n, nwords);
            if ((ce = cudaGetLastError()) != cudaSuccess)
                e = gpu_fail(ce, "msm_compact_kernel", __FILE__, __LINE__);
        }
        if (e == CUZK_OK)
            e = msm_pippenger<H>(m, &tail, nsig, m->idx, window, mont, gathered,
                                 prof ? &ev0 : NULL);
        if (prof)
            (void)cudaEventDestroy(ev0);
        GPU_TRY(e);
    }
    H::add(res, &ones, &tail);
    return CUZK_OK;
}

template <class H>
static cuzk_err msm_split_entry(cuzk_gpu_msm *m, typename H::J *r, const void *scalars,
                                unsigned flags, const uint64_t *one_bits,
                                const uint64_t *sig_bits, size_t n, unsigned window,
                                const char *fn)
{
    if (!r)
        return cuzk_error_set(CUZK_EINVAL, "%s: r is NULL", fn);
    H::jac_inf(r);
    GPU_TRY(msm_check(m, H::group, n, !n || !sig_bits || scalars, window, fn));
    if (flags & ~(unsigned)(CUZK_GPU_SCALARS_FR | CUZK_GPU_SCALARS_GATHERED))
        return cuzk_error_set(CUZK_EINVAL, "%s: unknown flags 0x%x", fn, flags);
    typename H::X res;
    /* a chunk's scalars: from its first position, or (gathered) after the set sig positions
     * of the chunks before it */
    const unsigned char *sc = (const unsigned char *)scalars;
    const bool gathered = (flags & CUZK_GPU_SCALARS_GATHERED) != 0;
    size_t sig_before = 0;
    cuzk_err err = msm_chunked<H>(m, &res, n, [&](size_t lo, size_t cnt, typename H::X *part) {
        const uint64_t *sb = sig_bits ? sig_bits + lo / 64 : NULL;
        const size_t nsig = sb ? bits_count(sb, cnt) : 0;
        const unsigned char *csc = sc ? sc + (gathered ? sig_before : lo) * sizeof(fr_t) : NULL;
        sig_before += nsig;
        return msm_split_run<H>(m, part, csc, flags, one_bits ? one_bits + lo / 64 : NULL, sb,
                                nsig, cnt, window);
    });
    if (err == CUZK_OK)
        H::to_jac(r, &res);
    return err;
}

extern "C" cuzk_err cuzk_gpu_g1_msm_split(cuzk_gpu_msm *m, cuzk_g1_jac *r, const void *scalars,
                                          unsigned flags, const uint64_t *one_bits,
                                          const uint64_t *sig_bits, size_t n, unsigned window)
{
    return msm_split_entry<G1Host>(m, r, scalars, flags, one_bits, sig_bits, n, window,
                                   "cuzk_gpu_g1_msm_split");
}

extern "C" cuzk_err cuzk_gpu_g2_msm_split(cuzk_gpu_msm *m, cuzk_g2_jac *r, const void *scalars,
                                          unsigned flags, const uint64_t *one_bits,
                                          const uint64_t *sig_bits, size_t n, unsigned window)
{
    return msm_split_entry<G2Host>(m, r, scalars, flags, one_bits, sig_bits, n, window,
                                   "cuzk_gpu_g2_msm_split");
}

/* ---- accumulation choice ---- */
extern "C" cuzk_err cuzk_gpu_msm_set_accumulation(cuzk_gpu_msm *m, cuzk_gpu_msm_acc mode)
{
    if (!m)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_set_accumulation: m is NULL");
    if (mode != CUZK_GPU_MSM_ACC_XYZZ && mode != CUZK_GPU_MSM_ACC_AFFINE &&
        mode != CUZK_GPU_MSM_ACC_AFFINE_FULL)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_set_accumulation: unknown mode %d",
                              (int)mode);
    m->acc_mode = mode;
    return CUZK_OK;
}

extern "C" cuzk_gpu_msm_acc cuzk_gpu_msm_accumulation_used(const cuzk_gpu_msm *m)
{
    return m ? (cuzk_gpu_msm_acc)m->acc_used : CUZK_GPU_MSM_ACC_XYZZ;
}
