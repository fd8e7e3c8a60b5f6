/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The G1 batch-affine buckets on AVX-512 IFMA (msm_ifma.h): a batch of bucket additions
 * sharing one inversion, done eight at a time, one addition per 64-bit lane.
 *
 * Field elements of a group of eight are limb-sliced: vector j holds limb j of the eight.
 * The product is Montgomery's with R = 2^416 (CIOS over 8 limbs of 52 bits, vpmadd52luq /
 * vpmadd52huq); for inputs a, b < 2^12 p it gives a value below 2p with normalised limbs.
 * Subtraction adds a multiple of p first (a - b as a + kp - b, b < kp), so no value goes
 * negative, and a conditional subtraction brings a stored coordinate back below 2p.
 *
 * The vector code is compiled for AVX-512 by function attributes and runs only where the
 * CPU has it (msm_ifma_available); elsewhere the library's scalar code does the MSM.
 */
#include "msm/msm_ifma.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "cuzk/ff.h"

#define M52 ((1ULL << 52) - 1)

/* ---- scalar conversions (any CPU) ---- */

/* Plain (not Montgomery) constants, set once by ifma_consts(): 2^352 and 2^416 mod p as
 * cuzk_fp limbs, p in radix 2^52, -p^-1 mod 2^52. */
static cuzk_fp K352, K416;
static uint64_t P52[8], N0_52, K384_52[8], K448_52[8];

static void split52(uint64_t out[8], const uint64_t in[6])
{
    for (unsigned j = 0; j < 8; j++) {
        unsigned bit = 52 * j, w = bit >> 6, sh = bit & 63;
        unsigned __int128 v = in[w];
        if (w + 1 < 6)
            v |= (unsigned __int128)in[w + 1] << 64;
        out[j] = w < 6 ? (uint64_t)(v >> sh) & M52 : 0;
    }
}

/* in: normalised limbs of a value below 2^384. */
static void join52(uint64_t out[6], const uint64_t in[8])
{
    memset(out, 0, 6 * sizeof(uint64_t));
    for (unsigned j = 0; j < 8; j++) {
        unsigned bit = 52 * j, w = bit >> 6, sh = bit & 63;
        unsigned __int128 v = (unsigned __int128)in[j] << sh;
        out[w] |= (uint64_t)v;
        if (w + 1 < 6)
            out[w + 1] |= (uint64_t)(v >> 64);
    }
}

static void ifma_consts_init(void)
{
    cuzk_fp k = {{0}};
    k.l[5] = 1ULL << 32; /* 2^352 < p */
    K352 = k;
    for (unsigned i = 0; i < 64; i++) /* addition works on plain values as on Montgomery ones */
        cuzk_fp_add(&k, &k, &k);
    K416 = k;
    cuzk_fp k2 = K352;
    for (unsigned i = 0; i < 32; i++)
        cuzk_fp_add(&k2, &k2, &k2);
    split52(K384_52, k2.l); /* 2^384 mod p */
    for (unsigned i = 0; i < 32; i++)
        cuzk_fp_add(&k, &k, &k);
    split52(K448_52, k.l); /* 2^448 mod p */
    split52(P52, CUZK_FP_MODULUS.l);
    uint64_t p0 = CUZK_FP_MODULUS.l[0], inv = p0; /* p0^-1 mod 2^64 by Newton's iteration */
    for (unsigned i = 0; i < 6; i++)
        inv *= 2 - p0 * inv;
    N0_52 = (0 - inv) & M52;
}

static void ifma_consts(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, ifma_consts_init);
}

/* x * 2^384 (the library's form) -> x * 2^416, radix 2^52. */
static void to_r52(msm_r52 *r, const cuzk_fp *a)
{
    cuzk_fp t;
    cuzk_fp_mul(&t, a, &K416); /* a K416 / 2^384, fully reduced */
    split52(r->l, t.l);
}

