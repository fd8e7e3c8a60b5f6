/*
 * Fr NTT on the device (cuzk/gpu.h).
 *
 * Forward: radix-2 decimation in frequency (Gentleman-Sande). Stage s (0..k-1) pairs
 * x[i] and x[i + h], h = 2^(k-1-s), for i with bit k-1-s clear:
 *   (u, v) -> (u + v, (u - v) w^e),  e = (i mod h) 2^s,  w = omega_n,
 * leaving X in bit-reversed order; a bit-reversal pass (optionally fused with a scaling)
 * gives natural order. The inverse is the same with omega^-1 and the factor 1/n.
 *
 * Stages are grouped into passes of t <= 10 stages done in shared memory. A pass starting
 * at stage s0 splits the n indices into 2^(k-t) independent sub-problems of 2^t elements:
 *   i = hi 2^(k-s0) + m S + lo,  S = 2^(k-s0-t), m < 2^t, lo < S, hi < 2^s0,
 * sub-problem q = hi S + lo. Within it, local stage r (s = s0 + r) has twiddle exponent
 * (m' S + lo) 2^s with m' = m mod 2^(t-1-r), i.e. the twiddle is
 *   tw_r(lo, m') = omega_(2^(k-s0))^(lo 2^r) * omega_(2^t)^(m' 2^r) = tw_0(lo, m')^(2^r),
 * so a block computes tw_0 once (one multiplication each) and squares it from stage to
 * stage. When S = 1 (lo = 0) the twiddles come straight from the table of omega_(2^t)^j.
 * A block holds E = 2^elog elements: G = E / 2^t sub-problems with consecutive q, so the
 * loads are runs of G consecutive elements (or one contiguous range when S < G).
 *
 * Tables (host-computed from cuzk_fr_root_of_unity, per direction and pass): small[j] =
 * omega_(2^t)^j (j < 2^(t-1)), lo[j] = w^j and hi[j] = w^(1024 j) (j < 1024) for
 * w = omega_(2^(k-s0)), so omega_(2^(k-s0))^lo = lo[lo mod 1024] hi[lo / 1024] for
 * lo < 2^20 (k - t_first <= 18 for k <= 28).
 *
 * That is the "old" mode (CUZK_GPU_NTT_MODE=old). The "new" mode, the default
 * (cuzk_gpu_domain_set_mode;
 * src/gpu/gpu_ntt.cuh holds its index, twiddle and butterfly code, shared with a host test)
 * keeps the pass split but reads the twiddles of every pass but a large transform's first
 * from one table (no squaring), does up to 3 stages per trip through shared memory in
 * registers, pairs DIF with DIT in the H step (no bit reversal there, except one at the end
 * of bellman's), fuses the coset scalings and a b - c into the passes, and bit-reverses by
 * tiles.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/gpu.h"
#include "gpu/gpu_common.cuh"
#include "gpu/gpu_ntt.cuh"

#define NTT_THREADS 256
#define NTT_TMAX 10       /* most stages per shared-memory pass */
#define NTT_TAB 1024      /* entries of each lo/hi power table (10 bits) */
#define NTT_MAXPASS 4

struct ntt_pass_desc {
    unsigned s0, t;
    size_t off_small[2], off_lo[2], off_hi[2]; /* [direction] offsets into tables */
};

struct cuzk_gpu_domain {
    int device;
    unsigned k;
    size_t n;
    cuzk_roots family;
    unsigned elog;       /* log2 of elements per block */
    unsigned npass;
    ntt_pass_desc pass[NTT_MAXPASS];
    size_t off_hscale;   /* 3 x NTT_TAB: (1/n) g^j, g^(1024 j), g^(2^20 j), g = omega_2n */
    size_t off_bfwd;     /* bellman coset (g = 7): (1/n) g^j, g^(1024 j), g^(2^20 j) */
    size_t off_binv;     /* and back: (1/n)(g^n - 1)^-1 g^-j, g^-(1024 j), g^-(2^20 j) */
    cuzk_fr n_inv;
    cudaStream_t stream;
    fr_t *tables;
    fr_t *slot[3];
    cuzk_gpu_ntt_mode mode;
    ntt2_ctx c2;         /* the new mode's plan and tables (c2.tab in device memory) */
    fr_t *tables2;
    /* H from the host (domain_h_host): the slots' copies and their events */
    cudaStream_t cstream;
    cudaEvent_t loaded[3];
};

/* ---- kernels ---- */
__device__ __forceinline__ size_t ntt_addr(unsigned e, size_t q0, unsigned k, unsigned s0,
                                           unsigned t, unsigned gl, unsigned *g_out,
                                           unsigned *m_out)
{
    const unsigned sb = k - s0 - t; /* log2 S */
    if (sb >= gl) {
        const unsigned g = e & ((1u << gl) - 1), m = e >> gl;
        const size_t q = q0 + g;
        const size_t hi = q >> sb, lo = q & (((size_t)1 << sb) - 1);
        *g_out = g;
        *m_out = m;
        return (hi << (k - s0)) + ((size_t)m << sb) + lo;
    }
    const unsigned lo = e & ((1u << sb) - 1);
    const unsigned m = (e >> sb) & ((1u << t) - 1);
    const unsigned hl = e >> (sb + t);
    *g_out = (hl << sb) | lo;
    *m_out = m;
    return (q0 << t) + e;
}

