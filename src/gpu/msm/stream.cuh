/*
 * Internal to src/gpu/msm: bases streamed from host memory (cuzk_gpu_msm_new_streamed). A
 * streamed context keeps two stages of `chunk` bases on the device; every call runs chunk by
 * chunk (msm_chunked), the next chunk's copy (copy stream) overlapping the present one's work.
 */
#ifndef CUZK_GPU_MSM_STREAM_CUH
#define CUZK_GPU_MSM_STREAM_CUH

#include <algorithm>

#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/msm/msm.cuh"

/* The stages, their events and the copy stream of a streamed context, and the caller's
 * array page-locked when it can be (stream.cu); msm_stream_free undoes it. */
cuzk_err msm_stream_init(cuzk_gpu_msm *m, size_t nb);
void msm_stream_free(cuzk_gpu_msm *m);
/* Queues the copy of chunk k of [0, n) into stage k & 1 (after the work that last read that
 * stage) on the copy stream. */
cuzk_err msm_stage_copy(cuzk_gpu_msm *m, size_t k, size_t n);

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
    cuzk_err e = msm_stage_copy(m, 0, n);
    for (size_t k = 0; k < nch && e == CUZK_OK; k++) {
        const size_t lo = k * m->chunk;
        const int s = (int)(k & 1);
        if (k + 1 < nch)
            e = msm_stage_copy(m, k + 1, n);
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

#endif
