/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 18's next lever, measured before it is built: 381-bit Montgomery products with
 * AVX-512 IFMA (vpmadd52luq/huq), eight at once in radix 2^52 (8 limbs, R = 2^416, inputs
 * below 2p give outputs below 2p), against the library's MULX/ADX product (3 independent
 * chains, its throughput). One product of eight: 8 rounds of 16 multiply-adds for a b_i,
 * one for m_i, 16 for m_i p, then a carry; 264 IFMA instructions in all. The ymm (4-lane)
 * form is timed too. Checked against GMP first (p - 1 and 0 among the inputs).
 *   cc -O2 -march=native bench/cpu-ifma-probe/probe.c BUILD/libcuzk.a -lgmp -lpthread -lm
 */
#include <gmp.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#define M52 ((1ULL << 52) - 1)
typedef struct {
    __m512i v[8];
} fe8; /* limb-sliced: v[j] = limb j of 8 elements */
static uint64_t P52[8], N0;
static __m512i PV[8], N0V;
static inline void mul8(fe8 *r, const fe8 *a, const fe8 *b) {
    __m512i t[9];
    const __m512i z = _mm512_setzero_si512();
    for (int j = 0; j < 9; j++)
        t[j] = z;
    for (int i = 0; i < 8; i++) {
        __m512i bi = b->v[i];
        for (int j = 0; j < 8; j++)
            t[j] = _mm512_madd52lo_epu64(t[j], a->v[j], bi);
        for (int j = 0; j < 8; j++)
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a->v[j], bi);
        __m512i m = _mm512_madd52lo_epu64(z, t[0], N0V);
        for (int j = 0; j < 8; j++)
            t[j] = _mm512_madd52lo_epu64(t[j], m, PV[j]);
        for (int j = 0; j < 8; j++)
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, PV[j]);
        __m512i c = _mm512_srli_epi64(t[0], 52);
        for (int j = 0; j < 8; j++)
            t[j] = t[j + 1];
        t[0] = _mm512_add_epi64(t[0], c);
        t[8] = z;
    }
    const __m512i mk = _mm512_set1_epi64(M52);
    for (int j = 0; j < 7; j++) {
        __m512i c = _mm512_srli_epi64(t[j], 52);
        t[j] = _mm512_and_si512(t[j], mk);
        t[j + 1] = _mm512_add_epi64(t[j + 1], c);
    }
    for (int j = 0; j < 8; j++)
        r->v[j] = t[j];
}

