/*
 * Internal to src/gpu: Montgomery arithmetic over a prime field given by its parameters P
 * (P::N 32-bit limbs, P::p(j) the modulus, P::one(j) the Montgomery one, P::n0() =
 * -p^-1 mod 2^32; ff/bls12_381.cuh gives Fp and Fr), with carry-chain PTX (ff/carry.cuh).
 * Everything is __host__ __device__: tests/unit/test_gpu_arith.cu runs it on the CPU against
 * the CPU library.
 */
#ifndef CUZK_GPU_FF_MONT_CUH
#define CUZK_GPU_FF_MONT_CUH

#include <stdint.h>

#include <type_traits>

#include "gpu/ff/carry.cuh"

template <class P> struct __align__(16) Fe {
    uint32_t v[P::N];
};

template <class P> GPU_HD Fe<P> f_zero()
{
    Fe<P> r;
#pragma unroll
    for (int j = 0; j < P::N; j++)
        r.v[j] = 0;
    return r;
}

template <class P> GPU_HD Fe<P> f_one()
{
    Fe<P> r;
#pragma unroll
    for (int j = 0; j < P::N; j++)
        r.v[j] = P::one(j);
    return r;
}

template <class P> GPU_HD bool f_is_zero(const Fe<P> &a)
{
    uint32_t t = a.v[0];
#pragma unroll
    for (int j = 1; j < P::N; j++)
        t |= a.v[j];
    return t == 0;
}

template <class P> GPU_HD bool f_eq(const Fe<P> &a, const Fe<P> &b)
{
    uint32_t t = 0;
#pragma unroll
    for (int j = 0; j < P::N; j++)
        t |= a.v[j] ^ b.v[j];
    return t == 0;
}

/* r = s - m if s + hi 2^(32N) >= m, else s (s + hi 2^(32N) < 2m, hi the word above s), with m
 * M's modulus (M::p(j)): the field's own, or for the lazy forms below twice it. */
template <class P, class M = P> GPU_HD Fe<P> f_reduce_once(const Fe<P> &s, uint32_t hi)
{
    constexpr int N = P::N;
    static_assert(M::N == N, "the modulus' words");
    Fe<P> d;
    gpu_cc c;
    d.v[0] = cc_sub(c, s.v[0], M::p(0));
#pragma unroll
    for (int j = 1; j < N; j++)
        d.v[j] = cc_subc(c, s.v[j], M::p(j));
    const uint32_t borrow = cc_subc_end(c, hi, 0); /* 0 or all ones: s < m */
#pragma unroll
    for (int j = 0; j < N; j++)
        d.v[j] = borrow ? s.v[j] : d.v[j];
    return d;
}

/* r = a + b mod m, inputs and result in [0, m): m = p (reduced values; p < 2^(32N-1), so a +
 * b fits in N words), or with M = twice p (m < 2^(32N), e.g. FrDblP) the lazy sum, whose
 * carry out of N words is taken by the reduction. */
template <class P, class M = P> GPU_HD Fe<P> f_add(const Fe<P> &a, const Fe<P> &b)
{
    constexpr int N = P::N;
    constexpr bool lazy = !std::is_same<P, M>::value;
    Fe<P> s;
    gpu_cc c;
    s.v[0] = cc_add(c, a.v[0], b.v[0]);
#pragma unroll
    for (int j = 1; j < N; j++)
        s.v[j] = cc_addc(c, a.v[j], b.v[j]);
    uint32_t hi = 0;
    if constexpr (lazy)
        hi = cc_addc_end(c, 0, 0);
    else
        cc_none(c);
    return f_reduce_once<P, M>(s, hi);
}

