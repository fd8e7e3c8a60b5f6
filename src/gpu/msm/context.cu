/*
 * MSM contexts (cuzk/gpu.h): creation with resident bases, the window choice, the checks of
 * a call, the accumulation and profiling settings, and freeing.
 */
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/msm/msm.cuh"
#include "gpu/msm/stream.cuh"

double msm_cost(size_t n, unsigned c, bool one_set)
{
    const unsigned W = (256 + c - 1) / c;
    const double nb = (one_set ? 1.0 : (double)W) * (double)(1u << (c - 1));
    unsigned keybits = 1;
    while ((double)(1ULL << keybits) <= nb)
        keybits++;
    return (double)n * W * (1.0 + 0.15 * ((keybits + 7) / 8)) + 2.5 * nb;
}

/* The window of least msm_cost, with W windows of buckets or (pre) one set. */
static unsigned msm_window_for(size_t n, bool pre)
{
    if (n == 0)
        return 0;
    double best = 0;
    unsigned bc = 1;
    for (unsigned c = 1; c <= CUZK_GPU_MSM_WINDOW_MAX; c++) {
        const double cost = msm_cost(n, c, pre);
        if (c == 1 || cost < best) {
            best = cost;
            bc = c;
        }
    }
    return bc;
}

extern "C" unsigned cuzk_gpu_msm_window(size_t n)
{
    return msm_window_for(n, false);
}

/* Window 0 without multiples (cuzk_gpu_msm_window_auto), from `cuzk-bench tails` over the
 * split MSMs of porep-22 .. porep-27 on the H200 (bench/RESULTS.md, session 21), ms:
 *  - G1 from 2^20 to MSM_AFF_MID_MAX terms: the batch-affine rounds at window 16 beat the
 *    model's XYZZ (1.67M terms: 17.4 against 19.1; 3.4M: 30.8 against 37.5; 6.7M: 60.9
 *    against 71.0; dense 2^22 and 2^23, session 15: 31.9 against 39.1, 59.7 against 62.8;
 *    equal at 2^20); not at 13.4M (XYZZ at the model's 20: 111.4, affine at best 113.4);
 *  - G2: a window above 16 loses (3.4M: 125.1 at 16 against 133.3 at the model's 19). */
#define MSM_AFF_MID_MIN ((size_t)1 << 20)
#define MSM_AFF_MID_MAX ((size_t)10 << 20)
#define MSM_MID_WINDOW 16
#define MSM_G2_WINDOW_MAX 16

extern "C" unsigned cuzk_gpu_msm_window_auto(size_t n, int group, cuzk_gpu_msm_acc mode)
{
    const unsigned c = msm_window_for(n, false);
    if (group == 2)
        return c > MSM_G2_WINDOW_MAX ? MSM_G2_WINDOW_MAX : c;
    if ((mode == CUZK_GPU_MSM_ACC_AUTO || mode == CUZK_GPU_MSM_ACC_AFFINE) && msm_mid_affine(n))
        return MSM_MID_WINDOW;
    return c;
}

bool msm_mid_affine(size_t n)
{
    return n > MSM_AFF_MID_MIN && n <= MSM_AFF_MID_MAX;
}

/* Multiples of up to 2^23 bases take at most window 20: with the batch-affine accumulation
 * (MSM_AFF_AUTO_PRE_MIN) it measured fastest there on the H200 (2^22: 26.8 ms against 29.6 at
 * window 22 and 32.4 with XYZZ; 2^23: 50.5 against 53.0 and 51.5), where the model takes 22. */
#define MSM_PRE_WINDOW_SMALL 20
#define MSM_PRE_SMALL_MAX ((size_t)1 << 23)

extern "C" unsigned cuzk_gpu_msm_window_precomputed(size_t n)
{
    const unsigned c = msm_window_for(n, true);
    return n <= MSM_PRE_SMALL_MAX && c > MSM_PRE_WINDOW_SMALL ? MSM_PRE_WINDOW_SMALL : c;
}

