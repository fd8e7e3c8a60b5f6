/*
 * Internal to src/gpu/msm: the MSM context and what its files share.
 *
 * Pippenger with signed digits (pippenger.cu). Window c, W = ceil(256/c) windows (W c >= 256
 * > 255 + the final carry, so the top window needs no recoding), B = 2^(c-1) buckets per
 * window:
 *  1. digits: per scalar, window w gives d = bits + carry; d > B becomes d - 2^c with a
 *     carry into the next window. A nonzero d yields the pair
 *     key = w B + |d| - 1, value = point index | sign << 31; d = 0 yields key = W B (the
 *     sentinel, sorted last).
 *  2. the W n pairs are radix-sorted by key (CUB, only the key bits that occur).
 *  3. accumulation: the sorted pairs are cut into equal segments, one per thread; a
 *     thread adds the (possibly negated) affine bases of each run of equal keys into an
 *     XYZZ sum. Runs that start and end inside its segment are whole buckets and are
 *     stored directly; its first and last runs may continue in a neighbouring segment and
 *     go to a partials list (two per segment, keys non-decreasing), which a second kernel
 *     sums run by run into the buckets (kernels.cuh).
 *  4. bucket sums: window w needs R_w = sum_b b X_b. Its B buckets are cut into segments
 *     of M; a thread walks its segment [lo, lo + M) downwards with the running sums
 *     run += X_k, acc += run, giving acc = sum (k - lo + 1) X_k and run = sum X_k, then
 *     adds lo * run by double-and-add; one block per window adds up the segments.
 *  5. the host combines the windows: R = sum_w 2^(c w) R_w (Horner, on the CPU).
 * G1 alternative to step 3 (cuzk_gpu_msm_set_accumulation; affine.cu): rounds of pairwise
 * affine additions inside each bucket with one field inversion per block of a round
 * (Montgomery's trick; affine.cuh), bucket slices at a time, then step 3 over the points
 * left.
 * batch_add.cu: one thread per range of bit-vector words adds its bases, then the same block
 * reduction (in two levels when there are many ranges).
 * split.cu (the Groth16 split on resident bases): the significant positions of a bit vector
 * are compacted on the device (popcount per word, exclusive scan, scatter) into an index
 * list; the digit pass reads scalar j (or scalar idx[j]) and writes the base index idx[j]
 * into the pair values, so steps 2-5 run unchanged over the significant terms only.
 * stream.cu: bases streamed from host memory chunk by chunk.
 * Everything is templated on the coordinate field (fp_t for G1, fp2_t for G2); one context
 * holds the bases of one group.
 *
 * Each file is its own translation unit with its own copy of the field constants
 * (ff/bls12_381.cuh): a function of one file that launches kernels calls gpu_use_device
 * first, even when its caller in another file did.
 */
#ifndef CUZK_GPU_MSM_MSM_CUH
#define CUZK_GPU_MSM_MSM_CUH

#include <stddef.h>
#include <stdint.h>

#include "cuzk/ec.h"
#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/ec/xyzz.cuh"
#include "gpu/error.cuh"

#define MSM_ACC_THREADS 128
#define MSM_SIGN 0x80000000u /* value bit: subtract the base */
#define MSM_RED1_BLOCKS 1024 /* first level of a two-level reduction: at most this many sums */

struct msm_aff_slice;