__global__ void __launch_bounds__(NTT_THREADS)
ntt_pass_kernel(fr_t *x, unsigned k, unsigned s0, unsigned t, unsigned elog,
                const fr_t *__restrict__ small, const fr_t *__restrict__ lotab,
                const fr_t *__restrict__ hitab)
{
    extern __shared__ __align__(16) unsigned char ntt_smem[];
    const unsigned E = 1u << elog, gl = elog - t, G = 1u << gl;
    const unsigned half0 = 1u << (t - 1);
    const unsigned sb = k - s0 - t;
    const bool trivial = sb == 0;
    fr_t *sd = reinterpret_cast<fr_t *>(ntt_smem);
    fr_t *stw = sd + E;
    fr_t *swl = stw + E / 2;
    const size_t q0 = (size_t)blockIdx.x * G;

    for (unsigned e = threadIdx.x; e < E; e += blockDim.x) {
        unsigned g, m;
        size_t a = ntt_addr(e, q0, k, s0, t, gl, &g, &m);
        sd[(m << gl) | g] = ld_vec_rw(x + a);
    }
    if (!trivial) {
        const size_t smask = ((size_t)1 << sb) - 1;
        for (unsigned g = threadIdx.x; g < G; g += blockDim.x) {
            size_t lo = (q0 + g) & smask;
            swl[g] = f_mul<FrP>(ld_vec(lotab + (lo & (NTT_TAB - 1))), ld_vec(hitab + (lo >> 10)));
        }
        __syncthreads();
        for (unsigned idx = threadIdx.x; idx < G * half0; idx += blockDim.x)
            stw[idx] = f_mul<FrP>(swl[idx & (G - 1)], ld_vec(small + (idx >> gl)));
    }
    __syncthreads();

    for (unsigned r = 0; r < t; r++) {
        const unsigned hb = t - 1 - r, half = 1u << hb;
        if (r > 0 && !trivial) {
            for (unsigned idx = threadIdx.x; idx < (G << hb); idx += blockDim.x)
                stw[idx] = f_sqr<FrP>(stw[idx]);
            __syncthreads();
        }
        for (unsigned idx = threadIdx.x; idx < G * half0; idx += blockDim.x) {
            const unsigned g = idx & (G - 1), j = idx >> gl;
            const unsigned mp = j & (half - 1);
            const unsigned m1 = ((j >> hb) << (hb + 1)) | mp, m2 = m1 + half;
            const fr_t w = trivial ? ld_vec(small + (mp << r)) : stw[(mp << gl) | g];
            const fr_t u = sd[(m1 << gl) | g], v = sd[(m2 << gl) | g];
            sd[(m1 << gl) | g] = f_add<FrP>(u, v);
            sd[(m2 << gl) | g] = f_mul<FrP>(f_sub<FrP>(u, v), w);
        }
        __syncthreads();
    }

    for (unsigned e = threadIdx.x; e < E; e += blockDim.x) {
        unsigned g, m;
        size_t a = ntt_addr(e, q0, k, s0, t, gl, &g, &m);
        st_vec(x + a, sd[(m << gl) | g]);
    }
}

__device__ __forceinline__ fr_t ntt_power(const fr_t *__restrict__ tab, size_t i)
{
    fr_t f = f_mul<FrP>(ld_vec(tab + (i & (NTT_TAB - 1))), ld_vec(tab + NTT_TAB + ((i >> 10) & (NTT_TAB - 1))));
    return f_mul<FrP>(f, ld_vec(tab + 2 * NTT_TAB + (i >> 20)));
}

/* Bit-reversal permutation; mode 1 multiplies every element by c, mode 2 element i (after
 * the permutation) by tab-power(i) = c g^i. */
__global__ void ntt_bitrev_kernel(fr_t *x, unsigned k, int mode, fr_t c, const fr_t *tab)
{
    const size_t n = (size_t)1 << k;
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const size_t j = __brev((unsigned)i) >> (32 - k);
    if (j < i)
        return;
    fr_t xi = ld_vec_rw(x + i), xj = ld_vec_rw(x + j);
    fr_t yi = xj, yj = xi;
    if (mode == 1) {
        yi = f_mul<FrP>(yi, c);
        yj = f_mul<FrP>(yj, c);
    } else if (mode == 2) {
        yi = f_mul<FrP>(yi, ntt_power(tab, i));
        yj = f_mul<FrP>(yj, ntt_power(tab, j));
    }
    st_vec(x + i, yi);
    st_vec(x + j, yj);
}

