/*
 * Internal to src/gpu/msm: the device code more than one of its files launches (each
 * instantiates its own copy, with its own field constants): the XYZZ accumulation of sorted
 * (bucket, base) pairs and its partials (step 3 of msm.cuh), and the block reduction of
 * many XYZZ points.
 */
#ifndef CUZK_GPU_MSM_KERNELS_CUH
#define CUZK_GPU_MSM_KERNELS_CUH

#include "gpu/ec/xyzz.cuh"
#include "gpu/error.cuh"
#include "gpu/mem.cuh"
#include "gpu/msm/msm.cuh"

/* Threads of a reducing block: its shared memory holds one XYZZ point per thread, so G2
 * (384-byte points) uses fewer threads than G1 (192 bytes) to stay within 48 KB. */
template <class F> struct red_threads;
template <> struct red_threads<fp_t> {
    static constexpr unsigned T = 256;
};
template <> struct red_threads<fp2_t> {
    static constexpr unsigned T = 64;
};

/* Blocks per multiprocessor that the accumulation's register allocation must allow
 * (__launch_bounds__). G1: 3 gives 168 registers without spills (12 warps a multiprocessor;
 * 1 and 4 measured no faster on the H200). G2: 1 (its points need the registers). */
template <class F> struct acc_minb;
template <> struct acc_minb<fp_t> {
    static constexpr int B = 3;
};
template <> struct acc_minb<fp2_t> {
    static constexpr int B = 1;
};

template <class F>
__device__ __forceinline__ void msm_add_base(xyzz_t<F> &acc, const aff_t<F> *__restrict__ bases,
                                             uint32_t v)
{
    const aff_t<F> p = ld_vec(bases + (v & ~MSM_SIGN));
    if (aff_is_inf(p))
        return;
    xyzz_add_affine(acc, p.x, (v & MSM_SIGN) ? fe_neg(p.y) : p.y);
}

/* Step 3: thread t of nseg adds the pairs [t L, t L + L) (up to the sentinel) run by run;
 * whole runs go to the buckets, its first and last to partials[2t], partials[2t + 1] (keys
 * in pkeys, the sentinel when it has none). */
template <class F>
__global__ void __launch_bounds__(MSM_ACC_THREADS, acc_minb<F>::B)
msm_accumulate_kernel(xyzz_t<F> *buckets, xyzz_t<F> *partials, uint32_t *pkeys,
                      const uint32_t *__restrict__ keys, const uint32_t *__restrict__ vals,
                      const aff_t<F> *__restrict__ bases, size_t npairs, size_t L,
                      size_t nseg, uint32_t sentinel)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nseg)
        return;
    const size_t start = t * L;
    const size_t end = start + L < npairs ? start + L : npairs;
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    uint32_t cur = start < npairs ? keys[start] : sentinel;
    if (cur == sentinel) {
        pkeys[2 * t] = pkeys[2 * t + 1] = sentinel;
        return;
    }
    bool first = true;
    for (size_t e = start; e < end; e++) {
        const uint32_t key = keys[e];
        if (key == sentinel)
            break;
        if (key != cur) {
            if (first) {
                st_vec(partials + 2 * t, acc);
                pkeys[2 * t] = cur;
                first = false;
            } else {
                st_vec(buckets + cur, acc);
            }
            xyzz_set_inf(acc);
            cur = key;
        }
        msm_add_base(acc, bases, vals[e]);
    }
    if (first) {
        st_vec(partials + 2 * t, acc);
        pkeys[2 * t] = cur;
        xyzz_set_inf(acc);
    }
    st_vec(partials + 2 * t + 1, acc);
    pkeys[2 * t + 1] = cur;
}

/* One level of the partials' reduction (msm_partials_run): thread t of nch sums in[t L, t L
 * + L) (keys non-decreasing, sentinels last) run by run as msm_accumulate_kernel does the
 * pairs: whole runs into their buckets, its first and last into out[2t], out[2t + 1] (keys
 * in outk, the sentinel when it has none). A bucket whose run spans many chunks (a hot
 * bucket: many equal digits, e.g. equal scalars) leaves two entries a chunk, so each level
 * divides its run by L / 2 instead of one thread adding it all. */
template <class F>
__global__ void msm_partials_level_kernel(xyzz_t<F> *buckets, xyzz_t<F> *out, uint32_t *outk,
                                          const xyzz_t<F> *in, const uint32_t *ink, size_t n,
                                          size_t L, size_t nch, uint32_t sentinel)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nch)
        return;
    const size_t start = t * L;
    const size_t end = start + L < n ? start + L : n;
    uint32_t cur = ink[start];
    if (cur == sentinel) {
        outk[2 * t] = outk[2 * t + 1] = sentinel;
        return;
    }
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    bool first = true;
    for (size_t e = start; e < end; e++) {
        const uint32_t key = ink[e];
        if (key == sentinel)
            break;
        if (key != cur) {
            if (first) {
                st_vec(out + 2 * t, acc);
                outk[2 * t] = cur;
                first = false;
            } else {
                st_vec(buckets + cur, acc);
            }
            xyzz_set_inf(acc);
            cur = key;
        }
        xyzz_add(acc, ld_vec_rw(in + e));
    }
    if (first) {
        st_vec(out + 2 * t, acc);
        outk[2 * t] = cur;
        xyzz_set_inf(acc);
    }
    st_vec(out + 2 * t + 1, acc);
    outk[2 * t + 1] = cur;
}

