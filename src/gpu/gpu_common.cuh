/*
 * Internal to src/gpu: CUDA error checking, Montgomery arithmetic for Fp (12 x 32-bit limbs)
 * and Fr (8 x 32-bit limbs) with carry-chain PTX, Fp2 on top of Fp, and XYZZ point arithmetic
 * written once for G1 (over Fp) and G2 (over Fp2).
 *
 * Every translation unit that includes this file has its own copy of the __constant__
 * moduli; gpu_consts_upload() fills them for the current device (once per device per unit).
 * The constants are not typed in here: they are read from the CPU's CUZK_FP_MODULUS,
 * CUZK_FR_MODULUS and set_one, and n0 = -p^-1 mod 2^32 is derived by Newton iteration, so the
 * device representation is the CPU's by construction (tests/gpu compares the two).
 *
 * Carry chains: each add.cc/addc/mad*.cc instruction is its own `asm volatile` statement
 * (the cc_* wrappers). Volatile asm statements keep their order, and the compiler emits no
 * carry-using instruction of its own between them in this straight-line unrolled code, so
 * the carry flag flows from one statement to the next. The field arithmetic is
 * __host__ __device__: host code runs the same chains with an explicit carry flag, which
 * tests/unit/test_gpu_arith.cu checks against the CPU library without a GPU.
 */
#ifndef CUZK_GPU_COMMON_CUH
#define CUZK_GPU_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "cuzk/error.h"
#include "cuzk/ff.h"

