/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 17's first step for the "products on the FP64 pipes" lever: 381-bit Montgomery
 * products per second on the H200 with the integer pipes (the library's f_mul, 12 x 32-bit
 * limbs, IMAD), with the FP64 pipes (8 x 48-bit limbs held in doubles, below), and with both
 * at once (each thread runs one chain of each, independent, so the scheduler can issue
 * the two kinds side by side). The FP64 product is checked against f_mul first (same
 * Montgomery radix R = 2^384, so the same residues).
 *
 * FP64 product, 48-bit limbs: a limb product ab < 2^96 is split exactly with two FMAs:
 * h = fma_rz(a, b, 2^100) - 2^100 = floor(ab / 2^48) 2^48 (the sum's ulp is 2^48 and
 * rounding toward zero floors), lo = fma(a, b, -h) = ab mod 2^48. Column sums of lo and
 * h 2^-48 parts (each below 2^48; the columns normalised between the product and the
 * reduction) stay below 2^53, exact. Montgomery reduction
 * word by word (SOS): normalise column i (its carry into column i + 1, trunc via
 * x + 2^52 - 2^52 in round-toward-zero), m = t_i n' mod 2^48 with the same split, add m p.
 * The result is below 2p (not reduced further: the benchmark's chains stay below 2p since
 * 4p^2 < 2^384 p).
 *   nvcc -O3 -arch=sm_90 -I include -I src bench/gpu-mul-probe/probe.cu BUILD/libcuzk.a -o probe
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/ff/bls12_381.cuh"

#define L 8 /* limbs of 48 bits */
static __constant__ double c_p48[L];
static __constant__ double c_np48; /* -p^-1 mod 2^48 */
static const double C100 = 0x1p100, C52 = 0x1p52, S48 = 0x1p48, I48 = 0x1p-48;

struct fd {
    double v[L];
};

/* (hi 2^-48, lo) of a b for a, b < 2^48 */
__device__ __forceinline__ void split(double a, double b, double &hs, double &lo) {
    double h = __dsub_rn(__fma_rz(a, b, C100), C100);
    lo = __fma_rn(a, b, -h);
    hs = h * I48;
}

__device__ __forceinline__ double trunc52(double x) { return __dsub_rn(__dadd_rz(x, C52), C52); }

__device__ __forceinline__ fd fd_mul(const fd &a, const fd &b) {
    double t[2 * L + 1];
#pragma unroll
    for (int k = 0; k < 2 * L + 1; k++)
        t[k] = 0;
#pragma unroll
    for (int i = 0; i < L; i++)
#pragma unroll
        for (int j = 0; j < L; j++) {
            double hs, lo;
            split(a.v[i], b.v[j], hs, lo);
            t[i + j] += lo;
            t[i + j + 1] += hs;
        }
        /* the columns (16 terms below 2^48 each) normalised, so that the reduction's 16 more
         * terms keep every column below 2^53 */
#pragma unroll
    for (int k = 0; k < 2 * L; k++) {
        double c = trunc52(t[k] * I48);
        t[k] = __fma_rn(-c, S48, t[k]);
        t[k + 1] += c;
    }
#pragma unroll
    for (int i = 0; i < L; i++) {
        double c = trunc52(t[i] * I48); /* carry out, then t[i] < 2^48 */
        t[i] = __fma_rn(-c, S48, t[i]);
        t[i + 1] += c;
        double ms, m;
        split(t[i], c_np48, ms, m); /* m = t[i] n' mod 2^48 */
#pragma unroll
        for (int j = 0; j < L; j++) {
            double hs, lo;
            split(m, c_p48[j], hs, lo);
            t[i + j] += lo;
            t[i + j + 1] += hs;
        }
        t[i + 1] += t[i] * I48; /* t[i] is now a multiple of 2^48: exact */
    }
    fd r;
#pragma unroll
    for (int k = L; k < 2 * L; k++) {
        double c = trunc52(t[k] * I48);
        r.v[k - L] = __fma_rn(-c, S48, t[k]);
        t[k + 1] += c;
    }
    return r;
}

__global__ void k_check(fp_t *out_i, fd *out_d, const fp_t *a, const fp_t *b, const fd *ad,
                        const fd *bd, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out_i[i] = f_mul<FpP>(a[i], b[i]);
    out_d[i] = fd_mul(ad[i], bd[i]);
}

