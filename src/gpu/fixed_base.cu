/*
 * Fixed-base scalar multiplication of the G1 and G2 generators on the device (cuzk/gpu.h):
 * out[i] = s_i G for many scalars, the vector points of a Groth16 setup.
 *
 * Window table: width c (8, 12 or 16 bits, from n), W = ceil(255/c) windows (scalars are
 * canonical values below r < 2^255); T[w][d - 1] = d 2^(c w) G for d = 1 .. 2^c - 1. The
 * host computes the W window bases 2^(c w) G (255 doublings); one device thread per table
 * entry computes d times its base by double-and-add, and the entries are made affine like
 * the results (below). The table is built on each call (16 bits: 2^20 points, milliseconds).
 *
 * Multiplication: one thread per scalar converts it from Montgomery form, then adds the
 * entry of each nonzero digit into an XYZZ accumulator (mixed additions, at most W of
 * them). Affine conversion: one thread per FB_AFF_K consecutive points inverts the product
 * of their ZZ ZZZ (Montgomery's trick, one Fermat inversion per FB_AFF_K points);
 * 1/ZZ = ZZZ/(ZZ ZZZ), 1/ZZZ = ZZ/(ZZ ZZZ). Infinity (a zero scalar) is written as (0, 0).
 *
 * The n scalars are streamed in chunks through two sets of device buffers on two streams:
 * while chunk k is computed, chunk k-1 is copied back to the host. Device copies of the
 * scalars and accumulators are zeroed before they are freed.
 *
 * Variable time (digit-dependent additions, branches on exceptional cases): for
 * development setups only, as include/cuzk/setup.h says.
 */
#include <stdlib.h>
#include <string.h>

#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/ec/xyzz.cuh"
#include "gpu/error.cuh"
#include "gpu/mem.cuh"

#define FB_THREADS 128
#define FB_AFF_K 16                   /* points per inversion */
#define FB_CHUNK ((size_t)1 << 22)    /* scalars per chunk (at most) */
#define FB_CHUNK_MIN ((size_t)1 << 14)

static_assert(sizeof(g1_aff_t) == sizeof(cuzk_g1_affine), "G1 affine layout");
static_assert(sizeof(g2_aff_t) == sizeof(cuzk_g2_affine), "G2 affine layout");
static_assert(sizeof(fr_t) == sizeof(cuzk_fr), "Fr layout");

/* ---- inversion (Fermat: a^(p-2), 4-bit fixed windows; inv(0) = 0) ---- */
static __device__ __noinline__ fp_t fb_fp_inv(const fp_t &a)
{
    fp_t tab[16];
    fe_set_one(tab[0]);
    tab[1] = a;
    for (int k = 2; k < 16; k++)
        tab[k] = fe_mul(tab[k - 1], a);
    fp_t r = tab[0];
    bool started = false;
    for (int i = 95; i >= 0; i--) { /* nibble i of p - 2 (p's low limb is odd, > 2) */
        uint32_t limb = FpP::p(i / 8) - (i / 8 == 0 ? 2u : 0u);
        unsigned nib = (limb >> (4 * (i % 8))) & 15u;
        if (started) {
            r = fe_sqr(r);
            r = fe_sqr(r);
            r = fe_sqr(r);
            r = fe_sqr(r);
        }
        if (nib) {
            r = started ? fe_mul(r, tab[nib]) : tab[nib];
            started = true;
        }
    }
    return r;
}

static __device__ __forceinline__ fp_t fb_inv(const fp_t &a) { return fb_fp_inv(a); }

/* 1/(c0 + c1 u) = (c0 - c1 u)/(c0^2 + c1^2) */
static __device__ __forceinline__ fp2_t fb_inv(const fp2_t &a)
{
    fp_t t = fe_add(fe_sqr(a.c0), fe_sqr(a.c1));
    fp_t ti = fb_fp_inv(t);
    fp2_t r;
    r.c0 = fe_mul(a.c0, ti);
    r.c1 = fe_neg(fe_mul(a.c1, ti));
    return r;
}