/* A value below 2p in radix 2^52 -> x * 2^384, fully reduced. */
static void from_r52(cuzk_fp *r, const msm_r52 *a)
{
    cuzk_fp t;
    join52(t.l, a->l);
    uint64_t d[6], borrow = 0;
    for (unsigned i = 0; i < 6; i++) {
        unsigned __int128 s = (unsigned __int128)t.l[i] - CUZK_FP_MODULUS.l[i] - borrow;
        d[i] = (uint64_t)s;
        borrow = (uint64_t)(s >> 64) & 1;
    }
    if (!borrow)
        memcpy(t.l, d, sizeof d);
    cuzk_fp_mul(r, &t, &K352); /* t 2^352 / 2^384 */
}

static bool r52_is_zero(const msm_r52 *a)
{
    uint64_t o = 0;
    for (unsigned j = 0; j < 8; j++)
        o |= a->l[j];
    return o == 0;
}

/* 2p - y for y < 2p nonzero (below 2p), 0 for 0 */
static void r52_neg(msm_r52 *r, const msm_r52 *a)
{
    if (r52_is_zero(a)) {
        *r = *a;
        return;
    }
    int64_t t[8], c = 0;
    for (unsigned j = 0; j < 8; j++)
        t[j] = (int64_t)(2 * P52[j]) - (int64_t)a->l[j];
    for (unsigned j = 0; j < 8; j++) {
        t[j] += c;
        c = t[j] >> 52; /* arithmetic */
        r->l[j] = j < 7 ? (uint64_t)t[j] & M52 : (uint64_t)t[j];
    }
}

/* A point of either group as ne field elements, x's parts then y's, in either form (the
 * structs have no padding: 2 or 4 cuzk_fp, 2 or 4 msm_r52). */
static void pt_in(msm_r52 *o, const cuzk_fp *a, unsigned ne)
{
    for (unsigned e = 0; e < ne; e++)
        to_r52(&o[e], &a[e]); /* 0 stays 0 */
}

static void pt_out(cuzk_fp *o, const msm_r52 *a, unsigned ne)
{
    ifma_consts();
    for (unsigned e = 0; e < ne; e++)
        from_r52(&o[e], &a[e]);
}

static void pt_neg(msm_r52 *r, const msm_r52 *a, unsigned ne)
{
    ifma_consts();
    for (unsigned e = 0; e < ne; e++)
        if (e < ne / 2)
            r[e] = a[e];
        else
            r52_neg(&r[e], &a[e]);
}

void msm_ifma_g1_to_affine(cuzk_g1_affine *out, const msm_g1_r52 *in) { pt_out(&out->x, &in->x, 2); }
void msm_ifma_g2_to_affine(cuzk_g2_affine *out, const msm_g2_r52 *in) { pt_out(&out->x.c0, in->x, 4); }
void msm_ifma_g1_neg(msm_g1_r52 *r, const msm_g1_r52 *a) { pt_neg(&r->x, &a->x, 2); }
void msm_ifma_g2_neg(msm_g2_r52 *r, const msm_g2_r52 *a) { pt_neg(r->x, a->x, 4); }

size_t msm_ifma_work_bytes(size_t cap)
{
    size_t groups = (cap + 7) / 8;
    /* DEN, NUM, XA, YA, X2, PREF per group (two parts each for G2), then one byte a group:
     * its special lanes */
    return groups * 6 * 2 * 8 * 64 + ((groups + 63) & ~(size_t)63);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

#define TGT __attribute__((target("avx512f,avx512ifma")))
#define VI static inline __attribute__((always_inline, target("avx512f,avx512ifma")))

typedef struct {
    __m512i v[8];
} fe8;

typedef struct {
    fe8 p1, p2, p3, p4, one;
    __m512i n0, m52;
} vconsts;

static bool ifma_cpu(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, NULL) < 7)
        return false;
    __cpuid(1, a, b, c, d);
    if (!(c & (1u << 27))) /* OSXSAVE */
        return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo & 0xe6) != 0xe6) /* SSE, AVX, opmask, zmm0-15 upper halves, zmm16-31 */
        return false;
    __cpuid_count(7, 0, a, b, c, d);
    return (b & (1u << 16)) && (b & (1u << 21)); /* AVX512F, AVX512IFMA */
}

