/* Devices, page-locked memory and element-wise field kernels (cuzk/gpu.h). */
#include <string.h>

#include "cuzk/gpu.h"
#include "gpu/device.cuh"
#include "gpu/error.cuh"
#include "gpu/ff/bls12_381.cuh"
#include "gpu/mem.cuh"

extern "C" int cuzk_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the sticky-free error of a missing driver */
        return 0;
    }
    return n < 0 ? 0 : n;
}

extern "C" bool cuzk_gpu_available(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        (void)gpu_fail(e, "cudaGetDeviceCount", __FILE__, __LINE__);
        return false;
    }
    if (n <= 0) {
        (void)cuzk_error_set(CUZK_EGPU, "no CUDA device is visible");
        return false;
    }
    return true;
}

extern "C" cuzk_err cuzk_gpu_device_query(cuzk_gpu_device_info *info, int device)
{
    if (!info)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_device_query: info is NULL");
    int n = cuzk_gpu_device_count();
    if (device < 0 || device >= n)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_device_query: device %d of %d", device, n);
    cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, device));
    memset(info, 0, sizeof *info);
    static_assert(sizeof(cudaDeviceProp::name) >= sizeof info->name - 1, "device name");
    memcpy(info->name, prop.name, sizeof info->name - 1);
    info->name[sizeof info->name - 1] = '\0';
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->total_mem = prop.totalGlobalMem;
    GPU_CHECK(cudaSetDevice(device));
    size_t fr = 0, tot = 0;
    GPU_CHECK(cudaMemGetInfo(&fr, &tot));
    info->free_mem = fr;
    return CUZK_OK;
}

extern "C" cuzk_err cuzk_gpu_host_alloc(void **p, size_t bytes)
{
    if (!p)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_host_alloc: p is NULL");
    *p = NULL;
    GPU_CHECK(cudaMallocHost(p, bytes ? bytes : 1));
    return CUZK_OK;
}

extern "C" void cuzk_gpu_host_free(void *p)
{
    if (p)
        (void)cudaFreeHost(p);
}

extern "C" cuzk_err cuzk_gpu_host_register(void *p, size_t bytes)
{
    if (!p || !bytes)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gpu_host_register: empty range");
    cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky: clear it for the next call */
        return cuzk_error_set(CUZK_EGPU, "cudaHostRegister of %zu bytes: %s", bytes,
                              cudaGetErrorString(e));
    }
    return CUZK_OK;
}

extern "C" void cuzk_gpu_host_unregister(void *p)
{
    if (p && cudaHostUnregister(p) != cudaSuccess)
        (void)cudaGetLastError();
}

/* ---- element-wise field operations ---- */
template <class P>
__global__ void field_op_kernel(Fe<P> *r, const Fe<P> *a, const Fe<P> *b, size_t n, int op)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Fe<P> x = ld_vec(a + i), y;
    if (op == CUZK_GPU_ADD || op == CUZK_GPU_SUB || op == CUZK_GPU_MUL)
        y = ld_vec(b + i);
    Fe<P> z;
    switch (op) {
    case CUZK_GPU_ADD: z = f_add<P>(x, y); break;
    case CUZK_GPU_SUB: z = f_sub<P>(x, y); break;
    case CUZK_GPU_MUL: z = f_mul<P>(x, y); break;
    case CUZK_GPU_SQR: z = f_sqr<P>(x); break;
    default: z = f_neg<P>(x); break;
    }
    st_vec(r + i, z);
}

template <class P>
static cuzk_err field_op(int device, cuzk_gpu_field_op op, void *r, const void *a,
                         const void *b, size_t n)
{
    if (n == 0)
        return CUZK_OK;
    bool need_b = op == CUZK_GPU_ADD || op == CUZK_GPU_SUB || op == CUZK_GPU_MUL;
    if (!r || !a || (need_b && !b) || (unsigned)op > CUZK_GPU_NEG)
        return cuzk_error_set(CUZK_EINVAL, "gpu field op: NULL array or bad op %d", (int)op);
    GPU_TRY(gpu_use_device(device));
    const size_t bytes = n * sizeof(Fe<P>);
    Fe<P> *d = NULL;
    GPU_CHECK(cudaMalloc(&d, 3 * bytes));
    cuzk_err err = CUZK_OK;
    cudaError_t e;
#define FIELD_OP_STEP(call)                                        \
    if (err == CUZK_OK && (e = (call)) != cudaSuccess)             \
        err = gpu_fail(e, #call, __FILE__, __LINE__);
    FIELD_OP_STEP(cudaMemcpy(d, a, bytes, cudaMemcpyHostToDevice));
    if (need_b)
        FIELD_OP_STEP(cudaMemcpy(d + n, b, bytes, cudaMemcpyHostToDevice));
    if (err == CUZK_OK)
        field_op_kernel<P><<<gpu_blocks(n, 256), 256, 0, 0>>>(d + 2 * n, d, d + n, n, (int)op);
    FIELD_OP_STEP(cudaGetLastError());
    FIELD_OP_STEP(cudaMemcpy(r, d + 2 * n, bytes, cudaMemcpyDeviceToHost));
#undef FIELD_OP_STEP
    e = cudaFree(d);
    if (err == CUZK_OK && e != cudaSuccess)
        err = gpu_fail(e, "cudaFree", __FILE__, __LINE__);
    return err;
}

extern "C" cuzk_err cuzk_gpu_fr_op(int device, cuzk_gpu_field_op op, cuzk_fr *r,
                                   const cuzk_fr *a, const cuzk_fr *b, size_t n)
{
    static_assert(sizeof(cuzk_fr) == sizeof(fr_t), "Fr layout");
    return field_op<FrP>(device, op, r, a, b, n);
}

extern "C" cuzk_err cuzk_gpu_fp_op(int device, cuzk_gpu_field_op op, cuzk_fp *r,
                                   const cuzk_fp *a, const cuzk_fp *b, size_t n)
{
    static_assert(sizeof(cuzk_fp) == sizeof(fp_t), "Fp layout");
    return field_op<FpP>(device, op, r, a, b, n);
}