/* ---- kernels ---- */

/* out[t] = d 2^(c w) G with w = t / (2^c - 1), d = t mod (2^c - 1) + 1, bases[w] = 2^(c w) G. */
template <class F>
__global__ void fb_table_kernel(xyzz_t<F> *out, const aff_t<F> *bases, unsigned c, size_t total)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total)
        return;
    unsigned wsize = (1u << c) - 1;
    unsigned w = (unsigned)(t / wsize), d = (unsigned)(t % wsize) + 1;
    aff_t<F> b = bases[w];
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    for (int bit = (int)c - 1; bit >= 0; bit--) {
        xyzz_dbl(acc, acc);
        if ((d >> bit) & 1u)
            xyzz_add_affine(acc, b.x, b.y);
    }
    st_vec(&out[t], acc);
}

/* acc[i] = s_i G (XYZZ) for i < n: s_i Montgomery in, the table of width c with nwin
 * windows of 2^c - 1 affine points. */
template <class F>
__global__ void fb_mul_kernel(xyzz_t<F> *acc_out, const fr_t *sc, const aff_t<F> *table,
                              unsigned c, unsigned nwin, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const fr_t s = f_from_mont<FrP>(ld_vec(&sc[i]));
    const unsigned wsize = (1u << c) - 1, mask = wsize;
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    for (unsigned w = 0; w < nwin; w++) {
        unsigned pos = w * c, limb = pos >> 5, off = pos & 31;
        uint32_t v = s.v[limb] >> off;
        if (off + c > 32 && limb + 1 < 8)
            v |= s.v[limb + 1] << (32 - off);
        unsigned d = v & mask;
        if (d) {
            aff_t<F> t = ld_vec(&table[(size_t)w * wsize + d - 1]);
            xyzz_add_affine(acc, t.x, t.y);
        }
    }
    st_vec(&acc_out[i], acc);
}

/* out[i] = affine(in[i]) for i < n, FB_AFF_K points per thread sharing one inversion. */
template <class F>
__global__ void fb_affine_kernel(aff_t<F> *out, const xyzz_t<F> *in, size_t n)
{
    size_t b = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * FB_AFF_K;
    if (b >= n)
        return;
    int m = n - b < FB_AFF_K ? (int)(n - b) : FB_AFF_K;
    F pre[FB_AFF_K];
    F acc;
    fe_set_one(acc);
    for (int j = 0; j < m; j++) {
        xyzz_t<F> p = ld_vec(&in[b + j]);
        pre[j] = acc;
        if (!xyzz_is_inf(p))
            acc = fe_mul(acc, fe_mul(p.zz, p.zzz));
    }
    F inv = fb_inv(acc);
    for (int j = m - 1; j >= 0; j--) {
        xyzz_t<F> p = ld_vec(&in[b + j]);
        aff_t<F> r;
        if (xyzz_is_inf(p)) {
            fe_set_zero(r.x);
            fe_set_zero(r.y);
        } else {
            F ij = fe_mul(inv, pre[j]); /* 1/(ZZ ZZZ) */
            inv = fe_mul(inv, fe_mul(p.zz, p.zzz));
            r.x = fe_mul(p.x, fe_mul(ij, p.zzz));
            r.y = fe_mul(p.y, fe_mul(ij, p.zz));
        }
        st_vec(&out[b + j], r);
    }
}

/* ---- host side ---- */

/* The table width for n scalars. */
static unsigned fb_window(size_t n)
{
    return n >= ((size_t)1 << 18) ? 16 : n >= ((size_t)1 << 11) ? 12 : 8;
}