bool msm_ifma_available(void)
{
    static int state; /* 0 unknown, 1 yes, 2 no */
    int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (s == 0) {
        s = ifma_cpu() ? 1 : 2;
        __atomic_store_n(&state, s, __ATOMIC_RELAXED);
    }
    return s == 1;
}

TGT static void set_fe8(fe8 *r, const uint64_t l[8])
{
    for (unsigned j = 0; j < 8; j++)
        r->v[j] = _mm512_set1_epi64((long long)l[j]);
}

TGT static void make_consts(vconsts *k)
{
    ifma_consts();
    uint64_t m[8], c;
    for (unsigned mult = 1; mult <= 4; mult++) {
        c = 0;
        for (unsigned j = 0; j < 8; j++) {
            uint64_t t = P52[j] * mult + c;
            m[j] = j < 7 ? t & M52 : t;
            c = t >> 52;
        }
        set_fe8(mult == 1 ? &k->p1 : mult == 2 ? &k->p2 : mult == 3 ? &k->p3 : &k->p4, m);
    }
    uint64_t one[8];
    split52(one, K416.l); /* 1 * 2^416 mod p */
    set_fe8(&k->one, one);
    k->n0 = _mm512_set1_epi64((long long)N0_52);
    k->m52 = _mm512_set1_epi64((long long)M52);
}

/* Signed carries: limbs 0..6 back to [0, 2^52), the rest into limb 7. */
VI void norm(fe8 *r, __m512i m52)
{
    for (unsigned j = 0; j < 7; j++) {
        __m512i c = _mm512_srai_epi64(r->v[j], 52);
        r->v[j] = _mm512_and_si512(r->v[j], m52);
        r->v[j + 1] = _mm512_add_epi64(r->v[j + 1], c);
    }
}

/* r = a + k - b (k a multiple of p above b), normalised. */
VI void sub_k(fe8 *r, const fe8 *a, const fe8 *b, const fe8 *k, __m512i m52)
{
    for (unsigned j = 0; j < 8; j++)
        r->v[j] = _mm512_sub_epi64(_mm512_add_epi64(a->v[j], k->v[j]), b->v[j]);
    norm(r, m52);
}

/* r = v - k where v >= k, else v (v, k normalised). */
VI void csub(fe8 *r, const fe8 *v, const fe8 *k, __m512i m52)
{
    fe8 w;
    for (unsigned j = 0; j < 8; j++)
        w.v[j] = _mm512_sub_epi64(v->v[j], k->v[j]);
    norm(&w, m52);
    __mmask8 neg = _mm512_cmplt_epi64_mask(w.v[7], _mm512_setzero_si512());
    for (unsigned j = 0; j < 8; j++)
        r->v[j] = _mm512_mask_blend_epi64(neg, w.v[j], v->v[j]);
}

/* r = a b / 2^416 mod p, below 2p, normalised (a, b normalised, below 2^12 p). */
VI void mul(fe8 *r, const fe8 *a, const fe8 *b, const vconsts *k)
{
    __m512i t[9];
    const __m512i z = _mm512_setzero_si512();
    for (unsigned j = 0; j < 9; j++)
        t[j] = z;
#pragma GCC unroll 8
    for (unsigned i = 0; i < 8; i++) {
        __m512i bi = b->v[i];
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++)
            t[j] = _mm512_madd52lo_epu64(t[j], a->v[j], bi);
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++)
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a->v[j], bi);
        __m512i m = _mm512_madd52lo_epu64(z, t[0], k->n0);
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++)
            t[j] = _mm512_madd52lo_epu64(t[j], m, k->p1.v[j]);
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++)
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, k->p1.v[j]);
        /* t[0] is now 0 mod 2^52: shift the accumulator down one limb */
        __m512i c = _mm512_srli_epi64(t[0], 52);
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++)
            t[j] = t[j + 1];
        t[0] = _mm512_add_epi64(t[0], c);
        t[8] = z;
    }