/* The partials of msm_accumulate_kernel: the first entry of each run of equal keys adds the
 * run into its bucket (msm_partials_run calls it once the levels have made the runs short). */
template <class F>
__global__ void msm_partials_kernel(xyzz_t<F> *buckets, const xyzz_t<F> *partials,
                                    const uint32_t *pkeys, size_t np, uint32_t sentinel)
{
    const size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= np)
        return;
    const uint32_t key = pkeys[j];
    if (key == sentinel || (j > 0 && pkeys[j - 1] == key))
        return;
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    for (size_t jj = j; jj < np && pkeys[jj] == key; jj++)
        xyzz_add(acc, ld_vec_rw(partials + jj));
    st_vec(buckets + key, acc);
}

#define MSM_PART_L 16          /* partials a thread at each level of msm_partials_run */
#define MSM_PART_SERIAL 4096   /* at most this many left: msm_partials_kernel */

/* Adds the np partials (keys pkeys, non-decreasing, sentinels last) into their buckets:
 * levels of msm_partials_level_kernel while more than MSM_PART_SERIAL are left (each divides
 * the count by MSM_PART_L / 2, ping-ponging between partials and m->partials2), then
 * msm_partials_kernel. */
template <class F>
static cuzk_err msm_partials_run(cuzk_gpu_msm *m, xyzz_t<F> *buckets, xyzz_t<F> *partials,
                                 uint32_t *pkeys, size_t np, uint32_t sentinel, cudaStream_t st)
{
    xyzz_t<F> *in = partials;
    uint32_t *ink = pkeys;
    bool in_main = true;
    while (np > MSM_PART_SERIAL) {
        const size_t nch = (np + MSM_PART_L - 1) / MSM_PART_L;
        xyzz_t<F> *out = partials;
        uint32_t *outk = pkeys;
        if (in_main) { /* the first level's output is the largest the second buffer holds */
            GPU_TRY(msm_grow((unsigned char **)&m->partials2, &m->partials2_cap,
                             2 * nch * sizeof(xyzz_t<F>), 1));
            GPU_TRY(msm_grow(&m->pkeys2, &m->pkeys2_cap, 2 * nch, sizeof(uint32_t)));
            out = reinterpret_cast<xyzz_t<F> *>(m->partials2);
            outk = m->pkeys2;
        }
        msm_partials_level_kernel<F><<<gpu_blocks(nch, 128), 128, 0, st>>>(
            buckets, out, outk, in, ink, np, MSM_PART_L, nch, sentinel);
        GPU_CHECK_LAUNCH(msm_partials_level_kernel);
        in = out;
        ink = outk;
        np = 2 * nch;
        in_main = !in_main;
    }
    msm_partials_kernel<F><<<gpu_blocks(np, 128), 128, 0, st>>>(buckets, in, ink, np, sentinel);
    GPU_CHECK_LAUNCH(msm_partials_kernel);
    return CUZK_OK;
}

/* out[g] = sum of in[g cnt .. min(g cnt + cnt, total)), one block per group. */
template <class F>
__global__ void __launch_bounds__(red_threads<F>::T)
msm_reduce_kernel(xyzz_t<F> *out, const xyzz_t<F> *in, size_t cnt, size_t total)
{
    constexpr unsigned T = red_threads<F>::T;
    __shared__ xyzz_t<F> sh[T];
    const size_t b0 = (size_t)blockIdx.x * cnt;
    const size_t b1 = b0 + cnt < total ? b0 + cnt : total;
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    for (size_t i = b0 + threadIdx.x; i < b1; i += T)
        xyzz_add(acc, ld_vec_rw(in + i));
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned h = T / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) {
            xyzz_t<F> a = sh[threadIdx.x];
            xyzz_add(a, sh[threadIdx.x + h]);
            sh[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = sh[0];
}

/* sum of in[0..cnt) into out (device), two levels when cnt is large; uses m->red. */
template <class F>
static cuzk_err msm_reduce_all(cuzk_gpu_msm *m, xyzz_t<F> *out, const xyzz_t<F> *in, size_t cnt)
{
    constexpr unsigned T = red_threads<F>::T;
    cudaStream_t st = m->stream;
    if (cnt > 8 * (size_t)T) {
        size_t per = (cnt + MSM_RED1_BLOCKS - 1) / MSM_RED1_BLOCKS;
        if (per < 2 * (size_t)T)
            per = 2 * (size_t)T;
        const size_t blocks = (cnt + per - 1) / per;
        xyzz_t<F> *red = reinterpret_cast<xyzz_t<F> *>(m->red);
        msm_reduce_kernel<F><<<(unsigned)blocks, T, 0, st>>>(red, in, per, cnt);
        GPU_CHECK_LAUNCH(msm_reduce_kernel);
        in = red;
        cnt = blocks;
    }
    msm_reduce_kernel<F><<<1, T, 0, st>>>(out, in, cnt, cnt);
    GPU_CHECK_LAUNCH(msm_reduce_kernel);
    return CUZK_OK;
}

#endif