/* Device buffers and streams of one call, released (scalars and sums zeroed) on return. */
struct fb_res {
    void *tab = nullptr, *tmp = nullptr, *sc[2] = {nullptr, nullptr},
         *acc[2] = {nullptr, nullptr}, *out[2] = {nullptr, nullptr};
    size_t sc_bytes = 0, acc_bytes = 0;
    cudaStream_t st[2] = {nullptr, nullptr};
    ~fb_res()
    {
        (void)cudaDeviceSynchronize();
        for (int s = 0; s < 2; s++) {
            if (sc[s])
                (void)cudaMemset(sc[s], 0, sc_bytes);
            if (acc[s])
                (void)cudaMemset(acc[s], 0, acc_bytes);
        }
        (void)cudaDeviceSynchronize();
        void *all[] = {tab, tmp, sc[0], sc[1], acc[0], acc[1], out[0], out[1]};
        for (void *p : all)
            if (p)
                (void)cudaFree(p);
        for (int s = 0; s < 2; s++)
            if (st[s])
                (void)cudaStreamDestroy(st[s]);
        (void)cudaGetLastError();
    }
};

/* out[i] = s_i G for i < n; bases[w] = 2^(c w) G (host, affine) for w < nwin. */
template <class F>
static cuzk_err fb_run(int device, aff_t<F> *out, const cuzk_fr *s, size_t n, unsigned c,
                       unsigned nwin, const aff_t<F> *bases)
{
    GPU_TRY(gpu_use_device(device));
    fb_res r;
    const size_t wsize = ((size_t)1 << c) - 1, ntab = nwin * wsize;
    /* the table: XYZZ entries in tmp, then affine in tab */
    GPU_CHECK(cudaMalloc(&r.tab, ntab * sizeof(aff_t<F>)));
    GPU_CHECK(cudaMalloc(&r.tmp, ntab * sizeof(xyzz_t<F>) +
                                     nwin * sizeof(aff_t<F>)));
    aff_t<F> *d_bases = (aff_t<F> *)((char *)r.tmp + ntab * sizeof(xyzz_t<F>));
    GPU_CHECK(cudaMemcpy(d_bases, bases, nwin * sizeof(aff_t<F>), cudaMemcpyHostToDevice));
    /* on the legacy default stream (0), ordered with the synchronous copies */
    fb_table_kernel<F><<<gpu_blocks(ntab, FB_THREADS), FB_THREADS, 0, 0>>>(
        (xyzz_t<F> *)r.tmp, d_bases, c, ntab);
    GPU_CHECK_LAUNCH(fb_table_kernel);
    size_t nthr = (ntab + FB_AFF_K - 1) / FB_AFF_K;
    fb_affine_kernel<F><<<gpu_blocks(nthr, FB_THREADS), FB_THREADS, 0, 0>>>(
        (aff_t<F> *)r.tab, (const xyzz_t<F> *)r.tmp, ntab);
    GPU_CHECK_LAUNCH(fb_affine_kernel);
    GPU_CHECK(cudaDeviceSynchronize());
    GPU_CHECK(cudaFree(r.tmp));
    r.tmp = nullptr;

    /* chunk size: two sets of buffers in at most 3/4 of the free memory */
    size_t per = sizeof(fr_t) + sizeof(xyzz_t<F>) + sizeof(aff_t<F>), fr = 0, tot = 0;
    GPU_CHECK(cudaMemGetInfo(&fr, &tot));
    size_t chunk = FB_CHUNK;
    while (chunk > FB_CHUNK_MIN && 2 * chunk * per > fr / 4 * 3)
        chunk /= 2;
    if (chunk > n)
        chunk = n;
    r.sc_bytes = chunk * sizeof(fr_t);
    r.acc_bytes = chunk * sizeof(xyzz_t<F>);
    const int nslots = n > chunk ? 2 : 1;
    for (int k = 0; k < nslots; k++) {
        GPU_CHECK(cudaMalloc(&r.sc[k], r.sc_bytes));
        GPU_CHECK(cudaMalloc(&r.acc[k], r.acc_bytes));
        GPU_CHECK(cudaMalloc(&r.out[k], chunk * sizeof(aff_t<F>)));
        GPU_CHECK(cudaStreamCreateWithFlags(&r.st[k], cudaStreamNonBlocking));
    }
    const size_t nchunks = (n + chunk - 1) / chunk;
    for (size_t k = 0; k <= nchunks; k++) {
        if (k < nchunks) {
            int sl = (int)(k % nslots);
            size_t off = k * chunk, m = n - off < chunk ? n - off : chunk;
            GPU_CHECK(cudaMemcpyAsync(r.sc[sl], s + off, m * sizeof(fr_t), cudaMemcpyHostToDevice,
                                      r.st[sl]));
            fb_mul_kernel<F><<<gpu_blocks(m, FB_THREADS), FB_THREADS, 0, r.st[sl]>>>(
                (xyzz_t<F> *)r.acc[sl], (const fr_t *)r.sc[sl], (const aff_t<F> *)r.tab, c, nwin,
                m);
            GPU_CHECK_LAUNCH(fb_mul_kernel);
            size_t na = (m + FB_AFF_K - 1) / FB_AFF_K;
            fb_affine_kernel<F><<<gpu_blocks(na, FB_THREADS), FB_THREADS, 0, r.st[sl]>>>(
                (aff_t<F> *)r.out[sl], (const xyzz_t<F> *)r.acc[sl], m);
            GPU_CHECK_LAUNCH(fb_affine_kernel);
            GPU_CHECK(cudaMemsetAsync(r.sc[sl], 0, m * sizeof(fr_t), r.st[sl]));
            if (nslots == 1) { /* one chunk: copy it back now */
                GPU_CHECK(cudaMemcpyAsync(out, r.out[0], m * sizeof(aff_t<F>),
                                          cudaMemcpyDeviceToHost, r.st[0]));
                GPU_CHECK(cudaStreamSynchronize(r.st[0]));
                break;
            }
        }
        if (k > 0) { /* chunk k-1 back to the host while chunk k computes */
            size_t p = k - 1, off = p * chunk, m = n - off < chunk ? n - off : chunk;
            int sl = (int)(p % nslots);
            GPU_CHECK(cudaMemcpyAsync(out + off, r.out[sl], m * sizeof(aff_t<F>),
                                      cudaMemcpyDeviceToHost, r.st[sl]));
            GPU_CHECK(cudaStreamSynchronize(r.st[sl]));
        }
    }
    return CUZK_OK;
}