#pragma GCC unroll 8
    for (unsigned j = 0; j < 8; j++)
        r->v[j] = t[j];
    norm(r, k->m52);
}

/* 8 x 8 transpose of 64-bit words: o[j] lane l = in[l] word j. */
VI void transpose(__m512i o[8], const __m512i in[8])
{
    __m512i t[8], u[8];
    for (unsigned i = 0; i < 4; i++) {
        t[2 * i] = _mm512_unpacklo_epi64(in[2 * i], in[2 * i + 1]);     /* words 0,2,4,6 */
        t[2 * i + 1] = _mm512_unpackhi_epi64(in[2 * i], in[2 * i + 1]); /* words 1,3,5,7 */
    }
    const __m512i lo2 = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    const __m512i hi2 = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    /* rows 0-3: u0 words 0/4, u1 words 2/6, u2 words 1/5, u3 words 3/7; rows 4-7 in u4-u7 */
    for (unsigned h = 0; h < 2; h++) {
        __m512i *tt = t + 4 * h, *uu = u + 4 * h;
        uu[0] = _mm512_permutex2var_epi64(tt[0], lo2, tt[2]);
        uu[1] = _mm512_permutex2var_epi64(tt[0], hi2, tt[2]);
        uu[2] = _mm512_permutex2var_epi64(tt[1], lo2, tt[3]);
        uu[3] = _mm512_permutex2var_epi64(tt[1], hi2, tt[3]);
    }
    const __m512i lo4 = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
    const __m512i hi4 = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
    o[0] = _mm512_permutex2var_epi64(u[0], lo4, u[4]);
    o[4] = _mm512_permutex2var_epi64(u[0], hi4, u[4]);
    o[2] = _mm512_permutex2var_epi64(u[1], lo4, u[5]);
    o[6] = _mm512_permutex2var_epi64(u[1], hi4, u[5]);
    o[1] = _mm512_permutex2var_epi64(u[2], lo4, u[6]);
    o[5] = _mm512_permutex2var_epi64(u[2], hi4, u[6]);
    o[3] = _mm512_permutex2var_epi64(u[3], lo4, u[7]);
    o[7] = _mm512_permutex2var_epi64(u[3], hi4, u[7]);
}

VI void gather8(fe8 *r, const msm_r52 *const src[8])
{
    __m512i rows[8];
    for (unsigned l = 0; l < 8; l++)
        rows[l] = _mm512_loadu_si512((const void *)src[l]->l);
    transpose(r->v, rows);
}

/* lanes with bits in mask: a == b (normalised) */
VI __mmask8 eq8(const fe8 *a, const fe8 *b)
{
    __mmask8 m = 0xff;
    for (unsigned j = 0; j < 8; j++)
        m &= _mm512_cmpeq_epi64_mask(a->v[j], b->v[j]);
    return m;
}

/* 1 / v for each lane (v nonzero mod p), through the library's inversion. */
TGT static void inv8(fe8 *r, const fe8 *v)
{
    __m512i rows[8];
    transpose(rows, v->v);
    cuzk_fp x[8], pre[8], inv;
    for (unsigned l = 0; l < 8; l++) {
        msm_r52 e;
        _mm512_storeu_si512((void *)e.l, rows[l]);
        from_r52(&x[l], &e);
    }
    pre[0] = x[0];
    for (unsigned l = 1; l < 8; l++)
        cuzk_fp_mul(&pre[l], &pre[l - 1], &x[l]);
    cuzk_fp_inv_var(&inv, &pre[7]);
    for (unsigned l = 8; l-- > 0;) {
        cuzk_fp il;
        if (l) {
            cuzk_fp_mul(&il, &inv, &pre[l - 1]);
            cuzk_fp_mul(&inv, &inv, &x[l]);
        } else {
            il = inv;
        }
        msm_r52 e;
        to_r52(&e, &il);
        rows[l] = _mm512_loadu_si512((const void *)e.l);
    }
    transpose(r->v, rows);
}

