/*
 * Fr NTT and H steps on the device (cuzk/gpu.h).
 *
 * src/gpu/ntt.cuh holds the plan, the twiddle tables, the per-block phases of a pass and the
 * sequences of passes, shared with the host test (tests/unit/test_gpu_ntt_host.cu); this
 * file runs them on a domain's stream. In short: passes of at most NTT_TMAX radix-2 stages
 * done in shared memory by blocks of 2^NTT_ELOG elements (fewer below 2^18: ntt_elog_for),
 * one stage per trip through shared memory (radix-2 rounds, 4 blocks a multiprocessor),
 * twiddles read from tables (one multiplication a butterfly; the first pass of a transform
 * above 2^NTT_TLOG reads W0, n/2 entries filled on the device), DIF passes (natural in,
 * bit-reversed out) paired with DIT passes (bit-reversed in, natural out) in the H step so
 * that it needs no bit reversal, the coset scalings and the a b - c fused into the passes,
 * and the natural-order transforms (public NTT, bellman's H end) stored in natural order by
 * their last pass (a tiled bit reversal in place when there is no memory for a second
 * buffer).
 *
 * Counts (NTT_ELOG 10, NTT_TMAX 10, NTT_TLOG 18), a forward transform in natural order:
 *  - passes over global memory (each reads and writes the 2^k elements once): 2^24: 3 passes
 *    of 8 stages (3 x 1 GiB moved); 2^27: 3 of 9 (3 x 8 GiB): the last stores in natural
 *    order through a second buffer (ntt.cuh), where a bit reversal in place would be a
 *    fourth pass (~3.5 TB/s: 0.30 ms at 2^24). The H step: 6 passes a slot (DIF, DIT) for
 *    a, b and c, the last one also reading a and b (a b - c); bellman's adds a DIF of a (3
 *    passes, through b). The passes are bound by the multiprocessors' integer multiply-adds,
 *    not by memory (~11-16 % of the DRAM bandwidth; the first pass above 2^18 also reads
 *    each entry of W0 once: 16 n bytes).
 *  - Fr products (Montgomery, 8 x 8 + 8 x 8 word products less the reduction rows' products
 *    by r's two low words): one a butterfly, none in the network's last stage (tau = 1):
 *    (k - 1) 2^(k-1) for k 2^(k-1) butterflies; the inverse adds one an element (1/n, fused
 *    into the last pass), and so does each coset scaling of the H step (its factors split
 *    between a table read by the last DIF pass and the coset twiddles of the later passes;
 *    it was two an element, the factor formed from two tables, then applied).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/ntt.cuh"

struct cuzk_gpu_domain {
    int device;
    unsigned k;
    size_t n;
    cuzk_roots family;
    cudaStream_t stream;
    ntt_ctx c;   /* the plan and the table layout (c.tab in device memory: tables) */
    fr_t *tables;
    fr_t *slot[3];
    fr_t *tmp;   /* the public NTT's second buffer (n elements, made on its first call) */
    /* H from the host (domain_h_host): the slots' copies and their events */
    cudaStream_t cstream;
    cudaEvent_t loaded[3];
};

/* ---- kernels ---- */
/* One pass (ntt.cuh): the phases with barriers between them; the host test's
 * ntt_host_exec runs the same sequence. */
template <bool DIT, bool INV, bool CW>
__global__ void __launch_bounds__(NTT_THREADS, NTT_MINB) ntt_pass_kernel(const ntt_args a)
{
    extern __shared__ __align__(16) unsigned char ntt_smem[];
    const ntt_sm s = ntt_sm_at(ntt_smem, a);
    const size_t blk = blockIdx.x;
    ntt_phase_load(a, s, blk, threadIdx.x, blockDim.x);
    __syncthreads();
    const unsigned nc = ntt_nchunks(a.t);
    for (unsigned i = 0; i < nc; i++) {
        ntt_phase_round_any<DIT, INV, CW>(a, s, blk, DIT ? nc - 1 - i : i, threadIdx.x,
                                          blockDim.x);
        __syncthreads();
    }
    ntt_phase_store(a, s, blk, threadIdx.x, blockDim.x);
}

/* W0 (ntt.cuh): entries 0 .. n of omega_n^x from the three-level table. */
__global__ void ntt_w0_kernel(fr_t *w0, const fr_t *tab3, size_t n)
{
    const size_t x = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x < n)
        w0[x] = ntt_pow3(tab3, x);
}

