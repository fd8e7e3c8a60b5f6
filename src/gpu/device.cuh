/*
 * Internal to src/gpu: device selection for a translation unit's kernels, and launch sizes.
 */
#ifndef CUZK_GPU_DEVICE_CUH
#define CUZK_GPU_DEVICE_CUH

#include <stddef.h>

#include "gpu/error.cuh"
#include "gpu/ff/bls12_381.cuh"

/* Makes device the current one and uploads this unit's field constants to it (once per
 * device): call it before this unit's kernels run on a device. */
static inline cuzk_err gpu_use_device(int device)
{
    GPU_CHECK(cudaSetDevice(device));
    GPU_TRY(gpu_consts_upload(device));
    return CUZK_OK;
}

/* Blocks of `threads` that cover n items. */
static inline unsigned gpu_blocks(size_t n, unsigned threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

#endif
