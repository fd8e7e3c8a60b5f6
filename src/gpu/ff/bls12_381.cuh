/*
 * Internal to src/gpu: the fields of BLS12-381, Fp (12 x 32-bit limbs) and Fr (8 limbs), as
 * parameters of the Montgomery template (ff/mont.cuh).
 *
 * Every translation unit that includes this file has its own copy of the __constant__
 * moduli; gpu_consts_upload() fills them for the current device (once per device per unit),
 * so every unit that launches kernels selects the device with gpu_use_device()
 * (gpu/device.cuh) before it does. The constants are not typed in here: they are read from
 * the CPU's CUZK_FP_MODULUS, CUZK_FR_MODULUS and set_one, and n0 = -p^-1 mod 2^32 is derived
 * by Newton iteration, so the device representation is the CPU's by construction
 * (tests/gpu compares the two).
 */
#ifndef CUZK_GPU_FF_BLS12_381_CUH
#define CUZK_GPU_FF_BLS12_381_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "cuzk/error.h"
#include "cuzk/ff.h"
#include "gpu/error.cuh"
#include "gpu/ff/mont.cuh"

/* ---- constants (per translation unit) ---- */
static __constant__ uint32_t c_fp_p[12];    /* p, 32-bit limbs, little-endian */
static __constant__ uint32_t c_fp_one[12];  /* 2^384 mod p (Montgomery one) */
static __constant__ uint32_t c_fp_n0;       /* -p^-1 mod 2^32 */
static __constant__ uint32_t c_fp_2p[12];   /* 2p (< 2^382): the batch-affine lazy sums */
static __constant__ uint32_t c_fr_p[8];     /* r */
static __constant__ uint32_t c_fr_one[8];   /* 2^256 mod r */
static __constant__ uint32_t c_fr_n0;       /* -r^-1 mod 2^32 */
static __constant__ uint32_t c_fr_2p[8];    /* 2r (< 2^256): the NTT's lazy sums */
/* The same values for host code: the field arithmetic below is __host__ __device__ so that
 * tests/unit/test_gpu_arith.cu can check it on a machine without a GPU. Filled by
 * gpu_consts_host_init(). */
static uint32_t h_fp_p[12], h_fp_one[12], h_fp_n0, h_fp_2p[12];
static uint32_t h_fr_p[8], h_fr_one[8], h_fr_n0, h_fr_2p[8];

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

/* out = 2 in, n limbs (in < 2^(32n - 1)). */
static inline void gpu_limbs_dbl(uint32_t *out, const uint32_t *in, int n)
{
    for (int j = 0; j < n; j++)
        out[j] = in[j] << 1 | (j ? in[j - 1] >> 31 : 0);
}

struct gpu_consts {
    uint32_t fp_p[12], fp_one[12], fp_2p[12], fr_p[8], fr_one[8], fr_2p[8], fp_n0, fr_n0;
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
    gpu_limbs_dbl(k->fp_2p, k->fp_p, 12); /* p < 2^381 */
    gpu_limbs_dbl(k->fr_2p, k->fr_p, 8);  /* r < 2^255 */
}

/* Host copies of the constants (tests only; not thread safe). */
static inline void gpu_consts_host_init(void)
{
    gpu_consts k;
    gpu_consts_compute(&k);
    memcpy(h_fp_p, k.fp_p, sizeof h_fp_p);
    memcpy(h_fp_one, k.fp_one, sizeof h_fp_one);
    memcpy(h_fp_2p, k.fp_2p, sizeof h_fp_2p);
    memcpy(h_fr_p, k.fr_p, sizeof h_fr_p);
    memcpy(h_fr_one, k.fr_one, sizeof h_fr_one);
    memcpy(h_fr_2p, k.fr_2p, sizeof h_fr_2p);
    h_fp_n0 = k.fp_n0;
    h_fr_n0 = k.fr_n0;
}

static unsigned gpu_consts_done_; /* bit d: device d holds this unit's constants */