template <int MODE> /* 0: integer, 1: FP64, 2: both */
__global__ void k_bench(fp_t *xi, fd *xd, const fp_t *b, const fd *bd, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    fp_t x = xi[i], y = b[i];
    fd u = xd[i], w = bd[i];
    for (int k = 0; k < iters; k++) {
        if (MODE != 1)
            x = f_mul_raw<FpP>(x, y);
        if (MODE != 0)
            u = fd_mul(u, w);
    }
    if (MODE != 1)
        xi[i] = x;
    if (MODE != 0)
        xd[i] = u;
}

/* 12 x 32 -> 8 x 48 */
static void to48(double o[L], const uint32_t v[12]) {
    for (int j = 0; j < L; j++) {
        uint64_t x = 0;
        for (int b = 0; b < 48; b++) {
            int bit = 48 * j + b;
            if (bit < 384 && (v[bit / 32] >> (bit % 32) & 1))
                x |= 1ULL << b;
        }
        o[j] = (double)x;
    }
}

/* 8 x 48 (each < 2^48 after normalisation) -> 13 x 32 */
static void from48(uint32_t o[13], const double v[L]) {
    memset(o, 0, 13 * 4);
    for (int j = 0; j < L; j++) {
        uint64_t x = (uint64_t)v[j];
        for (int b = 0; b < 48; b++)
            if (x >> b & 1)
                o[(48 * j + b) / 32] |= 1u << ((48 * j + b) % 32);
    }
}

static int ge_p(const uint32_t o[13], const uint32_t p[12]) {
    if (o[12])
        return 1;
    for (int j = 11; j >= 0; j--)
        if (o[j] != p[j])
            return o[j] > p[j];
    return 1;
}

