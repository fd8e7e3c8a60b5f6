/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the probes of bench/gpu-mul-probe share: a CUDA call checked (exit on error), random
 * 64-bit words, a launch timed with events (best of 3 after a warm-up), the multiprocessor
 * count.
 */
#ifndef CUZK_BENCH_PROBE_COMMON_CUH
#define CUZK_BENCH_PROBE_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                           \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static inline uint64_t probe_rnd64(void)
{
    return ((uint64_t)rand() << 62) ^ ((uint64_t)rand() << 31) ^ (uint64_t)rand();
}

/* ms of launch() (which starts kernels on the legacy stream): the best of runs 2-4. */
template <class L> static float probe_best_ms(L launch)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int r = 0; r < 4; r++) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0 && ms < best)
            best = ms;
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return best;
}

static inline int probe_sms(void)
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return sms;
}

/* A product probe's round: out[i] = check(a[i], b[i]) on n inputs from fill(x, i) (a: fill at
 * i, b: at i + 5), compared word for word with the CPU library's cpu_mul (*bad: the count
 * that differ); then the ms of chain(x, y) (best of 3) over total threads, x and y the same
 * inputs tiled. E: the device element, T: the CPU's (L 64-bit words). check and chain take
 * (out, a, b) and (x, y) device pointers and launch the kernels. */
template <class E, class T, class Fill, class Check, class Chain>
static float probe_product_round(int n, int L, Fill fill, void (*cpu_mul)(T *, const T *, const T *),
                                 Check check, Chain chain, int total, int *bad)
{
    E *ha = (E *)malloc(n * sizeof(E)), *hb = (E *)malloc(n * sizeof(E)), *ho = (E *)malloc(n * sizeof(E));
    for (int i = 0; i < n; i++) {
        T x, y;
        fill(&x, i);
        fill(&y, i + 5);
        memcpy(ha[i].v, x.l, 8 * L);
        memcpy(hb[i].v, y.l, 8 * L);
    }
    E *da, *db, *dout, *x, *y;
    CK(cudaMalloc(&da, n * sizeof(E)));
    CK(cudaMalloc(&db, n * sizeof(E)));
    CK(cudaMalloc(&dout, n * sizeof(E)));
    CK(cudaMemcpy(da, ha, n * sizeof(E), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb, n * sizeof(E), cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0x77, n * sizeof(E)));
    check(dout, da, db);
    CK(cudaGetLastError());
    CK(cudaMemcpy(ho, dout, n * sizeof(E), cudaMemcpyDeviceToHost));
    *bad = 0;
    for (int i = 0; i < n; i++) {
        T a, b, w;
        memcpy(a.l, ha[i].v, 8 * L);
        memcpy(b.l, hb[i].v, 8 * L);
        cpu_mul(&w, &a, &b);
        *bad += memcmp(ho[i].v, w.l, 8 * L) != 0;
    }
    CK(cudaMalloc(&x, total * sizeof(E)));
    CK(cudaMalloc(&y, total * sizeof(E)));
    for (int off = 0; off < total; off += n) {
        const int c = total - off < n ? total - off : n;
        CK(cudaMemcpy(x + off, ha, c * sizeof(E), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(y + off, hb, c * sizeof(E), cudaMemcpyHostToDevice));
    }
    const float ms = probe_best_ms([&] { chain(x, y); });
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dout));
    CK(cudaFree(x));
    CK(cudaFree(y));
    free(ha);
    free(hb);
    free(ho);
    return ms;
}

#endif