/* ---- errors ---- */
static inline cuzk_err gpu_fail(cudaError_t e, const char *what, const char *file, int line)
{
    (void)cudaGetLastError(); /* clear the recorded error (a sticky one stays) */
    return cuzk_error_set(CUZK_EGPU, "%s:%d: %s: %s (%s)", file, line, what,
                          cudaGetErrorName(e), cudaGetErrorString(e));
}
/* Returns CUZK_EGPU from the enclosing function when the CUDA call fails. */
#define GPU_CHECK(call)                                                   \
    do {                                                                  \
        cudaError_t gpu_e_ = (call);                                      \
        if (gpu_e_ != cudaSuccess)                                        \
            return gpu_fail(gpu_e_, #call, __FILE__, __LINE__);           \
    } while (0)
/* After a kernel launch: launch-configuration errors. */
#define GPU_CHECK_LAUNCH(name) GPU_CHECK(cudaGetLastError() /* launch of name */)
/* Propagates a cuzk_err. */
#define GPU_TRY(expr)                    \
    do {                                 \
        cuzk_err gpu_r_ = (expr);        \
        if (gpu_r_ != CUZK_OK)           \
            return gpu_r_;               \
    } while (0)

/* ---- constants (per translation unit) ---- */
static __constant__ uint32_t c_fp_p[12];    /* p, 32-bit limbs, little-endian */
static __constant__ uint32_t c_fp_one[12];  /* 2^384 mod p (Montgomery one) */
static __constant__ uint32_t c_fp_n0;       /* -p^-1 mod 2^32 */
static __constant__ uint32_t c_fr_p[8];     /* r */
static __constant__ uint32_t c_fr_one[8];   /* 2^256 mod r */
static __constant__ uint32_t c_fr_n0;       /* -r^-1 mod 2^32 */
/* The same values for host code: the field arithmetic below is __host__ __device__ so that
 * tests/unit/test_gpu_arith.cu can check it on a machine without a GPU. Filled by
 * gpu_consts_host_init(). */
static uint32_t h_fp_p[12], h_fp_one[12], h_fp_n0, h_fr_p[8], h_fr_one[8], h_fr_n0;

static inline uint32_t gpu_neg_inv32(uint32_t p0)
{
    uint32_t inv = 1; /* Newton: inv = inv*(2 - p0*inv) doubles the correct low bits */
    for (int i = 0; i < 5; i++)
        inv *= 2u - p0 * inv;
    return 0u - inv;
}

static inline void gpu_limbs32(uint32_t *out, const uint64_t *in, int n64)
{
    for (int i = 0; i < n64; i++) {
        out[2 * i] = (uint32_t)in[i];
        out[2 * i + 1] = (uint32_t)(in[i] >> 32);
    }
}

struct gpu_consts {
    uint32_t fp_p[12], fp_one[12], fr_p[8], fr_one[8], fp_n0, fr_n0;
};

static inline void gpu_consts_compute(gpu_consts *k)
{
    cuzk_fp one_p;
    cuzk_fr one_r;
    cuzk_fp_set_one(&one_p);
    cuzk_fr_set_one(&one_r);
    gpu_limbs32(k->fp_p, CUZK_FP_MODULUS.l, 6);
    gpu_limbs32(k->fp_one, one_p.l, 6);
    gpu_limbs32(k->fr_p, CUZK_FR_MODULUS.l, 4);
    gpu_limbs32(k->fr_one, one_r.l, 4);
    k->fp_n0 = gpu_neg_inv32(k->fp_p[0]);
    k->fr_n0 = gpu_neg_inv32(k->fr_p[0]);
}

/* Host copies of the constants (tests only; not thread safe). */
static inline void gpu_consts_host_init(void)
{
    gpu_consts k;
    gpu_consts_compute(&k);
    memcpy(h_fp_p, k.fp_p, sizeof h_fp_p);
    memcpy(h_fp_one, k.fp_one, sizeof h_fp_one);
    memcpy(h_fr_p, k.fr_p, sizeof h_fr_p);
    memcpy(h_fr_one, k.fr_one, sizeof h_fr_one);
    h_fp_n0 = k.fp_n0;
    h_fr_n0 = k.fr_n0;
}

static unsigned gpu_consts_done_; /* bit d: device d holds this unit's constants */

static cuzk_err gpu_consts_upload(int device)
{
    if (device < 32 && (__atomic_load_n(&gpu_consts_done_, __ATOMIC_ACQUIRE) >> device) & 1u)
        return CUZK_OK;
    gpu_consts k;
    gpu_consts_compute(&k);
    GPU_CHECK(cudaMemcpyToSymbol(c_fp_p, k.fp_p, sizeof k.fp_p));
    GPU_CHECK(cudaMemcpyToSymbol(c_fp_one, k.fp_one, sizeof k.fp_one));
    GPU_CHECK(cudaMemcpyToSymbol(c_fp_n0, &k.fp_n0, sizeof k.fp_n0));
    GPU_CHECK(cudaMemcpyToSymbol(c_fr_p, k.fr_p, sizeof k.fr_p));
    GPU_CHECK(cudaMemcpyToSymbol(c_fr_one, k.fr_one, sizeof k.fr_one));
    GPU_CHECK(cudaMemcpyToSymbol(c_fr_n0, &k.fr_n0, sizeof k.fr_n0));
    if (device < 32)
        __atomic_fetch_or(&gpu_consts_done_, 1u << device, __ATOMIC_RELEASE);
    return CUZK_OK;
}

/* ---- carry-chain primitives ----
 * On the device each is one PTX instruction and the carry is the hardware flag (the gpu_cc
 * argument is unused and optimised away). In host code the same sequence runs with the flag
 * in gpu_cc, so a wrong chain fails the host test. The *_end forms take the carry but do not
 * produce one: on the host they record in gpu_cc_lost_ a carry that the code's bounds say
 * cannot happen (cc_none checks a dropped carry flag the same way). */
#define GPU_HD __host__ __device__ __forceinline__
struct gpu_cc {
    uint32_t f;
};
static int gpu_cc_lost_; /* host: a carry or borrow was lost where the bounds say none */
#ifdef __CUDA_ARCH__
#define GPU_CC2(op, a, b)                                                \
    do {                                                                 \
        (void)c;                                                         \
        uint32_t r_;                                                     \
        asm volatile(op " %0, %1, %2;" : "=r"(r_) : "r"(a), "r"(b));     \
        return r_;                                                       \
    } while (0)
#define GPU_CC3(op, a, b, d)                                                     \
    do {                                                                         \
        (void)c;                                                                 \
        uint32_t r_;                                                             \
        asm volatile(op " %0, %1, %2, %3;" : "=r"(r_) : "r"(a), "r"(b), "r"(d)); \
        return r_;                                                               \
    } while (0)
#endif

GPU_HD uint32_t cc_add(gpu_cc &c, uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    GPU_CC2("add.cc.u32", a, b);
#else
    const uint64_t s = (uint64_t)a + b;
    c.f = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}
GPU_HD uint32_t cc_addc(gpu_cc &c, uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    GPU_CC2("addc.cc.u32", a, b);
#else
    const uint64_t s = (uint64_t)a + b + c.f;
    c.f = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}
GPU_HD uint32_t cc_addc_end(gpu_cc &c, uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    GPU_CC2("addc.u32", a, b);
#else
    const uint64_t s = (uint64_t)a + b + c.f;
    if (s >> 32)
        gpu_cc_lost_ = 1;
    return (uint32_t)s;
#endif
}
GPU_HD uint32_t cc_sub(gpu_cc &c, uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    GPU_CC2("sub.cc.u32", a, b);
#else
    const uint64_t d = (uint64_t)a - b;
    c.f = (uint32_t)(d >> 32) & 1;
    return (uint32_t)d;
#endif
}
GPU_HD uint32_t cc_subc(gpu_cc &c, uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    GPU_CC2("subc.cc.u32", a, b);
#else
    const uint64_t d = (uint64_t)a - b - c.f;
    c.f = (uint32_t)(d >> 32) & 1;
    return (uint32_t)d;
#endif
}
/* a - b - borrow without a borrow out; wraps (subc(0, 0) is the borrow as a mask). */
GPU_HD uint32_t cc_subc_end(gpu_cc &c, uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    GPU_CC2("subc.u32", a, b);
#else
    return (uint32_t)((uint64_t)a - b - c.f);
#endif
}
/* lo(a b) + d, hi(a b) + d, with or without the carry in (madc); all produce a carry. */
GPU_HD uint32_t cc_mad_lo(gpu_cc &c, uint32_t a, uint32_t b, uint32_t d)
{
#ifdef __CUDA_ARCH__
    GPU_CC3("mad.lo.cc.u32", a, b, d);
#else
    const uint64_t s = (uint64_t)(uint32_t)(a * b) + d;
    c.f = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}
GPU_HD uint32_t cc_madc_lo(gpu_cc &c, uint32_t a, uint32_t b, uint32_t d)
{
#ifdef __CUDA_ARCH__
    GPU_CC3("madc.lo.cc.u32", a, b, d);
#else
    const uint64_t s = (uint64_t)(uint32_t)(a * b) + d + c.f;
    c.f = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}
GPU_HD uint32_t cc_mad_hi(gpu_cc &c, uint32_t a, uint32_t b, uint32_t d)
{
#ifdef __CUDA_ARCH__
    GPU_CC3("mad.hi.cc.u32", a, b, d);
#else
    const uint64_t s = (((uint64_t)a * b) >> 32) + d;
    c.f = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}
GPU_HD uint32_t cc_madc_hi(gpu_cc &c, uint32_t a, uint32_t b, uint32_t d)
{
#ifdef __CUDA_ARCH__
    GPU_CC3("madc.hi.cc.u32", a, b, d);
#else
    const uint64_t s = (((uint64_t)a * b) >> 32) + d + c.f;
    c.f = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}
GPU_HD uint32_t cc_madc_hi_end(gpu_cc &c, uint32_t a, uint32_t b, uint32_t d)
{
#ifdef __CUDA_ARCH__
    GPU_CC3("madc.hi.u32", a, b, d);
#else
    const uint64_t s = (((uint64_t)a * b) >> 32) + d + c.f;
    if (s >> 32)
        gpu_cc_lost_ = 1;
    return (uint32_t)s;
#endif
}
/* The carry flag is dropped here; the bounds say it is 0 (checked on the host). */
GPU_HD void cc_none(const gpu_cc &c)
{
#ifdef __CUDA_ARCH__
    (void)c;
#else
    if (c.f)
        gpu_cc_lost_ = 1;
#endif
}
GPU_HD uint32_t mul_lo(uint32_t a, uint32_t b) { return a * b; }
GPU_HD uint32_t mul_hi(uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}

/* ---- fields ----
 * A field's parameters: its modulus, Montgomery one and -p^-1 mod 2^32, from the constant
 * bank on the device and from the host copies in host code (the host tests). */
#ifdef __CUDA_ARCH__
#define GPU_FIELD_CONST(dev, host) (dev)
#else
#define GPU_FIELD_CONST(dev, host) (host)
#endif
#define GPU_FIELD_PARAMS(Name, limbs, pre)                                                  \
    struct Name {                                                                           \
        static constexpr int N = limbs;                                                     \
        static GPU_HD uint32_t p(int j) { return GPU_FIELD_CONST(c_##pre##_p[j], h_##pre##_p[j]); } \
        static GPU_HD uint32_t one(int j) { return GPU_FIELD_CONST(c_##pre##_one[j], h_##pre##_one[j]); } \
        static GPU_HD uint32_t n0() { return GPU_FIELD_CONST(c_##pre##_n0, h_##pre##_n0); } \
    };
GPU_FIELD_PARAMS(FpP, 12, fp)
GPU_FIELD_PARAMS(FrP, 8, fr)

template <class P> struct __align__(16) Fe {
    uint32_t v[P::N];
};
typedef Fe<FpP> fp_t;
typedef Fe<FrP> fr_t;

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

/* r = s - p if s >= p (s + hi 2^(32N) < 2p, hi the word above s), else s. */
template <class P> GPU_HD Fe<P> f_reduce_once(const Fe<P> &s, uint32_t hi)
{
    constexpr int N = P::N;
    Fe<P> d;
    gpu_cc c;
    d.v[0] = cc_sub(c, s.v[0], P::p(0));
#pragma unroll
    for (int j = 1; j < N; j++)
        d.v[j] = cc_subc(c, s.v[j], P::p(j));
    const uint32_t borrow = cc_subc_end(c, hi, 0); /* 0 or all ones: s < p */
#pragma unroll
    for (int j = 0; j < N; j++)
        d.v[j] = borrow ? s.v[j] : d.v[j];
    return d;
}

/* r = a + b mod p (inputs reduced; p < 2^(32N-1) so a + b fits in N limbs). */
template <class P> GPU_HD Fe<P> f_add(const Fe<P> &a, const Fe<P> &b)
{
    constexpr int N = P::N;
    Fe<P> s;
    gpu_cc c;
    s.v[0] = cc_add(c, a.v[0], b.v[0]);
#pragma unroll
    for (int j = 1; j < N; j++)
        s.v[j] = cc_addc(c, a.v[j], b.v[j]);
    cc_none(c);
    return f_reduce_once<P>(s, 0);
}

/* r = a - b mod p. */
template <class P> GPU_HD Fe<P> f_sub(const Fe<P> &a, const Fe<P> &b)
{
    constexpr int N = P::N;
    Fe<P> d;
    gpu_cc c;
    d.v[0] = cc_sub(c, a.v[0], b.v[0]);
#pragma unroll
    for (int j = 1; j < N; j++)
        d.v[j] = cc_subc(c, a.v[j], b.v[j]);
    const uint32_t borrow = cc_subc_end(c, 0, 0);
    d.v[0] = cc_add(c, d.v[0], P::p(0) & borrow);
#pragma unroll
    for (int j = 1; j < N; j++)
        d.v[j] = cc_addc(c, d.v[j], P::p(j) & borrow);
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

template <class P> GPU_HD void mont_row_reduce(uint32_t *ev, uint32_t *od)
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

/* Row 0: ev, od = the products a b_0 (no sums yet), then the reduction. */
template <class P> GPU_HD void mont_row0(uint32_t *ev, uint32_t *od, const uint32_t *a, uint32_t bi)
{
    constexpr int N = P::N;
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        ev[j] = mul_lo(a[j], bi);
        ev[j + 1] = mul_hi(a[j], bi);
        od[j] = mul_lo(a[j + 1], bi);
        od[j + 1] = mul_hi(a[j + 1], bi);
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
template <> struct sqr_fits<FpP> {
    static constexpr bool value = true;
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
        x[k] = mul_lo(a.v[0], ce);
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

/* ---- global memory access (16-byte vectors) ---- */
template <class T> __device__ __forceinline__ T ld_vec(const T *p)
{
    static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
    T r;
    const uint4 *s = reinterpret_cast<const uint4 *>(p);
    uint4 *d = reinterpret_cast<uint4 *>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = __ldg(s + i);
    return r;
}
template <class T> __device__ __forceinline__ T ld_vec_rw(const T *p)
{
    T r;
    const uint4 *s = reinterpret_cast<const uint4 *>(p);
    uint4 *d = reinterpret_cast<uint4 *>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = s[i];
    return r;
}
template <class T> __device__ __forceinline__ void st_vec(T *p, const T &v)
{
    uint4 *d = reinterpret_cast<uint4 *>(p);
    const uint4 *s = reinterpret_cast<const uint4 *>(&v);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = s[i];
}

/* The same three for code that also runs on the host (the host tests of device code): plain
 * accesses there. hd_ld reads through the read-only cache (data no thread of the kernel
 * writes); hd_ld_rw and hd_st for data the kernel writes. */
template <class T> GPU_HD T hd_ld(const T *p)
{
#ifdef __CUDA_ARCH__
    return ld_vec(p);
#else
    return *p;
#endif
}
template <class T> GPU_HD T hd_ld_rw(const T *p)
{
#ifdef __CUDA_ARCH__
    return ld_vec_rw(p);
#else
    return *p;
#endif
}
template <class T> GPU_HD void hd_st(T *p, const T &v)
{
#ifdef __CUDA_ARCH__
    st_vec(p, v);
#else
    *p = v;
#endif
}

/* ---- Fp2 = Fp[u]/(u^2 + 1), the same layout as cuzk_fp2 (c0 + c1 u) ---- */
struct __align__(16) fp2_t {
    fp_t c0, c1;
};

/* ---- one set of field operations for the point code: overloads on fp_t and fp2_t ---- */
__device__ __forceinline__ fp_t fe_add(const fp_t &a, const fp_t &b) { return f_add<FpP>(a, b); }
__device__ __forceinline__ fp_t fe_sub(const fp_t &a, const fp_t &b) { return f_sub<FpP>(a, b); }
__device__ __forceinline__ fp_t fe_dbl(const fp_t &a) { return f_dbl<FpP>(a); }
__device__ __forceinline__ fp_t fe_neg(const fp_t &a) { return f_neg<FpP>(a); }
__device__ __forceinline__ fp_t fe_mul(const fp_t &a, const fp_t &b) { return f_mul<FpP>(a, b); }
__device__ __forceinline__ fp_t fe_sqr(const fp_t &a) { return f_sqr<FpP>(a); }
__device__ __forceinline__ bool fe_is_zero(const fp_t &a) { return f_is_zero<FpP>(a); }
__device__ __forceinline__ void fe_set_zero(fp_t &r) { r = f_zero<FpP>(); }
__device__ __forceinline__ void fe_set_one(fp_t &r) { r = f_one<FpP>(); }

__device__ __forceinline__ fp2_t fe_add(const fp2_t &a, const fp2_t &b)
{
    fp2_t r;
    r.c0 = f_add<FpP>(a.c0, b.c0);
    r.c1 = f_add<FpP>(a.c1, b.c1);
    return r;
}
__device__ __forceinline__ fp2_t fe_sub(const fp2_t &a, const fp2_t &b)
{
    fp2_t r;
    r.c0 = f_sub<FpP>(a.c0, b.c0);
    r.c1 = f_sub<FpP>(a.c1, b.c1);
    return r;
}
__device__ __forceinline__ fp2_t fe_dbl(const fp2_t &a) { return fe_add(a, a); }
__device__ __forceinline__ fp2_t fe_neg(const fp2_t &a)
{
    fp2_t r;
    r.c0 = f_neg<FpP>(a.c0);
    r.c1 = f_neg<FpP>(a.c1);
    return r;
}
/* (a0 + a1 u)(b0 + b1 u) with u^2 = -1 (Karatsuba): t0 = a0 b0, t1 = a1 b1,
 * c0 = t0 - t1, c1 = (a0 + a1)(b0 + b1) - t0 - t1. The Fp2 product and square are calls,
 * not inlined: the G2 point code then compiles in reasonable time and registers (three Fp
 * products dwarf the cost of a call). */
static __device__ __noinline__ fp2_t fe_mul(const fp2_t &a, const fp2_t &b)
{
    const fp_t t0 = f_mul<FpP>(a.c0, b.c0);
    const fp_t t1 = f_mul<FpP>(a.c1, b.c1);
    const fp_t t2 = f_mul<FpP>(f_add<FpP>(a.c0, a.c1), f_add<FpP>(b.c0, b.c1));
    fp2_t r;
    r.c0 = f_sub<FpP>(t0, t1);
    r.c1 = f_sub<FpP>(f_sub<FpP>(t2, t0), t1);
    return r;
}
/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u. */
static __device__ __noinline__ fp2_t fe_sqr(const fp2_t &a)
{
    fp2_t r;
    r.c0 = f_mul<FpP>(f_add<FpP>(a.c0, a.c1), f_sub<FpP>(a.c0, a.c1));
    r.c1 = f_dbl<FpP>(f_mul<FpP>(a.c0, a.c1));
    return r;
}
__device__ __forceinline__ bool fe_is_zero(const fp2_t &a)
{
    return f_is_zero<FpP>(a.c0) && f_is_zero<FpP>(a.c1);
}
__device__ __forceinline__ void fe_set_zero(fp2_t &r)
{
    r.c0 = f_zero<FpP>();
    r.c1 = f_zero<FpP>();
}
__device__ __forceinline__ void fe_set_one(fp2_t &r)
{
    r.c0 = f_one<FpP>();
    r.c1 = f_zero<FpP>();
}

/* ---- points over F = fp_t (G1: y^2 = x^3 + 4) or fp2_t (G2: y^2 = x^3 + 4(1 + u)).
 * Layouts are the CPU's (cuzk_gN_affine, cuzk_gN_xyzz). The formulas use a = 0 only, never
 * the constant b, so one template serves both groups. ---- */
template <class F> struct __align__(16) aff_t {
    F x, y; /* infinity: (0, 0) */
};
template <class F> struct __align__(16) xyzz_t {
    F x, y, zz, zzz; /* (X/ZZ, Y/ZZZ); infinity: ZZ = 0 */
};
typedef aff_t<fp_t> g1_aff_t;
typedef xyzz_t<fp_t> g1_xyzz_t;
typedef aff_t<fp2_t> g2_aff_t;
typedef xyzz_t<fp2_t> g2_xyzz_t;

template <class F> __device__ __forceinline__ void xyzz_set_inf(xyzz_t<F> &r)
{
    fe_set_zero(r.x);
    fe_set_zero(r.y);
    fe_set_zero(r.zz);
    fe_set_zero(r.zzz);
}

template <class F> __device__ __forceinline__ bool xyzz_is_inf(const xyzz_t<F> &a)
{
    return fe_is_zero(a.zz);
}

template <class F> __device__ __forceinline__ bool aff_is_inf(const aff_t<F> &a)
{
    return fe_is_zero(a.x) && fe_is_zero(a.y);
}

/* r = 2*(x, y) for an affine point with y != 0 (mdbl-2008-s-1):
 * U = 2y, V = U^2, W = U V, S = x V, M = 3x^2, X3 = M^2 - 2S, Y3 = M(S - X3) - W y,
 * ZZ3 = V, ZZZ3 = W. */
template <class F>
__device__ __forceinline__ void xyzz_dbl_affine(xyzz_t<F> &r, const F &x, const F &y)
{
    F u = fe_dbl(y);
    F v = fe_sqr(u);
    F w = fe_mul(u, v);
    F s = fe_mul(x, v);
    F x2 = fe_sqr(x);
    F m = fe_add(fe_dbl(x2), x2);
    F x3 = fe_sub(fe_sqr(m), fe_dbl(s));
    F y3 = fe_sub(fe_mul(m, fe_sub(s, x3)), fe_mul(w, y));
    r.x = x3;
    r.y = y3;
    r.zz = v;
    r.zzz = w;
}

/* r = 2a (dbl-2008-s-1 with a = 0): U = 2Y, V = U^2, W = U V, S = X V, M = 3X^2,
 * X3 = M^2 - 2S, Y3 = M(S - X3) - W Y, ZZ3 = V ZZ, ZZZ3 = W ZZZ. Infinity stays infinity. */
template <class F> __device__ __forceinline__ void xyzz_dbl(xyzz_t<F> &r, const xyzz_t<F> &a)
{
    if (xyzz_is_inf(a)) {
        r = a;
        return;
    }
    F u = fe_dbl(a.y);
    F v = fe_sqr(u);
    F w = fe_mul(u, v);
    F s = fe_mul(a.x, v);
    F x2 = fe_sqr(a.x);
    F m = fe_add(fe_dbl(x2), x2);
    F x3 = fe_sub(fe_sqr(m), fe_dbl(s));
    F y3 = fe_sub(fe_mul(m, fe_sub(s, x3)), fe_mul(w, a.y));
    r.zz = fe_mul(v, a.zz);
    r.zzz = fe_mul(w, a.zzz);
    r.x = x3;
    r.y = y3;
}

/* acc += (x, y), an affine point that is not infinity (madd-2008-s):
 * U2 = x ZZ, S2 = y ZZZ, P = U2 - X, R = S2 - Y, PP = P^2, PPP = P PP, Q = X PP,
 * X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - Y PPP, ZZ3 = ZZ PP, ZZZ3 = ZZZ PPP.
 * P = 0: the same x, so doubling (R = 0) or infinity (R != 0, the negative). The order
 * keeps few values live (ZZ and ZZZ are updated as soon as PP and PPP exist, Y PPP is
 * formed before X3): registers bound the MSM kernels (msm_accumulate_kernel<fp_t> then fits
 * 168 registers without spills). */
template <class F>
__device__ __forceinline__ void xyzz_add_affine(xyzz_t<F> &acc, const F &x, const F &y)
{
    if (xyzz_is_inf(acc)) {
        acc.x = x;
        acc.y = y;
        fe_set_one(acc.zz);
        acc.zzz = acc.zz;
        return;
    }
    const F p = fe_sub(fe_mul(x, acc.zz), acc.x);
    const F r = fe_sub(fe_mul(y, acc.zzz), acc.y);
    if (fe_is_zero(p)) {
        if (fe_is_zero(r))
            xyzz_dbl_affine(acc, x, y);
        else
            xyzz_set_inf(acc);
        return;
    }
    const F pp = fe_sqr(p);
    acc.zz = fe_mul(acc.zz, pp);
    const F ppp = fe_mul(p, pp);
    acc.zzz = fe_mul(acc.zzz, ppp);
    const F q = fe_mul(acc.x, pp);
    const F yppp = fe_mul(acc.y, ppp);
    acc.x = fe_sub(fe_sub(fe_sqr(r), ppp), fe_dbl(q));
    acc.y = fe_sub(fe_mul(r, fe_sub(q, acc.x)), yppp);
}

/* acc += b (add-2008-s): U1 = X1 ZZ2, U2 = X2 ZZ1, S1 = Y1 ZZZ2, S2 = Y2 ZZZ1, P = U2 - U1,
 * R = S2 - S1, PP = P^2, PPP = P PP, Q = U1 PP, X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - S1 PPP,
 * ZZ3 = ZZ1 ZZ2 PP, ZZZ3 = ZZZ1 ZZZ2 PPP. */
template <class F> __device__ __forceinline__ void xyzz_add(xyzz_t<F> &acc, const xyzz_t<F> &b)
{
    if (xyzz_is_inf(b))
        return;
    if (xyzz_is_inf(acc)) {
        acc = b;
        return;
    }
    const F u1 = fe_mul(acc.x, b.zz);
    const F s1 = fe_mul(acc.y, b.zzz);
    const F p = fe_sub(fe_mul(b.x, acc.zz), u1);
    const F r = fe_sub(fe_mul(b.y, acc.zzz), s1);
    if (fe_is_zero(p)) {
        if (fe_is_zero(r))
            xyzz_dbl(acc, acc);
        else
            xyzz_set_inf(acc);
        return;
    }
    /* the same order as xyzz_add_affine: few live values */
    const F pp = fe_sqr(p);
    acc.zz = fe_mul(fe_mul(acc.zz, b.zz), pp);
    const F ppp = fe_mul(p, pp);
    acc.zzz = fe_mul(fe_mul(acc.zzz, b.zzz), ppp);
    const F q = fe_mul(u1, pp);
    const F s1ppp = fe_mul(s1, ppp);
    acc.x = fe_sub(fe_sub(fe_sqr(r), ppp), fe_dbl(q));
    acc.y = fe_sub(fe_mul(r, fe_sub(q, acc.x)), s1ppp);
}

/* ---- device selection helper ---- */
static inline cuzk_err gpu_use_device(int device)
{
    GPU_CHECK(cudaSetDevice(device));
    GPU_TRY(gpu_consts_upload(device));
    return CUZK_OK;
}

static inline unsigned gpu_blocks(size_t n, unsigned threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

#endif