/* a = bitrev(a) * bitrev(b) - bitrev(c), in place on a. */
__global__ void ntt_h_final_kernel(fr_t *a, const fr_t *b, const fr_t *c, unsigned k)
{
    const size_t n = (size_t)1 << k;
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const size_t j = __brev((unsigned)i) >> (32 - k);
    if (j < i)
        return;
    fr_t pi = f_sub<FrP>(f_mul<FrP>(ld_vec_rw(a + j), ld_vec(b + j)), ld_vec(c + j));
    fr_t pj = f_sub<FrP>(f_mul<FrP>(ld_vec_rw(a + i), ld_vec(b + i)), ld_vec(c + i));
    st_vec(a + i, pi);
    st_vec(a + j, pj);
}

/* The new mode's pass (gpu_ntt.cuh): the phases with barriers between them; the host test's
 * ntt2_host_exec runs the same sequence. */
template <bool DIT, bool INV, unsigned RMAX>
__global__ void __launch_bounds__(RMAX == 3 ? 128 : 256, RMAX == 3 ? 3 : 2)
ntt2_pass_kernel(const ntt2_args a)
{
    extern __shared__ __align__(16) unsigned char ntt2_smem[];
    const ntt2_sm s = ntt2_sm_at(ntt2_smem, a);
    const size_t blk = blockIdx.x;
    ntt2_phase_load(a, s, blk, threadIdx.x, blockDim.x);
    ntt2_phase_prep(a, s, blk, threadIdx.x, blockDim.x);
    if (a.gen) {
        __syncthreads();
        ntt2_phase_tw<INV>(a, s, threadIdx.x, blockDim.x);
    }
    __syncthreads();
    const unsigned nc = ntt2_nchunks(a.t, RMAX);
    for (unsigned i = 0; i < nc; i++) {
        ntt2_phase_round_any<DIT, INV, RMAX>(a, s, blk, DIT ? nc - 1 - i : i, threadIdx.x,
                                             blockDim.x);
        __syncthreads();
    }
    ntt2_phase_store(a, s, blk, threadIdx.x, blockDim.x);
}

__global__ void __launch_bounds__(NTT2_THREADS) ntt2_brv_kernel(fr_t *x, unsigned k)
{
    __shared__ fr_t sh[2u << (2 * NTT2_BRV_QMAX)];
    ntt2_brv_phase(x, k, blockIdx.x, 0, sh, threadIdx.x, blockDim.x);
    __syncthreads();
    ntt2_brv_phase(x, k, blockIdx.x, 1, sh, threadIdx.x, blockDim.x);
}

/* ---- host side ---- */
static void host_powers(cuzk_fr *out, const cuzk_fr *start, const cuzk_fr *base, size_t count)
{
    cuzk_fr acc = *start;
    for (size_t i = 0; i < count; i++) {
        out[i] = acc;
        cuzk_fr_mul(&acc, &acc, base);
    }
}

static void host_pow2k(cuzk_fr *r, const cuzk_fr *a, unsigned k) /* r = a^(2^k) */
{
    *r = *a;
    for (unsigned i = 0; i < k; i++)
        cuzk_fr_sqr(r, r);
}

static size_t ntt_smem_bytes(unsigned elog, unsigned t)
{
    size_t E = (size_t)1 << elog, G = E >> t;
    return (E + E / 2 + G) * sizeof(fr_t);
}

static unsigned ntt_default_rmax(void)
{
    const char *s = getenv("CUZK_GPU_NTT_RADIX"); /* new mode: 4 or 8 (benchmarks) */
    return s && strcmp(s, "8") == 0 ? 3 : 2;
}

static unsigned ntt_default_elog(void)
{
    const char *s = getenv("CUZK_GPU_NTT_ELOG"); /* tuning knob for benchmarks */
    if (s) {
        long v = strtol(s, NULL, 10);
        if (v >= NTT_TMAX && v <= 12)
            return (unsigned)v;
    }
    return 11;
}

extern "C" void cuzk_gpu_domain_free(cuzk_gpu_domain *d)
{
    if (!d)
        return;
    (void)cudaSetDevice(d->device);
    for (int s = 0; s < 3; s++)
        if (d->slot[s])
            (void)cudaFree(d->slot[s]);
    if (d->tables)
        (void)cudaFree(d->tables);
    if (d->tables2)
        (void)cudaFree(d->tables2);
    if (d->stream)
        (void)cudaStreamDestroy(d->stream);
    if (d->cstream) {
        (void)cudaStreamSynchronize(d->cstream);
        (void)cudaStreamDestroy(d->cstream);
    }
    for (int s = 0; s < 3; s++)
        if (d->loaded[s])
            (void)cudaEventDestroy(d->loaded[s]);
    free(d);
}

