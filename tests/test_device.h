/* SPDX-License-Identifier: Apache-2.0 */
/* The GPU tests' start (header-only, beside test.h): exit 77, which CTest reports as
 * skipped, saying why, unless the build has CUDA and a device is usable. */
#ifndef CUZK_TEST_DEVICE_H
#define CUZK_TEST_DEVICE_H

#include <stdio.h>
#include <stdlib.h>

#include "cuzk/error.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif

static inline void test_gpu_require(void)
{
#ifdef CUZK_HAVE_CUDA
    if (cuzk_gpu_available())
        return;
    printf("SKIP: no usable GPU: %s\n", cuzk_error_detail());
#else
    printf("SKIP: built without CUDA\n");
#endif
    exit(77);
}

#endif
