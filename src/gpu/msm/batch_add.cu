/*
 * Batch add on the device (cuzk/gpu.h): the sum of the bases whose bit is set. One thread
 * per range of bit-vector words adds its bases into an XYZZ sum, then a block reduction (in
 * two levels when there are many ranges).
 */
#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/mem.cuh"
#include "gpu/msm/kernels.cuh"
#include "gpu/msm/msm.cuh"
#include "gpu/msm/stream.cuh"

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

/* *res = sum of the first n bases whose bit is set. */
template <class H>
cuzk_err batch_add_run(cuzk_gpu_msm *m, typename H::X *res, const uint64_t *bits, size_t n)
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

template cuzk_err batch_add_run<G1Host>(cuzk_gpu_msm *, G1Host::X *, const uint64_t *, size_t);
template cuzk_err batch_add_run<G2Host>(cuzk_gpu_msm *, G2Host::X *, const uint64_t *, size_t);

template <class H>
static cuzk_err batch_add_entry(cuzk_gpu_msm *m, typename H::J *r, const uint64_t *bits, size_t n,
                                const char *fn)
{
    if (!r)
        return cuzk_error_set(CUZK_EINVAL, "%s: r is NULL", fn);
    H::jac_inf(r);
    GPU_TRY(msm_check(m, H::group, n, !n || bits, 0, fn));
    msm_prof_begin(m);
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