static cuzk_err domain_init(cuzk_gpu_domain *d, cuzk_fr **host_tab)
{
    const unsigned k = d->k;
    d->elog = ntt_default_elog();
    if (d->elog > k)
        d->elog = k;
    const unsigned tmax = d->elog < NTT_TMAX ? d->elog : NTT_TMAX;
    d->npass = (k + tmax - 1) / tmax;
    if (d->npass > NTT_MAXPASS)
        return cuzk_error_set(CUZK_EINVAL, "gpu ntt: 2^%u needs too many passes", k);
    size_t ntab = 3 * NTT_TAB;
    unsigned s0 = 0;
    for (unsigned p = 0; p < d->npass; p++) {
        unsigned t = k / d->npass + (p < k % d->npass ? 1 : 0);
        d->pass[p].s0 = s0;
        d->pass[p].t = t;
        for (int dir = 0; dir < 2; dir++) {
            d->pass[p].off_small[dir] = ntab;
            ntab += (size_t)1 << (t - 1);
            d->pass[p].off_lo[dir] = ntab;
            ntab += NTT_TAB;
            d->pass[p].off_hi[dir] = ntab;
            ntab += NTT_TAB;
        }
        s0 += t;
    }
    d->off_bfwd = ntab;
    ntab += 3 * NTT_TAB;
    d->off_binv = ntab;
    ntab += 3 * NTT_TAB;
    if (k - d->pass[0].t > 20)
        return cuzk_error_set(CUZK_EINVAL, "gpu ntt: 2^%u too large for the twiddle tables", k);

    cuzk_fr *tab = (cuzk_fr *)calloc(ntab, sizeof(cuzk_fr));
    if (!tab)
        return cuzk_error_set(CUZK_ENOMEM, "gpu ntt: host twiddle tables");
    *host_tab = tab;
    cuzk_fr one, nn;
    cuzk_fr_set_one(&one);
    cuzk_fr_set_u64(&nn, (uint64_t)1 << (k < 63 ? k : 0));
    cuzk_fr_inv(&d->n_inv, &nn);
    for (unsigned p = 0; p < d->npass; p++) {
        const unsigned ps0 = d->pass[p].s0, t = d->pass[p].t;
        cuzk_fr w;
        GPU_TRY(cuzk_fr_root_of_unity(&w, k - ps0, d->family)); /* omega_(2^(k-s0)) */
        for (int dir = 0; dir < 2; dir++) {
            cuzk_fr wd = w, ws, w1024;
            if (dir == 1)
                cuzk_fr_inv(&wd, &w);
            host_pow2k(&ws, &wd, k - ps0 - t); /* omega_(2^t) */
            host_powers(tab + d->pass[p].off_small[dir], &one, &ws, (size_t)1 << (t - 1));
            host_powers(tab + d->pass[p].off_lo[dir], &one, &wd, NTT_TAB);
            host_pow2k(&w1024, &wd, 10);
            host_powers(tab + d->pass[p].off_hi[dir], &one, &w1024, NTT_TAB);
        }
    }
    d->off_hscale = 0;
    if (d->family == CUZK_ROOTS_SNARKJS && k < CUZK_FR_TWO_ADICITY) {
        cuzk_fr g, g1024, g2_20;
        GPU_TRY(cuzk_fr_root_of_unity(&g, k + 1, d->family)); /* omega_2n */
        host_pow2k(&g1024, &g, 10);
        host_pow2k(&g2_20, &g, 20);
        host_powers(tab, &d->n_inv, &g, NTT_TAB);
        host_powers(tab + NTT_TAB, &one, &g1024, NTT_TAB);
        host_powers(tab + 2 * NTT_TAB, &one, &g2_20, NTT_TAB);
    }
    if (d->family == CUZK_ROOTS_BELLMAN) {
        cuzk_fr g, ginv, gk, zinv, start;
        cuzk_fr_generator(&g, d->family); /* 7: the coset shift */
        cuzk_fr_inv(&ginv, &g);
        host_pow2k(&zinv, &g, k); /* Z(g omega^j) = g^n - 1, nonzero as g generates Fr* */
        cuzk_fr_sub(&zinv, &zinv, &one);
        cuzk_fr_inv(&zinv, &zinv);
        cuzk_fr_mul(&start, &zinv, &d->n_inv);
        const cuzk_fr *base[2] = {&g, &ginv};
        const cuzk_fr *st0[2] = {&d->n_inv, &start};
        const size_t off[2] = {d->off_bfwd, d->off_binv};
        for (int dir = 0; dir < 2; dir++) {
            host_powers(tab + off[dir], st0[dir], base[dir], NTT_TAB);
            host_pow2k(&gk, base[dir], 10);
            host_powers(tab + off[dir] + NTT_TAB, &one, &gk, NTT_TAB);
            host_pow2k(&gk, base[dir], 20);
            host_powers(tab + off[dir] + 2 * NTT_TAB, &one, &gk, NTT_TAB);
        }
    }
    GPU_CHECK(cudaMalloc(&d->tables, ntab * sizeof(fr_t)));
    GPU_CHECK(cudaMemcpy(d->tables, tab, ntab * sizeof(fr_t), cudaMemcpyHostToDevice));

    /* the new mode's tables (W at most 4 MiB, the rest small) */
    cuzk_fr *tab2 = NULL;
    GPU_TRY(ntt2_tables_make(&d->c2, &tab2, k, d->family, d->elog, NTT_TMAX, NTT2_TLOG,
                             ntt_default_rmax()));
    cudaError_t ce = cudaMalloc(&d->tables2, d->c2.n_tab * sizeof(fr_t));
    if (ce == cudaSuccess)
        ce = cudaMemcpy(d->tables2, tab2, d->c2.n_tab * sizeof(fr_t), cudaMemcpyHostToDevice);
    free(tab2);
    GPU_CHECK(ce);
    d->c2.tab = d->tables2;
    return CUZK_OK;
}

