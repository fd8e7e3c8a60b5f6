/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 17, the NTT's product: Fr Montgomery products per second on the device with the
 * reduction rows of mont_row_reduce_low (r's words 0 and 1 are 1 and 2^32 - 1: no products
 * by them) against the rows with every product (mont_row_reduce_any, through a parameter
 * struct of the same constants without the specialisation), and formulations V0-V7 of the
 * row (red_v below) with the opcode counts of their SASS (cuobjdump) beside. Checked first: both
 * forms on the device against each other and the CPU library's cuzk_fr_mul, on random
 * values, values with word 0 zero, 0, 1 and r - 1.
 * Timed: (a) one dependent chain of products a thread; (b) the NTT's butterfly mix, a
 * dependent chain of (u, v) -> (u + v, (u - v) w). 256 threads a block, 2-8 blocks a
 * multiprocessor, best of 3 after a warm-up.
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I include -I src bench/gpu-mul-probe/fr_low.cu \
 *        BUILD/libcuzk.a -o fr_low
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/ff/bls12_381.cuh"

#include "common.cuh"

GPU_FIELD_PARAMS(FrAnyP, 8, fr)

/* Formulations of the low-form reduction row, to find one that ptxas keeps as wide
 * multiply-adds (IMAD.WIDE.U32.X): V0 every product (mont_row_reduce_any), V1 m = -t_0 and
 * hi(m p_1) by a select (t_0 ? ~t_0 : 0), the odd chain first, V2 m = -t_0 and m p_0 as additions but m p_1 still a product, V3 as V1
 * with hi(m p_1) = m - c_0, c_0 = (t_0 | m) >> 31 (no select), V4 as V3 with the even chain
 * first; V5-V7 with m = t_0 n0 formed by a multiplication (n0 from the constant bank) as in
 * V0: V5 only m p_0 as additions, V6 as V3, V7 as V4 (the library's mont_row_reduce_low). */
template <int V> GPU_HD void red_v(uint32_t *ev, uint32_t *od)
{
    typedef FrP P;
    constexpr int N = P::N;
    if constexpr (V == 0) {
        mont_row_reduce_any<P>(ev, od);
    } else if constexpr (V == 1) {
        gpu_cc c;
        const uint32_t t0 = ev[0];
        const uint32_t m = 0u - t0;
        const uint32_t mh = t0 ? ~t0 : 0u;
        od[1] = cc_add(c, od[1], mh);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            od[j] = cc_madc_lo(c, m, P::p(j + 1), od[j]);
            od[j + 1] = cc_madc_hi(c, m, P::p(j + 1), od[j + 1]);
        }
        cc_none(c);
        ev[0] = cc_add(c, ev[0], m);
        ev[1] = cc_addc(c, ev[1], t0);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            ev[j] = cc_madc_lo(c, m, P::p(j), ev[j]);
            ev[j + 1] = cc_madc_hi(c, m, P::p(j), ev[j + 1]);
        }
        od[N - 1] = cc_addc_end(c, od[N - 1], 0);
    } else if constexpr (V == 2 || V == 5) {
        gpu_cc c;
        const uint32_t m = V == 5 ? ev[0] * P::n0() : 0u - ev[0];
        od[0] = cc_mad_lo(c, m, P::p(1), od[0]);
        od[1] = cc_madc_hi(c, m, P::p(1), od[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            od[j] = cc_madc_lo(c, m, P::p(j + 1), od[j]);
            od[j + 1] = cc_madc_hi(c, m, P::p(j + 1), od[j + 1]);
        }
        cc_none(c);
        ev[0] = cc_add(c, ev[0], m);
        ev[1] = cc_addc(c, ev[1], 0);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            ev[j] = cc_madc_lo(c, m, P::p(j), ev[j]);
            ev[j + 1] = cc_madc_hi(c, m, P::p(j), ev[j + 1]);
        }
        od[N - 1] = cc_addc_end(c, od[N - 1], 0);
    } else if constexpr (V == 7) {
        mont_row_reduce_low<P>(ev, od);
    } else { /* V3, V4, V6 */
        gpu_cc c;
        const uint32_t t0 = ev[0];
        const uint32_t m = V == 6 ? t0 * P::n0() : 0u - t0;
        const uint32_t mh = m - ((t0 | m) >> 31);
        const auto odd = [&] {
            od[1] = cc_add(c, od[1], mh);
#pragma unroll
            for (int j = 2; j < N; j += 2) {
                od[j] = cc_madc_lo(c, m, P::p(j + 1), od[j]);
                od[j + 1] = cc_madc_hi(c, m, P::p(j + 1), od[j + 1]);
            }
            cc_none(c);
        };
        if constexpr (V != 4)
            odd();
        ev[0] = cc_add(c, ev[0], m);
        ev[1] = cc_addc(c, ev[1], t0);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            ev[j] = cc_madc_lo(c, m, P::p(j), ev[j]);
            ev[j + 1] = cc_madc_hi(c, m, P::p(j), ev[j + 1]);
        }
        od[N - 1] = cc_addc_end(c, od[N - 1], 0);
        if constexpr (V == 4)
            odd();
    }
}
#define NV 8

