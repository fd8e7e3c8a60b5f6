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
 * batch_add: one thread per range of bit-vector words adds its bases, then the same block
 * reduction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>

#include "cuzk/gpu.h"
#include "gpu/gpu_common.cuh"

#define MSM_REDUCE_THREADS 256
#define MSM_ACC_THREADS 128
#define MSM_SIGN 0x80000000u /* value bit: subtract the base */

struct cuzk_gpu_msm {
    int device;
    size_t n_max;
    int sm_count;
    cudaStream_t stream;
    g1_aff_t *bases;
    uint32_t *scal; /* n_max scalars, 8 limbs each */
    uint32_t *keys[2], *vals[2];
    size_t pairs_cap;
    void *sort_tmp;
    size_t sort_tmp_cap;
    g1_xyzz_t *buckets;
    size_t buckets_cap;
    g1_xyzz_t *partials;
    uint32_t *pkeys;
    size_t partials_cap;
    g1_xyzz_t *segs;
    size_t segs_cap;
    g1_xyzz_t *winres; /* at most 256 windows */
    uint64_t *bits;
    size_t bits_cap;
    int *flag;
};

/* ---- kernels ---- */
__global__ void msm_digits_kernel(uint32_t *keys, uint32_t *vals, const uint32_t *scal,
                                  size_t n, unsigned c, unsigned W, int mont, int *flag)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    fr_t s = ld_vec(reinterpret_cast<const fr_t *>(scal) + i);
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
        vals[o] = (uint32_t)i | neg;
    }
}

__device__ __forceinline__ void msm_add_base(g1_xyzz_t &acc, const g1_aff_t *__restrict__ bases,
                                             uint32_t v)
{
    const g1_aff_t p = ld_vec(bases + (v & ~MSM_SIGN));
    if (aff_is_inf(p))
        return;
    xyzz_add_affine(acc, p.x, (v & MSM_SIGN) ? f_neg<FpP>(p.y) : p.y);
}

__global__ void __launch_bounds__(MSM_ACC_THREADS)
msm_accumulate_kernel(g1_xyzz_t *buckets, g1_xyzz_t *partials, uint32_t *pkeys,
                      const uint32_t *__restrict__ keys, const uint32_t *__restrict__ vals,
                      const g1_aff_t *__restrict__ bases, size_t npairs, size_t L,
                      size_t nseg, uint32_t sentinel)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nseg)
        return;
    const size_t start = t * L;
    const size_t end = start + L < npairs ? start + L : npairs;
    g1_xyzz_t acc;
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

__global__ void msm_partials_kernel(g1_xyzz_t *buckets, const g1_xyzz_t *partials,
                                    const uint32_t *pkeys, size_t np, uint32_t sentinel)
{
    const size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= np)
        return;
    const uint32_t key = pkeys[j];
    if (key == sentinel || (j > 0 && pkeys[j - 1] == key))
        return;
    g1_xyzz_t acc;
    xyzz_set_inf(acc);
    for (size_t jj = j; jj < np && pkeys[jj] == key; jj++)
        xyzz_add(acc, ld_vec_rw(partials + jj));
    st_vec(buckets + key, acc);
}