static cuzk_gpu_ntt_mode ntt_default_mode(void)
{
    /* "old" or "new"; new by default: measured on the H200 (bench/RESULTS.md, session 3)
     * 14 % faster per transform and 16-18 % per H step at 2^24 and 2^27, same results */
    const char *s = getenv("CUZK_GPU_NTT_MODE");
    if (s && strcmp(s, "old") == 0)
        return CUZK_GPU_NTT_OLD;
    return CUZK_GPU_NTT_NEW;
}

extern "C" cuzk_err cuzk_gpu_domain_set_mode(cuzk_gpu_domain *d, cuzk_gpu_ntt_mode mode)
{
    if (!d)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_domain_set_mode: domain is NULL");
    if (mode != CUZK_GPU_NTT_OLD && mode != CUZK_GPU_NTT_NEW)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_domain_set_mode: unknown mode %d", (int)mode);
    d->mode = mode;
    return CUZK_OK;
}

extern "C" cuzk_gpu_ntt_mode cuzk_gpu_domain_mode(const cuzk_gpu_domain *d)
{
    return d ? d->mode : CUZK_GPU_NTT_OLD;
}

extern "C" cuzk_err cuzk_gpu_domain_new(cuzk_gpu_domain **out, int device, unsigned log2_n,
                                        cuzk_roots family)
{
    if (!out)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_domain_new: out is NULL");
    *out = NULL;
    if (log2_n < 1 || log2_n > CUZK_GPU_NTT_LOG2_MAX)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_domain_new: log2_n = %u not in 1..%d",
                              log2_n, CUZK_GPU_NTT_LOG2_MAX);
    if (family != CUZK_ROOTS_SNARKJS && family != CUZK_ROOTS_BELLMAN)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_domain_new: unknown root family %d",
                              (int)family);
    GPU_TRY(gpu_use_device(device));
    cuzk_gpu_domain *d = (cuzk_gpu_domain *)calloc(1, sizeof *d);
    if (!d)
        return cuzk_error_set(CUZK_ENOMEM, "cuzk_gpu_domain_new");
    d->device = device;
    d->k = log2_n;
    d->n = (size_t)1 << log2_n;
    d->family = family;
    d->mode = ntt_default_mode();
    cuzk_fr *tab = NULL;
    cuzk_err err = CUZK_OK;
    cudaError_t e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        err = gpu_fail(e, "cudaStreamCreateWithFlags", __FILE__, __LINE__);
    if (err == CUZK_OK)
        err = domain_init(d, &tab);
    free(tab);
    if (err != CUZK_OK) {
        cuzk_gpu_domain_free(d);
        return err;
    }
    *out = d;
    return CUZK_OK;
}

static cuzk_err domain_slot(cuzk_gpu_domain *d, unsigned slot)
{
    if (slot > 2)
        return cuzk_error_set(CUZK_EINVAL, "gpu domain: slot %u not in 0..2", slot);
    if (!d->slot[slot])
        GPU_CHECK(cudaMalloc(&d->slot[slot], d->n * sizeof(fr_t)));
    return CUZK_OK;
}

/* The shared-memory limit of a kernel is one setting per function and device, shared by
 * every domain of the process: it only ever grows (under a lock), so a domain on another
 * thread can never lower it between this one's setting and its launch. Kernel ids: 0 the
 * old pass, 1 + 4 (radix 8) + 2 dit + inv the new ones. */
#define NTT_MAX_DEVICES 64
#define NTT_KERNELS 9
static pthread_mutex_t ntt_smem_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t ntt_smem_set[NTT_KERNELS][NTT_MAX_DEVICES];

static cuzk_err ntt_smem_allow_fn(int device, int id, const void *fn, size_t smem)
{
    if (device < 0 || device >= NTT_MAX_DEVICES)
        return cuzk_error_set(CUZK_EINVAL, "gpu ntt: device %d", device);
    pthread_mutex_lock(&ntt_smem_mu);
    cudaError_t ce = cudaSuccess;
    if (smem > ntt_smem_set[id][device]) {
        ce = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (ce == cudaSuccess)
            ntt_smem_set[id][device] = smem;
    }
    pthread_mutex_unlock(&ntt_smem_mu);
    GPU_CHECK(ce);
    return CUZK_OK;
}