__global__ void __launch_bounds__(NTT_THREADS) ntt_brv_kernel(fr_t *x, unsigned k)
{
    __shared__ fr_t sh[2u << (2 * NTT_BRV_QMAX)];
    ntt_brv_phase(x, k, blockIdx.x, 0, sh, threadIdx.x, blockDim.x);
    __syncthreads();
    ntt_brv_phase(x, k, blockIdx.x, 1, sh, threadIdx.x, blockDim.x);
}

/* ---- host side ---- */
extern "C" void cuzk_gpu_domain_free(cuzk_gpu_domain *d)
{
    if (!d)
        return;
    (void)cudaSetDevice(d->device);
    for (int s = 0; s < 3; s++)
        if (d->slot[s])
            (void)cudaFree(d->slot[s]);
    if (d->tmp)
        (void)cudaFree(d->tmp);
    if (d->tables)
        (void)cudaFree(d->tables);
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

/* The plan and its tables: W (at most 4 MiB) and the small ones computed on the host and
 * copied to the device, W0 (above 2^NTT_TLOG: 16 n bytes) filled there. */
static cuzk_err domain_init(cuzk_gpu_domain *d)
{
    cuzk_fr *tab = NULL;
    GPU_TRY(ntt_tables_make(&d->c, &tab, d->k, d->family, ntt_elog_for(d->k), NTT_TMAX,
                            NTT_TLOG, false));
    cudaError_t ce = cudaMalloc(&d->tables, d->c.n_tab * sizeof(fr_t));
    if (ce == cudaSuccess)
        ce = cudaMemcpy(d->tables, tab, d->c.n_host * sizeof(fr_t), cudaMemcpyHostToDevice);
    free(tab);
    GPU_CHECK(ce);
    d->c.tab = d->tables;
    if (d->c.plan.w0) {
        const size_t nw0 = d->c.n_tab - d->c.off_w0;
        ntt_w0_kernel<<<gpu_blocks(nw0, 256), 256, 0, d->stream>>>(
            d->tables + d->c.off_w0, d->tables + d->c.off_w3, nw0);
        GPU_CHECK_LAUNCH(ntt_w0_kernel);
        GPU_CHECK(cudaStreamSynchronize(d->stream));
    }
    return CUZK_OK;
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
    cuzk_err err = CUZK_OK;
    cudaError_t e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        err = gpu_fail(e, "cudaStreamCreateWithFlags", __FILE__, __LINE__);
    if (err == CUZK_OK)
        err = domain_init(d);
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
 * thread can never lower it between this one's setting and its launch. Kernel ids:
 * ntt_kernel_id's. */
#define NTT_MAX_DEVICES 64
static pthread_mutex_t ntt_smem_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t ntt_smem_set[NTT_KERNELS][NTT_MAX_DEVICES];

static cuzk_err ntt_smem_allow(int device, int id, const void *fn, size_t smem)
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

/* The passes and the bit reversal on the domain's stream (ntt.cuh's sequences). */
struct ntt_dev_exec {
    cuzk_gpu_domain *d;
    /* H from host arrays (cuzk_gpu_domain_h_host_ready): slot i's copy from src[i] is
     * started on the copy stream once ready(ctx, i) returns (ready NULL: at once), and slot
     * i's work waits for it. src NULL: the slots are loaded already. */
    const cuzk_fr *const *src;
    cuzk_err (*ready)(void *ctx, int i);
    void *ctx;
    cuzk_err slot_ready(int i)
    {
        if (!src)
            return CUZK_OK;
        if (ready)
            GPU_TRY(ready(ctx, i));
        GPU_CHECK(cudaMemcpyAsync(d->slot[i], src[i], d->n * sizeof(fr_t),
                                  cudaMemcpyHostToDevice, d->cstream));
        GPU_CHECK(cudaEventRecord(d->loaded[i], d->cstream));
        GPU_CHECK(cudaStreamWaitEvent(d->stream, d->loaded[i], 0));
        return CUZK_OK;
    }
    cuzk_err pass(const ntt_args &a, bool dit, bool inv)
    {
        void (*const fns[NTT_KERNELS])(const ntt_args) = {
            ntt_pass_kernel<false, false, false>, ntt_pass_kernel<false, true, false>,
            ntt_pass_kernel<true, false, false>,  ntt_pass_kernel<true, true, false>,
            ntt_pass_kernel<true, false, true>,   ntt_pass_kernel<false, true, true>};
        int id;
        GPU_TRY(ntt_kernel_id(a, dit, inv, &id));
        const size_t smem = ntt_smem_bytes(a);
        GPU_TRY(ntt_smem_allow(d->device, id, (const void *)fns[id], smem));
        const unsigned blocks = (unsigned)((size_t)1 << (a.k - a.elog));
        fns[id]<<<blocks, ntt_threads(a.elog), smem, d->stream>>>(a);
        GPU_CHECK_LAUNCH(ntt_pass_kernel);
        return CUZK_OK;
    }
    cuzk_err bitrev(fr_t *x, unsigned k)
    {
        ntt_brv_kernel<<<(unsigned)ntt_brv_blocks(k), NTT_THREADS, 0, d->stream>>>(x, k);
        GPU_CHECK_LAUNCH(ntt_brv_kernel);
        return CUZK_OK;
    }
};

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
    /* the second buffer for the natural-order store; without the memory for it, the
     * transform in place and a bit reversal */
    if (!d->tmp && d->c.plan.npass > 1 &&
        cudaMalloc(&d->tmp, d->n * sizeof(fr_t)) != cudaSuccess) {
        d->tmp = NULL;
        (void)cudaGetLastError(); /* not sticky: clear it */
    }
    ntt_dev_exec ex = {d, NULL, NULL, NULL};
    GPU_TRY(ntt_run_ntt(ex, d->c, d->slot[slot], inverse, d->tmp));
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
    ntt_dev_exec ex = {d, NULL, NULL, NULL};
    GPU_TRY(ntt_run_h(ex, d->c, d->slot[0], d->slot[1], d->slot[2], false));
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_domain_h_bellman(cuzk_gpu_domain *d)
{
    GPU_TRY(domain_check(d, d, "cuzk_gpu_domain_h_bellman"));
    if (d->family != CUZK_ROOTS_BELLMAN)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_h_bellman: domain is not a bellman domain");
    GPU_TRY(gpu_use_device(d->device));
    for (unsigned s = 0; s < 3; s++)
        GPU_TRY(domain_slot(d, s));
    ntt_dev_exec ex = {d, NULL, NULL, NULL};
    GPU_TRY(ntt_run_h(ex, d->c, d->slot[0], d->slot[1], d->slot[2], true));
    GPU_CHECK(cudaStreamSynchronize(d->stream));
    return CUZK_OK;
}

/* The H step of the domain's family from host arrays: the three copies go on a copy stream
 * and the transforms of slot i wait for slot i's copy alone, so b and c arrive while a is
 * transformed; slot i's copy is started when ready says array i is complete. */
extern "C" cuzk_err cuzk_gpu_domain_h_host_ready(cuzk_gpu_domain *d, const cuzk_fr *a,
                                                 const cuzk_fr *b, const cuzk_fr *c,
                                                 cuzk_err (*ready)(void *ctx, int i), void *ctx)
{
    if (!d || !a || !b || !c)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_domain_h_host: NULL argument");
    const bool bellman = d->family == CUZK_ROOTS_BELLMAN;
    if (!bellman && d->k >= CUZK_FR_TWO_ADICITY)
        return cuzk_error_set(CUZK_EINVAL,
                              "cuzk_gpu_domain_h_host: domain is not a snarkjs domain");
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
    ntt_dev_exec ex = {d, src, ready, ctx};
    cuzk_err e = ntt_run_h(ex, d->c, d->slot[0], d->slot[1], d->slot[2], bellman);
    cudaError_t ce = cudaStreamSynchronize(d->stream);
    cudaError_t ce2 = cudaStreamSynchronize(d->cstream); /* after an error too: a, b, c are read */
    GPU_TRY(e);
    if (ce == cudaSuccess)
        ce = ce2;
    if (ce != cudaSuccess)
        return gpu_fail(ce, "cudaStreamSynchronize", __FILE__, __LINE__);
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_domain_h_host(cuzk_gpu_domain *d, const cuzk_fr *a,
                                           const cuzk_fr *b, const cuzk_fr *c)
{
    return cuzk_gpu_domain_h_host_ready(d, a, b, c, NULL, NULL);
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
