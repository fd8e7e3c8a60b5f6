/*
 * Streamed bases (cuzk_gpu_msm_new_streamed, msm/stream.cuh): the stages, the copy stream,
 * the caller's array page-locked in place, the chunk copies.
 */
#include <algorithm>

#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/msm/msm.cuh"
#include "gpu/msm/stream.cuh"

/* Page-locks the caller's array in place so that the chunk copies run asynchronously beside
 * the work (read-only registration first, as the array may be a read-only mapping of a
 * file). When it cannot (or another context already did, e.g. the same key on a second
 * device), the copies still work, from pageable memory. */
static void msm_pin_host(cuzk_gpu_msm *m)
{
    if (!m->n_max)
        return;
    void *p = (void *)m->hbases;
    const size_t bytes = m->n_max * m->aff_bytes;
    cudaError_t ce =
        cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterReadOnly);
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        ce = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
    }
    m->registered = ce == cudaSuccess;
    if (!m->registered)
        (void)cudaGetLastError(); /* not sticky: clear it */
}

cuzk_err msm_stream_init(cuzk_gpu_msm *m, size_t nb)
{
    for (int i = 0; i < 2; i++) {
        GPU_CHECK(cudaMalloc(&m->stage[i], nb * m->aff_bytes));
        GPU_CHECK(cudaEventCreateWithFlags(&m->copied[i], cudaEventDisableTiming));
        GPU_CHECK(cudaEventCreateWithFlags(&m->used[i], cudaEventDisableTiming));
    }
    GPU_CHECK(cudaStreamCreateWithFlags(&m->cstream, cudaStreamNonBlocking));
    m->bases = m->stage[0];
    msm_pin_host(m);
    return CUZK_OK;
}

/* All but stage 0, which cuzk_gpu_msm_free frees as m->bases' buffer. */
void msm_stream_free(cuzk_gpu_msm *m)
{
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

cuzk_err msm_stage_copy(cuzk_gpu_msm *m, size_t k, size_t n)
{
    const size_t lo = k * m->chunk, cnt = std::min(m->chunk, n - lo);
    const int s = (int)(k & 1);
    GPU_CHECK(cudaStreamWaitEvent(m->cstream, m->used[s], 0));
    GPU_CHECK(cudaMemcpyAsync(m->stage[s], m->hbases + lo * m->aff_bytes, cnt * m->aff_bytes,
                              cudaMemcpyHostToDevice, m->cstream));
    GPU_CHECK(cudaEventRecord(m->copied[s], m->cstream));
    return CUZK_OK;
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
                   chunk ? chunk : CUZK_GPU_MSM_CHUNK_DEFAULT, "cuzk_gpu_msm_new_streamed");
}

extern "C" bool cuzk_gpu_msm_streamed(const cuzk_gpu_msm *m)
{
    return m && m->streamed;
}