static inline cuzk_err gpu_consts_upload(int device)
{
    if (device < 32 && (__atomic_load_n(&gpu_consts_done_, __ATOMIC_ACQUIRE) >> device) & 1u)
        return CUZK_OK;
    gpu_consts k;
    gpu_consts_compute(&k);
    GPU_CHECK(cudaMemcpyToSymbol(c_fp_p, k.fp_p, sizeof k.fp_p));
    GPU_CHECK(cudaMemcpyToSymbol(c_fp_one, k.fp_one, sizeof k.fp_one));
    GPU_CHECK(cudaMemcpyToSymbol(c_fp_n0, &k.fp_n0, sizeof k.fp_n0));
    GPU_CHECK(cudaMemcpyToSymbol(c_fp_2p, k.fp_2p, sizeof k.fp_2p));
    GPU_CHECK(cudaMemcpyToSymbol(c_fr_p, k.fr_p, sizeof k.fr_p));
    GPU_CHECK(cudaMemcpyToSymbol(c_fr_one, k.fr_one, sizeof k.fr_one));
    GPU_CHECK(cudaMemcpyToSymbol(c_fr_n0, &k.fr_n0, sizeof k.fr_n0));
    GPU_CHECK(cudaMemcpyToSymbol(c_fr_2p, k.fr_2p, sizeof k.fr_2p));
    /* the copies (legacy stream, pageable source) may still be in flight when they return;
     * the kernels that read the constants run on other streams, which do not wait for them */
    GPU_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    if (device < 32)
        __atomic_fetch_or(&gpu_consts_done_, 1u << device, __ATOMIC_RELEASE);
    return CUZK_OK;
}

/* ---- the fields' parameters ----
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
        static GPU_HD uint32_t p(int j)                                                     \
        {                                                                                   \
            return GPU_FIELD_CONST(c_##pre##_p[j], h_##pre##_p[j]);                         \
        }                                                                                   \
        static GPU_HD uint32_t one(int j)                                                   \
        {                                                                                   \
            return GPU_FIELD_CONST(c_##pre##_one[j], h_##pre##_one[j]);                     \
        }                                                                                   \
        static GPU_HD uint32_t n0() { return GPU_FIELD_CONST(c_##pre##_n0, h_##pre##_n0); } \
    };
GPU_FIELD_PARAMS(FpP, 12, fp)
GPU_FIELD_PARAMS(FrP, 8, fr)
/* 2r as a modulus for the lazy sums and differences of Fr values kept in [0, 2r) (f_add and
 * f_sub with M = FrDblP): the NTT's passes, whose products take such values as their second
 * argument (f_mul_raw(w, x) < 2r for a reduced w and any x < 2^256). */
struct FrDblP {
    static constexpr int N = 8;
    static GPU_HD uint32_t p(int j) { return GPU_FIELD_CONST(c_fr_2p[j], h_fr_2p[j]); }
};
/* 2p as a modulus for the lazy sums and differences of Fp values kept in [0, 2p) (f_add and
 * f_sub with M = FpDblP): the batch-affine sums' intermediate values (fp2.cuh's fe_*_lz),
 * which products take as either argument (f_mul_raw and f_sqr_raw accept any a, b < 2p). */
struct FpDblP {
    static constexpr int N = 12;
    static GPU_HD uint32_t p(int j) { return GPU_FIELD_CONST(c_fp_2p[j], h_fp_2p[j]); }
};
/* Fp has the room for the dedicated squaring (f_sqr_raw's bounds: p < 2^381); Fr does not. */
template <> struct sqr_fits<FpP> {
    static constexpr bool value = true;
};

/* r = 1 - 2^32 mod 2^64 (its words 0 and 1 are 1 and 2^32 - 1): the reduction rows without
 * the products by those words (mont_row_reduce_low; test_gpu_arith checks the words). */
template <> struct mont_low_form<FrP> {
    static constexpr bool value = true;
};

typedef Fe<FpP> fp_t;
typedef Fe<FrP> fr_t;

#endif
