/*
 * Subgroup membership of many points on the device (cuzk/gpu.h), for checking the vectors
 * of a decoded .params file: the CPU does about 0.2 M G1 points a second on 16 cores, so a
 * 2^27 file would take most of an hour; the device does them at the speed of the copies.
 *
 * The tests are the CPU's (src/ec/g1.c, g2.c; Scott, ePrint 2021/1130), with x the BLS
 * parameter (x = -|x|, |x| = 0xd201000000010000):
 *   G1: P is in G1 iff sigma(P) = -x^2 P, checked as sigma(P) + |x|(|x| P) = O, with
 *       sigma(x, y) = (beta x, y);
 *   G2: P is in G2 iff psi(P) = x P, checked as psi(P) + |x| P = O, with
 *       psi(x, y) = (conj(x) cx, conj(y) cy).
 * One thread per point: |x| P by double-and-add from the top bit (63 doublings, 5 mixed
 * additions), in XYZZ coordinates. Points are expected on the curve (the decoder checks
 * that); infinity passes, as on the CPU.
 *
 * The points are streamed in chunks (copies from the host overlapping the previous chunk's
 * kernel on a second buffer); the first failing index is kept with atomicMin.
 */
#include <stdlib.h>
#include <string.h>

#include "cuzk/ec.h"
#include "cuzk/gpu.h"
extern "C" {
#include "ec/ec_internal.h"
}
#include "gpu/device.cuh"
#include "gpu/ec/xyzz.cuh"
#include "gpu/error.cuh"
#include "gpu/mem.cuh"

#define SG_THREADS 128
#define SG_CHUNK ((size_t)1 << 21) /* points per chunk */
#define SG_ABS_X 0xd201000000010000ULL

/* r = |x| a for a affine, not infinity (bits of |x| from the top: doublings, and mixed
 * additions of a for the set bits below the top one). */
template <class F>
__device__ __forceinline__ void sg_mul_abs_x(xyzz_t<F> &r, const F &x, const F &y)
{
    xyzz_set_inf(r);
    xyzz_add_affine(r, x, y);
    for (int b = 62; b >= 0; b--) {
        xyzz_dbl(r, r);
        if ((SG_ABS_X >> b) & 1)
            xyzz_add_affine(r, x, y);
    }
}

/* r = |x| a for a in XYZZ coordinates (full additions). */
template <class F>
__device__ __forceinline__ void sg_mul_abs_x_xyzz(xyzz_t<F> &r, const xyzz_t<F> &a)
{
    r = a;
    for (int b = 62; b >= 0; b--) {
        xyzz_dbl(r, r);
        if ((SG_ABS_X >> b) & 1)
            xyzz_add(r, a);
    }
}

struct sg_consts {
    fp_t beta;    /* sigma's cube root of unity */
    fp2_t cx, cy; /* psi's constants */
};

__device__ __forceinline__ fp2_t sg_conj(const fp2_t &a)
{
    fp2_t r;
    r.c0 = a.c0;
    r.c1 = fe_neg(a.c1);
    return r;
}

/* G1: sigma(P) + |x|(|x| P) = O */
__device__ __forceinline__ bool sg_in(const g1_aff_t &p, const sg_consts &k)
{
    xyzz_t<fp_t> q, q2;
    sg_mul_abs_x(q, p.x, p.y);
    sg_mul_abs_x_xyzz(q2, q);
    xyzz_add_affine(q2, fe_mul(p.x, k.beta), p.y);
    return xyzz_is_inf(q2);
}

/* G2: psi(P) + |x| P = O */
__device__ __forceinline__ bool sg_in(const g2_aff_t &p, const sg_consts &k)
{
    xyzz_t<fp2_t> q;
    sg_mul_abs_x(q, p.x, p.y);
    xyzz_add_affine(q, fe_mul(sg_conj(p.x), k.cx), fe_mul(sg_conj(p.y), k.cy));
    return xyzz_is_inf(q);
}

