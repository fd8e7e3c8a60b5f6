/*
 * Internal to src/gpu: GPU_HD marks code that runs on the device and, for the host tests of
 * device code (tests/unit/test_gpu_*.cu), on the host.
 */
#ifndef CUZK_GPU_HD_CUH
#define CUZK_GPU_HD_CUH

#include <cuda_runtime.h>

#define GPU_HD __host__ __device__ __forceinline__

#endif
