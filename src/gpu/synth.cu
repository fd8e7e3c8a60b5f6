/*
 * Synthesis on the device (cuzk/gpu.h): a = A.w, b = B.w, c = C.w (or a o b) over the rows
 * of a constraint system whose matrices stay resident, written straight into the NTT
 * domain's slots 0, 1, 2 so the H step starts from them without a trip through the host.
 *
 * One thread per row: the rows of the circuits this serves hold a few terms each (a row
 * with hundreds, such as a bit-packing constraint, costs its thread proportionally more,
 * which the others hide). The term rule is the CPU's (src/groth16/prover.c): a wire worth 0
 * adds nothing, one worth 1 adds its coefficient, others a product. The witness values are
 * mostly bits, so most terms cost a load and an addition.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/ff/bls12_381.cuh"
#include "gpu/mem.cuh"

#define SYNTH_THREADS 256

struct gpu_csr_dev {
    uint64_t *row;
    uint32_t *col;
    fr_t *val;     /* the coefficients, or NULL when vidx indexes vtab */
    uint32_t *vidx;
    const fr_t *vtab;
};

struct cuzk_gpu_r1cs {
    int device;
    size_t n_rows, n_vars;
    bool has_c;
    gpu_csr_dev m[3];
    fr_t *w;
    fr_t *vtab;    /* distinct coefficients (deduplicated form), shared by the matrices */
    cudaStream_t stream;
};

__device__ __forceinline__ fr_t synth_row(const gpu_csr_dev &m, size_t i,
                                          const fr_t *__restrict__ w)
{
    fr_t acc = f_zero<FrP>();
    const fr_t one = f_one<FrP>();
    for (uint64_t k = m.row[i], e = m.row[i + 1]; k < e; k++) {
        const fr_t x = ld_vec(w + m.col[k]);
        if (f_is_zero<FrP>(x))
            continue;
        const fr_t v = m.val ? ld_vec(m.val + k) : ld_vec(m.vtab + m.vidx[k]);
        acc = f_add<FrP>(acc, f_eq<FrP>(x, one) ? v : f_mul<FrP>(v, x));
    }
    return acc;
}

__global__ void synth_kernel(fr_t *a, fr_t *b, fr_t *c, gpu_csr_dev ma, gpu_csr_dev mb,
                             gpu_csr_dev mc, int has_c, const fr_t *__restrict__ w,
                             size_t n_rows, size_t n)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (i >= n_rows) {
        const fr_t z = f_zero<FrP>();
        st_vec(a + i, z);
        st_vec(b + i, z);
        st_vec(c + i, z);
        return;
    }
    const fr_t x = synth_row(ma, i, w), y = synth_row(mb, i, w);
    st_vec(a + i, x);
    st_vec(b + i, y);
    st_vec(c + i, has_c ? synth_row(mc, i, w) : f_mul<FrP>(x, y));
}

/* dedup: the coefficients as 4-byte indices into a shared table instead of 32-byte values */
static size_t csr_bytes(const cuzk_csr *m, size_t n_rows, bool dedup)
{
    const size_t nnz = m->row[n_rows];
    return (n_rows + 1) * sizeof(uint64_t) +
           nnz * (sizeof(uint32_t) + (dedup ? sizeof(uint32_t) : sizeof(fr_t)));
}

static size_t r1cs_bytes(const cuzk_csr *a, const cuzk_csr *b, const cuzk_csr *c, size_t n_rows,
                         size_t n_vars, bool dedup)
{
    if (!a || !b)
        return 0;
    return csr_bytes(a, n_rows, dedup) + csr_bytes(b, n_rows, dedup) +
           (c ? csr_bytes(c, n_rows, dedup) : 0) + n_vars * sizeof(fr_t);
}

extern "C" size_t cuzk_gpu_r1cs_bytes(const cuzk_csr *a, const cuzk_csr *b, const cuzk_csr *c,
                                      size_t n_rows, size_t n_vars)
{
    return r1cs_bytes(a, b, c, n_rows, n_vars, false);
}