extern "C" bool cuzk_gpu_msm_precomputed_used(const cuzk_gpu_msm *m)
{
    return m && m->pre_used;
}

extern "C" bool cuzk_gpu_msm_precomputed(const cuzk_gpu_msm *m)
{
    return m && m->pre_c;
}

extern "C" void cuzk_gpu_msm_free(cuzk_gpu_msm *m)
{
    if (!m)
        return;
    (void)cudaSetDevice(m->device);
    void *ptrs[] = {m->bases,   m->scal,     m->keys[0], m->keys[1], m->vals[0], m->vals[1],
                    m->sort_tmp, m->buckets, m->partials, m->pkeys,  m->partials2, m->pkeys2,
                    m->segs,    m->red,      m->winres,  m->bits,     m->sbits,   m->wcnt,
                    m->woff,    m->idx,      m->scan_tmp, m->flag,
                    m->aff_off0, m->aff_info, m->aff_pts[0], m->aff_pts[1], m->aff_keys[0],
                    m->aff_keys[1], m->aff_pre, m->aff_meta, m->aff_off[0], m->aff_off[1],
                    m->aff_lens, m->aff_iota, m->aff_scan_tmp};
    if (m->streamed) {
        ptrs[0] = m->stage[0]; /* m->bases is one of the stages */
        msm_stream_free(m);
    }
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (ptrs[i])
            (void)cudaFree(ptrs[i]);
    free(m->aff_slices);
    if (m->stream)
        (void)cudaStreamDestroy(m->stream);
    free(m);
}

static cuzk_err msm_init(cuzk_gpu_msm *m, const void *bases)
{
    const size_t aff_bytes = m->aff_bytes;
    GPU_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, m->device));
    m->sm_count = prop.multiProcessorCount;
    /* resident: all n_max bases; streamed: two stages of a chunk each (every call on the
     * device then covers at most a chunk). The scalars' array is grown by the calls that
     * upload scalars, to the most they upload (msm_upload): none for a context whose
     * scalars are always on the device (the H MSM's, left by the H step) */
    const size_t span = m->streamed ? std::min(m->chunk, m->n_max) : m->n_max;
    const size_t nb = span ? span : 1;
    if (m->streamed) {
        GPU_TRY(msm_stream_init(m, nb));
    } else {
        GPU_CHECK(cudaMalloc(&m->bases, nb * aff_bytes));
        if (m->n_max)
            GPU_CHECK(cudaMemcpy(m->bases, bases, m->n_max * aff_bytes, cudaMemcpyHostToDevice));
    }
    GPU_CHECK(cudaMalloc(&m->winres, 256 * sizeof(g2_xyzz_t)));
    GPU_CHECK(cudaMalloc(&m->red, MSM_RED1_BLOCKS * sizeof(g2_xyzz_t)));
    GPU_CHECK(cudaMalloc(&m->flag, sizeof(int)));
    return CUZK_OK;
}

