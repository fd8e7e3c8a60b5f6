/*
 * The Pippenger MSM of a context (steps 1-5 of msm.cuh) and the dense MSM entry points
 * (cuzk/gpu.h): the digit pass, the radix sort, the accumulation (XYZZ here, batch-affine in
 * affine.cu), the bucket running sums and the window sums.
 */
#include <string.h>

#include <cub/device/device_radix_sort.cuh>

#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/mem.cuh"
#include "gpu/msm/kernels.cuh"
#include "gpu/msm/msm.cuh"
#include "gpu/msm/stream.cuh"

/* The batch-affine accumulation measured faster than XYZZ on the H200 above 2^25 terms (G1
 * MSM, scalars on the device: 2^26 402.1 against 417.2 ms, 2^27 768.8 against 819.1 ms) and
 * slower below (2^24: 120.6 against 113.6 ms): CUZK_GPU_MSM_ACC_AUTO uses it above this, and
 * with window 0 in the middle sizes at window 16 (msm_mid_affine, context.cu). */
#define MSM_AFF_AUTO_MIN ((size_t)1 << 25)
/* On precomputed multiples (one bucket set: 96 points a bucket at 2^24, against 32) it
 * measured faster at 2^24 (96.9 against 98.3 ms) and, on window-20 multiples, from 2^22
 * (26.8 against 32.4 ms; 2^23: 50.5 against 62.3); used above this. */
#define MSM_AFF_AUTO_PRE_MIN ((size_t)1 << 21)

/* ---- kernels ---- */
/* Term i (i < n) uses scalar i and base i, or with idx: base idx[i] and scalar idx[i]
 * (gathered = 0) or scalar i (gathered = 1, the scalars of the set positions in order).
 * pstride 0: window w's digit d names bucket w B + d - 1 and the base; else (precomputed
 * multiples, n_max = pstride apart) bucket d - 1 of the one set and the base's copy w. */
__global__ void msm_digits_kernel(uint32_t *keys, uint32_t *vals, const uint32_t *scal,
                                  const uint32_t *__restrict__ idx, size_t n, unsigned c,
                                  unsigned W, int mont, int gathered, int *flag,
                                  uint32_t pstride)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t base = idx ? idx[i] : (uint32_t)i;
    const size_t si = (idx && !gathered) ? (size_t)base : i;
    fr_t s = ld_vec(reinterpret_cast<const fr_t *>(scal) + si);
    if (mont)
        s = f_from_mont<FrP>(s);
    else if (s.v[7] >> 31)
        atomicOr(flag, 1);
    const uint32_t B = 1u << (c - 1);
    const uint32_t sentinel = pstride ? B : W * B;
    const uint32_t mask = (c == 32) ? 0xffffffffu : ((1u << c) - 1);
    uint32_t carry = 0;
    for (unsigned w = 0; w < W; w++) {
        const unsigned bit = w * c, limb = bit >> 5, sh = bit & 31;
        uint32_t raw = 0;
        if (limb < 8) {
            raw = s.v[limb] >> sh;
            if (sh + c > 32 && limb + 1 < 8)
                raw |= s.v[limb + 1] << (32 - sh);
        }
        raw &= mask;
        uint32_t d = raw + carry;
        uint32_t neg = 0;
        carry = 0;
        if (w + 1 < W && d > B) {
            d = (1u << c) - d; /* d - 2^c < 0: magnitude 2^c - d */
            neg = MSM_SIGN;
            carry = 1;
        }
        const size_t o = (size_t)w * n + i;
        keys[o] = d ? (pstride ? 0 : w * B) + d - 1 : sentinel;
        vals[o] = (pstride ? w * pstride + base : base) | neg;
    }
}


