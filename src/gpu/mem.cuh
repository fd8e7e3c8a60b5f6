/*
 * Internal to src/gpu: global memory access in 16-byte vectors (ld_vec, ld_vec_rw, st_vec),
 * and the same for code that also runs on the host (hd_*: plain accesses there).
 */
#ifndef CUZK_GPU_MEM_CUH
#define CUZK_GPU_MEM_CUH

#include "gpu/hd.cuh"

template <class T> __device__ __forceinline__ T ld_vec(const T *p)
{
    static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
    T r;
    const uint4 *s = reinterpret_cast<const uint4 *>(p);
    uint4 *d = reinterpret_cast<uint4 *>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = __ldg(s + i);
    return r;
}
template <class T> __device__ __forceinline__ T ld_vec_rw(const T *p)
{
    T r;
    const uint4 *s = reinterpret_cast<const uint4 *>(p);
    uint4 *d = reinterpret_cast<uint4 *>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = s[i];
    return r;
}
template <class T> __device__ __forceinline__ void st_vec(T *p, const T &v)
{
    uint4 *d = reinterpret_cast<uint4 *>(p);
    const uint4 *s = reinterpret_cast<const uint4 *>(&v);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = s[i];
}

/* The same three for code that also runs on the host (the host tests of device code): plain
 * accesses there. hd_ld reads through the read-only cache (data no thread of the kernel
 * writes); hd_ld_rw and hd_st for data the kernel writes. */
template <class T> GPU_HD T hd_ld(const T *p)
{
#ifdef __CUDA_ARCH__
    return ld_vec(p);
#else
    return *p;
#endif
}
template <class T> GPU_HD T hd_ld_rw(const T *p)
{
#ifdef __CUDA_ARCH__
    return ld_vec_rw(p);
#else
    return *p;
#endif
}
template <class T> GPU_HD void hd_st(T *p, const T &v)
{
#ifdef __CUDA_ARCH__
    st_vec(p, v);
#else
    *p = v;
#endif
}

#endif