cuzk_err msm_new(cuzk_gpu_msm **out, int device, const void *bases, size_t n_max, int group,
                 size_t aff_bytes, size_t chunk, const char *fn)
{
    if (!out)
        return cuzk_error_set(CUZK_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (n_max && !bases)
        return cuzk_error_set(CUZK_EINVAL, "%s: bases is NULL", fn);
    if (n_max >= MSM_SIGN)
        return cuzk_error_set(CUZK_EINVAL, "%s: %zu bases (at most 2^31 - 1)", fn, n_max);
    GPU_TRY(gpu_use_device(device));
    cuzk_gpu_msm *m = (cuzk_gpu_msm *)calloc(1, sizeof *m);
    if (!m)
        return cuzk_error_set(CUZK_ENOMEM, "%s", fn);
    m->device = device;
    m->group = group;
    m->n_max = n_max;
    m->acc_mode = CUZK_GPU_MSM_ACC_AUTO;
    m->acc_used = CUZK_GPU_MSM_ACC_XYZZ;
    m->aff_bytes = aff_bytes;
    if (chunk) {
        m->streamed = 1;
        m->chunk = (chunk + 63) / 64 * 64;
        m->hbases = (const unsigned char *)bases;
    }
    cuzk_err err = msm_init(m, bases);
    if (err != CUZK_OK) {
        cuzk_gpu_msm_free(m);
        return err;
    }
    *out = m;
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_msm_new(cuzk_gpu_msm **out, int device, const cuzk_g1_affine *bases,
                                     size_t n_max)
{
    static_assert(sizeof(cuzk_g1_affine) == sizeof(g1_aff_t), "affine layout");
    static_assert(sizeof(cuzk_g1_xyzz) == sizeof(g1_xyzz_t), "xyzz layout");
    return msm_new(out, device, bases, n_max, 1, sizeof(g1_aff_t), 0, "cuzk_gpu_msm_new");
}

extern "C" cuzk_err cuzk_gpu_msm_new_g2(cuzk_gpu_msm **out, int device,
                                        const cuzk_g2_affine *bases, size_t n_max)
{
    static_assert(sizeof(cuzk_g2_affine) == sizeof(g2_aff_t), "G2 affine layout");
    static_assert(sizeof(cuzk_g2_xyzz) == sizeof(g2_xyzz_t), "G2 xyzz layout");
    static_assert(sizeof(cuzk_fp2) == sizeof(fp2_t), "Fp2 layout");
    return msm_new(out, device, bases, n_max, 2, sizeof(g2_aff_t), 0, "cuzk_gpu_msm_new_g2");
}

extern "C" size_t cuzk_gpu_msm_bytes(int group, size_t n)
{
    return n * ((group == 2 ? sizeof(g2_aff_t) : sizeof(g1_aff_t)) + sizeof(fr_t));
}

cuzk_err msm_check(cuzk_gpu_msm *m, int group, size_t n, bool need_arr, unsigned window,
                   const char *fn)
{
    if (!m || !need_arr)
        return cuzk_error_set(CUZK_EINVAL, "%s: NULL argument", fn);
    if (m->group != group)
        return cuzk_error_set(CUZK_EINVAL, "%s: the context holds G%d bases", fn, m->group);
    if (n > m->n_max)
        return cuzk_error_set(CUZK_ESIZE, "%s: %zu scalars for %zu bases", fn, n, m->n_max);
    if (window > CUZK_GPU_MSM_WINDOW_MAX)
        return cuzk_error_set(CUZK_EINVAL, "%s: window %u not in 0..%d", fn, window,
                              CUZK_GPU_MSM_WINDOW_MAX);
    return CUZK_OK;
}

/* ---- accumulation choice ---- */
extern "C" cuzk_err cuzk_gpu_msm_set_accumulation(cuzk_gpu_msm *m, cuzk_gpu_msm_acc mode)
{
    if (!m)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_set_accumulation: m is NULL");
    if (mode != CUZK_GPU_MSM_ACC_AUTO && mode != CUZK_GPU_MSM_ACC_XYZZ &&
        mode != CUZK_GPU_MSM_ACC_AFFINE && mode != CUZK_GPU_MSM_ACC_AFFINE_FULL)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_set_accumulation: unknown mode %d",
                              (int)mode);
    m->acc_mode = mode;
    return CUZK_OK;
}

extern "C" cuzk_gpu_msm_acc cuzk_gpu_msm_accumulation_used(const cuzk_gpu_msm *m)
{
    return m ? (cuzk_gpu_msm_acc)m->acc_used : CUZK_GPU_MSM_ACC_XYZZ;
}

/* ---- profiling ---- */
void msm_prof_begin(cuzk_gpu_msm *m)
{
    memset(&m->prof, 0, sizeof m->prof);
}

extern "C" cuzk_err cuzk_gpu_msm_set_profile(cuzk_gpu_msm *m, bool on)
{
    if (!m)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_set_profile: m is NULL");
    m->profile = on;
    msm_prof_begin(m);
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_msm_profile_get(const cuzk_gpu_msm *m, cuzk_gpu_msm_profile *out)
{
    if (!m || !out)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_msm_profile_get: NULL argument");
    *out = m->prof;
    return CUZK_OK;
}
