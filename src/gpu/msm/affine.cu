/*
 * The G1 MSM's batch-affine accumulation (cuzk_gpu_msm_set_accumulation; affine.cuh has the
 * round's arithmetic and the plan's pieces, tested on the host).
 *
 * After the sort, off0[k] (k = 0 .. W B) = the first sorted position with key >= k (the
 * sentinel keys count as W B), so bucket k holds pairs [off0[k], off0[k+1]). The buckets are
 * cut into slices (bucket ranges of at most MSM_AFF_SLICE pairs: the round buffers are sized
 * for one slice). Per slice: rounds r = 0 .. R-1 of pairwise affine additions, the run
 * offsets of round r from ceil(len / 2^r) by an exclusive sum; then the usual accumulation
 * over the points left (msm_accumulate_kernel with the points as bases and 0, 1, 2, ... as
 * values) and the partials kernel.
 */
#include <stdlib.h>

#include <algorithm>
#include <utility>

#include <cub/device/device_scan.cuh>

#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/msm/affine.cuh"
#include "gpu/msm/kernels.cuh"
#include "gpu/msm/msm.cuh"

static_assert(MSM_SIGN == MSM_AFF_SIGN, "one sign bit");

/* Threads of a round's block (a power of two: the product tree), the blocks per SM its
 * registers must allow (4: 128 registers without spills, 16 warps per SM; 3 leaves ptxas
 * about 146), the pairs a thread takes (KMIN..KMAX: enough to fill WAVES rounds of resident
 * blocks, no more), and the bucket chunks per window that slices are made of. Tuning, at
 * build time: MSM_AFF_SLICE, the most pairs of a slice (the round buffers take about 100
 * bytes a pair of the largest slice, kept by the context); MSM_AFF_STOP, the rounds of
 * AFFINE (and AUTO) go on while a slice's buckets hold at least this many points on
 * average. */
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
#ifndef MSM_AFF_SLICE
#define MSM_AFF_SLICE (1u << 26)
#endif
#ifndef MSM_AFF_STOP
#define MSM_AFF_STOP 2
#endif
#if MSM_AFF_THREADS < 32 || (MSM_AFF_THREADS & (MSM_AFF_THREADS - 1)) != 0
#error "MSM_AFF_THREADS must be a power of two, at least a warp"
#endif
#if MSM_AFF_MINB < 1
#error "MSM_AFF_MINB must be at least 1"
#endif
#if MSM_AFF_SLICE < (1u << 16) || MSM_AFF_SLICE > (1u << 30)
#error "MSM_AFF_SLICE must be 2^16 .. 2^30 pairs"
#endif
#if MSM_AFF_STOP < 1 || MSM_AFF_STOP > (1u << 30)
#error "MSM_AFF_STOP must be 1 .. 2^30 points"
#endif

/* ---- kernels ---- */
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

/* One round (see affine.cuh): thread t takes the elements [2Kt, 2Kt + 2K); the
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

/* What msm_aff_grow(p, cap, need) would allocate (*alloc) and free (*freed), in bytes. */
template <class T>
static void msm_aff_need(const T *p, size_t cap, size_t need, size_t *alloc, size_t *freed)
{
    if (cap >= need && p)
        return;
    if (p)
        *freed += cap * sizeof(T);
    *alloc += (need ? need : 1) * sizeof(T);
}

/* Plans the affine accumulation of the sorted pairs (keys of W windows of B buckets): off0
 * and the bucket chunk offsets on the device, one synchronisation to read the chunk offsets
 * and the largest bucket, slices of whole chunks up to MSM_AFF_SLICE pairs, the rounds of
 * each (AFFINE and AUTO: while the average bucket holds MSM_AFF_STOP points or more;
 * AFFINE_FULL: until the largest holds one), the buffers grown. *use = false (accumulate
 * with XYZZ) when no slice needs a round, when the pairs do not fit 32-bit offsets, when
 * device memory is short (then the round buffers are freed), or (AUTO) when the buffers to
 * be allocated would take more than half of the free device memory. */