/* r = a - b mod m, inputs and result in [0, m) (m as for f_add). */
template <class P, class M = P> GPU_HD Fe<P> f_sub(const Fe<P> &a, const Fe<P> &b)
{
    constexpr int N = P::N;
    Fe<P> d;
    gpu_cc c;
    d.v[0] = cc_sub(c, a.v[0], b.v[0]);
#pragma unroll
    for (int j = 1; j < N; j++)
        d.v[j] = cc_subc(c, a.v[j], b.v[j]);
    const uint32_t borrow = cc_subc_end(c, 0, 0);
    d.v[0] = cc_add(c, d.v[0], M::p(0) & borrow);
#pragma unroll
    for (int j = 1; j < N; j++)
        d.v[j] = cc_addc(c, d.v[j], M::p(j) & borrow);
    return d; /* the carry out is the borrow: dropped */
}

template <class P> GPU_HD Fe<P> f_neg(const Fe<P> &a)
{
    return f_sub<P>(f_zero<P>(), a);
}

template <class P> GPU_HD Fe<P> f_dbl(const Fe<P> &a)
{
    return f_add<P>(a, a);
}

/* Montgomery product, t = a b 2^(-32N) mod p. Needs a + p <= 2^(32N) (the row sums below
 * t + a b_i + m p < 2^32 (a + p) then fit in N + 1 words) and a b < p 2^(32N) (then t < 2p
 * before the final subtraction): reduced inputs, or for Fp any a, b < 2p (4p < 2^384).
 *
 * Word-serial (one row per b_i: t = (t + a b_i + m p) / 2^32, m = t_0 n0) like CIOS, but
 * each row keeps the running sum in two arrays so that the products pair up:
 *   ev: words at weights 0..N-1, taking lo/hi of a_j b_i and m p_j for even j,
 *   od: od[k] at weight k+1, taking lo/hi of a_j b_i and m p_j for odd j.
 * A product's lo and hi then land in adjacent words of one carry chain (mad.lo.cc,
 * madc.hi.cc), which ptxas can issue as one wide multiply-add, and the two chains of a row
 * are independent (twice the instruction-level parallelism of one long chain).
 * After the row, ev[0] = 0 and the division by 2^32 is a renaming: od becomes the next ev
 * (od[k] moves to weight k); ev[1] moves to weight 0 and is added into the new ev[0], and
 * ev[2..N-1] move to weights 1..N-2, i.e. they are the next od shifted down by two
 * positions, which the next row's odd chain does as it adds (mont_row). The roles of the
 * two arrays alternate from row to row.
 * Carries: the even chain's carry out (weight N) is added into od[N-1] (weight N); the odd
 * chain's carry out at weight N+1 is 0 because the row total t + a b_i + m p < 2^(32N+32)
 * and ev >= 0 bound od below 2^(32N). */
/* The even chain of a row: ev[j], ev[j+1] += x(j) y for even j (one carry chain from
 * ev[0]), its carry out (weight N) into od[N-1]. */
template <class P, class X>
GPU_HD void mont_even_chain(gpu_cc &c, uint32_t *ev, uint32_t *od, X x, uint32_t y)
{
    constexpr int N = P::N;
    ev[0] = cc_mad_lo(c, x(0), y, ev[0]);
    ev[1] = cc_madc_hi(c, x(0), y, ev[1]);
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        ev[j] = cc_madc_lo(c, x(j), y, ev[j]);
        ev[j + 1] = cc_madc_hi(c, x(j), y, ev[j + 1]);
    }
    od[N - 1] = cc_addc_end(c, od[N - 1], 0);
}

/* The odd chain of a row that also divides by 2^32: od[j], od[j+1] = od[j+2], od[j+3] +
 * x(j+1) y for even j (continuing the caller's carry chain), the top two words x(N-1) y
 * alone; no carry out (hi + 1 < 2^32). */
template <class P, class X>
GPU_HD void mont_odd_chain_shift(gpu_cc &c, uint32_t *od, X x, uint32_t y)
{
    constexpr int N = P::N;
#pragma unroll
    for (int j = 0; j < N - 2; j += 2) {
        od[j] = cc_madc_lo(c, x(j + 1), y, od[j + 2]);
        od[j + 1] = cc_madc_hi(c, x(j + 1), y, od[j + 3]);
    }
    od[N - 2] = cc_madc_lo(c, x(N - 1), y, 0);
    od[N - 1] = cc_madc_hi_end(c, x(N - 1), y, 0);
}