/* ---- conversions, eight at a time: the library's form <-> radix 2^52 ---- */

/* out[l] = in[l] * 2^32 mod p: x * 2^384 -> x * 2^416 (below 2p) */
TGT static void from_std8(msm_r52 *const out[8], const cuzk_fp *const in[8], const vconsts *k)
{
    __m512i rows[8], w[8];
    for (unsigned l = 0; l < 8; l++)
        rows[l] = _mm512_maskz_loadu_epi64(0x3f, in[l]->l);
    transpose(w, rows);
    fe8 a, kk;
    for (unsigned j = 0; j < 8; j++) {
        unsigned bit = 52 * j, wi = bit >> 6, sh = bit & 63;
        __m512i v = _mm512_srli_epi64(w[wi], sh);
        if (sh > 12 && wi + 1 < 6)
            v = _mm512_or_si512(v, _mm512_slli_epi64(w[wi + 1], 64 - sh));
        a.v[j] = _mm512_and_si512(v, k->m52);
    }
    set_fe8(&kk, K448_52);
    mul(&a, &a, &kk, k); /* x 2^384 2^448 / 2^416 */
    transpose(rows, a.v);
    for (unsigned l = 0; l < 8; l++)
        _mm512_storeu_si512((void *)out[l]->l, rows[l]);
}

/* out[l] = x * 2^384, fully reduced, from in[l] = x * 2^416 (below 2p) */
TGT static void to_std8(cuzk_fp *const out[8], const msm_r52 *const in[8], const vconsts *k)
{
    fe8 a, kk;
    gather8(&a, in);
    set_fe8(&kk, K384_52);
    mul(&a, &a, &kk, k); /* x 2^416 2^384 / 2^416, below 2p */
    csub(&a, &a, &k->p1, k->m52);
    __m512i w[8], rows[8];
    for (unsigned wi = 0; wi < 8; wi++)
        w[wi] = _mm512_setzero_si512();
    for (unsigned j = 0; j < 8; j++) {
        unsigned bit = 52 * j, wi = bit >> 6, sh = bit & 63;
        w[wi] = _mm512_or_si512(w[wi], _mm512_slli_epi64(a.v[j], sh));
        if (sh + 52 > 64 && wi + 1 < 6)
            w[wi + 1] = _mm512_or_si512(w[wi + 1], _mm512_srli_epi64(a.v[j], 64 - sh));
    }
    transpose(rows, w);
    for (unsigned l = 0; l < 8; l++)
        _mm512_mask_storeu_epi64(out[l]->l, 0x3f, rows[l]);
}

/* n points of ne elements each (pt_in's layout); returns how many were converted (a
 * multiple of 8, the rest left to the caller) */
TGT static size_t from_std_n(msm_r52 *out, const cuzk_fp *in, unsigned ne, size_t n)
{
    vconsts k;
    make_consts(&k);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (unsigned c = 0; c < ne; c++) {
            msm_r52 *o[8];
            const cuzk_fp *p[8];
            for (unsigned l = 0; l < 8; l++) {
                o[l] = out + (i + l) * ne + c;
                p[l] = in + (i + l) * ne + c;
            }
            from_std8(o, p, &k);
        }
    return i;
}

/* the same the other way for the points whose flag has a bit of mask; returns the index
 * from which the rest (fewer than eight of them) is left to the caller */