static void sub_p(uint32_t o[13], const uint32_t p[12]) {
    uint64_t br = 0;
    for (int j = 0; j < 13; j++) {
        uint64_t d = (uint64_t)o[j] - (j < 12 ? p[j] : 0) - br;
        o[j] = (uint32_t)d;
        br = d >> 63;
    }
}

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    if (gpu_consts_upload(0) != CUZK_OK) {
        fprintf(stderr, "constants: %s\n", cuzk_error_detail());
        return 1;
    }
    uint32_t p32[12];
    memcpy(p32, CUZK_FP_MODULUS.l, sizeof p32);
    double p48[L];
    to48(p48, p32);
    /* n' = -p^-1 mod 2^48 by Newton in 64-bit words */
    uint64_t p0 = ((const uint64_t *)CUZK_FP_MODULUS.l)[0], inv = 1;
    for (int i = 0; i < 6; i++)
        inv *= 2 - p0 * inv;
    double np = (double)((0 - inv) & ((1ULL << 48) - 1));
    CK(cudaMemcpyToSymbol(c_p48, p48, sizeof p48));
    CK(cudaMemcpyToSymbol(c_np48, &np, sizeof np));

    const int n = 4096;
    fp_t *ha = (fp_t *)malloc(n * sizeof(fp_t)), *hb = (fp_t *)malloc(n * sizeof(fp_t));
    fp_t *hi_ = (fp_t *)malloc(n * sizeof(fp_t));
    fd *had = (fd *)malloc(n * sizeof(fd)), *hbd = (fd *)malloc(n * sizeof(fd));
    fd *hod = (fd *)malloc(n * sizeof(fd));
    srand(7);
    for (int i = 0; i < n; i++) {
        cuzk_fp x, y;
        uint64_t w[6];
        for (int k = 0; k < 6; k++)
            w[k] = ((uint64_t)rand() << 62) ^ ((uint64_t)rand() << 31) ^ (uint64_t)rand();
        w[5] &= (1ULL << 60) - 1; /* below 2^380 < p */
        if (i == 0)
            memset(w, 0xff, sizeof w), memcpy(w, CUZK_FP_MODULUS.l, sizeof w),
                w[0] -= 1; /* p - 1 */
        memcpy(x.l, w, sizeof w);
        for (int k = 0; k < 6; k++)
            w[k] = ((uint64_t)rand() << 62) ^ ((uint64_t)rand() << 31) ^ (uint64_t)rand();
        w[5] &= (1ULL << 60) - 1;
        if (i == 1)
            memset(w, 0, sizeof w);
        memcpy(y.l, w, sizeof w);
        memcpy(ha[i].v, x.l, 48);
        memcpy(hb[i].v, y.l, 48);
        to48(had[i].v, ha[i].v);
        to48(hbd[i].v, hb[i].v);
    }
    fp_t *da, *db, *doi;
    fd *dad, *dbd, *dod;
    CK(cudaMalloc(&da, n * sizeof(fp_t)));
    CK(cudaMalloc(&db, n * sizeof(fp_t)));
    CK(cudaMalloc(&doi, n * sizeof(fp_t)));
    CK(cudaMalloc(&dad, n * sizeof(fd)));
    CK(cudaMalloc(&dbd, n * sizeof(fd)));
    CK(cudaMalloc(&dod, n * sizeof(fd)));
    CK(cudaMemcpy(da, ha, n * sizeof(fp_t), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb, n * sizeof(fp_t), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dad, had, n * sizeof(fd), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dbd, hbd, n * sizeof(fd), cudaMemcpyHostToDevice));
    k_check<<<n / 128, 128, 0, cudaStreamLegacy>>>(doi, dod, da, db, dad, dbd, n);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hi_, doi, n * sizeof(fp_t), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hod, dod, n * sizeof(fd), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        uint32_t o[13];
        from48(o, hod[i].v);
        if (ge_p(o, p32))
            sub_p(o, p32);
        if (o[12] || memcmp(o, hi_[i].v, 48))
            bad++;
    }
    printf("check: FP64 product against f_mul on %d inputs (p - 1 and 0 among them): %d differ\n",
           n, bad);
    if (bad)
        return 1;

    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int threads = 256;
    for (int blocks_per_sm = 2; blocks_per_sm <= 8; blocks_per_sm *= 2) {
        int total = sms * blocks_per_sm * threads;
        fp_t *xi, *bi;
        fd *xd, *bdd;
        CK(cudaMalloc(&xi, total * sizeof(fp_t)));
        CK(cudaMalloc(&bi, total * sizeof(fp_t)));
        CK(cudaMalloc(&xd, total * sizeof(fd)));
        CK(cudaMalloc(&bdd, total * sizeof(fd)));
        for (int off = 0; off < total; off += n) {
            int c = total - off < n ? total - off : n;
            CK(cudaMemcpy(xi + off, ha, c * sizeof(fp_t), cudaMemcpyHostToDevice));
            CK(cudaMemcpy(bi + off, hb, c * sizeof(fp_t), cudaMemcpyHostToDevice));
            CK(cudaMemcpy(xd + off, had, c * sizeof(fd), cudaMemcpyHostToDevice));
            CK(cudaMemcpy(bdd + off, hbd, c * sizeof(fd), cudaMemcpyHostToDevice));
        }
        const char *names[3] = {"integer (f_mul_raw)", "FP64", "both"};
        for (int mode = 0; mode < 3; mode++) {
            cudaEvent_t e0, e1;
            cudaEventCreate(&e0);
            cudaEventCreate(&e1);
            float best = 1e30f;
            for (int run = 0; run < 4; run++) {
                cudaEventRecord(e0);
                if (mode == 0)
                    k_bench<0><<<sms * blocks_per_sm, threads, 0, cudaStreamLegacy>>>(xi, xd, bi, bdd, iters);
                else if (mode == 1)
                    k_bench<1><<<sms * blocks_per_sm, threads, 0, cudaStreamLegacy>>>(xi, xd, bi, bdd, iters);
                else
                    k_bench<2><<<sms * blocks_per_sm, threads, 0, cudaStreamLegacy>>>(xi, xd, bi, bdd, iters);
                cudaEventRecord(e1);
                CK(cudaEventSynchronize(e1));
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                if (run > 0 && ms < best)
                    best = ms;
            }
            CK(cudaGetLastError());
            double prods = (double)total * iters * (mode == 2 ? 2 : 1);
            printf("| %s | %d blocks/SM x %d | %.1f ms | %.2f G products/s |\n", names[mode],
                   blocks_per_sm, threads, best, prods / (best * 1e-3) / 1e9);
        }
        cudaFree(xi);
        cudaFree(bi);
        cudaFree(xd);
        cudaFree(bdd);
    }
    return 0;
}
