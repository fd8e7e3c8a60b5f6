/*
 * Internal to src/gpu: affine and XYZZ points on the device, written once for G1 (over Fp)
 * and G2 (over Fp2).
 */
#ifndef CUZK_GPU_EC_XYZZ_CUH
#define CUZK_GPU_EC_XYZZ_CUH

#include "gpu/ff/fp2.cuh"

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

template <class F> GPU_HD void xyzz_set_inf(xyzz_t<F> &r)
{
    fe_set_zero(r.x);
    fe_set_zero(r.y);
    fe_set_zero(r.zz);
    fe_set_zero(r.zzz);
}

template <class F> GPU_HD bool xyzz_is_inf(const xyzz_t<F> &a)
{
    return fe_is_zero(a.zz);
}

template <class F> GPU_HD bool aff_is_inf(const aff_t<F> &a)
{
    return fe_is_zero(a.x) && fe_is_zero(a.y);
}

/* Every value of the formulas is reduced. With the lazy forms of fp2.cuh between the
 * products (as the batch-affine sums have them) msm_accumulate_kernel<fp_t> spilled at its
 * 168 registers and ran 23 % slower (bench/RESULTS.md, session 18). The functions are
 * __host__ __device__ for G1 (tests/unit/test_gpu_affine.cu checks them against the CPU),
 * device code for G2. */

/* r = 2*(x, y) for an affine point with y != 0 (mdbl-2008-s-1):
 * U = 2y, V = U^2, W = U V, S = x V, M = 3x^2, X3 = M^2 - 2S, Y3 = M(S - X3) - W y,
 * ZZ3 = V, ZZZ3 = W. */
template <class F> GPU_HD void xyzz_dbl_affine(xyzz_t<F> &r, const F &x, const F &y)
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
 * X3 = M^2 - 2S, Y3 = M(S - X3) - W Y, ZZ3 = V ZZ, ZZZ3 = W ZZZ. Infinity stays infinity.
 * r may be a. */
template <class F> GPU_HD void xyzz_dbl(xyzz_t<F> &r, const xyzz_t<F> &a)
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
template <class F> GPU_HD void xyzz_add_affine(xyzz_t<F> &acc, const F &x, const F &y)
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
 * ZZ3 = ZZ1 ZZ2 PP, ZZZ3 = ZZZ1 ZZZ2 PPP. b is not acc. */
template <class F> GPU_HD void xyzz_add(xyzz_t<F> &acc, const xyzz_t<F> &b)
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

#endif