/* segs[w S + s] = sum_{k in [lo, lo+M)} (k + 1) X_(w B + k), lo = s M. */
__global__ void msm_bucket_sum_kernel(g1_xyzz_t *segs, const g1_xyzz_t *buckets, unsigned W,
                                      uint32_t B, uint32_t S, uint32_t M)
{
    const size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (size_t)W * S)
        return;
    const uint32_t w = (uint32_t)(id / S), s = (uint32_t)(id % S);
    const uint32_t lo = s * M;
    const g1_xyzz_t *bk = buckets + (size_t)w * B + lo;
    g1_xyzz_t run, acc;
    xyzz_set_inf(run);
    xyzz_set_inf(acc);
    for (int k = (int)M - 1; k >= 0; k--) {
        xyzz_add(run, ld_vec_rw(bk + k));
        xyzz_add(acc, run);
    }
    /* acc += lo * run (double-and-add from the top bit of lo) */
    if (lo) {
        g1_xyzz_t m;
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

/* out[g] = sum of in[g cnt .. g cnt + cnt), one block per group. */
__global__ void __launch_bounds__(MSM_REDUCE_THREADS)
msm_reduce_kernel(g1_xyzz_t *out, const g1_xyzz_t *in, size_t cnt)
{
    __shared__ g1_xyzz_t sh[MSM_REDUCE_THREADS];
    const g1_xyzz_t *base = in + (size_t)blockIdx.x * cnt;
    g1_xyzz_t acc;
    xyzz_set_inf(acc);
    for (size_t i = threadIdx.x; i < cnt; i += blockDim.x)
        xyzz_add(acc, ld_vec_rw(base + i));
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) {
            g1_xyzz_t a = sh[threadIdx.x];
            xyzz_add(a, sh[threadIdx.x + h]);
            sh[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = sh[0];
}

__global__ void __launch_bounds__(MSM_ACC_THREADS)
msm_batch_add_kernel(g1_xyzz_t *partials, const uint64_t *__restrict__ bits,
                     const g1_aff_t *__restrict__ bases, size_t n, size_t words_per,
                     size_t nthreads)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nthreads)
        return;
    const size_t nwords = (n + 63) / 64;
    g1_xyzz_t acc;
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

/* ---- host side ---- */
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
    void *ptrs[] = {m->bases, m->scal, m->keys[0], m->keys[1], m->vals[0], m->vals[1],
                    m->sort_tmp, m->buckets, m->partials, m->pkeys, m->segs, m->winres,
                    m->bits, m->flag};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (ptrs[i])
            (void)cudaFree(ptrs[i]);
    if (m->stream)
        (void)cudaStreamDestroy(m->stream);
    free(m);
}

/* Grows a device buffer to hold at least need bytes (contents are not kept). */
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

static cuzk_err msm_init(cuzk_gpu_msm *m, const cuzk_g1_affine *bases)
{
    GPU_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, m->device));
    m->sm_count = prop.multiProcessorCount;
    const size_t nb = m->n_max ? m->n_max : 1;
    GPU_CHECK(cudaMalloc(&m->bases, nb * sizeof(g1_aff_t)));
    if (m->n_max)
        GPU_CHECK(cudaMemcpy(m->bases, bases, m->n_max * sizeof(g1_aff_t),
                             cudaMemcpyHostToDevice));
    GPU_CHECK(cudaMalloc(&m->scal, nb * sizeof(fr_t)));
    GPU_CHECK(cudaMalloc(&m->winres, 256 * sizeof(g1_xyzz_t)));
    GPU_CHECK(cudaMalloc(&m->flag, sizeof(int)));
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_msm_new(cuzk_gpu_msm **out, int device, const cuzk_g1_affine *bases,
                                     size_t n_max)
{
    static_assert(sizeof(cuzk_g1_affine) == sizeof(g1_aff_t), "affine layout");
    static_assert(sizeof(cuzk_g1_xyzz) == sizeof(g1_xyzz_t), "xyzz layout");
    if (!out)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_new: out is NULL");
    *out = NULL;
    if (n_max && !bases)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_new: bases is NULL");
    if (n_max >= MSM_SIGN)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_new: %zu bases (at most 2^31 - 1)",
                              n_max);
    GPU_TRY(gpu_use_device(device));
    cuzk_gpu_msm *m = (cuzk_gpu_msm *)calloc(1, sizeof *m);
    if (!m)
        return cuzk_error_set(CUZK_ENOMEM, "cuzk_gpu_msm_new");
    m->device = device;
    m->n_max = n_max;
    cuzk_err err = msm_init(m, bases);
    if (err != CUZK_OK) {
        cuzk_gpu_msm_free(m);
        return err;
    }
    *out = m;
    return CUZK_OK;
}

/* Host: R = sum_w 2^(c w) R_w, then Jacobian. */
static void msm_combine_windows(cuzk_g1_jac *r, const cuzk_g1_xyzz *win, unsigned W, unsigned c)
{
    cuzk_g1_xyzz acc = win[W - 1];
    for (int w = (int)W - 2; w >= 0; w--) {
        for (unsigned i = 0; i < c; i++)
            cuzk_g1_xyzz_dbl_var(&acc, &acc);
        cuzk_g1_xyzz_add_var(&acc, &acc, &win[w]);
    }
    cuzk_g1_xyzz_to_jac(r, &acc);
}

