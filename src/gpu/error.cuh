/*
 * Internal to src/gpu: CUDA errors as cuzk errors. Every CUDA call is checked; a failure
 * returns CUZK_EGPU with a detail naming the call, the file and line, and CUDA's message.
 */
#ifndef CUZK_GPU_ERROR_CUH
#define CUZK_GPU_ERROR_CUH

#include <cuda_runtime.h>

#include "cuzk/error.h"

static inline cuzk_err gpu_fail(cudaError_t e, const char *what, const char *file, int line)
{
    (void)cudaGetLastError(); /* clear the recorded error (a sticky one stays) */
    return cuzk_error_set(CUZK_EGPU, "%s:%d: %s: %s (%s)", file, line, what,
                          cudaGetErrorName(e), cudaGetErrorString(e));
}
/* Returns CUZK_EGPU from the enclosing function when the CUDA call fails. */
#define GPU_CHECK(call)                                                   \
    do {                                                                  \
        cudaError_t gpu_e_ = (call);                                      \
        if (gpu_e_ != cudaSuccess)                                        \
            return gpu_fail(gpu_e_, #call, __FILE__, __LINE__);           \
    } while (0)
/* After a kernel launch: launch-configuration errors. */
#define GPU_CHECK_LAUNCH(name) GPU_CHECK(cudaGetLastError() /* launch of name */)
/* Propagates a cuzk_err. */
#define GPU_TRY(expr)                    \
    do {                                 \
        cuzk_err gpu_r_ = (expr);        \
        if (gpu_r_ != CUZK_OK)           \
            return gpu_r_;               \
    } while (0)

#endif
