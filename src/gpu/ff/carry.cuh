/*
 * Internal to src/gpu: the carry-chain primitives of the field arithmetic.
 *
 * Carry chains: each add.cc/addc/mad*.cc instruction is its own `asm volatile` statement
 * (the cc_* wrappers). Volatile asm statements keep their order, and the compiler emits no
 * carry-using instruction of its own between them in this straight-line unrolled code, so
 * the carry flag flows from one statement to the next. The wrappers are __host__ __device__:
 * host code runs the same chains with an explicit carry flag, which
 * tests/unit/test_gpu_arith.cu checks against the CPU library without a GPU.
 */
#ifndef CUZK_GPU_FF_CARRY_CUH
#define CUZK_GPU_FF_CARRY_CUH

#include <stdint.h>

#include "gpu/hd.cuh"

/* ---- carry-chain primitives ----
 * On the device each is one PTX instruction and the carry is the hardware flag (the gpu_cc
 * argument is unused and optimised away). In host code the same sequence runs with the flag
 * in gpu_cc, so a wrong chain fails the host test. The *_end forms take the carry but do not
 * produce one: on the host they record in gpu_cc_lost_ a carry that the code's bounds say
 * cannot happen (cc_none checks a dropped carry flag the same way). */
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
/* lo and hi of a b from one 64-bit product (mul.wide.u32: one IMAD.WIDE.U32 where mul.lo
 * and mul.hi are two instructions). */
GPU_HD void mul_wide(uint32_t a, uint32_t b, uint32_t &lo, uint32_t &hi)
{
#ifdef __CUDA_ARCH__
    uint64_t r;
    asm("mul.wide.u32 %0, %1, %2;" : "=l"(r) : "r"(a), "r"(b));
#else
    const uint64_t r = (uint64_t)a * b;
#endif
    lo = (uint32_t)r;
    hi = (uint32_t)(r >> 32);
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

#endif