/* segs[w S + s] = sum_{k in [lo, lo+M)} (k + 1) X_(w B + k), lo = s M. */
template <class F>
__global__ void msm_bucket_sum_kernel(xyzz_t<F> *segs, const xyzz_t<F> *buckets, unsigned W,
                                      uint32_t B, uint32_t S, uint32_t M)
{
    const size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (size_t)W * S)
        return;
    const uint32_t w = (uint32_t)(id / S), s = (uint32_t)(id % S);
    const uint32_t lo = s * M;
    const xyzz_t<F> *bk = buckets + (size_t)w * B + lo;
    xyzz_t<F> run, acc;
    xyzz_set_inf(run);
    xyzz_set_inf(acc);
    for (int k = (int)M - 1; k >= 0; k--) {
        xyzz_add(run, ld_vec_rw(bk + k));
        xyzz_add(acc, run);
    }
    /* acc += lo * run (double-and-add from the top bit of lo) */
    if (lo) {
        xyzz_t<F> m;
        xyzz_set_inf(m);
        for (int b = 31 - __clz(lo); b >= 0; b--) {
            xyzz_dbl(m, m);
            if ((lo >> b) & 1)
                xyzz_add(m, run);
        }
        xyzz_add(acc, m);
    }
    st_vec(segs + id, acc);
}


/* ---- host side ---- */

cuzk_err msm_upload(cuzk_gpu_msm *m, const void *scalars, size_t ns, bool on_device,
                    cudaEvent_t *ev0, bool *prof)
{
    *prof = m->profile;
    if (*prof) {
        GPU_CHECK(cudaEventCreate(ev0));
        GPU_CHECK(cudaEventRecord(*ev0, m->stream));
    }
    if (ns && !on_device) {
        GPU_TRY(msm_grow(&m->scal, &m->scal_cap, ns, sizeof(fr_t)));
        GPU_CHECK(cudaMemcpyAsync(m->scal, scalars, ns * sizeof(fr_t), cudaMemcpyHostToDevice,
                                  m->stream));
    }
    return CUZK_OK;
}

/* Pippenger over nt terms (msm.cuh). The scalar copy is done by the caller (recorded as the
 * upload stage when ev0 is set). */
