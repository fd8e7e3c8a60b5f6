/* SPDX-License-Identifier: Apache-2.0 */
#include "util/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_uint threads_override;

unsigned cuzk_parallel_threads(void)
{
    unsigned o = atomic_load(&threads_override);
    if (o)
        return o;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void cuzk_parallel_set_threads(unsigned n) { atomic_store(&threads_override, n); }

typedef struct {
    cuzk_worker_fn fn;
    void *ctx;
    unsigned worker;
} run_arg;

static void *run_trampoline(void *p)
{
    run_arg *a = p;
    a->fn(a->ctx, a->worker);
    return NULL;
}

void cuzk_parallel_run(unsigned nthreads, cuzk_worker_fn fn, void *ctx)
{
    if (nthreads == 0)
        nthreads = cuzk_parallel_threads();
    if (nthreads == 1) {
        fn(ctx, 0);
        return;
    }
    pthread_t *th = malloc(sizeof(*th) * nthreads);
    run_arg *args = malloc(sizeof(*args) * nthreads);
    unsigned started = 0;
    if (th && args) {
        for (unsigned i = 1; i < nthreads; i++) {
            args[i] = (run_arg){fn, ctx, i};
            if (pthread_create(&th[i], NULL, run_trampoline, &args[i]) != 0)
                break;
            started = i;
        }
    }
    fn(ctx, 0);
    /* Workers that could not be started run here, in order, so every index is covered. */
    for (unsigned i = started + 1; i < nthreads; i++)
        fn(ctx, i);
    for (unsigned i = 1; i <= started; i++)
        pthread_join(th[i], NULL);
    free(th);
    free(args);
}

typedef struct {
    size_t n, chunk;
    atomic_size_t next;
    cuzk_range_fn fn;
    void *ctx;
} for_ctx;

static void for_worker(void *p, unsigned worker)
{
    for_ctx *c = p;
    for (;;) {
        size_t b = atomic_fetch_add(&c->next, c->chunk);
        if (b >= c->n)
            break;
        size_t e = b + c->chunk < c->n ? b + c->chunk : c->n;
        c->fn(c->ctx, b, e, worker);
    }
}

void cuzk_parallel_for(size_t n, size_t grain, unsigned nthreads, cuzk_range_fn fn, void *ctx)
{
    if (n == 0)
        return;
    if (nthreads == 0)
        nthreads = cuzk_parallel_threads();
    if (grain == 0)
        grain = 1;
    size_t max_workers = (n + grain - 1) / grain;
    if (nthreads > max_workers)
        nthreads = (unsigned)max_workers;
    if (nthreads <= 1) {
        fn(ctx, 0, n, 0);
        return;
    }
    /* About four chunks per worker balances uneven chunk costs. */
    size_t chunk = n / ((size_t)nthreads * 4);
    if (chunk < grain)
        chunk = grain;
    for_ctx c = {.n = n, .chunk = chunk, .fn = fn, .ctx = ctx};
    atomic_init(&c.next, 0);
    cuzk_parallel_run(nthreads, for_worker, &c);
}

typedef struct {
    unsigned char *dst;
    const unsigned char *src;
} memcpy_ctx;

static void memcpy_range(void *vc, size_t b, size_t e, unsigned w)
{
    (void)w;
    memcpy_ctx *c = vc;
    memcpy(c->dst + b, c->src + b, e - b);
}

void cuzk_parallel_memcpy(void *dst, const void *src, size_t bytes, unsigned nthreads)
{
    memcpy_ctx c = {dst, src};
    cuzk_parallel_for(bytes, (size_t)1 << 22, nthreads, memcpy_range, &c);
}
