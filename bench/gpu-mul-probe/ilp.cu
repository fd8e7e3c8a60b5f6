/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 17, the G1 MSM's accumulation: Nsight Compute (session 11) shows the XYZZ
 * accumulation kernel at 2.4 active warps a scheduler (168 registers a thread, 3 blocks of
 * 128 a multiprocessor), issue slots 29 % busy, the top stall a fixed-latency dependency: it
 * waits on latency, not on a pipe. This probe asks whether a thread with two independent
 * streams (two accumulators, interleaved in one basic block) gets more done at that
 * occupancy: mixed XYZZ additions acc += P_i (the library's xyzz_add_affine; P_i from a
 * table of affine points, as the buckets do) with S = 1 or 2 accumulators a thread, 128
 * threads a block, B = 1..3 blocks a multiprocessor. The S = 2 kernel's sums are checked
 * against S = 1's (the same additions in two halves). Additions per second, best of 3.
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I include -I src bench/gpu-mul-probe/ilp.cu \
 *        BUILD/libcuzk.a -lgmp -o ilp
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/ec.h"
#include "gpu/ec/xyzz.cuh"

#include "common.cuh"

#define NPTS 4096 /* the table of points (a power of two) */

/* One accumulator a thread: acc = sum of pts[(t + i) mod NPTS], i < iters. */
__global__ void __launch_bounds__(128, 3) k_s1(g1_xyzz_t *out, const g1_aff_t *__restrict__ pts, int iters)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    g1_xyzz_t acc;
    xyzz_set_inf(acc);
    for (int i = 0; i < iters; i++) {
        const g1_aff_t p = pts[(t + i) & (NPTS - 1)];
        xyzz_add_affine(acc, p.x, p.y);
    }
    out[t] = acc;
}

/* Two accumulators a thread, the sums of threads 2u and 2u + 1 of k_s1 (u this thread):
 * both loads first, then both additions. */
template <int MINB>
__global__ void __launch_bounds__(128, MINB) k_s2(g1_xyzz_t *out, const g1_aff_t *__restrict__ pts, int iters)
{
    const unsigned u = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned t0 = 2 * u, t1 = 2 * u + 1;
    g1_xyzz_t a0, a1;
    xyzz_set_inf(a0);
    xyzz_set_inf(a1);
    for (int i = 0; i < iters; i++) {
        const g1_aff_t p0 = pts[(t0 + i) & (NPTS - 1)];
        const g1_aff_t p1 = pts[(t1 + i) & (NPTS - 1)];
        xyzz_add_affine(a0, p0.x, p0.y);
        xyzz_add_affine(a1, p1.x, p1.y);
    }
    out[t0] = a0;
    out[t1] = a1;
}

/* Points: the multiples k G of a point from the CPU library (distinct, not infinity). */
int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 200;
    CK(cudaSetDevice(0));
    if (gpu_consts_upload(0) != CUZK_OK)
        return 1;
    g1_aff_t *hp = (g1_aff_t *)malloc(NPTS * sizeof(g1_aff_t));
    {
        cuzk_g1_affine g, a;
        cuzk_g1_jac acc;
        cuzk_g1_generator(&g);
        cuzk_g1_jac_from_affine(&acc, &g);
        for (int i = 0; i < NPTS; i++) {
            cuzk_g1_jac_to_affine(&a, &acc);
            memcpy(hp[i].x.v, a.x.l, 48);
            memcpy(hp[i].y.v, a.y.l, 48);
            cuzk_g1_jac_add_affine_var(&acc, &acc, &g);
        }
    }
    g1_aff_t *dp;
    CK(cudaMalloc(&dp, NPTS * sizeof(g1_aff_t)));
    CK(cudaMemcpy(dp, hp, NPTS * sizeof(g1_aff_t), cudaMemcpyHostToDevice));
    const int sms = probe_sms();
    printf("| kernel | registers bound | ms | G additions/s |\n| --- | --- | --- | --- |\n");
    const int streams = sms * 128 * 24; /* accumulators in all: many waves for each kernel */
    g1_xyzz_t *o1, *o2;
    CK(cudaMalloc(&o1, streams * sizeof(g1_xyzz_t)));
    CK(cudaMalloc(&o2, streams * sizeof(g1_xyzz_t)));
    g1_xyzz_t *h1 = (g1_xyzz_t *)malloc(streams * sizeof(g1_xyzz_t));
    g1_xyzz_t *h2 = (g1_xyzz_t *)malloc(streams * sizeof(g1_xyzz_t));
    int bad = 0;
    for (int K = 0; K < 3; K++) {
        CK(cudaMemset(o2, 0x11, streams * sizeof(g1_xyzz_t)));
        const float best = probe_best_ms([&] {
            if (K == 0)
                k_s1<<<streams / 128, 128, 0, cudaStreamLegacy>>>(o1, dp, iters);
            else if (K == 1)
                k_s2<1><<<streams / 256, 128, 0, cudaStreamLegacy>>>(o2, dp, iters);
            else
                k_s2<2><<<streams / 256, 128, 0, cudaStreamLegacy>>>(o2, dp, iters);
        });
        printf("| %s | %s | %.2f | %.3f |\n", K == 0 ? "one accumulator a thread" : "two accumulators a thread",
               K == 0 ? "3 blocks of 128" : K == 1 ? "1 block" : "2 blocks", best,
               (double)streams * iters / (best * 1e-3) / 1e9);
        if (K > 0) {
            CK(cudaMemcpy(h1, o1, streams * sizeof(g1_xyzz_t), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(h2, o2, streams * sizeof(g1_xyzz_t), cudaMemcpyDeviceToHost));
            int nb = 0;
            for (int i = 0; i < streams; i++)
                nb += memcmp(&h1[i], &h2[i], sizeof h1[i]) != 0;
            printf("check: %d of %d sums differ from one accumulator a thread's\n", nb, streams);
            bad += nb;
        }
    }
    return bad ? 1 : 0;
}