TGT static size_t to_std_sel(cuzk_fp *out, const msm_r52 *in, unsigned ne, const uint8_t *flag,
                             uint8_t mask, size_t n)
{
    vconsts k;
    make_consts(&k);
    size_t idx[8], got = 0, last = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(flag[i] & mask))
            continue;
        idx[got++] = i;
        if (got < 8)
            continue;
        for (unsigned c = 0; c < ne; c++) {
            cuzk_fp *o[8];
            const msm_r52 *p[8];
            for (unsigned l = 0; l < 8; l++) {
                o[l] = out + idx[l] * ne + c;
                p[l] = in + idx[l] * ne + c;
            }
            to_std8(o, p, &k);
        }
        got = 0;
        last = i + 1;
    }
    return last;
}

/* ---- the lane fields: Fp (one part) and Fp2 (two, c0 + c1 u with u^2 = -1) ---- */
typedef struct {
    fe8 c[1];
} lf1;
typedef struct {
    fe8 c[2];
} lf2;

VI void lf1_mul(lf1 *r, const lf1 *a, const lf1 *b, const vconsts *k) { mul(&r->c[0], &a->c[0], &b->c[0], k); }
VI void lf1_sqr(lf1 *r, const lf1 *a, const vconsts *k) { mul(&r->c[0], &a->c[0], &a->c[0], k); }
TGT static void lf1_inv(lf1 *r, const lf1 *a, const vconsts *k)
{
    (void)k;
    inv8(&r->c[0], &a->c[0]);
}

/* r = a + b, normalised (a, b normalised) */
VI void add_n(fe8 *r, const fe8 *a, const fe8 *b, __m512i m52)
{
    for (unsigned j = 0; j < 8; j++)
        r->v[j] = _mm512_add_epi64(a->v[j], b->v[j]);
    norm(r, m52);
}

/* Karatsuba: c0 = a0 b0 - a1 b1, c1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1, each below 2p */
VI void lf2_mul(lf2 *r, const lf2 *a, const lf2 *b, const vconsts *k)
{
    fe8 t0, t1, t2, sa, sb;
    add_n(&sa, &a->c[0], &a->c[1], k->m52);
    add_n(&sb, &b->c[0], &b->c[1], k->m52);
    mul(&t0, &a->c[0], &b->c[0], k);
    mul(&t1, &a->c[1], &b->c[1], k);
    mul(&t2, &sa, &sb, k);
    sub_k(&r->c[0], &t0, &t1, &k->p2, k->m52);
    csub(&r->c[0], &r->c[0], &k->p2, k->m52);
    for (unsigned j = 0; j < 8; j++)
        r->c[1].v[j] = _mm512_sub_epi64(_mm512_add_epi64(t2.v[j], k->p4.v[j]),
                                        _mm512_add_epi64(t0.v[j], t1.v[j]));
    norm(&r->c[1], k->m52);
    csub(&r->c[1], &r->c[1], &k->p4, k->m52);
    csub(&r->c[1], &r->c[1], &k->p2, k->m52);
}

/* c0 = (a0 + a1)(a0 - a1), c1 = 2 a0 a1 */
VI void lf2_sqr(lf2 *r, const lf2 *a, const vconsts *k)
{
    fe8 s, d, t;
    add_n(&s, &a->c[0], &a->c[1], k->m52);
    sub_k(&d, &a->c[0], &a->c[1], &k->p2, k->m52);
    mul(&t, &a->c[0], &a->c[1], k);
    mul(&r->c[0], &s, &d, k);
    add_n(&r->c[1], &t, &t, k->m52);
    csub(&r->c[1], &r->c[1], &k->p2, k->m52);
}

/* 1 / a = (a0 - a1 u) / (a0^2 + a1^2) */
TGT static void lf2_inv(lf2 *r, const lf2 *a, const vconsts *k)
{
    fe8 n0, n1, nn, ni, zero;
    mul(&n0, &a->c[0], &a->c[0], k);
    mul(&n1, &a->c[1], &a->c[1], k);
    add_n(&nn, &n0, &n1, k->m52);
    csub(&nn, &nn, &k->p2, k->m52);
    inv8(&ni, &nn);
    mul(&r->c[0], &a->c[0], &ni, k);
    mul(&n1, &a->c[1], &ni, k);
    for (unsigned j = 0; j < 8; j++)
        zero.v[j] = _mm512_setzero_si512();
    sub_k(&r->c[1], &zero, &n1, &k->p2, k->m52);
}