#define FB_ENTRY_(G, F, AFF, JAC)                                                              \
    extern "C" cuzk_err cuzk_gpu_fixed_base_##G(int device, AFF *out, const cuzk_fr *scalars,  \
                                                size_t n)                                      \
    {                                                                                          \
        if (n == 0)                                                                            \
            return CUZK_OK;                                                                    \
        if (!out || !scalars)                                                                  \
            return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_fixed_base_" #G ": NULL argument");   \
        const unsigned c = fb_window(n), nwin = (255 + c - 1) / c;                             \
        JAC bj[32];                                                                            \
        AFF ba[32], g;                                                                         \
        cuzk_##G##_generator(&g);                                                              \
        cuzk_##G##_jac_from_affine(&bj[0], &g);                                                \
        for (unsigned w = 1; w < nwin; w++) {                                                  \
            bj[w] = bj[w - 1];                                                                 \
            for (unsigned b = 0; b < c; b++)                                                   \
                cuzk_##G##_jac_dbl(&bj[w], &bj[w]);                                            \
        }                                                                                      \
        cuzk_##G##_batch_to_affine(ba, bj, nwin);                                              \
        return fb_run<F>(device, (aff_t<F> *)out, scalars, n, c, nwin, (const aff_t<F> *)ba);  \
    }

FB_ENTRY_(g1, fp_t, cuzk_g1_affine, cuzk_g1_jac)
FB_ENTRY_(g2, fp2_t, cuzk_g2_affine, cuzk_g2_jac)