extern "C" size_t cuzk_gpu_r1cs_bytes_dedup(const cuzk_csr *a, const cuzk_csr *b,
                                            const cuzk_csr *c, size_t n_rows, size_t n_vars,
                                            size_t n_tab)
{
    return r1cs_bytes(a, b, c, n_rows, n_vars, true) + n_tab * sizeof(fr_t);
}

extern "C" void cuzk_gpu_r1cs_free(cuzk_gpu_r1cs *s)
{
    if (!s)
        return;
    (void)cudaSetDevice(s->device);
    for (int k = 0; k < 3; k++) {
        (void)cudaFree(s->m[k].row);
        (void)cudaFree(s->m[k].col);
        (void)cudaFree(s->m[k].val);
        (void)cudaFree(s->m[k].vidx);
    }
    (void)cudaFree(s->vtab);
    (void)cudaFree(s->w);
    if (s->stream)
        (void)cudaStreamDestroy(s->stream);
    free(s);
}

/* idx: the deduplicated coefficients (indices into vtab), or NULL for the values. */
static cuzk_err csr_upload(gpu_csr_dev *d, const cuzk_csr *m, size_t n_rows, const uint32_t *idx,
                           const fr_t *vtab)
{
    const size_t nnz = m->row[n_rows];
    GPU_CHECK(cudaMalloc(&d->row, (n_rows + 1) * sizeof(uint64_t)));
    GPU_CHECK(cudaMalloc(&d->col, (nnz ? nnz : 1) * sizeof(uint32_t)));
    GPU_CHECK(cudaMemcpy(d->row, m->row, (n_rows + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice));
    if (nnz)
        GPU_CHECK(cudaMemcpy(d->col, m->col, nnz * sizeof(uint32_t), cudaMemcpyHostToDevice));
    if (idx) {
        GPU_CHECK(cudaMalloc(&d->vidx, (nnz ? nnz : 1) * sizeof(uint32_t)));
        if (nnz)
            GPU_CHECK(cudaMemcpy(d->vidx, idx, nnz * sizeof(uint32_t), cudaMemcpyHostToDevice));
        d->vtab = vtab;
    } else {
        GPU_CHECK(cudaMalloc(&d->val, (nnz ? nnz : 1) * sizeof(fr_t)));
        if (nnz)
            GPU_CHECK(cudaMemcpy(d->val, m->val, nnz * sizeof(fr_t), cudaMemcpyHostToDevice));
    }
    return CUZK_OK;
}

static cuzk_err r1cs_init(cuzk_gpu_r1cs *s, const cuzk_csr *a, const cuzk_csr *b,
                          const cuzk_csr *c, const uint32_t *const *idx, const cuzk_fr *tab,
                          size_t n_tab)
{
    GPU_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    if (idx) {
        GPU_CHECK(cudaMalloc(&s->vtab, (n_tab ? n_tab : 1) * sizeof(fr_t)));
        if (n_tab)
            GPU_CHECK(cudaMemcpy(s->vtab, tab, n_tab * sizeof(fr_t), cudaMemcpyHostToDevice));
    }
    GPU_TRY(csr_upload(&s->m[0], a, s->n_rows, idx ? idx[0] : NULL, s->vtab));
    GPU_TRY(csr_upload(&s->m[1], b, s->n_rows, idx ? idx[1] : NULL, s->vtab));
    if (c)
        GPU_TRY(csr_upload(&s->m[2], c, s->n_rows, idx ? idx[2] : NULL, s->vtab));
    GPU_CHECK(cudaMalloc(&s->w, (s->n_vars ? s->n_vars : 1) * sizeof(fr_t)));
    return CUZK_OK;
}

static cuzk_err r1cs_new(cuzk_gpu_r1cs **out, int device, const cuzk_csr *a, const cuzk_csr *b,
                         const cuzk_csr *c, size_t n_rows, size_t n_vars,
                         const uint32_t *const *idx, const cuzk_fr *tab, size_t n_tab,
                         const char *fn)
{
    static_assert(sizeof(cuzk_fr) == sizeof(fr_t), "Fr layout");
    if (!out)
        return cuzk_error_set(CUZK_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!a || !b || n_rows > a->n_rows || n_rows > b->n_rows || (c && n_rows > c->n_rows))
        return cuzk_error_set(CUZK_EINVAL, "%s: matrices missing or shorter than %zu rows", fn,
                              n_rows);
    if (idx && (!tab || !idx[0] || !idx[1] || (c && !idx[2])))
        return cuzk_error_set(CUZK_EINVAL, "%s: missing coefficient indices or table", fn);
    /* every column must name a wire of the witness and every index a table entry: the
     * kernel does not check */
    const cuzk_csr *ms[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        if (!ms[k])
            continue;
        for (uint64_t t = 0; t < ms[k]->row[n_rows]; t++) {
            if (ms[k]->col[t] >= n_vars)
                return cuzk_error_set(CUZK_EINVAL, "%s: term %llu names wire %u of %zu", fn,
                                      (unsigned long long)t, ms[k]->col[t], n_vars);
            if (idx && idx[k][t] >= n_tab)
                return cuzk_error_set(CUZK_EINVAL, "%s: term %llu names value %u of %zu", fn,
                                      (unsigned long long)t, idx[k][t], n_tab);
        }
    }
    GPU_TRY(gpu_use_device(device));
    cuzk_gpu_r1cs *s = (cuzk_gpu_r1cs *)calloc(1, sizeof *s);
    if (!s)
        return cuzk_error_set(CUZK_ENOMEM, "%s", fn);
    s->device = device;
    s->n_rows = n_rows;
    s->n_vars = n_vars;
    s->has_c = c != NULL;
    cuzk_err e = r1cs_init(s, a, b, c, idx, tab, n_tab);
    if (e != CUZK_OK) {
        cuzk_gpu_r1cs_free(s);
        return e;
    }
    *out = s;
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_r1cs_new(cuzk_gpu_r1cs **out, int device, const cuzk_csr *a,
                                      const cuzk_csr *b, const cuzk_csr *c, size_t n_rows,
                                      size_t n_vars)
{
    return r1cs_new(out, device, a, b, c, n_rows, n_vars, NULL, NULL, 0, "cuzk_gpu_r1cs_new");
}

extern "C" cuzk_err cuzk_gpu_r1cs_new_dedup(cuzk_gpu_r1cs **out, int device, const cuzk_csr *a,
                                            const cuzk_csr *b, const cuzk_csr *c, size_t n_rows,
                                            size_t n_vars, const uint32_t *const idx[3],
                                            const cuzk_fr *tab, size_t n_tab)
{
    return r1cs_new(out, device, a, b, c, n_rows, n_vars, idx, tab, n_tab,
                    "cuzk_gpu_r1cs_new_dedup");
}

extern "C" cuzk_err cuzk_gpu_synthesize(cuzk_gpu_r1cs *s, cuzk_gpu_domain *d, const cuzk_fr *w)
{
    if (!s || !d || !w)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_synthesize: NULL argument");
    void *slot[3];
    size_t n = 0;
    for (unsigned k = 0; k < 3; k++)
        GPU_TRY(cuzk_gpu_domain_slot_dev(d, k, &slot[k], &n));
    if (s->n_rows > n)
        return cuzk_error_set(CUZK_ESIZE, "cuzk_gpu_synthesize: %zu rows for a domain of %zu",
                              s->n_rows, n);
    GPU_TRY(gpu_use_device(s->device));
    GPU_CHECK(cudaMemcpyAsync(s->w, w, s->n_vars * sizeof(fr_t), cudaMemcpyHostToDevice,
                              s->stream));
    synth_kernel<<<gpu_blocks(n, SYNTH_THREADS), SYNTH_THREADS, 0, s->stream>>>(
        (fr_t *)slot[0], (fr_t *)slot[1], (fr_t *)slot[2], s->m[0], s->m[1], s->m[2],
        s->has_c ? 1 : 0, s->w, s->n_rows, n);
    GPU_CHECK_LAUNCH(synth_kernel);
    GPU_CHECK(cudaStreamSynchronize(s->stream));
    return CUZK_OK;
}
