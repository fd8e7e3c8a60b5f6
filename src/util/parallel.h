/* SPDX-License-Identifier: Apache-2.0 */
/* Fork-join parallel loops over index ranges (pthreads; one team per call). */
#ifndef CUZK_UTIL_PARALLEL_H
#define CUZK_UTIL_PARALLEL_H

#include <stddef.h>

/* fn(ctx, begin, end, worker) is called on disjoint chunks covering [0, n). worker is in
 * [0, nthreads). nthreads = 0 means cuzk_parallel_threads(). Runs inline when n is small
 * or nthreads is 1. Chunks are handed out dynamically, each at least `grain` long. */
typedef void (*cuzk_range_fn)(void *ctx, size_t begin, size_t end, unsigned worker);
void cuzk_parallel_for(size_t n, size_t grain, unsigned nthreads, cuzk_range_fn fn, void *ctx);

/* memcpy of `bytes` on nthreads threads (0: the default count), in chunks of a few MiB
 * (large copies into fresh or page-locked memory are bound by page faults and bandwidth). */
void cuzk_parallel_memcpy(void *dst, const void *src, size_t bytes, unsigned nthreads);

/* fn(ctx, worker) once on each of nthreads workers, concurrently. */
typedef void (*cuzk_worker_fn)(void *ctx, unsigned worker);
void cuzk_parallel_run(unsigned nthreads, cuzk_worker_fn fn, void *ctx);

/* Default thread count: the online CPUs, unless cuzk_parallel_set_threads(n) set another
 * for the process (0 restores the online CPUs; the programs set CUZK_THREADS here). */
unsigned cuzk_parallel_threads(void);
void cuzk_parallel_set_threads(unsigned n);

#endif