/* f_mul<FrP> with the row reduction red_v<V> (mont_row0 / mont_row / f_mul_raw's shape). */
template <int V> GPU_HD fr_t mul_v(const fr_t &a, const fr_t &b)
{
    constexpr int N = 8;
    uint32_t x[N], y[N];
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        x[j] = mul_lo(a.v[j], b.v[0]);
        x[j + 1] = mul_hi(a.v[j], b.v[0]);
        y[j] = mul_lo(a.v[j + 1], b.v[0]);
        y[j + 1] = mul_hi(a.v[j + 1], b.v[0]);
    }
    red_v<V>(x, y);
#pragma unroll
    for (int i = 1; i < N; i++) {
        uint32_t *ev = (i & 1) ? y : x, *od = (i & 1) ? x : y;
        gpu_cc c;
        ev[0] = cc_add(c, ev[0], od[1]);
        mont_odd_chain_shift<FrP>(c, od, [&a](int j) { return a.v[j]; }, b.v[i]);
        mont_even_chain<FrP>(c, ev, od, [&a](int j) { return a.v[j]; }, b.v[i]);
        red_v<V>(ev, od);
    }
    return f_reduce_once<FrP>(mont_last_division<FrP>(x, y), 0);
}

template <class P> __device__ __forceinline__ Fe<P> cast(const fr_t &x)
{
    Fe<P> r;
#pragma unroll
    for (int j = 0; j < 8; j++)
        r.v[j] = x.v[j];
    return r;
}
template <class P> __device__ __forceinline__ fr_t back(const Fe<P> &x)
{
    fr_t r;
#pragma unroll
    for (int j = 0; j < 8; j++)
        r.v[j] = x.v[j];
    return r;
}

__global__ void k_check(fr_t *lo, fr_t *any, fr_t *var, const fr_t *a, const fr_t *b, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    lo[i] = f_mul<FrP>(a[i], b[i]);
    any[i] = back(f_mul<FrAnyP>(cast<FrAnyP>(a[i]), cast<FrAnyP>(b[i])));
    var[i] = mul_v<0>(a[i], b[i]);
    var[n + i] = mul_v<1>(a[i], b[i]);
    var[2 * n + i] = mul_v<2>(a[i], b[i]);
    var[3 * n + i] = mul_v<3>(a[i], b[i]);
    var[4 * n + i] = mul_v<4>(a[i], b[i]);
    var[5 * n + i] = mul_v<5>(a[i], b[i]);
    var[6 * n + i] = mul_v<6>(a[i], b[i]);
    var[7 * n + i] = mul_v<7>(a[i], b[i]);
}

template <int V> __global__ void k_vchain(fr_t *x, const fr_t *y, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    fr_t a = x[i];
    const fr_t b = y[i];
    for (int it = 0; it < iters; it++)
        a = mul_v<V>(a, b);
    x[i] = a;
}