/* A modulus whose two low words are 1 and 2^32 - 1 (BLS12-381's r: r = 1 - 2^32 mod 2^64):
 * then m p_0 + m p_1 2^32 needs no products. With m = t_0 n0 = -t_0 mod 2^32:
 * t_0 + m = c_0 2^32, c_0 = (t_0 != 0) = (t_0 | m) >> 31 (one of t_0, 2^32 - t_0 has the top
 * bit), lo(m p_1) = -m = t_0, hi(m p_1) = m - c_0. A reduction row then takes N - 2 wide
 * products instead of N (Fr: 6 against 8). Specialised per field (ff/bls12_381.cuh), the
 * words checked by test_gpu_arith.
 * m is still formed by a multiplication (t_0 n0, n0 = -1 from the constant bank): with
 * m = 0 - t_0 ptxas split the products of the whole row into separate lo and hi
 * multiply-adds (IMAD.X + IMAD.HI.U32.X instead of IMAD.WIDE.U32.X) and the product got 5 %
 * slower; so formed it keeps them wide, and Fr products ran 7.5 % faster in a dependent
 * chain (bench/gpu-mul-probe/fr_low.cu's V7, bench/RESULTS.md). */
template <class P> struct mont_low_form {
    static constexpr bool value = false;
};

/* The reduction row of such a modulus: the sum mont_row_reduce_any forms, the even chain
 * first (its carry into od[N-1]), then the odd chain from weight 2 (no carry out: od stays
 * below the row's total, as there). */
template <class P> GPU_HD void mont_row_reduce_low(uint32_t *ev, uint32_t *od)
{
    constexpr int N = P::N;
    gpu_cc c;
    const uint32_t t0 = ev[0];
    const uint32_t m = t0 * P::n0();
    const uint32_t mh = m - ((t0 | m) >> 31); /* hi(m p_1) */
    ev[0] = cc_add(c, ev[0], m);               /* 0, carry c_0 */
    ev[1] = cc_addc(c, ev[1], t0);             /* lo(m p_1) */
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        ev[j] = cc_madc_lo(c, m, P::p(j), ev[j]);
        ev[j + 1] = cc_madc_hi(c, m, P::p(j), ev[j + 1]);
    }
    od[N - 1] = cc_addc_end(c, od[N - 1], 0);
    od[1] = cc_add(c, od[1], mh); /* weight 2 */
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        od[j] = cc_madc_lo(c, m, P::p(j + 1), od[j]);
        od[j + 1] = cc_madc_hi(c, m, P::p(j + 1), od[j + 1]);
    }
    cc_none(c);
}

template <class P> GPU_HD void mont_row_reduce_any(uint32_t *ev, uint32_t *od)
{
    constexpr int N = P::N;
    gpu_cc c;
    const uint32_t m = ev[0] * P::n0();
    od[0] = cc_mad_lo(c, m, P::p(1), od[0]);
    od[1] = cc_madc_hi(c, m, P::p(1), od[1]);
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        od[j] = cc_madc_lo(c, m, P::p(j + 1), od[j]);
        od[j + 1] = cc_madc_hi(c, m, P::p(j + 1), od[j + 1]);
    }
    cc_none(c);
    mont_even_chain<P>(c, ev, od, [](int j) { return P::p(j); }, m);
}

template <class P> GPU_HD void mont_row_reduce(uint32_t *ev, uint32_t *od)
{
    if constexpr (mont_low_form<P>::value)
        mont_row_reduce_low<P>(ev, od);
    else
        mont_row_reduce_any<P>(ev, od);
}