static cuzk_err ntt_smem_allow(int device, size_t smem)
{
    return ntt_smem_allow_fn(device, 0, (const void *)ntt_pass_kernel, smem);
}

/* The new mode's passes and bit reversal on the domain's stream (gpu_ntt.cuh's sequences). */
struct ntt2_dev_exec {
    cuzk_gpu_domain *d;
    const cudaEvent_t *wait; /* slot i's work waits for wait[i] (NULL: nothing to wait for) */
    cuzk_err slot_ready(int i)
    {
        if (wait)
            GPU_CHECK(cudaStreamWaitEvent(d->stream, wait[i], 0));
        return CUZK_OK;
    }
    cuzk_err pass(const ntt2_args &a, bool dit, bool inv)
    {
        void (*const fns[8])(const ntt2_args) = {
            ntt2_pass_kernel<false, false, 2>, ntt2_pass_kernel<false, true, 2>,
            ntt2_pass_kernel<true, false, 2>,  ntt2_pass_kernel<true, true, 2>,
            ntt2_pass_kernel<false, false, 3>, ntt2_pass_kernel<false, true, 3>,
            ntt2_pass_kernel<true, false, 3>,  ntt2_pass_kernel<true, true, 3>};
        const int id = (a.rmax == 3 ? 4 : 0) + (dit ? 2 : 0) + (inv ? 1 : 0);
        const size_t smem = ntt2_smem_bytes(a);
        GPU_TRY(ntt_smem_allow_fn(d->device, 1 + id, (const void *)fns[id], smem));
        const unsigned blocks = (unsigned)((size_t)1 << (a.k - a.elog));
        fns[id]<<<blocks, ntt2_threads(a.elog, a.rmax), smem, d->stream>>>(a);
        GPU_CHECK_LAUNCH(ntt2_pass_kernel);
        return CUZK_OK;
    }
    cuzk_err bitrev(fr_t *x, unsigned k)
    {
        ntt2_brv_kernel<<<(unsigned)ntt2_brv_blocks(k), NTT2_THREADS, 0, d->stream>>>(x, k);
        GPU_CHECK_LAUNCH(ntt2_brv_kernel);
        return CUZK_OK;
    }
};

/* The DIF passes in one direction (0 forward, 1 inverse) on a device array. */
static cuzk_err ntt_dif(cuzk_gpu_domain *d, fr_t *x, int dir)
{
    const unsigned blocks = (unsigned)(d->n >> d->elog);
    for (unsigned p = 0; p < d->npass; p++) {
        const ntt_pass_desc *pd = &d->pass[p];
        const size_t smem = ntt_smem_bytes(d->elog, pd->t);
        GPU_TRY(ntt_smem_allow(d->device, smem));
        ntt_pass_kernel<<<blocks, NTT_THREADS, smem, d->stream>>>(
            x, d->k, pd->s0, pd->t, d->elog, d->tables + pd->off_small[dir],
            d->tables + pd->off_lo[dir], d->tables + pd->off_hi[dir]);
        GPU_CHECK_LAUNCH(ntt_pass_kernel);
    }
    return CUZK_OK;
}

static cuzk_err ntt_bitrev(cuzk_gpu_domain *d, fr_t *x, int mode, const cuzk_fr *c,
                           const fr_t *tab)
{
    fr_t cc;
    memcpy(&cc, c, sizeof cc);
    ntt_bitrev_kernel<<<gpu_blocks(d->n, 256), 256, 0, d->stream>>>(x, d->k, mode, cc, tab);
    GPU_CHECK_LAUNCH(ntt_bitrev_kernel);
    return CUZK_OK;
}