template <int V> __global__ void k_vbfly(fr_t *x, fr_t *z, const fr_t *y, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    fr_t u = x[i], v = z[i];
    const fr_t w = y[i];
    for (int it = 0; it < iters; it++) {
        const fr_t d = f_sub<FrP>(u, v);
        u = f_add<FrP>(u, v);
        v = mul_v<V>(d, w);
    }
    x[i] = u;
    z[i] = v;
}

template <class P> __global__ void k_chain(fr_t *x, const fr_t *y, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    Fe<P> a = cast<P>(x[i]);
    const Fe<P> b = cast<P>(y[i]);
    for (int it = 0; it < iters; it++)
        a = f_mul<P>(a, b);
    x[i] = back(a);
}

template <class P> __global__ void k_bfly(fr_t *x, fr_t *z, const fr_t *y, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    Fe<P> u = cast<P>(x[i]), v = cast<P>(z[i]);
    const Fe<P> w = cast<P>(y[i]);
    for (int it = 0; it < iters; it++) {
        const Fe<P> d = f_sub<P>(u, v);
        u = f_add<P>(u, v);
        v = f_mul<P>(d, w);
    }
    x[i] = back(u);
    z[i] = back(v);
}

static void rand_fr(cuzk_fr *r)
{
    do {
        for (int k = 0; k < 4; k++)
            r->l[k] = probe_rnd64();
        r->l[3] &= (1ULL << 63) - 1;
    } while (r->l[3] >= CUZK_FR_MODULUS.l[3]);
}

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 4000;
    CK(cudaSetDevice(0));
    if (gpu_consts_upload(0) != CUZK_OK)
        return 1;
    const int n = 1 << 16;
    fr_t *ha = (fr_t *)malloc(n * sizeof(fr_t)), *hb = (fr_t *)malloc(n * sizeof(fr_t));
    fr_t *hl = (fr_t *)malloc(n * sizeof(fr_t)), *hg = (fr_t *)malloc(n * sizeof(fr_t));
    srand(11);
    for (int i = 0; i < n; i++) {
        cuzk_fr x, y;
        rand_fr(&x);
        rand_fr(&y);
        if (i % 7 == 1)
            x.l[0] &= ~0xffffffffULL;
        if (i % 7 == 2)
            x.l[0] = y.l[0] = 0;
        if (i == 3)
            memset(&x, 0, sizeof x);
        if (i == 4)
            cuzk_fr_set_one(&y);
        if (i == 5)
            x = CUZK_FR_MODULUS, x.l[0] -= 1;
        memcpy(ha[i].v, x.l, 32);
        memcpy(hb[i].v, y.l, 32);
    }
    fr_t *da, *db, *dl, *dg, *dv;
    fr_t *hv = (fr_t *)malloc(NV * n * sizeof(fr_t));
    CK(cudaMalloc(&dv, NV * n * sizeof(fr_t)));
    CK(cudaMemset(dv, 0x3c, NV * n * sizeof(fr_t)));
    CK(cudaMalloc(&da, n * sizeof(fr_t)));
    CK(cudaMalloc(&db, n * sizeof(fr_t)));
    CK(cudaMalloc(&dl, n * sizeof(fr_t)));
    CK(cudaMalloc(&dg, n * sizeof(fr_t)));
    CK(cudaMemcpy(da, ha, n * sizeof(fr_t), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb, n * sizeof(fr_t), cudaMemcpyHostToDevice));
    CK(cudaMemset(dl, 0x5a, n * sizeof(fr_t)));
    CK(cudaMemset(dg, 0xa5, n * sizeof(fr_t)));
    k_check<<<n / 256, 256, 0, cudaStreamLegacy>>>(dl, dg, dv, da, db, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hl, dl, n * sizeof(fr_t), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hg, dg, n * sizeof(fr_t), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hv, dv, NV * n * sizeof(fr_t), cudaMemcpyDeviceToHost));
    int bad = 0, vbad[NV] = {0};
    for (int i = 0; i < n; i++) {
        cuzk_fr x, y, w;
        memcpy(x.l, ha[i].v, 32);
        memcpy(y.l, hb[i].v, 32);
        cuzk_fr_mul(&w, &x, &y);
        if (memcmp(hl[i].v, w.l, 32) || memcmp(hg[i].v, w.l, 32))
            bad++;
        for (int v = 0; v < NV; v++)
            if (memcmp(hv[v * n + i].v, w.l, 32))
                vbad[v]++, bad++;
    }
    for (int v = 0; v < NV; v++)
        printf("check: formulation V%d: %d differ\n", v, vbad[v]);
    printf("check: Fr products, low form and every-product form against cuzk_fr_mul, %d inputs "
           "(0, 1, r - 1, word 0 zero among them): %d differ\n",
           n, bad);
    if (bad)
        return 1;

    const int sms = probe_sms();
    const int threads = 256;
    printf("| kernel | form | blocks/SM | ms | G products/s |\n| --- | --- | --- | --- | --- |\n");
    for (int bps = 2; bps <= 8; bps *= 2) {
        const int total = sms * bps * threads;
        fr_t *x, *z, *y;
        CK(cudaMalloc(&x, total * sizeof(fr_t)));
        CK(cudaMalloc(&z, total * sizeof(fr_t)));
        CK(cudaMalloc(&y, total * sizeof(fr_t)));
        for (int off = 0; off < total; off += n) {
            const int c = total - off < n ? total - off : n;
            CK(cudaMemcpy(x + off, ha, c * sizeof(fr_t), cudaMemcpyHostToDevice));
            CK(cudaMemcpy(z + off, hb, c * sizeof(fr_t), cudaMemcpyHostToDevice));
            CK(cudaMemcpy(y + off, hb, c * sizeof(fr_t), cudaMemcpyHostToDevice));
        }
        for (int mode = 0; mode < 4; mode++) {
            const float best = probe_best_ms([&] {
                switch (mode) {
                case 0: k_chain<FrAnyP><<<sms * bps, threads, 0, cudaStreamLegacy>>>(x, y, iters); break;
                case 1: k_chain<FrP><<<sms * bps, threads, 0, cudaStreamLegacy>>>(x, y, iters); break;
                case 2: k_bfly<FrAnyP><<<sms * bps, threads, 0, cudaStreamLegacy>>>(x, z, y, iters); break;
                default: k_bfly<FrP><<<sms * bps, threads, 0, cudaStreamLegacy>>>(x, z, y, iters); break;
                }
            });
            const double prods = (double)total * iters;
            printf("| %s | %s | %d | %.2f | %.2f |\n", mode < 2 ? "chain" : "butterfly",
                   mode & 1 ? "low" : "every product", bps, best, prods / (best * 1e-3) / 1e9);
        }
        if (bps == 8)
            for (int mode = 0; mode < 2 * NV; mode++) {
                const int v = mode % NV;
                const bool bf = mode >= NV;
                const float best = probe_best_ms([&] {
#define LAUNCH_V(V)                                                                   \
    if (v == V) {                                                                     \
        if (bf)                                                                       \
            k_vbfly<V><<<sms * bps, threads, 0, cudaStreamLegacy>>>(x, z, y, iters);                       \
        else                                                                          \
            k_vchain<V><<<sms * bps, threads, 0, cudaStreamLegacy>>>(x, y, iters);                         \
    }
                    LAUNCH_V(0) LAUNCH_V(1) LAUNCH_V(2) LAUNCH_V(3) LAUNCH_V(4)
                    LAUNCH_V(5) LAUNCH_V(6) LAUNCH_V(7)
                });
                const double prods = (double)total * iters;
                printf("| %s | V%d | %d | %.2f | %.2f |\n", mode < NV ? "chain" : "butterfly",
                       mode % NV, bps, best, prods / (best * 1e-3) / 1e9);
            }
        CK(cudaFree(x));
        CK(cudaFree(z));
        CK(cudaFree(y));
    }
    return 0;
}
