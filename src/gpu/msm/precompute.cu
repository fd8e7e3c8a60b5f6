/*
 * The precomputed multiples of a context's bases (cuzk_gpu_msm_precompute, cuzk/gpu.h):
 * copy j of the bases (j = 0 .. W - 1, n_max apart in m->bases) holds 2^(c j) P_i, which the
 * digit pass of msm_pippenger then names for window j.
 */
#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/ff/fp2.cuh"
#include "gpu/msm/affine.cuh" /* fp_inv_var */
#include "gpu/msm/msm.cuh"

/* The inverse of a nonzero field element (variable time: the bases are public); Fp2:
 * (a0 - a1 u) / (a0^2 + a1^2). */
__device__ __forceinline__ fp_t pre_inv(const fp_t &a, const fp_t &r2) { return fp_inv_var(a, r2); }
__device__ __forceinline__ fp2_t pre_inv(const fp2_t &a, const fp_t &r2)
{
    const fp_t t = fp_inv_var(f_add<FpP>(f_sqr<FpP>(a.c0), f_sqr<FpP>(a.c1)), r2);
    fp2_t r;
    r.c0 = f_mul<FpP>(a.c0, t);
    r.c1 = f_neg<FpP>(f_mul<FpP>(a.c1, t));
    return r;
}

/* Thread i: base i doubled c times per copy; the copies made affine in groups of up to
 * PRE_GROUP with one inversion a group (Montgomery's trick over d_j = ZZ_j ZZZ_j): copy j is
 * first stored as (X ZZZ, Y ZZ), then both coordinates times 1/d_j (1/ZZ = ZZZ / d,
 * 1/ZZZ = ZZ / d). */
#define PRE_GROUP 16
template <class F>
__global__ void msm_pre_kernel(aff_t<F> *b, size_t n, unsigned c, unsigned W, const fp_t r2)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const aff_t<F> p = ld_vec_rw(b + i);
    xyzz_t<F> acc;
    if (aff_is_inf(p)) {
        xyzz_set_inf(acc);
    } else {
        acc.x = p.x;
        acc.y = p.y;
        fe_set_one(acc.zz);
        fe_set_one(acc.zzz);
    }
    F d[PRE_GROUP], pre[PRE_GROUP];
    for (unsigned j0 = 1; j0 < W; j0 += PRE_GROUP) {
        const unsigned g = W - j0 < PRE_GROUP ? W - j0 : PRE_GROUP;
        F run;
        fe_set_one(run);
        for (unsigned t = 0; t < g; t++) {
            for (unsigned k = 0; k < c; k++)
                xyzz_dbl(acc, acc);
            aff_t<F> q;
            if (xyzz_is_inf(acc)) { /* stays (0, 0); d = 1 */
                fe_set_zero(q.x);
                fe_set_zero(q.y);
                fe_set_one(d[t]);
            } else {
                q.x = fe_mul(acc.x, acc.zzz);
                q.y = fe_mul(acc.y, acc.zz);
                d[t] = fe_mul(acc.zz, acc.zzz);
            }
            run = t ? fe_mul(run, d[t]) : d[t];
            pre[t] = run;
            st_vec(b + (size_t)(j0 + t) * n + i, q);
        }
        F inv = pre_inv(run, r2);
        for (unsigned t = g; t-- > 0;) {
            F it = inv;
            if (t) {
                it = fe_mul(inv, pre[t - 1]);
                inv = fe_mul(inv, d[t]);
            }
            aff_t<F> *o = b + (size_t)(j0 + t) * n + i;
            aff_t<F> q = ld_vec_rw(o);
            q.x = fe_mul(q.x, it);
            q.y = fe_mul(q.y, it);
            st_vec(o, q);
        }
    }
}

template <class F> static cudaError_t pre_launch(cuzk_gpu_msm *m, void *nb, unsigned c, unsigned W,
                                                 const fp_t &r2)
{
    const size_t n = m->n_max;
    cudaError_t ce = cudaMemcpyAsync(nb, m->bases, n * sizeof(aff_t<F>), cudaMemcpyDeviceToDevice,
                                     m->stream);
    if (ce == cudaSuccess) {
        msm_pre_kernel<F><<<gpu_blocks(n, 128), 128, 0, m->stream>>>((aff_t<F> *)nb, n, c, W, r2);
        ce = cudaGetLastError();
    }
    return ce;
}

extern "C" cuzk_err cuzk_gpu_msm_precompute(cuzk_gpu_msm *m, unsigned window)
{
    if (!m)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_precompute: m is NULL");
    if (m->streamed)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_precompute: a streamed context");
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
    void *nb = NULL;
    const size_t bytes = (size_t)W * n * m->aff_bytes;
    if (cudaMalloc(&nb, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return cuzk_error_set(CUZK_ENOMEM,
                              "cuzk_gpu_msm_precompute: %u copies of %zu bases (%.1f GiB) do not "
                              "fit the device", W, n, (double)bytes / 1073741824.0);
    }
    fp_t r2;
    msm_aff_r2(&r2);
    cudaError_t ce = m->group == 1 ? pre_launch<fp_t>(m, nb, c, W, r2)
                                   : pre_launch<fp2_t>(m, nb, c, W, r2);
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
