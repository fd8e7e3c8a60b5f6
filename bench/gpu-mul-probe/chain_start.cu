/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 17, the products' instruction count: in the SASS of f_mul (session 11), a carry
 * chain that starts with mad.lo.cc (no carry in) is not issued as one wide multiply-add: its
 * first product becomes IMAD + IMAD.HI.U32.X, two instructions instead of one IMAD.WIDE.U32.X.
 * A Montgomery row has up to three such starts (the a b_i even chain, the reduction's odd
 * and even chains): about 3N of the 2N^2 + N multiply instructions of a product. This probe
 * tries starts with a carry in that is zero: Z0 as the library (mad.lo.cc), Z1 a carry
 * cleared by add.cc of a zero from the constant bank, Z2 by add.cc x + 0 of a live word, Z3
 * by add.cc x + ~x (no carry: the sum is 2^32 - 1). Each form is checked against the CPU
 * library on random values and edges, timed as one dependent chain a thread (256 threads a
 * block, 8 blocks a multiprocessor, best of 3), for Fp (12 words) and Fr (8, the low form's
 * rows); `cuobjdump --dump-sass` of this binary gives the instruction counts.
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I include -I src bench/gpu-mul-probe/chain_start.cu \
 *        BUILD/libcuzk.a -lgmp -o chain_start
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/ff/bls12_381.cuh"

#include "common.cuh"

static __constant__ uint32_t c_zero; /* 0; the compiler cannot see it */

/* The carry flag cleared before a chain that then starts with madc (Z > 0). */
template <int Z> __device__ __forceinline__ void chain_start(gpu_cc &c, uint32_t live)
{
    if constexpr (Z == 1) {
        (void)cc_add(c, c_zero, c_zero);
    } else if constexpr (Z == 2) {
        (void)cc_add(c, live, 0);
    } else if constexpr (Z == 3) {
        (void)cc_add(c, live, ~live);
    }
}
/* The first product of a chain: lo into d0 (carry out), then the caller's madc.hi. */
template <int Z>
__device__ __forceinline__ uint32_t first_lo(gpu_cc &c, uint32_t a, uint32_t b, uint32_t d)
{
    if constexpr (Z == 0 || Z == 4)
        return cc_mad_lo(c, a, b, d);
    else {
        chain_start<Z>(c, d);
        return cc_madc_lo(c, a, b, d);
    }
}

template <class P, int Z, class X>
__device__ __forceinline__ void even_chain(gpu_cc &c, uint32_t *ev, uint32_t *od, X x, uint32_t y)
{
    constexpr int N = P::N;
    ev[0] = first_lo<Z>(c, x(0), y, ev[0]);
    ev[1] = cc_madc_hi(c, x(0), y, ev[1]);
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        ev[j] = cc_madc_lo(c, x(j), y, ev[j]);
        ev[j + 1] = cc_madc_hi(c, x(j), y, ev[j + 1]);
    }
    od[N - 1] = cc_addc_end(c, od[N - 1], 0);
}

template <class P, int Z> __device__ __forceinline__ void reduce(uint32_t *ev, uint32_t *od)
{
    constexpr int N = P::N;
    if constexpr (mont_low_form<P>::value) {
        mont_row_reduce_low<P>(ev, od); /* its chains start with add.cc already */
    } else {
        gpu_cc c;
        const uint32_t m = ev[0] * P::n0();
        od[0] = first_lo<Z>(c, m, P::p(1), od[0]);
        od[1] = cc_madc_hi(c, m, P::p(1), od[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            od[j] = cc_madc_lo(c, m, P::p(j + 1), od[j]);
            od[j + 1] = cc_madc_hi(c, m, P::p(j + 1), od[j + 1]);
        }
        cc_none(c);
        even_chain<P, Z>(c, ev, od, [](int j) { return P::p(j); }, m);
    }
}

template <class P, int Z> __device__ __forceinline__ Fe<P> mul_z(const Fe<P> &a, const Fe<P> &b)
{
    constexpr int N = P::N;
    uint32_t x[N], y[N];
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        if constexpr (Z == 4) { /* the library's row 0 (mul.wide) */
            mul_wide(a.v[j], b.v[0], x[j], x[j + 1]);
            mul_wide(a.v[j + 1], b.v[0], y[j], y[j + 1]);
        } else {
            x[j] = mul_lo(a.v[j], b.v[0]);
            x[j + 1] = mul_hi(a.v[j], b.v[0]);
            y[j] = mul_lo(a.v[j + 1], b.v[0]);
            y[j + 1] = mul_hi(a.v[j + 1], b.v[0]);
        }
    }
    reduce<P, Z>(x, y);
#pragma unroll
    for (int i = 1; i < N; i++) {
        uint32_t *ev = (i & 1) ? y : x, *od = (i & 1) ? x : y;
        gpu_cc c;
        ev[0] = cc_add(c, ev[0], od[1]);
        mont_odd_chain_shift<P>(c, od, [&a](int j) { return a.v[j]; }, b.v[i]);
        even_chain<P, Z>(c, ev, od, [&a](int j) { return a.v[j]; }, b.v[i]);
        reduce<P, Z>(ev, od);
    }
    return f_reduce_once<P>(mont_last_division<P>(x, y), 0);
}

