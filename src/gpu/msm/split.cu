/*
 * The Groth16 split on resident bases (cuzk_gpu_g1/g2_msm_split): the batch add of the ones
 * (batch_add.cu) plus Pippenger (pippenger.cu) over only the significant positions, which
 * are compacted on the device (popcount per word, exclusive scan, scatter) into an index
 * list that the digit pass reads.
 */
#include <cub/device/device_scan.cuh>

#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/msm/msm.cuh"
#include "gpu/msm/stream.cuh"

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
    msm_prof_begin(m);
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