typedef struct {
    __m256i v[8];
} fe4;
static __m256i PY[8], N0Y;
static inline void mul4(fe4 *r, const fe4 *a, const fe4 *b) {
    __m256i t[9];
    const __m256i z = _mm256_setzero_si256();
    for (int j = 0; j < 9; j++)
        t[j] = z;
    for (int i = 0; i < 8; i++) {
        __m256i bi = b->v[i];
        for (int j = 0; j < 8; j++)
            t[j] = _mm256_madd52lo_epu64(t[j], a->v[j], bi);
        for (int j = 0; j < 8; j++)
            t[j + 1] = _mm256_madd52hi_epu64(t[j + 1], a->v[j], bi);
        __m256i m = _mm256_madd52lo_epu64(z, t[0], N0Y);
        for (int j = 0; j < 8; j++)
            t[j] = _mm256_madd52lo_epu64(t[j], m, PY[j]);
        for (int j = 0; j < 8; j++)
            t[j + 1] = _mm256_madd52hi_epu64(t[j + 1], m, PY[j]);
        __m256i c = _mm256_srli_epi64(t[0], 52);
        for (int j = 0; j < 8; j++)
            t[j] = t[j + 1];
        t[0] = _mm256_add_epi64(t[0], c);
        t[8] = z;
    }
    const __m256i mk = _mm256_set1_epi64x(M52);
    for (int j = 0; j < 7; j++) {
        __m256i c = _mm256_srli_epi64(t[j], 52);
        t[j] = _mm256_and_si256(t[j], mk);
        t[j + 1] = _mm256_add_epi64(t[j + 1], c);
    }
    for (int j = 0; j < 8; j++)
        r->v[j] = t[j];
}
void cuzk_fp_mul_adx_(uint64_t r[6], const uint64_t a[6], const uint64_t b[6]);
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static void to52(uint64_t out[8], const mpz_t x) {
    mpz_t t;
    mpz_init_set(t, x);
    for (int j = 0; j < 8; j++) {
        out[j] = mpz_getlimbn(t, 0) & M52;
        mpz_fdiv_q_2exp(t, t, 52);
    }
    mpz_clear(t);
}
static void from52(mpz_t x, const uint64_t in[8]) {
    mpz_set_ui(x, 0);
    for (int j = 7; j >= 0; j--) {
        mpz_mul_2exp(x, x, 52);
        mpz_add_ui(x, x, in[j]);
    }
}
int main(void) {
    mpz_t p, t, a[8], b[8], r, R, Ri;
    mpz_inits(p, t, r, R, Ri, NULL);
    mpz_set_str(p,
                "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9"
                "feffffffffaaab",
                16);
    to52(P52, p);
    mpz_set_ui(t, 1);
    mpz_mul_2exp(t, t, 52);
    mpz_invert(r, p, t);
    mpz_sub(r, t, r);
    N0 = mpz_get_ui(r);
    for (int j = 0; j < 8; j++)
        PV[j] = _mm512_set1_epi64(P52[j]);
    N0V = _mm512_set1_epi64(N0);
    for (int j = 0; j < 8; j++)
        PY[j] = _mm256_set1_epi64x(P52[j]);
    N0Y = _mm256_set1_epi64x(N0);
    mpz_set_ui(R, 1);
    mpz_mul_2exp(R, R, 416);
    mpz_invert(Ri, R, p);
    gmp_randstate_t st;
    gmp_randinit_default(st);
    fe8 A, B, C;
    uint64_t la[8][8], lb[8][8];
    for (int l = 0; l < 8; l++) {
        mpz_inits(a[l], b[l], NULL);
        mpz_urandomm(a[l], st, p);
        mpz_urandomm(b[l], st, p);
        if (l == 0)
            mpz_sub_ui(a[l], p, 1);
        if (l == 1)
            mpz_set_ui(b[l], 0);
        to52(la[l], a[l]);
        to52(lb[l], b[l]);
    }
    for (int j = 0; j < 8; j++) {
        uint64_t va[8], vb[8];
        for (int l = 0; l < 8; l++) {
            va[l] = la[l][j];
            vb[l] = lb[l][j];
        }
        A.v[j] = _mm512_loadu_si512(va);
        B.v[j] = _mm512_loadu_si512(vb);
    }
    mul8(&C, &A, &B);
    int bad = 0;
    for (int l = 0; l < 8; l++) {
        uint64_t o[8];
        for (int j = 0; j < 8; j++) {
            uint64_t v[8];
            _mm512_storeu_si512(v, C.v[j]);
            o[j] = v[l];
        }
        from52(r, o);
        mpz_mul(t, a[l], b[l]);
        mpz_mul(t, t, Ri);
        mpz_mod(t, t, p);
        mpz_mod(r, r, p);
        if (mpz_cmp(r, t))
            bad++;
    }
    printf("correct: %s\n", bad ? "NO" : "yes");
    /* throughput: 4 independent chains of 8-lane products */
    fe8 X[4];
    for (int k = 0; k < 4; k++)
        X[k] = A;
    long N = 200000;
    double best = 1e30;
    for (int rr = 0; rr < 9; rr++) {
        double t0 = now();
        for (long i = 0; i < N; i++)
            for (int k = 0; k < 4; k++)
                mul8(&X[k], &X[k], &B);
        double tt = (now() - t0) / (N * 4.0 * 8);
        if (tt < best)
            best = tt;
    }
    printf("ifma 8-lane: %.2f ns per element product (4 chains)\n", best);
    best = 1e30;
    for (int rr = 0; rr < 9; rr++) {
        double t0 = now();
        for (long i = 0; i < N; i++)
            mul8(&X[0], &X[0], &B);
        double tt = (now() - t0) / (N * 8.0);
        if (tt < best)
            best = tt;
    }
    printf("ifma 8-lane: %.2f ns per element product (1 chain)\n", best);
    {
        fe8 Y[2];
        Y[0] = A;
        Y[1] = A;
        best = 1e30;
        for (int rr = 0; rr < 9; rr++) {
            double t0 = now();
            for (long i = 0; i < N; i++) {
                mul8(&Y[0], &Y[0], &B);
                mul8(&Y[1], &Y[1], &B);
            }
            double tt = (now() - t0) / (N * 16.0);
            if (tt < best)
                best = tt;
        }
        printf("ifma zmm: %.2f ns per element product (2 chains) %lld\n", best,
               (long long)_mm512_reduce_add_epi64(Y[1].v[0]));
    }
    {
        fe4 Z[2], BY;
        for (int j = 0; j < 8; j++) {
            Z[0].v[j] = _mm512_castsi512_si256(A.v[j]);
            BY.v[j] = _mm512_castsi512_si256(B.v[j]);
        }
        Z[1] = Z[0];
        best = 1e30;
        for (int rr = 0; rr < 9; rr++) {
            double t0 = now();
            for (long i = 0; i < N; i++) {
                mul4(&Z[0], &Z[0], &BY);
            }
            double tt = (now() - t0) / (N * 4.0);
            if (tt < best)
                best = tt;
        }
        printf("ifma ymm: %.2f ns per element product (1 chain)\n", best);
        best = 1e30;
        for (int rr = 0; rr < 9; rr++) {
            double t0 = now();
            for (long i = 0; i < N; i++) {
                mul4(&Z[0], &Z[0], &BY);
                mul4(&Z[1], &Z[1], &BY);
            }
            double tt = (now() - t0) / (N * 8.0);
            if (tt < best)
                best = tt;
        }
        printf("ifma ymm: %.2f ns per element product (2 chains) %lld\n", best,
               (long long)_mm256_extract_epi64(Z[1].v[0], 0));
    }
    uint64_t s0[6] = {1, 2, 3, 4, 5, 6}, s1[6] = {7, 8, 9, 10, 11, 1}, s2[6] = {3, 3, 3, 3, 3, 1},
             bb[6] = {5, 5, 5, 5, 5, 1};
    best = 1e30;
    for (int rr = 0; rr < 9; rr++) {
        double t0 = now();
        for (long i = 0; i < N; i++) {
            cuzk_fp_mul_adx_(s0, s0, bb);
            cuzk_fp_mul_adx_(s1, s1, bb);
            cuzk_fp_mul_adx_(s2, s2, bb);
        }
        double tt = (now() - t0) / (N * 3.0);
        if (tt < best)
            best = tt;
    }
    printf("mulx scalar: %.2f ns per product (3 chains) %lu\n", best,
           s0[0] ^ s1[0] ^ s2[0] ^ (uint64_t)_mm512_reduce_add_epi64(X[0].v[0]));
    return 0;
}