#define FT lf1
#define NC 1
#define PT msm_g1_r52
#define F_MUL lf1_mul
#define F_SQR lf1_sqr
#define F_INV lf1_inv
#define F_GATHER lf1_gather
#define F_SUBK lf1_subk
#define FLUSH_NAME msm_ifma_g1_flush
#include "msm/msm_ifma_flush.h"
#undef FT
#undef NC
#undef PT
#undef F_MUL
#undef F_SQR
#undef F_INV
#undef F_GATHER
#undef F_SUBK
#undef FLUSH_NAME

#define FT lf2
#define NC 2
#define PT msm_g2_r52
#define F_MUL lf2_mul
#define F_SQR lf2_sqr
#define F_INV lf2_inv
#define F_GATHER lf2_gather
#define F_SUBK lf2_subk
#define FLUSH_NAME msm_ifma_g2_flush
#define MSM_IFMA_FLUSH_SECOND
#include "msm/msm_ifma_flush.h"

#define HAVE_VEC_CONV 1
#else /* no AVX-512 code on this target */

bool msm_ifma_available(void) { return false; }

size_t msm_ifma_g1_flush(msm_g1_r52 *buckets, const msm_ifma_ent *ent, size_t m, void *work,
                         uint32_t *special)
{
    (void)buckets, (void)ent, (void)m, (void)work, (void)special;
    return 0; /* never called: msm_ifma_available() is false */
}
size_t msm_ifma_g2_flush(msm_g2_r52 *buckets, const msm_ifma_ent *ent, size_t m, void *work,
                         uint32_t *special)
{
    (void)buckets, (void)ent, (void)m, (void)work, (void)special;
    return 0;
}
#endif

/* ---- the conversions' entry points: eight at a time where the CPU has the vector unit ---- */

static void conv_in(msm_r52 *out, const cuzk_fp *in, unsigned ne, size_t n)
{
    ifma_consts();
    size_t i = 0;
#ifdef HAVE_VEC_CONV
    if (msm_ifma_available())
        i = from_std_n(out, in, ne, n);
#endif
    for (; i < n; i++)
        pt_in(out + i * ne, in + i * ne, ne);
}

static void conv_out_sel(cuzk_fp *out, const msm_r52 *in, unsigned ne, const uint8_t *flag,
                         uint8_t mask, size_t n)
{
    size_t i = 0;
#ifdef HAVE_VEC_CONV
    if (msm_ifma_available())
        i = to_std_sel(out, in, ne, flag, mask, n);
#endif
    for (; i < n; i++)
        if (flag[i] & mask)
            pt_out(out + i * ne, in + i * ne, ne);
}

void msm_ifma_g1_from_affine(msm_g1_r52 *out, const cuzk_g1_affine *in, size_t n)
{
    conv_in(&out->x, &in->x, 2, n);
}

void msm_ifma_g2_from_affine(msm_g2_r52 *out, const cuzk_g2_affine *in, size_t n)
{
    conv_in(out->x, &in->x.c0, 4, n);
}

void msm_ifma_g1_to_affine_sel(cuzk_g1_affine *out, const msm_g1_r52 *in, const uint8_t *flag,
                               uint8_t mask, size_t n)
{
    conv_out_sel(&out->x, &in->x, 2, flag, mask, n);
}

void msm_ifma_g2_to_affine_sel(cuzk_g2_affine *out, const msm_g2_r52 *in, const uint8_t *flag,
                               uint8_t mask, size_t n)
{
    conv_out_sel(&out->x.c0, in->x, 4, flag, mask, n);
}