template <class H>
cuzk_err msm_pippenger(cuzk_gpu_msm *m, typename H::X *res, size_t nt, const uint32_t *idx,
                       unsigned window, int mont, int gathered, cudaEvent_t *ev0,
                       const void *dscal)
{
    typedef typename H::F F;
    H::set_inf(res);
    if (nt == 0)
        return CUZK_OK;
    GPU_TRY(gpu_use_device(m->device));
    /* the precomputed multiples where the model prefers their window and one bucket set */
    bool pre = false;
    if (m->pre_c && (!window || window == m->pre_c)) /* never on a streamed context */
        pre = msm_cost(nt, m->pre_c, true) <
              msm_cost(nt, window ? window : cuzk_gpu_msm_window(nt), false);
    m->pre_used = pre;
    const unsigned c = pre      ? m->pre_c
                       : window ? window
                                : cuzk_gpu_msm_window_auto(nt, H::group,
                                                           (cuzk_gpu_msm_acc)m->acc_mode);
    const unsigned W = (256 + c - 1) / c;
    const unsigned WB = pre ? 1 : W; /* windows of buckets */
    const uint32_t B = 1u << (c - 1);
    const uint32_t sentinel = WB * B;
    int keybits = 1;
    while ((1ULL << keybits) <= (unsigned long long)sentinel)
        keybits++;
    const size_t npairs = (size_t)W * nt;
    cudaStream_t st = m->stream;
    /* profiling: an event after each stage, the stage times into m->prof at the end */
    const bool prof = ev0 != NULL;
    cudaEvent_t ev[8];
    int nev = 0;
    if (prof)
        ev[nev++] = *ev0;
#define MSM_MARK()                                                   \
    do {                                                             \
        if (prof && nev < 8) {                                       \
            GPU_CHECK(cudaEventCreate(&ev[nev]));                    \
            GPU_CHECK(cudaEventRecord(ev[nev], st));                 \
            nev++;                                                   \
        }                                                            \
    } while (0)
    GPU_CHECK(cudaMemsetAsync(m->flag, 0, sizeof(int), st));
    if (m->pairs_cap < npairs) {
        for (int b = 0; b < 2; b++) {
            size_t cap = 0;
            GPU_TRY(msm_grow(&m->keys[b], &cap, npairs, sizeof(uint32_t)));
            cap = 0;
            GPU_TRY(msm_grow(&m->vals[b], &cap, npairs, sizeof(uint32_t)));
        }
        m->pairs_cap = npairs;
    }

    MSM_MARK();
    const uint32_t *scal = dscal ? (const uint32_t *)dscal : m->scal;
    msm_digits_kernel<<<gpu_blocks(nt, 256), 256, 0, st>>>(m->keys[0], m->vals[0], scal, idx,
                                                            nt, c, W, mont, gathered, m->flag,
                                                            pre ? (uint32_t)m->n_max : 0);
    GPU_CHECK_LAUNCH(msm_digits_kernel);

    MSM_MARK();
    cub::DoubleBuffer<uint32_t> dk(m->keys[0], m->keys[1]), dv(m->vals[0], m->vals[1]);
    size_t tmp_bytes = 0;
    GPU_CHECK(cub::DeviceRadixSort::SortPairs(NULL, tmp_bytes, dk, dv, (int64_t)npairs, 0,
                                              keybits, st));
    GPU_TRY(msm_grow((unsigned char **)&m->sort_tmp, &m->sort_tmp_cap, tmp_bytes, 1));
    GPU_CHECK(cub::DeviceRadixSort::SortPairs(m->sort_tmp, tmp_bytes, dk, dv, (int64_t)npairs, 0,
                                              keybits, st));
    const uint32_t *skeys = dk.Current(), *svals = dv.Current();

    MSM_MARK();
    const size_t nbuckets = (size_t)WB * B;
    GPU_TRY(msm_grow((unsigned char **)&m->buckets, &m->buckets_cap, nbuckets * sizeof(xyzz_t<F>),
                     1));
    xyzz_t<F> *buckets = reinterpret_cast<xyzz_t<F> *>(m->buckets);
    GPU_CHECK(cudaMemsetAsync(buckets, 0, nbuckets * sizeof(xyzz_t<F>), st));

    if (!m->acc_threads)
        m->acc_threads = msm_wave_threads(m, msm_accumulate_kernel<F>, MSM_ACC_THREADS);
    const size_t target = m->acc_threads;
    size_t L = (npairs + target - 1) / target;
    if (L < 8)
        L = 8;
    const size_t nseg = (npairs + L - 1) / L;
    const size_t pbytes = 2 * nseg * sizeof(xyzz_t<F>);
    if (m->partials_cap < pbytes) {
        size_t cap = 0;
        GPU_TRY(msm_grow((unsigned char **)&m->partials, &cap, pbytes, 1));
        cap = 0;
        GPU_TRY(msm_grow(&m->pkeys, &cap, 2 * nseg, sizeof(uint32_t)));
        m->partials_cap = pbytes;
    }
    xyzz_t<F> *partials = reinterpret_cast<xyzz_t<F> *>(m->partials);
    const aff_t<F> *bases = reinterpret_cast<const aff_t<F> *>(m->bases);
    /* G1 with the batch-affine accumulation: the plan (in the accumulate stage when it falls
     * back to XYZZ), then rounds and final passes per slice */
    m->acc_used = CUZK_GPU_MSM_ACC_XYZZ;
    bool aff = false;
    size_t nslices = 0;
    if constexpr (H::group == 1) {
        const int mode = m->acc_mode;
        if (mode == CUZK_GPU_MSM_ACC_AFFINE || mode == CUZK_GPU_MSM_ACC_AFFINE_FULL ||
            (mode == CUZK_GPU_MSM_ACC_AUTO &&
             (nt > MSM_AFF_AUTO_MIN || (pre && nt > MSM_AFF_AUTO_PRE_MIN) ||
              (!pre && !window && msm_mid_affine(nt)))))
            GPU_TRY(msm_aff_plan(m, &nslices, &aff, skeys, npairs, WB, B, mode));
    }
    if (aff) {
        MSM_MARK();
        if constexpr (H::group == 1)
            GPU_TRY(msm_aff_run(m, nslices, buckets, partials, skeys, svals, sentinel, prof));
        m->acc_used = CUZK_GPU_MSM_ACC_AFFINE;
    } else {
        msm_accumulate_kernel<F><<<gpu_blocks(nseg, MSM_ACC_THREADS), MSM_ACC_THREADS, 0, st>>>(
            buckets, partials, m->pkeys, skeys, svals, bases, npairs, L, nseg, sentinel);
        GPU_CHECK_LAUNCH(msm_accumulate_kernel);
        MSM_MARK();
        GPU_TRY(msm_partials_run<F>(m, buckets, partials, m->pkeys, 2 * nseg, sentinel, st));
    }

    MSM_MARK();
    /* segments per window: about 2^15 threads in all, at most B */
    uint32_t S = 1;
    while ((size_t)WB * S * 2 <= 32768 && S * 2 <= B)
        S *= 2;
    const uint32_t M = B / S;
    GPU_TRY(msm_grow((unsigned char **)&m->segs, &m->segs_cap, (size_t)WB * S * sizeof(xyzz_t<F>),
                     1));
    xyzz_t<F> *segs = reinterpret_cast<xyzz_t<F> *>(m->segs);
    msm_bucket_sum_kernel<F><<<gpu_blocks((size_t)WB * S, 64), 64, 0, st>>>(segs, buckets, WB, B,
                                                                            S, M);
    GPU_CHECK_LAUNCH(msm_bucket_sum_kernel);
    MSM_MARK();
    xyzz_t<F> *winres = reinterpret_cast<xyzz_t<F> *>(m->winres);
    if (WB == 1) { /* one block would add the 2^15 segments: two levels */
        GPU_TRY(msm_reduce_all<F>(m, winres, segs, S));
    } else {
        msm_reduce_kernel<F><<<WB, red_threads<F>::T, 0, st>>>(winres, segs, S, (size_t)WB * S);
        GPU_CHECK_LAUNCH(msm_reduce_kernel);
    }
    MSM_MARK();
#undef MSM_MARK

    typename H::X win[256];
    int flag = 0;
    GPU_CHECK(cudaMemcpyAsync(win, winres, WB * sizeof(xyzz_t<F>), cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaMemcpyAsync(&flag, m->flag, sizeof flag, cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaStreamSynchronize(st));
    if (prof) {
        /* stages: upload, digits, sort, accumulate (affine: the plan), partials (affine: the
         * rounds and the XYZZ pass), bucket sums, window sums */
        float ms[7] = {0, 0, 0, 0, 0, 0, 0};
        for (int i = 0; i + 1 < nev && i < 7; i++)
            GPU_CHECK(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
        for (int i = 1; i < nev; i++) /* ev[0] belongs to the caller */
            (void)cudaEventDestroy(ev[i]);
        cuzk_gpu_msm_profile *p = &m->prof;
        p->runs++;
        p->terms = nt;
        p->window = c;
        p->windows = W;
        p->precomputed = pre;
        p->affine = aff;
        p->upload_ms += ms[0];
        p->digits_ms += ms[1];
        p->sort_ms += ms[2];
        p->accumulate_ms += aff ? ms[3] + ms[4] : ms[3];
        if (aff)
            p->affine_plan_ms += ms[3];
        else
            p->partials_ms += ms[4];
        p->bucket_sums_ms += ms[5];
        p->window_reduce_ms += ms[6];
    }
    if (flag)
        return cuzk_error_set(CUZK_EINVAL, "gpu msm: a canonical scalar is >= 2^255");
    /* R = sum_w 2^(c w) R_w (Horner; precomputed: the one set's sum) */
    typename H::X acc = win[WB - 1];
    for (int w = (int)WB - 2; w >= 0; w--) {
        for (unsigned i = 0; i < c; i++)
            H::dbl(&acc, &acc);
        H::add(&acc, &acc, &win[w]);
    }
    *res = acc;
    return CUZK_OK;
}

template cuzk_err msm_pippenger<G1Host>(cuzk_gpu_msm *, G1Host::X *, size_t, const uint32_t *,
                                        unsigned, int, int, cudaEvent_t *, const void *);
template cuzk_err msm_pippenger<G2Host>(cuzk_gpu_msm *, G2Host::X *, size_t, const uint32_t *,
                                        unsigned, int, int, cudaEvent_t *, const void *);

/* on_device: scalars is device memory, read in place. */
template <class H>
static cuzk_err msm_dense(cuzk_gpu_msm *m, typename H::X *res, const void *scalars, size_t n,
                          unsigned window, int mont, bool on_device)
{
    H::set_inf(res);
    m->acc_used = CUZK_GPU_MSM_ACC_XYZZ;
    if (n == 0)
        return CUZK_OK;
    GPU_TRY(gpu_use_device(m->device));
    cudaEvent_t ev0;
    bool prof;
    GPU_TRY(msm_upload(m, scalars, n, on_device, &ev0, &prof));
    cuzk_err e = msm_pippenger<H>(m, res, n, NULL, window, mont, 0, prof ? &ev0 : NULL,
                                  on_device ? scalars : NULL);
    if (prof)
        (void)cudaEventDestroy(ev0);
    return e;
}

static_assert(sizeof(cuzk_msm_scalar) == sizeof(fr_t), "scalar layouts");

template <class H>
static cuzk_err msm_entry(cuzk_gpu_msm *m, typename H::J *r, const void *scalars, size_t n,
                          unsigned window, int mont, const char *fn, bool on_device = false)
{
    if (!r)
        return cuzk_error_set(CUZK_EINVAL, "%s: r is NULL", fn);
    H::jac_inf(r);
    GPU_TRY(msm_check(m, H::group, n, !n || scalars, window, fn));
    msm_prof_begin(m);
    typename H::X res;
    const unsigned char *sc = (const unsigned char *)scalars;
    cuzk_err err = msm_chunked<H>(m, &res, n, [&](size_t lo, size_t cnt, typename H::X *part) {
        return msm_dense<H>(m, part, sc + lo * sizeof(fr_t), cnt, window, mont, on_device);
    });
    if (err == CUZK_OK)
        H::to_jac(r, &res);
    return err;
}

extern "C" cuzk_err cuzk_gpu_g1_msm(cuzk_gpu_msm *m, cuzk_g1_jac *r,
                                    const cuzk_msm_scalar *scalars, size_t n, unsigned window)
{
    return msm_entry<G1Host>(m, r, scalars, n, window, 0, "cuzk_gpu_g1_msm");
}

extern "C" cuzk_err cuzk_gpu_g1_msm_fr(cuzk_gpu_msm *m, cuzk_g1_jac *r, const cuzk_fr *scalars,
                                       size_t n, unsigned window)
{
    return msm_entry<G1Host>(m, r, scalars, n, window, 1, "cuzk_gpu_g1_msm_fr");
}

extern "C" cuzk_err cuzk_gpu_g1_msm_fr_dev(cuzk_gpu_msm *m, cuzk_g1_jac *r, const void *scalars,
                                           size_t n, unsigned window)
{
    return msm_entry<G1Host>(m, r, scalars, n, window, 1, "cuzk_gpu_g1_msm_fr_dev", true);
}

extern "C" cuzk_err cuzk_gpu_g2_msm(cuzk_gpu_msm *m, cuzk_g2_jac *r,
                                    const cuzk_msm_scalar *scalars, size_t n, unsigned window)
{
    return msm_entry<G2Host>(m, r, scalars, n, window, 0, "cuzk_gpu_g2_msm");
}

extern "C" cuzk_err cuzk_gpu_g2_msm_fr(cuzk_gpu_msm *m, cuzk_g2_jac *r, const cuzk_fr *scalars,
                                       size_t n, unsigned window)
{
    return msm_entry<G2Host>(m, r, scalars, n, window, 1, "cuzk_gpu_g2_msm_fr");
}
