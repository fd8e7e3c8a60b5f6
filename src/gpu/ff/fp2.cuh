/*
 * Internal to src/gpu: Fp2 = Fp[u]/(u^2 + 1) on the device, and the field operations of the
 * point code (ec/xyzz.cuh) as one set of overloads on fp_t (G1) and fp2_t (G2).
 */
#ifndef CUZK_GPU_FF_FP2_CUH
#define CUZK_GPU_FF_FP2_CUH

#include "gpu/ff/bls12_381.cuh"

/* ---- Fp2 = Fp[u]/(u^2 + 1), the same layout as cuzk_fp2 (c0 + c1 u) ---- */
struct __align__(16) fp2_t {
    fp_t c0, c1;
};

/* ---- one set of field operations for the point code: overloads on fp_t and fp2_t ----
 * Values are reduced (< p), but for the *_lz forms of Fp, which take and give lazy values in
 * [0, 2p) (products without their final subtraction, sums and differences modulo 2p; the
 * bounds of f_mul_raw / f_sqr_raw hold for any inputs below 2p since 4p < 2^384), and
 * fe_red, which reduces one: the batch-affine sums (msm/affine.cuh) use them. The Fp forms
 * are __host__ __device__: tests/unit/test_gpu_affine.cu runs the G1 point code on the CPU. */
GPU_HD fp_t fe_add(const fp_t &a, const fp_t &b) { return f_add<FpP>(a, b); }
GPU_HD fp_t fe_sub(const fp_t &a, const fp_t &b) { return f_sub<FpP>(a, b); }
GPU_HD fp_t fe_dbl(const fp_t &a) { return f_dbl<FpP>(a); }
GPU_HD fp_t fe_neg(const fp_t &a) { return f_neg<FpP>(a); }
GPU_HD fp_t fe_mul(const fp_t &a, const fp_t &b) { return f_mul<FpP>(a, b); }
GPU_HD fp_t fe_sqr(const fp_t &a) { return f_sqr<FpP>(a); }
GPU_HD bool fe_is_zero(const fp_t &a) { return f_is_zero<FpP>(a); }
GPU_HD void fe_set_zero(fp_t &r) { r = f_zero<FpP>(); }
GPU_HD void fe_set_one(fp_t &r) { r = f_one<FpP>(); }
GPU_HD fp_t fe_add_lz(const fp_t &a, const fp_t &b) { return f_add<FpP, FpDblP>(a, b); }
GPU_HD fp_t fe_sub_lz(const fp_t &a, const fp_t &b) { return f_sub<FpP, FpDblP>(a, b); }
GPU_HD fp_t fe_dbl_lz(const fp_t &a) { return f_add<FpP, FpDblP>(a, a); }
GPU_HD fp_t fe_mul_lz(const fp_t &a, const fp_t &b) { return f_mul_raw<FpP>(a, b); }
GPU_HD fp_t fe_sqr_lz(const fp_t &a) { return f_sqr_raw<FpP>(a); }
GPU_HD fp_t fe_red(const fp_t &a) { return f_reduce_once<FpP>(a, 0); }

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

#endif
