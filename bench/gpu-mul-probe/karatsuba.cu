/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 17, the next lever measured in session 11: the products' time follows their count of
 * IMAD-class instructions (bench/RESULTS.md). f_mul (mont.cuh) is word-serial: N^2 word
 * products for a b and N^2 for m p (Fp: 288 + 12 for the m; the SASS holds 330). This probe
 * holds a candidate with fewer: one level of Karatsuba for a b (three products of N/2 words:
 * 3 N^2 / 4 word products), then the Montgomery reduction of the low half alone (the
 * squaring's reduction steps, mont_row_reduce_shift, without its rows), then the high half
 * added: (T_lo + M p) / 2^(32N) <= p, + T_hi < 2p, one subtraction.
 *   a = a1 B^h + a0, b likewise (B = 2^32, h = N/2); z0 = a0 b0, z2 = a1 b1;
 *   (a0 + a1)(b0 + b1) = s_a s_b + (c_a s_b + c_b s_a) B^h + c_a c_b B^(2h)  (s, c: the sum's
 *   h words and carry); z1 = that - z0 - z2 = a0 b1 + a1 b0 < 2 B^N (N + 1 words);
 *   T = z0 + z1 B^h + z2 B^N.
 * Fp: 108 + 144 + 12 word products (against 300), Fr 48 + 64 + 8 (against 120 in the low
 * form), for more additions (about 150 for Fp). Bounds: a b < p^2 B^0 for reduced inputs (Fp:
 * also a, b < 2p, as f_mul), so T_hi < p and the sum < 2p.
 *
 * `karatsuba --host` checks f_mul_kar on the CPU against the CPU library (no GPU needed:
 * the code is __host__ __device__, its carry chains run with an explicit flag, and a carry
 * lost where the bounds say none is counted). Without --host, on a GPU: the same check on
 * the device, then G products/s of f_mul and f_mul_kar (one dependent chain a thread, 8
 * blocks of 256 a multiprocessor); `cuobjdump --dump-sass` of this binary gives their
 * instruction counts.
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I include -I src bench/gpu-mul-probe/karatsuba.cu \
 *        BUILD/libcuzk.a -lgmp -o karatsuba
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/ff/bls12_381.cuh"

#include "common.cuh"

/* t (2H words) = a b for H-word a, b: two accumulators as in f_mul (E: products of even
 * a_j, O: of odd a_j), each row's chain ending in a fresh word; then E + O. */
template <int H> GPU_HD void mul_plain(uint32_t *t, const uint32_t *a, const uint32_t *b)
{
    static_assert(H % 2 == 0, "even half");
    uint32_t E[2 * H + 1], O[2 * H + 1];
#pragma unroll
    for (int j = 0; j < H; j += 2) {
        mul_wide(a[j], b[0], E[j], E[j + 1]);
        mul_wide(a[j + 1], b[0], O[j + 1], O[j + 2]);
    }
    E[H] = 0;
    O[0] = 0;
    O[H + 1] = 0;
#pragma unroll
    for (int i = 1; i < H; i++) {
        gpu_cc c;
        E[i] = cc_mad_lo(c, a[0], b[i], E[i]);
        E[i + 1] = cc_madc_hi(c, a[0], b[i], E[i + 1]);
#pragma unroll
        for (int j = 2; j < H; j += 2) {
            E[i + j] = cc_madc_lo(c, a[j], b[i], E[i + j]);
            E[i + j + 1] = cc_madc_hi(c, a[j], b[i], E[i + j + 1]);
        }
        E[i + H] = cc_addc_end(c, 0, 0);
        O[i + 1] = cc_mad_lo(c, a[1], b[i], O[i + 1]);
        O[i + 2] = cc_madc_hi(c, a[1], b[i], O[i + 2]);
#pragma unroll
        for (int j = 3; j < H; j += 2) {
            O[i + j] = cc_madc_lo(c, a[j], b[i], O[i + j]);
            O[i + j + 1] = cc_madc_hi(c, a[j], b[i], O[i + j + 1]);
        }
        if (i + H + 1 <= 2 * H)
            O[i + H + 1] = cc_addc_end(c, 0, 0);
        else
            cc_none(c);
    }
    gpu_cc c;
    t[0] = E[0];
    t[1] = cc_add(c, E[1], O[1]);
#pragma unroll
    for (int k = 2; k < 2 * H; k++)
        t[k] = cc_addc(c, E[k], O[k]);
    cc_none(c); /* a b < B^(2H); O[2H] = 0 */
}

/* Montgomery product through Karatsuba and the low half's reduction (bounds above). */
template <class P> GPU_HD Fe<P> f_mul_kar(const Fe<P> &a, const Fe<P> &b)
{
    constexpr int N = P::N, H = N / 2;
    uint32_t z0[N], z2[N], z1[N + 1], sa[H], sb[H];
    mul_plain<H>(z0, a.v, b.v);
    mul_plain<H>(z2, a.v + H, b.v + H);
    gpu_cc c;
    sa[0] = cc_add(c, a.v[0], a.v[H]);
#pragma unroll
    for (int j = 1; j < H; j++)
        sa[j] = cc_addc(c, a.v[j], a.v[H + j]);
    const uint32_t ca = cc_addc_end(c, 0, 0);
    sb[0] = cc_add(c, b.v[0], b.v[H]);
#pragma unroll
    for (int j = 1; j < H; j++)
        sb[j] = cc_addc(c, b.v[j], b.v[H + j]);
    const uint32_t cb = cc_addc_end(c, 0, 0);
    mul_plain<H>(z1, sa, sb);
    /* + (c_a s_b + c_b s_a) B^h + c_a c_b B^(2h) */
    const uint32_t ma = 0u - ca, mb = 0u - cb;
    z1[H] = cc_add(c, z1[H], sb[0] & ma);
#pragma unroll
    for (int j = 1; j < H; j++)
        z1[H + j] = cc_addc(c, z1[H + j], sb[j] & ma);
    z1[N] = cc_addc_end(c, ca & cb, 0);
    z1[H] = cc_add(c, z1[H], sa[0] & mb);
#pragma unroll
    for (int j = 1; j < H; j++)
        z1[H + j] = cc_addc(c, z1[H + j], sa[j] & mb);
    z1[N] = cc_addc_end(c, z1[N], 0);
    /* - z0 - z2 (z1 stays >= 0: it ends as a0 b1 + a1 b0) */
    z1[0] = cc_sub(c, z1[0], z0[0]);
#pragma unroll
    for (int k = 1; k < N; k++)
        z1[k] = cc_subc(c, z1[k], z0[k]);
    z1[N] = cc_subc_end(c, z1[N], 0);
    z1[0] = cc_sub(c, z1[0], z2[0]);
#pragma unroll
    for (int k = 1; k < N; k++)
        z1[k] = cc_subc(c, z1[k], z2[k]);
    z1[N] = cc_subc_end(c, z1[N], 0);
    /* T = z0 + z1 B^h + z2 B^N: T_lo = z0 with words h.. and T_hi = z2 with z1 added */
    uint32_t lo[N], hi[N];
#pragma unroll
    for (int k = 0; k < H; k++)
        lo[k] = z0[k];
    lo[H] = cc_add(c, z0[H], z1[0]);
#pragma unroll
    for (int k = 1; k < H; k++)
        lo[H + k] = cc_addc(c, z0[H + k], z1[k]);
#pragma unroll
    for (int k = 0; k <= H; k++)
        hi[k] = cc_addc(c, z2[k], z1[H + k]);
#pragma unroll
    for (int k = H + 1; k < N; k++)
        hi[k] = cc_addc(c, z2[k], 0);
    cc_none(c); /* T < B^(2N) */
    /* (T_lo + M p) / B^N: the squaring's reduction steps without its rows */
    uint32_t x[N], y[N];
#pragma unroll
    for (int k = 0; k < N; k++)
        x[k] = lo[k], y[k] = 0;
    mont_row_reduce<P>(x, y);
#pragma unroll
    for (int i = 1; i < N; i += 2) {
        mont_row_reduce_shift<P>(y, x);
        if (i + 1 < N)
            mont_row_reduce_shift<P>(x, y);
    }
    const Fe<P> q = mont_last_division<P>(x, y); /* <= p */
    Fe<P> r;
    r.v[0] = cc_add(c, q.v[0], hi[0]);
#pragma unroll
    for (int k = 1; k < N; k++)
        r.v[k] = cc_addc(c, q.v[k], hi[k]);
    cc_none(c); /* < 2p */
    return f_reduce_once<P>(r, 0);
}

template <class P, int K> __global__ void k_check(Fe<P> *out, const Fe<P> *a, const Fe<P> *b, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = K ? f_mul_kar<P>(a[i], b[i]) : f_mul<P>(a[i], b[i]);
}
template <class P, int K> __global__ void k_chain(Fe<P> *x, const Fe<P> *y, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    Fe<P> a = x[i];
    const Fe<P> b = y[i];
    for (int it = 0; it < iters; it++)
        a = K ? f_mul_kar<P>(a, b) : f_mul<P>(a, b);
    x[i] = a;
}

/* i-th input: random reduced (or, lazy, below 2p), words of all ones or zeros mixed, 0, 1,
 * p - 1. */
template <class T> static void fill(T *x, int i, const T &mod, int L, bool lazy)
{
    T lim = mod;
    if (lazy) { /* 2p */
        uint64_t cr = 0;
        for (int k = 0; k < L; k++) {
            const uint64_t s = mod.l[k] + mod.l[k] + cr;
            cr = (mod.l[k] >> 63) | (s < mod.l[k] + mod.l[k]);
            lim.l[k] = s;
        }
    }
    for (;;) {
        for (int k = 0; k < L; k++) {
            const uint64_t r = probe_rnd64();
            x->l[k] = (i % 3 == 1) ? ((r & 1) ? ~0ULL : (r & 2) ? 0 : probe_rnd64()) : r;
        }
        x->l[L - 1] &= (~0ULL) >> __builtin_clzll(lim.l[L - 1]);
        int k = L - 1;
        while (k > 0 && x->l[k] == lim.l[k])
            k--;
        if (x->l[k] < lim.l[k])
            break;
    }
    if (i == 3)
        memset(x, 0, sizeof *x);
    if (i == 4)
        memset(x, 0, sizeof *x), x->l[0] = 1;
    if (i == 5)
        *x = mod, x->l[0] -= 1;
}

/* host: f_mul_kar == cpu product (inputs reduced mod p first) == f_mul, no carry lost */
template <class P, class T>
static int host_check(const char *name, int L, const T &mod, void (*cpu_mul)(T *, const T *, const T *),
                      void (*cpu_red)(T *, const T *), int n, bool lazy)
{
    int bad = 0;
    srand(17);
    for (int i = 0; i < n; i++) {
        T x, y, w, xr, yr;
        fill(&x, i, mod, L, lazy);
        fill(&y, i + 5, mod, L, lazy);
        Fe<P> a, b;
        memcpy(a.v, x.l, 8 * L);
        memcpy(b.v, y.l, 8 * L);
        cpu_red(&xr, &x);
        cpu_red(&yr, &y);
        cpu_mul(&w, &xr, &yr);
        const Fe<P> k = f_mul_kar<P>(a, b), m = f_mul<P>(a, b);
        if (memcmp(k.v, w.l, 8 * L) || memcmp(m.v, w.l, 8 * L))
            bad++;
    }
    printf("host %s%s: %d products, %d differ, carries lost %d\n", name, lazy ? " (below 2p)" : "",
           n, bad, gpu_cc_lost_);
    return bad + gpu_cc_lost_;
}
static void fp_red(cuzk_fp *r, const cuzk_fp *a)
{
    cuzk_fp z;
    memset(&z, 0, sizeof z);
    cuzk_fp_add(r, a, &z); /* a < 2p: add reduces once */
}
static void fr_red(cuzk_fr *r, const cuzk_fr *a) { *r = *a; }

template <class P, class T, int K>
static int dev_run(const char *name, int L, const T &mod, void (*cpu_mul)(T *, const T *, const T *),
                   int iters, int sms)
{
    const int n = 1 << 15, total = sms * 8 * 256;
    srand(23);
    int bad;
    const float best = probe_product_round<Fe<P>, T>(
        n, L, [&](T *x, int i) { fill(x, i, mod, L, false); }, cpu_mul,
        [&](Fe<P> *o, const Fe<P> *a, const Fe<P> *b) { k_check<P, K><<<n / 256, 256, 0, cudaStreamLegacy>>>(o, a, b, n); },
        [&](Fe<P> *x, const Fe<P> *y) { k_chain<P, K><<<sms * 8, 256, 0, cudaStreamLegacy>>>(x, y, iters); }, total, &bad);
    printf("| %s | %s | %d | %.2f | %.2f |\n", name, K ? "karatsuba" : "f_mul", bad, best,
           (double)total * iters / (best * 1e-3) / 1e9);
    return bad;
}

int main(int argc, char **argv)
{
    gpu_consts_host_init();
    int bad = 0;
    bad += host_check<FpP, cuzk_fp>("fp", 6, CUZK_FP_MODULUS, cuzk_fp_mul, fp_red, 20000, false);
    bad += host_check<FpP, cuzk_fp>("fp", 6, CUZK_FP_MODULUS, cuzk_fp_mul, fp_red, 20000, true);
    bad += host_check<FrP, cuzk_fr>("fr", 4, CUZK_FR_MODULUS, cuzk_fr_mul, fr_red, 20000, false);
    if (bad || (argc > 1 && strcmp(argv[1], "--host") == 0))
        return bad ? 1 : 0;
    const int iters = argc > 1 ? atoi(argv[1]) : 2000;
    CK(cudaSetDevice(0));
    if (gpu_consts_upload(0) != CUZK_OK)
        return 1;
    const int sms = probe_sms();
    printf("| field | product | differ (32768 against the CPU) | ms | G products/s |\n"
           "| --- | --- | --- | --- | --- |\n");
    bad += dev_run<FpP, cuzk_fp, 0>("fp", 6, CUZK_FP_MODULUS, cuzk_fp_mul, iters, sms);
    bad += dev_run<FpP, cuzk_fp, 1>("fp", 6, CUZK_FP_MODULUS, cuzk_fp_mul, iters, sms);
    bad += dev_run<FrP, cuzk_fr, 0>("fr", 4, CUZK_FR_MODULUS, cuzk_fr_mul, 2 * iters, sms);
    bad += dev_run<FrP, cuzk_fr, 1>("fr", 4, CUZK_FR_MODULUS, cuzk_fr_mul, 2 * iters, sms);
    printf("check: %d device products differ from the CPU's\n", bad);
    return bad ? 1 : 0;
}