struct cuzk_gpu_msm {
    int device;
    int group; /* 1: G1 bases, 2: G2 bases */
    size_t n_max;
    int sm_count;
    size_t acc_threads; /* the XYZZ accumulation's threads: one wave (msm_wave_threads), set
                         * by the first Pippenger run; its partials buffer holds 2 of them */
    cudaStream_t stream;
    void *bases;
    uint32_t *scal; /* uploaded scalars, 8 limbs each (scal_cap of them: msm_upload) */
    size_t scal_cap;
    uint32_t *keys[2], *vals[2];
    size_t pairs_cap;
    void *sort_tmp;
    size_t sort_tmp_cap;
    void *buckets;
    size_t buckets_cap; /* bytes */
    void *partials;
    uint32_t *pkeys;
    size_t partials_cap; /* points */
    void *partials2;     /* msm_partials_run's second buffer (bytes) and its keys */
    size_t partials2_cap;
    uint32_t *pkeys2;
    size_t pkeys2_cap;
    void *segs;
    size_t segs_cap; /* bytes */
    void *red;       /* MSM_RED1_BLOCKS points: first level of a two-level reduction */
    void *winres;    /* at most 256 windows */
    uint64_t *bits;  /* batch_add (ones) bit vector */
    size_t bits_cap;
    uint64_t *sbits; /* significant bit vector of the split MSM */
    size_t sbits_cap;
    uint32_t *wcnt, *woff; /* per word: set bits, exclusive prefix sum */
    size_t wcnt_cap;
    uint32_t *idx; /* compacted significant positions */
    size_t idx_cap;
    void *scan_tmp;
    size_t scan_tmp_cap;
    int *flag;
    unsigned pre_c;   /* cuzk_gpu_msm_precompute's window (0: none); bases holds W copies */
    bool pre_used;    /* the last Pippenger run used them */
    int acc_mode; /* cuzk_gpu_msm_acc: the G1 accumulation */
    int acc_used; /* the one the last MSM used */
    bool profile;               /* stage timings on (cuzk_gpu_msm_set_profile) */
    cuzk_gpu_msm_profile prof;  /* the last call's */
    /* batch-affine accumulation (msm_aff_plan) */
    uint32_t *aff_off0; /* per global bucket key k <= W B: first sorted pair with key >= k */
    size_t aff_off0_cap;
    uint32_t *aff_info; /* largest bucket, then the offsets of the bucket chunks */
    size_t aff_info_cap;
    g1_aff_t *aff_pts[2]; /* round outputs (ping-pong) and their keys */
    uint32_t *aff_keys[2];
    size_t aff_pts_cap[2], aff_keys_cap[2];
    fp_t *aff_pre; /* per pair slot: prefix product, (element, output index) */
    uint2 *aff_meta;
    size_t aff_pre_cap, aff_meta_cap;
    uint32_t *aff_off[2], *aff_lens; /* run offsets of a round and the next; their lengths */
    size_t aff_off_cap[2], aff_lens_cap;
    uint32_t *aff_iota; /* 0, 1, 2, ...: the final XYZZ pass reads the points by these */
    size_t aff_iota_cap;
    unsigned char *aff_scan_tmp;
    size_t aff_scan_tmp_cap;
    struct msm_aff_slice *aff_slices; /* host: the plan */
    size_t aff_slices_cap;
    /* streamed bases (cuzk_gpu_msm_new_streamed): m->bases points at the stage holding the
     * chunk being worked on; the next chunk is copied into the other stage meanwhile */
    int streamed;
    int registered;              /* hbases page-locked here (cudaHostRegister) */
    const unsigned char *hbases; /* the caller's bases, n_max of aff_bytes */
    size_t aff_bytes;
    size_t chunk; /* bases per stage, a multiple of 64 */
    void *stage[2];
    cudaStream_t cstream;       /* the copies */
    cudaEvent_t copied[2];      /* stage s holds its chunk */
    cudaEvent_t used[2];        /* the work on stage s is done */
};

/* Per group: the device field and the host types and functions for the final combination. */
struct G1Host {
    typedef fp_t F;
    typedef cuzk_g1_xyzz X;
    typedef cuzk_g1_jac J;
    typedef cuzk_g1_affine A;
    static constexpr int group = 1;
    static void set_inf(X *r) { cuzk_g1_xyzz_set_inf(r); }
    static void dbl(X *r, const X *a) { cuzk_g1_xyzz_dbl_var(r, a); }
    static void add(X *r, const X *a, const X *b) { cuzk_g1_xyzz_add_var(r, a, b); }
    static void to_jac(J *r, const X *a) { cuzk_g1_xyzz_to_jac(r, a); }
    static void jac_inf(J *r) { cuzk_g1_jac_set_inf(r); }
};
struct G2Host {
    typedef fp2_t F;
    typedef cuzk_g2_xyzz X;
    typedef cuzk_g2_jac J;
    typedef cuzk_g2_affine A;
    static constexpr int group = 2;
    static void set_inf(X *r) { cuzk_g2_xyzz_set_inf(r); }
    static void dbl(X *r, const X *a) { cuzk_g2_xyzz_dbl_var(r, a); }
    static void add(X *r, const X *a, const X *b) { cuzk_g2_xyzz_add_var(r, a, b); }
    static void to_jac(J *r, const X *a) { cuzk_g2_xyzz_to_jac(r, a); }
    static void jac_inf(J *r) { cuzk_g2_jac_set_inf(r); }
};

/* Grows a device buffer to hold at least need elements of elem bytes (contents are not
 * kept); *cap counts elements. */