/* Row 0: ev, od = the products a b_0 (no sums yet), then the reduction. Fr (8 words) takes
 * each product from one mul.wide.u32 (NTT 1.5-2 % faster than mul.lo and mul.hi); Fp (12)
 * keeps mul.lo and mul.hi, which ptxas issues as IMAD and IMAD.HI: with mul.wide the G1
 * MSM's XYZZ accumulation was 0.6-0.8 % faster but the batch add 15-17 % and porep-27's
 * tails 9 % slower (bench/RESULTS.md, session 12). */
template <class P> GPU_HD void mont_row0(uint32_t *ev, uint32_t *od, const uint32_t *a, uint32_t bi)
{
    constexpr int N = P::N;
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        if constexpr (N == 8) {
            mul_wide(a[j], bi, ev[j], ev[j + 1]);
            mul_wide(a[j + 1], bi, od[j], od[j + 1]);
        } else {
            ev[j] = mul_lo(a[j], bi);
            ev[j + 1] = mul_hi(a[j], bi);
            od[j] = mul_lo(a[j + 1], bi);
            od[j + 1] = mul_hi(a[j + 1], bi);
        }
    }
    mont_row_reduce<P>(ev, od);
}

/* Row i > 0: ev is the previous row's od (in place), od the previous row's ev (its word 0 is
 * 0, word 1 goes into ev[0], words 2.. shift down by two while the odd products are added). */
template <class P> GPU_HD void mont_row(uint32_t *ev, uint32_t *od, const uint32_t *a, uint32_t bi)
{
    gpu_cc c;
    ev[0] = cc_add(c, ev[0], od[1]); /* its carry is at weight 1: the odd chain's first word */
    mont_odd_chain_shift<P>(c, od, [a](int j) { return a[j]; }, bi);
    mont_even_chain<P>(c, ev, od, [a](int j) { return a[j]; }, bi);
    mont_row_reduce<P>(ev, od);
}

/* After the last row (ev, od): its division by 2^32, t = od + (ev[1..N-1] at weights
 * 0..N-2), t < 2p < 2^(32N). */
template <class P> GPU_HD Fe<P> mont_last_division(const uint32_t *od, const uint32_t *ev)
{
    constexpr int N = P::N;
    Fe<P> r;
    gpu_cc c;
    r.v[0] = cc_add(c, od[0], ev[1]);
#pragma unroll
    for (int k = 1; k < N - 1; k++)
        r.v[k] = cc_addc(c, od[k], ev[k + 1]);
    r.v[N - 1] = cc_addc_end(c, od[N - 1], 0);
    return r;
}

/* The product before the final subtraction: t < 2p (bounds as above). */
template <class P> GPU_HD Fe<P> f_mul_raw(const Fe<P> &a, const Fe<P> &b)
{
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "even limb count");
    uint32_t x[N], y[N];
    mont_row0<P>(x, y, a.v, b.v[0]);
#pragma unroll
    for (int i = 1; i < N; i += 2) {
        mont_row<P>(y, x, a.v, b.v[i]);
        if (i + 1 < N)
            mont_row<P>(x, y, a.v, b.v[i + 1]);
    }
    return mont_last_division<P>(x, y); /* after row N-1 (odd): ev = y, od = x */
}

/* a b 2^(-32N) mod p, reduced (bounds as for f_mul_raw). */
template <class P> GPU_HD Fe<P> f_mul(const Fe<P> &a, const Fe<P> &b)
{
    return f_reduce_once<P>(f_mul_raw<P>(a, b), 0);
}