template <class A>
__global__ void __launch_bounds__(SG_THREADS)
sg_kernel(const A *__restrict__ pts, size_t n, size_t base, sg_consts k,
          unsigned long long *first_bad)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const A p = ld_vec(pts + i);
    if (!aff_is_inf(p) && !sg_in(p, k))
        atomicMin(first_bad, (unsigned long long)(base + i));
}

extern "C" cuzk_err cuzk_gpu_subgroup_check(const void *pts, size_t n, int group, int device,
                                           size_t *first_bad)
{
    if (!first_bad || (n && !pts) || (group != 1 && group != 2))
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_subgroup_check: bad arguments");
    *first_bad = n;
    if (n == 0)
        return CUZK_OK;
    GPU_TRY(gpu_use_device(device));
    const size_t psize = group == 1 ? sizeof(g1_aff_t) : sizeof(g2_aff_t);
    const size_t chunk = n < SG_CHUNK ? n : SG_CHUNK;
    void *buf[2] = {NULL, NULL};
    unsigned long long *dbad = NULL;
    cudaStream_t st[2] = {NULL, NULL};
    cuzk_err e = CUZK_OK;
    cudaError_t ce = cudaSuccess;
    sg_consts kc;
    {
        cuzk_fp b;
        cuzk_g1_beta_(&b);
        memcpy(&kc.beta, &b, sizeof kc.beta);
        cuzk_fp2 hx, hy;
        cuzk_g2_psi_consts_(&hx, &hy);
        memcpy(&kc.cx, &hx, sizeof kc.cx);
        memcpy(&kc.cy, &hy, sizeof kc.cy);
    }
    const unsigned long long none = ~0ULL;
    for (int k = 0; k < 2 && ce == cudaSuccess; k++) {
        ce = cudaMalloc(&buf[k], chunk * psize);
        if (ce == cudaSuccess)
            ce = cudaStreamCreateWithFlags(&st[k], cudaStreamNonBlocking);
    }
    if (ce == cudaSuccess)
        ce = cudaMalloc((void **)&dbad, sizeof *dbad);
    if (ce == cudaSuccess)
        ce = cudaMemcpy(dbad, &none, sizeof none, cudaMemcpyHostToDevice);
    /* chunk c on stream c % 2: its copy waits only for the kernel two chunks back (same
     * stream), so it overlaps the other stream's kernel */
    for (size_t off = 0, c = 0; ce == cudaSuccess && off < n; off += chunk, c++) {
        const size_t m = n - off < chunk ? n - off : chunk;
        const int s = (int)(c & 1);
        ce = cudaMemcpyAsync(buf[s], (const char *)pts + off * psize, m * psize,
                             cudaMemcpyHostToDevice, st[s]);
        if (ce != cudaSuccess)
            break;
        if (group == 1)
            sg_kernel<<<gpu_blocks(m, SG_THREADS), SG_THREADS, 0, st[s]>>>(
                (const g1_aff_t *)buf[s], m, off, kc, dbad);
        else
            sg_kernel<<<gpu_blocks(m, SG_THREADS), SG_THREADS, 0, st[s]>>>(
                (const g2_aff_t *)buf[s], m, off, kc, dbad);
        ce = cudaGetLastError();
    }
    for (int k = 0; k < 2; k++)
        if (st[k] && ce == cudaSuccess)
            ce = cudaStreamSynchronize(st[k]);
    unsigned long long bad = none;
    if (ce == cudaSuccess)
        ce = cudaMemcpy(&bad, dbad, sizeof bad, cudaMemcpyDeviceToHost);
    if (ce != cudaSuccess) {
        e = cuzk_error_set(CUZK_EGPU, "cuzk_gpu_subgroup_check (%s, %zu points, device %d): %s",
                           group == 1 ? "G1" : "G2", n, device, cudaGetErrorString(ce));
        (void)cudaGetLastError();
    } else {
        *first_bad = bad < n ? (size_t)bad : n;
    }
    for (int k = 0; k < 2; k++) {
        if (st[k])
            (void)cudaStreamSynchronize(st[k]), (void)cudaStreamDestroy(st[k]);
        if (buf[k])
            (void)cudaFree(buf[k]);
    }
    if (dbad)
        (void)cudaFree(dbad);
    return e;
}