static cuzk_err msm_run(cuzk_gpu_msm *m, cuzk_g1_jac *r, const void *scalars, size_t n,
                        unsigned window, int mont)
{
    if (n == 0)
        return CUZK_OK;
    const unsigned c = window ? window : cuzk_gpu_msm_window(n);
    const unsigned W = (256 + c - 1) / c;
    const uint32_t B = 1u << (c - 1);
    const uint32_t sentinel = W * B;
    int keybits = 1;
    while ((1ULL << keybits) <= (unsigned long long)sentinel)
        keybits++;
    const size_t npairs = (size_t)W * n;

    GPU_TRY(gpu_use_device(m->device));
    cudaStream_t st = m->stream;
    /* CUZK_GPU_MSM_PROFILE=1: per-stage device times on stderr (tuning aid) */
    static const char *const stage[] = {"upload", "digits", "sort", "accumulate", "partials",
                                        "bucket_sums", "window_reduce"};
    const bool prof = getenv("CUZK_GPU_MSM_PROFILE") != NULL;
    cudaEvent_t ev[8];
    int nev = 0;
#define MSM_MARK()                                                   \
    do {                                                             \
        if (prof && nev < 8) {                                       \
            GPU_CHECK(cudaEventCreate(&ev[nev]));                    \
            GPU_CHECK(cudaEventRecord(ev[nev], st));                 \
            nev++;                                                   \
        }                                                            \
    } while (0)
    MSM_MARK();
    GPU_CHECK(cudaMemcpyAsync(m->scal, scalars, n * sizeof(fr_t), cudaMemcpyHostToDevice, st));
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
    msm_digits_kernel<<<gpu_blocks(n, 256), 256, 0, st>>>(m->keys[0], m->vals[0], m->scal, n, c,
                                                           W, mont, m->flag);
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
    GPU_TRY(msm_grow(&m->buckets, &m->buckets_cap, nbuckets, sizeof(g1_xyzz_t)));
    GPU_CHECK(cudaMemsetAsync(m->buckets, 0, nbuckets * sizeof(g1_xyzz_t), st));

    size_t target = (size_t)m->sm_count * 512;
    size_t L = (npairs + target - 1) / target;
    if (L < 8)
        L = 8;
    const size_t nseg = (npairs + L - 1) / L;
    if (m->partials_cap < 2 * nseg) {
        size_t cap = 0;
        GPU_TRY(msm_grow(&m->partials, &cap, 2 * nseg, sizeof(g1_xyzz_t)));
        cap = 0;
        GPU_TRY(msm_grow(&m->pkeys, &cap, 2 * nseg, sizeof(uint32_t)));
        m->partials_cap = 2 * nseg;
    }
    msm_accumulate_kernel<<<gpu_blocks(nseg, MSM_ACC_THREADS), MSM_ACC_THREADS, 0, st>>>(
        m->buckets, m->partials, m->pkeys, skeys, svals, m->bases, npairs, L, nseg, sentinel);
    GPU_CHECK_LAUNCH(msm_accumulate_kernel);
    MSM_MARK();
    msm_partials_kernel<<<gpu_blocks(2 * nseg, 128), 128, 0, st>>>(m->buckets, m->partials,
                                                                   m->pkeys, 2 * nseg, sentinel);
    GPU_CHECK_LAUNCH(msm_partials_kernel);

    MSM_MARK();
    /* segments per window: about 2^15 threads in all, at most B */
    uint32_t S = 1;
    while ((size_t)W * S * 2 <= 32768 && S * 2 <= B)
        S *= 2;
    const uint32_t M = B / S;
    GPU_TRY(msm_grow(&m->segs, &m->segs_cap, (size_t)W * S, sizeof(g1_xyzz_t)));
    msm_bucket_sum_kernel<<<gpu_blocks((size_t)W * S, 64), 64, 0, st>>>(m->segs, m->buckets, W, B,
                                                                        S, M);
    GPU_CHECK_LAUNCH(msm_bucket_sum_kernel);
    MSM_MARK();
    msm_reduce_kernel<<<W, MSM_REDUCE_THREADS, 0, st>>>(m->winres, m->segs, S);
    GPU_CHECK_LAUNCH(msm_reduce_kernel);
    MSM_MARK();
#undef MSM_MARK

    cuzk_g1_xyzz win[256];
    int flag = 0;
    GPU_CHECK(cudaMemcpyAsync(win, m->winres, W * sizeof(g1_xyzz_t), cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaMemcpyAsync(&flag, m->flag, sizeof flag, cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaStreamSynchronize(st));
    if (prof) {
        fprintf(stderr, "gpu msm n=%zu c=%u W=%u:", n, c, W);
        for (int i = 0; i + 1 < nev; i++) {
            float ms = 0;
            GPU_CHECK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            fprintf(stderr, " %s %.3f", stage[i], ms);
        }
        fprintf(stderr, " ms\n");
        for (int i = 0; i < nev; i++)
            (void)cudaEventDestroy(ev[i]);
    }
    if (flag)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_g1_msm: a canonical scalar is >= 2^255");
    msm_combine_windows(r, win, W, c);
    return CUZK_OK;
}

static cuzk_err msm_entry(cuzk_gpu_msm *m, cuzk_g1_jac *r, const void *scalars, size_t n,
                          unsigned window, int mont, const char *fn)
{
    if (!r)
        return cuzk_error_set(CUZK_EINVAL, "%s: r is NULL", fn);
    cuzk_g1_jac_set_inf(r);
    if (!m || (n && !scalars))
        return cuzk_error_set(CUZK_EINVAL, "%s: NULL argument", fn);
    if (n > m->n_max)
        return cuzk_error_set(CUZK_ESIZE, "%s: %zu scalars for %zu bases", fn, n, m->n_max);
    if (window > CUZK_GPU_MSM_WINDOW_MAX)
        return cuzk_error_set(CUZK_EINVAL, "%s: window %u not in 0..%d", fn, window,
                              CUZK_GPU_MSM_WINDOW_MAX);
    cuzk_err err = msm_run(m, r, scalars, n, window, mont);
    if (err != CUZK_OK)
        cuzk_g1_jac_set_inf(r);
    return err;
}

extern "C" cuzk_err cuzk_gpu_g1_msm(cuzk_gpu_msm *m, cuzk_g1_jac *r,
                                    const cuzk_msm_scalar *scalars, size_t n, unsigned window)
{
    return msm_entry(m, r, scalars, n, window, 0, "cuzk_gpu_g1_msm");
}

extern "C" cuzk_err cuzk_gpu_g1_msm_fr(cuzk_gpu_msm *m, cuzk_g1_jac *r, const cuzk_fr *scalars,
                                       size_t n, unsigned window)
{
    return msm_entry(m, r, scalars, n, window, 1, "cuzk_gpu_g1_msm_fr");
}

static cuzk_err batch_add_run(cuzk_gpu_msm *m, cuzk_g1_jac *r, const uint64_t *bits, size_t n)
{
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
    GPU_TRY(msm_grow(&m->segs, &m->segs_cap, nthreads, sizeof(g1_xyzz_t)));
    msm_batch_add_kernel<<<gpu_blocks(nthreads, MSM_ACC_THREADS), MSM_ACC_THREADS, 0, st>>>(
        m->segs, m->bits, m->bases, n, per, nthreads);
    GPU_CHECK_LAUNCH(msm_batch_add_kernel);
    msm_reduce_kernel<<<1, MSM_REDUCE_THREADS, 0, st>>>(m->winres, m->segs, nthreads);
    GPU_CHECK_LAUNCH(msm_reduce_kernel);
    cuzk_g1_xyzz res;
    GPU_CHECK(cudaMemcpyAsync(&res, m->winres, sizeof res, cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaStreamSynchronize(st));
    cuzk_g1_xyzz_to_jac(r, &res);
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_g1_batch_add(cuzk_gpu_msm *m, cuzk_g1_jac *r, const uint64_t *bits,
                                          size_t n)
{
    if (!r)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_g1_batch_add: r is NULL");
    cuzk_g1_jac_set_inf(r);
    if (!m || (n && !bits))
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_g1_batch_add: NULL argument");
    if (n > m->n_max)
        return cuzk_error_set(CUZK_ESIZE, "cuzk_gpu_g1_batch_add: %zu bits for %zu bases", n,
                              m->n_max);
    if (n == 0)
        return CUZK_OK;
    cuzk_err err = batch_add_run(m, r, bits, n);
    if (err != CUZK_OK)
        cuzk_g1_jac_set_inf(r);
    return err;
}