cuzk_err msm_aff_plan(cuzk_gpu_msm *m, size_t *nslices, bool *use, const uint32_t *skeys,
                      size_t npairs, unsigned W, uint32_t B, int mode)
{
    GPU_TRY(gpu_use_device(m->device));
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
    const size_t ns = msm_aff_cut(m->aff_slices, info + 1, nchunks, cb, nbk, MSM_AFF_SLICE);
    size_t need_pts[2] = {0, 0}, need_pre = 0, need_off = 0, need_iota = 0, need_tmp = 0;
    for (size_t i = 0; i < ns; i++) {
        msm_aff_slice &s = m->aff_slices[i];
        const unsigned R = msm_aff_rounds(s, info[0], mode == CUZK_GPU_MSM_ACC_AFFINE_FULL,
                                          MSM_AFF_STOP);
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
    if (mode == CUZK_GPU_MSM_ACC_AUTO) {
        /* the context keeps these buffers: leave at least as much free as they take */
        size_t alloc = 0, freed = 0;
        msm_aff_need(m->aff_pts[0], m->aff_pts_cap[0], need_pts[0], &alloc, &freed);
        msm_aff_need(m->aff_keys[0], m->aff_keys_cap[0], need_pts[0], &alloc, &freed);
        msm_aff_need(m->aff_pts[1], m->aff_pts_cap[1], need_pts[1], &alloc, &freed);
        msm_aff_need(m->aff_keys[1], m->aff_keys_cap[1], need_pts[1], &alloc, &freed);
        msm_aff_need(m->aff_pre, m->aff_pre_cap, need_pre, &alloc, &freed);
        msm_aff_need(m->aff_meta, m->aff_meta_cap, need_pre, &alloc, &freed);
        msm_aff_need(m->aff_off[0], m->aff_off_cap[0], need_off, &alloc, &freed);
        msm_aff_need(m->aff_off[1], m->aff_off_cap[1], need_off, &alloc, &freed);
        msm_aff_need(m->aff_lens, m->aff_lens_cap, need_off, &alloc, &freed);
        msm_aff_need(m->aff_iota, m->aff_iota_cap, need_iota, &alloc, &freed);
        msm_aff_need(m->aff_scan_tmp, m->aff_scan_tmp_cap, need_tmp, &alloc, &freed);
        size_t fr = 0, tot = 0;
        if (alloc && (cudaMemGetInfo(&fr, &tot) != cudaSuccess || fr + freed < 2 * alloc)) {
            (void)cudaGetLastError();
            *use = false;
            return CUZK_OK;
        }
    }
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

 * into the buckets. prof: the rounds' and the final passes' device times into m->prof. */
cuzk_err msm_aff_run(cuzk_gpu_msm *m, size_t nslices, g1_xyzz_t *buckets, g1_xyzz_t *partials,
                     const uint32_t *skeys, const uint32_t *svals, uint32_t sentinel, bool prof)
{
    GPU_TRY(gpu_use_device(m->device));
    cudaStream_t st = m->stream;
    fp_t r2;
    msm_aff_r2(&r2);
    const g1_aff_t *bases = reinterpret_cast<const g1_aff_t *>(m->bases);
    const size_t target = m->acc_threads; /* msm_pippenger's, for its partials buffer */
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
        msm_accumulate_kernel<fp_t><<<gpu_blocks(nseg, MSM_ACC_THREADS), MSM_ACC_THREADS, 0, st>>>(
            buckets, partials, m->pkeys, fk, fv, fb, cnt, L, nseg, sentinel);
        GPU_CHECK_LAUNCH(msm_accumulate_kernel);
        GPU_TRY(msm_partials_run<fp_t>(m, buckets, partials, m->pkeys, 2 * nseg, sentinel, st));
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
        m->prof.affine_rounds_ms += t_rounds;
        m->prof.affine_finish_ms += t_final;
        m->prof.affine_slices += (unsigned)nslices;
        m->prof.affine_rounds = std::max(m->prof.affine_rounds, rmax);
        for (int i = 0; i < 3; i++)
            (void)cudaEventDestroy(ev[i]);
    }
    return CUZK_OK;
}