template <class T> static cuzk_err msm_grow(T **p, size_t *cap, size_t need, size_t elem)
{
    if (*cap >= need && *p)
        return CUZK_OK;
    if (*p)
        GPU_CHECK(cudaFree(*p));
    *p = NULL;
    *cap = 0;
    const size_t bytes = need * elem;
    GPU_CHECK(cudaMalloc((void **)p, bytes ? bytes : elem));
    *cap = need;
    return CUZK_OK;
}

/* The threads of a kernel of T-thread blocks whose threads take equal shares of the work:
 * one wave of what the device holds resident (its multiprocessors times the blocks of the
 * kernel that fit one at once), so that no multiprocessor runs a last partial wave alone
 * (a fixed 512 threads a multiprocessor was 1.33 waves of the G1 accumulation, 3 blocks of
 * 128 resident). */
template <class K> static size_t msm_wave_threads(const cuzk_gpu_msm *m, K kernel, unsigned T)
{
    int nb = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, kernel, (int)T, 0) != cudaSuccess ||
        nb < 1) {
        (void)cudaGetLastError();
        nb = 1;
    }
    return (size_t)m->sm_count * (size_t)nb * T;
}

/* ---- context.cu ---- */
/* The window model: the cost, in mixed additions, of n terms in W windows of c bits with
 * W sets of 2^(c-1) buckets, or one (one_set: precomputed multiples): the terms' additions,
 * 15 % more per 8-bit sort pass of the keys, about 2.5 additions a bucket for the running
 * sums. */
double msm_cost(size_t n, unsigned c, bool one_set);
/* G1, window 0, no multiples: n terms where AUTO takes the batch-affine rounds at window 16
 * (cuzk_gpu_msm_window_auto). */
bool msm_mid_affine(size_t n);
/* A new context (chunk 0: resident bases; else streamed, chunk bases a stage). */
cuzk_err msm_new(cuzk_gpu_msm **out, int device, const void *bases, size_t n_max, int group,
                 size_t aff_bytes, size_t chunk, const char *fn);
/* The checks of a public call on m: its group, n <= n_max, the window; need_arr: the
 * arrays it needs are there. */
cuzk_err msm_check(cuzk_gpu_msm *m, int group, size_t n, bool need_arr, unsigned window,
                   const char *fn);
/* At the start of a public call: the profile of the call begins (all zero). */
void msm_prof_begin(cuzk_gpu_msm *m);

/* ---- pippenger.cu ---- */
/* Copies ns scalars to m->scal (unless they are already on the device); when the context
 * profiles, *ev0 is an event recorded before the copy (*prof true). */
cuzk_err msm_upload(cuzk_gpu_msm *m, const void *scalars, size_t ns, bool on_device,
                    cudaEvent_t *ev0, bool *prof);
/* Pippenger over nt terms whose pairs the digit pass builds from the scalars already on the
 * device (in m->scal, or at dscal) with idx: a device index list or NULL (see
 * msm_digits_kernel); *res = sum_w 2^(c w) R_w. ev0: msm_upload's event when profiling. */
template <class H>
cuzk_err msm_pippenger(cuzk_gpu_msm *m, typename H::X *res, size_t nt, const uint32_t *idx,
                       unsigned window, int mont, int gathered, cudaEvent_t *ev0,
                       const void *dscal = NULL);

/* ---- affine.cu (G1) ---- */
/* Plans the batch-affine accumulation of the sorted pairs (keys of W windows of B buckets)
 * for mode (AUTO, AFFINE or AFFINE_FULL): *use = false when XYZZ accumulates instead. */
cuzk_err msm_aff_plan(cuzk_gpu_msm *m, size_t *nslices, bool *use, const uint32_t *skeys,
                      size_t npairs, unsigned W, uint32_t B, int mode);
/* Runs the plan into the buckets (rounds per slice, then the XYZZ pass over what is left). */
cuzk_err msm_aff_run(cuzk_gpu_msm *m, size_t nslices, g1_xyzz_t *buckets, g1_xyzz_t *partials,
                     const uint32_t *skeys, const uint32_t *svals, uint32_t sentinel, bool prof);

/* ---- batch_add.cu ---- */
/* *res = sum of the first n bases whose bit is set. */
template <class H>
cuzk_err batch_add_run(cuzk_gpu_msm *m, typename H::X *res, const uint64_t *bits, size_t n);

#endif