static cuzk_err domain_check(const cuzk_gpu_domain *d, const void *x, const char *fn)
{
    if (!d || !x)
        return cuzk_error_set(CUZK_EINVAL, "%s: NULL argument", fn);
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_domain_load(cuzk_gpu_domain *d, unsigned slot, const cuzk_fr *x)
{
    GPU_TRY(domain_check(d, x, "cuzk_gpu_domain_load"));
    GPU_CHECK(cudaSetDevice(d->device));
    GPU_TRY(domain_slot(d, slot));
    GPU_CHECK(cudaMemcpyAsync(d->slot[slot], x, d->n * sizeof(fr_t), cudaMemcpyHostToDevice,
                              d->stream));
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_domain_store(cuzk_gpu_domain *d, unsigned slot, cuzk_fr *x)
{
    GPU_TRY(domain_check(d, x, "cuzk_gpu_domain_store"));
    GPU_CHECK(cudaSetDevice(d->device));
    GPU_TRY(domain_slot(d, slot));
    GPU_CHECK(cudaMemcpyAsync(x, d->slot[slot], d->n * sizeof(fr_t), cudaMemcpyDeviceToHost,
                              d->stream));
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_domain_slot_dev(cuzk_gpu_domain *d, unsigned slot, void **ptr,
                                             size_t *n)
{
    GPU_TRY(domain_check(d, ptr, "cuzk_gpu_domain_slot_dev"));
    GPU_CHECK(cudaSetDevice(d->device));
    GPU_TRY(domain_slot(d, slot));
    /* the domain's own work on the slot is finished before anyone else touches it */
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    *ptr = d->slot[slot];
    if (n)
        *n = d->n;
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_domain_ntt(cuzk_gpu_domain *d, unsigned slot, bool inverse)
{
    GPU_TRY(domain_check(d, d, "cuzk_gpu_domain_ntt"));
    GPU_TRY(gpu_use_device(d->device));
    GPU_TRY(domain_slot(d, slot));
    fr_t *x = d->slot[slot];
    if (d->mode == CUZK_GPU_NTT_NEW) {
        ntt2_dev_exec ex = {d, NULL};
        GPU_TRY(ntt2_run_ntt(ex, d->c2, x, inverse));
        GPU_CHECK(cudaStreamSynchronize(d->stream));
        return CUZK_OK;
    }
    GPU_TRY(ntt_dif(d, x, inverse ? 1 : 0));
    GPU_TRY(ntt_bitrev(d, x, inverse ? 1 : 0, &d->n_inv, d->tables));
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_domain_h_snarkjs(cuzk_gpu_domain *d)
{
    GPU_TRY(domain_check(d, d, "cuzk_gpu_domain_h_snarkjs"));
    if (d->family != CUZK_ROOTS_SNARKJS || d->k >= CUZK_FR_TWO_ADICITY)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_h_snarkjs: domain is not a snarkjs domain");
    GPU_TRY(gpu_use_device(d->device));
    for (unsigned s = 0; s < 3; s++)
        GPU_TRY(domain_slot(d, s));
    if (d->mode == CUZK_GPU_NTT_NEW) {
        ntt2_dev_exec ex = {d, NULL};
        GPU_TRY(ntt2_run_h(ex, d->c2, d->slot[0], d->slot[1], d->slot[2], false));
        GPU_CHECK(cudaStreamSynchronize(d->stream));
        return CUZK_OK;
    }
    for (unsigned s = 0; s < 3; s++) {
        fr_t *x = d->slot[s];
        GPU_TRY(ntt_dif(d, x, 1));
        /* coefficients in natural order times (1/n) omega_2n^i */
        GPU_TRY(ntt_bitrev(d, x, 2, &d->n_inv, d->tables + d->off_hscale));
        GPU_TRY(ntt_dif(d, x, 0));
    }
    ntt_h_final_kernel<<<gpu_blocks(d->n, 256), 256, 0, d->stream>>>(d->slot[0], d->slot[1],
                                                                       d->slot[2], d->k);
    GPU_CHECK_LAUNCH(ntt_h_final_kernel);
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    return CUZK_OK;
}

/* bellman: per slot, inverse DIF (coefficients, bit-reversed, times n), bit reversal with
 * coefficient i times (1/n) g^i, forward DIF (values at g omega^j, bit-reversed); then
 * p = a b - c in natural order (the final kernel's bit reversal), inverse DIF, and bit
 * reversal with coefficient i times (g^n - 1)^-1 (1/n) g^-i. */
extern "C" cuzk_err cuzk_gpu_domain_h_bellman(cuzk_gpu_domain *d)
{
    GPU_TRY(domain_check(d, d, "cuzk_gpu_domain_h_bellman"));
    if (d->family != CUZK_ROOTS_BELLMAN)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_h_bellman: domain is not a bellman domain");
    GPU_TRY(gpu_use_device(d->device));
    for (unsigned s = 0; s < 3; s++)
        GPU_TRY(domain_slot(d, s));
    if (d->mode == CUZK_GPU_NTT_NEW) {
        ntt2_dev_exec ex = {d, NULL};
        GPU_TRY(ntt2_run_h(ex, d->c2, d->slot[0], d->slot[1], d->slot[2], true));
        GPU_CHECK(cudaStreamSynchronize(d->stream));
        return CUZK_OK;
    }
    for (unsigned s = 0; s < 3; s++) {
        fr_t *x = d->slot[s];
        GPU_TRY(ntt_dif(d, x, 1));
        GPU_TRY(ntt_bitrev(d, x, 2, &d->n_inv, d->tables + d->off_bfwd));
        GPU_TRY(ntt_dif(d, x, 0));
    }
    ntt_h_final_kernel<<<gpu_blocks(d->n, 256), 256, 0, d->stream>>>(d->slot[0], d->slot[1],
                                                                       d->slot[2], d->k);
    GPU_CHECK_LAUNCH(ntt_h_final_kernel);
    GPU_TRY(ntt_dif(d, d->slot[0], 1));
    GPU_TRY(ntt_bitrev(d, d->slot[0], 2, &d->n_inv, d->tables + d->off_binv));
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    return CUZK_OK;
}

/* The H step of the domain's family from host arrays: with the new path the three copies
 * go on a copy stream and the transforms of slot i wait for slot i's copy alone, so b and c
 * arrive while a is transformed; with the old path the three are loaded first. */
extern "C" cuzk_err cuzk_gpu_domain_h_host(cuzk_gpu_domain *d, const cuzk_fr *a,
                                           const cuzk_fr *b, const cuzk_fr *c)
{
    if (!d || !a || !b || !c)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_domain_h_host: NULL argument");
    const bool bellman = d->family == CUZK_ROOTS_BELLMAN;
    if (!bellman && d->k >= CUZK_FR_TWO_ADICITY)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_domain_h_host: domain is not a snarkjs domain");
    if (d->mode != CUZK_GPU_NTT_NEW) {
        GPU_TRY(cuzk_gpu_domain_load(d, 0, a));
        GPU_TRY(cuzk_gpu_domain_load(d, 1, b));
        GPU_TRY(cuzk_gpu_domain_load(d, 2, c));
        return bellman ? cuzk_gpu_domain_h_bellman(d) : cuzk_gpu_domain_h_snarkjs(d);
    }
    GPU_TRY(gpu_use_device(d->device));
    for (unsigned s = 0; s < 3; s++)
        GPU_TRY(domain_slot(d, s));
    if (!d->cstream) {
        GPU_CHECK(cudaStreamCreateWithFlags(&d->cstream, cudaStreamNonBlocking));
        for (int s = 0; s < 3; s++)
            GPU_CHECK(cudaEventCreateWithFlags(&d->loaded[s], cudaEventDisableTiming));
    }
    /* the copies start after the work queued on the slots so far */
    GPU_CHECK(cudaEventRecord(d->loaded[0], d->stream));
    GPU_CHECK(cudaStreamWaitEvent(d->cstream, d->loaded[0], 0));
    const cuzk_fr *src[3] = {a, b, c};
    for (int s = 0; s < 3; s++) {
        GPU_CHECK(cudaMemcpyAsync(d->slot[s], src[s], d->n * sizeof(fr_t), cudaMemcpyHostToDevice,
                                  d->cstream));
        GPU_CHECK(cudaEventRecord(d->loaded[s], d->cstream));
    }
    ntt2_dev_exec ex = {d, d->loaded};
    cuzk_err e = ntt2_run_h(ex, d->c2, d->slot[0], d->slot[1], d->slot[2], bellman);
    cudaError_t ce = cudaStreamSynchronize(d->stream);
    cudaError_t ce2 = cudaStreamSynchronize(d->cstream); /* after an error too: a, b, c are read */
    GPU_TRY(e);
    if (ce == cudaSuccess)
        ce = ce2;
    if (ce != cudaSuccess)
        return gpu_fail(ce, "cudaStreamSynchronize", __FILE__, __LINE__);
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_h_bellman(cuzk_gpu_domain *d, cuzk_fr *a, const cuzk_fr *b,
                                       const cuzk_fr *c)
{
    if (!d || !a || !b || !c)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_h_bellman: NULL argument");
    if (d->family != CUZK_ROOTS_BELLMAN)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_h_bellman: domain is not a bellman domain");
    GPU_TRY(cuzk_gpu_domain_h_host(d, a, b, c));
    return cuzk_gpu_domain_store(d, 0, a);
}

extern "C" cuzk_err cuzk_gpu_ntt_forward(cuzk_gpu_domain *d, cuzk_fr *x)
{
    GPU_TRY(cuzk_gpu_domain_load(d, 0, x));
    GPU_TRY(cuzk_gpu_domain_ntt(d, 0, false));
    return cuzk_gpu_domain_store(d, 0, x);
}

extern "C" cuzk_err cuzk_gpu_ntt_inverse(cuzk_gpu_domain *d, cuzk_fr *x)
{
    GPU_TRY(cuzk_gpu_domain_load(d, 0, x));
    GPU_TRY(cuzk_gpu_domain_ntt(d, 0, true));
    return cuzk_gpu_domain_store(d, 0, x);
}

extern "C" cuzk_err cuzk_gpu_h_snarkjs(cuzk_gpu_domain *d, cuzk_fr *a, const cuzk_fr *b,
                                       const cuzk_fr *c)
{
    if (!d || !a || !b || !c)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_h_snarkjs: NULL argument");
    if (d->family != CUZK_ROOTS_SNARKJS || d->k >= CUZK_FR_TWO_ADICITY)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_h_snarkjs: domain is not a snarkjs domain");
    GPU_TRY(cuzk_gpu_domain_h_host(d, a, b, c));
    return cuzk_gpu_domain_store(d, 0, a);
}
