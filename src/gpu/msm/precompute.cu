/*
 * The precomputed multiples of a G1 context's bases (cuzk_gpu_msm_precompute, cuzk/gpu.h):
 * copy j of the bases (j = 0 .. W - 1, n_max apart in m->bases) holds 2^(c j) P_i, which the
 * digit pass of msm_pippenger then names for window j.
 */
#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/msm/affine.cuh" /* fp_inv_var */
#include "gpu/msm/msm.cuh"

/* Thread i: base i doubled c times per copy, each copy made affine with one (variable-time:
 * the bases are public) inversion of ZZ ZZZ: 1/ZZ = ZZZ / (ZZ ZZZ), 1/ZZZ = ZZ / (ZZ ZZZ). */
__global__ void msm_pre_kernel(g1_aff_t *b, size_t n, unsigned c, unsigned W, const fp_t r2)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const g1_aff_t p = ld_vec_rw(b + i);
    g1_xyzz_t acc;
    if (aff_is_inf(p)) {
        xyzz_set_inf(acc);
    } else {
        acc.x = p.x;
        acc.y = p.y;
        acc.zz = f_one<FpP>();
        acc.zzz = acc.zz;
    }
    for (unsigned j = 1; j < W; j++) {
        for (unsigned d = 0; d < c; d++)
            xyzz_dbl(acc, acc);
        g1_aff_t q;
        if (xyzz_is_inf(acc)) {
            q.x = f_zero<FpP>();
            q.y = q.x;
        } else {
            const fp_t inv = fp_inv_var(f_mul<FpP>(acc.zz, acc.zzz), r2);
            q.x = f_mul<FpP>(acc.x, f_mul<FpP>(acc.zzz, inv));
            q.y = f_mul<FpP>(acc.y, f_mul<FpP>(acc.zz, inv));
        }
        st_vec(b + (size_t)j * n + i, q);
    }
}

extern "C" cuzk_err cuzk_gpu_msm_precompute(cuzk_gpu_msm *m, unsigned window)
{
    if (!m)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_precompute: m is NULL");
    if (m->group != 1 || m->streamed)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_precompute: %s context",
                              m->group != 1 ? "a G2" : "a streamed");
    if (window > CUZK_GPU_MSM_WINDOW_MAX)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_precompute: window %u not in 0..%d",
                              window, CUZK_GPU_MSM_WINDOW_MAX);
    const size_t n = m->n_max;
    const unsigned c = window ? window : cuzk_gpu_msm_window_precomputed(n ? n : 1);
    const unsigned W = (256 + c - 1) / c;
    if ((uint64_t)W * n >= MSM_SIGN)
        return cuzk_error_set(CUZK_ESIZE,
                              "cuzk_gpu_msm_precompute: %u windows of %zu bases (at most 2^31 - 1 "
                              "in all)", W, n);
    GPU_TRY(gpu_use_device(m->device));
    if (n == 0) {
        m->pre_c = c;
        return CUZK_OK;
    }
    g1_aff_t *nb = NULL;
    if (cudaMalloc((void **)&nb, (size_t)W * n * sizeof(g1_aff_t)) != cudaSuccess) {
        (void)cudaGetLastError();
        return cuzk_error_set(CUZK_ENOMEM,
                              "cuzk_gpu_msm_precompute: %u copies of %zu bases (%.1f GiB) do not "
                              "fit the device", W, n,
                              (double)W * n * sizeof(g1_aff_t) / 1073741824.0);
    }
    fp_t r2;
    msm_aff_r2(&r2);
    cudaError_t ce = cudaMemcpyAsync(nb, m->bases, n * sizeof(g1_aff_t),
                                     cudaMemcpyDeviceToDevice, m->stream);
    if (ce == cudaSuccess) {
        msm_pre_kernel<<<gpu_blocks(n, 128), 128, 0, m->stream>>>(nb, n, c, W, r2);
        ce = cudaGetLastError();
    }
    if (ce == cudaSuccess)
        ce = cudaStreamSynchronize(m->stream);
    if (ce != cudaSuccess) {
        (void)cudaFree(nb);
        return gpu_fail(ce, "cuzk_gpu_msm_precompute", __FILE__, __LINE__);
    }
    GPU_CHECK(cudaFree(m->bases));
    m->bases = nb;
    m->pre_c = c;
    return CUZK_OK;
}