/* ---- Montgomery squaring: t = a^2 2^(-32N) mod p, each cross product a_i a_j formed once ----
 * With S_i = sum_(k>=i) a_k 2^(32k):  a^2 = sum_i a_i 2^(32i) (a_i 2^(32i) + 2 S_(i+1)),
 * so square row i multiplies a_i by the words c_k (k = i..N-1) of a_i 2^(32i) + 2 S_(i+1):
 *   c_i = a_i, c_(i+1) = a_(i+1) << 1, c_k = (2a)_k = a_k << 1 | a_(k-1) >> 31 (k > i+1);
 * the doubling is folded into the multiplicand (2 S_(i+1) has no word N as a < 2^(32N-1)).
 * N(N+1)/2 word products for the square, N^2 for the reduction (Fp: 78 + 144), against
 * f_mul's 2 N^2 (288).
 * The rows interleave with the reduction as in f_mul_raw, with the same ev/od arrays: row i
 * goes in after step i's reduction (row i + m_i p, then the division by 2^32). a_i c_k lands
 * at weight k of that step, like a_k b_i in mont_row, so the even k pair up in ev and the odd
 * k in od (adjacent lo/hi, wide multiply-adds); words below i are not touched (row 0 is the
 * first step's products). As row i >= 1 does not reach word 0, m_i is formed before it, and
 * the division by 2^32 (the renaming and ev[1] merge of mont_row) is folded into the odd
 * chain of the reduction (mont_row_reduce_shift), which spans all words.
 * Bounds: after row i the sum is (a^2 - S_(i+1)^2 + M p) / 2^(32i) with M < 2^(32(i+1)), and
 * a^2 - S_(i+1)^2 < 2^(32(i+1)) 2a, so it is below 2^32 (2a + p): it fits the N + 1 words
 * when 2a + p <= 2^(32N). The end value is below 2p when a^2 < p 2^(32N).
 * Fp: p < 2^381, so any a < 2p qualifies (5p < 2^384), as for f_mul. Fr (r > 2^254) does
 * not have the room (2a + r > 2^256 for large reduced a): it squares with f_mul (sqr_fits). */
template <class P> struct sqr_fits {
    static constexpr bool value = false;
};

/* Word c_k (i <= k < N) of row i's multiplicand; a2 = 2a (words 2..N-1 used). */
GPU_HD uint32_t sqr_word(const uint32_t *a, const uint32_t *a2, int i, int k)
{
    return k == i ? a[i] : k == i + 1 ? a[i + 1] << 1 : a2[k];
}

/* Step i > 0 of the square's reduction: ev is the previous step's od (in place), od the
 * previous ev. ev[1] of the previous step merges into ev[0] (carry at weight 1), m comes from
 * the merged word, and the odd chain adds m p_j while it shifts the old ev[2..] down two
 * places (that carry waits across the multiplication forming m). Then the even chain. */
template <class P> GPU_HD void mont_row_reduce_shift(uint32_t *ev, uint32_t *od)
{
    gpu_cc c;
    ev[0] = cc_add(c, ev[0], od[1]);
    const uint32_t m = ev[0] * P::n0();
    mont_odd_chain_shift<P>(c, od, [](int j) { return P::p(j); }, m);
    mont_even_chain<P>(c, ev, od, [](int j) { return P::p(j); }, m);
}

/* Square row i > 0: ev/od += a_i c_k at weight k, k = i..N-1. The odd chain (od[k-1], od[k])
 * ends at od[N-1] (weight N, no carry out by the bounds); the even chain's carry (weight N)
 * goes into od[N-1]. */