template <class P, int Z> __global__ void k_check(Fe<P> *out, const Fe<P> *a, const Fe<P> *b, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = mul_z<P, Z>(a[i], b[i]);
}

template <class P, int Z> __global__ void k_chain(Fe<P> *x, const Fe<P> *y, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    Fe<P> a = x[i];
    const Fe<P> b = y[i];
    for (int it = 0; it < iters; it++)
        a = mul_z<P, Z>(a, b);
    x[i] = a;
}

/* Random reduced values (a quarter with a zero word 0), 0, 1, p - 1. */
template <class T> static void fill(T *x, int i, const T &mod, int L)
{
    do {
        for (int k = 0; k < L; k++)
            x->l[k] = probe_rnd64();
        x->l[L - 1] &= (1ULL << 62) - 1;
    } while (x->l[L - 1] >= mod.l[L - 1]);
    if (i % 4 == 1)
        x->l[0] &= ~0xffffffffULL;
    if (i == 3)
        memset(x, 0, sizeof *x);
    if (i == 4)
        memset(x, 0, sizeof *x), x->l[0] = 1;
    if (i == 5)
        *x = mod, x->l[0] -= 1;
}

template <class P, class T, int Z>
static int run(const char *name, int L, const T &mod, void (*cpu_mul)(T *, const T *, const T *),
               int iters, int sms)
{
    const int n = 1 << 15, total = sms * 8 * 256;
    srand(5 + Z);
    int bad;
    const float best = probe_product_round<Fe<P>, T>(
        n, L, [&](T *x, int i) { fill(x, i, mod, L); }, cpu_mul,
        [&](Fe<P> *o, const Fe<P> *a, const Fe<P> *b) { k_check<P, Z><<<n / 256, 256, 0, cudaStreamLegacy>>>(o, a, b, n); },
        [&](Fe<P> *x, const Fe<P> *y) { k_chain<P, Z><<<sms * 8, 256, 0, cudaStreamLegacy>>>(x, y, iters); }, total, &bad);
    printf("| %s | Z%d | %d | %.2f | %.2f |\n", name, Z, bad, best,
           (double)total * iters / (best * 1e-3) / 1e9);
    return bad;
}

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 2000;
    CK(cudaSetDevice(0));
    if (gpu_consts_upload(0) != CUZK_OK)
        return 1;
    const int sms = probe_sms();
    printf("| field | start | differ (32768 against the CPU) | ms | G products/s |\n"
           "| --- | --- | --- | --- | --- |\n");
    int bad = 0;
    bad += run<FpP, cuzk_fp, 0>("fp", 6, CUZK_FP_MODULUS, cuzk_fp_mul, iters, sms);
    bad += run<FpP, cuzk_fp, 1>("fp", 6, CUZK_FP_MODULUS, cuzk_fp_mul, iters, sms);
    bad += run<FpP, cuzk_fp, 2>("fp", 6, CUZK_FP_MODULUS, cuzk_fp_mul, iters, sms);
    bad += run<FpP, cuzk_fp, 3>("fp", 6, CUZK_FP_MODULUS, cuzk_fp_mul, iters, sms);
    bad += run<FpP, cuzk_fp, 4>("fp", 6, CUZK_FP_MODULUS, cuzk_fp_mul, iters, sms);
    bad += run<FrP, cuzk_fr, 0>("fr", 4, CUZK_FR_MODULUS, cuzk_fr_mul, 2 * iters, sms);
    bad += run<FrP, cuzk_fr, 1>("fr", 4, CUZK_FR_MODULUS, cuzk_fr_mul, 2 * iters, sms);
    bad += run<FrP, cuzk_fr, 2>("fr", 4, CUZK_FR_MODULUS, cuzk_fr_mul, 2 * iters, sms);
    bad += run<FrP, cuzk_fr, 3>("fr", 4, CUZK_FR_MODULUS, cuzk_fr_mul, 2 * iters, sms);
    bad += run<FrP, cuzk_fr, 4>("fr", 4, CUZK_FR_MODULUS, cuzk_fr_mul, 2 * iters, sms);
    printf("check: %d products differ from the CPU's\n", bad);
    return bad ? 1 : 0;
}