template <class P>
GPU_HD void sqr_row(uint32_t *ev, uint32_t *od, const uint32_t *a, const uint32_t *a2, int i)
{
    constexpr int N = P::N;
    const uint32_t ai = a[i];
    gpu_cc c;
    {
        const int k0 = i | 1; /* first odd k >= i */
        const uint32_t c0 = sqr_word(a, a2, i, k0);
        od[k0 - 1] = cc_mad_lo(c, ai, c0, od[k0 - 1]);
        if (k0 == N - 1)
            od[N - 1] = cc_madc_hi_end(c, ai, c0, od[N - 1]);
        else
            od[k0] = cc_madc_hi(c, ai, c0, od[k0]);
#pragma unroll
        for (int k = k0 + 2; k < N; k += 2) {
            const uint32_t ck = sqr_word(a, a2, i, k);
            od[k - 1] = cc_madc_lo(c, ai, ck, od[k - 1]);
            if (k == N - 1)
                od[N - 1] = cc_madc_hi_end(c, ai, ck, od[N - 1]);
            else
                od[k] = cc_madc_hi(c, ai, ck, od[k]);
        }
    }
    if (i < N - 1) {
        const int k0 = (i + 1) & ~1; /* first even k >= i */
        const uint32_t c0 = sqr_word(a, a2, i, k0);
        ev[k0] = cc_mad_lo(c, ai, c0, ev[k0]);
        ev[k0 + 1] = cc_madc_hi(c, ai, c0, ev[k0 + 1]);
#pragma unroll
        for (int k = k0 + 2; k < N; k += 2) {
            const uint32_t ck = sqr_word(a, a2, i, k);
            ev[k] = cc_madc_lo(c, ai, ck, ev[k]);
            ev[k + 1] = cc_madc_hi(c, ai, ck, ev[k + 1]);
        }
        od[N - 1] = cc_addc_end(c, od[N - 1], 0);
    }
}

/* The square before the final subtraction: t < 2p. Needs 2a + p <= 2^(32N) (hence
 * a < 2^(32N-1)) and a^2 < p 2^(32N): for Fp any a < 2p; not for Fr (sqr_fits). Equal to
 * f_mul_raw(a, a): both add the one M < 2^(32N) with a^2 + M p = 0 mod 2^(32N). */
template <class P> GPU_HD Fe<P> f_sqr_raw(const Fe<P> &a)
{
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "even limb count");
    static_assert(sqr_fits<P>::value, "the field lacks the room: use f_mul(a, a)");
    uint32_t a2[N]; /* 2a, words 2..N-1 */
    a2[0] = a2[1] = 0;
#pragma unroll
    for (int k = 2; k < N; k++)
        a2[k] = a.v[k] << 1 | a.v[k - 1] >> 31;
    /* step 0: row 0 (like mont_row0 with the multiplicand c), its reduction */
    uint32_t x[N], y[N];
#pragma unroll
    for (int k = 0; k < N; k += 2) {
        const uint32_t ce = sqr_word(a.v, a2, 0, k), co = sqr_word(a.v, a2, 0, k + 1);
        x[k] = mul_lo(a.v[0], ce); /* as Fp's mont_row0 */
        x[k + 1] = mul_hi(a.v[0], ce);
        y[k] = mul_lo(a.v[0], co);
        y[k + 1] = mul_hi(a.v[0], co);
    }
    mont_row_reduce<P>(x, y);
    /* steps 1..N-1, the arrays' roles alternating as in f_mul_raw */
#pragma unroll
    for (int i = 1; i < N; i += 2) {
        mont_row_reduce_shift<P>(y, x);
        sqr_row<P>(y, x, a.v, a2, i);
        if (i + 1 < N) {
            mont_row_reduce_shift<P>(x, y);
            sqr_row<P>(x, y, a.v, a2, i + 1);
        }
    }
    return mont_last_division<P>(x, y); /* ev = y, od = x, as in f_mul_raw */
}

/* a^2 2^(-32N) mod p, reduced (bounds of f_sqr_raw; for Fr those of f_mul). Built with
 * CUZK_GPU_SQR_MUL: f_mul(a, a) for every field (to compare the two). */
template <class P> GPU_HD Fe<P> f_sqr(const Fe<P> &a)
{
#ifdef CUZK_GPU_SQR_MUL
    return f_mul<P>(a, a);
#else
    if constexpr (sqr_fits<P>::value)
        return f_reduce_once<P>(f_sqr_raw<P>(a), 0);
    else
        return f_mul<P>(a, a);
#endif
}

/* Montgomery -> canonical: a * 1 * 2^(-32N). */
template <class P> GPU_HD Fe<P> f_from_mont(const Fe<P> &a)
{
    Fe<P> one_raw = f_zero<P>();
    one_raw.v[0] = 1;
    return f_mul<P>(a, one_raw);
}

#endif
